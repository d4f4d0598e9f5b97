// CanalRowsWorker and CanalRender (canal_rows.h).
#include "canal/canal_rows.h"

#include "rows/row_cursor.h"

#include <fmt/format.h>

#include "EntryProtocol.pb.h"

namespace binlogctl::canal_detail {

void CanalRowsWorker::render(CanalBatch& b, CanalJob& j, bool json, const TimeZone& tz) {
  const TableMap& tm = *j.map;
  const TablePlan& plan = *j.plan;
  const std::size_t out_at = b.out.size();
  j.row_logs_at = b.row_logs.size();
  const int et = j.kind == RowsKind::insert   ? canalpb::INSERT
                 : j.kind == RowsKind::update ? canalpb::UPDATE
                                              : canalpb::DELETE;
  if (!json) {
    // RowChange{tableId, eventType, isDdl = false, rowDatas...}, encoded as the rows decode.
    if (j.table_id != 0) {
      b.out.push_back(0x08);
      char buf[10];
      b.out.append(buf, static_cast<std::size_t>(put_varint(buf, j.table_id) - buf));
    }
    b.out.push_back(0x10);
    char buf[10];
    b.out.append(buf, static_cast<std::size_t>(put_varint(buf, static_cast<std::uint64_t>(et)) - buf));
    b.out.append("\x50\x00", 2);
  } else {
    b.out.append("{\"data\":[", 9);
    flat_rows_.begin(&b.out);
  }
  const Bytes present_before = b.bytes(j.present_before), present_after = b.bytes(j.present_after);
  std::size_t n_rows = 0;
  const std::size_t n_before = count_bits(present_before, j.width);
  const std::size_t n_after = j.kind == RowsKind::update ? count_bits(present_after, j.width) : 0;
  ByteReader r(b.bytes(j.images), j.rows_offset);
  Status st;
  if (!json && pb_before_.size() < tm.columns.size()) pb_before_.resize(tm.columns.size());
  while (r.ok() && !r.empty()) {
    ++row_stamp_;
    const std::size_t row_at = r.position();
    if (json) {
      if (j.kind == RowsKind::insert) {
        before_.clear();
        st = image<false>(tm, plan, j.width, present_before, n_before, false, r, Target{&after_}, false, tz);
        // INSERT: after columns; `updated` is Canal's isUpdate against no before image (true).
        for (Cell& c : after_) c.updated = true;
      } else {
        after_.clear();
        st = image<false>(tm, plan, j.width, present_before, n_before, false, r, Target{&before_}, false, tz);
        if (st.ok() && j.kind == RowsKind::update) {
          index_before(tm.columns.size());
          st = image<false>(tm, plan, j.width, present_after, n_after, j.partial_json, r, Target{&after_}, true,
                            tz);
        }
      }
    } else {
      const std::size_t rd_at = b.out.size();
      b.out.extend(kRowDataHead);
      if (j.kind == RowsKind::insert) {
        const Target t{nullptr, &b.out, &b.row_logs, 0x12, true, false};
        st = image<true>(tm, plan, j.width, present_before, n_before, false, r, t, false, tz);
      } else {
        const bool update = j.kind == RowsKind::update;
        st = image<true>(tm, plan, j.width, present_before, n_before, false, r,
                         Target{nullptr, &b.out, &b.row_logs, 0x0a, false, update}, false, tz);
        if (st.ok() && update)
          st = image<true>(tm, plan, j.width, present_after, n_after, j.partial_json, r,
                           Target{nullptr, &b.out, &b.row_logs, 0x12, false, false}, true, tz);
      }
      if (st.ok()) close_row_data(b.out, rd_at);
    }
    if (st.ok() && r.position() == row_at)  // the bytes after it could never be consumed
      st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
    if (!st.ok()) break;
    if (json) flat_rows_.row(plan, j.kind, before_, after_, n_rows == 0);
    ++n_rows;
  }
  if (st.ok() && !r.ok()) st = r.error();
  if (!st.ok()) {
    const DecodeError& e = st.error();
    b.out.truncate(out_at);
    b.row_logs.resize(j.row_logs_at);
    j.diag = static_cast<std::ptrdiff_t>(b.diags.size());
    b.diags.push_back(Diagnostic{Check::undecodable_event, Severity::error, std::string(b.view(j.log_name)), j.pos,
                                 fmt::format("{} event does not decode: {} at offset {}", j.event_name, e.what, e.offset)});
    return;
  }
  j.row_logs_end = b.row_logs.size();
  if (json) {
    if (flat_rows_.wrote_data()) {
      b.out.push_back(']');
    } else {
      b.out.truncate(out_at + 8);  // {"data":
      b.out.append("null", 4);
    }
    const FlatEntry f{false, std::string_view(), et, &flat_rows_, &plan};
    const std::size_t id_at =
        flat_message(b.out, j.es, b.view(j.schema), b.view(j.table), b.view(j.gtid), f, true);
    j.out_a = Span{out_at, id_at - out_at};
    j.out_b = Span{id_at, b.out.size() - id_at};
    return;
  }
  // The header: the mapper's, with rowsCount between its parts.
  const std::size_t header_at = b.out.size();
  b.out.append(b.view(j.a));
  if (n_rows > 0) {
    using W = canal_detail::WireWriter;
    count_text_.clear();
    append_u64(count_text_, n_rows);
    W w{b.out.extend(W::pair_bound(9, count_text_.size()))};
    w.pair(12, "rowsCount", count_text_);
    b.out.truncate(static_cast<std::size_t>(w.p - b.out.data()));
  }
  b.out.append(b.view(j.b));
  j.out_a = Span{header_at, b.out.size() - header_at};
  j.out_b = Span{out_at, header_at - out_at};
}

inline void CanalRowsWorker::index_before(std::size_t width) {
  if (before_stamp_.size() < width) {
    before_stamp_.resize(width, 0);
    before_pos_.resize(width, 0);
  }
  for (std::size_t k = 0; k < before_.size(); ++k) {
    before_stamp_[before_[k].index] = row_stamp_;
    before_pos_[before_[k].index] = static_cast<std::uint32_t>(k);
  }
}

template <bool kProto>
inline bool CanalRowsWorker::before_value(std::size_t i, const Target& t, bool& is_null, std::string_view& value) const {
  if constexpr (kProto) {
    if (i >= pb_before_.size() || pb_before_[i].stamp != row_stamp_) return false;
    const BeforeValue& bv = pb_before_[i];
    is_null = bv.is_null;
    value = std::string_view(t.out->data() + bv.at, bv.len);
  } else {
    const Cell* b = before_cell(i);
    if (b == nullptr) return false;
    is_null = b->v.is_null;
    value = b->v.text();
  }
  return true;
}

template <bool kProto>
inline Status CanalRowsWorker::image(const TableMap& tm, const TablePlan& plan, std::uint64_t width,
                                     Bytes present, std::size_t n_present, bool partial, ByteReader& r,
                                     const Target& t, bool with_before, const TimeZone& tz) {
  if constexpr (!kProto) t.cells->clear();
  // The row bytes cannot be read column by column with a table that has fewer columns: the
  // cursor says so.
  RowImageCursor cur;
  if (Status st = cur.open(tm, width, present, n_present, partial, r); !st.ok()) return st;
  if (cur.partial_updates()) [[unlikely]]
    return partial_cells<kProto>(tm, plan, cur, r, t, with_before, tz);
  return cells<kProto, false>(tm, plan, cur, r, t, with_before, tz);
}

template <bool kProto>
[[gnu::noinline]] Status CanalRowsWorker::partial_cells(const TableMap& tm, const TablePlan& plan, RowImageCursor& cur,
                                                        ByteReader& r, const Target& t, bool with_before,
                                                        const TimeZone& tz) {
  return cells<kProto, true>(tm, plan, cur, r, t, with_before, tz);
}

template <bool kProto, bool kPartial>
[[gnu::always_inline]] inline Status CanalRowsWorker::cells(const TableMap& tm, const TablePlan& plan,
                                                            RowImageCursor& cur, ByteReader& r, const Target& t,
                                                            bool with_before, const TimeZone& tz) {
  // The tables' arrays, held in locals: the compiler would reload them from their vectors after
  // every write through a char pointer.
  const ColumnDef* const defs = tm.columns.data();
  const ColumnInfo* const infos = tm.infos.data();
  const ColumnPlan* const cplans = plan.cols.data();
  Status err;
  cur.for_each_present<kPartial>([&](std::size_t i, CellKind kind) __attribute__((always_inline)) {
    const ColumnDef& cd = defs[i];
    Cell* c = nullptr;
    if constexpr (!kProto) {
      c = &t.cells->push();
      c->index = static_cast<std::uint32_t>(i);
      c->updated = false;
    }
    CanalValue& v = kProto ? pb_value_ : c->v;
    if (kind == CellKind::null) {
      v.is_null = true;
      v.sql_type = cplans[i].value.null_sql_type;
      v.long_text();
    } else if (kPartial && kind == CellKind::partial) {
      // A partial JSON update: length-prefixed diffs (sized, not decoded: no value here).
      const std::uint64_t at = r.offset();
      auto sz = column_value_size(cd.type, cd.meta, r);
      if (!sz) {
        err = sz.error();
        return false;
      }
      Bytes raw = r.bytes(*sz);
      if (!r.ok()) {
        err = r.error();
        return false;
      }
      // The full document: the diffs applied to the before image's value.
      bool before_null = true;
      std::string_view before_doc;
      if (!with_before || !before_value<kProto>(i, t, before_null, before_doc) || before_null) {
        // No document to apply the diffs to (MINIMAL before image): left out, as convert
        // --format json leaves it out of "after".
        if constexpr (!kProto) t.cells->pop();
        return true;
      }
      const std::size_t lp = cd.meta;
      doc_.clear();
      err = apply_json_diffs(before_doc, raw.subspan(lp), at + lp, doc_);
      if (!err.ok()) return false;
      v.is_null = false;
      v.plain = false;
      v.long_text().swap(doc_);
      v.sql_type = 12;
    } else {
      Status st = canal_detail::read_value(cd, infos[i], cplans[i].value, r, tz, cv_, v);
      if (!st.ok()) {
        err = st;
        return false;
      }
    }
    bool updated = t.all_updated;
    if (with_before) {
      // isUpdate: changed unless both null or equal strings; absent from the before image =
      // changed.
      bool before_null = false;
      std::string_view before_text;
      updated = !before_value<kProto>(i, t, before_null, before_text) || before_null != v.is_null ||
                (!v.is_null && !same_text(before_text, v.text()));
    }
    if constexpr (kProto) {
      const ColumnPlan& p = cplans[i];
      if (plan.check_utf8) {
        if (!p.name_ok) t.logs->emplace_back(p.name, "com.alibaba.otter.canal.protocol.Column.name");
        if (p.json && !v.text().empty() && !canal_detail::proto_utf8_valid(v.text()))
          t.logs->emplace_back(v.text(), "com.alibaba.otter.canal.protocol.Column.value");
        if (!p.type_ok)
          t.logs->emplace_back(p.mysql_type, "com.alibaba.otter.canal.protocol.Column.mysqlType");
      }
      const std::size_t value_at = put_column(*t.out, t.tag, static_cast<std::uint32_t>(i), p, v, updated);
      if (t.record_before) pb_before_[i] = BeforeValue{row_stamp_, v.is_null, value_at, v.text().size()};
    } else {
      c->updated = updated;
    }
    return true;
  });
  return err;
}

void CanalRender::render(Batch& b, Worker& w) const {
  for (CanalJob& j : b.jobs)
    if (j.rows) w.render(b, j, json, tz);
}

void CanalRender::write(Batch& b) const {
  for (const CanalJob& j : b.jobs) {
    if (j.diag >= 0) {
      diag.report(b.diags[static_cast<std::size_t>(j.diag)]);
      continue;
    }
    const std::uint64_t batch = sink.next_batch();
    if (!json) {
      for (std::size_t i = j.row_logs_at; i < j.row_logs_end; ++i)
        canal_detail::log_invalid_utf8(b.row_logs[i].first, b.row_logs[i].second);
      for (std::size_t i = j.logs_at; i < j.logs_end; ++i)
        canal_detail::log_invalid_utf8(b.logs[i].first, b.logs[i].second);
      if (j.rows) sink.entry(batch, b.rendered(j.out_a), j.entry_type, b.rendered(j.out_b), true);
      else sink.entry(batch, b.view(j.a), j.entry_type, b.view(j.b), true);
    } else if (j.rows || j.has_text) {
      sink.borrow(j.rows ? b.rendered(j.out_a) : b.view(j.a));
      append_dec(sink.text(), batch);
      sink.borrow(j.rows ? b.rendered(j.out_b) : b.view(j.b));
      sink.done();
    }
  }
  sink.release();  // the batch's bytes are reused next
}

}  // namespace binlogctl::canal_detail
