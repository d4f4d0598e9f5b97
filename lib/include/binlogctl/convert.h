// binlogctl convert --format json: one JSON line per row change, DDL and statement, with the
// transaction each belongs to and the position it came from. man/binlogctl-convert.1.scd is the
// user-facing description of the record shape and of every value's rendering.
//
// Records (keys in this order):
//   row change  {"log_name","pos","txn_id","gtid","timestamp","database","table",
//                "type":"INSERT|UPDATE|DELETE","before":{..}|null,"after":{..}|null,
//                "primary_key":[names], ["json_diffs":{col:[..]}], ["partition_id":n],
//                ["source_partition_id":n], ["ndb_info":{"format":n,"data":".."}],
//                ["payload_pos":n,"inner_index":n]}
//   statement   {"log_name","pos","txn_id","gtid","timestamp","database","type":"DDL|QUERY",
//                "sql", ["payload_pos","inner_index"]}
// `pos` is the position of the event in its file (for events inside a TRANSACTION_PAYLOAD: the
// payload event's, with `inner_index` the 0-based index inside it), so `--start-position` takes
// it back. `timestamp` is the transaction's commit time (transaction.h) as UTC
// "YYYY-MM-DD HH:MM:SS". `gtid` is null for anonymous transactions and binlogs without GTIDs.
#pragma once

#include <binlogctl/columns.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>
#include <binlogctl/schema.h>
#include <binlogctl/selection.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

struct ConvertOptions {
  std::vector<std::string> inputs;
  InputSet* input_set = nullptr;  // read instead of `inputs` when set (tests, fuzzers)
  RenderOptions render;
  bool verify_checksums = true;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds; event header times
  std::optional<std::int64_t> stop_datetime;
  std::optional<std::uint32_t> server_id;         // --server-id (ChainOptions)
  std::vector<std::uint32_t> exclude_server_ids;  // --exclude-server-ids
  std::optional<GtidSelection> include_gtids;
  std::optional<GtidSelection> exclude_gtids;
  TableFilter filter;
  // -d/--database: only row changes of this database's tables and statements whose default
  // database it is (mysqlbinlog's meaning, compared exactly); "" = every database.
  std::string database;
  ProgressMode progress = ProgressMode::auto_;
  // --with-statement (json): row change records carry "statement" (the text of the ANNOTATE_ROWS /
  // ROWS_QUERY event before their rows event, when the server logged one) and "thread_id" (of the
  // transaction's QUERY events, when it has one: MySQL's BEGIN, statement-logged changes).
  bool with_statement = false;
  // Mapped files are framed and checksummed on a second thread (ChainOptions::threads); 1 keeps
  // the reading on the converting thread (fuzzers).
  unsigned read_threads = 2;
  // Schema history's seed (--schema FILE.sql, read with load_schema_file); the DDL in the
  // binlog is applied on top of it as the conversion goes. Null = start empty.
  std::shared_ptr<const SchemaHistory> schema;
  // --format json, sql and the Canal formats: threads that render row changes while this one
  // decodes (output order is kept). 0 renders everything on the converting thread. JSON output
  // to a terminal is rendered there, line by line, whatever this says.
  unsigned render_threads = 2;
  // Rendering batches close once their copied row images pass this many bytes (json; sql and
  // Canal have their own, SqlOptions and CanalOptions); a rows event with more row-image bytes than render_inline_bytes is
  // rendered by the converting thread instead (json and sql streaming). (Tunables; tests shrink
  // them to exercise every path on small files.)
  std::size_t render_batch_bytes = 64 * 1024;
  std::size_t render_inline_bytes = 256 * 1024;
};

// Runs the conversion; returns the exit status (0 ok, 1 damaged or undecodable data, 2 unreadable
// input). Diagnostics (and the once-per-table warning about missing column names) go to `err`.
int run_convert(const ConvertOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
