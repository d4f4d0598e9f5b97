// Transaction assembly: which transaction every event belongs to.
//
// A transaction starts at a GTID event (MySQL GTID / ANONYMOUS_GTID / GTID_TAGGED_LOG, MariaDB
// GTID), or, in binlogs without GTID events, at BEGIN / XA START or at the first statement or
// rows event found outside a transaction. It ends:
//   * at XID (16) or XA_PREPARE_LOG (38);
//   * at a COMMIT or ROLLBACK statement;
//   * after the one statement of a transaction that has no BEGIN (DDL after a MySQL GTID, a
//     MariaDB GTID flagged standalone, XA COMMIT/ROLLBACK, an autocommit statement in a binlog
//     without GTIDs);
//   * after a rows event flagged STMT_END when the transaction had neither GTID nor BEGIN;
//   * when the next GTID event arrives while it is still open (reported through open_at_gtid()).
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

  const TransactionState& state() const noexcept { return st_; }
  // True when the last begin_event() was a GTID event that found the previous transaction
  // still open (a transaction_structure problem in the input).
  bool open_at_gtid() const noexcept { return open_at_gtid_; }

 private:
  void start(std::int64_t ts);
  TransactionState st_;
  bool close_after_ = false;
  bool open_at_gtid_ = false;
  bool implicit_ = false;  // started by a rows event without GTID or BEGIN
};

// "YYYY-MM-DD HH:MM:SS" of a UTC time in seconds since the epoch, appended to out.
void append_utc_datetime(std::string& out, std::int64_t seconds);

}  // namespace binlogctl
