// Transaction assembly: which transaction every event belongs to. The rules are the servers'
// (MySQL's Transaction_boundary_parser, libs/mysql/binlog/event/trx_boundary_parser.cpp; its
// applier, sql/log_event.cc, where the parser has no answer a consumer can use), for binlogs
// without GTIDs too.
//
// A transaction starts at
//   * a GTID event (MySQL GTID / ANONYMOUS_GTID / GTID_TAGGED_LOG, MariaDB GTID); one still open
//     there is left without its end (reported through open_at_gtid());
//   * BEGIN / XA START outside a transaction, or inside one that had its BEGIN (or began with
//     rows, without one): the open one is left without its end. A BEGIN after a GTID event,
//     before any statement or TABLE_MAP, is that GTID's transaction's, even after a MariaDB
//     GTID, which stands for BEGIN;
//   * any other statement outside a transaction (QUERY, EXECUTE_LOAD_QUERY and the LOAD
//     events of old servers), or LOAD DATA's file blocks (BEGIN_LOAD_QUERY, APPEND_BLOCK,
//     CREATE_FILE) before its statement;
//   * the start of a rows statement outside a transaction (ROWS_QUERY, ANNOTATE_ROWS,
//     TABLE_MAP, a rows event): a transaction without BEGIN;
//   * a TRANSACTION_PAYLOAD outside a transaction (its inner events are the transaction).
// It ends
//   * at XID (16), XA_PREPARE_LOG (38), a COMMIT or ROLLBACK statement;
//   * at an INCIDENT event (an incident with its own GTID is that GTID's transaction);
//   * after the one statement of a transaction that has no BEGIN: any statement (DDL,
//     SAVEPOINT, XA END, XA COMMIT/ROLLBACK, LOAD DATA's ...) after a MySQL GTID, after a
//     MariaDB GTID flagged standalone, or outside a transaction;
//   * after a rows event flagged STMT_END when the transaction had neither GTID nor BEGIN (the
//     applier commits such a statement there, whatever the server's version);
//   * with the TRANSACTION_PAYLOAD that holds it: after its inner events (their XID), and when
//     those cannot be read (damaged_payload()), at the next GTID, statement or bookkeeping
//     event outside it, or at the end of the file (open_beyond_payload());
//   * at the end of a file (reset()), unless the caller carries it into the next relay log
//     (TransactionFront::new_file).
// INTVAR, RAND, USER_VAR and the file's bookkeeping (FDE, ROTATE, STOP, GTID headers,
// heartbeats, DELETE_FILE) start and end nothing.
// MariaDB writes no BEGIN query after a non-standalone GTID: the GTID event is the BEGIN.
// With an Observer (binlogctl verify: the findings hook), the tracker reports where it starts,
// ends and abandons transactions, and follows the checker's reading of input the servers would
// not have written, where the applier's rule above only serves a consumer: rows, TABLE_MAP,
// ROWS_QUERY, ANNOTATE_ROWS, TRANSACTION_CONTEXT or VIEW_CHANGE outside a transaction start one
// that lost its BEGIN (it ends at its COMMIT or XID, as the server wrote it), except rows and
// TABLE_MAP of MySQL servers before 5.5 (non-transactional tables: they end at STMT_END_F);
// LOAD DATA's file blocks start nothing (their statement does); DELETE_FILE is a statement.
// Every transaction gets the next txn_id (1, 2, ... within one reader), its GTID text and its
// commit time: MySQL's original_commit_timestamp when the GTID event carries one (rounded down to
// the second), else the GTID event's header time (MariaDB writes it at commit), else the time of
// the transaction's first event.
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/gtid.h>
#include <binlogctl/statement_kind.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

struct TransactionState {
  std::uint64_t txn_id = 0;  // 0 before the first transaction
  bool open = false;
  bool begun = false;  // BEGIN / XA START seen (MariaDB: a non-standalone GTID)
  // GTID of the transaction; gtid_text is empty for anonymous transactions and binlogs without
  // GTIDs. For selection: mysql_gtid tells which of the two forms below is set.
  bool has_gtid = false;
  bool mysql_gtid = false;
  bool anonymous = false;  // MySQL: started by an ANONYMOUS_GTID event (gtid_mode OFF)
  Uuid uuid;
  std::string tag;  // MySQL 8.4 tagged GTIDs, lower case
  std::uint64_t gno = 0;
  MariaGtid mariadb_gtid;
  std::string gtid_text;  // "uuid:gno", "uuid:tag:gno", "d-s-n"
  std::int64_t timestamp = 0;  // commit time, seconds since the epoch (UTC)
  // XA transactions: the xid as the server writes it in XA statements, X'gtrid',X'bqual',formatID
  // (from the MariaDB GTID event or the XA START statement); empty otherwise.
  std::string xid;
};

class TransactionTracker {
 public:
  // Told where transactions start and end, for a checker to judge (as MySQL's
  // Transaction_boundary_parser warns from the state machine the applier uses). The tracker only
  // reports; findings, counts and damage rules are the observer's. Calls come from begin_event()
  // (abandoned, then started; end_outside) and end_event() (ended).
  class Observer {
   public:
    // How a transaction starts without a GTID event.
    enum class Start : std::uint8_t {
      begin,          // BEGIN / XA START
      statement,      // a statement on its own (it ends there too)
      without_begin,  // an event that only makes sense inside a transaction (rows, TABLE_MAP, ...)
      implicit_rows,  // rows (TABLE_MAP) of a MySQL server before 5.5: ends at STMT_END_F
      payload,        // a TRANSACTION_PAYLOAD outside a transaction
    };
    // `ev` (a GTID event or a BEGIN) leaves the open transaction without its end.
    virtual void abandoned(const Event& ev) = 0;
    // A GTID event starts a transaction: MySQL's (ANONYMOUS_GTID too), MariaDB's, as decoded.
    virtual void started_gtid(const Event& ev, const Result<GtidLog>& g) = 0;
    virtual void started_mariadb_gtid(const Event& ev, const Result<MariaGtidEvent>& g) = 0;
    virtual void started(const Event& ev, Start how) = 0;
    // `ev` ends the open transaction (XID, COMMIT, its one statement, an INCIDENT); state() is
    // still its.
    virtual void ended(const Event& ev) = 0;
    // A TRANSACTION_PAYLOAD ended the open transaction, though its inner events did not (none
    // could be read, or they hold no end): told at `next`, the first event after them.
    virtual void payload_ended(const Event& next) = 0;
    // COMMIT, ROLLBACK, XID or XA_PREPARE with no transaction open.
    virtual void end_outside(const Event& ev) = 0;

   protected:
    ~Observer() = default;
  };

  TransactionTracker() = default;
  // The observer's rules (above); state().gtid_text and xid stay empty (it has the events).
  explicit TransactionTracker(Observer& obs) : obs_(&obs) {}

  // Call for every event in stream order (the inner events of a TRANSACTION_PAYLOAD too, after
  // the payload event itself), before looking at state(). `sql` is the statement of a QUERY
  // event (ignored for others). Returns false when the event's body needed for structure (a GTID
  // event) does not decode; the event then still gets a transaction.
  bool begin_event(const Event& ev, std::string_view sql = {}) { return step(ev, sql, nullptr); }
  // The same for a rows event (is_rows_event()): inline, for the hot path inside a transaction.
  bool begin_rows_event(const Event& ev) {
    if (st_.open && !implicit_) {  // nothing changes
      close_after_ = false;
      open_at_gtid_ = false;
      return true;
    }
    return step(ev, {}, nullptr);
  }
  // The same for a QUERY event whose statement the caller has classified (`kind`).
  bool begin_event(const Event& ev, std::string_view sql, StatementKind kind) { return step(ev, sql, &kind); }
  // Call once the event has been consumed: closes the transaction when this event ended it.
  void end_event() {
    if (close_after_) close_now(current_);
    close_after_ = false;
  }
  // A new file (or a gap in the input): any transaction still open is dropped.
  void reset();
  // A TRANSACTION_PAYLOAD that the caller does not pass on (damaged): the transaction open
  // before it ends with it, as with an intact payload (no transaction starts: its GTID is not
  // known).
  void damaged_payload() noexcept {
    if (!st_.open) return;
    payload_open_ = true;
    payload_txn_ = st_.txn_id;
  }

  const TransactionState& state() const noexcept { return st_; }
  // Whether the transaction is open beyond the current event's input: false when the
  // TRANSACTION_PAYLOAD just read ended it (its inner events done, or none readable).
  bool open_beyond_payload() const noexcept {
    return st_.open && !(payload_open_ && st_.txn_id == payload_txn_);
  }
  // True when the last begin_event() was a GTID event that found the previous transaction
  // still open (a transaction_structure problem in the input).
  bool open_at_gtid() const noexcept { return open_at_gtid_; }

 private:
  bool step(const Event& ev, std::string_view sql, const StatementKind* kind);
  void start(std::int64_t ts);
  // A GTID event (either flavor) begins a transaction: what was open is abandoned.
  void start_at_gtid(const Event& ev, std::int64_t ts);
  // A transaction the observer hears of (started(ev, how)).
  void start_observed(const Event& ev, Observer::Start how) {
    start(static_cast<std::int64_t>(ev.header.timestamp));
    if (obs_ != nullptr) obs_->started(ev, how);
  }
  // An event that only makes sense inside a transaction, outside one (observer's rules).
  void without_begin(const Event& ev);
  void payload_boundary(std::int64_t ts);
  // A statement: a transaction of its own, or the one statement of a transaction without BEGIN.
  void statement(const Event& ev);
  void close_now(const Event* ev);
  // The TRANSACTION_PAYLOAD's transaction ends: at the first top-level event after its inner
  // events that can only stand outside a transaction (a GTID, a statement, the file's
  // bookkeeping), not on the hot path of rows events.
  void end_payload(const Event& ev);
  Observer* obs_ = nullptr;
  const Event* current_ = nullptr;  // the event between begin_event() and end_event()
  TransactionState st_;
  std::uint64_t payload_txn_ = 0;  // the transaction of the last TRANSACTION_PAYLOAD ...
  bool payload_open_ = false;      // ... whose inner events may still come
  bool gtid_fresh_ = false;        // a GTID event, and no statement or TABLE_MAP after it yet
  bool close_after_ = false;
  bool open_at_gtid_ = false;
  bool implicit_ = false;  // started by a rows statement without GTID or BEGIN
};

// "YYYY-MM-DD HH:MM:SS" of a UTC time in seconds since the epoch, appended to out.
void append_utc_datetime(std::string& out, std::int64_t seconds);

}  // namespace binlogctl
