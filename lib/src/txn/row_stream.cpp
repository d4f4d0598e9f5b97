// RowStream: transactions -> row changes for every row-change consumer (row_stream.h).
#include "row_stream.h"

#include <binlogctl/event_type.h>

#include <fmt/format.h>

namespace binlogctl {

void RowSink::missing_table_map(const Event& ev, const RowsEventHeader& h) {
  report(RowStream::missing_table_map_finding(ev, h, stream().log_name(), stream().mid_stream()));
}

RowStream::RowStream(Options opts, RowSink& sink)
    : opts_(std::move(opts)),
      sink_(sink),
      front_(opts_.include_gtids, opts_.exclude_gtids),
      loader_(tables_, schema_, opts_.err),
      database_(opts_.database) {
  if (opts_.schema) schema_ = *opts_.schema;
  if (opts_.track_schema_changes) schema_.track_changes(true);
  loader_.complete_from_schema(opts_.complete_maps);
  loader_.defer_warnings(&loader_notes_);
  sink_.stream_ = this;
}

Diagnostic RowStream::missing_table_map_finding(const Event& ev, const RowsEventHeader& h,
                                                const std::string& log_name, bool mid_stream) {
  return Diagnostic{Check::transaction_structure, mid_stream ? Severity::warning : Severity::error, log_name,
                    ev.is_inner() ? ev.payload_pos : ev.pos,
                    fmt::format("{} for table id {} without a TABLE_MAP before it",
                                event_type_constant(ev.type_code()), h.table_id)};
}

void RowStream::gtid_undecodable(const Event& ev) {
  sink_.report(TransactionFront::gtid_undecodable_finding(ev, file_.log_name));
}

void RowStream::open_at_gtid(const Event& ev) {
  sink_.report(TransactionFront::open_at_gtid_finding(ev, file_.log_name));
}

void RowStream::end_file(const InputFile* next) {
  if (!in_file_) return;
  // A transaction goes on in the next file only from a relay log (TransactionFront::new_file).
  const bool carried = next != nullptr && front_.carries_into(next->log_name);
  auto c = front_.cut_off(next != nullptr, opts_.stop_given, next != nullptr && next->after_unclosed, carried);
  sink_.end_file(c ? &*c : nullptr, next != nullptr);
  if (txn_open_ && !carried) {
    txn_open_ = false;
    sink_.transaction_end(nullptr, false);
  }
}

void RowStream::begin_file(const InputFile& f) {
  end_file(&f);
  file_ = f;
  in_file_ = true;
  front_.new_file(f.log_name);
  tables_.clear();
  warned_types_.clear();
  sink_.begin_file(file_);
}

void RowStream::finish() {
  end_file(nullptr);
  in_file_ = false;
}

void RowStream::event(const Event& ev) {
  const TransactionFront::Step& step = front_.begin(ev, *this);
  if (step.hole_bytes > 0) sink_.hole(ev, step.hole_bytes);
  if (step.damaged) {  // the damage policy: nothing of it is decoded or passed on
    sink_.damaged(ev);
    front_.end();
    return;
  }
  const TransactionState& ts = front_.state();
  if (ts.open && (!txn_open_ || txn_id_ != ts.txn_id)) {
    if (txn_open_) sink_.transaction_end(&ev, false);  // still open when the next one began
    txn_open_ = true;
    txn_id_ = ts.txn_id;
    sink_.transaction_begin(ev, ts, front_.selected());
  }
  sink_.event(ev, step);
  switch (ev.type()) {
    case EventType::format_description:
    case EventType::rotate:
      if (!ev.is_inner() && opts_.clear_maps_mid_file) {
        tables_.clear();
        sink_.tables_cleared();
      }
      break;
    case EventType::table_map:
      table_map(ev);
      break;
    case EventType::query:
    case EventType::mariadb_query_compressed:
      if (step.statement_ok) {
        // Schema history follows every DDL statement, whatever the selection passes on.
        if (step.kind == StatementKind::ddl && opts_.schema_history) schema_.apply(step.query.db, step.query.sql);
        sink_.statement(ev, step);
      }
      break;
    default:
      if (!opts_.row_events) break;
      if (auto k = classify_rows_event(ev.type_code())) rows(ev, *k);
      break;
  }
  front_.end();
  if (txn_open_ && !front_.state().open) {
    txn_open_ = false;
    sink_.transaction_end(&ev, true);
  }
  sink_.after_event(ev, step);
}

void RowStream::table_map(const Event& ev) {
  auto l = loader_.load(ev, file_.log_name, ev.is_inner() ? ev.payload_pos : ev.pos);
  if (!loader_notes_.empty()) {
    if (opts_.loader_notes) {
      sink_.before_stderr();
      std::fputs(loader_notes_.c_str(), opts_.err);
    }
    loader_notes_.clear();
  }
  if (!l) {
    sink_.undecodable(ev, "TABLE_MAP", l.error());
    return;
  }
  sink_.table_map(ev, *l);
}

// A server whose FDE gives this type code a post-header no rows event has (pre-release 5.2 builds
// numbered their events differently) does not mean a rows event by it: skipped, with a warning
// once per type code and file.
bool RowStream::rows_type_in_this_server(const Event& ev) {
  const std::uint8_t t = ev.type_code();
  if (t > ev.fde->n_post_headers) return true;  // not listed: the standard meaning
  const std::uint8_t ph = ev.fde->post_header(t);
  if (ph == 6 || ph == 8 || ph == 10) return true;
  if (opts_.warn_foreign_types && warned_types_.insert(t).second) {
    sink_.before_stderr();
    fmt::print(opts_.err,
               "binlogctl: {}:{}: warning: type code {} has a {}-byte post-header in this server's "
               "format description ({}): not a rows event here; such events are skipped\n",
               file_.log_name, ev.is_inner() ? ev.payload_pos : ev.pos, t, ph, ev.fde->server_version);
  }
  return false;
}

// Decided at the map's first rows event and kept on the map: a TABLE_MAP parsed anew (the id may
// name another table now) is a new map, undecided.
bool RowStream::table_selected(TableMap& tm) {
  if (tm.selected < 0)
    tm.selected = database_.selects(sink_.selection_db(tm)) &&
                  (opts_.filter == nullptr || opts_.filter->matches(tm.db, tm.table));
  return tm.selected != 0;
}

void RowStream::rows(const Event& ev, RowsEventKind kind) {
  if (!opts_.read_foreign_types && !rows_type_in_this_server(ev)) return;
  auto h = decode_rows_header(ev.body_reader(), *ev.fde, ev.type_code());
  if (!h) {
    sink_.undecodable(ev, event_type_constant(ev.type_code()), h.error());
    return;
  }
  const RowsEventHeader& header = *h;
  TableMap* tm = tables_.find(header.table_id);
  if (tm == nullptr) {
    if (header.table_id == 0xffffff || header.table_id == 0xffffffffffffULL)
      sink_.dummy_rows(ev, header);  // dummy event (no table)
    else
      sink_.missing_table_map(ev, header);
    return;
  }
  if (!front_.selected() || !table_selected(*tm)) return;
  RowsView v;
  v.ev = &ev;
  v.header = &header;
  v.map = tm;
  v.kind = kind;
  if (opts_.decode_extra && !header.extra.empty()) {
    const std::uint64_t extra_at =
        header.rows_offset - header.columns_before.size() - header.columns_after.size();
    auto x = decode_rows_extra(header.extra, extra_at, kind.kind);
    if (!x) {
      sink_.undecodable(ev, event_type_constant(ev.type_code()), x.error());
      return;
    }
    extra_ = *x;
    v.extra = &extra_;
  }
  v.rows = header.rows;
  v.rows_offset = header.rows_offset;
  if (kind.compressed && opts_.inflate_rows) {
    Status st = inflate(v);
    if (!st.ok()) {
      sink_.undecodable(ev, event_type_constant(ev.type_code()), st.error());
      return;
    }
  }
  sink_.rows(v);
}

Status RowStream::inflate(RowsView& v) {
  Status st = decompress_mariadb(v.rows, v.rows_offset, inflated_);
  if (st.ok()) v.rows = Bytes(reinterpret_cast<const std::uint8_t*>(inflated_.data()), inflated_.size());
  return st;
}

}  // namespace binlogctl
