// Hand-rolled JSON Lines output into a reusable buffer: no allocation per event once warm,
// always valid UTF-8 whatever the input bytes.
//
// Strings: ", \ and control characters are escaped as JSON requires. A byte that is not part of
// valid UTF-8 is not turned into a \u escape (that would silently make it another character):
// it is written as the text \xHH (in JSON: "\\xHH", a literal backslash, x, two hex digits),
// so the original bytes can be recovered and
// the output is still valid JSON and valid UTF-8.
#pragma once

#include "base/digits.h"
#include "render/render_buf.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace binlogctl {

// The appenders write to a std::string or a RenderBuf (Out); both are instantiated in json_out.cpp.

// Appends s as the contents of a JSON string (no surrounding quotes).
template <class Out>
void append_json_escaped(Out& out, std::string_view s);
template <>
void append_json_escaped<std::string>(std::string& out, std::string_view s);
template <>
void append_json_escaped<RenderBuf>(RenderBuf& out, std::string_view s);
// Length of the well-formed UTF-8 sequence starting at s[i] (1 for ASCII), 0 when ill-formed.
std::size_t utf8_sequence_length(const unsigned char* s, std::size_t i, std::size_t n) noexcept;
// How much of `s` to take as the next piece of at most `max` bytes (max > 4) when a huge text is
// escaped piece by piece: the piece does not end inside a UTF-8 sequence (it ends before a lead
// or ASCII byte), so escaping the pieces one by one gives what escaping all at once gives.
inline std::size_t utf8_piece(std::string_view s, std::size_t max) noexcept {
  if (s.size() <= max) return s.size();
  std::size_t k = max;
  while (k > max - 4 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  return (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80 ? max : k;
}
// A byte that is not valid UTF-8 (or not decodable in its charset): the JSON text \\xHH.
template <class Out>
void append_invalid_byte(Out& out, unsigned char b);
// Appends s as a quoted JSON string.
template <class Out>
inline void append_json_quoted(Out& out, std::string_view s) {
  out.push_back('"');
  append_json_escaped(out, s);
  out.push_back('"');
}
// Decimal digits, two per division from a table of the pairs 00..99 (the number renderers'
// shared core). format_u64_backward writes v so that it ends just before `end` and returns where
// it starts (at most 20 characters); format_fixed_digits writes exactly `digits` digits of v at p,
// zero-padded on the left (v must have no more digits than that). The pairs: base/digits.h.
inline char* format_u64_backward(char* end, std::uint64_t v) noexcept {
  while (v > 0xffffffffu) {  // 64-bit divisions only while needed: 32-bit ones are cheaper
    const auto r = static_cast<std::size_t>(v % 100) * 2;
    v /= 100;
    end -= 2;
    end[0] = kDigitPairs[r];
    end[1] = kDigitPairs[r + 1];
  }
  auto w = static_cast<std::uint32_t>(v);
  while (w >= 100) {
    const auto r = static_cast<std::size_t>(w % 100) * 2;
    w /= 100;
    end -= 2;
    end[0] = kDigitPairs[r];
    end[1] = kDigitPairs[r + 1];
  }
  if (w >= 10) {
    const auto r = static_cast<std::size_t>(w) * 2;
    end -= 2;
    end[0] = kDigitPairs[r];
    end[1] = kDigitPairs[r + 1];
  } else {
    *--end = static_cast<char>('0' + w);
  }
  return end;
}
inline void format_fixed_digits(char* p, std::uint64_t v, int digits) noexcept {
  int i = digits;
  while (i >= 2) {
    const auto r = static_cast<std::size_t>(v % 100) * 2;
    v /= 100;
    p[--i] = kDigitPairs[r + 1];
    p[--i] = kDigitPairs[r];
  }
  if (i == 1) p[0] = static_cast<char>('0' + v % 10);
}
// Number of decimal digits of v (1 for 0).
inline int decimal_digits(std::uint64_t v) noexcept {
  static constexpr std::uint64_t kPow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
      10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
      10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
      100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
  const int log2 = 63 - __builtin_clzll(v | 1);
  const int t = ((log2 + 1) * 1233) >> 12;  // log10 estimate, at most one too high
  return t - ((v | 1) < kPow10[t] ? 1 : 0) + 1;
}
template <class Out>
BINLOGCTL_INLINE void append_u64(Out& out, std::uint64_t v) {
  if constexpr (requires { out.tail(std::size_t{}); }) {  // RenderBuf: in place
    const int n = decimal_digits(v);
    char* p = out.tail(20);
    format_u64_backward(p + n, v);
    out.advance(static_cast<std::size_t>(n));
  } else {
    char buf[20];
    const char* b = format_u64_backward(buf + sizeof buf, v);
    out.append(b, static_cast<std::size_t>(buf + sizeof buf - b));
  }
}
template <class Out>
BINLOGCTL_INLINE void append_i64(Out& out, std::int64_t v) {
  if (v < 0) {
    out.push_back('-');
    append_u64(out, static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v));
  } else {
    append_u64(out, static_cast<std::uint64_t>(v));
  }
}
template <class Out>
void append_hex(Out& out, const std::uint8_t* p, std::size_t n);  // lowercase
template <class Out>
void append_base64(Out& out, const std::uint8_t* p, std::size_t n);
template <class Out>
inline void append_hex(Out& out, std::span<const std::uint8_t> b) { append_hex(out, b.data(), b.size()); }
template <class Out>
inline void append_base64(Out& out, std::span<const std::uint8_t> b) { append_base64(out, b.data(), b.size()); }

// Builds one JSON object at a time: w.begin(); w.key("pos").u64(4); ... w.end();
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter& begin_object() { sep(); out_.push_back('{'); first_ = true; return *this; }
  JsonWriter& end_object() { out_.push_back('}'); first_ = false; return *this; }
  JsonWriter& begin_array() { sep(); out_.push_back('['); first_ = true; return *this; }
  JsonWriter& end_array() { out_.push_back(']'); first_ = false; return *this; }
  JsonWriter& key(std::string_view k) {
    sep();
    append_json_quoted(out_, k);
    out_.push_back(':');
    first_ = true;  // the value follows without a comma
    return *this;
  }
  JsonWriter& u64(std::uint64_t v) { sep(); append_u64(out_, v); return *this; }
  JsonWriter& i64(std::int64_t v) { sep(); append_i64(out_, v); return *this; }
  JsonWriter& str(std::string_view s) { sep(); append_json_quoted(out_, s); return *this; }
  JsonWriter& boolean(bool b) { sep(); out_.append(b ? "true" : "false"); return *this; }
  JsonWriter& null() { sep(); out_.append("null"); return *this; }
  JsonWriter& raw(std::string_view json) { sep(); out_.append(json); return *this; }
  JsonWriter& hex(const std::uint8_t* p, std::size_t n) {
    sep();
    out_.push_back('"');
    append_hex(out_, p, n);
    out_.push_back('"');
    return *this;
  }
  std::string& out() { return out_; }

 private:
  void sep() {
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace binlogctl
