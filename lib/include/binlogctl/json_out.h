// Hand-rolled JSON Lines output into a reusable buffer: no allocation per event once warm,
// always valid UTF-8 whatever the input bytes.
//
// Strings: ", \ and control characters are escaped as JSON requires. A byte that is not part of
// valid UTF-8 is not turned into a \u escape (that would silently make it another character):
// it is written as the text \xHH (in JSON: "\\xHH", a literal backslash, x, two hex digits),
// so the original bytes can be recovered and
// the output is still valid JSON and valid UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

// Appends s as the contents of a JSON string (no surrounding quotes).
void append_json_escaped(std::string& out, std::string_view s);
// Appends s as a quoted JSON string.
inline void append_json_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  append_json_escaped(out, s);
  out.push_back('"');
}
void append_u64(std::string& out, std::uint64_t v);
void append_i64(std::string& out, std::int64_t v);
void append_hex(std::string& out, const std::uint8_t* p, std::size_t n);
void append_base64(std::string& out, const std::uint8_t* p, std::size_t n);

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
