// mysqlbinlog's -d/--database for event listings (selection.h).
#include <binlogctl/event_type.h>
#include <binlogctl/selection.h>
#include <binlogctl/statement_kind.h>

#include "events/events.h"

#include <algorithm>

namespace binlogctl {

bool DatabaseFilter::keep(const Event& ev) {
  switch (ev.type()) {
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      auto q = decode_statement(ev, sql_buf_);
      if (!q) return true;  // shown as undecodable, not hidden
      switch (classify_statement(q->sql)) {
        case StatementKind::ddl:
        case StatementKind::other:
          if (q->db != db_) return false;
          matched_ = true;
          return true;
        default:
          return true;  // transaction structure
      }
    }
    case EventType::table_map: {
      auto t = decode_table_map(ev.body_reader(), *ev.fde);
      if (!t) return true;
      if (t->db == db_) {
        matched_ = true;
        std::erase(skipped_tables_, t->table_id);
        return true;
      }
      if (std::find(skipped_tables_.begin(), skipped_tables_.end(), t->table_id) == skipped_tables_.end())
        skipped_tables_.push_back(t->table_id);
      return false;
    }
    default:
      break;
  }
  if (!is_rows_event(ev.type_code()) || skipped_tables_.empty()) return true;
  auto h = decode_rows_header(ev.body_reader(), *ev.fde, ev.type_code());
  if (!h) return true;
  return std::find(skipped_tables_.begin(), skipped_tables_.end(), h->table_id) == skipped_tables_.end();
}

}  // namespace binlogctl
