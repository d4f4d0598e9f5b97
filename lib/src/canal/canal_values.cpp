// Canal's value rendering and sqlType of one column value (design/canal.md §4-5), and the small
// text helpers the mapper shares. Values come from the project's one column decoder
// (column_value.h) as typed values; this file only turns them into Canal's text, into a reused
// string. Where Canal's text follows convert's rendering (DECIMAL, BIT, temporals, text charsets)
// it is exactly the text of that JSON rendering parsed back (the first implementation did that
// round trip with nlohmann's parser; the unit tests still compare with it).
#include "canal_internal.h"
#include "columns/ascii_run.h"
#include "columns/shortest_digits.h"
#include "columns/temporal_text.h"

#include <binlogctl/bytes.h>
#include <binlogctl/datetime.h>

#include "columns/column_value.h"

#include <binlogctl/canal.h>

#include "render/json_out.h"

#include <array>
#include <bit>
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace binlogctl::canal_detail {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Double.toString's layout of the value d1.d2d3... x 10^sci_exp (`digits` = d1d2d3..., the
// shortest round-trip digits, no trailing zeros, at most 24, in a buffer of kDigitsRoom bytes):
// plain decimal with at least one fraction digit for 10^-3 <= |v| < 10^7, else
// "d1.d2d3...E<exp>" (at least one digit after the point). Writes at most 40 bytes at `o`, and
// may write garbage up to 40 bytes past `o` (the digits are copied 24 at a time, then the end
// set); returns the end.
constexpr std::size_t kDigitsRoom = 32;
char* java_format(char* o, bool neg, const char* digits, std::size_t nd, int sci_exp) {
  if (neg) *o++ = '-';
  if (sci_exp >= -3 && sci_exp < 7) {
    if (sci_exp < 0) {
      std::memcpy(o, "0.000", 5);  // "0." and -sci_exp - 1 zeros
      o += 2 + (-sci_exp - 1);
      std::memcpy(o, digits, 24);
      return o + nd;
    }
    const std::size_t int_len = static_cast<std::size_t>(sci_exp) + 1;
    if (nd <= int_len) {
      std::memcpy(o, digits, 8);  // int_len <= 7
      o += nd;
      std::memcpy(o, "0000000", 8);
      o += int_len - nd;
      std::memcpy(o, ".0", 2);
      return o + 2;
    }
    std::memcpy(o, digits, 8);
    o += int_len;
    *o++ = '.';
    std::memcpy(o, digits + int_len, 24);
    return o + (nd - int_len);
  }
  *o++ = digits[0];
  *o++ = '.';
  if (nd > 1) {
    std::memcpy(o, digits + 1, 24);
    o += nd - 1;
  } else {
    *o++ = '0';
  }
  *o++ = 'E';
  unsigned e = static_cast<unsigned>(sci_exp < 0 ? -sci_exp : sci_exp);
  if (sci_exp < 0) *o++ = '-';
  char t[4];
  int n = 0;
  do {
    t[n++] = static_cast<char>('0' + e % 10);
    e /= 10;
  } while (e != 0);
  while (n > 0) *o++ = t[--n];
  return o;
}

template <typename F>
char* put_java_fp(char* o, F v) noexcept {
  if (std::isnan(v)) {
    std::memcpy(o, "NaN", 3);
    return o + 3;
  }
  if (std::isinf(v)) {
    const std::string_view s = v < 0 ? "-Infinity" : "Infinity";
    std::memcpy(o, s.data(), s.size());
    return o + s.size();
  }
  if (v == 0) {
    const std::string_view s = std::signbit(v) ? "-0.0" : "0.0";
    std::memcpy(o, s.data(), s.size());
    return o + s.size();
  }
  char digits[kDigitsRoom + 8];  // + 8: java_format copies 24 bytes from digits + 7
  int exp = 0;
  const int nd = columns_detail::shortest_digits_of(v, digits, exp);
  return java_format(o, std::signbit(v), digits, static_cast<std::size_t>(nd), exp);
}

using columns_detail::ascii_end;

}  // namespace

// ---- text --------------------------------------------------------------------------------------

namespace {
// Each Latin-1 byte's UTF-8 bytes (the ASCII ones alone, then a byte that is overwritten).
constexpr std::array<std::array<char, 2>, 256> make_latin1_utf8() {
  std::array<std::array<char, 2>, 256> t{};
  for (unsigned c = 0; c < 256; ++c) {
    if (c < 0x80) {
      t[c] = {static_cast<char>(c), 0};
    } else {
      t[c] = {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    }
  }
  return t;
}
constexpr auto kLatin1Utf8 = make_latin1_utf8();
}  // namespace

void append_iso8859_1(std::string& out, Bytes b) {
  const auto* p = b.data();
  const std::size_t n = b.size();
  std::size_t i = ascii_end(p, 0, n);
  out.append(reinterpret_cast<const char*>(p), i);
  if (i == n) return;
  // The rest through a pointer, into room made for two bytes each: no check per byte.
  const std::size_t at = out.size();
  out.resize(at + 2 * (n - i));
  char* const start = out.data() + at;
  char* o = start;
  // Without a branch per byte (binary values mix both kinds at random): both bytes of the code
  // are stored, the second overwritten next when the byte is ASCII.
  for (; i < n; ++i) {
    const unsigned c = p[i];
    std::memcpy(o, kLatin1Utf8[c].data(), 2);
    o += 1 + (c >> 7);
  }
  out.resize(at + static_cast<std::size_t>(o - start));
}

#if defined(__SSE2__)
// Of the sixteen bytes at `s`, a bit for each that a JSON string cannot hold as it is (a control
// character, non-ASCII, '"' or '\\'): as signed bytes, controls and non-ASCII are both < 0x20.
[[gnu::always_inline]] static inline int not_plain_json_mask16(const char* s) noexcept {
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i bad =
      _mm_or_si128(_mm_cmplt_epi8(x, space), _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)));
  return _mm_movemask_epi8(bad);
}
#endif

// Whether s[i..n) is printable ASCII without '"' and '\\' (a JSON string body that reads back as
// itself), eight bytes at a time.
static bool plain_json_body(const char* s, std::size_t n) noexcept {
  constexpr std::uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
  auto has_zero = [](std::uint64_t v) { return ((v - k01) & ~v & k80) != 0; };
  auto plain8 = [&](std::uint64_t w) {
    return (w & k80) == 0 && ((w - k01 * 0x20) & ~w & k80) == 0 && !has_zero(w ^ (k01 * '"')) &&
           !has_zero(w ^ (k01 * '\\'));
  };
  auto load8 = [](const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n < 8) {  // padded with 'a' to one word
    std::uint64_t w = k01 * 'a';
    if (n > 0) std::memcpy(&w, s, n);
    return plain8(w);
  }
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16)
    if (not_plain_json_mask16(s + i) != 0) return false;
#endif
  for (; i + 8 <= n; i += 8)
    if (!plain8(load8(s + i))) return false;
  return i == n || plain8(load8(s + n - 8));  // the last, overlapping word
}

// How many bytes at `s` (at most n) go into a JSON string as they are: ASCII, not a control
// character, '"' or '\\'.
static std::size_t plain_json_prefix(const char* s, std::size_t n) noexcept {
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16)
    if (const int m = not_plain_json_mask16(s + i); m != 0) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(m)));
#endif
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
  }
  return i;
}

bool utf8_well_formed(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  constexpr std::uint64_t k80 = 0x8080808080808080ull;
  constexpr bool kLittle = std::endian::native == std::endian::little;
  if (n < 8) {  // most short texts: one word, ASCII
    if ((load_le(p, n) & k80) == 0) return true;  // without a call to memcpy
  }
  // Unicode's well-formed sequences (utf8_sequence_length's), ASCII a word at a time.
  std::size_t i = 0;
  while (i < n) {
#if defined(__SSE2__)
    if (i + 16 <= n) {  // 16 bytes at a time while they last
      const auto m = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));  // the high bits
      if (m == 0) {
        i += 16;
        continue;
      }
      i += static_cast<std::size_t>(std::countr_zero(m));  // the first byte >= 0x80
    } else
#endif
    if (kLittle && i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & k80) == 0) {
        i += 8;
        continue;
      }
      i += static_cast<std::size_t>(std::countr_zero(w & k80)) / 8;  // the first byte >= 0x80
    } else if (kLittle && n >= 8) {  // the last word, overlapping what was read
      std::uint64_t w;
      std::memcpy(&w, p + n - 8, 8);
      const std::uint64_t m = (w & k80) >> (8 * (8 - (n - i)));
      if (m == 0) return true;
      i += static_cast<std::size_t>(std::countr_zero(m)) / 8;
    } else if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const unsigned c = p[i];
    auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
      return i + k < n && p[i + k] >= lo && p[i + k] <= hi;
    };
    if (c >= 0xc2 && c <= 0xdf) {
      if (!cont(1)) return false;
      i += 2;
    } else if (c >= 0xe0 && c <= 0xef) {  // no overlong forms (e0), no surrogates (ed)
      if (!cont(1, c == 0xe0 ? 0xa0 : 0x80, c == 0xed ? 0x9f : 0xbf) || !cont(2)) return false;
      i += 3;
    } else if (c >= 0xf0 && c <= 0xf4) {  // no overlong forms (f0), nothing past U+10FFFF (f4)
      if (!cont(1, c == 0xf0 ? 0x90 : 0x80, c == 0xf4 ? 0x8f : 0xbf) || !cont(2) || !cont(3)) return false;
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

char* put_java_double(char* o, double v) noexcept { return put_java_fp(o, v); }
char* put_java_float(char* o, float v) noexcept { return put_java_fp(o, v); }
void append_java_double(std::string& out, double v) {
  char b[kJavaFpMax];
  out.append(b, static_cast<std::size_t>(put_java_double(b, v) - b));
}
void append_java_float(std::string& out, float v) {
  char b[kJavaFpMax];
  out.append(b, static_cast<std::size_t>(put_java_float(b, v) - b));
}

// ---- canal-json strings
// --------------------------------------------------------------------------

namespace {
char* extend(std::string& s, std::size_t n) {
  const std::size_t at = s.size();
  s.resize(at + n);
  return s.data() + at;
}
char* extend(OutBuf& b, std::size_t n) { return b.extend(n); }
void shrink_by(std::string& s, std::size_t n) { s.resize(s.size() - n); }
void shrink_by(OutBuf& b, std::size_t n) { b.truncate(b.size() - n); }
}  // namespace

// The escape of an ASCII byte a JSON string cannot hold as it is (a control character, '"' or
// '\\'), as nlohmann writes it: at most 6 bytes at `o`; returns their end.
static char* put_json_escape(char* o, unsigned char c) noexcept {
  *o++ = '\\';
  switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\b': *o++ = 'b'; break;
    case '\t': *o++ = 't'; break;
    case '\n': *o++ = 'n'; break;
    case '\f': *o++ = 'f'; break;
    case '\r': *o++ = 'r'; break;
    default:
      o[0] = 'u';
      o[1] = '0';
      o[2] = '0';
      o[3] = kHex[c >> 4];
      o[4] = kHex[c & 15];
      o += 5;
  }
  return o;
}

template <typename Out>
void flat_json_string(Out& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  if (plain_json_body(s.data(), n)) {  // the common case: written as it is
    char* o = extend(out, n + 2);
    o[0] = '"';
    if (n > 0) std::memcpy(o + 1, s.data(), n);
    o[n + 1] = '"';
    return;
  }
  // Written through a pointer, a block of input at a time: each byte becomes at most 6 (\u00XX),
  // a maximal ill-formed subsequence 3 (U+FFFD).
  constexpr std::size_t kBlock = 4096;
  *extend(out, 1) = '"';
  std::size_t i = 0;
  while (i < n) {
    const std::size_t block_end = n - i > kBlock ? i + kBlock : n;
    const std::size_t room = 6 * (block_end - i) + 3;
    char* const start = extend(out, room);
    char* o = start;
    while (i < block_end) {
      const unsigned char c = p[i];
      if (c < 0x80) {
        if (c >= 0x20 && c != '"' && c != '\\') {
          const std::size_t run = plain_json_prefix(s.data() + i, block_end - i);
          std::memcpy(o, s.data() + i, run);
          o += run;
          i += run;
          continue;
        }
        o = put_json_escape(o, c);
        ++i;
        continue;
      }
      // Non-ASCII: a well-formed sequence is copied; otherwise its maximal ill-formed prefix
      // (nlohmann's DFA rejects at the first byte that cannot continue it, and reads that byte
      // again as a new start) becomes one U+FFFD. A sequence may end past the block: the block's
      // room (6 per byte) covers it.
      std::size_t want = 0;
      unsigned char lo = 0x80, hi = 0xbf;
      if (c >= 0xc2 && c <= 0xdf)
        want = 1;
      else if (c == 0xe0)
        want = 2, lo = 0xa0;
      else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
        want = 2;
      else if (c == 0xed)
        want = 2, hi = 0x9f;
      else if (c == 0xf0)
        want = 3, lo = 0x90;
      else if (c >= 0xf1 && c <= 0xf3)
        want = 3;
      else if (c == 0xf4)
        want = 3, hi = 0x8f;
      if (want == 0) {
        std::memcpy(o, "\xEF\xBF\xBD", 3);
        o += 3;
        ++i;
        continue;
      }
      std::size_t k = 0;
      while (k < want && i + 1 + k < n) {
        const unsigned char b = p[i + 1 + k];
        if (b < (k == 0 ? lo : 0x80) || b > (k == 0 ? hi : 0xbf)) break;
        ++k;
      }
      if (k == want) {
        std::memcpy(o, s.data() + i, want + 1);
        o += want + 1;
        i += want + 1;
      } else {
        std::memcpy(o, "\xEF\xBF\xBD", 3);
        o += 3;
        i += 1 + k;  // the byte that broke the sequence (or the end) starts over
      }
    }
    shrink_by(out, room - static_cast<std::size_t>(o - start));
  }
  *extend(out, 1) = '"';
}

void append_flat_json_string(std::string& out, std::string_view s) { flat_json_string(out, s); }
void append_flat_json_string(OutBuf& out, std::string_view s) { flat_json_string(out, s); }

#if defined(__SSE2__)
// Of the sixteen bytes at `s`, a bit for each control character, '"' and '\\' (non-ASCII bytes,
// negative as signed bytes, are not controls).
[[gnu::always_inline]] static inline int json_escape_mask16(const char* s) noexcept {
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i ctl = _mm_and_si128(_mm_cmplt_epi8(x, space), _mm_cmpgt_epi8(x, _mm_set1_epi8(-1)));
  return _mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash))));
}
#endif

// How many bytes at `s` (at most n) a JSON string holds as they are when they are well-formed
// UTF-8: all but control characters, '"' and '\\'.
static std::size_t json_safe_prefix(const char* s, std::size_t n) noexcept {
#if defined(__SSE2__)
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    if (const int m = json_escape_mask16(s + i); m != 0) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  if (i == n) return n;
  int m = 0;
  if (n >= 16) {  // the last sixteen bytes, overlapping what was checked
    m = json_escape_mask16(s + n - 16) >> (16 - (n - i));
  } else {  // padded with 'a'
    char b[16];
    std::memset(b, 'a', sizeof b);
    copy_short(b, s, n);
    m = json_escape_mask16(b);
  }
  return m == 0 ? n : i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(m)));
#else
  std::size_t i = 0;
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\') break;
  }
  return i;
#endif
}

void append_flat_json_utf8(OutBuf& out, std::string_view s) {
  // A block of input at a time, into room for each byte's escape (6 bytes at most).
  constexpr std::size_t kBlock = 4096;
  *out.extend(1) = '"';
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const std::size_t block_end = n - i > kBlock ? i + kBlock : n;
    const std::size_t room = 6 * (block_end - i);
    char* const start = out.extend(room);
    char* o = start;
    while (i < block_end) {
      const std::size_t run = json_safe_prefix(s.data() + i, block_end - i);
      copy_bytes(o, s.data() + i, run);
      o += run;
      i += run;
      if (i == block_end) break;
      o = put_json_escape(o, static_cast<unsigned char>(s[i]));
      ++i;
    }
    out.truncate(out.size() - (room - static_cast<std::size_t>(o - start)));
  }
  *out.extend(1) = '"';
}

void append_dec(OutBuf& out, std::uint64_t v) {
  char buf[20];
  char* b = put_dec_backwards(buf + sizeof buf, v);
  out.append(b, static_cast<std::size_t>(buf + sizeof buf - b));
}
void append_dec(OutBuf& out, std::int64_t v) {
  char buf[21];
  char* b = put_dec_signed_backwards(buf + sizeof buf, v);
  out.append(b, static_cast<std::size_t>(buf + sizeof buf - b));
}

// ---- sqlType and values ------------------------------------------------------------------------

namespace types {
constexpr int BIT = -7, TINYINT = -6, SMALLINT = 5, INTEGER = 4, BIGINT = -5, REAL = 7, DOUBLE = 8, DECIMAL = 3,
              CHAR = 1, VARCHAR = 12, DATE = 91, TIME = 92, TIMESTAMP = 93, BLOB = 2004, CLOB = 2005, OTHER = 1111;
}

static bool blob_family(ColumnType t) {
  return t == ColumnType::tiny_blob || t == ColumnType::medium_blob || t == ColumnType::long_blob ||
         t == ColumnType::blob;
}

int null_sql_type(const ColumnDef& c) {
  using namespace types;
  switch (c.real_type == ColumnType::null ? c.type : c.real_type) {
    case ColumnType::tiny: return TINYINT;
    case ColumnType::short_: return SMALLINT;
    case ColumnType::int24:
    case ColumnType::long_: return INTEGER;
    case ColumnType::longlong: return BIGINT;
    case ColumnType::decimal:
    case ColumnType::newdecimal: return DECIMAL;
    case ColumnType::float_: return REAL;
    case ColumnType::double_: return DOUBLE;
    case ColumnType::bit: return BIT;
    case ColumnType::timestamp:
    case ColumnType::timestamp2:
    case ColumnType::datetime:
    case ColumnType::datetime2: return TIMESTAMP;
    case ColumnType::time:
    case ColumnType::time2: return TIME;
    case ColumnType::date:
    case ColumnType::newdate: return DATE;
    case ColumnType::year: return VARCHAR;
    case ColumnType::enum_: return INTEGER;
    case ColumnType::set: return BLOB;  // BINARY, then the BLOB rewrite
    case ColumnType::varchar:
    case ColumnType::var_string: return c.charset == 63 ? BLOB : VARCHAR;
    case ColumnType::string: return c.charset == 63 ? BLOB : CHAR;
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob: return c.charset != 0 && c.charset != 63 ? CLOB : BLOB;
    case ColumnType::json: return VARCHAR;
    case ColumnType::geometry: return BLOB;
    default: return OTHER;
  }
}

ValuePlan value_plan(const ColumnDef& c) {
  using namespace types;
  ValuePlan p;
  p.null_sql_type = null_sql_type(c);
  p.collation = c.charset;
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  auto integer = [&](unsigned bytes, int base, int wide) {
    p.sql_type = base;
    p.sql_type_wide = wide;
    p.wide_from = std::uint64_t{1} << (8 * bytes - 1);  // unsigned values past the signed range
  };
  switch (t) {
    case ColumnType::tiny: integer(1, TINYINT, SMALLINT); break;
    case ColumnType::short_: integer(2, SMALLINT, INTEGER); break;
    case ColumnType::int24: integer(3, INTEGER, INTEGER); break;
    case ColumnType::long_: integer(4, INTEGER, BIGINT); break;
    case ColumnType::longlong: integer(8, BIGINT, DECIMAL); break;
    case ColumnType::float_: p.sql_type = REAL; break;
    case ColumnType::double_: p.sql_type = DOUBLE; break;
    case ColumnType::year: p.sql_type = VARCHAR; break;
    case ColumnType::enum_: p.sql_type = INTEGER; break;
    case ColumnType::set: p.sql_type = BIT; break;
    case ColumnType::timestamp:
    case ColumnType::timestamp2:
    case ColumnType::datetime:
    case ColumnType::datetime2: p.sql_type = TIMESTAMP; break;
    case ColumnType::time:
    case ColumnType::time2: p.sql_type = TIME; break;
    case ColumnType::date:
    case ColumnType::newdate: p.sql_type = DATE; break;
    case ColumnType::decimal:
    case ColumnType::newdecimal: p.sql_type = DECIMAL; break;
    case ColumnType::bit: p.sql_type = BIT; break;
    case ColumnType::json: p.sql_type = VARCHAR; break;
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
      p.binary = t == ColumnType::geometry || c.charset == 63 || (blob_family(t) && c.charset == 0);
      p.utf8 = !p.binary && collation_is_utf8_compatible(c.charset);
      p.sql_type = p.binary ? BLOB : blob_family(t) ? CLOB : t == ColumnType::string ? CHAR : VARCHAR;
      break;
    default:  // VECTOR, the NULL type, types no row event stores: Canal prints no value
      p.rendered = false;
      p.sql_type = OTHER;
      break;
  }
  return p;
}

Status render_value_rest(const ValuePlan&, const ColumnValue& cv, const TimeZone&, CanalValue& v) {
  std::string& out = v.long_text();
  switch (cv.kind) {
    case ValueKind::decimal_text:  // convert's JSON string of the text, parsed back
      v.plain = false;
      append_utf8(out, as_string_view(cv.bytes), 0, BadBytes::hex_text);
      return {};
    case ValueKind::json: {
      v.plain = false;
      if (cv.bytes.empty()) return {};
      thread_local RenderBuf text;
      text.clear();
      Status st = append_json_binary(text, cv.bytes, cv.offset);
      if (st.ok()) out.assign(text.data(), text.size());
      return st;
    }
    default:
      break;
  }
  v.is_null = true;  // Canal: unknown type, value null
  v.plain = false;
  v.sql_type = types::OTHER;
  return {};
}

Status read_value_rest(const ColumnDef& c, const ValuePlan& p, ByteReader& r, std::size_t pos, const Status& st,
                       CanalValue& v) {
  ByteReader at(r.data().subspan(pos), r.base_offset() + pos);  // the reader at the value
  if (!p.rendered) {  // no value to decode: the bytes skipped
    auto size = column_value_size(c.type, c.meta, at);
    if (!size) return size.error();
    r.skip(*size);
    v.is_null = true;
    v.plain = false;
    v.sql_type = types::OTHER;
    v.long_text();
    return r.ok() ? Status{} : Status{r.error()};
  }
  // Canal has always sized a value before rendering it: where the size is wrong too, that error
  // (its words) is the one it reports.
  if (auto size = column_value_size(c.type, c.meta, at); !size) return size.error();
  return st;
}

// ---- mysqlType text ----------------------------------------------------------------------------

std::string mysql_type_text(const ColumnDef& c, bool display_widths) {
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  // Canal's spelling where it differs from the definition's: GEOMETRY without its subtype, ENUM /
  // SET without members when the map has none (rather than an empty list).
  if (t == ColumnType::geometry) return "geometry";
  if ((t == ColumnType::enum_ || t == ColumnType::set) && c.values.empty())
    return t == ColumnType::enum_ ? "enum" : "set";
  return column_type_text(column_definition_from_map(c, Flavor::mysql, display_widths));
}

}  // namespace binlogctl::canal_detail

namespace binlogctl {

std::string java_double_string(double v) {
  std::string s;
  canal_detail::append_java_double(s, v);
  return s;
}
std::string java_float_string(float v) {
  std::string s;
  canal_detail::append_java_float(s, v);
  return s;
}

bool canal_timezone_valid(std::string_view tz) {
  return fixed_timezone_offset(tz).has_value() || timezone_name_exists(tz);
}

}  // namespace binlogctl
