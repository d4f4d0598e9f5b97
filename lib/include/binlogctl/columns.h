// Column values as they appear in row events (WRITE/UPDATE/DELETE_ROWS): the column type codes of
// TABLE_MAP, the per-type metadata, the size of a value in a row image, and the JSON rendering of
// one value (the value rules of `binlogctl convert --format json`).
//
// Nothing here throws or allocates per value once the caller's output string has grown: every
// decoder reads through a ByteReader (bounds-checked, absolute offsets) and appends to a
// caller-owned std::string. On failure the output string is restored to its size at entry.
//
// Sources of truth for the formats: MySQL libs/mysql/binlog/event/binary_log_funcs.cpp
// (calc_field_size), sql/log_event.cc (log_event_print_value), mysys/my_time.cc (the packed
// temporal formats), strings/decimal.cc (bin2decimal) and sql-common/json_binary.cc.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/json_out.h>
#include <binlogctl/result.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace binlogctl {

// enum_field_types (include/field_types.h). Codes 21..241 are unassigned; a byte read from a
// TABLE_MAP is cast to ColumnType as is, so every function below handles unknown codes.
enum class ColumnType : std::uint8_t {
  decimal = 0,  // pre-5.0 DECIMAL, stored as a string
  tiny = 1,
  short_ = 2,
  long_ = 3,
  float_ = 4,
  double_ = 5,
  null = 6,
  timestamp = 7,
  longlong = 8,
  int24 = 9,
  date = 10,
  time = 11,
  datetime = 12,
  year = 13,
  newdate = 14,
  varchar = 15,
  bit = 16,
  timestamp2 = 17,
  datetime2 = 18,
  time2 = 19,
  typed_array = 20,
  vector = 242,
  invalid = 243,
  bool_ = 244,
  json = 245,
  newdecimal = 246,
  enum_ = 247,
  set = 248,
  tiny_blob = 249,
  medium_blob = 250,
  long_blob = 251,
  blob = 252,
  var_string = 253,
  string = 254,
  geometry = 255,
};

// "LONG", "VARCHAR", "NEWDECIMAL", ... (enum_field_types without the MYSQL_TYPE_ prefix);
// "UNKNOWN" for unassigned codes.
const char* column_type_name(ColumnType t) noexcept;

// Size in bytes of one column's entry in TABLE_MAP's metadata block: 0, 1 or 2; -1 for codes
// whose metadata size is not known (unassigned codes, TYPED_ARRAY), which makes the rest of the
// block unreadable.
int column_meta_size(ColumnType t) noexcept;

// Reads one column's metadata from TABLE_MAP's metadata block, as the server's
// Table_map_log_event does:
//   FLOAT DOUBLE BLOB* GEOMETRY JSON VECTOR TIME2 DATETIME2 TIMESTAMP2  1 byte
//   VARCHAR VAR_STRING                 2 bytes little-endian (max length in bytes)
//   BIT                                first byte = bits % 8 (low byte), second = bytes (high)
//   NEWDECIMAL                         first byte = precision (high byte), second = scale
//   STRING ENUM SET                    first byte = real type (high byte), second = length (low);
//                                      long CHARs fold length bits 8-9 into the type byte
// Returns 0 for types without metadata (and on a failed read: the reader records the error).
std::uint16_t read_column_meta(ColumnType t, ByteReader& r) noexcept;

// STRING metadata unpacked: the real type (STRING, ENUM or SET) and, for CHAR/BINARY, the column's
// maximum length in bytes (length bits 8-9 are stored xor'ed into bits 4-5 of the type byte); for
// ENUM/SET the pack length (1-2 / 1-8 bytes).
struct StringMeta {
  ColumnType real_type;
  std::uint16_t length;
};
inline StringMeta unpack_string_meta(std::uint16_t meta) noexcept {  // inline: the row decoder asks per value
  auto type_byte = static_cast<std::uint8_t>(meta >> 8);
  auto length = static_cast<std::uint16_t>(meta & 0xff);
  if ((type_byte & 0x30) != 0x30) {
    // CHAR longer than 255 bytes: bits 8-9 of the length are stored inverted in bits 4-5.
    length = static_cast<std::uint16_t>(length | (((type_byte & 0x30) ^ 0x30) << 4));
    type_byte = static_cast<std::uint8_t>(type_byte | 0x30);
  }
  return {static_cast<ColumnType>(type_byte), length};
}

// Bytes a value of this column occupies in a row image (for skipping columns without decoding).
// `r` is positioned at the value and not moved: length prefixes are peeked through a copy, and a
// prefix that promises more bytes than remain gives Errc::truncated at the offset of the value's
// data.
Result<std::size_t> column_value_size(ColumnType t, std::uint16_t meta, const ByteReader& r) noexcept;
// How a value of a column can be skipped without a call per value: `fixed` bytes whatever the
// row holds (numbers, temporals, NEWDECIMAL, BIT, ENUM/SET), or a little-endian length of
// `prefix` bytes (1..4) followed by that many bytes (VARCHAR, CHAR, BLOB, JSON, GEOMETRY,
// VECTOR), or neither (both 0: NULL type, metadata column_value_size refuses). Derived from
// column_value_size itself, so the two never disagree; a prefix promising more bytes than
// remain is column_value_size's error to report.
struct ValueSizeRule {
  std::uint32_t fixed = 0;
  std::uint8_t prefix = 0;
};
ValueSizeRule value_size_rule(ColumnType t, std::uint16_t meta) noexcept;

// ---- rendering ---------------------------------------------------------------------------------

enum class BinaryAs : std::uint8_t { base64, hex };  // hex: lowercase, no prefix

struct RenderOptions {
  BinaryAs binary_as = BinaryAs::base64;
  std::int32_t tz_offset_seconds = 0;  // added to TIMESTAMP values (UTC by default)
};

// How a caller that knows more about a column (TABLE_MAP optional metadata, schema) wants a
// fixed-length binary STRING rendered: MariaDB's UUID / INET4 / INET6 types travel as BINARY(16) /
// BINARY(4) / BINARY(16).
enum class ValueHint : std::uint8_t { none, uuid, inet4, inet6 };

struct ColumnInfo {
  ColumnType type = ColumnType::null;
  std::uint16_t meta = 0;
  bool is_unsigned = false;
  std::uint16_t charset = 0;  // collation id; 63 = binary; 0 = unknown (treated as utf8mb4)
  // ENUM/SET member names in definition order (TABLE_MAP optional metadata), in the column's
  // charset; empty when unknown. Borrowed: must outlive the call.
  std::span<const std::string_view> names{};
  // ENUM: each of `names` as append_text_json renders it (quoted, UTF-8), when the owner
  // prepared them (the JSON renderer's JsonRowPlan does); empty: rendered from `names` per value.
  std::span<const std::string_view> names_json{};
  ValueHint hint = ValueHint::none;
  // FLOAT(M,D) / DOUBLE(M,D) as declared (schema history): D, and the value is printed rounded to
  // D decimals as the server's SELECT does ("1.500"); -1 = not declared (shortest round trip).
  std::int8_t decimals = -1;
  // Raw size of a value of a fixed-size temporal type (DATE, TIME2, DATETIME2, TIMESTAMP,
  // TIMESTAMP2; fixed_temporal_size), whose rendering RowImageDecoder remembers; 0 for the other
  // types or when not prepared (the JSON renderer's JsonRowPlan prepares it).
  std::uint8_t temporal_size = 0;
  // CHAR/VARCHAR text whose bytes go out as they are (escaped): a UTF-8 compatible charset, no
  // hint; the size of its length prefix (1 or 2), else 0 (utf8_text_prefix; prepared like
  // temporal_size).
  std::uint8_t text_prefix = 0;
  // Which prepared fast path RowImageDecoder takes for the column, in one byte that the row loop
  // tests once per value (JsonRowPlan sets it with the fields it uses): none (decode, then
  // render); text_prefix's UTF-8 text; an ENUM index of 1 or 2 bytes picking one of names_json;
  // temporal_size's remembered rendering. Each falls back to the general path on anything odd.
  enum class JsonFastPath : std::uint8_t { none, utf8_text, enum_name, temporal };
  JsonFastPath json_fast = JsonFastPath::none;
};
std::uint8_t fixed_temporal_size(ColumnType type, std::uint16_t meta) noexcept;
std::uint8_t utf8_text_prefix(const ColumnInfo& col) noexcept;
// True for the collations whose text append_text_json passes through unconverted (utf8mb4,
// utf8mb3, ascii, binary, filename).
bool collation_is_utf8_compatible(std::uint16_t collation) noexcept;

// Decodes one (non-NULL) value at the reader's position, advances past it and appends its JSON
// rendering to `out`:
//   TINY SHORT INT24 LONG LONGLONG  integer, signed or unsigned per is_unsigned
//   DECIMAL NEWDECIMAL              string with the full scale: "-0.01", "12.3400", "0"
//   FLOAT DOUBLE                    number, shortest round-trip form of the float32/float64,
//                                   Python-repr style (".0" added to integral values: 1.0, 1e+16);
//                                   with decimals >= 0 fixed-point with that many decimals
//                                   ("-0.0001", "1.500"); NaN/Inf -> null
//   BIT                             unsigned integer (big-endian value)
//   YEAR                            integer, 0 stays 0, else 1900 + stored byte
//   DATE                            "YYYY-MM-DD"           (zero date "0000-00-00")
//   DATETIME(2)                     "YYYY-MM-DD HH:MM:SS[.f]" with exactly fsp digits
//   TIMESTAMP(2)                    same, UTC + tz_offset_seconds; 0 -> "0000-00-00 00:00:00[.0…]"
//   TIME(2)                         "[-]HH:MM:SS[.f]", hours up to 838 (more when corrupt)
//   TIME DATETIME TIMESTAMP with    MariaDB's pre-10.0 high-precision formats (see below): as
//     meta = fsp 1..6               TIME2 / DATETIME2 / TIMESTAMP2 with that fsp
//   text (collation != 63)          string converted to UTF-8 from the column charset
//   binary (collation 63), GEOMETRY base64 or hex string (RenderOptions::binary_as); BINARY(n)
//                                   values are zero-padded back to n bytes (the server strips the
//                                   padding in the binlog; SELECT shows it)
//   ENUM                            name when names are known, else the 1-based index (integer)
//   SET                             comma-joined names when known, else the bitmap (integer)
//   JSON                            MySQL binary JSON embedded as JSON (compact)
//   VECTOR                          array of float32 numbers
//   NULL type                       null
// Errors: Errc::truncated (offset of the field that runs past the end), Errc::bad_value or
// Errc::bad_length (offset of the offending field) for values the format does not allow.
Status append_value_json(const ColumnInfo& col, ByteReader& row, JsonBuf& out,
                         const RenderOptions& opts = {});

// ---- building blocks (also used by other modules) ----------------------------------------------

// Appends `s` as a quoted JSON string. Escapes '"', '\\', control characters (\b \f \n \r \t,
// others \u00XX). Bytes that are not part of well-formed UTF-8 (stray continuation bytes, overlong
// forms, surrogates, code points past U+10FFFF, truncated sequences) are never dropped and never
// produce invalid JSON: each such byte b becomes the four characters `\xHH` inside the decoded
// string, i.e. the JSON text holds `\\xHH` (escaped backslash, 'x', two lowercase hex digits).
// A real backslash in valid text is escaped the normal JSON way (`\\`), so the only ambiguity
// left is valid text that itself contains backslash, 'x', two hex digits; accepted, because the
// alternatives (U+FFFD, \u00XX) would silently turn bytes into other characters.
// (The escaping lives in json_out.h; these names are kept for the column code.)
inline void append_json_string(JsonBuf& out, std::string_view s) { append_json_quoted(out, s); }
// Same escaping without the surrounding quotes.
inline void append_json_string_body(JsonBuf& out, std::string_view s) { append_json_escaped(out, s); }

// Text in the charset of MySQL/MariaDB collation `collation` (0 = unknown: utf8mb4), converted to
// UTF-8 and appended as a quoted JSON string. utf8mb3/utf8mb4/ascii pass through; latin1 (MySQL's
// latin1 is cp1252 with the 5 undefined bytes mapped to U+0081.. as the server does) is converted
// in place; other charsets go through iconv. Bytes the charset cannot decode are escaped as
// `\xHH` like invalid UTF-8 above. Collation 63 (binary) is treated like utf8mb4 here.
void append_text_json(JsonBuf& out, std::string_view bytes, std::uint16_t collation);

// The same text converted to UTF-8 strictly (for renderers that must not guess): appends it to
// `out` and returns true when every byte decodes in the collation's charset (utf8mb3/utf8mb4
// well-formed, ascii below 0x80, latin1 always, others through iconv); else returns false and
// leaves `out` as it was. Binary and unknown-to-iconv charsets return false.
bool text_to_utf8(std::string& out, std::string_view bytes, std::uint16_t collation);

// Charset name ("utf8mb4", "latin1", "binary", ...) of a collation id of MySQL 5.x-9.x or MariaDB
// 10.x/11.x; "utf8mb4" for unknown ids.
const char* collation_charset_name(std::uint16_t collation) noexcept;
inline bool is_binary_collation(std::uint16_t collation) noexcept { return collation == 63; }
// Bytes of the longest character of a charset ("utf8mb4" 4, "utf8"/"utf8mb3" 3, "latin1" 1, ...;
// the servers' mbmaxlen), 0 for a name not known; and of a collation id's charset (unknown ids:
// utf8mb4's 4, as collation_charset_name).
int charset_max_bytes(std::string_view name) noexcept;
int collation_max_bytes(std::uint16_t collation) noexcept;
// A collation id of the charset that a charset or collation name ("latin1", "utf8mb4_bin",
// "utf8" = utf8mb3) denotes: the charset's default collation, which is all that decoding needs.
// 0 when the name is not known.
std::uint16_t charset_collation_id(std::string_view name) noexcept;

// Quoted JSON string of binary data per RenderOptions::binary_as.
void append_binary_json(JsonBuf& out, Bytes b, BinaryAs how);

// Canonical text (no quotes) of MariaDB's UUID (8-4-4-4-12 lowercase hex of the 16 bytes in binlog
// order), INET4 (dotted quad) and INET6 (RFC 5952, as inet_ntop: longest run of >= 2 zero groups
// compressed to "::", IPv4-mapped ::ffff:a.b.c.d). Shorter inputs (the binlog strips trailing zero
// bytes of BINARY columns) are zero-padded; longer ones are cut to the type's size.
void append_uuid_text(JsonBuf& out, Bytes b);
void append_inet4_text(JsonBuf& out, Bytes b);
void append_inet6_text(JsonBuf& out, Bytes b);

// JSON numbers for floating-point values: shortest round-trip digits; integral values get ".0"
// (Python repr); NaN and infinities are written as null.
void append_double_json(JsonBuf& out, double v);
void append_float_json(JsonBuf& out, float v);
// Fixed-point with `decimals` (0..30) digits after the point, exactly rounded, as the server
// prints FLOAT(M,D)/DOUBLE(M,D) columns: 1.5 with 3 decimals -> 1.500. NaN/Inf -> null.
void append_fixed_json(JsonBuf& out, double v, int decimals);

// Binary DECIMAL (bin2decimal): size in bytes of DECIMAL(precision, scale), 0 when the metadata
// is impossible (precision 1..65, scale <= precision). Inline: the row decoder asks per value.
inline std::size_t decimal_binary_size(int precision, int scale) noexcept {
  // Groups of 9 digits take 4 bytes; a partial group of n digits takes dig2bytes[n].
  constexpr std::uint8_t kDig2Bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  if (precision < 1 || precision > 65 || scale < 0 || scale > precision) return 0;  // 65: DECIMAL_MAX_PRECISION
  const int intg = precision - scale;
  return static_cast<std::size_t>((intg / 9) * 4 + kDig2Bytes[intg % 9] + (scale / 9) * 4 + kDig2Bytes[scale % 9]);
}
// Decodes a binary DECIMAL(precision, scale) from `r` and appends its text without quotes
// ("-12.340"). Errc::bad_value for impossible metadata or digit groups over 999999999.
Status append_decimal_text(JsonBuf& out, int precision, int scale, ByteReader& r);

// MySQL binary JSON (the JSON column format, json_binary.cc) as compact JSON text. `base_offset` is
// the absolute offset of doc[0], for error offsets. An empty document renders as null.
Status append_json_binary(JsonBuf& out, Bytes doc, std::uint64_t base_offset);

// ---- MariaDB's pre-10.0 high-precision temporals -----------------------------------------------
// (Field_time_hires, Field_datetime_hires, Field_timestamp_hires; still written for tables created
// with mysql56_temporal_format=OFF or before 10.0). The TABLE_MAP gives them the plain
// TIME/DATETIME/TIMESTAMP codes and no metadata, so their fsp (1..6) must come from the table's
// definition; a reader passes it as the column's meta. Big-endian integers of a size that depends
// on fsp:
//   TIME       {_,4,4,5,5,5,6}[fsp] bytes: [-]microseconds / 10^(6-fsp), plus 3020400 * 10^fsp
//              (the value of 839:00:00 at that precision, so that the stored number is >= 0)
//   DATETIME   {_,6,6,7,7,7,8}[fsp] bytes: the packed datetime
//              (((((Y*13+M)*32+D)*24+h)*60+m)*60+s)*10^fsp + fraction
//   TIMESTAMP  4 bytes of seconds since the epoch, then {_,1,1,2,2,3,3}[fsp] bytes of fraction
// Sizes for column_value_size: legacy_hires_size(t, fsp) (0 when t/fsp is not such a column).
std::size_t legacy_hires_size(ColumnType t, unsigned fsp) noexcept;

// MySQL's in-memory packed temporals (my_time.h MY_PACKED_TIME_*), as text without quotes:
// "YYYY-MM-DD[ HH:MM:SS[.f]]" / "[-]HH:MM:SS[.f]" with fsp (0..6) fraction digits.
void append_packed_datetime_text(JsonBuf& out, std::int64_t packed, unsigned fsp,
                                 bool date_only);
void append_packed_time_text(JsonBuf& out, std::int64_t packed, unsigned fsp);

// ---- the same renderers appending to a std::string (tests, Canal, info) ------------------------
// They borrow the string through a JsonBuf; the hot paths write to a JsonBuf directly.
inline Status append_value_json(const ColumnInfo& col, ByteReader& row, std::string& out,
                                const RenderOptions& opts = {}) {
  JsonBuf b(out);
  return append_value_json(col, row, b, opts);
}
inline void append_json_string(std::string& out, std::string_view s) { append_json_quoted(out, s); }
inline void append_json_string_body(std::string& out, std::string_view s) { append_json_escaped(out, s); }
inline void append_text_json(std::string& out, std::string_view bytes, std::uint16_t collation) {
  JsonBuf b(out);
  append_text_json(b, bytes, collation);
}
inline void append_binary_json(std::string& out, Bytes bytes, BinaryAs how) {
  JsonBuf b(out);
  append_binary_json(b, bytes, how);
}
inline void append_inet6_text(std::string& out, Bytes bytes) {
  JsonBuf b(out);
  append_inet6_text(b, bytes);
}
inline void append_double_json(std::string& out, double v) {
  JsonBuf b(out);
  append_double_json(b, v);
}
inline void append_float_json(std::string& out, float v) {
  JsonBuf b(out);
  append_float_json(b, v);
}
inline Status append_decimal_text(std::string& out, int precision, int scale, ByteReader& r) {
  JsonBuf b(out);
  return append_decimal_text(b, precision, scale, r);
}
inline Status append_json_binary(std::string& out, Bytes doc, std::uint64_t base_offset) {
  JsonBuf b(out);
  return append_json_binary(b, doc, base_offset);
}
inline void append_packed_datetime_text(std::string& out, std::int64_t packed, unsigned fsp, bool date_only) {
  JsonBuf b(out);
  append_packed_datetime_text(b, packed, fsp, date_only);
}
inline void append_packed_time_text(std::string& out, std::int64_t packed, unsigned fsp) {
  JsonBuf b(out);
  append_packed_time_text(b, packed, fsp);
}

}  // namespace binlogctl
