#include <binlogctl/json_out.h>

#include <fmt/format.h>

namespace binlogctl {
namespace {
constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence at p (1..4), or 0 if the bytes there are not valid UTF-8.
std::size_t utf8_seq_len(const unsigned char* p, std::size_t avail) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return avail >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (avail < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;   // overlong
    if (c == 0xed && p[1] >= 0xa0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (avail < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xf4 && p[1] >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}
}  // namespace

void append_json_escaped(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // Fast path: a run of plain printable ASCII.
    std::size_t j = i;
    while (j < n && p[j] >= 0x20 && p[j] < 0x80 && p[j] != '"' && p[j] != '\\') ++j;
    if (j > i) {
      out.append(s.data() + i, j - i);
      i = j;
      if (i >= n) break;
    }
    unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          out.append("\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
      }
      ++i;
      continue;
    }
    std::size_t len = utf8_seq_len(p + i, n - i);
    if (len == 0) {
      out.append("\\\\x");  // JSON text \\x: a literal backslash, then x and the hex digits
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
}

void append_u64(std::string& out, std::uint64_t v) {
  char buf[20];
  char* e = buf + sizeof buf;
  char* b = e;
  do {
    *--b = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out.append(b, static_cast<std::size_t>(e - b));
}

void append_i64(std::string& out, std::int64_t v) {
  if (v < 0) {
    out.push_back('-');
    append_u64(out, static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v));
  } else {
    append_u64(out, static_cast<std::uint64_t>(v));
  }
}

void append_hex(std::string& out, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
}

void append_base64(std::string& out, const std::uint8_t* p, std::size_t n) {
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    out.push_back(kB64[v >> 18]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(kB64[(v >> 6) & 63]);
    out.push_back(kB64[v & 63]);
  }
  if (i < n) {
    std::uint32_t v = std::uint32_t{p[i]} << 16;
    if (i + 1 < n) v |= std::uint32_t{p[i + 1]} << 8;
    out.push_back(kB64[v >> 18]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(i + 1 < n ? kB64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

}  // namespace binlogctl
