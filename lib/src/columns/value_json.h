// The JSON rendering of a decoded value (ColumnValue, column_value.h): the text column_json.h
// documents for append_value_json. Inline for the row image loop (rows/row_image.cpp), which
// decodes with value_detail::decode_value (decode_value.h) and renders here, so the numbers it
// renders most pay for no call; the rarer kinds go out of line.
#pragma once

#include "columns/column_value.h"
#include "columns/column_json.h"

namespace binlogctl::value_detail {

// DATE TIME DATETIME TIMESTAMP (temporal.cpp). A TIMESTAMP is printed from its seconds shifted
// by tz_offset_seconds (its parts are UTC).
void render_temporal_json(RenderBuf& out, const ColumnValue& v, std::int32_t tz_offset_seconds);
// The binary DECIMAL(precision, scale) in `raw` (decimal_binary_size bytes, at absolute offset
// `at`) as text without quotes; Errc::bad_value at `at` for a digit group over its digits
// (decimal.cpp).
// put_decimal_digits: the same text written at `out` (room for kDecimalTextMax bytes), which is
// moved past it; on an error nothing useful is written.
inline constexpr std::size_t kDecimalTextMax = 73;  // a sign, 65 digits and a point, and room
Status put_decimal_digits(char*& out, int precision, int scale, Bytes raw, std::uint64_t at);
inline Status append_decimal_digits(RenderBuf& out, int precision, int scale, Bytes raw, std::uint64_t at) {
  char* const start = out.tail(kDecimalTextMax);
  char* o = start;
  Status st = put_decimal_digits(o, precision, scale, raw, at);
  if (st.ok()) out.advance(static_cast<std::size_t>(o - start));
  return st;
}
// text binary enum_index set_bits json geometry vector uuid inet4 inet6 (string_blob.cpp).
Status render_string_family_json(const ColumnInfo& col, const ColumnValue& v, RenderBuf& out,
                                 const RenderOptions& opts);

// `v` as decoded from a value of `col` (strictly: no DecodeLeniency). Errors: those of the
// content the decoder does not look into (DECIMAL digit groups, a binary JSON document), at the
// offsets the byte-reading renderers reported them. `out` may hold part of the value on error.
[[gnu::always_inline]] inline Status render_json(const ColumnInfo& col, const ColumnValue& v, RenderBuf& out,
                                                 const RenderOptions& opts) {
  switch (v.kind) {
    case ValueKind::signed_int:
      append_i64(out, v.i);
      return {};
    case ValueKind::unsigned_int:
    case ValueKind::bit:
    case ValueKind::year:
      append_u64(out, v.u);
      return {};
    case ValueKind::null:
      out.append("null", 4);
      return {};
    case ValueKind::float32:
      if (col.decimals >= 0)
        append_fixed_json(out, static_cast<double>(v.f), col.decimals);
      else
        append_float_json(out, v.f);
      return {};
    case ValueKind::float64:
      if (col.decimals >= 0)
        append_fixed_json(out, v.d, col.decimals);
      else
        append_double_json(out, v.d);
      return {};
    case ValueKind::decimal: {
      out.push_back('"');
      Status st = append_decimal_digits(out, v.precision, v.scale, v.bytes, v.offset);
      out.push_back('"');
      return st;
    }
    case ValueKind::decimal_text:
      append_json_string(out, as_string_view(v.bytes));
      return {};
    case ValueKind::date:
    case ValueKind::time:
    case ValueKind::datetime:
    case ValueKind::timestamp:
      render_temporal_json(out, v, opts.tz_offset_seconds);
      return {};
    case ValueKind::text:
      append_text_json(out, as_string_view(v.bytes), v.charset);
      return {};
    case ValueKind::enum_index:
    case ValueKind::binary:
    case ValueKind::set_bits:
    case ValueKind::json:
    case ValueKind::geometry:
    case ValueKind::vector:
    case ValueKind::uuid:
    case ValueKind::inet4:
    case ValueKind::inet6:
      return render_string_family_json(col, v, out, opts);
  }
  return {};
}

}  // namespace binlogctl::value_detail
