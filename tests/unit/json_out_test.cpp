#include <binlogctl/json_out.h>
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
