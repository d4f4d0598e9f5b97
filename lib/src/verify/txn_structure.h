// TxnStructure: the transactions of binlogctl verify. Where each transaction begins and ends
// (GTID, BEGIN / XA START, COMMIT / ROLLBACK / XID / XA_PREPARE, a statement on its own, the
// legacy MySQL forms without BEGIN), and what verify judges of them: transaction_structure
// (events outside a transaction, a transaction without its end, rows without their TABLE_MAP),
// timestamp_regression (within a transaction, and between commits), the transaction ids and
// counts of the summary, a transaction cut off at the end of a file (reported, or held until
// the next file shows a crash, which rolled it back). Each transaction's GTID goes to
// GtidContinuity.
#pragma once

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
  bool begun = false;      // BEGIN / XA START seen, or a MariaDB non-standalone GTID
  bool only_gtid = false;  // a GTID and nothing of its transaction yet
  bool from_gtid = false;
  bool reported = false;        // one transaction_structure finding per transaction at most
  bool damaged = false;         // damage met inside: its structure is not judged
  bool implicit_rows = false;   // MySQL < 5.5: rows of a non-transactional table, no BEGIN
  std::uint64_t begin_end = 0;  // end offset of the BEGIN event (MySQL bug #22540 positions)
  bool has_ts = false;
  std::uint32_t last_ts = 0;
  TxnGtid gtid;
};

class TxnStructure {
 public:
  TxnStructure(VerifyContext& ctx, GtidContinuity& gtids)
      : ctx_(ctx), gtids_(gtids), timestamp_threshold_(ctx.cfg().timestamp_threshold) {}

  const Txn& txn() const noexcept { return txn_; }

  // ---- per event, dispatched by the event type ----------------------------------------------
  // Before an event whose checksum holds: only an XID keeps the mark of a statement that ended
  // its own transaction (MySQL 5.0 wrote `statement; XID`).
  void before_event(std::uint8_t type) {
    const bool was_after_standalone = after_standalone_;
    after_standalone_ = false;
    if (was_after_standalone && (type == static_cast<std::uint8_t>(EventType::xid)))
      after_standalone_ = true;
  }
  // An event whose checksum fails (its content cannot be trusted; the driver marks the damage).
  void bad_checksum() { after_standalone_ = false; }
  void on_gtid(const Event& ev);  // GTID, ANONYMOUS_GTID, GTID_TAGGED_LOG, MariaDB GTID
  void on_query(const Event& ev);
  // A statement: part of the open transaction, the one statement of a GTID's transaction, or a
  // transaction on its own (DDL, non-transactional statements without GTIDs).
  void statement(const Event& ev);
  void on_commit_event(const Event& ev);  // XID, XA_PREPARE
  void on_table_map(const Event& ev);
  void on_rows(const Event& ev);
  // ROWS_QUERY, ANNOTATE_ROWS, TRANSACTION_CONTEXT, VIEW_CHANGE: only inside a transaction.
  void on_in_txn_event(const Event& ev) {
    require_txn(ev);
    note_ts(ev);
  }
  // TRANSACTION_PAYLOAD: its events are inside (BEGIN ... XID), after its GTID.
  void on_payload(const Event& ev) {
    if (!txn_.active) require_txn(ev);
  }
  // INTVAR, RAND, USER_VAR and the LOAD DATA blocks: context of the next statement.
  void on_context(const Event& ev);

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
  void begin_file(bool prev_relay);
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
  void structure(const Event& ev, std::string msg);
  void start_txn(const Event& ev);
  void end_txn(const Event& ev);
  // Events of a transaction must not go back in time within it (GTID events excluded: the
  // server stamps them at commit, after the statements).
  void note_ts(const Event& ev);
  // An event that only makes sense inside a transaction.
  void require_txn(const Event& ev);
  void abandon_open_txn(const Event& ev, std::string_view why);
  std::uint64_t read_table_id(const Event& ev, std::uint16_t* flags) const;
  // The end of a transaction (`what`: COMMIT, ROLLBACK, the event's constant) ends the open
  // one, reported when it had no BEGIN. False when no transaction is open.
  bool end_open_txn(const Event& ev, std::string_view what);
  void report_open_txn(const Txn& t, const std::string& log_name, std::string_view what);

  VerifyContext& ctx_;
  GtidContinuity& gtids_;
  const std::uint32_t timestamp_threshold_;

  Txn txn_;
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
