// binlogctl verify --cover-from: does an archive of binlogs hold every transaction a
// point-in-time recovery needs, from a backup's GTID position to a target?
//
// The archives (one or several chains: the binlogs of several servers of one replication
// topology, e.g. a primary's and a replica's with log_slave_updates) are read as the union of
// their transactions, each known by its GTID. A transaction is present when its GTID event and
// its end (XID, COMMIT, XA PREPARE, or the one statement of a standalone transaction) are read
// undamaged, wherever its events lie: a transaction whose events run on into the next file of
// its chain (relay logs rotate inside transactions) is one transaction, not a gap.
//
// Covered: for every GTID stream (MariaDB: a domain; MySQL: a source uuid with its tag), every
// sequence number after the backup's position up to the target is present, once per chain and
// in increasing order within each chain, and a GTID present in several chains has the same
// content in each (a digest of its events without what the server that wrote the copy sets
// for itself: table ids, XIDs, thread ids, execution times, status variables, positions,
// checksums). Sequence numbers are consecutive on a server (MariaDB per domain with
// gtid_strict_mode or one primary at a time; MySQL per uuid), which is what makes a hole a
// missing transaction.
//
// Memory: 56 bytes per transaction read (they are sorted at the end).
#pragma once

#include <binlogctl/output.h>
#include <binlogctl/progress.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

class InputSet;

struct CoverOptions {
  std::vector<std::string> archives;  // each one chain: a file, an index file or a directory
  // When set, chain c is read from archive_sets[c] instead (tests, fuzzers); archives still
  // name the chains in the output.
  std::vector<InputSet*> archive_sets;
  // The backup's GTID position: MariaDB `domain-server-seq` list (xtrabackup_binlog_info,
  // @@gtid_binlog_pos; several entries of a domain: the highest seq counts), or a MySQL GTID set
  // (@@gtid_executed). "" = nothing before the archives.
  std::string from;
  std::optional<std::int64_t> to_time;  // transactions that committed before this time (UTC s)
  std::string to_gtid;                  // or up to this GTID, included
  OutputFormat format = OutputFormat::text;
  bool verify_checksums = true;
  ProgressMode progress = ProgressMode::auto_;
};

// Text: findings as `FILE:POS: error: CHECK: message` (coverage_gap, coverage_order,
// coverage_duplicate, coverage_mismatch, coverage_end), then `coverage:` summary lines. JSON
// Lines: one object per finding, then {"coverage": {...}}. Returns 0 when covered, 1 when not, 2
// for an unusable position or an unreadable archive (the reason on `err`).
int run_cover(const CoverOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
