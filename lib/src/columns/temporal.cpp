// DATE, TIME, DATETIME, TIMESTAMP as JSON text: decoded values (ColumnValue; the row formats are
// read by decode_value.h) and MySQL's in-memory packed temporals (binary JSON's opaque values).
//
// The packed int64 (my_time.h): (integer part << 24) + microseconds, with the integer part
//   DATETIME: ((year * 13 + month) << 5 | day) << 17 | hour << 12 | minute << 6 | second
//   TIME:     hour << 12 | minute << 6 | second          (negative values: the packed value < 0)
#include "columns/column_json.h"

#include "decode_value.h"
#include "value_json.h"

#include <algorithm>
#include <cstring>

namespace binlogctl {

namespace {

constexpr std::uint32_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};

// Appends v as at least `width` decimal digits (at most 24), two at a time.
void put_uint(RenderBuf& out, std::uint64_t v, int width) {
  const int n = std::max(decimal_digits(v), std::min(width, 24));
  format_fixed_digits(out.tail(32), v, n);
  out.advance(static_cast<std::size_t>(n));
}

// ".ffffff" cut to fsp digits (nothing for fsp 0).
void put_fraction(RenderBuf& out, std::uint32_t usec, unsigned fsp) {
  if (fsp == 0) return;
  out.push_back('.');
  put_uint(out, usec / kPow10[6 - fsp], static_cast<int>(fsp));
}

void put_date(RenderBuf& out, std::uint64_t y, std::uint64_t m, std::uint64_t d) {
  if (y > 9999 || m > 99 || d > 99) {  // corrupt values: the general path
    put_uint(out, y, 4);
    out.push_back('-');
    put_uint(out, m, 2);
    out.push_back('-');
    put_uint(out, d, 2);
    return;
  }
  char b[10];
  put_two_digits(b, y / 100);
  put_two_digits(b + 2, y % 100);
  b[4] = '-';
  put_two_digits(b + 5, m);
  b[7] = '-';
  put_two_digits(b + 8, d);
  out.append(b, 10);
}

void put_hms(RenderBuf& out, std::uint64_t h, std::uint64_t mi, std::uint64_t s) {
  if (h > 99 || mi > 99 || s > 99) {  // TIME hours up to 838, corrupt values
    put_uint(out, h, 2);
    out.push_back(':');
    put_uint(out, mi, 2);
    out.push_back(':');
    put_uint(out, s, 2);
    return;
  }
  char b[8];
  put_two_digits(b, h);
  b[2] = ':';
  put_two_digits(b + 3, mi);
  b[5] = ':';
  put_two_digits(b + 6, s);
  out.append(b, 8);
}

// "YYYY-MM-DD HH:MM:SS[.f..]" with its quotes, written in one append, when every field has its
// usual width (y <= 9999, the others <= 99; fsp <= 6). False: the caller takes the general path.
bool put_quoted_datetime(RenderBuf& out, std::uint64_t y, std::uint64_t mo, std::uint64_t d, std::uint64_t h,
                         std::uint64_t mi, std::uint64_t s, std::uint32_t usec, unsigned fsp) {
  if (y > 9999 || mo > 99 || d > 99 || h > 99 || mi > 99 || s > 99 || fsp > 6 || usec > 999999) return false;
  char b[28];
  b[0] = '"';
  put_two_digits(b + 1, y / 100);
  put_two_digits(b + 3, y % 100);
  b[5] = '-';
  put_two_digits(b + 6, mo);
  b[8] = '-';
  put_two_digits(b + 9, d);
  b[11] = ' ';
  put_two_digits(b + 12, h);
  b[14] = ':';
  put_two_digits(b + 15, mi);
  b[17] = ':';
  put_two_digits(b + 18, s);
  std::size_t n = 20;
  if (fsp > 0) {
    // all six digits (usec < 10^6), then keep fsp of them
    b[n] = '.';
    put_two_digits(b + n + 1, usec / 10000);
    put_two_digits(b + n + 3, usec / 100 % 100);
    put_two_digits(b + n + 5, usec % 100);
    n += 1 + fsp;
  }
  b[n++] = '"';
  out.append(b, n);
  return true;
}

}  // namespace

// ---- packed (in-memory) forms, also used by binary JSON's opaque temporals --------------------

void append_packed_datetime_text(RenderBuf& out, std::int64_t packed, unsigned fsp,
                                 bool date_only) {
  if (packed < 0) {  // not a valid DATETIME; printed the way TIME_from_longlong_* reads it
    out.push_back('-');
    packed = -packed;
  }
  const auto v = static_cast<std::uint64_t>(packed);
  const auto usec = static_cast<std::uint32_t>(v % (1u << 24));
  const std::uint64_t ymdhms = v >> 24;
  const std::uint64_t ymd = ymdhms >> 17, ym = ymd >> 5, hms = ymdhms % (1u << 17);
  put_date(out, ym / 13, ym % 13, ymd % 32);
  if (date_only) return;
  out.push_back(' ');
  put_hms(out, hms >> 12, (hms >> 6) % 64, hms % 64);
  put_fraction(out, usec % 1000000, fsp);
}

void append_packed_time_text(RenderBuf& out, std::int64_t packed, unsigned fsp) {
  if (packed < 0) {
    out.push_back('-');
    packed = -packed;
  }
  const auto v = static_cast<std::uint64_t>(packed);
  const auto usec = static_cast<std::uint32_t>(v % (1u << 24));
  const std::uint64_t hms = v >> 24;
  put_hms(out, (hms >> 12) % (1u << 10), (hms >> 6) % 64, hms % 64);
  put_fraction(out, usec % 1000000, fsp);
}

namespace {
// "YYYY-MM-DD HH:MM:SS[.f]" (quoted) of a TIMESTAMP: seconds since the epoch (0 = the zero
// timestamp) shifted by tz_offset, and microseconds cut to fsp digits.
void put_timestamp(RenderBuf& out, std::uint64_t secs, std::uint32_t usec, unsigned fsp,
                   std::int32_t tz_offset) {
  if (secs == 0) {
    out.push_back('"');
    out.append("0000-00-00 00:00:00", 19);
  } else {
    const civil::DaySeconds t = civil::split_days(static_cast<std::int64_t>(secs) + tz_offset);
    const civil::Date date = civil::from_days(t.days);
    const unsigned m = date.month, d = date.day;
    const auto s = static_cast<std::uint64_t>(t.seconds);
    const auto yy = static_cast<std::uint64_t>(date.year < 0 ? 0 : date.year);
    if (put_quoted_datetime(out, yy, m, d, s / 3600, s / 60 % 60, s % 60, usec, fsp)) return;
    out.push_back('"');
    put_date(out, yy, m, d);
    out.push_back(' ');
    put_hms(out, s / 3600, s / 60 % 60, s % 60);
  }
  put_fraction(out, usec, fsp);
  out.push_back('"');
}

// "YYYY-MM-DD HH:MM:SS[.f]" (quoted) of DATETIME parts, in one append when every field has its
// usual width.
void put_datetime(RenderBuf& out, const TemporalParts& t) {
  if (put_quoted_datetime(out, t.year, t.month, t.day, t.hour, t.minute, t.second, t.usec, t.fsp)) return;
  out.push_back('"');
  put_date(out, t.year, t.month, t.day);
  out.push_back(' ');
  put_hms(out, t.hour, t.minute, t.second);
  put_fraction(out, t.usec, t.fsp);
  out.push_back('"');
}
}  // namespace

// ---- decoded values (ColumnValue) ----------------------------------------------------------------

void value_detail::render_temporal_json(RenderBuf& out, const ColumnValue& v, std::int32_t tz_offset_seconds) {
  const TemporalParts& t = v.t;
  switch (v.kind) {
    case ValueKind::date:
      out.push_back('"');
      put_date(out, t.year, t.month, t.day);
      out.push_back('"');
      return;
    case ValueKind::time:  // hours up to 838 (more when corrupt)
      out.push_back('"');
      if (t.negative) out.push_back('-');
      put_hms(out, t.hour, t.minute, t.second);
      put_fraction(out, t.usec, t.fsp);
      out.push_back('"');
      return;
    case ValueKind::timestamp:
      // The parts are UTC (the zero timestamp's all zero): the same text as put_timestamp's
      // without a shift.
      if (tz_offset_seconds != 0) {
        put_timestamp(out, v.u, t.usec, t.fsp, tz_offset_seconds);
        return;
      }
      put_datetime(out, t);
      return;
    case ValueKind::datetime:
      put_datetime(out, t);
      return;
    default:
      return;
  }
}

// ---- MariaDB's pre-10.0 high-precision formats (columns.h) --------------------------------------

namespace {
constexpr std::uint8_t kTimeHiresBytes[7] = {3, 4, 4, 5, 5, 5, 6};
constexpr std::uint8_t kDatetimeHiresBytes[7] = {5, 6, 6, 7, 7, 7, 8};
constexpr std::uint8_t kSecPartBytes[7] = {0, 1, 1, 2, 2, 3, 3};
}  // namespace

std::size_t legacy_hires_size(ColumnType t, unsigned fsp) noexcept {
  if (fsp < 1 || fsp > 6) return 0;
  switch (t) {
    case ColumnType::time:
      return kTimeHiresBytes[fsp];
    case ColumnType::datetime:
      return kDatetimeHiresBytes[fsp];
    case ColumnType::timestamp:
      return 4u + kSecPartBytes[fsp];
    default:
      return 0;
  }
}

std::uint8_t fixed_temporal_size(ColumnType type, std::uint16_t meta) noexcept {
  const unsigned fsp = meta;
  switch (type) {
    case ColumnType::date:
    case ColumnType::newdate:
      return 3;
    case ColumnType::timestamp:
      return meta == 0 ? 4 : 0;  // meta != 0: MariaDB's old high-precision format
    case ColumnType::time2:
      return fsp <= 6 ? static_cast<std::uint8_t>(3 + (fsp + 1) / 2) : 0;
    case ColumnType::timestamp2:
      return fsp <= 6 ? static_cast<std::uint8_t>(4 + (fsp + 1) / 2) : 0;
    case ColumnType::datetime2:
      return fsp <= 6 ? static_cast<std::uint8_t>(5 + (fsp + 1) / 2) : 0;
    default:
      return 0;
  }
}

}  // namespace binlogctl
