#include <binlogctl/json_out.h>

#include <array>

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace binlogctl {
namespace {
constexpr char kHex[] = "0123456789abcdef";

// 1 for bytes that leave the fast path: control characters, '"', '\\' and non-ASCII.
constexpr std::array<std::uint8_t, 256> make_special_table() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) ? 1 : 0;
  return t;
}
constexpr auto kSpecial = make_special_table();

template <class Out>
void append_ascii_special(Out& out, unsigned char c) {
  switch (c) {
    case '"': out.append("\\\"", 2); return;
    case '\\': out.append("\\\\", 2); return;
    case '\n': out.append("\\n", 2); return;
    case '\t': out.append("\\t", 2); return;
    case '\r': out.append("\\r", 2); return;
    case '\b': out.append("\\b", 2); return;
    case '\f': out.append("\\f", 2); return;
    default: {
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(esc, 6);
    }
  }
}
}  // namespace

std::size_t utf8_sequence_length(const unsigned char* s, std::size_t i, std::size_t n) noexcept {
  const unsigned char c = s[i];
  auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

template <class Out>
void append_invalid_byte(Out& out, unsigned char b) {
  const char esc[5] = {'\\', '\\', 'x', kHex[b >> 4], kHex[b & 15]};
  out.append(esc, 5);
}

namespace {
// The first byte at or after `at` that leaves the fast path (kSpecial), or n. SSE2 (baseline on
// x86-64) tests 16 bytes at once: a signed compare below 0x20 also catches the bytes >= 0x80.
std::size_t skip_plain(const unsigned char* p, std::size_t at, std::size_t n) noexcept {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; at + 16 <= n; at += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    const __m128i special =
        _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (const int mask = _mm_movemask_epi8(special); mask != 0) return at + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  while (at < n && !kSpecial[p[at]]) ++at;
  return at;
}
}  // namespace

template <class Out>
void append_json_escaped(Out& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;    // start of the bytes not yet appended
  std::size_t run = 0;  // scan position: everything in [i, run) goes out as it is
  while (run < n) {
    if (!kSpecial[p[run]]) {
      run = skip_plain(p, run + 1, n);
      continue;
    }
    const unsigned char c = p[run];
    if (c >= 0x80) {
      if (std::size_t len = utf8_sequence_length(p, run, n); len != 0) {
        run += len;  // valid UTF-8 stays in the run
        continue;
      }
    }
    out.append(s.data() + i, run - i);
    if (c < 0x80)
      append_ascii_special(out, c);
    else
      append_invalid_byte(out, c);
    i = ++run;
  }
  out.append(s.data() + i, n - i);
}

template <class Out>
void append_hex(Out& out, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
}

template <class Out>
void append_base64(Out& out, const std::uint8_t* p, std::size_t n) {
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

#define BINLOGCTL_INSTANTIATE(Out)                                                   \
  template void append_invalid_byte<Out>(Out&, unsigned char);                    \
  template void append_json_escaped<Out>(Out&, std::string_view);                 \
  template void append_hex<Out>(Out&, const std::uint8_t*, std::size_t);          \
  template void append_base64<Out>(Out&, const std::uint8_t*, std::size_t);
BINLOGCTL_INSTANTIATE(std::string)
BINLOGCTL_INSTANTIATE(JsonBuf)
#undef BINLOGCTL_INSTANTIATE

}  // namespace binlogctl
