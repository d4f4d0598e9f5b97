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

#include <binlogctl/chain.h>

#include <binlogctl/columns.h>
#include <binlogctl/gtid.h>
#include <binlogctl/progress.h>
#include <binlogctl/result.h>
#include <binlogctl/schema.h>
#include <binlogctl/transaction.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

// Canal's table filter (canal.instance.filter.regex, AviaterRegexFilter): comma-separated
// regular expressions, each matched against the whole "schema.table" text (as if wrapped in
// ^...$), case-insensitively (the target is lower-cased). An empty rule list matches everything.
// Example: `shop\..*,crm.users`.
class TableFilter {
 public:
  // Errors: Errc::bad_value with offset = the position of the rule that does not compile.
  static Result<TableFilter> parse(std::string_view rules);
  bool matches(std::string_view schema, std::string_view table) const;
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  struct Rules;  // the compiled std::regex list (filter.cpp)
  std::shared_ptr<const Rules> rules_;
  std::size_t size_ = 0;
};

// --include-gtids / --exclude-gtids: a MySQL GTID set (`uuid[:tag]:1-5:7,...`) or a MariaDB GTID
// list (`0-1-100,1-2-5`, meaning every GTID of domain 0 / server 1 up to seq 100, and so on).
// The form is chosen by the presence of ':'.
class GtidSelection {
 public:
  static Result<GtidSelection> parse(std::string_view text);
  // Whether the transaction's GTID is in the selection; transactions without a GTID never are.
  bool contains(const TransactionState& t) const;
  bool is_mysql() const noexcept { return mysql_; }

 private:
  bool mysql_ = false;
  GtidSet mysql_set_;
  MariaGtidList mariadb_list_;
};

struct ConvertOptions {
  std::vector<std::string> inputs;
  RenderOptions render;
  bool verify_checksums = true;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds; event header times
  std::optional<std::int64_t> stop_datetime;
  std::optional<GtidSelection> include_gtids;
  std::optional<GtidSelection> exclude_gtids;
  TableFilter filter;
  ProgressMode progress = ProgressMode::auto_;
  // Schema history's seed (--schema FILE.sql, read with load_schema_file); the DDL in the
  // binlog is applied on top of it as the conversion goes. Null = start empty.
  std::shared_ptr<const SchemaHistory> schema;
  // --format json: threads that render row changes to JSON while this one decodes (output order
  // is kept). 0 renders everything on the converting thread. Output to a terminal is rendered
  // there, line by line, whatever this says.
  unsigned render_threads = 2;
  // Rendering batches close once their copied row images pass this many bytes; a rows event with
  // more row-image bytes than render_inline_bytes is rendered by the converting thread,
  // streaming, instead. (Tunables; tests shrink them to exercise every path on small files.)
  std::size_t render_batch_bytes = 128 * 1024;
  std::size_t render_inline_bytes = 256 * 1024;
};

// Runs the conversion; returns the exit status (0 ok, 1 damaged or undecodable data, 2 unreadable
// input). Diagnostics (and the once-per-table warning about missing column names) go to `err`.
// The table a DDL statement names (CREATE/ALTER/DROP/TRUNCATE/RENAME TABLE, CREATE INDEX ... ON
// t), for filters and headers: db is left as is when the statement does not qualify the table.
// Returns false when none is found.
bool ddl_table(std::string_view sql, std::string& db, std::string& table);

// How convert reads the chain (positions, times, checksums), for every output format.
ChainOptions chain_options(const ConvertOptions& opts);
int run_convert(const ConvertOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
