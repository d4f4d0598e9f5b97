// The row-change consumers' shared front half (txn_front.h).
#include "txn_front.h"

namespace binlogctl {

const TransactionFront::Step& TransactionFront::begin(const Event& ev, Hooks& hooks) {
  if (!ev.is_inner()) {
    end_pos_ = ev.pos + ev.header.event_size;
    if (relay_.event(ev)) {
      fde_seen_ = true;
      file_in_use_ = (ev.header.flags & kFlagInUse) != 0;
    }
  }
  step_.damaged = ev.damage.has_value();
  step_.hole_bytes = ev.skipped_before;
  begun_ = !step_.damaged;
  if (step_.damaged) {
    if (ev.type() == EventType::transaction_payload && !ev.is_inner()) tracker_.damaged_payload();
    step_.is_statement = step_.statement_ok = false;
    return step_;
  }
  const EventType t = ev.type();
  step_.is_statement = t == EventType::query || t == EventType::mariadb_query_compressed;
  step_.statement_ok = false;
  std::string_view sql;
  if (step_.is_statement) {
    std::string_view layer;
    auto q = decode_statement(ev, sql_buf_, &layer);
    if (!q) {
      hooks.statement_undecodable(ev, layer, q.error());
    } else {
      step_.query = *q;
      step_.statement_ok = true;
      step_.kind = classify_statement(step_.query.sql);
      sql = step_.query.sql;
    }
  }
  // The statement's kind, classified once above, is the tracker's too.
  const bool gtid_ok = step_.statement_ok ? tracker_.begin_event(ev, sql, step_.kind) : tracker_.begin_event(ev, sql);
  if (!gtid_ok) hooks.gtid_undecodable(ev);
  if (tracker_.open_at_gtid()) hooks.open_at_gtid(ev);
  const TransactionState& ts = tracker_.state();
  if (ts.txn_id != selected_txn_) {
    selected_txn_ = ts.txn_id;
    selected_ = true;
    if (include_ != nullptr && !include_->contains(ts)) selected_ = false;
    if (exclude_ != nullptr && exclude_->contains(ts)) selected_ = false;
  }
  return step_;
}

std::string TransactionFront::CutOff::message() const {
  std::string m = "transaction " + std::to_string(txn_id);
  if (!gtid.empty()) m += " (GTID " + gtid + ")";
  if (crash) {
    m += " is cut off by a crash of its server: the file ends inside it without ROTATE or STOP and its server began "
         "the next file when it started again; it was never committed from the binlog, and the server's recovery "
         "rolled it back (unless sync_binlog=0 lost the file's tail after the engine had committed it: "
         "binlogctl-verify(1), server_crash)";
    return m;
  }
  m += " is cut off by the end of the file: no COMMIT or XID follows its events, so its changes were never committed";
  if (!error) m += " (the file is still open on its server, or the stop position or time fell inside it)";
  return m;
}

bool TransactionFront::carries_into(const std::string& next_log_name) const {
  if (!relay_.relay() || !tracker_.open_beyond_payload()) return false;
  const std::optional<std::uint64_t> a = numeric_suffix(log_name_), b = numeric_suffix(next_log_name);
  return a && b && *b == *a + 1 && base_name_of(log_name_) == base_name_of(next_log_name);
}

std::optional<TransactionFront::CutOff> TransactionFront::cut_off(bool more_files, bool stopped,
                                                                  bool next_after_unclosed, bool carried) const {
  const TransactionState& ts = tracker_.state();
  if (!tracker_.open_beyond_payload() || ts.txn_id == 0 || !selected_) return std::nullopt;
  if (carried) return std::nullopt;  // it goes on in the next relay log
  CutOff c;
  c.txn_id = ts.txn_id;
  c.gtid = ts.gtid_text;
  c.end_pos = end_pos_;
  c.crash = more_files && fde_seen_ && (file_in_use_ || next_after_unclosed);
  c.error = !c.crash && (more_files || (!stopped && fde_seen_ && !file_in_use_));
  return c;
}

}  // namespace binlogctl
