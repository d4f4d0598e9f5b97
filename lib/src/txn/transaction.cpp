// Transaction assembly (transaction.h).
#include <binlogctl/transaction.h>

#include "render/json_out.h"

#include <fmt/format.h>

#include <iterator>

#include "base/civil_date.h"

namespace binlogctl {


void TransactionTracker::start(std::int64_t ts) {
  ++st_.txn_id;
  st_.open = true;
  st_.begun = false;
  st_.has_gtid = false;
  st_.mysql_gtid = false;
  st_.anonymous = false;
  st_.tag.clear();
  st_.gno = 0;
  st_.gtid_text.clear();
  st_.xid.clear();
  st_.timestamp = ts;
  implicit_ = false;
}

void TransactionTracker::reset() {
  st_.open = false;
  close_after_ = false;
  implicit_ = false;
  gtid_fresh_ = false;
  payload_open_ = false;
}

void TransactionTracker::payload_boundary(std::int64_t ts) {
  if (!st_.open) start(ts);
  payload_open_ = true;
  payload_txn_ = st_.txn_id;
}

void TransactionTracker::end_payload(const Event& ev) {
  // The first event after a TRANSACTION_PAYLOAD's inner events: the payload ended its
  // transaction.
  payload_open_ = false;
  if (!st_.open || st_.txn_id != payload_txn_) return;
  if (obs_ != nullptr) obs_->payload_ended(ev);
  st_.open = false;
  st_.begun = false;
  implicit_ = false;
}

void TransactionTracker::without_begin(const Event& ev) {
  start(static_cast<std::int64_t>(ev.header.timestamp));
  if ((is_rows_event(ev.type_code()) || ev.type() == EventType::table_map) && ev.fde->mysql_before_5_5()) {
    implicit_ = true;  // ends at STMT_END_F
    obs_->started(ev, Observer::Start::implicit_rows);
    return;
  }
  st_.begun = true;  // its BEGIN was lost: it ends at its COMMIT / XID
  obs_->started(ev, Observer::Start::without_begin);
}

void TransactionTracker::start_at_gtid(const Event& ev, std::int64_t ts) {
  if (payload_open_) end_payload(ev);
  open_at_gtid_ = st_.open;
  if (obs_ != nullptr && st_.open) obs_->abandoned(ev);
  start(ts);
  gtid_fresh_ = true;
}

bool TransactionTracker::step(const Event& ev, std::string_view sql, const StatementKind* kind) {
  close_after_ = false;
  open_at_gtid_ = false;
  current_ = &ev;
  const auto ts = static_cast<std::int64_t>(ev.header.timestamp);
  bool ok = true;
  switch (ev.type()) {
    case EventType::gtid:
    case EventType::anonymous_gtid:
    case EventType::gtid_tagged_log: {
      start_at_gtid(ev, ts);
      ByteReader r = ev.body_reader();
      Result<GtidLog> g = ev.type() == EventType::gtid_tagged_log ? decode_gtid_tagged_log(r) : decode_gtid_log(r);
      if (obs_ != nullptr) obs_->started_gtid(ev, g);
      if (!g) {
        ok = false;
        break;
      }
      if (g->has_timestamps && g->original_commit_timestamp != 0)
        st_.timestamp = static_cast<std::int64_t>(g->original_commit_timestamp / 1000000u);
      st_.anonymous = ev.type() == EventType::anonymous_gtid;
      if (ev.type() != EventType::anonymous_gtid && g->gno != 0) {
        st_.has_gtid = true;
        st_.mysql_gtid = true;
        st_.uuid = g->uuid;
        st_.tag.assign(g->tag);
        st_.gno = g->gno;
        if (obs_ != nullptr) break;  // no text for the observer
        static constexpr char kHex[] = "0123456789abcdef";
        for (std::size_t i = 0; i < 16; ++i) {
          if (i == 4 || i == 6 || i == 8 || i == 10) st_.gtid_text.push_back('-');
          st_.gtid_text.push_back(kHex[g->uuid.bytes[i] >> 4]);
          st_.gtid_text.push_back(kHex[g->uuid.bytes[i] & 0xf]);
        }
        st_.gtid_text.push_back(':');
        if (!st_.tag.empty()) {
          st_.gtid_text.append(st_.tag);
          st_.gtid_text.push_back(':');
        }
        append_u64(st_.gtid_text, g->gno);
      }
      break;
    }
    case EventType::mariadb_gtid: {
      start_at_gtid(ev, ts);
      ByteReader r = ev.body_reader();
      Result<MariaGtidEvent> g = decode_mariadb_gtid(r, ev.header.server_id);
      if (!g) {
        ok = false;
        if (obs_ != nullptr) obs_->started_mariadb_gtid(ev, g);
        break;
      }
      st_.has_gtid = true;
      st_.mariadb_gtid = g->gtid(ev.header.server_id);
      st_.begun = !g->standalone();
      if (obs_ != nullptr) {  // no text for the observer
        obs_->started_mariadb_gtid(ev, g);
        break;
      }
      append_u64(st_.gtid_text, g->domain);
      st_.gtid_text.push_back('-');
      append_u64(st_.gtid_text, ev.header.server_id);
      st_.gtid_text.push_back('-');
      append_u64(st_.gtid_text, g->seq);
      if ((g->flags2 & MariaGtidEvent::kFlPreparedXa) != 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        auto hex = [this](std::string_view b) {
          st_.xid.append("X'");
          for (unsigned char c : b) {
            st_.xid.push_back(kHex[c >> 4]);
            st_.xid.push_back(kHex[c & 0xf]);
          }
          st_.xid.push_back('\'');
        };
        hex(g->xa_gtrid);
        st_.xid.push_back(',');
        hex(g->xa_bqual);
        fmt::format_to(std::back_inserter(st_.xid), ",{}", g->xa_format_id);
      }
      break;
    }
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      if (payload_open_ && !ev.is_inner()) end_payload(ev);
      const bool after_gtid = gtid_fresh_;
      gtid_fresh_ = false;
      const StatementKind k = kind != nullptr ? *kind : classify_statement(sql);
      switch (k) {
        case StatementKind::begin:
        case StatementKind::xa_start:
          // A BEGIN inside a transaction that has its BEGIN (or began without one, with rows)
          // starts the next transaction; the open one never ends. A BEGIN right after a GTID is
          // that GTID's, even a MariaDB GTID's, which stands for BEGIN itself.
          if (!st_.open) {
            start_observed(ev, Observer::Start::begin);
          } else if ((st_.begun || implicit_) && !after_gtid) {
            if (obs_ != nullptr) obs_->abandoned(ev);
            start_observed(ev, Observer::Start::begin);
          }
          st_.begun = true;
          if (k == StatementKind::xa_start && obs_ == nullptr) st_.xid.assign(xa_statement_xid(sql));
          break;
        case StatementKind::commit:
        case StatementKind::rollback:
          close_after_ = st_.open;
          if (obs_ != nullptr && !st_.open) obs_->end_outside(ev);
          break;
        case StatementKind::savepoint:
        case StatementKind::xa_end:
        case StatementKind::xa_prepare:
        case StatementKind::xa_finish:
        case StatementKind::ddl:
        case StatementKind::other:
          statement(ev);
          break;
      }
      break;
    }
    case EventType::xid:
    case EventType::xa_prepare:
      close_after_ = st_.open;
      if (obs_ != nullptr && !st_.open) obs_->end_outside(ev);
      break;
    case EventType::delete_file:
      if (obs_ != nullptr) statement(ev);  // the observer's rules
      break;
    case EventType::execute_load_query:
    case EventType::load:
    case EventType::new_load:
    case EventType::exec_load:
      // LOAD DATA: the statement that loads the blocks sent before it.
      statement(ev);
      break;
    case EventType::begin_load_query:
    case EventType::append_block:
    case EventType::create_file:
      // LOAD DATA's file blocks belong to the statement that follows them.
      if (!st_.open && obs_ == nullptr) start(ts);
      break;
    case EventType::table_map:
    case EventType::rows_query:
    case EventType::mariadb_annotate_rows:
      gtid_fresh_ = false;
      // The start of a rows statement (its text, its tables) outside a transaction: a
      // transaction without BEGIN, which the statement's last rows event ends.
      if (!st_.open) {
        if (obs_ != nullptr) {
          without_begin(ev);
          break;
        }
        start(ts);
        implicit_ = true;
      }
      break;
    case EventType::transaction_context:
    case EventType::view_change:
      if (!st_.open && obs_ != nullptr) without_begin(ev);
      break;
    case EventType::transaction_payload:
      if (!st_.open) {
        start_observed(ev, Observer::Start::payload);
      }
      payload_boundary(ts);
      break;
    case EventType::incident:
      // An incident ends whatever transaction is open (with its own GTID: that one).
      close_after_ = st_.open;
      break;
    case EventType::format_description:  // the file's bookkeeping, outside any payload
    case EventType::rotate:
    case EventType::stop:
    case EventType::previous_gtids:
    case EventType::heartbeat:
    case EventType::heartbeat_v2:
    case EventType::mariadb_gtid_list:
    case EventType::mariadb_binlog_checkpoint:
      if (payload_open_) end_payload(ev);
      break;
    default: {
      const std::uint8_t t = ev.type_code();
      if (is_rows_event(t)) {
        if (!st_.open) {
          if (obs_ != nullptr) {
            without_begin(ev);
          } else {
            start(ts);
            implicit_ = true;
          }
        }
        if (implicit_ && !st_.begun) {
          ByteReader r = ev.body_reader();
          // flags follow the table id (6 bytes, or 4 in 5.1 pre-GA post-headers of 6 bytes)
          const std::uint8_t ph = ev.fde->post_header(t);
          r.skip(ph == 6 ? 4 : 6);
          const std::uint16_t flags = r.u16();
          if (r.ok() && (flags & 1u) != 0) close_after_ = true;  // STMT_END_F
        }
      }
      break;
    }
  }
  return ok;
}

void TransactionTracker::statement(const Event& ev) {
  if (!st_.open) {
    start_observed(ev, Observer::Start::statement);
    close_after_ = true;
  } else if (!st_.begun) {
    close_after_ = true;
  }
}

void TransactionTracker::close_now(const Event* ev) {
  if (obs_ != nullptr) obs_->ended(*ev);
  st_.open = false;
  st_.begun = false;
  implicit_ = false;
}

void append_utc_datetime(std::string& out, std::int64_t s) {
  const civil::DaySeconds t = civil::split_days(s);
  const std::int64_t rem = t.seconds;
  const civil::Date date = civil::from_days(t.days);
  const std::int64_t y = date.year;
  const unsigned m = date.month, d = date.day;
  if (y < 0 || y > 9999) {
    fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02} {:02}:{:02}:{:02}", y, m, d, rem / 3600,
                   (rem / 60) % 60, rem % 60);
    return;
  }
  char b[19] = {0, 0, 0, 0, '-', 0, 0, '-', 0, 0, ' ', 0, 0, ':', 0, 0, ':', 0, 0};
  format_fixed_digits(b, static_cast<std::uint64_t>(y), 4);
  format_fixed_digits(b + 5, m, 2);
  format_fixed_digits(b + 8, d, 2);
  format_fixed_digits(b + 11, static_cast<std::uint64_t>(rem / 3600), 2);
  format_fixed_digits(b + 14, static_cast<std::uint64_t>(rem / 60 % 60), 2);
  format_fixed_digits(b + 17, static_cast<std::uint64_t>(rem % 60), 2);
  out.append(b, sizeof b);
}

}  // namespace binlogctl
