// Numbers (floating-point JSON rendering) and binary encodings (base64, hex, UUID, INET4/6).
#include "columns/column_json.h"
#include "render/json_out.h"
#include "shortest_digits.h"
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

namespace binlogctl {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Python's repr of a float: the shortest round-trip digits, in fixed notation when the decimal
// exponent is in [-4, 16), else as d.ddde+XX (at least two exponent digits); integral values in
// fixed notation end in ".0". NaN and infinities are not JSON: null.
template <class T>
void append_python_repr(RenderBuf& out, T v) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  // At most 17 digits, a sign, a point and "e-308" or "0.000": 40 bytes is room enough.
  char* const start = out.tail(40);
  char* o = start;
  if (std::signbit(v)) *o++ = '-';
  char digits[64];
  std::memcpy(digits, "00000000000000000000000000000000", 32);  // integral padding
  int e = 0;
  const auto nd = std::min<std::size_t>(static_cast<std::size_t>(columns_detail::shortest_digits_of(v, digits, e)), 24);
  if (e < -4 || e >= 16) {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      copy_short(o, digits + 1, nd - 1);
      o += nd - 1;
    }
    *o++ = 'e';
    *o++ = e < 0 ? '-' : '+';
    const int ae = e < 0 ? -e : e;
    if (ae >= 100) *o++ = static_cast<char>('0' + ae / 100);
    *o++ = static_cast<char>('0' + ae / 10 % 10);
    *o++ = static_cast<char>('0' + ae % 10);
  } else if (e >= 0) {
    const auto whole = static_cast<std::size_t>(e) + 1;  // zero-padded past the digits
    copy_short(o, digits, whole);
    o += whole;
    *o++ = '.';
    if (nd > whole) {
      copy_short(o, digits + whole, nd - whole);
      o += nd - whole;
    } else {
      *o++ = '0';
    }
  } else {
    std::memcpy(o, "0.0000", 6);  // e in [-4, -1]: "0." and -e - 1 zeros
    o += 2 + (-e - 1);
    copy_short(o, digits, nd);
    o += nd;
  }
  out.advance(static_cast<std::size_t>(o - start));
}

}  // namespace

void append_double_json(RenderBuf& out, double v) { append_python_repr(out, v); }

void append_float_json(RenderBuf& out, float v) { append_python_repr(out, v); }  // shortest float32

void append_fixed_json(RenderBuf& out, double v, int decimals) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  // 309 integral digits at most (DBL_MAX), a sign, a point and up to 30 decimals.
  char buf[352];
  const int d = decimals < 0 ? 0 : decimals > 30 ? 30 : decimals;
  out.append(buf, fmt::format_to_n(buf, sizeof buf, "{:.{}f}", v, d).size);
}

void append_binary_json(RenderBuf& out, Bytes b, BinaryAs how) {
  out.push_back('"');
  if (how == BinaryAs::hex)
    append_hex(out, b);
  else
    append_base64(out, b);
  out.push_back('"');
}

namespace {

// Copies up to N bytes of b into a zero-filled array (the binlog drops trailing zero bytes).
template <std::size_t N>
std::array<std::uint8_t, N> padded(Bytes b) {
  std::array<std::uint8_t, N> a{};
  for (std::size_t i = 0; i < N && i < b.size(); ++i) a[i] = b[i];
  return a;
}

}  // namespace

void append_uuid_text(RenderBuf& out, Bytes b) {
  auto a = padded<16>(b);
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[a[i] >> 4]);
    out.push_back(kHex[a[i] & 15]);
  }
}

void append_inet4_text(RenderBuf& out, Bytes b) {
  auto a = padded<4>(b);
  fmt::format_to(std::back_inserter(out), "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
}

void append_inet6_text(RenderBuf& out, Bytes b) {
  // MariaDB's Inet6::to_string (not inet_ntop): the longest run of zero groups, even a single
  // one, becomes "::" (first run on ties); IPv4-compatible (::a.b.c.d, groups 0-5 zero, group 6
  // not) and IPv4-mapped (::ffff:a.b.c.d) addresses end in dotted decimal.
  auto a = padded<16>(b);
  std::uint16_t g[8];
  for (int i = 0; i < 8; ++i) g[i] = static_cast<std::uint16_t>((a[2 * i] << 8) | a[2 * i + 1]);
  int gap = -1, gap_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > gap_len) {
      gap = i;
      gap_len = j - i;
    }
    i = j;
  }
  for (int i = 0; i < 8; ++i) {
    if (i == gap) {
      out.append(i == 0 ? "::" : ":", i == 0 ? 2 : 1);
      i += gap_len - 1;
    } else if (i == 6 && gap == 0 && (gap_len == 6 || (gap_len == 5 && g[5] == 0xffff))) {
      fmt::format_to(std::back_inserter(out), "{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
      return;
    } else {
      fmt::format_to(std::back_inserter(out), "{:x}", g[i]);
      if (i != 7) out.push_back(':');
    }
  }
}

}  // namespace binlogctl
