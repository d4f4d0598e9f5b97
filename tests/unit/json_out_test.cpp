#include "render/json_out.h"
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace binlogctl;

TEST_SUITE("json_out") {
  TEST_CASE("escapes quotes, backslashes and control characters") {
    std::string s;
    append_json_quoted(s, std::string_view("a\"b\\c\n\t\x01", 8));
    CHECK(s == R"("a\"b\\c\n\t\u0001")");
    CHECK(nlohmann::json::parse(s).get<std::string>() == std::string("a\"b\\c\n\t\x01"));
  }

  TEST_CASE("valid UTF-8 passes through, invalid bytes become \\xHH text") {
    std::string s;
    append_json_quoted(s, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(s == "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    s.clear();
    append_json_quoted(s, std::string_view("a\xff" "b\xc3", 4));  // stray byte, truncated sequence
    CHECK(s == R"("a\\xffb\\xc3")");
    CHECK(nlohmann::json::parse(s).get<std::string>() == "a\\xffb\\xc3");
    s.clear();
    append_json_quoted(s, "\xed\xa0\x80");  // a UTF-16 surrogate encoded in UTF-8 is invalid
    CHECK(s == R"("\\xed\\xa0\\x80")");
    s.clear();
    append_json_quoted(s, "\xc0\xaf");  // overlong
    CHECK(s == R"("\\xc0\\xaf")");
  }

  TEST_CASE("every byte string gives parseable JSON") {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
    std::string s;
    append_json_quoted(s, bytes);
    auto parsed = nlohmann::json::parse(s);
    REQUIRE(parsed.is_string());
    // the 128 ASCII bytes decode to themselves, each of the 128 others to the 4 characters \xHH
    CHECK(parsed.get<std::string>().size() == 128 + 128 * 4);
    CHECK(parsed.get<std::string>().substr(128, 8) == "\\x80\\x81");
  }

  TEST_CASE("numbers, hex and base64") {
    std::string s;
    append_u64(s, 18446744073709551615ull);
    s.push_back(' ');
    append_i64(s, -9223372036854775807ll - 1);
    CHECK(s == "18446744073709551615 -9223372036854775808");
    const std::uint8_t b[] = {0x00, 0xff, 0x10};
    s.clear();
    append_hex(s, b, 3);
    CHECK(s == "00ff10");
    s.clear();
    append_base64(s, reinterpret_cast<const std::uint8_t*>("hello"), 5);
    CHECK(s == "aGVsbG8=");
  }

  TEST_CASE("JsonWriter builds one object with commas in the right places") {
    std::string s;
    JsonWriter w(s);
    w.begin_object().key("a").u64(1).key("b").begin_array().str("x").null().end_array().key("c").boolean(false).end_object();
    CHECK(s == R"({"a":1,"b":["x",null],"c":false})");
  }
}

TEST_SUITE("RenderBuf") {
  TEST_CASE("appends of every length up to past the inline copies, and growth") {
    std::string ref;
    RenderBuf b;
    std::string src;
    for (int i = 0; i < 80; ++i) src.push_back(static_cast<char>('a' + i % 26));
    for (int round = 0; round < 200; ++round) {  // well past the first growth
      for (std::size_t n = 0; n <= 40; ++n) {
        b.append(src.data() + round % 7, n);
        ref.append(src.data() + round % 7, n);
        b.push_back('|');
        ref.push_back('|');
      }
    }
    REQUIRE(b.size() == ref.size());
    CHECK(b.view() == ref);
    b.resize(10);
    CHECK(b.view() == ref.substr(0, 10));
    b.resize(12, 'x');
    CHECK(b.view() == ref.substr(0, 10) + "xx");
    b.clear();
    CHECK(b.empty());
  }

  TEST_CASE("appending a part of itself survives the growth that moves it") {
    RenderBuf b;
    b.append("0123456789");
    for (int i = 0; i < 20; ++i) b.append(b.data(), b.size());  // doubles each time: grows often
    CHECK(b.size() == 10u << 20);
    const std::string_view v = b.view();
    CHECK(v.substr(0, 10) == "0123456789");
    CHECK(v.substr(v.size() - 10) == "0123456789");
    CHECK(v.find_first_not_of("0123456789") == std::string_view::npos);
  }

  TEST_CASE("a borrowed std::string gets exactly what was appended") {
    std::string s = "head:";
    s.reserve(1000);
    {
      RenderBuf b(s);
      append_json_quoted(b, "x\"y");
      append_u64(b, 42);
      append_i64(b, -7);
    }
    CHECK(s == "head:\"x\\\"y\"42-7");
    std::string empty;
    { RenderBuf b(empty); }
    CHECK(empty.empty());
  }

  TEST_CASE("integers written in place, at every digit count") {
    std::uint64_t p = 1;
    for (int digits = 1; digits <= 20; ++digits) {
      for (std::uint64_t v : {p, p == 1 ? 0 : p - 1, p + 1, p * 9 / 10 * 10 + 9}) {
        RenderBuf b;
        b.push_back('[');
        append_u64(b, v);
        b.push_back(']');
        CHECK(b.view() == "[" + std::to_string(v) + "]");
        CHECK(decimal_digits(v) == static_cast<int>(std::to_string(v).size()));
      }
      if (digits < 20) p *= 10;
    }
    for (std::uint64_t v : {0xffffffffull, 0x100000000ull, 0x100000063ull, 0x1000000ffull, 429496729600ull}) {
      RenderBuf b;  // around the switch from 64-bit to 32-bit divisions
      append_u64(b, v);
      CHECK(b.view() == std::to_string(v));
    }
    RenderBuf b;
    append_u64(b, ~0ull);
    append_i64(b, INT64_MIN);
    CHECK(b.view() == "18446744073709551615-9223372036854775808");
  }
}

// A byte-at-a-time escaper: what append_json_escaped must write.
std::string escape_reference(std::string_view s) {
  std::string r;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = p[i];
    if (c >= 0x80) {
      if (std::size_t len = utf8_sequence_length(p, i, s.size()); len != 0) {
        r.append(s.substr(i, len));
        i += len;
        continue;
      }
      static constexpr char kHex[] = "0123456789abcdef";
      r += "\\\\x";
      r.push_back(kHex[c >> 4]);
      r.push_back(kHex[c & 15]);
    } else if (c == '"') {
      r += "\\\"";
    } else if (c == '\\') {
      r += "\\\\";
    } else if (c == '\n') {
      r += "\\n";
    } else if (c == '\t') {
      r += "\\t";
    } else if (c == '\r') {
      r += "\\r";
    } else if (c == '\b') {
      r += "\\b";
    } else if (c == '\f') {
      r += "\\f";
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      r += b;
    } else {
      r.push_back(static_cast<char>(c));
    }
    ++i;
  }
  return r;
}

TEST_SUITE("json_out") {
  // The plain-byte scan works 16 bytes at a time: every kind of special byte, at every position
  // around the block edges, must come out as a byte-at-a-time escaper writes it.
  TEST_CASE("escaping: special bytes at every position, as a byte-at-a-time reference") {
    auto reference = escape_reference;
    const std::string specials[] = {"\"", "\\", "\n", std::string(1, '\x01'), std::string(1, '\x1f'),
                                    "\x80", "\xff", "\xc3\xa9", "\xe6\x9d\xb1", "\xf0\x9f\x98\x80", "\xe6\x9d",
                                    // leads without their continuation bytes, a surrogate (ED A0..BF)
                                    "\xc3", "\xef\xbf", "\xed\xa0\x80", "\xee\x80\x80"};
    int checked = 0;
    for (std::size_t len = 0; len <= 40; ++len) {
      for (std::size_t at = 0; at <= len; ++at) {
        for (const std::string& sp : specials) {
          std::string s(len, 'a');
          for (std::size_t k = 0; k < len; ++k) s[k] = static_cast<char>('a' + k % 26);
          s.insert(at, sp);
          std::string got;
          append_json_escaped(got, s);
          RenderBuf b;
          append_json_escaped(b, s);
          REQUIRE(got == reference(s));
          REQUIRE(b.view() == got);
          ++checked;
        }
      }
    }
    CHECK(checked == 41 * 42 / 2 * 15);
  }

  // A RenderBuf is escaped 16 bytes at a time, each block stored before it is tested, in pieces of
  // 4 KiB of input: random texts of every kind of byte, short and across the pieces' edges, must
  // come out as the reference writes them (and as a std::string gets them).
  TEST_CASE("escaping into a RenderBuf: random texts, short and past the 4 KiB pieces") {
    const std::string parts[] = {"a", "bc", "defghijklmnopqrstu", " ", "\"", "\\", "\n", "\t", "\r", "\b", "\f",
                                 std::string(1, '\0'), "\x01", "\x1f", "\x7f", "\x80", "\xbf", "\xff", "\xc3\xa9",
                                 "\xe6\x9d\xb1", "\xf0\x9f\x98\x80", "\xc3", "\xe6\x9d", "\xf0\x9f\x98", "\xed\xa0\x80",
                                 "\xef\xbf\xbd", "\xf4\x90\x80\x80", "\xc0\xaf"};
    std::uint32_t seed = 12345;
    auto rnd = [&seed](std::uint32_t m) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 8) % m;
    };
    for (int round = 0; round < 3000; ++round) {
      std::string s;
      const std::size_t want = round < 2000 ? rnd(40) : 4000 + rnd(9000);
      const std::uint32_t plain_bias = rnd(4);  // 0: specials everywhere .. 3: mostly plain
      while (s.size() < want) {
        const std::uint32_t r = rnd(10);
        s += r < 3 + 2 * plain_bias ? parts[rnd(3)] : parts[rnd(std::size(parts))];
      }
      RenderBuf b;
      b.append("x", 1);  // not at the buffer's start
      append_json_escaped(b, s);
      std::string got;
      append_json_escaped(got, s);
      const std::string want_text = escape_reference(s);
      REQUIRE(got == want_text);
      REQUIRE(b.view().substr(1) == want_text);
    }
  }
}

TEST_SUITE("json_out") {
  TEST_CASE("base64 into a RenderBuf (its whole groups written at once) as into a string, past growth") {
    std::vector<std::uint8_t> src;
    for (int i = 0; i < 6000; ++i) src.push_back(static_cast<std::uint8_t>(i * 37 + 11));
    std::string ref, via;
    RenderBuf b(via);
    for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 47u, 48u, 49u, 3000u, 5999u}) {
      append_base64(ref, src.data(), n);
      append_base64(b, src.data(), n);
      ref.push_back('|');
      b.push_back('|');
    }
    CHECK(b.view() == ref);
    CHECK(ref.substr(0, 9) == "|Cw==|CzA");  // 0x0b, then 0x0b 0x30
  }
}
