#include "render/json_out.h"

#include <array>
#include <cstring>
#include <type_traits>

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
#if defined(__SSE2__)
// Bit i set: byte i of v is special (control, '"', '\\', or >= 0x80: a signed compare below 0x20
// catches those too).
BINLOGCTL_INLINE unsigned special_mask(__m128i v) noexcept {
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i special =
      _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
  return static_cast<unsigned>(_mm_movemask_epi8(special));
}
// W (8 or 4) bytes at p in the low lanes, the others zero.
template <std::size_t W>
BINLOGCTL_INLINE __m128i load_low(const unsigned char* p) noexcept {
  if constexpr (W == 8) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  } else {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
  }
}
// The first special byte in [at, n), or n, for n - at < 16 and W <= n < 16: loads of W bytes that
// stay inside [0, n), overlapping what was scanned before `at` where they must (masked off).
template <std::size_t W>
BINLOGCTL_INLINE std::size_t skip_plain_within(const unsigned char* p, std::size_t at, std::size_t n) noexcept {
  constexpr unsigned kAll = (1u << W) - 1;  // the lanes a load fills (zero lanes would count)
  if (n - at >= W) {
    // [at, at + W) in lanes 0.., [n - W, n) in lanes 8.. (all at or after `at`).
    const unsigned m = special_mask(_mm_unpacklo_epi64(load_low<W>(p + at), load_low<W>(p + n - W))) &
                       (kAll | kAll << 8);
    if (m == 0) return n;
    if ((m & kAll) != 0) return at + static_cast<std::size_t>(__builtin_ctz(m & kAll));
    return n - W + static_cast<std::size_t>(__builtin_ctz(m >> 8));
  }
  // [n - W, n), of which the bytes before `at` were scanned already.
  const std::size_t base = n - W;
  const unsigned m = special_mask(load_low<W>(p + base)) & kAll & (kAll << (at - base));
  return m != 0 ? base + static_cast<std::size_t>(__builtin_ctz(m)) : n;
}
#endif

// The first byte at or after `at` that leaves the fast path (kSpecial), or n, where fewer than 16
// bytes are left (next_special tests the full blocks before): with SSE2 (baseline on x86-64) one
// more load (two of 8 or 4 bytes for strings under 16 bytes; a byte at a time under 4).
std::size_t skip_plain_tail(const unsigned char* p, std::size_t at, std::size_t n) noexcept {
#if defined(__SSE2__)
  if (at >= n) return n;
  if (n >= 16) {
    // The last 1..15 bytes: one load of the final 16, the bytes before `at` (already scanned)
    // masked off.
    const std::size_t base = n - 16;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + base));
    const unsigned mask = special_mask(v) & (0xffffu << (at - base));
    return mask != 0 ? base + static_cast<std::size_t>(__builtin_ctz(mask)) : n;
  }
  if (n >= 8) return skip_plain_within<8>(p, at, n);
  if (n >= 4) return skip_plain_within<4>(p, at, n);
#endif
  while (at < n && !kSpecial[p[at]]) ++at;
  return at;
}

// The first special byte at or after `at`, or n: 16 bytes at a time inline (text with quotes,
// backslashes or non-ASCII letters every few words, such as JSON in SQL, comes back here after
// each of them), the tail of the string out of line.
BINLOGCTL_INLINE std::size_t next_special(const unsigned char* p, std::size_t at, std::size_t n) noexcept {
#if defined(__SSE2__)
  for (; at + 16 <= n; at += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    if (const unsigned mask = special_mask(v); mask != 0) return at + static_cast<std::size_t>(__builtin_ctz(mask));
  }
#endif
  return skip_plain_tail(p, at, n);
}

// utf8_sequence_length, with the two- and three-byte letters of most scripts (lead bytes
// C2..DF, E1..EC, EE, EF: any continuation bytes) decided inline.
BINLOGCTL_INLINE std::size_t utf8_length_at(const unsigned char* p, std::size_t i, std::size_t n) noexcept {
  const unsigned char c = p[i];
  if (c >= 0xc2 && c <= 0xdf) return i + 1 < n && (p[i + 1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe1 && c <= 0xef && c != 0xed && i + 2 < n && (p[i + 1] & 0xc0) == 0x80 && (p[i + 2] & 0xc0) == 0x80)
    return 3;
  return utf8_sequence_length(p, i, n);
}
}  // namespace

template <class Out>
void append_json_escaped(Out& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;  // start of the bytes not yet appended
  // Scan position: everything in [i, run) goes out as it is.
  std::size_t run = next_special(p, 0, n);
  while (run < n) {
    const unsigned char c = p[run];
    if (c >= 0x80) {
      if (std::size_t len = utf8_length_at(p, run, n); len != 0) {
        run = next_special(p, run + len, n);  // valid UTF-8 stays in the run
        continue;
      }
    }
    out.append(s.data() + i, run - i);
    if (c < 0x80)
      append_ascii_special(out, c);
    else
      append_invalid_byte(out, c);
    i = run + 1;
    run = next_special(p, i, n);
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
  if constexpr (std::is_same_v<Out, RenderBuf>) {  // the room for every whole group at once
    char* o = out.tail(n / 3 * 4);
    for (; i + 3 <= n; i += 3, o += 4) {
      const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
      o[0] = kB64[v >> 18];
      o[1] = kB64[(v >> 12) & 63];
      o[2] = kB64[(v >> 6) & 63];
      o[3] = kB64[v & 63];
    }
    out.advance(n / 3 * 4);
  }
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
BINLOGCTL_INSTANTIATE(RenderBuf)
#undef BINLOGCTL_INSTANTIATE

}  // namespace binlogctl
