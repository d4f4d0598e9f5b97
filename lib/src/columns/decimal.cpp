// Binary DECIMAL (NEWDECIMAL): strings/decimal.cc's bin2decimal + decimal2string, bounds-checked.
//
// Layout: the integer part's digits, then the fraction's, each in groups of 9 decimal digits
// stored as 4-byte big-endian integers; a partial group (fewer than 9 digits) takes
// dig2bytes[digits] bytes and comes first in the integer part, last in the fraction. The sign bit
// (0x80 of the first byte) is flipped on store; negative values have every byte inverted.
#include <binlogctl/columns.h>

#include <array>

namespace binlogctl {

namespace {

constexpr int kDigitsPerGroup = 9;
constexpr int kDig2Bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::uint32_t kPow10[10] = {1,      10,      100,      1000,      10000,
                                      100000, 1000000, 10000000, 100000000, 1000000000};
constexpr int kMaxPrecision = 65;  // DECIMAL_MAX_PRECISION (MySQL and MariaDB)

// Writes `digits` decimal digits of v (zero-padded) at p.
void put_digits(char* p, std::uint32_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

}  // namespace

std::size_t decimal_binary_size(int precision, int scale) noexcept {
  if (precision < 1 || precision > kMaxPrecision || scale < 0 || scale > precision) return 0;
  int intg = precision - scale;
  return static_cast<std::size_t>(
      (intg / kDigitsPerGroup) * 4 + kDig2Bytes[intg % kDigitsPerGroup] +
      (scale / kDigitsPerGroup) * 4 + kDig2Bytes[scale % kDigitsPerGroup]);
}

Status append_decimal_text(std::string& out, int precision, int scale, ByteReader& r) {
  const std::uint64_t at = r.offset();
  const std::size_t size = decimal_binary_size(precision, scale);
  if (size == 0) return DecodeError{Errc::bad_value, at, "impossible DECIMAL precision/scale"};
  Bytes raw = r.bytes(size);
  if (!r.ok()) return r.error();

  std::array<std::uint8_t, 40> buf{};  // 65 digits need at most 30 bytes
  for (std::size_t i = 0; i < size; ++i) buf[i] = raw[i];
  const bool negative = (buf[0] & 0x80) == 0;
  buf[0] ^= 0x80;
  if (negative)
    for (std::size_t i = 0; i < size; ++i) buf[i] = static_cast<std::uint8_t>(~buf[i]);

  // Decode every group into its decimal digits: integer part first, then the fraction.
  const int intg = precision - scale;
  std::array<char, kMaxPrecision> digits{};
  std::size_t pos = 0;  // into buf
  int nd = 0;           // digits written
  bool ok = true;
  auto group = [&](int ndigits) {
    const auto nbytes =
        static_cast<std::size_t>(ndigits == kDigitsPerGroup ? 4 : kDig2Bytes[ndigits]);
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < nbytes; ++i) v = (v << 8) | buf[pos + i];
    pos += nbytes;
    if (v >= kPow10[ndigits]) ok = false;  // bin2decimal rejects such groups too
    put_digits(digits.data() + nd, v, ndigits);
    nd += ndigits;
  };
  if (int lead = intg % kDigitsPerGroup; lead > 0) group(lead);
  for (int i = 0; i < intg / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  for (int i = 0; i < scale / kDigitsPerGroup; ++i) group(kDigitsPerGroup);
  if (int trail = scale % kDigitsPerGroup; trail > 0) group(trail);
  if (!ok) return DecodeError{Errc::bad_value, at, "DECIMAL digit group out of range"};

  // decimal2string: no leading zeros in the integer part ("0" when it is empty), full scale.
  int first = 0;
  while (first < intg && digits[first] == '0') ++first;
  bool is_zero = true;
  for (int i = first; i < nd; ++i)
    if (digits[i] != '0') is_zero = false;
  if (negative && !is_zero) out.push_back('-');  // the server never stores -0
  if (first == intg)
    out.push_back('0');
  else
    out.append(digits.data() + first, static_cast<std::size_t>(intg - first));
  if (scale > 0) {
    out.push_back('.');
    out.append(digits.data() + intg, static_cast<std::size_t>(scale));
  }
  return {};
}

}  // namespace binlogctl
