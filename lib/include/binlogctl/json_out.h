// Hand-rolled JSON Lines output into a reusable buffer: no allocation per event once warm,
// always valid UTF-8 whatever the input bytes.
//
// Strings: ", \ and control characters are escaped as JSON requires. A byte that is not part of
// valid UTF-8 is not turned into a \u escape (that would silently make it another character):
// it is written as the text \xHH (in JSON: "\\xHH", a literal backslash, x, two hex digits),
// so the original bytes can be recovered and
// the output is still valid JSON and valid UTF-8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace binlogctl {

// Appends s as the contents of a JSON string (no surrounding quotes).
void append_json_escaped(std::string& out, std::string_view s);
// Length of the well-formed UTF-8 sequence starting at s[i] (1 for ASCII), 0 when ill-formed.
std::size_t utf8_sequence_length(const unsigned char* s, std::size_t i, std::size_t n) noexcept;
// A byte that is not valid UTF-8 (or not decodable in its charset): the JSON text \\xHH.
void append_invalid_byte(std::string& out, unsigned char b);
// Appends s as a quoted JSON string.
inline void append_json_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  append_json_escaped(out, s);
  out.push_back('"');
}
void append_u64(std::string& out, std::uint64_t v);
void append_i64(std::string& out, std::int64_t v);
void append_hex(std::string& out, const std::uint8_t* p, std::size_t n);  // lowercase
void append_base64(std::string& out, const std::uint8_t* p, std::size_t n);
inline void append_hex(std::string& out, std::span<const std::uint8_t> b) { append_hex(out, b.data(), b.size()); }
inline void append_base64(std::string& out, std::span<const std::uint8_t> b) { append_base64(out, b.data(), b.size()); }

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
