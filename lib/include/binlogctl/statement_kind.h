// What a statement (the SQL text of a QUERY event) means for transaction structure and schema
// history. One classifier for every consumer: leading whitespace and comments are skipped
// (/* */, -- , #; the contents of /*! */ and /*M! */ are read as statement text, as the servers
// run them), keywords compare case-insensitively.
#pragma once

#include <cstdint>
#include <string_view>

namespace binlogctl {

// What a QUERY event's statement means for transaction structure.
enum class StatementKind : std::uint8_t {
  begin,        // BEGIN, START TRANSACTION
  commit,       // COMMIT
  rollback,     // ROLLBACK (not ROLLBACK TO)
  savepoint,    // SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT
  xa_start,     // XA START / XA BEGIN
  xa_end,       // XA END
  xa_prepare,   // XA PREPARE (as a statement)
  xa_finish,    // XA COMMIT / XA ROLLBACK (a transaction of its own)
  ddl,          // CREATE, ALTER, DROP, RENAME, TRUNCATE, GRANT, REVOKE
  other,        // statement-based DML and everything else (INSERT, UPDATE, SET, CALL, ...)
};
// Classifies by the leading keywords, skipping whitespace and comments (/* */, -- , #).
StatementKind classify_statement(std::string_view sql) noexcept;
const char* statement_kind_name(StatementKind k) noexcept;

// The xid part of an XA statement ("XA COMMIT X'61',X'',1 ONE PHASE" -> "X'61',X'',1"); empty
// when there is none.
std::string_view xa_statement_xid(std::string_view sql) noexcept;
// True for "XA ROLLBACK ...".
bool xa_statement_is_rollback(std::string_view sql) noexcept;
// True for "XA COMMIT ... ONE PHASE".
bool xa_statement_one_phase(std::string_view sql) noexcept;

}  // namespace binlogctl
