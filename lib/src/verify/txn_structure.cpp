// TxnStructure: the transactions of binlogctl verify (txn_structure.h).
#include "verify/txn_structure.h"

#include <binlogctl/statement_kind.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <string_view>

#include "events/events.h"

namespace binlogctl::verify {

namespace {

std::string utc_time(std::uint32_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", tm);
}

}  // namespace

void TxnStructure::structure(const Event& ev, std::string msg) {
  if (txn_.active && (txn_.reported || txn_.damaged)) return;
  if (txn_.active) txn_.reported = true;
  ctx_.emit(Check::transaction_structure, Severity::error, VerifyContext::where(ev),
            VerifyContext::inner_prefix(ev) + msg);
}

void TxnStructure::start_txn(const Event& ev) {
  txn_ = Txn{};
  txn_.active = true;
  txn_.id = next_txn_id_++;
  txn_.start_pos = VerifyContext::where(ev);
  table_ids_.clear();
  ++ctx_.sum().transactions;
  if (ctx_.sum().first_transaction_id == 0) ctx_.sum().first_transaction_id = txn_.id;
  ctx_.sum().last_transaction_id = txn_.id;
}

void TxnStructure::end_txn(const Event* ev) {
  // an incident commits nothing
  const std::uint32_t ts =
      ev == nullptr || ev->type() == EventType::incident ? 0 : ev->header.timestamp;
  if (ts != 0 && !txn_.damaged) {
    if (has_commit_clock_ &&
        static_cast<std::uint64_t>(ts) + timestamp_threshold_ < commit_clock_) {
      ctx_.emit(Check::timestamp_regression, Severity::warning, VerifyContext::where(*ev),
                fmt::format("{}transaction #{} commits at {} ({}), {} s before an earlier "
                            "transaction's commit at {} ({})",
                            VerifyContext::inner_prefix(*ev), txn_.id, utc_time(ts), ts,
                            commit_clock_ - ts, utc_time(commit_clock_), commit_clock_));
    }
    if (!has_commit_clock_ || ts > commit_clock_) commit_clock_ = ts;
    has_commit_clock_ = true;
  }
  if (txn_.gtid.has_mysql) {
    (void)ctx_.sum().gtid_state.add(txn_.gtid.uuid, txn_.gtid.tag, txn_.gtid.gno);
    (void)ctx_.sum().gtid_executed.add(txn_.gtid.uuid, txn_.gtid.tag, txn_.gtid.gno);
  }
  if (txn_.gtid.has_maria) {
    ctx_.sum().mariadb_gtid_state.update(txn_.gtid.maria);
    ctx_.sum().mariadb_gtid_executed.update(txn_.gtid.maria);
  }
  txn_.gtid.has_mysql = txn_.gtid.has_maria = false;
  txn_.active = false;
  table_ids_.clear();
}

void TxnStructure::report_ts_regression(const Event& ev) {
  const std::uint32_t ts = ev.header.timestamp;
  ctx_.emit(Check::timestamp_regression, Severity::warning, VerifyContext::where(ev),
            fmt::format("{}{} at {} ({}) is {} s before an earlier event of transaction #{} ({})",
                        VerifyContext::inner_prefix(ev), event_type_constant(ev.type_code()),
                        utc_time(ts), ts, txn_.last_ts - ts, txn_.id, utc_time(txn_.last_ts)));
}

void TxnStructure::started(const Event& ev, Start how) {
  const bool dmg = damage_since_gtid_;
  start_txn(ev);
  if (how == Start::begin || how == Start::statement || how == Start::implicit_rows) return;
  // An event that only makes sense inside a transaction: the transaction lost its BEGIN.
  if (dmg) {
    txn_.damaged = true;
    return;
  }
  structure(
      ev, fmt::format(
              "{} outside a transaction (no BEGIN or GTID before it); transaction #{} starts here",
              event_type_constant(ev.type_code()), txn_.id));
}

void TxnStructure::abandoned(const Event& ev) {
  const std::string why =
      ev.type() == EventType::query || ev.type() == EventType::mariadb_query_compressed
          ? fmt::format("a BEGIN at {} starts another one", VerifyContext::where(ev))
          : fmt::format("the {} at {} starts the next one", event_type_constant(ev.type_code()),
                        VerifyContext::where(ev));
  if (txn_.only_gtid) {
    structure(ev,
              fmt::format("the GTID at {} (transaction #{}) is not followed by its transaction: {}",
                          txn_.start_pos, txn_.id, why));
  } else {
    structure(ev, fmt::format("transaction #{} begun at {} has no COMMIT/XID: {}", txn_.id,
                              txn_.start_pos, why));
  }
  txn_.active = false;
  table_ids_.clear();
}

std::uint64_t TxnStructure::read_table_id(const Event& ev, std::uint16_t* flags) const {
  ByteReader r = ev.body_reader();
  const std::uint8_t ph = ev.fde->post_header(ev.type_code());
  const std::uint64_t id = ph == 6 ? r.le_n(4) : r.le_n(6);
  const std::uint16_t f = r.u16();
  if (flags != nullptr) *flags = f;
  return r.ok() ? id : ~0ull;
}

void TxnStructure::started_gtid(const Event& ev, const Result<GtidLog>& g) {
  const bool had_damage = damage_since_gtid_;
  start_txn(ev);
  txn_.only_gtid = true;
  if (ev.type() != EventType::anonymous_gtid) {  // an anonymous one has no GTID to account for
    if (!g) {
      ctx_.decode_failed(ev, g.error());
      return;
    }
    gtids_.mysql_gtid(ev, g->uuid, g->tag, g->gno, had_damage, txn_.id, txn_.gtid);
  }
  damage_since_gtid_ = false;
}

void TxnStructure::started_mariadb_gtid(const Event& ev, const Result<MariaGtidEvent>& g) {
  const bool had_damage = damage_since_gtid_;
  start_txn(ev);
  txn_.only_gtid = true;
  if (!g) {
    ctx_.decode_failed(ev, g.error());
    return;
  }
  gtids_.mariadb_gtid(ev, g->gtid(ev.header.server_id), had_damage, txn_.id, txn_.gtid);
  damage_since_gtid_ = false;
}

void TxnStructure::on_query(const Event& ev) {
  // The statement as every consumer decodes it (MariaDB's QUERY_COMPRESSED inflated); one that
  // does not decode is reported and counts as a statement.
  auto q = decode_statement(ev, scratch_);
  query_kind_ = StatementKind::other;
  std::string_view sql;
  if (!q) {
    ctx_.decode_failed(ev, q.error());
  } else {
    sql = q->sql;
    query_kind_ = classify_statement(sql);
  }
  tracker_.begin_event(ev, sql, query_kind_);
  if (txn_.active) txn_.only_gtid = false;
  if (query_kind_ == StatementKind::begin || query_kind_ == StatementKind::xa_start)
    txn_.begin_end = ev.is_inner() ? 0 : ev.pos + ev.header.event_size;
  note_ts(ev);
  tracker_.end_event();
}

std::string_view TxnStructure::end_name(const Event& ev) const {
  if (ev.type() == EventType::xid || ev.type() == EventType::xa_prepare)
    return event_type_constant(ev.type_code());
  if (ev.type() != EventType::query && ev.type() != EventType::mariadb_query_compressed) return {};
  if (query_kind_ == StatementKind::commit) return "COMMIT";
  if (query_kind_ == StatementKind::rollback) return "ROLLBACK";
  return {};
}

void TxnStructure::ended(const Event& ev) {
  const std::string_view what = end_name(ev);
  if (!what.empty()) {
    if (!tracker_.state().begun)
      structure(ev, fmt::format("{} right after the GTID of transaction #{} at {}, without BEGIN",
                                what, txn_.id, txn_.start_pos));
  } else if (!is_rows_event(ev.type_code()) && ev.type() != EventType::incident) {
    after_standalone_ = true;  // a statement that was its own transaction
  }
  end_txn(&ev);
}

void TxnStructure::end_outside(const Event& ev) {
  // MySQL 5.0 wrote an autocommitted statement as `statement; XID`, without BEGIN.
  const bool xid = ev.type() == EventType::xid || ev.type() == EventType::xa_prepare;
  if (xid && after_standalone_ && ev.fde->mysql_before_5_5()) {
    after_standalone_ = false;
    return;
  }
  if (!damage_since_gtid_) {
    ctx_.emit(Check::transaction_structure, Severity::error, VerifyContext::where(ev),
              fmt::format("{}{} without BEGIN", VerifyContext::inner_prefix(ev), end_name(ev)));
  }
}

void TxnStructure::on_table_map(const Event& ev) {
  tracker_.begin_event(ev);
  txn_.only_gtid = false;
  note_ts(ev);
  const std::uint64_t id = read_table_id(ev, nullptr);
  if (std::find(table_ids_.begin(), table_ids_.end(), id) == table_ids_.end())
    table_ids_.push_back(id);
  tracker_.end_event();
}

void TxnStructure::on_rows(const Event& ev) {
  tracker_.begin_rows_event(ev);
  txn_.only_gtid = false;
  note_ts(ev);
  const std::uint8_t t = ev.type_code();
  const std::optional<RowsEventKind> kind = classify_rows_event(t);
  const bool pre_ga = kind && kind->version == 0;  // 5.1 pre-GA rows events: no table map rule
  std::uint16_t flags = 0;
  const std::uint64_t id = read_table_id(ev, &flags);
  const bool dummy = id == 0xffffffull || id == 0xffffffffffffull;
  if (!pre_ga && !dummy &&
      std::find(table_ids_.begin(), table_ids_.end(), id) == table_ids_.end()) {
    structure(
        ev, fmt::format(
                "{} for table_id {} without a TABLE_MAP for it in this statement (transaction #{})",
                event_type_constant(t), id, txn_.id));
  }
  if ((flags & kRowsStmtEnd) != 0) table_ids_.clear();
  tracker_.end_event();
}

void TxnStructure::report_open_txn(const Txn& t, const std::string& log_name,
                                   std::string_view what) {
  if (t.only_gtid) {
    ctx_.deliver(Diagnostic{
        Check::transaction_structure, Severity::error, log_name, t.start_pos,
        fmt::format(
            "the GTID of transaction #{} is not followed by its transaction: the file ends ({})",
            t.id, what)});
  } else {
    ctx_.deliver(Diagnostic{
        Check::transaction_structure, Severity::error, log_name, t.start_pos,
        fmt::format("transaction #{} begun here is still open at the file boundary (no COMMIT/XID "
                    "before {})",
                    t.id, what)});
  }
}

void TxnStructure::flush_open_tail(const std::string& log_name) {
  if (!open_tail_valid_) return;
  open_tail_valid_ = false;
  report_open_txn(open_tail_, log_name, "the end");
}

// The server crashed inside the transaction held at the end of the previous file. Its recovery
// counts only transactions whole in the binlog: this one's GTID goes to the next transaction
// (MariaDB's binlog state; MySQL's Previous_gtids alike), and its engines roll it back (they
// commit only after the binlog write, unless sync_binlog=0 lost the binlog's tail). Its GTID
// leaves the chain's bookkeeping. Returns what the server_crash finding says of it.
std::string TxnStructure::roll_back_open_tail() {
  if (!open_tail_valid_) return std::string();
  open_tail_valid_ = false;
  const Txn& t = open_tail_;
  const std::string gtid = gtids_.roll_back(t.gtid, t.id);
  return fmt::format(
      "; transaction #{}{} begun at {} has no COMMIT: cut off by the crash, it does not count as "
      "executed (the server gives its GTID to the next transaction) and was rolled back on "
      "restart, "
      "unless the engine had committed it already (possible only when sync_binlog=0 lost the "
      "file's "
      "tail: the server then holds changes that its binlog and its replicas lack)",
      t.id, gtid, t.start_pos);
}

void TxnStructure::end_file(const FileInfo& cur) {
  if (!txn_.active || cur.relay) return;
  if (!tracker_.open_beyond_payload()) {  // a TRANSACTION_PAYLOAD ended it, as the server has it
    end_txn(nullptr);
    return;
  }
  if (!txn_.damaged && !cur.damaged && !txn_.reported) {
    if (cur.end == FileEnd::none) {
      // Held until the next file shows whether its server crashed here (check_rotate): a
      // transaction a crash cut off was never committed; the server rolled it back.
      open_tail_ = txn_;
      open_tail_valid_ = true;
    } else {
      report_open_txn(txn_, cur.log_name, cur.end == FileEnd::rotate ? "ROTATE" : "STOP");
    }
  }
  txn_.active = false;
}

}  // namespace binlogctl::verify
