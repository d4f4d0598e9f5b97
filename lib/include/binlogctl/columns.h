// Column values as they appear in row events (WRITE/UPDATE/DELETE_ROWS): the column type codes of
// TABLE_MAP, the per-type metadata, the size of a value in a row image, the column model every
// renderer shares (ColumnInfo, RenderOptions) and the charsets of collation ids. Nothing here
// knows an output format: the JSON rendering of values is column_json.h, the SQL one sql.h.
//
// Nothing here throws or allocates per value: every decoder reads through a ByteReader
// (bounds-checked, absolute offsets).
//
// Sources of truth for the formats: MySQL libs/mysql/binlog/event/binary_log_funcs.cpp
// (calc_field_size), sql/log_event.cc (log_event_print_value), mysys/my_time.cc (the packed
// temporal formats), strings/decimal.cc (bin2decimal) and sql-common/json_binary.cc.
#pragma once

#include <binlogctl/bytes.h>
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
  ValueHint hint = ValueHint::none;
  // FLOAT(M,D) / DOUBLE(M,D) as declared (schema history): D, and the value is printed rounded to
  // D decimals as the server's SELECT does ("1.500"); -1 = not declared (shortest round trip).
  std::int8_t decimals = -1;
};
// Raw size of a value of a fixed-size temporal type (DATE, TIME2, DATETIME2, TIMESTAMP,
// TIMESTAMP2), 0 for the other types.
std::uint8_t fixed_temporal_size(ColumnType type, std::uint16_t meta) noexcept;
// True for the collations whose text is UTF-8 already and passes through unconverted (utf8mb4,
// utf8mb3, ascii, binary, filename).
bool collation_is_utf8_compatible(std::uint16_t collation) noexcept;

// ---- building blocks (also used by other modules) ----------------------------------------------

// What append_utf8 does with bytes that the charset cannot decode (ill-formed UTF-8, a byte
// iconv refuses, a sequence cut at the end):
//   hex_text  each such byte becomes the four characters \xHH (backslash, 'x', two lowercase hex
//             digits) and the rest goes on. The UTF-8 compatible charsets (utf8mb4, utf8mb3,
//             ascii, binary, filename) pass every well-formed UTF-8 sequence; a charset that
//             glibc's iconv does not know passes ASCII only.
//   refuse    append_utf8 appends nothing and returns false unless every byte is text of the
//             charset: utf8mb4 and utf8mb3 well-formed (utf8mb3 without 4-byte sequences), ascii
//             below 0x80, latin1 always; binary, filename and charsets iconv does not know refuse.
enum class BadBytes : std::uint8_t { hex_text, refuse };

// Text in the charset of MySQL/MariaDB collation `collation` (0 = unknown: utf8mb4) converted to
// UTF-8 and appended to `out` as it is (no quoting, no escaping): the one converter behind every
// text renderer, each of which escapes the result its own way (JSON: append_text_json in
// column_json.h, which escapes as it converts; Canal: as it is; SQL: quoted, or hex when
// refused). latin1 is MySQL's (Windows-1252 with the 5 undefined bytes 81 8d 8f 90 9d mapped to
// the C1 controls, as the server does), converted in place; the charsets that are not UTF-8
// compatible go through iconv. Returns false only under BadBytes::refuse.
bool append_utf8(std::string& out, std::string_view bytes, std::uint16_t collation, BadBytes policy);

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

// Binary DECIMAL (bin2decimal): size in bytes of DECIMAL(precision, scale), 0 when the metadata
// is impossible (precision 1..65, scale <= precision). Inline: the row decoder asks per value.
inline std::size_t decimal_binary_size(int precision, int scale) noexcept {
  // Groups of 9 digits take 4 bytes; a partial group of n digits takes dig2bytes[n].
  constexpr std::uint8_t kDig2Bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  if (precision < 1 || precision > 65 || scale < 0 || scale > precision) return 0;  // 65: DECIMAL_MAX_PRECISION
  const int intg = precision - scale;
  return static_cast<std::size_t>((intg / 9) * 4 + kDig2Bytes[intg % 9] + (scale / 9) * 4 + kDig2Bytes[scale % 9]);
}
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

}  // namespace binlogctl
