// Shared between the Canal mapper's translation units (not a public header; the unit tests
// include it to check the renderers against the reference paths).
#pragma once

#include <binlogctl/datetime.h>
#include <binlogctl/gtid.h>
#include <binlogctl/result.h>

#include "columns/column_json.h"
#include "columns/column_value.h"
#include "columns/decode_value.h"
#include "columns/temporal_text.h"
#include "columns/value_json.h"
#include "rows/table_map.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binlogctl::canal_detail {

// new String(bytes, "ISO-8859-1") as UTF-8: one code point U+0000..U+00FF per byte.
void append_iso8859_1(std::string& out, Bytes b);
// Java's Double.toString / Float.toString appended to `out` (no allocation), or written at `o`
// (room for kJavaFpMax bytes: the text takes at most 40; returns the end).
void append_java_double(std::string& out, double v);
void append_java_float(std::string& out, float v);
inline constexpr std::size_t kJavaFpMax = 48;
char* put_java_double(char* o, double v) noexcept;
char* put_java_float(char* o, float v) noexcept;

// A growable output buffer that, unlike std::string, grows without zero-filling and appends
// without a call per byte: the canal-json text and the canal-proto stream are built in it.
class OutBuf {
 public:
  // n more bytes at the end, uninitialized; the pointer is valid until the next growth.
  char* extend(std::size_t n) {
    if (cap_ - size_ < n) grow(n);
    char* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  // Room for n more bytes at the returned pointer, without changing the size; set_end() then
  // keeps what was written up to its argument.
  char* room(std::size_t n) {
    if (cap_ - size_ < n) grow(n);
    return data_.get() + size_;
  }
  void set_end(const char* e) noexcept { size_ = static_cast<std::size_t>(e - data_.get()); }
  void push_back(char c) { *extend(1) = c; }
  void append(const char* s, std::size_t n) {
    if (n != 0) std::memcpy(extend(n), s, n);
  }
  void append(std::string_view s) { append(s.data(), s.size()); }
  OutBuf& operator+=(std::string_view s) {
    append(s);
    return *this;
  }
  void truncate(std::size_t n) noexcept { size_ = n < size_ ? n : size_; }
  void clear() noexcept { size_ = 0; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  char* data() noexcept { return data_.get(); }
  const char* data() const noexcept { return data_.get(); }
  std::string_view view() const noexcept { return {data_.get(), size_}; }

 private:
  void grow(std::size_t n) {
    std::size_t cap = cap_ < 4096 ? 4096 : cap_ * 2;
    while (cap - size_ < n) cap *= 2;
    auto d = std::make_unique<char[]>(cap);
    if (size_ != 0) std::memcpy(d.get(), data_.get(), size_);
    data_ = std::move(d);
    cap_ = cap;
  }
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

// Appends `s` as a quoted JSON string exactly as nlohmann::json::dump(-1, ' ', false,
// error_handler_t::replace) writes it: ", \, \b \f \n \r \t escaped, other control characters as
// \u00xx, everything else (DEL and non-ASCII included) as is; each maximal ill-formed UTF-8
// subsequence becomes one U+FFFD.
void append_flat_json_string(std::string& out, std::string_view s);
void append_flat_json_string(OutBuf& out, std::string_view s);
// The same for `s` known to be well-formed UTF-8 (nothing to replace: only ASCII is escaped).
void append_flat_json_utf8(OutBuf& out, std::string_view s);
// Decimal text of an integer.
void append_dec(OutBuf& out, std::uint64_t v);
void append_dec(OutBuf& out, std::int64_t v);

struct CanalValue {
  bool is_null = false;
  bool plain = false;  // the text is printable ASCII without '"' and '\\' (a number, a date):
                       // it goes into a JSON string as it is, without the escaping checks
  bool in_short = false;  // the text is in short_text (numbers, temporals), else in value
  bool in_source = false;  // (not in_short) the text is `source` (well-formed UTF-8), else `value`
  std::uint8_t short_at = 0, short_len = 0;
  int sql_type = 0;
  std::string value;
  std::string_view source;  // bytes of the row image that are the text as they are
  char short_text[80];  // temporal text: fields of at most 10 digits

  // The value's text.
  std::string_view text() const noexcept {
    if (in_short) return std::string_view(short_text + short_at, short_len);
    return in_source ? source : std::string_view(value);
  }
  // The text is short_text's [b, e).
  void set_short(const char* b, const char* e) noexcept {
    in_short = true;
    short_at = static_cast<std::uint8_t>(b - short_text);
    short_len = static_cast<std::uint8_t>(e - b);
  }
  // The text is `s`, well-formed UTF-8 that outlives the value (the row image's): not copied.
  void set_source(std::string_view s) noexcept {
    in_short = false;
    in_source = true;
    source = s;
  }
  // The text is `value`, emptied (its capacity kept).
  std::string& long_text() noexcept {
    in_short = false;
    in_source = false;
    value.clear();
    return value;
  }
};

// sqlType Canal reports for a NULL value of the column.
int null_sql_type(const ColumnDef& c);

// How Canal renders the values of one column, decided once per TABLE_MAP (the mapper keeps it in
// its per-table plan): Canal's rules for the typed values of column_value.h.
struct ValuePlan {
  int sql_type = 0;       // sqlType of a non-NULL value
  int sql_type_wide = 0;  // UNSIGNED integers: sqlType of a value >= wide_from (Canal's next
  std::uint64_t wide_from = ~std::uint64_t{0};  // wider JDBC type for values past the signed range)
  int null_sql_type = 0;  // sqlType of NULL
  std::uint16_t collation = 0;
  bool binary = false;    // strings: new String(bytes, "ISO-8859-1") (BLOB), else text in `collation`
  bool utf8 = false;      // strings, not binary: `collation` is UTF-8 (or taken as such)
  bool rendered = true;   // false: Canal prints no value (null, OTHER): VECTOR, NULL, unknown types
};
ValuePlan value_plan(const ColumnDef& c);

// What Canal renders from the typed decoder, which reads some damaged values it has always
// printed rather than failed on (column_value.h).
inline constexpr unsigned kCanalLeniency = kDecodeWrapTimestampFraction | kDecodeWideEnum;

// Decimal digits of v, written backwards ending at `end`; returns the first digit.
inline char* put_dec_backwards(char* end, std::uint64_t v) noexcept {
  static constexpr char kDigits2[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  while (v >= 100) {
    end -= 2;
    std::memcpy(end, kDigits2 + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) {
    end -= 2;
    std::memcpy(end, kDigits2 + 2 * v, 2);
  } else {
    *--end = static_cast<char>('0' + v);
  }
  return end;
}
// Decimal digits of v, with its sign, written backwards ending at `end` (21 bytes at most);
// returns the first byte.
inline char* put_dec_signed_backwards(char* end, std::int64_t v) noexcept {
  const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  char* b = put_dec_backwards(end, mag);
  if (v < 0) *--b = '-';
  return b;
}

// Whether `s` is well-formed UTF-8 (what append_utf8 copies as it is from a UTF-8 collation).
bool utf8_well_formed(std::string_view s) noexcept;

// render_value's kinds that are rare or long (binary JSON, old DECIMAL text, the kinds Canal
// has no value for), out of line.
Status render_value_rest(const ValuePlan& p, const ColumnValue& cv, const TimeZone& tz, CanalValue& v);

// Value text and sqlType of a decoded (non-NULL) value: numbers, temporals and DECIMAL in
// v.short_text, the others in v.value (cleared first, so its capacity is reused). Inline: the row
// loop passes it to the decoder as its continuation, so the switch on the kind follows each
// kind's decoding.
[[gnu::always_inline]] inline Status render_value(const ValuePlan& p, const ColumnValue& cv, const TimeZone& tz,
                                                  CanalValue& v) {
  v.is_null = false;
  v.plain = true;  // numbers and temporals; the strings below say otherwise
  v.sql_type = p.sql_type;
  char* const b = v.short_text;
  constexpr std::size_t kDecEnd = 24;  // integers: written backwards from here (21 bytes at most)
  switch (cv.kind) {
    case ValueKind::signed_int:
      v.set_short(put_dec_signed_backwards(b + kDecEnd, cv.i), b + kDecEnd);
      return {};
    case ValueKind::unsigned_int:
      v.set_short(put_dec_backwards(b + kDecEnd, cv.u), b + kDecEnd);
      if (cv.u >= p.wide_from) v.sql_type = p.sql_type_wide;  // Canal's next wider type
      return {};
    case ValueKind::float32:
      v.set_short(b, put_java_float(b, cv.f));
      return {};
    case ValueKind::float64:
      v.set_short(b, put_java_double(b, cv.d));
      return {};
    case ValueKind::year:
      if (cv.u == 0) {
        std::memcpy(b, "0000", 4);
        v.set_short(b, b + 4);
      } else {
        v.set_short(put_dec_backwards(b + kDecEnd, cv.u), b + kDecEnd);
      }
      return {};
    case ValueKind::enum_index:
    case ValueKind::set_bits:
    case ValueKind::bit:
      v.set_short(put_dec_backwards(b + kDecEnd, cv.u), b + kDecEnd);
      return {};
    case ValueKind::date:
      v.set_short(b, put_date_text(b, cv.t));
      return {};
    case ValueKind::time: {
      char* e = b;
      if (cv.t.negative) *e++ = '-';
      v.set_short(b, put_time_text(e, cv.t));
      return {};
    }
    case ValueKind::datetime: {
      char* e = put_date_text(b, cv.t);
      *e++ = ' ';
      v.set_short(b, put_time_text(e, cv.t));
      return {};
    }
    case ValueKind::timestamp: {  // local time in the --timezone
      char* e = b + 19;
      if (cv.u == 0)
        std::memcpy(b, "0000-00-00 00:00:00", 19);
      else
        e = tz.put_local(b, static_cast<std::int64_t>(cv.u));
      if (cv.t.fsp > 0) e = temporal_text::put_fraction(e, cv.t.usec, cv.t.fsp);
      v.set_short(b, e);
      return {};
    }
    case ValueKind::decimal: {  // decimal2string's text
      static_assert(sizeof v.short_text >= value_detail::kDecimalTextMax);
      char* e = b;
      Status st = value_detail::put_decimal_digits(e, cv.precision, cv.scale, cv.bytes, cv.offset);
      if (st.ok()) v.set_short(b, e);
      else v.long_text();
      return st;
    }
    case ValueKind::text:
    case ValueKind::binary:
    case ValueKind::geometry:
    case ValueKind::uuid:  // Canal knows no UUID/INET types: the bytes by the column's charset
    case ValueKind::inet4:
    case ValueKind::inet6: {
      v.plain = false;
      if (p.utf8 && utf8_well_formed(as_string_view(cv.bytes))) [[likely]] {
        // What append_utf8 would write: the bytes as they are.
        v.set_source(as_string_view(cv.bytes));
        return {};
      }
      std::string& out = v.long_text();
      if (p.binary)
        append_iso8859_1(out, cv.bytes);
      else
        // Canal's string of text: the bytes in UTF-8 as they are (no escaping), each byte the
        // charset cannot decode as the 4 characters \xHH: what convert's JSON string reads back as.
        append_utf8(out, as_string_view(cv.bytes), p.collation, BadBytes::hex_text);
      return {};
    }
    default:
      v.long_text();
      return render_value_rest(p, cv, tz, v);
  }
}
// read_value's other cases: the columns Canal does not render (skipped by size), and the
// errors (`st`, the decoder's, of the value at position `pos` of `r`).
Status read_value_rest(const ColumnDef& c, const ValuePlan& p, ByteReader& r, std::size_t pos, const Status& st,
                       CanalValue& v);
// Decodes the non-NULL value of column `c` at `r` (decode_column_value, into the caller's
// scratch `cv`) and renders it. Errors: column_value_size's when the value's size is wrong, else
// the decoder's and the renderer's. Inline: the row loop calls it for every value.
[[gnu::always_inline]] inline Status read_value(const ColumnDef& c, const ColumnInfo& info, const ValuePlan& p, ByteReader& r,
                         const TimeZone& tz, ColumnValue& cv, CanalValue& v) {
  const std::size_t pos = r.position();
  if (!p.rendered) [[unlikely]]
    return read_value_rest(c, p, r, pos, Status{}, v);
  bool decoded = false;
  Status st = value_detail::decode_value(info, r, cv, kCanalLeniency, [&](const ColumnValue& x) __attribute__((always_inline)) {
    decoded = true;
    return render_value(p, x, tz, v);
  });
  if (!st.ok() && !decoded) [[unlikely]]
    return read_value_rest(c, p, r, pos, st, v);
  return st;
}
// "int(11) unsigned", "varchar(32)", "decimal(10,2)", ... rebuilt from the TABLE_MAP.
std::string mysql_type_text(const ColumnDef& c, bool display_widths);

// ---- protobuf wire format (what the generated classes write, for the hand-encoded parts) ----

inline std::size_t varint_size(std::uint64_t v) noexcept {
  if (v < 0x80) return 1;
  // 1 + (index of the highest set bit) / 7
  return static_cast<std::size_t>((std::bit_width(v) + 6) / 7);
}
inline char* put_varint(char* p, std::uint64_t v) noexcept {
  if (v < 0x80) {
    *p = static_cast<char>(v);
    return p + 1;
  }
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline void append_varint(std::string& out, std::uint64_t v) {
  char buf[10];
  out.append(buf, static_cast<std::size_t>(put_varint(buf, v) - buf));
}
// An int32 field's value as protobuf writes it: negative values sign-extended to 64 bits.
inline std::uint64_t int32_wire(std::int32_t v) noexcept {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
}
// Copies s to p (copy_bytes: short strings without a call to memcpy); returns the end.
BINLOGCTL_INLINE char* put_bytes(char* p, std::string_view s) noexcept {
  copy_bytes(p, s.data(), s.size());
  return p + s.size();
}
// A length-delimited field (tag, length, bytes), written even when `s` is empty.
inline void append_len_field(std::string& out, std::uint32_t field, std::string_view s) {
  append_varint(out, (field << 3) | 2);
  append_varint(out, s.size());
  out.append(s);
}
inline std::size_t len_field_size(std::uint32_t field, std::size_t n) noexcept {
  return varint_size(field << 3) + varint_size(n) + n;
}
// A varint field (int32 values as int32_wire), written whatever its value.
inline void append_varint_field(std::string& out, std::uint32_t field, std::uint64_t v) {
  append_varint(out, field << 3);
  append_varint(out, v);
}
// Whether protobuf accepts `s` in a string field without its error log.
bool proto_utf8_valid(std::string_view s) noexcept;
// A proto3 string field as the generated code writes it: nothing when empty; protobuf's error
// log for `full_name` (stderr) first when `s` is not valid UTF-8, as serializing does.
void append_string_field(std::string& out, std::uint32_t field, std::string_view s,
                         const char* full_name);
// Pair{key (1), value (2)} as field `field` of the enclosing message.
void append_pair_field(std::string& out, std::uint32_t field, std::string_view key,
                       std::string_view value);
// protobuf's error log for a string field that is not valid UTF-8 (what serializing prints).
void log_invalid_utf8(std::string_view s, const char* full_name);

inline bool is_ascii(std::string_view s) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if ((w & 0x8080808080808080ull) != 0) return false;
  }
  for (; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80) return false;
  return true;
}
// What serializing a string field does first: log when `s` is not valid UTF-8.
inline void check_utf8(std::string_view s, const char* full_name) {
  if (!is_ascii(s) && !proto_utf8_valid(s)) log_invalid_utf8(s, full_name);
}

// Writes fields (field numbers below 16) at a pointer into a buffer sized beforehand with the
// *_bound() sizes.
struct WireWriter {
  char* p;
  // Where string() puts the logs of strings that are not valid UTF-8 ((text, field) pairs, to
  // be printed later in order); null: printed at once.
  std::vector<std::pair<std::string, const char*>>* logs = nullptr;
  static constexpr std::size_t varint_bound() noexcept { return 11; }
  static constexpr std::size_t bytes_bound(std::size_t n) noexcept { return 11 + n; }
  static constexpr std::size_t pair_bound(std::size_t k, std::size_t v) noexcept {
    return 11 + 22 + k + v;
  }
  void varint(std::uint32_t field, std::uint64_t v) noexcept {
    *p++ = static_cast<char>(field << 3);
    p = put_varint(p, v);
  }
  BINLOGCTL_INLINE void bytes(std::uint32_t field, std::string_view s) noexcept {
    *p++ = static_cast<char>((field << 3) | 2);
    p = put_varint(p, s.size());
    p = put_bytes(p, s);
  }
  // A proto3 string field: nothing when empty (after the UTF-8 check serializing makes).
  BINLOGCTL_INLINE void string(std::uint32_t field, std::string_view s, const char* full_name) {
    if (s.empty()) return;
    if (!is_ascii(s) && !proto_utf8_valid(s)) [[unlikely]] {
      if (logs == nullptr) log_invalid_utf8(s, full_name);
      else logs->emplace_back(std::string(s), full_name);
    }
    bytes(field, s);
  }
  // Pair{key (1), value (2)} as field `field`; `key` a literal, ASCII (no UTF-8 check to make).
  void pair(std::uint32_t field, std::string_view key, std::string_view value) {
    std::size_t n = 0;
    if (!key.empty()) n += 1 + varint_size(key.size()) + key.size();
    if (!value.empty()) n += 1 + varint_size(value.size()) + value.size();
    *p++ = static_cast<char>((field << 3) | 2);
    p = put_varint(p, n);
    if (!key.empty()) bytes(1, key);
    string(2, value, "com.alibaba.otter.canal.protocol.Pair.value");
  }
};

// The text Canal's MariaGtidListLogEvent.getGtidStr() gives for a GTID_LIST (canal_mapper.cpp).
std::string gtid_list_text(const MariaGtidList& list);

}  // namespace binlogctl::canal_detail
