// binlogctl dump: one record per event, with the fields of SHOW BINLOG EVENTS.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/output.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>
#include <binlogctl/selection.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct DumpOptions {
  std::vector<std::string> inputs;
  InputSet* input_set = nullptr;  // read instead of `inputs` when set (tests, fuzzers)
  OutputFormat format = OutputFormat::text;
  bool decode = false;     // JSON: add "body" with the decoded fields
  bool hexdump = false;    // add the raw bytes
  bool verify_checksums = true;
  bool expand_payloads = true;  // list the inner events of TRANSACTION_PAYLOAD
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds
  std::optional<std::int64_t> stop_datetime;
  std::optional<std::uint32_t> server_id;         // --server-id (ChainOptions)
  std::vector<std::uint32_t> exclude_server_ids;  // --exclude-server-ids
  // --include-gtids / --exclude-gtids: the events of a transaction outside the selection are not
  // listed (its GTID event included). Events outside every transaction (Format_desc, Rotate,
  // Previous_gtids, Gtid_list, Binlog_checkpoint, ...) are always listed, as mysqlbinlog keeps them.
  std::string database;  // -d/--database (DatabaseFilter); "" = every database
  // --filter: only the TABLE_MAP events of matching tables and the rows events that use them
  // (statements and every other event are listed; -d selects statements); empty = every table.
  TableFilter filter;
  std::optional<GtidSelection> include_gtids;
  std::optional<GtidSelection> exclude_gtids;
  ProgressMode progress = ProgressMode::auto_;
  // Mapped files are read (framing, checksums) on a second thread while this one formats;
  // 1 keeps everything on one thread.
  unsigned threads = 2;
};

// Runs the dump; returns the exit status (0 ok, 1 damaged or undecodable data, 2 unreadable
// input). Diagnostics go to `err`, records to `out`.
int run_dump(const DumpOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
