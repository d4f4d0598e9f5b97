// SQL output: `binlogctl convert --format sql` / `--flashback` (the row changes as
// INSERT/UPDATE/DELETE statements, or the statements that undo them), with column values as SQL
// literals that give the server back the same bytes (lib/src/sql/sql_value.h). man/binlogctl-convert.1.scd (SQL OUTPUT) is the
// user-facing description of every rendering.
#pragma once

#include <binlogctl/convert.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace binlogctl {

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
