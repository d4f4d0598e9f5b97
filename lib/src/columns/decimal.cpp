// Binary DECIMAL (NEWDECIMAL): strings/decimal.cc's bin2decimal + decimal2string, bounds-checked.
//
// Layout: the integer part's digits, then the fraction's, each in groups of 9 decimal digits
// stored as 4-byte big-endian integers; a partial group (fewer than 9 digits) takes
// dig2bytes[digits] bytes and comes first in the integer part, last in the fraction. The sign bit
// (0x80 of the first byte) is flipped on store; negative values have every byte inverted.
#include <binlogctl/columns.h>
#include <binlogctl/json_out.h>

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

}  // namespace

std::size_t decimal_binary_size(int precision, int scale) noexcept {
  if (precision < 1 || precision > kMaxPrecision || scale < 0 || scale > precision) return 0;
  int intg = precision - scale;
  return static_cast<std::size_t>(
      (intg / kDigitsPerGroup) * 4 + kDig2Bytes[intg % kDigitsPerGroup] +
      (scale / kDigitsPerGroup) * 4 + kDig2Bytes[scale % kDigitsPerGroup]);
}

Status append_decimal_text(JsonBuf& out, int precision, int scale, ByteReader& r) {
  const std::uint64_t at = r.offset();
  const std::size_t size = decimal_binary_size(precision, scale);
  if (size == 0) return DecodeError{Errc::bad_value, at, "impossible DECIMAL precision/scale"};
  Bytes raw = r.bytes(size);
  if (!r.ok()) return r.error();

  std::uint8_t buf[40];  // 65 digits need at most 30 bytes
  copy_bytes(reinterpret_cast<char*>(buf), reinterpret_cast<const char*>(raw.data()), std::min<std::size_t>(size, 32));
  const bool negative = (buf[0] & 0x80) == 0;
  buf[0] ^= 0x80;
  if (negative)
    for (std::size_t i = 0; i < size; ++i) buf[i] = static_cast<std::uint8_t>(~buf[i]);

  // Decode every group into its decimal digits: integer part first, then the fraction.
  const int intg = precision - scale;
  char digits[2 * kMaxPrecision + 32];  // room past the digits for copy_bytes' bounds
  std::size_t pos = 0;  // into buf
  int nd = 0;           // digits written
  bool ok = true, nonzero = false;
  auto group = [&](int ndigits) {
    std::uint32_t v;
    switch (ndigits == kDigitsPerGroup ? 4 : kDig2Bytes[ndigits]) {
      case 1: v = buf[pos]; pos += 1; break;
      case 2: v = std::uint32_t{buf[pos]} << 8 | buf[pos + 1]; pos += 2; break;
      case 3: v = std::uint32_t{buf[pos]} << 16 | std::uint32_t{buf[pos + 1]} << 8 | buf[pos + 2]; pos += 3; break;
      default:
        v = std::uint32_t{buf[pos]} << 24 | std::uint32_t{buf[pos + 1]} << 16 | std::uint32_t{buf[pos + 2]} << 8 |
            buf[pos + 3];
        pos += 4;
        break;
    }
    if (v >= kPow10[ndigits]) ok = false;  // bin2decimal rejects such groups too
    nonzero |= v != 0;
    format_fixed_digits(digits + nd, v, ndigits);
    nd += ndigits;
  };
  if (int lead = intg % kDigitsPerGroup; lead > 0) group(lead);
  for (int i = 0; i < intg / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  for (int i = 0; i < scale / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  if (int trail = scale % kDigitsPerGroup; trail > 0) group(trail);
  if (!ok) return DecodeError{Errc::bad_value, at, "DECIMAL digit group out of range"};

  // decimal2string: no leading zeros in the integer part ("0" when it is empty), full scale;
  // the server never stores -0.
  int first = 0;
  while (first < intg && digits[first] == '0') ++first;
  // Written in place: a sign, at most 65 digits and a point.
  const auto whole = static_cast<std::size_t>(std::clamp(intg - first, 0, kMaxPrecision));
  const auto frac = static_cast<std::size_t>(std::clamp(scale, 0, kMaxPrecision));
  char* const start = out.tail(kMaxPrecision + 8);
  char* o = start;
  if (negative && nonzero) *o++ = '-';
  if (whole == 0) {
    *o++ = '0';
  } else {
    copy_bytes(o, digits + first, whole);
    o += whole;
  }
  if (frac > 0) {
    *o++ = '.';
    copy_bytes(o, digits + intg, frac);
    o += frac;
  }
  out.advance(static_cast<std::size_t>(o - start));
  return {};
}

}  // namespace binlogctl
