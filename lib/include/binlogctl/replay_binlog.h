// Binlog files as a replay EventSource: what `binlogctl replay FILE...` feeds the simulator.
#pragma once

#include <binlogctl/chain.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/replay.h>
#include <binlogctl/selection.h>

#include <optional>

#include <memory>
#include <string>
#include <vector>

namespace binlogctl {

// What to read: the chain and its selection, as every subcommand that reads one takes them
// (binlogctl(1), COMMON OPTIONS).
struct BinlogSourceOptions {
  ChainOptions chain;  // inputs, positions, datetimes, server ids, checksums, progress
  std::optional<GtidSelection> include_gtids, exclude_gtids;
  TableFilter filter;  // rows events of other tables are not replayed (their commits are)
  // --path-by hash:N: decode every row and give it with the hash of its key (ReplayEvent::rows;
  // what is hashed: ReplaySink::hash_rows in binlog_source.cpp, binlogctl-replay(1) --path-by).
  bool row_keys = false;
  // Check the chain's context as it is read, with verify's chain checks (positions, file
  // sequence, rotation, GTID continuity): what breaks it becomes a SourceBreak. Off only for
  // inputs that repeat files on purpose (bench/replay_bench.cpp).
  bool check_context = true;
};

// Reads a chain (files, index, directory, as dump does) and yields:
//   - one event per rows event, on the path "schema.table" of its table map, sized by its
//     bytes (the rows it carries), inner events of TRANSACTION_PAYLOAD included;
//   - DDL and other statements (QUERY events other than BEGIN/COMMIT), on the control path;
//   - the commit of each transaction (XID, COMMIT, XA) on the control path with txn_end set.
// With row_keys, a rows event also carries its rows (ReplayEvent::rows), each with the hash of
// its key: the table's name and the raw bytes of its primary key columns in the after image
// (the before image of a DELETE), or of the whole image when no primary key is known.
// Positions are (file index in the chain, event pos, inner index); source_ts_us is the event's
// timestamp. Transactions are told apart by the shared row stream (txn/row_stream.h), which
// also applies the GTID selection and the damage policy: a damaged event is never replayed.
// Problems go to `diag` (reading goes on where the stream can).
class BinlogEventSource : public EventSource {
 public:
  BinlogEventSource(const BinlogSourceOptions& opts, DiagnosticSink& diag);
  BinlogEventSource(const std::vector<std::string>& inputs, DiagnosticSink& diag);
  ~BinlogEventSource() override;
  BinlogEventSource(const BinlogEventSource&) = delete;
  BinlogEventSource& operator=(const BinlogEventSource&) = delete;
  bool next(ReplayEvent& ev) override;
  // True when an input could not be opened or an index/directory could not be read.
  bool unreadable() const noexcept;
  std::span<const SourceBreak> source_breaks() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace binlogctl
