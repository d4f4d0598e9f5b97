// TxnStructure: the transactions of binlogctl verify. Where each transaction begins and ends is
// the one tracker's (TransactionTracker, binlogctl/transaction.h: GTID, BEGIN / XA START, COMMIT /
// ROLLBACK / XID / XA_PREPARE, a statement on its own, INCIDENT, the legacy MySQL forms without
// BEGIN), told through its Observer hook; what verify judges of them stays here:
// transaction_structure (events outside a transaction, a transaction without its end, rows
// without their TABLE_MAP), timestamp_regression (within a transaction, and between commits),
// the transaction ids and counts of the summary, a transaction cut off at the end of a file
// (reported, or held until the next file shows a crash, which rolled it back), the damage rules
// and the relay-log carry. Each transaction's GTID goes to GtidContinuity.
#pragma once

#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "verify/file_chain.h"
#include "verify/gtid_continuity.h"
#include "verify/verify_context.h"

namespace binlogctl::verify {

struct Txn {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t start_pos = 0;
  bool only_gtid = false;       // a GTID and nothing of its transaction yet
  bool reported = false;        // one transaction_structure finding per transaction at most
  bool damaged = false;         // damage met inside: its structure is not judged
  std::uint64_t begin_end = 0;  // end offset of the BEGIN event (MySQL bug #22540 positions)
  bool has_ts = false;
  std::uint32_t last_ts = 0;
  TxnGtid gtid;
};

class TxnStructure final : TransactionTracker::Observer {
 public:
  TxnStructure(VerifyContext& ctx, GtidContinuity& gtids)
      : ctx_(ctx), gtids_(gtids), timestamp_threshold_(ctx.cfg().timestamp_threshold) {}

  const Txn& txn() const noexcept { return txn_; }

  // ---- per event, dispatched by the event type ----------------------------------------------
  // Each hands the event to the tracker (whose hooks below start and end verify's transactions)
  // and judges what is verify's.
  // Before an event whose checksum holds: only an XID keeps the mark of a statement that ended
  // its own transaction (MySQL 5.0 wrote `statement; XID`).
  void before_event(std::uint8_t type) {
    const bool was_after_standalone = after_standalone_;
    after_standalone_ = false;
    if (was_after_standalone && (type == static_cast<std::uint8_t>(EventType::xid)))
      after_standalone_ = true;
  }
  // An event whose checksum fails (its content cannot be trusted, its type neither: the tracker
  // does not see it; the driver marks the damage).
  void bad_checksum() { after_standalone_ = false; }
  void on_query(const Event& ev);
  void on_table_map(const Event& ev);
  void on_rows(const Event& ev);
  // A statement other than QUERY (LOAD DATA's, DELETE_FILE); ROWS_QUERY, ANNOTATE_ROWS,
  // TRANSACTION_CONTEXT, VIEW_CHANGE (only inside a transaction); INTVAR, RAND, USER_VAR and
  // the LOAD DATA blocks (context of the next statement): the event's time is judged.
  void on_timed(const Event& ev) {
    tracker_.begin_event(ev);
    if (txn_.active) txn_.only_gtid = false;
    note_ts(ev);
    tracker_.end_event();
  }
  // Any other event (GTIDs, TRANSACTION_PAYLOAD, INCIDENT, the file's bookkeeping): only its
  // place in the transactions.
  void on_other(const Event& ev) {
    tracker_.begin_event(ev);
    tracker_.end_event();
  }

  // ---- damage ----------------------------------------------------------------------------
  void mark_damage() {
    damage_since_gtid_ = true;
    if (txn_.active) txn_.damaged = true;
  }
  // The server left transactions out before this event (Event::omitted_before).
  void gap() { damage_since_gtid_ = true; }

  // ---- files -------------------------------------------------------------------------------
  // Files of another sequence (or without one), or not in order: clocks are not comparable.
  void reset_commit_clock() { has_commit_clock_ = false; }
  // A file is read; `prev_relay`: the previous one was a relay log (only relay logs carry a
  // transaction over).
  void begin_file(bool prev_relay) {
    if (!txn_.active || !prev_relay) {
      txn_ = Txn{};
      tracker_.reset();
    }
    table_ids_.clear();
  }
  // The file ends: a transaction still open is reported, or held (open tail) when the file has
  // no closing event.
  void end_file(const FileInfo& cur);
  // The transaction held at the end of the previous file (`log_name`) is reported as cut off
  // (no crash explains it).
  void flush_open_tail(const std::string& log_name);
  // The server crashed inside the held transaction: it was rolled back. Returns what the
  // server_crash finding says of it ("" when none is held).
  std::string roll_back_open_tail();

 private:
  // ---- the tracker's hooks ------------------------------------------------------------------
  void abandoned(const Event& ev) override;
  void started_gtid(const Event& ev, const Result<GtidLog>& g) override;
  void started_mariadb_gtid(const Event& ev, const Result<MariaGtidEvent>& g) override;
  void started(const Event& ev, Start how) override;
  void ended(const Event& ev) override;
  void payload_ended(const Event&) override { end_txn(nullptr); }
  void end_outside(const Event& ev) override;

  void structure(const Event& ev, std::string msg);
  void start_txn(const Event& ev);
  // The transaction ends at `ev`, a commit for the commit clock; nullptr: no commit time (a
  // TRANSACTION_PAYLOAD that did not say).
  void end_txn(const Event* ev);
  // Events of a transaction must not go back in time within it (GTID events excluded: the
  // server stamps them at commit, after the statements). Inline: every event passes here.
  void note_ts(const Event& ev) {
    const std::uint32_t ts = ev.header.timestamp;
    if (ts == 0 || !txn_.active) return;
    if (txn_.has_ts && static_cast<std::uint64_t>(ts) + timestamp_threshold_ < txn_.last_ts &&
        !txn_.damaged)
      report_ts_regression(ev);
    if (!txn_.has_ts || ts > txn_.last_ts) txn_.last_ts = ts;
    txn_.has_ts = true;
  }
  void report_ts_regression(const Event& ev);
  // What ends a transaction, as findings name it: COMMIT, ROLLBACK, the event's constant; ""
  // for a statement.
  std::string_view end_name(const Event& ev) const;
  std::uint64_t read_table_id(const Event& ev, std::uint16_t* flags) const;
  void report_open_txn(const Txn& t, const std::string& log_name, std::string_view what);

  VerifyContext& ctx_;
  GtidContinuity& gtids_;
  const std::uint32_t timestamp_threshold_;

  TransactionTracker tracker_{*this};
  Txn txn_;
  StatementKind query_kind_ = StatementKind::other;  // of the QUERY event being read
  Txn open_tail_;  // a transaction open where the previous file ends without ROTATE or STOP
                   // (end_file)
  bool open_tail_valid_ = false;
  std::uint64_t next_txn_id_ = 1;
  std::vector<std::uint64_t> table_ids_;
  bool damage_since_gtid_ = false;
  bool after_standalone_ = false;  // the previous event ended a statement-only transaction

  // timestamps
  bool has_commit_clock_ = false;
  std::uint32_t commit_clock_ = 0;

  std::string scratch_;  // inflated MariaDB QUERY_COMPRESSED statements (decode_statement)
};

}  // namespace binlogctl::verify
