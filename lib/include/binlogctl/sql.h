// SQL output: column values as SQL literals that give the server back the same bytes, and
// `binlogctl convert --format sql` / `--flashback` (the row changes as INSERT/UPDATE/DELETE
// statements, or the statements that undo them). man/binlogctl-convert.1.scd (SQL OUTPUT) is the
// user-facing description of every rendering.
#pragma once

#include <binlogctl/column_value.h>
#include <binlogctl/columns.h>
#include <binlogctl/convert.h>
#include <binlogctl/json_buf.h>
#include <binlogctl/result.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

namespace binlogctl {

// Appends the SQL literal of a decoded value of column `col`:
//   integers            decimal digits (UNSIGNED values stay unsigned)
//   FLOAT DOUBLE        the shortest digits that give back the same double (FLOAT: the double
//                       the float32 widens to, so that both storing and comparing are exact)
//   DECIMAL             the number as stored, full scale: 12.3400
//   BIT                 b'1010'
//   YEAR                the year as a number (0 for the zero year)
//   DATE DATETIME       'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' (zero dates as stored: '0000-00-00')
//   TIMESTAMP           the same in UTC (the output sets time_zone to '+00:00' for row changes)
//   TIME                '[-]HHH:MM:SS[.ffffff]'
//   text                _utf8mb4'...' (converted from the column charset; quotes doubled); text
//                       with a backslash, a control character, or bytes that do not decode in
//                       its charset as _charset X'..' (the column charset, bytes as stored)
//   binary              X'..' (BINARY(n) padded back to n bytes)
//   ENUM SET            the names as text; the number when the names are not known or do not
//                       cover the value
//   JSON                MySQL: CAST(_utf8mb4'<json text>' AS JSON); MariaDB's JSON is text
//   GEOMETRY            ST_GeomFromWKB(X'<wkb>', srid)
//   VECTOR              X'..' (its binary form)
//   UUID INET4 INET6    their text form: '123e4567-e89b-12d3-a456-426614174000', '::1'
// Errors: those of the JSON and DECIMAL decoders (Errc::bad_value at the value).
Status append_sql_literal(std::string& out, const ColumnInfo& col, const ColumnValue& v);
Status append_sql_literal(JsonBuf& out, const ColumnInfo& col, const ColumnValue& v);

// Text bytes in the charset of `collation` as an SQL string literal (the `text` rule above).
void append_sql_text(std::string& out, std::string_view bytes, std::uint16_t collation);
void append_sql_text(JsonBuf& out, std::string_view bytes, std::uint16_t collation);
// X'..' of the bytes (uppercase hex).
void append_sql_hex(std::string& out, Bytes b);
void append_sql_hex(JsonBuf& out, Bytes b);

enum class SqlSet : std::uint8_t { changed, all };
// Comment lines in forward SQL: none, one per transaction (its number, GTID and position), or
// also one per statement (the event's position, GTID and time).
enum class SqlComments : std::uint8_t { none, transaction, row };

struct SqlOptions {
  bool flashback = false;
  SqlSet set = SqlSet::changed;  // UPDATE ... SET: only changed columns, or every after column
  std::string tmpdir;            // flashback spill files ("" = $TMPDIR or /tmp)
  bool skip_unsafe = false;      // flashback: warn and skip what cannot be undone
  // Flashback: spill the statements of a transaction to a file once they pass this many bytes
  // (a tunable; tests shrink it).
  std::size_t spill_bytes = 4 * 1024 * 1024;
  // With rendering threads (ConvertOptions::render_threads): a batch of rows events is handed on
  // once its copied row images pass this size (a tunable, tests shrink it). 0: 128 KiB for SQL,
  // 256 KiB for flashback. On the 1 GiB bench file, SQL at 256 KiB peaked at 31-34 MiB against
  // 24 MiB at 128 KiB for the same speed; flashback was 12% slower at 128 KiB (42-44 MiB at
  // 256 KiB, under the 64 MiB its spill design allows).
  std::size_t render_batch_bytes = 0;
  // Forward: each transaction's GTID as the server that wrote it replays it (MariaDB: SET
  // gtid_domain_id/server_id/gtid_seq_no; MySQL: SET @@SESSION.GTID_NEXT); false: left out
  // (--skip-gtids). Flashback never writes GTIDs.
  bool gtids = true;
  // --rewrite-db FROM->TO: database names rewritten in statements' default database (USE) and in
  // row statements' table names (exact, case-sensitive, as mysqlbinlog compares them).
  std::vector<std::pair<std::string, std::string>> rewrite_db;
  bool disable_log_bin = false;  // -D: SET sql_log_bin=0 first
  SqlComments comments = SqlComments::transaction;
  // Forward: the rows of one rows event go into multi-row INSERT statements of at most this many
  // bytes (a single row larger than it is a statement of its own); 0: one statement per row.
  std::size_t batch_bytes = 1024 * 1024;
  // Forward, with batch_bytes > 0: the statements of a transaction of row changes between
  // `DELIMITER ;;` lines, closed by `;;` at its COMMIT and before the statements would pass
  // batch_bytes, so that the mariadb/mysql client sends them as one multi-statement query (one
  // round trip) instead of one a statement (--sql-queries transaction|statement).
  bool transaction_queries = true;
};

// Runs convert --format sql (or --flashback); the exit status as run_convert's (0 ok, 1 damaged
// or undecodable data or something refused, 2 unreadable input).
int run_sql_convert(const ConvertOptions& opts, const SqlOptions& sql, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
