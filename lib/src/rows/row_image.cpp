// Row images -> JSON objects; rows event classification and v2 extra row info.
#include "rows/rows.h"

#include "columns/decode_value.h"
#include "columns/value_json.h"
#include "rows/row_cursor.h"

#include <array>
#include <bit>
#include <cstring>

namespace binlogctl {

const char* rows_kind_name(RowsKind k) noexcept {
  switch (k) {
    case RowsKind::insert: return "INSERT";
    case RowsKind::update: return "UPDATE";
    case RowsKind::delete_: return "DELETE";
  }
  return "UNKNOWN";
}

Result<RowsExtraInfo> decode_rows_extra(Bytes extra, std::uint64_t offset, RowsKind kind) {
  RowsExtraInfo x;
  ByteReader r(extra, offset);
  while (r.ok() && !r.empty()) {
    const std::uint8_t tag = r.u8();
    if (tag == 0) {  // NDB
      const std::uint64_t at = r.offset();
      const std::uint8_t len = r.u8();
      if (r.ok() && len < 2) return DecodeError{Errc::bad_length, at, "NDB extra row info length below 2"};
      const std::uint8_t format = r.u8();
      Bytes data = r.bytes(len - 2u);
      if (!r.ok()) break;
      if (!x.has_ndb) {  // the server uses the first entry of a type
        x.has_ndb = true;
        x.ndb_format = format;
        x.ndb_data = data;
      }
    } else if (tag == 1) {  // partition info
      x.has_partition = true;
      x.partition_id = r.u16();
      if (kind == RowsKind::update) {
        x.has_source_partition = true;
        x.source_partition_id = r.u16();
      }
    } else {
      break;  // unknown tag: its size is not known
    }
  }
  if (!r.ok()) return r.error();
  return x;
}

std::size_t count_bits(Bytes bitmap, std::uint64_t n) noexcept { return count_bits_inline(bitmap, n); }


JsonRowPlan::JsonRowPlan(const TableMap& tm) {
  const std::size_t n = tm.columns.size();
  cols.assign(n, Column{});
  for (std::size_t i = 0; i < n && i < tm.infos.size(); ++i) cols[i].info = tm.infos[i];
  keys.assign(n, std::string());
  key_slots.assign((n + 1) * kKeySlot, '\0');
  key_slot_len.assign(n, 0);
  enum_json.assign(n, {});
  enum_json_views.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) {
    const ColumnDef& c = tm.columns[i];
    Column& pc = cols[i];
    const ColumnInfo& ci = pc.info;
    pc.temporal_size = fixed_temporal_size(ci.type, ci.meta);
    pc.text_prefix = utf8_text_prefix(ci);
    if (pc.temporal_size != 0) pc.fast = Column::Fast::temporal;
    if (pc.text_prefix != 0) pc.fast = Column::Fast::utf8_text;
    const bool is_enum = c.type == ColumnType::enum_ ||
                         (c.type == ColumnType::string && unpack_string_meta(c.meta).real_type == ColumnType::enum_);
    if (is_enum && !c.values.empty()) {
      auto& rendered = enum_json[i];
      rendered.reserve(c.values.size());
      for (const std::string& v : c.values) {
        rendered.emplace_back();
        append_text_json(rendered.back(), v, c.charset);
      }
      auto& views = enum_json_views[i];
      views.reserve(rendered.size());
      for (const std::string& v : rendered) views.emplace_back(v);
      pc.names_json = std::span<const std::string_view>(views.data(), views.size());
      pc.fast = Column::Fast::enum_name;
    }
    keys[i].push_back(',');
    append_json_string(keys[i], c.name);
    keys[i].push_back(':');
    if (keys[i].size() < kKeySlot) {
      keys[i].copy(key_slots.data() + i * kKeySlot, keys[i].size());
      key_slot_len[i] = static_cast<std::uint8_t>(keys[i].size());
    }
  }
}

const JsonRowPlan& RowImageDecoder::plan_slow(const TableMap& tm) {
  if (tm.serial == 0) {
    unfinalized_ = std::make_unique<JsonRowPlan>(tm);
    return *unfinalized_;
  }
  Recent& hot = recent_[tm.serial % kRecent];
  auto it = plans_.find(tm.serial);
  if (it == plans_.end()) {
    if (plan_columns_ + tm.columns.size() > kPlanColumns) {
      plans_.clear();
      plan_columns_ = 0;
      recent_.fill(Recent{});
    }
    it = plans_.emplace(tm.serial, std::make_unique<JsonRowPlan>(tm)).first;
    plan_columns_ += tm.columns.size();
  }
  hot = Recent{tm.serial, it->second.get()};
  return *hot.plan;
}

namespace {

// The plan's fast path for CHAR/VARCHAR text whose bytes go out as they are (ColumnInfo::
// text_prefix, UTF-8 compatible): the length prefix, then the bytes escaped. True when rendered;
// false leaves `r` where it was, for the general path (which also reports whatever is wrong).
[[gnu::always_inline]] inline bool append_utf8_text(std::size_t pb, ByteReader& r, RenderBuf& out) {
  const std::size_t rem = r.remaining();
  const std::uint8_t* p = r.data().data() + r.position();
  if (rem < pb) return false;
  const std::size_t len = pb == 1 ? p[0] : load_le16(p);
  if (len > rem - pb) return false;
  r.bytes(pb + len);  // first: nothing of `r` stays live across the call below
  out.push_back('"');
  append_json_escaped(out, std::string_view(reinterpret_cast<const char*>(p + pb), len));
  out.push_back('"');
  return true;
}

// The plan's fast path for an ENUM whose names it rendered (names_json): the 1 or 2-byte index
// picks one. True when rendered; false leaves `r` where it was, for the general path (the
// decoder, which also reports whatever is wrong; an index it does not cover renders there).
[[gnu::always_inline]] inline bool append_enum_name(const JsonRowPlan::Column& col, ByteReader& r, RenderBuf& out) {
  const std::size_t rem = r.remaining();
  const std::uint8_t* p = r.data().data() + r.position();
  const std::size_t size = col.info.meta & 0xff;
  if ((size != 1 && size != 2) || rem < size) return false;
  const std::uint64_t index = load_le(p, size);
  if (index < 1 || index > col.names_json.size()) return false;
  r.bytes(size);
  out.append(col.names_json[index - 1]);
  return true;
}

// One non-NULL value: decoded (the typed decoder, inline) into `cv`, then rendered from it.
[[gnu::always_inline]] inline Status decode_and_render(const ColumnInfo& ci, ByteReader& r, ColumnValue& cv,
                                                      RenderBuf& out, const RenderOptions& opts) {
  return value_detail::decode_value(ci, r, cv, kDecodeStrict, [&](const ColumnValue& v) __attribute__((always_inline)) {
    return value_detail::render_json(ci, v, out, opts);
  });
}

}  // namespace

// One non-NULL value of column i: the plan's fast paths (JsonRowPlan::Column::fast: UTF-8 text
// copied out, an ENUM's prepared name, the rendering of a fixed-size temporal remembered), else
// decoded and rendered. Like append_value_json without its cleanup: on an error the caller drops
// the whole record, and it checks the reader once per image.
[[gnu::always_inline]] inline Status RowImageDecoder::value(const JsonRowPlan::Column& c, std::size_t i, ByteReader& r,
                                                           RenderBuf& out, const RenderOptions& opts) {
  using Fast = JsonRowPlan::Column::Fast;
  if (const Fast fast = c.fast; fast != Fast::none) {  // most values take none
    if (fast == Fast::utf8_text) {
      if (append_utf8_text(c.text_prefix, r, out)) return {};
    } else if (fast == Fast::enum_name) {
      if (append_enum_name(c, r, out)) return {};
    } else if (const std::size_t ms = c.temporal_size; r.remaining() >= ms) {
      return memo_value(c.info, i, ms, r, out, opts);
    }
  }
  return decode_and_render(c.info, r, cv_, out, opts);
}

// A value of a fixed-size temporal type (`ms` bytes, all there): the rendering remembered for
// the column's last raw bytes (rows of a statement often share one: NOW(), a batch load).
[[gnu::always_inline]] inline Status RowImageDecoder::memo_value(const ColumnInfo& ci, std::size_t i, std::size_t ms,
                                                                ByteReader& r, RenderBuf& out, const RenderOptions& opts) {
  Memo& m = memo_[i];
  const std::uint64_t raw = load_le(r.data().data() + r.position(), ms);
  const std::uint32_t memo_key = static_cast<std::uint32_t>(ci.type) << 16 | ci.meta;
  if (m.size == ms && m.raw == raw && m.key == memo_key && m.tz == opts.tz_offset_seconds) {
    out.append(m.text, m.len);
    r.bytes(ms);
    return {};
  }
  const std::size_t begin = out.size();
  Status st = decode_and_render(ci, r, cv_, out, opts);
  if (!st.ok()) return st;
  const std::size_t len = out.size() - begin;
  if (len > sizeof m.text || !r.ok()) {
    m.size = 0;
    return {};
  }
  std::memcpy(m.text, out.data() + begin, len);
  m.len = static_cast<std::uint8_t>(len);
  m.raw = raw;
  m.key = memo_key;
  m.tz = opts.tz_offset_seconds;
  m.size = static_cast<std::uint8_t>(ms);
  return {};
}

Status RowImageDecoder::decode(const TableMap& tm, const JsonRowPlan& jp, std::uint64_t width, Bytes present, ImageRole role,
                               bool partial, ByteReader& r, RenderBuf& out, const RenderOptions& opts) {
  const std::uint64_t image_at = r.offset();
  if (width > tm.columns.size())
    return DecodeError{Errc::bad_value, image_at, "rows event has more columns than its TABLE_MAP"};
  const auto n = static_cast<std::size_t>(width);
  const bool partial_after = partial && role == ImageRole::after;
  // Where each before-image value lies in `out`: only a partial JSON after image needs them.
  const bool track = role == ImageRole::before && tm.json_columns > 0;
  if (!partial_after && !track) {
    RowImageCursor cur;
    if (Status st = cur.open(tm, width, present, false, r); !st.ok()) return st;
    if (role == ImageRole::before) {
      span_begin_.clear();
      span_end_.clear();
    }
    if (memo_.size() < n) memo_.resize(n);
    out.push_back('{');
    bool first = true;
    const JsonRowPlan::Column* cols = jp.cols.data();
    const std::string* keys = jp.keys.data();
    const char* slots = jp.key_slots.data();  // (n + 1) slots: reading one past a key stays inside
    const std::uint8_t* slot_len = jp.key_slot_len.data();
    Status err;
    // The common case, without the partial JSON bookkeeping.
    cur.for_each_present<false>([&](std::size_t i, CellKind kind) __attribute__((always_inline)) {
      const std::size_t skip = first ? 1 : 0;  // keys carry the comma that separates them
      first = false;
      if (const std::size_t len = slot_len[i]; len != 0) {  // one fixed-size copy
        char* p = out.tail(JsonRowPlan::kKeySlot);
        std::memcpy(p, slots + i * JsonRowPlan::kKeySlot + skip, JsonRowPlan::kKeySlot);
        out.advance(len - skip);
      } else {
        out.append(keys[i].data() + skip, keys[i].size() - skip);
      }
      if (kind == CellKind::null) {
        out.append("null", 4);
        return true;
      }
      Status st = value(cols[i], i, r, out, opts);
      if (!st.ok()) {
        err = st;
        return false;
      }
      return true;
    });
    if (!err.ok()) return err;
    if (!r.ok()) return r.error();
    out.push_back('}');
    return {};
  }
  return decode_tracked(tm, jp, width, present, partial_after, track, r, out, opts);
}

// The image of a PARTIAL_UPDATE_ROWS after image, or a before image whose values' spans are kept
// (`track`): out of line, so that decode's common walk stays as it is (one copy of the value's
// code there, which g++ inlines the way it does without this one).
[[gnu::noinline]] Status RowImageDecoder::decode_tracked(const TableMap& tm, const JsonRowPlan& jp, std::uint64_t width,
                                                         Bytes present, bool partial_after, bool track, ByteReader& r,
                                                         RenderBuf& out, const RenderOptions& opts) {
  RowImageCursor cur;
  if (partial_after) diffs_.clear();
  if (Status st = cur.open(tm, width, present, partial_after, r); !st.ok()) return st;
  const std::size_t n = cur.width();
  if (track) {
    span_begin_.assign(n, kNoSpan);
    span_end_.assign(n, kNoSpan);
  }
  if (memo_.size() < n) memo_.resize(n);
  out.push_back('{');
  bool first = true;
  Status err;
  cur.for_each_present([&](std::size_t i, CellKind kind) {
    const JsonRowPlan::Column& pc = jp.cols[i];
    if (kind == CellKind::partial) {
      // The column's length (meta bytes), then the diffs.
      Bytes diffs;
      std::uint64_t diffs_at = 0;
      err = RowImageCursor::read_partial(r, pc.info.meta, diffs, diffs_at);
      if (!err.ok()) return false;
      diffs_.push_back(diffs_.empty() ? '{' : ',');
      append_json_string(diffs_, tm.columns[i].name);
      diffs_.push_back(':');
      err = append_json_diffs_json(diffs_, diffs, diffs_at);
      if (!err.ok()) return false;
      const bool have_before = i < span_begin_.size() && span_begin_[i] != kNoSpan;
      if (have_before) {
        const std::string_view before(out.data() + span_begin_[i], span_end_[i] - span_begin_[i]);
        if (before != "null") {
          doc_.clear();
          err = apply_json_diffs(before, diffs, diffs_at, doc_);
          if (!err.ok()) return false;
          const std::string& key = jp.keys[i];
          out.append(key.data() + (first ? 1 : 0), key.size() - (first ? 1 : 0));
          first = false;
          out.append(doc_.view());
        }
      }
      return true;  // without a before image the new document is not known: absent
    }
    const std::string& key = jp.keys[i];  // ,"name":
    out.append(key.data() + (first ? 1 : 0), key.size() - (first ? 1 : 0));
    first = false;
    const std::size_t begin = out.size();
    if (kind == CellKind::null) {
      out.append("null", 4);
    } else {
      err = value(pc, i, r, out, opts);
      if (!err.ok()) return false;
      if (!r.ok()) {
        err = r.error();
        return false;
      }
    }
    if (track) {
      span_begin_[i] = begin;
      span_end_[i] = out.size();
    }
    return true;
  });
  if (!err.ok()) return err;
  out.push_back('}');
  if (partial_after && !diffs_.empty()) diffs_.push_back('}');
  return {};
}

}  // namespace binlogctl
