// Binlog files as a replay EventSource: what `binlogctl replay FILE...` feeds the simulator.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay.h>

#include <memory>
#include <string>
#include <vector>

namespace binlogctl {

// Reads a chain (files, index, directory, as dump does) and yields:
//   - one event per rows event, on the path "schema.table" of its table map, sized by its
//     bytes (the rows it carries), inner events of TRANSACTION_PAYLOAD included;
//   - DDL and other statements (QUERY events other than BEGIN/COMMIT), on the control path;
//   - the commit of each transaction (XID, COMMIT, XA) on the control path with txn_end set.
// Positions are (file index in the chain, event pos, inner index); source_ts_us is the event's
// timestamp. Problems go to `diag` (reading goes on where the stream can).
class BinlogEventSource : public EventSource {
 public:
  // `input_set`, when given, is read instead of `inputs` (a live server, tests); it must outlive
  // the source.
  BinlogEventSource(const std::vector<std::string>& inputs, DiagnosticSink& diag, InputSet* input_set = nullptr);
  ~BinlogEventSource() override;
  BinlogEventSource(const BinlogEventSource&) = delete;
  BinlogEventSource& operator=(const BinlogEventSource&) = delete;
  bool next(ReplayEvent& ev) override;
  // True when an input could not be opened or an index/directory could not be read.
  bool unreadable() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace binlogctl
