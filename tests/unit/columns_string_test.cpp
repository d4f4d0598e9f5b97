// Column decoders: CHAR/VARCHAR/BLOB/TEXT, charsets, ENUM/SET, binary, UUID/INET, VECTOR, metadata.
#include "columns/column_json.h"
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace binlogctl;
using namespace std::string_view_literals;

namespace {

using Buf = std::vector<std::uint8_t>;
constexpr std::uint64_t kBase = 4096;

// len-prefixed value: n-byte little-endian length + data
Buf prefixed(std::string_view data, int n) {
  Buf b;
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(data.size() >> (8 * i)));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

ColumnInfo col(ColumnType t, std::uint16_t meta, std::uint16_t charset = 45) {
  ColumnInfo c;
  c.type = t;
  c.meta = meta;
  c.charset = charset;
  return c;
}

std::string ok(const ColumnInfo& c, const Buf& b, const RenderOptions& o = {}) {
  ByteReader r(Bytes(b.data(), b.size()), kBase);
  std::string s = "[";
  Status st = append_value_json(c, r, s, o);
  INFO(column_type_name(c.type), " meta ", c.meta);
  REQUIRE_MESSAGE(st.ok(), st.error().what);
  CHECK(r.position() == b.size());
  auto sz = column_value_size(c.type, c.meta, ByteReader(Bytes(b.data(), b.size()), kBase));
  REQUIRE(sz.ok());
  CHECK(*sz == b.size());
  return s.substr(1);
}

DecodeError fails(const ColumnInfo& c, const Buf& b) {
  ByteReader r(Bytes(b.data(), b.size()), kBase);
  std::string s = "keep";
  Status st = append_value_json(c, r, s);
  REQUIRE_FALSE(st.ok());
  CHECK(s == "keep");
  return st.error();
}

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace

TEST_SUITE("columns") {
  TEST_CASE("append_json_string: escapes, ASCII fast path, invalid UTF-8 as \\\\xHH") {
    CHECK(json("") == R"("")");
    CHECK(json("plain ascii text") == R"("plain ascii text")");
    CHECK(json("q\"b\\s/") == R"("q\"b\\s/")");
    CHECK(json("\n\t\r\b\f") == R"("\n\t\r\b\f")");
    CHECK(json(std::string_view("\x00\x01\x1f\x7f", 4)) == "\"\\u0000\\u0001\\u001f\x7f\"");
    CHECK(json("é€😀") == "\"é€😀\"");  // valid 2-, 3- and 4-byte sequences pass
    CHECK(json("\xff") == R"("\\xff")");
    CHECK(json("a\x80z") == R"("a\\x80z")");                // stray continuation byte
    CHECK(json("\xc3") == R"("\\xc3")");                    // truncated sequence at the end
    CHECK(json("\xc3(") == R"("\\xc3(")");                  // lead byte without continuation
    CHECK(json("\xc0\xaf") == R"("\\xc0\\xaf")");           // overlong '/'
    CHECK(json("\xe0\x80\xaf") == R"("\\xe0\\x80\\xaf")");  // overlong 3-byte
    CHECK(json("\xed\xa0\x80") == R"("\\xed\\xa0\\x80")");  // UTF-16 surrogate
    CHECK(json("\xf4\x90\x80\x80") == R"("\\xf4\\x90\\x80\\x80")");  // > U+10FFFF
    CHECK(json("\xf0\x9f\x98") == R"("\\xf0\\x9f\\x98")");           // truncated emoji
    CHECK(json("ok\xe2\x82\xac\xe2\x82") == R"("ok€\\xe2\\x82")");
    std::string body;
    append_json_string_body(body, "a\"b");
    CHECK(body == R"(a\"b)");
  }

  TEST_CASE("VARCHAR: 1-byte length below 256, 2 bytes from 256") {
    CHECK(ok(col(ColumnType::varchar, 255), prefixed("abc", 1)) == R"("abc")");
    CHECK(ok(col(ColumnType::varchar, 256), prefixed("abc", 2)) == R"("abc")");
    CHECK(ok(col(ColumnType::varchar, 1020), prefixed(std::string(300, 'x'), 2)) ==
          "\"" + std::string(300, 'x') + "\"");
    CHECK(ok(col(ColumnType::var_string, 10), prefixed("", 1)) == R"("")");
    CHECK(ok(col(ColumnType::varchar, 40), prefixed("in txn \xf0\x9f\x98\x80", 1)) ==
          "\"in txn 😀\"");
    // a length larger than the input: truncated at the data, nothing allocated or written
    Buf b = {0xff, 0xff, 'a', 'b'};
    DecodeError e = fails(col(ColumnType::varchar, 300), b);
    CHECK(Errc{e.code} == Errc::truncated);
    CHECK(std::uint64_t{e.offset} == kBase + 2);
    auto sz =
        column_value_size(ColumnType::varchar, 300, ByteReader(Bytes(b.data(), b.size()), kBase));
    REQUIRE_FALSE(sz.ok());
    CHECK(sz.error().offset == kBase + 2);
    CHECK(fails(col(ColumnType::varchar, 300), {0x01}).offset == kBase);  // prefix itself cut
    CHECK(fails(col(ColumnType::varchar, 10), {}).code == Errc::truncated);
  }

  TEST_CASE("STRING metadata: real type, long CHAR packing") {
    // CHAR(255) utf8mb4 = 1020 bytes: 0x3fc, bits 8-9 xor'ed into the type byte: 0xfe ^ 0x30
    StringMeta sm = unpack_string_meta(0xcefc);
    CHECK(sm.real_type == ColumnType::string);
    CHECK(sm.length == 1020);
    sm = unpack_string_meta(0xfe0a);
    CHECK(sm.real_type == ColumnType::string);
    CHECK(sm.length == 10);
    sm = unpack_string_meta(0xeeff);  // 0x1ff = 511
    CHECK(sm.length == 511);
    sm = unpack_string_meta(0xf701);
    CHECK(sm.real_type == ColumnType::enum_);
    CHECK(sm.length == 1);
    sm = unpack_string_meta(0xf808);
    CHECK(sm.real_type == ColumnType::set);
    CHECK(ok(col(ColumnType::string, 0xcefc), prefixed("🐬🐬", 2)) == R"("🐬🐬")");
    CHECK(ok(col(ColumnType::string, 0xfeff), prefixed("x", 1)) == R"("x")");  // CHAR(255) 1 byte
    CHECK(ok(col(ColumnType::string, 0xfe28), prefixed("B", 1)) == R"("B")");  // stored trimmed
    DecodeError e = fails(col(ColumnType::string, 0xcefc), {0x05, 0x00, 'a'});
    CHECK(Errc{e.code} == Errc::truncated);
    CHECK(std::uint64_t{e.offset} == kBase + 2);
  }

  TEST_CASE("metadata reading from a TABLE_MAP block") {
    // VARCHAR(300) 2c 01 | NEWDECIMAL(10,2) 0a 02 | STRING CHAR(255)mb4 ce fc | BIT(9) 01 01 |
    // DATETIME2(6) 06 | BLOB 02 | LONG (none)
    const Buf block = {0x2c, 0x01, 0x0a, 0x02, 0xce, 0xfc, 0x01, 0x01, 0x06, 0x02};
    ByteReader r(Bytes(block.data(), block.size()), 77);
    CHECK(read_column_meta(ColumnType::varchar, r) == 300);
    CHECK(read_column_meta(ColumnType::newdecimal, r) == (10 << 8 | 2));
    CHECK(read_column_meta(ColumnType::string, r) == 0xcefc);
    CHECK(read_column_meta(ColumnType::bit, r) == 0x0101);
    CHECK(read_column_meta(ColumnType::datetime2, r) == 6);
    CHECK(read_column_meta(ColumnType::blob, r) == 2);
    CHECK(read_column_meta(ColumnType::long_, r) == 0);
    CHECK(r.ok());
    CHECK(r.empty());
    CHECK(read_column_meta(ColumnType::double_, r) == 0);
    CHECK_FALSE(r.ok());
    CHECK(r.error().code == Errc::truncated);
    CHECK(r.error().offset == 77 + block.size());
    CHECK(column_meta_size(ColumnType::long_) == 0);
    CHECK(column_meta_size(ColumnType::time2) == 1);
    CHECK(column_meta_size(ColumnType::set) == 2);
    CHECK(column_meta_size(ColumnType::typed_array) == -1);
    CHECK(column_meta_size(static_cast<ColumnType>(77)) == -1);
    CHECK(std::string(column_type_name(ColumnType::long_)) == "LONG");
    CHECK(std::string(column_type_name(ColumnType::varchar)) == "VARCHAR");
    CHECK(std::string(column_type_name(ColumnType::newdecimal)) == "NEWDECIMAL");
    CHECK(std::string(column_type_name(static_cast<ColumnType>(77))) == "UNKNOWN");
  }

  TEST_CASE("BLOB/TEXT with 1..4 byte length prefixes") {
    const std::string big(70000, 'z');
    CHECK(ok(col(ColumnType::blob, 1), prefixed("tiny", 1)) == R"("tiny")");
    CHECK(ok(col(ColumnType::blob, 2), prefixed("text", 2)) == R"("text")");
    CHECK(ok(col(ColumnType::blob, 3), prefixed(big, 3)) == "\"" + big + "\"");
    CHECK(ok(col(ColumnType::blob, 4), prefixed(big, 4)) == "\"" + big + "\"");
    CHECK(ok(col(ColumnType::blob, 4, 63), prefixed("\x00\xff"sv, 4)) == R"("AP8=")");
    for (std::uint16_t n = 1; n <= 4; ++n) {
      INFO("prefix ", n);
      Buf b(n, 0xff);  // a length of 2^(8n)-1 with no data behind it
      DecodeError e = fails(col(ColumnType::blob, n), b);
      CHECK(Errc{e.code} == Errc::truncated);
      CHECK(std::uint64_t{e.offset} == kBase + n);
      e = fails(col(ColumnType::blob, n), Buf(n - 1, 0));
      CHECK(Errc{e.code} == Errc::truncated);
      CHECK(std::uint64_t{e.offset} == kBase);
    }
    CHECK(fails(col(ColumnType::blob, 5), prefixed("x", 4)).code == Errc::bad_value);
    CHECK(fails(col(ColumnType::blob, 0), prefixed("x", 4)).code == Errc::bad_value);
  }

  TEST_CASE("binary columns: base64 default, hex option, BINARY(n) padding") {
    RenderOptions hex;
    hex.binary_as = BinaryAs::hex;
    const Buf v = prefixed(std::string_view("a\0b\0", 4), 1);
    CHECK(ok(col(ColumnType::varchar, 10, 63), v) == R"("YQBiAA==")");
    CHECK(ok(col(ColumnType::varchar, 10, 63), v, hex) == R"("61006200")");
    CHECK(ok(col(ColumnType::varchar, 300, 63), prefixed("", 2), hex) == R"("")");
    // BINARY(16) with trailing zero bytes stripped by the server: padded back to 16 bytes
    CHECK(ok(col(ColumnType::string, 0xfe10, 63), prefixed("\x01", 1), hex) ==
          R"("01000000000000000000000000000000")");
    CHECK(ok(col(ColumnType::string, 0xfe01, 63), prefixed("", 1), hex) == R"("00")");
    CHECK(ok(col(ColumnType::string, 0xfe01, 63), prefixed("\xff", 1), hex) == R"("ff")");
    CHECK(ok(col(ColumnType::geometry, 4, 0), prefixed("\x00\x00\x00\x00\x01"sv, 4), hex) ==
          R"("0000000001")");
    std::string b64;
    append_base64(b64, Bytes(reinterpret_cast<const std::uint8_t*>("foobar"), 6));
    CHECK(b64 == "Zm9vYmFy");
    b64.clear();
    append_base64(b64, Bytes(reinterpret_cast<const std::uint8_t*>("fooba"), 5));
    CHECK(b64 == "Zm9vYmE=");
    b64.clear();
    append_base64(b64, Bytes(reinterpret_cast<const std::uint8_t*>("foob"), 4));
    CHECK(b64 == "Zm9vYg==");
  }

  TEST_CASE("charsets: latin1 (cp1252), ucs2, utf16, utf16le, utf32, cp1251, sjis, gbk") {
    // latin1 collation 8: é € ß ÿ and the undefined 0x81 -> U+0081
    CHECK(ok(col(ColumnType::varchar, 20, 8), prefixed("\xe9\x80\xdf\xff\x81", 1)) ==
          "\"é€ßÿ\xc2\x81\"");
    CHECK(ok(col(ColumnType::blob, 2, 47), prefixed("\xa3\"", 2)) == "\"£\\\"\"");  // latin1_bin
    // ucs2 (35): big-endian
    CHECK(ok(col(ColumnType::varchar, 40, 35),
             prefixed(std::string_view("\x00h\x00\xe9\x20\xac", 6), 1)) == "\"hé€\"");
    // utf16 (54): surrogate pair for U+1F600
    CHECK(ok(col(ColumnType::varchar, 40, 54), prefixed("\xd8\x3d\xde\x00"sv, 1)) == "\"😀\"");
    // utf16le (56)
    CHECK(ok(col(ColumnType::varchar, 40, 56), prefixed(std::string_view("h\x00\xac\x20", 4), 1)) ==
          "\"h€\"");
    // utf32 (60)
    CHECK(ok(col(ColumnType::varchar, 40, 60),
             prefixed(std::string_view("\x00\x01\xf6\x00", 4), 1)) == "\"😀\"");
    // cp1251 (51): "Яд"
    CHECK(ok(col(ColumnType::varchar, 40, 51), prefixed("\xdf\xe4", 1)) == "\"Яд\"");
    // sjis (13): "日本"
    CHECK(ok(col(ColumnType::varchar, 40, 13), prefixed("\x93\xfa\x96\x7b", 1)) == "\"日本\"");
    // gbk (28): "中文"
    CHECK(ok(col(ColumnType::varchar, 40, 28), prefixed("\xd6\xd0\xce\xc4", 1)) == "\"中文\"");
    // MariaDB NO PAD (id + 1024) and UCA-14 ids
    CHECK(ok(col(ColumnType::varchar, 40, 8 + 1024), prefixed("\xe9", 1)) == "\"é\"");
    CHECK(std::string(collation_charset_name(2048 + 256 + 8)) == "utf8mb4");
    CHECK(std::string(collation_charset_name(2048 + 512)) == "ucs2");
    CHECK(std::string(collation_charset_name(255)) == "utf8mb4");
    CHECK(std::string(collation_charset_name(63)) == "binary");
    CHECK(std::string(collation_charset_name(0)) == "utf8mb4");
    CHECK(std::string(collation_charset_name(33)) == "utf8mb3");
    CHECK(std::string(collation_charset_name(248)) == "gb18030");
    CHECK(std::string(collation_charset_name(0x2c0)) == "utf16le");
    CHECK(std::string(collation_charset_name(9999)) == "utf8mb4");
  }

  TEST_CASE("charsets: undecodable bytes are escaped, never dropped") {
    // ucs2 with an odd trailing byte, utf16 with a lone surrogate, sjis with a bad lead byte
    CHECK(ok(col(ColumnType::varchar, 40, 35), prefixed(std::string_view("\x00h\x41", 3), 1)) ==
          R"("h\\x41")");
    CHECK(ok(col(ColumnType::varchar, 40, 54), prefixed(std::string_view("\xd8\x3d\x00h", 4), 1))
              .find("\\\\x") != std::string::npos);
    std::string s = ok(col(ColumnType::varchar, 40, 13), prefixed("a\xa0\xffz", 1));
    CHECK(s.front() == '"');
    CHECK(s.find('a') != std::string::npos);
    CHECK(s.find('z') != std::string::npos);
    CHECK(s.find("\\\\x") != std::string::npos);
    // utf8mb4 text with invalid bytes
    CHECK(ok(col(ColumnType::varchar, 40, 45), prefixed("ok\xff", 1)) == R"("ok\\xff")");
    // keybcs2 (37) has no iconv converter: ASCII passes, the rest is escaped
    CHECK(ok(col(ColumnType::varchar, 40, 37), prefixed("a\x80", 1)) == R"("a\\x80")");
  }

  // One converter: JSON's text is append_utf8's hex_text result escaped the JSON way, and SQL's
  // strict reading (refuse) gives that same result or nothing.
  TEST_CASE("append_utf8: the one charset converter behind the JSON, Canal and SQL text") {
    const std::uint16_t collations[] = {45, 33, 11, 63, 17, 8, 51, 13, 28, 35, 54, 56, 60, 37, 0, 9999};
    const std::string pieces[] = {"a", "\"", "\\", "\n", std::string(1, '\0'), "\x01", "\xc3\xa9", "\xe2\x82\xac",
                                  "\xf0\x9f\x98\x80", "\xff", "\x80", "\xe9", "\x93\xfa", "\xd8\x3d", "\xed\xa0\x80", "xyz"};
    std::uint32_t seed = 5;
    auto pick = [&](unsigned n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 16) % n;
    };
    for (int k = 0; k < 4000; ++k) {
      std::string bytes;
      for (unsigned n = pick(6); n > 0; --n) bytes += pieces[pick(16)];
      for (std::uint16_t c : collations) {
        INFO("collation ", c, " bytes ", json(bytes));
        std::string raw = "[";
        REQUIRE(append_utf8(raw, bytes, c, BadBytes::hex_text));
        std::string want, got;
        append_json_string(want, raw.substr(1));
        append_text_json(got, bytes, c);
        CHECK(got == want);
        std::string strict = "[";
        if (append_utf8(strict, bytes, c, BadBytes::refuse)) {
          CHECK(strict == raw);
        } else {
          CHECK(strict == "[");
        }
      }
    }
    auto conv = [](std::string_view b, std::uint16_t c, BadBytes p) {
      std::string out = "keep:";
      return append_utf8(out, b, c, p) ? out.substr(5) : out == "keep:" ? std::string("refused") : "changed:" + out;
    };
    // hex_text: undecodable bytes as the text \xHH, lowercase, the rest as it is (no escaping)
    CHECK(conv("ok\xff\"\n", 45, BadBytes::hex_text) == "ok\\xff\"\n");
    CHECK(conv("\xe9\x80\x81", 8, BadBytes::hex_text) == "\xc3\xa9\xe2\x82\xac\xc2\x81");  // latin1 = cp1252
    CHECK(conv("\x93\xfa\x96\x7b", 13, BadBytes::hex_text) == "\xe6\x97\xa5\xe6\x9c\xac");  // sjis
    CHECK(conv("a\xa0\xffz", 13, BadBytes::hex_text).find("\\x") != std::string::npos);
    CHECK(conv("a\x80", 37, BadBytes::hex_text) == "a\\x80");  // keybcs2: no iconv converter
    CHECK(conv("\xf0\x9f\x98\x80", 33, BadBytes::hex_text) == "\xf0\x9f\x98\x80");  // utf8mb3 passes 4 bytes
    CHECK(conv("\xc3\xa9", 11, BadBytes::hex_text) == "\xc3\xa9");  // ascii passes UTF-8
    CHECK(conv("\xc3\xa9", 63, BadBytes::hex_text) == "\xc3\xa9");  // binary taken as utf8mb4
    // refuse: every byte must be text of the charset
    CHECK(conv("ok\xff", 45, BadBytes::refuse) == "refused");
    CHECK(conv("\xf0\x9f\x98\x80", 45, BadBytes::refuse) == "\xf0\x9f\x98\x80");
    CHECK(conv("\xf0\x9f\x98\x80", 33, BadBytes::refuse) == "refused");
    CHECK(conv("\xe2\x82\xac", 33, BadBytes::refuse) == "\xe2\x82\xac");
    CHECK(conv("abc", 11, BadBytes::refuse) == "abc");
    CHECK(conv("\xc3\xa9", 11, BadBytes::refuse) == "refused");
    CHECK(conv("abc", 63, BadBytes::refuse) == "refused");
    CHECK(conv("abc", 17, BadBytes::refuse) == "refused");
    CHECK(conv("\x81", 8, BadBytes::refuse) == "\xc2\x81");
    CHECK(conv("\x93\xfa", 13, BadBytes::refuse) == "\xe6\x97\xa5");
    CHECK(conv("a\xa0\xffz", 13, BadBytes::refuse) == "refused");
    CHECK(conv("a", 37, BadBytes::refuse) == "refused");
  }

  TEST_CASE("ENUM: 1 and 2 bytes, names or index") {
    const std::string_view names3[] = {"a", "b", "c"};
    ColumnInfo e = col(ColumnType::string, 0xf701);
    CHECK(ok(e, {2}) == "2");
    e.names = names3;
    CHECK(ok(e, {2}) == R"("b")");
    CHECK(ok(e, {0}) == R"("")");
    CHECK(ok(e, {9}) == "9");  // past the names: the index
    std::vector<std::string> big;
    for (int i = 0; i < 300; ++i) big.push_back("v" + std::to_string(1000 + i).substr(1));
    std::vector<std::string_view> bigv(big.begin(), big.end());
    ColumnInfo e2 = col(ColumnType::string, 0xf702);
    e2.names = bigv;
    CHECK(ok(e2, {0x2c, 0x01}) == R"("v299")");
    e2.names = {};
    CHECK(ok(e2, {0x2c, 0x01}) == "300");
    // enum names in latin1
    const std::string_view latin[] = {"caf\xe9"};
    ColumnInfo e3 = col(ColumnType::string, 0xf701, 8);
    e3.names = latin;
    CHECK(ok(e3, {1}) == "\"café\"");
    DecodeError err = fails(col(ColumnType::string, 0xf702), {0x01});
    CHECK(Errc{err.code} == Errc::truncated);
    CHECK(std::uint64_t{err.offset} == kBase);
    CHECK(fails(col(ColumnType::string, 0xf703), {1, 2, 3}).code == Errc::bad_value);
  }

  TEST_CASE("SET: 1..8 bytes, names or bitmap") {
    std::vector<std::string> names;
    for (int i = 0; i < 64; ++i) names.push_back("m" + std::to_string(100 + i).substr(1));
    std::vector<std::string_view> nv(names.begin(), names.end());
    for (std::uint16_t n = 1; n <= 8; ++n) {
      INFO("bytes ", n);
      Buf b(n, 0);
      b[0] = 0x05;       // m00, m02
      b[n - 1] |= 0x80;  // highest member of this width
      ColumnInfo s = col(ColumnType::string, static_cast<std::uint16_t>(0xf800 | n));
      std::uint64_t bits = 0;
      for (int i = 0; i < n; ++i) bits |= std::uint64_t{b[i]} << (8 * i);
      CHECK(ok(s, b) == std::to_string(bits));
      s.names = std::span<const std::string_view>(nv.data(), 8u * n);
      std::string expect = "\"m00,m02";
      if (n == 1)
        expect += ",m07\"";
      else
        expect += ",m" + std::to_string(8 * n - 1) + "\"";
      CHECK(ok(s, b) == expect);
      CHECK(
          fails(col(ColumnType::string, static_cast<std::uint16_t>(0xf800 | n)), Buf(n - 1)).code ==
          Errc::truncated);
    }
    const std::string_view xyz[] = {"x", "y", "z"};
    ColumnInfo s3 = col(ColumnType::string, 0xf801);
    s3.names = xyz;
    CHECK(ok(s3, {0}) == R"("")");
    CHECK(ok(s3, {7}) == R"("x,y,z")");
    CHECK(ok(s3, {8}) == "8");  // a bit past the members: the bitmap
    CHECK(fails(col(ColumnType::string, 0xf809), Buf(9)).code == Errc::bad_value);
  }

  TEST_CASE("MariaDB UUID / INET4 / INET6 hints") {
    ColumnInfo u = col(ColumnType::string, 0xfe10, 63);
    u.hint = ValueHint::uuid;
    CHECK(ok(u, prefixed("\x6c\xcd\x78\x0c\xba\xba\x10\x26\x95\x64\x5b\x8c\x65\x60\x24\xdb", 1)) ==
          R"("6ccd780c-baba-1026-9564-5b8c656024db")");
    // trailing zero byte stripped in the binlog (length 15)
    CHECK(ok(u, prefixed("\x12\x3e\x45\x67\xe8\x9b\x42\xd3\xa4\x56\x42\x66\x14\x17\x40", 1)) ==
          R"("123e4567-e89b-42d3-a456-426614174000")");
    CHECK(ok(u, prefixed("", 1)) == R"("00000000-0000-0000-0000-000000000000")");
    ColumnInfo i4 = col(ColumnType::string, 0xfe04, 63);
    i4.hint = ValueHint::inet4;
    CHECK(ok(i4, prefixed("\x7f\x00\x00\x01"sv, 1)) == R"("127.0.0.1")");
    CHECK(ok(i4, prefixed("\xff\xff\xff\xff", 1)) == R"("255.255.255.255")");
    CHECK(ok(i4, prefixed("", 1)) == R"("0.0.0.0")");
    auto inet6 = [](std::string_view raw) {
      std::string s;
      append_inet6_text(s, Bytes(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size()));
      return s;
    };
    CHECK(inet6(""sv) == "::");
    CHECK(inet6("\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01"sv) == "2001:db8::1");
    CHECK(inet6("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01"sv) == "::1");
    CHECK(inet6("\0\0\0\0\0\0\0\0\0\0\xff\xff\x0a\x01\x02\x03"sv) == "::ffff:10.1.2.3");
    CHECK(inet6("\0\0\0\0\0\0\0\0\0\0\0\0\x0a\x01\x02\x03"sv) == "::10.1.2.3");
    CHECK(inet6("\x17\x89\x50\xf6\x71\x90\x5a\xec\xd9\x70\xdf\x58\x5b\xdf\x81\x82"sv) ==
          "1789:50f6:7190:5aec:d970:df58:5bdf:8182");
    CHECK(inet6("\0\x01\0\0\0\x02\0\x03\0\x04\0\x05\0\x06\0\x07"sv) == "1::2:3:4:5:6:7");
    CHECK(inet6("\0\x01\0\0\0\0\0\x02\0\0\0\0\0\0\0\x03"sv) == "1:0:0:2::3");
    CHECK(inet6("\0\x01\0\x02\0\x03\0\x04\0\x05\0\x06\0\x07\0\0"sv) == "1:2:3:4:5:6:7::");
    ColumnInfo i6 = col(ColumnType::string, 0xfe10, 63);
    i6.hint = ValueHint::inet6;
    CHECK(ok(i6, prefixed("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1)) ==
          R"("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")");
  }

  TEST_CASE("VECTOR: float32 array") {
    const Buf data = {205, 204, 140, 63, 205, 204, 12, 64, 51, 51, 83, 64};
    Buf b = {12, 0, 0, 0};
    b.insert(b.end(), data.begin(), data.end());
    CHECK(ok(col(ColumnType::vector, 4, 63), b) == "[1.1,2.2,3.3]");
    Buf c = {12, 0, 0, 0, 0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0};
    CHECK(ok(col(ColumnType::vector, 4, 63), c) == "[1.0,-1.0,0.0]");
    CHECK(ok(col(ColumnType::vector, 4, 63), {0, 0, 0, 0}) == "[]");
    DecodeError e = fails(col(ColumnType::vector, 4, 63), {3, 0, 0, 0, 1, 2, 3});
    CHECK(Errc{e.code} == Errc::bad_length);
    CHECK(std::uint64_t{e.offset} == kBase + 4);
  }

  TEST_CASE("charsets: bytes per character, by name and by collation id, from one table") {
    CHECK(charset_max_bytes("utf8mb4") == 4);
    CHECK(charset_max_bytes("utf8") == 3);
    CHECK(charset_max_bytes("utf8mb3") == 3);
    CHECK(charset_max_bytes("latin1") == 1);
    CHECK(charset_max_bytes("sjis") == 2);
    CHECK(charset_max_bytes("gb18030") == 4);
    CHECK(charset_max_bytes("binary") == 1);
    CHECK(charset_max_bytes("klingon") == 0);
    CHECK(collation_max_bytes(45) == 4);   // utf8mb4_general_ci
    CHECK(collation_max_bytes(33) == 3);   // utf8mb3_general_ci
    CHECK(collation_max_bytes(8) == 1);    // latin1_swedish_ci
    CHECK(collation_max_bytes(63) == 1);   // binary
    CHECK(collation_max_bytes(35) == 2);   // ucs2_general_ci
    for (unsigned id = 0; id < 4096; ++id) {
      CAPTURE(id);
      CHECK(collation_max_bytes(static_cast<std::uint16_t>(id)) ==
            charset_max_bytes(collation_charset_name(static_cast<std::uint16_t>(id))));
    }
  }
}
