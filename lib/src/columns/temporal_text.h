// The text of a typed temporal value (column_value.h TemporalParts) as the servers print it,
// written into a caller's buffer: what the Canal renderer and the SQL renderer share.
//   put_date_text   YYYY-MM-DD                  (at most 10 + 3 x 8 characters)
//   put_time_text   HH:MM:SS[.f...]             (no sign: the caller writes '-' for a negative
//                                                TIME; at most 3 x 10 + 2 + 7 characters)
// Fields out of their usual range (a damaged value) come out with all their digits, never cut.
// The fraction has fsp digits (1..6) of usec (< 1000000), as the decoder gives them.
#pragma once

#include "columns/column_value.h"
#include "render/json_out.h"

#include <cstdint>
#include <cstring>

namespace binlogctl::temporal_text {

inline char* put2(char* p, std::uint32_t v) noexcept {  // v < 100
  put_two_digits(p, v);
  return p + 2;
}
// v as at least `width` decimal digits.
inline char* put_min(char* p, std::uint64_t v, int width) noexcept {
  if (width == 2 && v < 100) return put2(p, static_cast<std::uint32_t>(v));
  int n = decimal_digits(v);
  if (n < width) n = width;
  format_fixed_digits(p, v, n);
  return p + n;
}
// ".ffffff" cut to fsp digits; nothing for fsp 0 (or out of range).
inline char* put_fraction(char* p, std::uint32_t usec, unsigned fsp) noexcept {
  if (fsp == 0 || fsp > 6) return p;
  *p++ = '.';
  char d[6];
  usec %= 1000000;
  put2(d, usec / 10000);
  put2(d + 2, usec / 100 % 100);
  put2(d + 4, usec % 100);
  std::memcpy(p, d, fsp);
  return p + fsp;
}
// Every field in its usual width (year <= 9999, the others <= 99): every value a server writes.
inline bool usual_widths(const TemporalParts& t) noexcept {
  return t.year <= 9999 && (t.month | t.day | t.hour | t.minute | t.second) < 100;
}

}  // namespace binlogctl::temporal_text

namespace binlogctl {

inline char* put_date_text(char* p, const TemporalParts& t) noexcept {
  using namespace temporal_text;
  if (usual_widths(t)) {
    p = put2(p, t.year / 100);
    p = put2(p, t.year % 100);
    p[0] = '-';
    put2(p + 1, t.month);
    p[3] = '-';
    put2(p + 4, t.day);
    return p + 6;
  }
  p = put_min(p, t.year, 4);
  *p++ = '-';
  p = put_min(p, t.month, 2);
  *p++ = '-';
  return put_min(p, t.day, 2);
}

inline char* put_time_text(char* p, const TemporalParts& t) noexcept {
  using namespace temporal_text;
  if ((t.hour | t.minute | t.second) < 100) {
    put2(p, t.hour);
    p[2] = ':';
    put2(p + 3, t.minute);
    p[5] = ':';
    put2(p + 6, t.second);
    p += 8;
  } else {
    p = put_min(p, t.hour, 2);
    *p++ = ':';
    p = put_min(p, t.minute, 2);
    *p++ = ':';
    p = put_min(p, t.second, 2);
  }
  return put_fraction(p, t.usec, t.fsp);
}

}  // namespace binlogctl
