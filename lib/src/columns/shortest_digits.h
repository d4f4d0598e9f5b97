// The shortest decimal digits that read back as a float or double: what JSON's Python repr
// (integer.cpp) and Canal's Double.toString / Float.toString (canal_values.cpp) are laid out from.
#pragma once

#include "render/json_out.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstring>

namespace binlogctl::columns_detail {

// The shortest round-trip digits of |v| (finite) into `digits` (room for 24; what follows the
// digits is left as it was), without trailing zeros, and the decimal exponent of the first:
// |v| = d1.d2d3... * 10^e (zero: "0", e = 0). Returns the number of digits. fmt's Dragonbox
// where fmt exposes it (fmt 9 and 10, as Debian ships), else std::to_chars' shortest scientific
// form (slower in libstdc++ 12). Both give the digits closest to the value among the shortest
// that round-trip.
template <class T>
int shortest_digits_of(T v, char* digits, int& e) {
  if (v < 0) v = -v;
#if defined(FMT_VERSION) && FMT_VERSION >= 90000 && FMT_VERSION < 110000
  const auto dec = fmt::detail::dragonbox::to_decimal(v);
  auto sig = static_cast<std::uint64_t>(dec.significand);
  if (sig == 0) {  // zero
    digits[0] = '0';
    e = 0;
    return 1;
  }
  int n = decimal_digits(sig);
  format_u64_backward(digits + n, sig);
  e = dec.exponent + n - 1;
  while (n > 1 && digits[n - 1] == '0') --n;
  return n;
#else
  char sci[48];
  const auto res = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  const char* p = sci;
  const char* const end = res.ptr;
  int nd = 0;
  digits[nd++] = *p++;
  if (p < end && *p == '.')
    for (++p; p < end && *p != 'e' && nd < 24; ++p) digits[nd++] = *p;
  while (nd > 1 && digits[nd - 1] == '0') --nd;
  e = 0;
  if (p < end) {
    ++p;  // 'e'
    const bool neg_exp = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    for (; p < end; ++p) e = e * 10 + (*p - '0');
    if (neg_exp) e = -e;
  }
  return nd;
#endif
}

}  // namespace binlogctl::columns_detail
