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
  // Call for every event in stream order (the inner events of a TRANSACTION_PAYLOAD too, after
  // the payload event itself), before looking at state(). `sql` is the statement of a QUERY
  // event (ignored for others). Returns false when the event's body needed for structure (a GTID
  // event) does not decode; the event then still gets a transaction.
  bool begin_event(const Event& ev, std::string_view sql = {});
  // Call once the event has been consumed: closes the transaction when this event ended it.
  void end_event();
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
  void start(std::int64_t ts);
  void payload_boundary(std::int64_t ts);
  // A statement: a transaction of its own, or the one statement of a transaction without BEGIN.
  void statement(std::int64_t ts);
  void close_now();
  // The TRANSACTION_PAYLOAD's transaction ends: at the first top-level event after its inner
  // events that can only stand outside a transaction (a GTID, a statement, the file's
  // bookkeeping), not on the hot path of rows events.
  void end_payload();
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
