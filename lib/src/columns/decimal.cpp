// Binary DECIMAL (NEWDECIMAL): strings/decimal.cc's bin2decimal + decimal2string, bounds-checked.
//
// Layout: the integer part's digits, then the fraction's, each in groups of 9 decimal digits
// stored as 4-byte big-endian integers; a partial group (fewer than 9 digits) takes
// dig2bytes[digits] bytes and comes first in the integer part, last in the fraction. The sign bit
// (0x80 of the first byte) is flipped on store; negative values have every byte inverted.
#include "columns/column_json.h"
#include "render/json_out.h"

#include "value_json.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace binlogctl {

namespace {

constexpr int kDigitsPerGroup = 9;
constexpr int kDig2Bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::uint32_t kPow10[10] = {1,      10,      100,      1000,      10000,
                                      100000, 1000000, 10000000, 100000000, 1000000000};
constexpr int kMaxPrecision = 65;  // DECIMAL_MAX_PRECISION (MySQL and MariaDB)

// put_decimal_digits for a value of at most two integer groups (intg digits, 0..18) and one
// fraction group (scale digits, 0..9) in at most 8 bytes: `x` its `size` bytes big-endian, the
// last `fb` of them the fraction's. The same checks and text as the general path.
Status put_short_decimal(char*& out, int intg, int scale, std::uint64_t x, std::size_t size, std::size_t fb,
                         std::uint64_t at) {
  const unsigned bits = static_cast<unsigned>(8 * size);
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  const bool negative = (x & sign) == 0;
  x ^= sign;
  if (negative) x = ~x & (sign | (sign - 1));
  std::uint64_t iv = fb == 0 ? x : x >> (8 * fb);
  const auto fv = static_cast<std::uint32_t>(fb == 0 ? 0 : x & ((std::uint64_t{1} << (8 * fb)) - 1));
  bool ok = fv < kPow10[scale];
  if (intg <= kDigitsPerGroup) {
    ok &= iv < kPow10[intg];
  } else {  // a leading group of intg - 9 digits, then a whole one
    const std::uint64_t hi = iv >> 32, lo = iv & 0xffffffffu;
    ok &= hi < kPow10[intg - kDigitsPerGroup] && lo < kPow10[kDigitsPerGroup];
    iv = hi * kPow10[kDigitsPerGroup] + lo;
  }
  if (!ok) return DecodeError{Errc::bad_value, at, "DECIMAL digit group out of range"};
  char* o = out;
  if (negative && (iv != 0 || fv != 0)) *o++ = '-';
  if (iv == 0) {
    *o++ = '0';
  } else {
    const int n = decimal_digits(iv);
    format_u64_backward(o + n, iv);
    o += n;
  }
  if (scale > 0) {
    *o++ = '.';
    format_fixed_digits(o, fv, scale);
    o += scale;
  }
  out = o;
  return {};
}

}  // namespace

Status append_decimal_text(RenderBuf& out, int precision, int scale, ByteReader& r) {
  const std::uint64_t at = r.offset();
  const std::size_t size = decimal_binary_size(precision, scale);
  if (size == 0) return DecodeError{Errc::bad_value, at, "impossible DECIMAL precision/scale"};
  Bytes raw = r.bytes(size);
  if (!r.ok()) return r.error();
  return value_detail::append_decimal_digits(out, precision, scale, raw, at);
}

Status value_detail::put_decimal_digits(char*& out, int precision, int scale, Bytes raw, std::uint64_t at) {
  static_assert(kDecimalTextMax >= kMaxPrecision + 8);
  const std::size_t size = raw.size();  // decimal_binary_size(precision, scale): 1..30
  if (size == 0) return DecodeError{Errc::bad_value, at, "impossible DECIMAL precision/scale"};
  const int intg = precision - scale;
  // Most columns have at most 18 integer digits and 9 decimals in at most 8 bytes (DECIMAL(10,2),
  // (12,2), (15,4)): taken in one load.
  if (intg >= 0 && intg <= 2 * kDigitsPerGroup && scale >= 0 && scale <= kDigitsPerGroup && size <= 8) {
    const auto ib = static_cast<std::size_t>(intg <= kDigitsPerGroup ? kDig2Bytes[intg]
                                                                     : kDig2Bytes[intg - kDigitsPerGroup] + 4);
    const auto fb = static_cast<std::size_t>(kDig2Bytes[scale]);
    if (ib + fb == size) return put_short_decimal(out, intg, scale, load_be(raw.data(), size), size, fb, at);
  }
  std::uint8_t buf[40];  // 65 digits need at most 30 bytes
  copy_short(reinterpret_cast<char*>(buf), reinterpret_cast<const char*>(raw.data()), std::min<std::size_t>(size, 32));
  const bool negative = (buf[0] & 0x80) == 0;
  buf[0] ^= 0x80;
  if (negative)
    for (std::size_t i = 0; i < size; ++i) buf[i] = static_cast<std::uint8_t>(~buf[i]);

  // The digit groups in order (integer part first, then the fraction), each checked as
  // bin2decimal does: a group's value must have no more digits than the group.
  struct Group {
    std::uint32_t v;
    int digits;
  };
  Group groups[16];
  int ng = 0;
  std::size_t pos = 0;  // into buf
  bool ok = true, nonzero = false;
  auto group = [&](int ndigits) {
    const auto nbytes = static_cast<std::size_t>(ndigits == kDigitsPerGroup ? 4 : kDig2Bytes[ndigits]);
    const auto v = static_cast<std::uint32_t>(load_be(buf + pos, nbytes));
    pos += nbytes;
    ok &= v < kPow10[ndigits];
    nonzero |= v != 0;
    groups[ng++] = Group{v, ndigits};
  };
  if (int lead = intg % kDigitsPerGroup; lead > 0) group(lead);
  for (int i = 0; i < intg / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  const int int_groups = ng;
  for (int i = 0; i < scale / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  if (int trail = scale % kDigitsPerGroup; trail > 0) group(trail);
  if (!ok) return DecodeError{Errc::bad_value, at, "DECIMAL digit group out of range"};

  // decimal2string: no leading zeros in the integer part ("0" when it is empty), full scale;
  // the server never stores -0. Written in place: a sign, at most 65 digits and a point.
  char* o = out;
  if (negative && nonzero) *o++ = '-';
  int g = 0;
  while (g < int_groups && groups[g].v == 0) ++g;  // leading zero groups
  if (g == int_groups) {
    *o++ = '0';
  } else {
    // The first nonzero group without its leading zeros, the others in full.
    const int n = decimal_digits(groups[g].v);
    format_u64_backward(o + n, groups[g].v);
    o += n;
    for (++g; g < int_groups; ++g) {
      format_fixed_digits(o, groups[g].v, groups[g].digits);
      o += groups[g].digits;
    }
  }
  if (scale > 0) {
    *o++ = '.';
    for (g = int_groups; g < ng; ++g) {
      format_fixed_digits(o, groups[g].v, groups[g].digits);
      o += groups[g].digits;
    }
  }
  out = o;
  return {};
}

}  // namespace binlogctl
