// The front half that every row-change consumer (convert json, the Canal formats, stats) shares:
// for each event, in stream order, its statement decoded once (MariaDB's QUERY_COMPRESSED
// inflated) and classified once, the transaction it belongs to (TransactionTracker), and whether
// the GTID selection (--include-gtids / --exclude-gtids) takes that transaction. Consumers call
// begin() before they look at an event and end() after; what they print stays theirs.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/selection.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>

#include "events/events.h"
#include "framing/relay_log.h"

#include <cstdint>
#include <optional>
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
  // The findings of the two GTID hooks, worded once for every consumer: at the event's
  // top-level position (a payload's inner events: the payload's) in `log_name`.
  static Diagnostic gtid_undecodable_finding(const Event& ev, const std::string& log_name) {
    return Diagnostic{Check::undecodable_event, Severity::error, log_name, ev.is_inner() ? ev.payload_pos : ev.pos,
                      "GTID event does not decode"};
  }
  static Diagnostic open_at_gtid_finding(const Event& ev, const std::string& log_name) {
    return Diagnostic{Check::transaction_structure, Severity::warning, log_name,
                      ev.is_inner() ? ev.payload_pos : ev.pos, "GTID event while the previous transaction is still open"};
  }

  // What begin() found out about the event.
  struct Step {
    // The damage signal (Event::damage, Event::skipped_before), the one policy of every
    // row-change consumer: a damaged event is not decoded, not given to the transaction
    // tracker and yields no row, statement or entry; consumers may mark the hole in their
    // output. One exception: a damaged TRANSACTION_PAYLOAD still ends the transaction open
    // before it (its GTID's), as an intact one does, whatever its inner events.
    // `hole_bytes`: bytes that could not be read as events right before this one.
    bool damaged = false;
    std::uint64_t hole_bytes = 0;
    bool is_statement = false;  // a QUERY or QUERY_COMPRESSED event
    bool statement_ok = false;  // ... whose statement decoded: `query` and `kind` hold it
    QueryEvent query;
    StatementKind kind = StatementKind::other;
  };

  TransactionFront(const GtidSelection* include, const GtidSelection* exclude)
      : include_(include), exclude_(exclude) {}

  // A transaction that the end of a file (or of the input) leaves without its COMMIT/XID: its
  // changes were never committed, however they were passed on (binlogctl(1), CUT-OFF
  // TRANSACTIONS).
  struct CutOff {
    std::uint64_t txn_id = 0;
    std::string gtid;          // "" for anonymous transactions
    std::uint64_t end_pos = 0;  // where the file's last complete event ends
    // An error when the file cannot still be growing: another file follows it in the chain, or
    // its format description no longer carries LOG_EVENT_BINLOG_IN_USE_F (the server closed
    // it). Else (the live end of an open binlog, or a stop position/time inside the
    // transaction) a warning.
    bool error = false;
    // Its server crashed inside it: the file is still flagged in use (or, read from a live
    // server, the server went on from its end) and the next file follows. A warning: the
    // server's recovery rolled the transaction back (binlogctl-verify(1), server_crash).
    bool crash = false;
    // The one wording of the finding, for stderr and the records that carry it.
    std::string message() const;
    // The finding for stderr (check transaction_structure, at end_pos).
    Diagnostic diagnostic(const InputFile& f) const {
      return Diagnostic{Check::transaction_structure, error ? Severity::error : Severity::warning, f.log_name,
                        end_pos, message(), message_path(f)};
    }
  };
  // Call at the end of each file, before new_file(). `carried`: the transaction goes on in the
  // next file (carries_into()), so nothing is cut off. `more_files`: another file of the chain
  // follows; `stopped`: the selection's stop position or time ended the reading;
  // `next_after_unclosed`: the next file's InputFile::after_unclosed (a live server went on from
  // this file's end, which has no ROTATE or STOP).
  std::optional<CutOff> cut_off(bool more_files, bool stopped, bool next_after_unclosed = false,
                                bool carried = false) const;

  // A new file of the chain, `log_name`. A transaction still open goes on into it only when the
  // previous file is a relay log (relay_log.h) and this one is the next of its sequence
  // (carries_into()): a replica's relay log may end inside a transaction that the next one
  // continues. Otherwise it is dropped: a server that crashed inside a transaction does not go
  // on with it in its next file.
  void new_file(const std::string& log_name) {
    if (!carries_into(log_name)) tracker_.reset();
    relay_.open(log_name);
    log_name_ = log_name;
    fde_seen_ = false;
    file_in_use_ = false;
    end_pos_ = 0;
  }
  // Whether the transaction open at the end of this file goes on in the next one, `next_log_name`.
  bool carries_into(const std::string& next_log_name) const;

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
  bool fde_seen_ = false;     // the file's first format description was seen ...
  bool file_in_use_ = false;  // ... and carries LOG_EVENT_BINLOG_IN_USE_F
  std::uint64_t end_pos_ = 0;
  RelayLogSigns relay_;  // the current file's
  std::string log_name_;  // the current file's
};

}  // namespace binlogctl
