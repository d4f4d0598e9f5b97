#include "render/json_out.h"

#include <algorithm>
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

// An ASCII byte's escape: 2 bytes for " \ \b \t \n \f \r, 6 (\u00XX) for the other control
// characters; 8 bytes kept so that one fixed-size copy writes any of them.
struct AsciiEscape {
  char text[8];
  std::uint8_t len;
};
constexpr std::array<AsciiEscape, 34> make_ascii_escapes() {
  std::array<AsciiEscape, 34> t{};
  for (int c = 0; c < 32; ++c) {
    AsciiEscape& e = t[static_cast<std::size_t>(c)];
    char two = 0;
    switch (c) {
      case '\n': two = 'n'; break;
      case '\t': two = 't'; break;
      case '\r': two = 'r'; break;
      case '\b': two = 'b'; break;
      case '\f': two = 'f'; break;
      default: break;
    }
    e.text[0] = '\\';
    if (two != 0) {
      e.text[1] = two;
      e.len = 2;
    } else {
      e.text[1] = 'u';
      e.text[2] = '0';
      e.text[3] = '0';
      e.text[4] = kHex[c >> 4];
      e.text[5] = kHex[c & 15];
      e.len = 6;
    }
  }
  t[32] = AsciiEscape{{'\\', '"'}, 2};
  t[33] = AsciiEscape{{'\\', '\\'}, 2};
  return t;
}
constexpr auto kAsciiEscapes = make_ascii_escapes();
// The escape of a special ASCII byte: a control character, '"' or '\\'.
BINLOGCTL_INLINE const AsciiEscape& ascii_escape(unsigned char c) noexcept {
  return kAsciiEscapes[c < 0x20 ? c : (c == '"' ? 32u : 33u)];
}

// An ill-formed UTF-8 byte's text, \\xHH (a backslash escaped, then xHH: JSON readers see the
// four characters \xHH), in the first kInvalidByteLen of 8 bytes (one fixed-size copy).
constexpr std::size_t kInvalidByteLen = 5;
BINLOGCTL_INLINE std::array<char, 8> invalid_byte_text(unsigned char b) noexcept {
  return {'\\', '\\', 'x', kHex[b >> 4], kHex[b & 15]};
}

template <class Out>
void append_ascii_special(Out& out, unsigned char c) {
  const AsciiEscape& e = ascii_escape(c);
  out.append(e.text, e.len);
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
  out.append(invalid_byte_text(b).data(), kInvalidByteLen);
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

namespace {
// Scan, then append each plain run: for a std::string (and a RenderBuf without SSE2).
template <class Out>
void escape_by_runs(Out& out, std::string_view s) {
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
}  // namespace


#if defined(__SSE2__)
namespace {
// Writes what the special byte at p[i] becomes at o (a valid UTF-8 sequence as it is, an invalid
// byte as \\xHH, an ASCII one escaped); returns where the input goes on. o has room for 8 bytes.
BINLOGCTL_INLINE std::size_t put_special(const unsigned char* p, std::size_t i, std::size_t n, char*& o) noexcept {
  const unsigned char c = p[i];
  if (c >= 0x80) {
    if (const std::size_t len = utf8_length_at(p, i, n); len != 0) {
      if (i + 4 <= n) {
        std::memcpy(o, p + i, 4);  // the bytes past the sequence are overwritten next
      } else {
        for (std::size_t k = 0; k < len; ++k) o[k] = static_cast<char>(p[i + k]);
      }
      o += len;
      return i + len;
    }
    std::memcpy(o, invalid_byte_text(c).data(), 8);
    o += kInvalidByteLen;
    return i + 1;
  }
  const AsciiEscape& e = ascii_escape(c);
  std::memcpy(o, e.text, 8);
  o += e.len;
  return i + 1;
}

// Escapes p[i, lim) into o (more when the last special byte starts a sequence that ends past lim,
// or when fewer than 16 bytes of the string are left: then up to 15 bytes and one escape past
// lim); returns where the input goes on. Each 16 bytes are loaded once, stored as they are and
// tested: a run of plain bytes costs no separate scan and copy. o must have room for 6 bytes per
// input byte to lim and 32 more.
std::size_t escape_block(const unsigned char* p, std::size_t i, std::size_t lim, std::size_t n, char*& o) noexcept {
  while (i + 16 <= lim) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
    unsigned m = special_mask(v);
    if (m == 0) {
      i += 16;
      o += 16;
      continue;
    }
    // The block's special bytes in turn: a valid UTF-8 sequence inside the block was stored with
    // it, in place (the output is 1:1 up to it), so it costs a length check; the first escape
    // (or a sequence that runs past the block) ends the block: the next load starts after it.
    for (;;) {
      const auto k = static_cast<std::size_t>(__builtin_ctz(m));
      if (p[i + k] >= 0x80) {
        if (const std::size_t len = utf8_length_at(p, i + k, n); len != 0 && k + len <= 16) {
          m &= ~0u << (k + len);  // k + len <= 16 < 32
          if (m != 0) continue;
          i += 16;
          o += 16;
          break;
        }
      }
      i += k;
      o += k;
      i = put_special(p, i, n, o);
      break;
    }
  }
  while (i < lim) {
    if (n - i >= 16) {  // a whole load inside the string; the bytes past lim are not taken
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
      const unsigned m = special_mask(v) & ((1u << (lim - i)) - 1);
      if (m == 0) {
        o += lim - i;
        return lim;
      }
      const auto k = static_cast<std::size_t>(__builtin_ctz(m));
      i += k;
      o += k;
      i = put_special(p, i, n, o);
      continue;
    }
    // The string's last bytes (fewer than 16). Mostly plain: two loads of 8 (or 4) bytes, the
    // first and the last of them, tested and stored as they are; else a scan and a copy.
    if (const std::size_t r = n - i; r >= 4) {
      const bool eight = r >= 8;
      std::uint64_t a = 0, b = 0;
      if (eight) {
        std::memcpy(&a, p + i, 8);
        std::memcpy(&b, p + n - 8, 8);
      } else {
        std::uint32_t a4, b4;
        std::memcpy(&a4, p + i, 4);
        std::memcpy(&b4, p + n - 4, 4);
        a = a4;
        b = b4;
      }
      const unsigned lanes = eight ? 0xffffu : 0x0f0fu;
      if ((special_mask(_mm_set_epi64x(static_cast<long long>(b), static_cast<long long>(a))) & lanes) == 0) {
        const std::size_t w = eight ? 8 : 4;
        std::memcpy(o, &a, 8);  // room: 32 bytes past the worst case
        std::memcpy(o + r - w, &b, 8);
        o += r;
        return n;
      }
    }
    const std::size_t j = skip_plain_tail(p, i, n);
    copy_short(o, reinterpret_cast<const char*>(p + i), j - i);
    o += j - i;
    i = j;
    if (i < n) i = put_special(p, i, n, o);
  }
  return i;
}
}  // namespace

// Into a RenderBuf: pieces of up to 4 KiB of input, each into room for its worst case (6 bytes a
// byte), so that a huge text never asks for 6 times its size at once.
template <>
void append_json_escaped<RenderBuf>(RenderBuf& out, std::string_view s) {
  constexpr std::size_t kPiece = 4096;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  do {
    const std::size_t lim = i + std::min(n - i, kPiece);
    char* const start = out.tail((lim - i) * 6 + 32);
    char* o = start;
    i = escape_block(p, i, lim, n, o);
    out.advance(static_cast<std::size_t>(o - start));
  } while (i < n);
}
#else
template <>
void append_json_escaped<RenderBuf>(RenderBuf& out, std::string_view s) {
  escape_by_runs(out, s);
}
#endif

template <>
void append_json_escaped<std::string>(std::string& out, std::string_view s) {
  escape_by_runs(out, s);
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
  template void append_hex<Out>(Out&, const std::uint8_t*, std::size_t);          \
  template void append_base64<Out>(Out&, const std::uint8_t*, std::size_t);
BINLOGCTL_INSTANTIATE(std::string)
BINLOGCTL_INSTANTIATE(RenderBuf)
#undef BINLOGCTL_INSTANTIATE

}  // namespace binlogctl
