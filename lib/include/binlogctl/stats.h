// binlogctl stats: what is in these binlogs. Per table: rows inserted / updated / deleted and
// bytes; per event type: count and bytes; the largest and the longest transactions; a timeline
// per interval (a minute by default); a summary. man/binlogctl-stats.1.scd is the user-facing
// description of every field.
//
// Definitions (the man page repeats them):
//   events   every event read, the inner events of TRANSACTION_PAYLOAD included (as dump lists
//            them); `inner_events` counts the latter alone.
//   bytes    summary, transactions, intervals: bytes on disk, i.e. the event_size of top-level
//            events (a TRANSACTION_PAYLOAD counts once, compressed). Event types and tables: the
//            event_size of their events (inner events: their uncompressed size; MariaDB
//            compressed rows events: their compressed size on disk).
//   rows     row changes: one per WRITE / DELETE row image, one per UPDATE before/after pair.
//   transactions  as TransactionTracker (transaction.h) delimits them; a table's count is the
//            number of transactions with at least one rows event for it.
//   duration the last event's header time minus the first's, in seconds, within a transaction.
//   timeline events and rows go to the interval of their header time, a transaction to the
//            interval of its commit time (TransactionState::timestamp). Only events inside a
//            transaction give first/last_timestamp and place themselves by their time (a
//            Format_desc's or Rotate's time is when the file was opened, not a change); the
//            others go to the interval of the last transaction event before them (of the first
//            after them when there is none before; of their own time in a chain without
//            transactions). Times of 0 (artificial events) are left out.
// Memory: per table, per event type, per interval and the top-N lists; nothing per event.
#pragma once

#include <binlogctl/datetime.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/progress.h>
#include <binlogctl/schema.h>
#include <binlogctl/selection.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct StatsOptions {
  std::vector<std::string> inputs;
  InputSet* input_set = nullptr;  // read instead of `inputs` when set (tests, fuzzers)
  OutputFormat format = OutputFormat::text;
  std::string timezone = "UTC";  // --timezone: the zone of the text report's times
  bool verify_checksums = true;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds; event header times
  std::optional<std::int64_t> stop_datetime;
  std::optional<std::uint32_t> server_id;         // --server-id (ChainOptions)
  std::vector<std::uint32_t> exclude_server_ids;  // --exclude-server-ids
  // Transactions outside the selection are left out of every count.
  std::optional<GtidSelection> include_gtids;
  std::optional<GtidSelection> exclude_gtids;
  // Tables: only those the filter matches get a `table` line and count in the row totals
  // (summary, transactions, timeline); events, bytes and transactions count whatever tables
  // they touch.
  TableFilter filter;
  // Schema history's seed (--schema): only needed to walk the rows of MariaDB's pre-10.0
  // high-precision temporal columns when the chain's DDL is not read.
  std::shared_ptr<const SchemaHistory> schema;
  std::size_t top = 10;                 // transactions per ranking
  // Timeline bucket in seconds; 0 chooses it from the span of the times seen: 60 up to 6 hours,
  // 3600 up to 14 days, else 86400 (StatsReport::interval_seconds says which).
  std::uint32_t interval_seconds = 60;
  ProgressMode progress = ProgressMode::auto_;
  unsigned threads = 2;  // as ChainOptions::threads
};

struct TableStats {
  std::string database, table;
  std::uint64_t inserts = 0, updates = 0, deletes = 0;
  std::uint64_t bytes = 0;         // event_size of its rows events
  std::uint64_t events = 0;        // rows events
  std::uint64_t transactions = 0;  // transactions with a rows event for it
  std::uint64_t rows() const noexcept { return inserts + updates + deletes; }
};

struct EventTypeStats {
  std::uint8_t type_code = 0;
  std::string name;  // as SHOW BINLOG EVENTS (and dump) names it
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

struct TransactionStats {
  std::uint64_t txn_id = 0;
  std::string gtid;          // empty: anonymous / no GTIDs
  std::string log_name;      // file of its first event
  std::uint64_t pos = 0;     // position of its first event (a payload's inner event: the payload's)
  std::uint64_t bytes = 0;   // top-level event_size
  std::uint64_t events = 0;  // inner events included
  std::uint64_t rows = 0;
  std::int64_t first_time = 0, last_time = 0;  // header times of its first / last event
  std::int64_t commit_time = 0;                // TransactionState::timestamp
  // False when the transaction was cut: the file (or the input) ended, or a GTID arrived,
  // before its COMMIT/XID.
  bool complete = true;
  std::int64_t duration() const noexcept { return last_time - first_time; }
};

struct IntervalStats {
  std::int64_t start = 0;  // unix seconds, a multiple of the interval
  std::uint64_t transactions = 0, events = 0, bytes = 0;
  std::uint64_t inserts = 0, updates = 0, deletes = 0;
  std::uint64_t rows() const noexcept { return inserts + updates + deletes; }
};

struct StatsSummary {
  std::uint64_t files = 0;
  std::uint64_t events = 0, inner_events = 0, bytes = 0;
  std::uint64_t transactions = 0;
  std::uint64_t inserts = 0, updates = 0, deletes = 0;
  std::uint64_t tables = 0;
  // Rows events whose rows could not be counted (undecodable, or no TABLE_MAP for them).
  std::uint64_t uncounted_rows_events = 0;
  std::optional<std::int64_t> first_time, last_time;  // header times (0 excluded)
  std::uint64_t errors = 0, warnings = 0;             // diagnostics reported
  std::uint64_t rows() const noexcept { return inserts + updates + deletes; }
};

struct StatsReport {
  std::uint32_t interval_seconds = 60;
  std::vector<TableStats> tables;           // by bytes descending, then database, table
  std::vector<EventTypeStats> event_types;  // by bytes descending, then type code
  std::vector<TransactionStats> largest;    // by bytes descending, then txn_id
  std::vector<TransactionStats> longest;    // by duration, then bytes descending, then txn_id
  std::vector<IntervalStats> intervals;     // by start; only intervals that saw something
  StatsSummary summary;
};

// Reads the chain and fills `report`. Findings (undecodable events, rows without their
// TABLE_MAP, framing damage) go to `diag`, which must be thread-safe when opts.threads > 1;
// unreadable inputs are reported on `err`. Returns false when an input could not be read.
// summary.errors/warnings are left for the caller (it owns the sink's counts).
bool collect_stats(const StatsOptions& opts, StatsReport& report, DiagnosticSink& diag,
                   std::FILE* err);

// The report as JSON Lines, each line one object with a "kind":
//   {"kind":"table","database","table","inserts","updates","deletes","rows","bytes","events","transactions"}
//   {"kind":"event_type","event_type","type_code","count","bytes"}
//   {"kind":"transaction","rank":"largest|longest","txn_id","gtid"|null,"log_name","pos","bytes",
//    "events","rows","duration_s","first_timestamp","last_timestamp","timestamp","complete"}
//   {"kind":"interval","start","seconds","transactions","events","bytes","rows","inserts","updates","deletes"}
//   {"kind":"summary","files","events","inner_events","bytes","transactions","tables","rows",
//    "inserts","updates","deletes","uncounted_rows_events","first_timestamp"|null,
//    "last_timestamp"|null,"errors","warnings"}
// in that order (tables, event types, largest then longest transactions, intervals, summary).
// Times are UTC "YYYY-MM-DD HH:MM:SS".
void append_stats_json(const StatsReport& report, std::string& out);
// The report as aligned text tables, one section per kind; times in `tz` (--timezone; the JSON
// form keeps UTC). Interval starts stay aligned to UTC minutes, hours and days.
void append_stats_text(const StatsReport& report, std::string& out, const TimeZone& tz = TimeZone());

// Runs stats; returns the exit status (0 ok, 1 damaged or undecodable data, 2 unreadable input).
int run_stats(const StatsOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
