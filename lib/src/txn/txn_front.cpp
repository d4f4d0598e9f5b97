// The row-change consumers' shared front half (txn_front.h).
#include <binlogctl/txn_front.h>

namespace binlogctl {

const TransactionFront::Step& TransactionFront::begin(const Event& ev, Hooks& hooks) {
  step_.damaged = ev.damage.has_value();
  step_.hole_bytes = ev.skipped_before;
  begun_ = !step_.damaged;
  if (step_.damaged) {
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
  if (!tracker_.begin_event(ev, sql)) hooks.gtid_undecodable(ev);
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

}  // namespace binlogctl
