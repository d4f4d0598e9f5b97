// canal-proto's row encoding (the rendering threads' hot path, canal_rows.cpp): a row image's
// Columns written straight into the output, from the column plans' prepared bytes. Inline: they
// run per column.
#pragma once

#include "canal/canal_internal.h"
#include "canal/column_plan.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binlogctl::canal_detail {

// The first and last sizeof(W) bytes of x and y (n >= sizeof(W)) are equal.
template <class W>
inline bool same_ends(const char* x, const char* y, std::size_t n) noexcept {
  W x0, x1, y0, y1;
  std::memcpy(&x0, x, sizeof(W));
  std::memcpy(&x1, x + n - sizeof(W), sizeof(W));
  std::memcpy(&y0, y, sizeof(W));
  std::memcpy(&y1, y + n - sizeof(W), sizeof(W));
  return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}
// a == b, short texts (most values) compared inline rather than by a call to memcmp.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* const x = a.data();
  const char* const y = b.data();
  if (n > 16) return std::memcmp(x, y, n) == 0;
  if (n >= 8) return same_ends<std::uint64_t>(x, y, n);
  if (n >= 4) return same_ends<std::uint32_t>(x, y, n);
  return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

// The strings of the encoded columns that are not valid UTF-8, in the order serializing would
// have checked them (name, value, mysqlType per column): protobuf logs each one.
using Utf8Logs = std::vector<std::pair<std::string, const char*>>;

// Appends Column `index` with value `v` as field `tag` of RowData (field order of the generated
// code: 1 2 3 4 5 6 8 10; isNull is a oneof member and always written, other scalars only when
// not zero/empty). Returns where the value's bytes are in `out`.
[[gnu::always_inline]] inline std::size_t put_column(OutBuf& out, std::uint8_t tag, std::uint32_t index,
                                                     const ColumnPlan& p, const CanalValue& v, bool updated) {
  const bool usual = v.sql_type == (v.is_null ? p.value.null_sql_type : p.value.sql_type);
  const std::string_view text = v.text();
  const std::size_t vn = text.size();
  if (usual && p.fits_fixed) [[likely]] {
    // The prepared bytes, copied at their fixed sizes into room past the Column's end.
    const ColumnPlan::Fixed& f = p.fixed;
    const std::size_t head_len = f.head_len[v.is_null ? 1 : 0][updated ? 1 : 0];
    std::size_t n = head_len + f.type_len;
    if (vn != 0) n += 1 + varint_size(vn) + vn;
    char* o = out.room(1 + 10 + n + ColumnPlan::kHeadMax);
    *o++ = static_cast<char>(tag);
    o = put_varint(o, n);
    std::memcpy(o, f.head[v.is_null ? 1 : 0][updated ? 1 : 0], ColumnPlan::kHeadMax);
    o += head_len;
    if (vn != 0) {
      *o++ = 0x42;
      o = put_varint(o, vn);
      constexpr std::size_t kShort = 32;
      static_assert(sizeof v.short_text >= 24 + kShort);  // short_at < 24 (render_value)
      if (v.in_short && vn <= kShort && v.short_at < 24)
        std::memcpy(o, text.data(), kShort);
      else
        copy_bytes(o, text.data(), vn);
      o += vn;
    }
    const std::size_t value_at = static_cast<std::size_t>(o - out.data()) - vn;
    std::memcpy(o, f.type, ColumnPlan::kTypeMax);
    out.set_end(o + f.type_len);
    return value_at;
  }
  // The column's prepared start (index, sqlType, name, isKey) when the sqlType is its usual one.
  const std::string* pre = nullptr;
  if (usual) pre = v.is_null ? &p.pb_pre_null : &p.pb_pre;
  std::size_t n = 2 + p.pb_mysql_type.size();
  if (pre != nullptr) {
    n += pre->size();
  } else {
    n += p.pb_name.size();
    if (index != 0) n += 1 + varint_size(index);
    if (v.sql_type != 0) n += v.sql_type < 0 ? 11 : 1 + varint_size(static_cast<std::uint32_t>(v.sql_type));
  }
  if (updated) n += 2;
  if (vn != 0) n += 1 + varint_size(vn) + vn;
  char* o = out.extend(1 + varint_size(n) + n);
  *o++ = static_cast<char>(tag);
  o = put_varint(o, n);
  if (pre != nullptr) {
    o = put_bytes(o, *pre);
  } else {
    if (index != 0) {
      *o++ = 0x08;
      o = put_varint(o, index);
    }
    if (v.sql_type != 0) {
      *o++ = 0x10;
      o = put_varint(o, int32_wire(v.sql_type));
    }
    o = put_bytes(o, p.pb_name);  // and isKey
  }
  if (updated) {
    *o++ = 0x28;
    *o++ = 1;
  }
  *o++ = 0x30;
  *o++ = v.is_null ? 1 : 0;
  if (vn != 0) {
    *o++ = 0x42;
    o = put_varint(o, vn);
    o = put_bytes(o, text);
  }
  const std::size_t value_at = static_cast<std::size_t>(o - out.data()) - vn;
  put_bytes(o, p.pb_mysql_type);
  return value_at;
}

// RowChange.rowDatas (field 12) = RowData{beforeColumns (1), afterColumns (2)}: a row's Columns
// are written after 3 bytes kept at `at` for its tag and length, which are then written there
// (the Columns moved when the length does not take 2 bytes).
constexpr std::size_t kRowDataHead = 3;
inline void close_row_data(OutBuf& out, std::size_t at) {
  const std::size_t rd = out.size() - at - kRowDataHead;
  const std::size_t k = varint_size(rd);
  if (k < kRowDataHead - 1) {
    std::memmove(out.data() + at + 1 + k, out.data() + at + kRowDataHead, rd);
    out.truncate(at + 1 + k + rd);
  } else if (k > kRowDataHead - 1) {
    out.extend(k - (kRowDataHead - 1));
    std::memmove(out.data() + at + 1 + k, out.data() + at + kRowDataHead, rd);
  }
  char* o = out.data() + at;
  *o++ = 0x62;
  put_varint(o, rd);
}

}  // namespace binlogctl::canal_detail
