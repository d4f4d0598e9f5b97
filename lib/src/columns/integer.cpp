// Numbers (floating-point JSON rendering) and binary encodings (base64, hex, UUID, INET4/6).
#include <binlogctl/columns.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iterator>

namespace binlogctl {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// fmt's "{}" is the shortest round-trip form and switches to exponent notation where Python's
// repr does (exponent < -4 or >= 16); Python also marks integral values with ".0".
void finish_python_repr(std::string& out, std::size_t start) {
  for (std::size_t i = start; i < out.size(); ++i) {
    char c = out[i];
    if (c == '.' || c == 'e') return;
  }
  out.append(".0", 2);
}

}  // namespace

void append_double_json(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  std::size_t start = out.size();
  char buf[32];
  out.append(buf, fmt::format_to_n(buf, sizeof buf, "{}", v).size);
  finish_python_repr(out, start);
}

void append_float_json(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  std::size_t start = out.size();
  char buf[32];
  out.append(buf, fmt::format_to_n(buf, sizeof buf, "{}", v).size);  // shortest round-trip float32
  finish_python_repr(out, start);
}

void append_fixed_json(std::string& out, double v, int decimals) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  // 309 integral digits at most (DBL_MAX), a sign, a point and up to 30 decimals.
  char buf[352];
  const int d = decimals < 0 ? 0 : decimals > 30 ? 30 : decimals;
  out.append(buf, fmt::format_to_n(buf, sizeof buf, "{:.{}f}", v, d).size);
}

void append_binary_json(std::string& out, Bytes b, BinaryAs how) {
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

void append_uuid_text(std::string& out, Bytes b) {
  auto a = padded<16>(b);
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[a[i] >> 4]);
    out.push_back(kHex[a[i] & 15]);
  }
}

void append_inet4_text(std::string& out, Bytes b) {
  auto a = padded<4>(b);
  fmt::format_to(std::back_inserter(out), "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
}

void append_inet6_text(std::string& out, Bytes b) {
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
