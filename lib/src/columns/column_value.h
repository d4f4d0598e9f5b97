// One column value of a row image as a typed view: what the value is, decoded once from the
// column's ColumnInfo and the row bytes, for every renderer (the JSON renderer of convert
// --format json and append_value_json, the SQL renderer of convert --format sql and --flashback,
// the Canal renderer; later stats): one decoder, each renderer writes its own text.
//
// The view borrows: `bytes` points into the row image (or the column's ENUM/SET names stay in
// the ColumnInfo), nothing is allocated per value. Every read goes through the ByteReader
// (bounds-checked); a length prefix that promises more bytes than remain fails before anything
// is read. The formats are those column_json.h documents for append_value_json (decode_value.h
// reads them).
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/result.h>

#include "columns/column_json.h"

#include <cstdint>

namespace binlogctl {

enum class ValueKind : std::uint8_t {
  null,          // the NULL type code (never stored by a server; NULLs are in the null bitmap)
  signed_int,    // TINY SHORT INT24 LONG LONGLONG: i
  unsigned_int,  // the same, UNSIGNED: u
  float32,       // FLOAT: f
  float64,       // DOUBLE: d
  decimal,       // NEWDECIMAL: bytes = the binary decimal, precision/scale
  decimal_text,  // pre-5.0 DECIMAL: bytes = the number as text (left padding removed)
  bit,           // BIT(n): u = the value, bits = n
  year,          // YEAR: u = 0 or 1901..2155
  date,          // DATE: t (year, month, day); zero dates are all zero
  time,          // TIME / TIME2: t (negative, hour up to 838+, minute, second, usec, fsp)
  datetime,      // DATETIME / DATETIME2: t
  timestamp,     // TIMESTAMP / TIMESTAMP2: u = seconds since the epoch (0 = the zero
                 // timestamp), t = the same time in UTC (all zero for the zero timestamp)
  text,          // CHAR VARCHAR TEXT with a non-binary collation: bytes in `charset`
  binary,        // BINARY VARBINARY BLOB (collation 63): bytes; pad_to = BINARY(n)'s n, else 0
  enum_index,    // ENUM: u = 1-based index (0 = the error value '')
  set_bits,      // SET: u = the member bitmap
  json,          // JSON: bytes = MySQL binary JSON (MariaDB's JSON is text)
  geometry,      // GEOMETRY: bytes = 4-byte little-endian SRID + WKB
  vector,        // VECTOR: bytes = float32 little-endian values
  uuid,          // MariaDB UUID / INET4 / INET6 (ColumnInfo::hint): bytes, possibly shorter
  inet4,         //   than the type (the binlog strips trailing zero bytes of BINARY columns)
  inet6,
};

struct TemporalParts {
  bool negative = false;  // TIME only
  std::uint32_t year = 0, month = 0, day = 0;
  std::uint32_t hour = 0, minute = 0, second = 0;
  std::uint32_t usec = 0;  // microseconds
  std::uint8_t fsp = 0;    // fractional digits of the column (0..6)
};

struct ColumnValue {
  ValueKind kind = ValueKind::null;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  float f = 0;
  Bytes bytes;                // into the row image
  std::uint64_t offset = 0;   // absolute offset of the value (of `bytes` for the string family)
  TemporalParts t;
  std::uint16_t charset = 0;  // text: the column's collation id (0 = unknown: utf8mb4)
  std::uint16_t pad_to = 0;   // binary: BINARY(n)'s n (the binlog strips trailing zeros)
  std::uint8_t precision = 0, scale = 0;  // decimal
  std::uint8_t bits = 0;                  // bit
};

// Values no server writes that a renderer may take rather than fail on, because it always has
// (issue #13 moves the Canal renderer onto this decoder and changes nothing a user sees; one
// policy for damaged values for every consumer is a later issue's). Bits, or-ed:
enum DecodeLeniency : unsigned {
  kDecodeStrict = 0,
  // TIMESTAMP(fsp) / TIMESTAMP2 fraction bytes read unsigned and scaled to microseconds modulo
  // 10^6, where the strict decoder fails with "TIMESTAMP fraction out of range".
  kDecodeWrapTimestampFraction = 1u << 0,
  // ENUM of 3..8 bytes (the size of a SET) read as its little-endian number, where the strict
  // decoder fails with "ENUM size not 1 or 2".
  kDecodeWideEnum = 1u << 1,
};

// Decodes one (non-NULL) value at the reader's position into `v` and advances past it. The
// errors of append_value_json (Errc::truncated, Errc::bad_value, Errc::bad_length at the
// offending field's offset), but those `leniency` waives and those of content it does not look
// into: a NEWDECIMAL's digit groups and a JSON column's binary document are checked by whoever
// renders them (append_value_json below does). On error `v` is unspecified and the reader's
// position too.
Status decode_column_value(const ColumnInfo& col, ByteReader& r, ColumnValue& v,
                           unsigned leniency = kDecodeStrict) noexcept;

// Appends the JSON text of `v`, a value of `col` decoded strictly (kDecodeStrict), to `out`: the
// text column_json.h documents for append_value_json, which is decode_column_value then this. `col`
// gives what the value does not carry: ENUM/SET names, FLOAT/DOUBLE decimals. Errors:
// Errc::bad_value for a NEWDECIMAL digit group over its digits (at v.offset) and those of a
// binary JSON document (append_json_binary); `out` is then as it was.
Status append_value_json(const ColumnInfo& col, const ColumnValue& v, RenderBuf& out, const RenderOptions& opts = {});
inline Status append_value_json(const ColumnInfo& col, const ColumnValue& v, std::string& out,
                                const RenderOptions& opts = {}) {
  RenderBuf b(out);
  return append_value_json(col, v, b, opts);
}

}  // namespace binlogctl
