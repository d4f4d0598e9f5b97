// binlogctl schema: the table definitions that schema history rebuilds, shown. The chain is read
// through the same front as every row consumer (TransactionFront: damaged events are skipped,
// QUERY_COMPRESSED inflated); schema history is seeded by --schema and follows the DDL of the
// selection; TABLE_MAPs tell which tables the binlogs use and, with binlog_row_metadata=FULL,
// define the tables no DDL defined. man/binlogctl-schema.1.scd is the user-facing description.
//
// Output (text): a SQL script that a server accepts and that --schema reads back, so that a later
// run starting mid-chain decodes as the whole chain would: per database `CREATE DATABASE IF NOT
// EXISTS`, then per table a comment saying where its definition comes from and CREATE TABLE
// (create_table_sql, schema.h); tables used by the binlogs whose columns were never defined get a
// comment only. With --history: every version of every table in chain order, each a DROP TABLE IF
// EXISTS + CREATE TABLE (or a DROP for a table that went away) after a comment with the position,
// time, GTID and statement of the change.
//
// Output (json), one object per line:
//   {"kind":"table","database","table","defined":true,"source":"ddl|schema_file|table_map",
//    "log_name"|null,"pos"|null,"timestamp"|null,"gtid"|null,"statement"|null,
//    "columns":[{"name","type","charset"|null,"collation"|null,"nullable","primary_key",
//                "invisible","generated"}],"primary_key":[...],"default_charset"|null,
//    "create":"CREATE TABLE ...","warning"?}
//   {"kind":"table","database","table","defined":false,"source":"none","log_name","pos",
//    "column_count","column_types":[...],"message"}
//   {"kind":"lost","database","table","log_name","pos","timestamp","gtid","statement","message"}
//   --history: {"kind":"version","change":"defined|removed", then the keys of a defined table
//    (removed: "columns":null,"create":null) and "reason" for removals}
// Tables in (database, table) byte order; versions in chain order.
#pragma once

#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/progress.h>
#include <binlogctl/schema.h>
#include <binlogctl/selection.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct SchemaReportOptions {
  std::vector<std::string> inputs;
  InputSet* input_set = nullptr;  // read instead of `inputs` when set (tests, -R)
  OutputFormat format = OutputFormat::text;
  bool history = false;          // every version, not only the state at the end
  std::string timezone = "UTC";  // of the text output's times (JSON keeps UTC)
  bool verify_checksums = true;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds; event header times
  std::optional<std::int64_t> stop_datetime;
  std::optional<std::uint32_t> server_id;
  std::vector<std::uint32_t> exclude_server_ids;
  TableFilter filter;                           // which tables are printed
  std::shared_ptr<const SchemaHistory> schema;  // the seed (--schema), may be null
  ProgressMode progress = ProgressMode::auto_;
  unsigned threads = 2;
};

// Runs `binlogctl schema`; returns the exit status (0 ok, 1 damaged or undecodable data, 2
// unreadable input).
int run_schema_report(const SchemaReportOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
