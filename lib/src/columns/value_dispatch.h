// The type dispatch of append_value_json, inline for the row image loop (rows/row_image.cpp),
// which renders most values and needs neither the wrapper's cleanup nor its call.
#pragma once

#include <binlogctl/columns.h>

#include <cstring>

namespace binlogctl::value_detail {

[[gnu::always_inline]] inline Status append_integer(JsonBuf& out, ByteReader& r, std::size_t n, bool is_unsigned) {
  std::uint64_t v = r.le_n(n);
  if (!r.ok()) return r.error();
  if (is_unsigned) {
    append_u64(out, v);
    return {};
  }
  const unsigned shift = static_cast<unsigned>(64 - 8 * n);  // sign-extend n bytes
  append_i64(out, static_cast<std::int64_t>(v << shift) >> shift);
  return {};
}

inline Status append_bit(JsonBuf& out, ByteReader& r, std::uint16_t meta) {
  const std::uint64_t at = r.offset();
  const std::size_t bits = meta & 0xff, bytes = meta >> 8;
  const std::size_t n = bytes + (bits ? 1 : 0);
  if (bits > 7 || n > 8 || n == 0)
    return DecodeError{Errc::bad_value, at, "BIT metadata out of range"};
  std::uint64_t v = r.be_n(n);
  if (!r.ok()) return r.error();
  append_u64(out, v);
  return {};
}

// Columns a JsonRowPlan prepared (rows.h): text whose bytes go out as they are (text_prefix) and
// ENUMs whose names are rendered (names_json). True when the value was rendered; false leaves `r`
// where it was, for the general path (which also reports whatever is wrong).
[[gnu::always_inline]] inline bool append_prepared(const ColumnInfo& col, ByteReader& r, JsonBuf& out) {
  const std::size_t rem = r.remaining();
  const std::uint8_t* p = r.data().data() + r.position();
  if (const std::size_t pb = col.text_prefix; pb != 0) {
    if (rem < pb) return false;
    const std::size_t len = pb == 1 ? p[0] : load_le16(p);
    if (len > rem - pb) return false;
    out.push_back('"');
    append_json_escaped(out, std::string_view(reinterpret_cast<const char*>(p + pb), len));
    out.push_back('"');
    r.bytes(pb + len);
    return true;
  }
  if (!col.names_json.empty()) {  // the index picks a name
    const std::size_t size = col.meta & 0xff;
    if ((size != 1 && size != 2) || rem < size) return false;
    const std::uint64_t index = load_le(p, size);
    if (index < 1 || index > col.names_json.size()) return false;
    out.append(col.names_json[index - 1]);
    r.bytes(size);
    return true;
  }
  return false;
}

[[gnu::always_inline]] inline Status dispatch(const ColumnInfo& col, ByteReader& r, JsonBuf& out, const RenderOptions& opts) {
  const std::uint64_t at = r.offset();
  switch (col.type) {
    case ColumnType::tiny:
      return append_integer(out, r, 1, col.is_unsigned);
    case ColumnType::short_:
      return append_integer(out, r, 2, col.is_unsigned);
    case ColumnType::int24:
      return append_integer(out, r, 3, col.is_unsigned);
    case ColumnType::long_:
      return append_integer(out, r, 4, col.is_unsigned);
    case ColumnType::longlong:
      return append_integer(out, r, 8, col.is_unsigned);
    case ColumnType::float_: {
      std::uint32_t u = r.u32();
      if (!r.ok()) return r.error();
      float f = 0;
      std::memcpy(&f, &u, sizeof f);
      if (col.decimals >= 0)
        append_fixed_json(out, static_cast<double>(f), col.decimals);
      else
        append_float_json(out, f);
      return {};
    }
    case ColumnType::double_: {
      std::uint64_t u = r.u64();
      if (!r.ok()) return r.error();
      double d = 0;
      std::memcpy(&d, &u, sizeof d);
      if (col.decimals >= 0)
        append_fixed_json(out, d, col.decimals);
      else
        append_double_json(out, d);
      return {};
    }
    case ColumnType::year: {
      std::uint8_t y = r.u8();
      if (!r.ok()) return r.error();
      append_u64(out, y == 0 ? 0u : 1900u + y);
      return {};
    }
    case ColumnType::bit:
      return append_bit(out, r, col.meta);
    case ColumnType::null:
      out.append("null", 4);
      return {};
    case ColumnType::newdecimal: {
      out.push_back('"');
      Status st = append_decimal_text(out, col.meta >> 8, col.meta & 0xff, r);
      out.push_back('"');
      return st;
    }
    case ColumnType::decimal: {  // pre-5.0 DECIMAL: the number as text, space-padded on the left
      if (col.meta == 0)
        return DecodeError{Errc::bad_value, at, "old DECIMAL column without a known size"};
      std::string_view s = r.str(col.meta);
      if (!r.ok()) return r.error();
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
      append_json_string(out, s);
      return {};
    }
    case ColumnType::date:
    case ColumnType::newdate:
      return append_date_json(out, r);
    case ColumnType::time:  // meta = fsp of a MariaDB pre-10.0 high-precision column (schema)
      return col.meta == 0 ? append_time_json(out, r) : append_time_hires_json(out, r, col.meta);
    case ColumnType::datetime:
      return col.meta == 0 ? append_datetime_json(out, r) : append_datetime_hires_json(out, r, col.meta);
    case ColumnType::timestamp:
      return col.meta == 0 ? append_timestamp_json(out, r, false, 0, opts.tz_offset_seconds)
                           : append_timestamp_hires_json(out, r, col.meta, opts.tz_offset_seconds);
    case ColumnType::timestamp2:
      return append_timestamp_json(out, r, true, col.meta, opts.tz_offset_seconds);
    case ColumnType::datetime2:
      return append_datetime2_json(out, r, col.meta);
    case ColumnType::time2:
      return append_time2_json(out, r, col.meta);
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::string:
    case ColumnType::enum_:
    case ColumnType::set:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector:
      if (append_prepared(col, r, out)) return {};
      return append_string_family_json(col, r, out, opts);
    case ColumnType::typed_array:
    case ColumnType::invalid:
    case ColumnType::bool_:
      break;
  }
  return DecodeError{Errc::bad_value, at, "column type that cannot be decoded from a row event"};
}


}  // namespace binlogctl::value_detail
