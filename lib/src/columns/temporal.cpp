// DATE, TIME, DATETIME, TIMESTAMP, YEAR in their pre-5.6 and 5.6+ ("2") row formats.
//
// 5.6+ formats (my_time.cc): big-endian, sign-offset integers followed by (fsp + 1) / 2 bytes of
// fraction. Both TIME2 and DATETIME2 decode to MySQL's in-memory "packed" int64:
// (integer part << 24) + microseconds, with the integer part
//   DATETIME: ((year * 13 + month) << 5 | day) << 17 | hour << 12 | minute << 6 | second
//   TIME:     hour << 12 | minute << 6 | second          (negative values: the packed value < 0)
#include <binlogctl/columns.h>

namespace binlogctl {

namespace {

constexpr std::int64_t kTimefIntOfs = 0x800000;            // TIMEF_INT_OFS
constexpr std::int64_t kTimefOfs = 0x800000000000LL;       // TIMEF_OFS
constexpr std::int64_t kDatetimefIntOfs = 0x8000000000LL;  // DATETIMEF_INT_OFS
constexpr std::uint32_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};

// Appends v as at least `width` decimal digits.
void put_uint(JsonBuf& out, std::uint64_t v, int width) {
  char tmp[32];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n < width && n < 24) tmp[n++] = '0';
  char rev[32];
  for (int i = 0; i < n; ++i) rev[i] = tmp[n - 1 - i];
  copy_short(out.tail(32), rev, static_cast<std::size_t>(n));
  out.advance(static_cast<std::size_t>(n));
}

// ".ffffff" cut to fsp digits (nothing for fsp 0).
void put_fraction(JsonBuf& out, std::uint32_t usec, unsigned fsp) {
  if (fsp == 0) return;
  out.push_back('.');
  put_uint(out, usec / kPow10[6 - fsp], static_cast<int>(fsp));
}

// Two digits of v (< 100) at p.
inline void two_digits(char* p, std::uint64_t v) {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
}

void put_date(JsonBuf& out, std::uint64_t y, std::uint64_t m, std::uint64_t d) {
  if (y > 9999 || m > 99 || d > 99) {  // corrupt values: the general path
    put_uint(out, y, 4);
    out.push_back('-');
    put_uint(out, m, 2);
    out.push_back('-');
    put_uint(out, d, 2);
    return;
  }
  char b[10];
  two_digits(b, y / 100);
  two_digits(b + 2, y % 100);
  b[4] = '-';
  two_digits(b + 5, m);
  b[7] = '-';
  two_digits(b + 8, d);
  out.append(b, 10);
}

void put_hms(JsonBuf& out, std::uint64_t h, std::uint64_t mi, std::uint64_t s) {
  if (h > 99 || mi > 99 || s > 99) {  // TIME hours up to 838, corrupt values
    put_uint(out, h, 2);
    out.push_back(':');
    put_uint(out, mi, 2);
    out.push_back(':');
    put_uint(out, s, 2);
    return;
  }
  char b[8];
  two_digits(b, h);
  b[2] = ':';
  two_digits(b + 3, mi);
  b[5] = ':';
  two_digits(b + 6, s);
  out.append(b, 8);
}

// "YYYY-MM-DD HH:MM:SS[.f..]" with its quotes, written in one append, when every field has its
// usual width (y <= 9999, the others <= 99; fsp <= 6). False: the caller takes the general path.
bool put_quoted_datetime(JsonBuf& out, std::uint64_t y, std::uint64_t mo, std::uint64_t d, std::uint64_t h,
                         std::uint64_t mi, std::uint64_t s, std::uint32_t usec, unsigned fsp) {
  if (y > 9999 || mo > 99 || d > 99 || h > 99 || mi > 99 || s > 99 || fsp > 6 || usec > 999999) return false;
  char b[28];
  b[0] = '"';
  two_digits(b + 1, y / 100);
  two_digits(b + 3, y % 100);
  b[5] = '-';
  two_digits(b + 6, mo);
  b[8] = '-';
  two_digits(b + 9, d);
  b[11] = ' ';
  two_digits(b + 12, h);
  b[14] = ':';
  two_digits(b + 15, mi);
  b[17] = ':';
  two_digits(b + 18, s);
  std::size_t n = 20;
  if (fsp > 0) {
    // all six digits (usec < 10^6), then keep fsp of them
    b[n] = '.';
    two_digits(b + n + 1, usec / 10000);
    two_digits(b + n + 3, usec / 100 % 100);
    two_digits(b + n + 5, usec % 100);
    n += 1 + fsp;
  }
  b[n++] = '"';
  out.append(b, n);
  return true;
}

// Howard Hinnant's civil_from_days: days since 1970-01-01 -> proleptic Gregorian date.
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
}

Status bad_fsp(std::uint64_t at) {
  return DecodeError{Errc::bad_value, at, "fractional second precision over 6"};
}

// Fraction bytes of TIMESTAMP2/DATETIME2/TIME2 (signed, big-endian), scaled to microseconds.
std::int64_t read_fraction(ByteReader& r, unsigned fsp) {
  switch (fsp) {
    case 1:
    case 2:
      return static_cast<std::int8_t>(r.be_n(1)) * 10000LL;
    case 3:
    case 4:
      return static_cast<std::int16_t>(r.be_n(2)) * 100LL;
    case 5:
    case 6: {
      auto v = static_cast<std::int64_t>(r.be_n(3));
      return v >= 0x800000 ? v - 0x1000000 : v;
    }
    default:
      return 0;
  }
}

}  // namespace

// ---- packed (in-memory) forms, also used by binary JSON's opaque temporals --------------------

void append_packed_datetime_text(JsonBuf& out, std::int64_t packed, unsigned fsp,
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

void append_packed_time_text(JsonBuf& out, std::int64_t packed, unsigned fsp) {
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

// ---- row formats -------------------------------------------------------------------------------

// DATE / NEWDATE: 3 bytes little-endian, day 5 bits | month 4 bits | year 15 bits.
Status append_date_json(JsonBuf& out, ByteReader& r) {
  auto v = static_cast<std::uint32_t>(r.le_n(3));
  if (!r.ok()) return r.error();
  out.push_back('"');
  put_date(out, v >> 9, (v >> 5) & 15, v & 31);
  out.push_back('"');
  return {};
}

// Pre-5.6 TIME: 3 bytes little-endian signed, the decimal number [-]HHMMSS.
Status append_time_json(JsonBuf& out, ByteReader& r) {
  auto u = static_cast<std::int32_t>(r.le_n(3));
  if (!r.ok()) return r.error();
  std::int32_t v = u >= 0x800000 ? u - 0x1000000 : u;
  out.push_back('"');
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  const auto a = static_cast<std::uint32_t>(v);
  put_hms(out, a / 10000, a / 100 % 100, a % 100);
  out.push_back('"');
  return {};
}

// Pre-5.6 DATETIME: 8 bytes little-endian, the decimal number YYYYMMDDhhmmss.
Status append_datetime_json(JsonBuf& out, ByteReader& r) {
  std::uint64_t v = r.u64();
  if (!r.ok()) return r.error();
  const std::uint64_t date = v / 1000000, time = v % 1000000;
  out.push_back('"');
  put_date(out, date / 10000, date / 100 % 100, date % 100);
  out.push_back(' ');
  put_hms(out, time / 10000, time / 100 % 100, time % 100);
  out.push_back('"');
  return {};
}

namespace {
// "YYYY-MM-DD HH:MM:SS[.f]" (quoted) of a TIMESTAMP: seconds since the epoch (0 = the zero
// timestamp) shifted by tz_offset, and microseconds cut to fsp digits.
void put_timestamp(JsonBuf& out, std::uint64_t secs, std::uint32_t usec, unsigned fsp,
                   std::int32_t tz_offset) {
  if (secs == 0) {
    out.push_back('"');
    out.append("0000-00-00 00:00:00", 19);
  } else {
    const std::int64_t t = static_cast<std::int64_t>(secs) + tz_offset;
    std::int64_t days = t / 86400, rem = t % 86400;
    if (rem < 0) {
      rem += 86400;
      --days;
    }
    std::int64_t y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(days, y, m, d);
    const auto s = static_cast<std::uint64_t>(rem);
    const auto yy = static_cast<std::uint64_t>(y < 0 ? 0 : y);
    if (put_quoted_datetime(out, yy, m, d, s / 3600, s / 60 % 60, s % 60, usec, fsp)) return;
    out.push_back('"');
    put_date(out, yy, m, d);
    out.push_back(' ');
    put_hms(out, s / 3600, s / 60 % 60, s % 60);
  }
  put_fraction(out, usec, fsp);
  out.push_back('"');
}
}  // namespace

// TIMESTAMP (4 bytes LE seconds) and TIMESTAMP2 (4 bytes BE seconds + fraction).
Status append_timestamp_json(JsonBuf& out, ByteReader& r, bool v2, unsigned fsp,
                             std::int32_t tz_offset) {
  const std::uint64_t at = r.offset();
  if (fsp > 6) return bad_fsp(at);
  std::uint64_t secs = v2 ? r.be_n(4) : r.le_n(4);
  std::int64_t usec = v2 ? read_fraction(r, fsp) : 0;
  if (!r.ok()) return r.error();
  if (usec < 0 || usec > 999999)
    return DecodeError{Errc::bad_value, at, "TIMESTAMP fraction out of range"};
  put_timestamp(out, secs, static_cast<std::uint32_t>(usec), fsp, tz_offset);
  return {};
}

// DATETIME2: 5 bytes BE (integer part + DATETIMEF_INT_OFS) + fraction.
Status append_datetime2_json(JsonBuf& out, ByteReader& r, unsigned fsp) {
  const std::uint64_t at = r.offset();
  if (fsp > 6) return bad_fsp(at);
  const std::int64_t intpart = static_cast<std::int64_t>(r.be_n(5)) - kDatetimefIntOfs;
  const std::int64_t frac = read_fraction(r, fsp);
  if (!r.ok()) return r.error();
  const std::int64_t packed = intpart * (std::int64_t{1} << 24) + frac;
  if (packed < 0 || frac < 0 || frac > 999999)
    return DecodeError{Errc::bad_value, at, "DATETIME2 value out of range"};
  const auto v = static_cast<std::uint64_t>(packed);
  const std::uint64_t ymdhms = v >> 24, ymd = ymdhms >> 17, ym = ymd >> 5, hms = ymdhms % (1u << 17);
  if (put_quoted_datetime(out, ym / 13, ym % 13, ymd % 32, hms >> 12, (hms >> 6) % 64, hms % 64,
                          static_cast<std::uint32_t>(frac), fsp))
    return {};
  out.push_back('"');
  append_packed_datetime_text(out, packed, fsp, false);
  out.push_back('"');
  return {};
}

// TIME2: 3 bytes BE (integer part + TIMEF_INT_OFS) + fraction; fsp 5-6 as one 6-byte integer.
// Negative values with a fraction store the fraction "reversed" (my_time_packed_from_binary).
Status append_time2_json(JsonBuf& out, ByteReader& r, unsigned fsp) {
  const std::uint64_t at = r.offset();
  if (fsp > 6) return bad_fsp(at);
  std::int64_t packed = 0;
  if (fsp >= 5) {
    packed = static_cast<std::int64_t>(r.be_n(6)) - kTimefOfs;
  } else {
    std::int64_t intpart = static_cast<std::int64_t>(r.be_n(3)) - kTimefIntOfs;
    std::int64_t frac = 0;
    if (fsp >= 1) {
      const std::int64_t unit = fsp <= 2 ? 0x100 : 0x10000;
      frac = static_cast<std::int64_t>(r.be_n(fsp <= 2 ? 1 : 2));
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= unit;
      }
      frac *= fsp <= 2 ? 10000 : 100;
    }
    packed = intpart * (std::int64_t{1} << 24) + frac;
  }
  if (!r.ok()) return r.error();
  const std::int64_t mag = packed < 0 ? -packed : packed;
  if (mag % (std::int64_t{1} << 24) > 999999)
    return DecodeError{Errc::bad_value, at, "TIME2 fraction out of range"};
  out.push_back('"');
  append_packed_time_text(out, packed, fsp);
  out.push_back('"');
  return {};
}

// ---- MariaDB's pre-10.0 high-precision formats (columns.h) --------------------------------------

namespace {
constexpr std::uint8_t kTimeHiresBytes[7] = {3, 4, 4, 5, 5, 5, 6};
constexpr std::uint8_t kDatetimeHiresBytes[7] = {5, 6, 6, 7, 7, 7, 8};
constexpr std::uint8_t kSecPartBytes[7] = {0, 1, 1, 2, 2, 3, 3};
constexpr std::int64_t kTimeMaxSecondsPlusOne = 3020400;  // 839:00:00
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

Status append_time_hires_json(JsonBuf& out, ByteReader& r, unsigned fsp) {
  const std::uint64_t at = r.offset();
  if (fsp < 1 || fsp > 6) return bad_fsp(at);
  const std::uint64_t stored = r.be_n(kTimeHiresBytes[fsp]);
  if (!r.ok()) return r.error();
  // At most 6 bytes: the subtraction cannot overflow.
  std::int64_t v = static_cast<std::int64_t>(stored) - kTimeMaxSecondsPlusOne * kPow10[fsp];
  out.push_back('"');
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  const auto mag = static_cast<std::uint64_t>(v);
  const std::uint64_t frac = mag % kPow10[fsp], secs = mag / kPow10[fsp];
  put_hms(out, secs / 3600, secs / 60 % 60, secs % 60);
  put_fraction(out, static_cast<std::uint32_t>(frac * kPow10[6 - fsp]), fsp);
  out.push_back('"');
  return {};
}

Status append_datetime_hires_json(JsonBuf& out, ByteReader& r, unsigned fsp) {
  const std::uint64_t at = r.offset();
  if (fsp < 1 || fsp > 6) return bad_fsp(at);
  std::uint64_t v = r.be_n(kDatetimeHiresBytes[fsp]);
  if (!r.ok()) return r.error();
  const std::uint64_t frac = v % kPow10[fsp];
  v /= kPow10[fsp];
  const std::uint64_t sec = v % 60, min = v / 60 % 60, hour = v / 3600 % 24;
  v /= 86400;
  const std::uint64_t day = v % 32, month = v / 32 % 13, year = v / 32 / 13;
  out.push_back('"');
  put_date(out, year, month, day);
  out.push_back(' ');
  put_hms(out, hour, min, sec);
  put_fraction(out, static_cast<std::uint32_t>(frac * kPow10[6 - fsp]), fsp);
  out.push_back('"');
  return {};
}

Status append_timestamp_hires_json(JsonBuf& out, ByteReader& r, unsigned fsp,
                                   std::int32_t tz_offset) {
  const std::uint64_t at = r.offset();
  if (fsp < 1 || fsp > 6) return bad_fsp(at);
  const std::uint64_t secs = r.be_n(4);
  const std::uint64_t frac = r.be_n(kSecPartBytes[fsp]);
  if (!r.ok()) return r.error();
  if (frac >= kPow10[fsp]) return DecodeError{Errc::bad_value, at, "TIMESTAMP fraction out of range"};
  put_timestamp(out, secs, static_cast<std::uint32_t>(frac * kPow10[6 - fsp]), fsp, tz_offset);
  return {};
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
