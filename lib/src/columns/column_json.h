// The JSON rendering of column values (the value rules of `binlogctl convert --format json`),
// on the column model of columns.h, and the JSON building blocks other renderers reuse (text in a
// collation's charset as a JSON string, numbers, binary as base64/hex, MariaDB's UUID/INET texts).
//
// Nothing here throws or allocates per value once the caller's output buffer has grown. On
// failure append_value_json restores the output to its size at entry.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/columns.h>
#include <binlogctl/result.h>

#include "render/json_out.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

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
//   TIME DATETIME TIMESTAMP with    MariaDB's pre-10.0 high-precision formats (legacy_hires_size): as
//     meta = fsp 1..6               TIME2 / DATETIME2 / TIMESTAMP2 with that fsp (columns.h)
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
Status append_value_json(const ColumnInfo& col, ByteReader& row, RenderBuf& out,
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
inline void append_json_string(RenderBuf& out, std::string_view s) { append_json_quoted(out, s); }
// Same escaping without the surrounding quotes.
inline void append_json_string_body(RenderBuf& out, std::string_view s) { append_json_escaped(out, s); }

// Text in the charset of MySQL/MariaDB collation `collation` (0 = unknown: utf8mb4), converted to
// UTF-8 by append_utf8 (columns.h) with BadBytes::hex_text and appended as a quoted JSON string:
// exactly append_json_string of append_utf8's result, written in one pass (bytes the charset
// cannot decode come out as `\\xHH` like invalid UTF-8 above). Collation 63 (binary) is treated
// like utf8mb4 here.
void append_text_json(RenderBuf& out, std::string_view bytes, std::uint16_t collation);

// Quoted JSON string of binary data per RenderOptions::binary_as.
void append_binary_json(RenderBuf& out, Bytes b, BinaryAs how);

// Canonical text (no quotes) of MariaDB's UUID (8-4-4-4-12 lowercase hex of the 16 bytes in binlog
// order), INET4 (dotted quad) and INET6 (RFC 5952, as inet_ntop: longest run of >= 2 zero groups
// compressed to "::", IPv4-mapped ::ffff:a.b.c.d). Shorter inputs (the binlog strips trailing zero
// bytes of BINARY columns) are zero-padded; longer ones are cut to the type's size.
void append_uuid_text(RenderBuf& out, Bytes b);
void append_inet4_text(RenderBuf& out, Bytes b);
void append_inet6_text(RenderBuf& out, Bytes b);

// JSON numbers for floating-point values: shortest round-trip digits; integral values get ".0"
// (Python repr); NaN and infinities are written as null.
void append_double_json(RenderBuf& out, double v);
void append_float_json(RenderBuf& out, float v);
// Fixed-point with `decimals` (0..30) digits after the point, exactly rounded, as the server
// prints FLOAT(M,D)/DOUBLE(M,D) columns: 1.5 with 3 decimals -> 1.500. NaN/Inf -> null.
void append_fixed_json(RenderBuf& out, double v, int decimals);

// Decodes a binary DECIMAL(precision, scale) from `r` and appends its text without quotes
// ("-12.340"). Errc::bad_value for impossible metadata or digit groups over 999999999.
Status append_decimal_text(RenderBuf& out, int precision, int scale, ByteReader& r);

// MySQL binary JSON (the JSON column format, json_binary.cc) as compact JSON text. `base_offset` is
// the absolute offset of doc[0], for error offsets. An empty document renders as null.
Status append_json_binary(RenderBuf& out, Bytes doc, std::uint64_t base_offset);

// CHAR/VARCHAR text whose bytes append_value_json writes out as they are (escaped): a UTF-8
// compatible charset, no hint; the size of its length prefix (1 or 2), else 0. The JSON row
// renderer's plan (rows.h JsonRowPlan) copies such values without decoding them.
std::uint8_t utf8_text_prefix(const ColumnInfo& col) noexcept;

// MySQL's in-memory packed temporals (my_time.h MY_PACKED_TIME_*), as text without quotes:
// "YYYY-MM-DD[ HH:MM:SS[.f]]" / "[-]HH:MM:SS[.f]" with fsp (0..6) fraction digits.
void append_packed_datetime_text(RenderBuf& out, std::int64_t packed, unsigned fsp,
                                 bool date_only);
void append_packed_time_text(RenderBuf& out, std::int64_t packed, unsigned fsp);

// ---- the same renderers appending to a std::string (tests, Canal, info) ------------------------
// They borrow the string through a RenderBuf; the hot paths write to a RenderBuf directly.
inline Status append_value_json(const ColumnInfo& col, ByteReader& row, std::string& out,
                                const RenderOptions& opts = {}) {
  RenderBuf b(out);
  return append_value_json(col, row, b, opts);
}
inline void append_json_string(std::string& out, std::string_view s) { append_json_quoted(out, s); }
inline void append_json_string_body(std::string& out, std::string_view s) { append_json_escaped(out, s); }
inline void append_text_json(std::string& out, std::string_view bytes, std::uint16_t collation) {
  RenderBuf b(out);
  append_text_json(b, bytes, collation);
}
inline void append_binary_json(std::string& out, Bytes bytes, BinaryAs how) {
  RenderBuf b(out);
  append_binary_json(b, bytes, how);
}
inline void append_inet6_text(std::string& out, Bytes bytes) {
  RenderBuf b(out);
  append_inet6_text(b, bytes);
}
inline void append_double_json(std::string& out, double v) {
  RenderBuf b(out);
  append_double_json(b, v);
}
inline void append_float_json(std::string& out, float v) {
  RenderBuf b(out);
  append_float_json(b, v);
}
inline Status append_decimal_text(std::string& out, int precision, int scale, ByteReader& r) {
  RenderBuf b(out);
  return append_decimal_text(b, precision, scale, r);
}
inline Status append_json_binary(std::string& out, Bytes doc, std::uint64_t base_offset) {
  RenderBuf b(out);
  return append_json_binary(b, doc, base_offset);
}
inline void append_packed_datetime_text(std::string& out, std::int64_t packed, unsigned fsp, bool date_only) {
  RenderBuf b(out);
  append_packed_datetime_text(b, packed, fsp, date_only);
}
inline void append_packed_time_text(std::string& out, std::int64_t packed, unsigned fsp) {
  RenderBuf b(out);
  append_packed_time_text(b, packed, fsp);
}

}  // namespace binlogctl
