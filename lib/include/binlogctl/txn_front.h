// The front half that every row-change consumer (convert json, the Canal formats, stats) shares:
// for each event, in stream order, its statement decoded once (MariaDB's QUERY_COMPRESSED
// inflated) and classified once, the transaction it belongs to (TransactionTracker), and whether
// the GTID selection (--include-gtids / --exclude-gtids) takes that transaction. Consumers call
// begin() before they look at an event and end() after; what they print stays theirs.
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/selection.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>

#include <string>
#include <string_view>

namespace binlogctl {

class TransactionFront {
 public:
  // What the front cannot decode is reported through these; the consumer words it.
  class Hooks {
   public:
    virtual ~Hooks() = default;
    // A QUERY / QUERY_COMPRESSED event whose body (layer "QUERY") or statement
    // ("QUERY_COMPRESSED") does not decode. The event still gets a transaction.
    virtual void statement_undecodable(const Event& ev, std::string_view layer, const DecodeError& e) = 0;
    // A GTID event whose body does not decode.
    virtual void gtid_undecodable(const Event& ev) = 0;
    // A GTID event while the previous transaction is still open.
    virtual void open_at_gtid(const Event&) {}
  };

  // What begin() found out about the event.
  struct Step {
    // The damage signal (Event::damage, Event::skipped_before), the one policy of every
    // row-change consumer: a damaged event is not decoded, not given to the transaction
    // tracker and yields no row, statement or entry; consumers may mark the hole in their
    // output. `hole_bytes`: bytes that could not be read as events right before this one.
    bool damaged = false;
    std::uint64_t hole_bytes = 0;
    bool is_statement = false;  // a QUERY or QUERY_COMPRESSED event
    bool statement_ok = false;  // ... whose statement decoded: `query` and `kind` hold it
    QueryEvent query;
    StatementKind kind = StatementKind::other;
  };

  TransactionFront(const GtidSelection* include, const GtidSelection* exclude)
      : include_(include), exclude_(exclude) {}

  // A new file: no transaction goes on across files.
  void reset() { tracker_.reset(); }

  const Step& begin(const Event& ev, Hooks& hooks);
  // Once the event has been consumed: closes the transaction when this event ended it.
  void end() {
    if (begun_) tracker_.end_event();
  }

  const TransactionState& state() const noexcept { return tracker_.state(); }
  // Whether the GTID selection takes the current transaction.
  bool selected() const noexcept { return selected_; }

 private:
  const GtidSelection* include_;
  const GtidSelection* exclude_;
  TransactionTracker tracker_;
  Step step_;
  std::string sql_buf_;  // inflated QUERY_COMPRESSED statements
  std::uint64_t selected_txn_ = ~0ull;
  bool selected_ = true;
  bool begun_ = false;  // the tracker saw the current event
};

}  // namespace binlogctl
