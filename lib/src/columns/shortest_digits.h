// The shortest decimal digits that read back as a float or double: what JSON's Python repr
// (integer.cpp) and Canal's Double.toString / Float.toString (canal_values.cpp) are laid out from.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace binlogctl::columns_detail {

// The shortest round-trip digits of |v| (finite, not zero) into `digits` (room for 24), without
// trailing zeros, and the decimal exponent of the first: |v| = d1.d2d3... * 10^e. Returns the
// number of digits. fmt's Dragonbox where fmt exposes it (fmt 9 and 10, as Debian ships), else
// std::to_chars' shortest scientific form (slower in libstdc++ 12). Both give the digits closest
// to the value among the shortest that round-trip.
template <class T>
int shortest_digits_of(T v, char* digits, int& e) {
  if (v < 0) v = -v;
#if defined(FMT_VERSION) && FMT_VERSION >= 90000 && FMT_VERSION < 110000
  const auto dec = fmt::detail::dragonbox::to_decimal(v);
  auto sig = static_cast<std::uint64_t>(dec.significand);
  // The number of digits (from the bit width, corrected by one comparison), then two digits at
  // a time from the right.
  static constexpr std::uint64_t kPow10[20] = {1ull,
                                               10ull,
                                               100ull,
                                               1000ull,
                                               10000ull,
                                               100000ull,
                                               1000000ull,
                                               10000000ull,
                                               100000000ull,
                                               1000000000ull,
                                               10000000000ull,
                                               100000000000ull,
                                               1000000000000ull,
                                               10000000000000ull,
                                               100000000000000ull,
                                               1000000000000000ull,
                                               10000000000000000ull,
                                               100000000000000000ull,
                                               1000000000000000000ull,
                                               10000000000000000000ull};
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  int n = (static_cast<int>(std::bit_width(sig | 1)) * 1233) >> 12;  // floor(log10) or one less
  n += sig >= kPow10[n] ? 1 : 0;
  char* p = digits + n;
  while (sig >= 100) {
    p -= 2;
    std::memcpy(p, kPairs + 2 * (sig % 100), 2);
    sig /= 100;
  }
  if (sig >= 10) {
    p -= 2;
    std::memcpy(p, kPairs + 2 * sig, 2);
  } else {
    *--p = static_cast<char>('0' + sig);
  }
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
