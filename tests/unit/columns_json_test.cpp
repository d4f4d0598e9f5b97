// Column decoders: MySQL binary JSON.
#include "columns/column_json.h"
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace binlogctl;

namespace {

using Buf = std::vector<std::uint8_t>;
constexpr std::uint64_t kBase = 10000;

// Test-side encoder of json_binary.cc's format.
struct V {
  std::uint8_t type;
  Buf data;
};

Buf le(std::uint64_t v, int n) {
  Buf b;
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}
Buf varlen(std::size_t n) {
  Buf b;
  do {
    std::uint8_t c = n & 0x7f;
    n >>= 7;
    b.push_back(static_cast<std::uint8_t>(c | (n ? 0x80 : 0)));
  } while (n);
  return b;
}
V lit(std::uint8_t v) { return {0x04, {v}}; }
V i16(std::int16_t v) { return {0x05, le(static_cast<std::uint16_t>(v), 2)}; }
V u16(std::uint16_t v) { return {0x06, le(v, 2)}; }
V i32(std::int32_t v) { return {0x07, le(static_cast<std::uint32_t>(v), 4)}; }
V u32(std::uint32_t v) { return {0x08, le(v, 4)}; }
V i64(std::int64_t v) { return {0x09, le(static_cast<std::uint64_t>(v), 8)}; }
V u64(std::uint64_t v) { return {0x0a, le(v, 8)}; }
V dbl(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return {0x0b, le(u, 8)};
}
V str(std::string_view s) {
  Buf b = varlen(s.size());
  b.insert(b.end(), s.begin(), s.end());
  return {0x0c, b};
}
V opaque(std::uint8_t field_type, const Buf& data) {
  Buf b = {field_type};
  Buf l = varlen(data.size());
  b.insert(b.end(), l.begin(), l.end());
  b.insert(b.end(), data.begin(), data.end());
  return {0x0f, b};
}

V container(bool object, bool large, const std::vector<std::pair<std::string, V>>& items) {
  const std::size_t w = large ? 4 : 2, n = items.size();
  std::size_t pos = 2 * w + (object ? n * (w + 2) : 0) + n * (1 + w);
  Buf entries_k, entries_v, tail;
  for (auto& [k, v] : items) {
    if (!object) break;
    Buf e = le(pos, static_cast<int>(w));
    Buf l = le(k.size(), 2);
    entries_k.insert(entries_k.end(), e.begin(), e.end());
    entries_k.insert(entries_k.end(), l.begin(), l.end());
    tail.insert(tail.end(), k.begin(), k.end());
    pos += k.size();
  }
  for (auto& [k, v] : items) {
    entries_v.push_back(v.type);
    bool inl = v.type == 0x04 || v.type == 0x05 || v.type == 0x06 ||
               (large && (v.type == 0x07 || v.type == 0x08));
    if (inl) {
      Buf d = v.data;
      d.resize(w, 0);
      entries_v.insert(entries_v.end(), d.begin(), d.end());
    } else {
      Buf e = le(pos, static_cast<int>(w));
      entries_v.insert(entries_v.end(), e.begin(), e.end());
      tail.insert(tail.end(), v.data.begin(), v.data.end());
      pos += v.data.size();
    }
  }
  Buf b = le(n, static_cast<int>(w));
  Buf sz = le(pos, static_cast<int>(w));
  b.insert(b.end(), sz.begin(), sz.end());
  b.insert(b.end(), entries_k.begin(), entries_k.end());
  b.insert(b.end(), entries_v.begin(), entries_v.end());
  b.insert(b.end(), tail.begin(), tail.end());
  return {static_cast<std::uint8_t>(object ? (large ? 0x01 : 0x00) : (large ? 0x03 : 0x02)), b};
}
V obj(const std::vector<std::pair<std::string, V>>& items, bool large = false) {
  return container(true, large, items);
}
V arr(const std::vector<V>& items, bool large = false) {
  std::vector<std::pair<std::string, V>> kv;
  for (auto& v : items) kv.emplace_back("", v);
  return container(false, large, kv);
}
Buf doc(const V& v) {
  Buf b = {v.type};
  b.insert(b.end(), v.data.begin(), v.data.end());
  return b;
}

std::string render(const Buf& d) {
  std::string s;
  Status st = append_json_binary(s, Bytes(d.data(), d.size()), kBase);
  REQUIRE_MESSAGE(st.ok(), st.error().what);
  return s;
}
DecodeError fails(const Buf& d) {
  std::string s = "keep";
  Status st = append_json_binary(s, Bytes(d.data(), d.size()), kBase);
  REQUIRE_FALSE(st.ok());
  CHECK(s == "keep");
  return st.error();
}

// DECIMAL(p,s) binary for a few fixed values
Buf dec_123_456() { return {0x80 | 0x00, 0x7b, 0x01, 0xc8}; }  // DECIMAL(6,3) 123.456

}  // namespace

TEST_SUITE("columns") {
  TEST_CASE("binary JSON: scalars at the top level") {
    CHECK(render({}) == "null");
    CHECK(render(doc(lit(0))) == "null");
    CHECK(render(doc(lit(1))) == "true");
    CHECK(render(doc(lit(2))) == "false");
    CHECK(render(doc(i16(-32768))) == "-32768");
    CHECK(render(doc(u16(65535))) == "65535");
    CHECK(render(doc(i32(-2147483647 - 1))) == "-2147483648");
    CHECK(render(doc(u32(4294967295u))) == "4294967295");
    CHECK(render(doc(i64(INT64_MIN))) == "-9223372036854775808");
    CHECK(render(doc(u64(UINT64_MAX))) == "18446744073709551615");
    CHECK(render(doc(dbl(-1.5e10))) == "-15000000000.0");
    CHECK(render(doc(dbl(0.1))) == "0.1");
    CHECK(render(doc(str(""))) == R"("")");
    CHECK(render(doc(str("string with \"escapes\" and 😀"))) ==
          R"("string with \"escapes\" and 😀")");
    std::string long_str(300, 'v');  // 2-byte variable-length length
    CHECK(render(doc(str(long_str))) == "\"" + long_str + "\"");
    std::string huge(20000, 'w');  // 3-byte variable-length length
    CHECK(render(doc(str(huge))) == "\"" + huge + "\"");
  }

  TEST_CASE("binary JSON: small and large objects and arrays, inlined values, nesting") {
    CHECK(render(doc(obj({}))) == "{}");
    CHECK(render(doc(arr({}))) == "[]");
    CHECK(render(doc(obj({}, true))) == "{}");
    CHECK(render(doc(arr({}, true))) == "[]");
    V small = obj({{"a", i16(1)},
                   {"b", lit(1)},
                   {"c", lit(0)},
                   {"d", u16(7)},
                   {"e", i32(-70000)},
                   {"f", str("x")},
                   {"g", dbl(2.5)},
                   {"h", u64(1)}});
    const char* small_text = R"({"a":1,"b":true,"c":null,"d":7,"e":-70000,"f":"x","g":2.5,"h":1})";
    CHECK(render(doc(small)) == small_text);
    V large = obj({{"a", i16(1)},
                   {"b", lit(2)},
                   {"i", i32(-5)},
                   {"u", u32(4000000000u)},
                   {"arr", arr({lit(0), i16(2), str("s"), small})},
                   {"nested", small}},
                  true);
    CHECK(render(doc(large)) ==
          std::string(R"({"a":1,"b":false,"i":-5,"u":4000000000,"arr":[null,2,"s",)") + small_text +
              R"(],"nested":)" + small_text + "}");
    V la = arr({i32(1), u32(2), large, arr({arr({arr({})})})}, true);
    CHECK(render(doc(la)).substr(0, 9) == "[1,2,{\"a\"");
    CHECK(render(doc(la)).substr(render(doc(la)).size() - 9) == "},[[[]]]]");
    // the corpus' deep document
    V deep = obj(
        {{"deep", arr({arr({arr(
                      {arr({obj({{"a", arr({i16(1), i16(2), obj({{"b", str("ü")}})})}})})})})})}});
    CHECK(render(doc(deep)) == R"({"deep":[[[[{"a":[1,2,{"b":"ü"}]}]]]]})");
    // keys need escaping too
    CHECK(render(doc(obj({{"k\"\n", lit(1)}}))) == R"({"k\"\n":true})");
  }

  TEST_CASE("binary JSON: opaque values") {
    // MySQL 9 json-opaque.binlog asserts: {"a":"base64:type15:VQ=="}, {"b":"2012-03-18"},
    // {"c":"2012-03-18 11:30:45.000000"}, {"c":"87:31:46.654321"}, {"d":"123.456"}, {"e":"9.00"}
    CHECK(render(doc(obj({{"a", opaque(15, {'U'})}}))) == R"({"a":"base64:type15:VQ=="})");
    std::int64_t ymd = ((2012LL * 13 + 3) << 5) | 18;
    std::int64_t date = (ymd << 17) << 24;
    std::int64_t datetime = ((ymd << 17) | (11 << 12) | (30 << 6) | 45) << 24;
    std::int64_t time = ((87LL << 12) | (31 << 6) | 46) << 24 | 654321;
    CHECK(render(doc(obj({{"b", opaque(10, le(static_cast<std::uint64_t>(date), 8))}}))) ==
          R"({"b":"2012-03-18"})");
    CHECK(render(doc(obj({{"c", opaque(12, le(static_cast<std::uint64_t>(datetime), 8))}}))) ==
          R"({"c":"2012-03-18 11:30:45.000000"})");
    CHECK(render(doc(obj({{"c", opaque(7, le(static_cast<std::uint64_t>(datetime), 8))}}))) ==
          R"({"c":"2012-03-18 11:30:45.000000"})");
    CHECK(render(doc(obj({{"c", opaque(11, le(static_cast<std::uint64_t>(time), 8))}}))) ==
          R"({"c":"87:31:46.654321"})");
    CHECK(render(doc(obj({{"c", opaque(11, le(static_cast<std::uint64_t>(-time), 8))}}))) ==
          R"({"c":"-87:31:46.654321"})");
    Buf d = {6, 3};
    for (auto b : dec_123_456()) d.push_back(b);
    CHECK(render(doc(obj({{"d", opaque(246, d)}}))) == R"({"d":"123.456"})");
    Buf nine = {3, 2, 0x89, 0x00};  // DECIMAL(3,2) 9.00
    CHECK(render(doc(obj({{"e", opaque(246, nine)}}))) == R"({"e":"9.00"})");
    CHECK(render(doc(obj({{"e", arr({i16(0), i16(1), lit(1), lit(2)})}}))) ==
          R"({"e":[0,1,true,false]})");
    // too-short opaque payloads
    DecodeError e = fails(doc(opaque(10, {1, 2, 3})));
    CHECK(Errc{e.code} == Errc::bad_length);
    e = fails(doc(opaque(246, {6})));
    CHECK(Errc{e.code} == Errc::bad_length);
    e = fails(doc(opaque(246, {20, 3, 0x80})));
    CHECK(Errc{e.code} == Errc::truncated);
  }

  TEST_CASE("binary JSON: depth limit") {
    V v = arr({});
    for (int i = 0; i < 99; ++i) v = arr({v});
    CHECK(render(doc(v)).size() == 200);  // 100 levels is the server's maximum
    v = arr({v});
    DecodeError e = fails(doc(v));
    CHECK(Errc{e.code} == Errc::bad_value);
  }

  TEST_CASE("binary JSON: every offset and size is checked") {
    V o = obj({{"key", str("value")}, {"n", i64(5)}});
    Buf good = doc(o);
    REQUIRE(render(good) == R"({"key":"value","n":5})");
    // every strict prefix fails (never reads past the end, never crashes)
    for (std::size_t n = 1; n < good.size(); ++n) {
      Buf cut(good.begin(), good.begin() + static_cast<long>(n));
      std::string s;
      Status st = append_json_binary(s, Bytes(cut.data(), cut.size()), kBase);
      CHECK_FALSE(st.ok());
      CHECK(st.error().offset >= kBase);
      CHECK(st.error().offset <= kBase + n);
    }
    // element count far larger than the container: rejected before looping
    Buf bad = good;
    bad[1] = 0xff;
    bad[2] = 0xff;
    CHECK(fails(bad).code == Errc::bad_length);
    // size past the document
    bad = good;
    bad[3] = 0xff;
    DecodeError e = fails(bad);
    CHECK(Errc{e.code} == Errc::bad_length);
    CHECK(std::uint64_t{e.offset} == kBase + 3);
    // key offset past the object
    bad = good;
    bad[5] = 0xf0;
    CHECK(fails(bad).code == Errc::bad_length);
    // value offset past the object (value entry 0 starts after 2 key entries: 1+4+8 = 13)
    bad = good;
    bad[14] = 0xf0;
    e = fails(bad);
    CHECK(Errc{e.code} == Errc::bad_length);
    CHECK(std::uint64_t{e.offset} == kBase + 14);
    // unknown value type and unknown literal
    CHECK(fails({0x0d, 0, 0}).code == Errc::bad_value);
    CHECK(fails({0x04, 0x07}).code == Errc::bad_value);
    // string length longer than what is left, and a 6-byte varlen
    CHECK(fails({0x0c, 0x05, 'a'}).code == Errc::truncated);
    CHECK(fails({0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}).code == Errc::bad_length);
    // large-array entry count of 2^32-1 with a tiny size
    CHECK(fails({0x03, 0xff, 0xff, 0xff, 0xff, 0x08, 0, 0, 0}).code == Errc::bad_length);
  }

  TEST_CASE("JSON column: length prefix + binary JSON through append_value_json") {
    Buf d = doc(obj({{"a", i16(1)}}));
    Buf row = {static_cast<std::uint8_t>(d.size()), 0, 0, 0};
    row.insert(row.end(), d.begin(), d.end());
    ColumnInfo c;
    c.type = ColumnType::json;
    c.meta = 4;
    c.charset = 63;
    ByteReader r(Bytes(row.data(), row.size()), kBase);
    std::string out;
    REQUIRE(append_value_json(c, r, out).ok());
    CHECK(out == R"({"a":1})");
    CHECK(r.empty());
    // an error inside the document reports an absolute offset within the row
    Buf badrow = {3, 0, 0, 0, 0x0c, 0x09, 'x'};
    ByteReader r2(Bytes(badrow.data(), badrow.size()), kBase);
    out.assign(1, 'x');
    Status st = append_value_json(c, r2, out);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::truncated);
    CHECK(st.error().offset == kBase + 6);
    CHECK(out == "x");
    // zero-length JSON value
    Buf empty = {0, 0, 0, 0};
    ByteReader r3(Bytes(empty.data(), empty.size()), kBase);
    out.clear();
    REQUIRE(append_value_json(c, r3, out).ok());
    CHECK(out == "null");
  }
}
