// Column decoders: integers, FLOAT/DOUBLE, BIT, YEAR, DECIMAL.
#include "columns/column_json.h"
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <fmt/format.h>
#include <limits>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

using Buf = std::vector<std::uint8_t>;
constexpr std::uint64_t kBase = 1000;  // absolute offset of the first byte in every test

struct Run {
  Status st;
  std::string text;
  std::size_t consumed;
};

Run run(const ColumnInfo& c, const Buf& b, const RenderOptions& o = {}) {
  ByteReader r(Bytes(b.data(), b.size()), kBase);
  std::string s = "<";  // pre-existing output must survive, and errors must restore it
  Status st = append_value_json(c, r, s, o);
  REQUIRE(s.substr(0, 1) == "<");
  if (!st.ok()) CHECK(s == "<");
  return {st, s.substr(1), r.position()};
}

// Decodes, requires success and that the value used exactly the bytes column_value_size says.
std::string ok(const ColumnInfo& c, const Buf& b, const RenderOptions& o = {}) {
  Run r = run(c, b, o);
  INFO("type ", column_type_name(c.type), " meta ", c.meta);
  REQUIRE_MESSAGE(r.st.ok(), r.st.error().what);
  CHECK(r.consumed == b.size());
  Result<std::size_t> sz =
      column_value_size(c.type, c.meta, ByteReader(Bytes(b.data(), b.size()), kBase));
  REQUIRE(sz.ok());
  CHECK(*sz == b.size());
  return r.text;
}

DecodeError fails(const ColumnInfo& c, const Buf& b) {
  Run r = run(c, b);
  REQUIRE_FALSE(r.st.ok());
  return r.st.error();
}

ColumnInfo col(ColumnType t, std::uint16_t meta = 0, bool is_unsigned = false) {
  ColumnInfo c;
  c.type = t;
  c.meta = meta;
  c.is_unsigned = is_unsigned;
  return c;
}

Buf le(std::uint64_t v, int n) {
  Buf b;
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}

// Test-side decimal2bin (strings/decimal.cc), written independently of the decoder.
Buf dec_bin(int precision, int scale, std::string text) {
  static const int dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  bool neg = !text.empty() && text[0] == '-';
  if (neg) text.erase(0, 1);
  std::string ip = text, fp;
  if (auto dot = text.find('.'); dot != std::string::npos) {
    ip = text.substr(0, dot);
    fp = text.substr(dot + 1);
  }
  int intg = precision - scale;
  while (!ip.empty() && ip[0] == '0') ip.erase(0, 1);
  ip = std::string(intg - ip.size(), '0') + ip;
  fp += std::string(scale - fp.size(), '0');
  Buf out;
  auto put = [&](const std::string& digits) {
    int n = static_cast<int>(digits.size());
    std::uint32_t v = digits.empty() ? 0 : static_cast<std::uint32_t>(std::stoul(digits));
    int bytes = n == 9 ? 4 : dig2bytes[n];
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  std::size_t p = 0;
  if (intg % 9) {
    put(ip.substr(0, intg % 9));
    p = intg % 9;
  }
  for (; p < ip.size(); p += 9) put(ip.substr(p, 9));
  for (p = 0; p + 9 <= fp.size(); p += 9) put(fp.substr(p, 9));
  if (scale % 9) put(fp.substr(p));
  if (neg)
    for (auto& c : out) c = static_cast<std::uint8_t>(~c);
  out[0] ^= 0x80;
  return out;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

TEST_SUITE("columns") {
  TEST_CASE("integers: every width, signed and unsigned min/max") {
    CHECK(ok(col(ColumnType::tiny), {0x80}) == "-128");
    CHECK(ok(col(ColumnType::tiny), {0x7f}) == "127");
    CHECK(ok(col(ColumnType::tiny), {0xff}) == "-1");
    CHECK(ok(col(ColumnType::tiny, 0, true), {0xff}) == "255");
    CHECK(ok(col(ColumnType::tiny, 0, true), {0x00}) == "0");
    CHECK(ok(col(ColumnType::short_), {0x00, 0x80}) == "-32768");
    CHECK(ok(col(ColumnType::short_), {0xff, 0x7f}) == "32767");
    CHECK(ok(col(ColumnType::short_, 0, true), {0xff, 0xff}) == "65535");
    CHECK(ok(col(ColumnType::int24), {0x00, 0x00, 0x80}) == "-8388608");
    CHECK(ok(col(ColumnType::int24), {0xff, 0xff, 0x7f}) == "8388607");
    CHECK(ok(col(ColumnType::int24), {0xff, 0xff, 0xff}) == "-1");
    CHECK(ok(col(ColumnType::int24, 0, true), {0xff, 0xff, 0xff}) == "16777215");
    CHECK(ok(col(ColumnType::long_), le(0x80000000u, 4)) == "-2147483648");
    CHECK(ok(col(ColumnType::long_), le(0x7fffffffu, 4)) == "2147483647");
    CHECK(ok(col(ColumnType::long_, 0, true), le(0xffffffffu, 4)) == "4294967295");
    CHECK(ok(col(ColumnType::long_, 0, true), le(3230202323u, 4)) == "3230202323");
    CHECK(ok(col(ColumnType::longlong), le(0x8000000000000000ull, 8)) == "-9223372036854775808");
    CHECK(ok(col(ColumnType::longlong), le(0x7fffffffffffffffull, 8)) == "9223372036854775807");
    CHECK(ok(col(ColumnType::longlong), le(~0ull, 8)) == "-1");
    CHECK(ok(col(ColumnType::longlong, 0, true), le(~0ull, 8)) == "18446744073709551615");
    CHECK(ok(col(ColumnType::longlong, 0, true), le(0x8000000000000000ull, 8)) ==
          "9223372036854775808");
  }

  TEST_CASE("integers: truncated input reports the value's offset") {
    for (auto [t, n] : {std::pair{ColumnType::tiny, 1},
                        {ColumnType::short_, 2},
                        {ColumnType::int24, 3},
                        {ColumnType::long_, 4},
                        {ColumnType::longlong, 8}}) {
      Buf b(n - 1, 0x11);
      DecodeError e = fails(col(t), b);
      CHECK(Errc{e.code} == Errc::truncated);
      CHECK(std::uint64_t{e.offset} == kBase);
      auto sz = column_value_size(t, 0, ByteReader(Bytes(b.data(), b.size()), kBase));
      REQUIRE_FALSE(sz.ok());
      CHECK(sz.error().code == Errc::truncated);
      CHECK(sz.error().offset == kBase);
    }
  }

  TEST_CASE("FLOAT and DOUBLE: shortest round-trip, Python repr style") {
    auto f = [](float v) {
      std::uint32_t u;
      std::memcpy(&u, &v, 4);
      return ok(col(ColumnType::float_, 4), le(u, 4));
    };
    auto d = [](double v) {
      std::uint64_t u;
      std::memcpy(&u, &v, 8);
      return ok(col(ColumnType::double_, 8), le(u, 8));
    };
    CHECK(f(0.0f) == "0.0");
    CHECK(f(-0.0f) == "-0.0");
    CHECK(f(0.1f) == "0.1");
    CHECK(f(3.4028235e38f) == "3.4028235e+38");
    CHECK(f(1.1754944e-38f) == "1.1754944e-38");
    CHECK(f(1e-45f) == "1e-45");
    CHECK(f(16777216.0f) == "16777216.0");
    CHECK(f(67000000000.0f) == "67000000000.0");
    CHECK(f(2.5e-05f) == "2.5e-05");
    CHECK(f(3.1415927f) == "3.1415927");
    CHECK(f(2e17f) == "2e+17");
    CHECK(f(-80000000000000.0f) == "-80000000000000.0");
    CHECK(d(0.1) == "0.1");
    CHECK(d(0.30000000000000004) == "0.30000000000000004");
    CHECK(d(1.7976931348623157e308) == "1.7976931348623157e+308");
    CHECK(d(5e-324) == "5e-324");
    CHECK(d(9007199254740992.0) == "9007199254740992.0");
    CHECK(d(-1.2345678901234568e20) == "-1.2345678901234568e+20");
    CHECK(d(1e16) == "1e+16");
    CHECK(d(0.0001) == "0.0001");
    CHECK(d(-1e-10) == "-1e-10");
    CHECK(d(std::numeric_limits<double>::quiet_NaN()) == "null");
    CHECK(d(std::numeric_limits<double>::infinity()) == "null");
    CHECK(f(-std::numeric_limits<float>::infinity()) == "null");
    CHECK(fails(col(ColumnType::double_, 8), Buf(7)).offset == kBase);
    CHECK(fails(col(ColumnType::float_, 4), Buf(3)).code == Errc::truncated);
  }

  TEST_CASE("FLOAT and DOUBLE: the same text as fmt's shortest form in Python's layout, on random bits") {
    // The oracle: fmt's "{}" (Dragonbox shortest round-trip; exponent notation below 1e-4 and from
    // 1e16 on, like Python's repr), with ".0" added to integral values as Python prints them.
    auto oracle = [](auto v) {
      if (!std::isfinite(v)) return std::string("null");
      std::string s = fmt::format("{}", v);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    };
    std::mt19937_64 rng(20261130);
    int mismatches = 0;
    for (int i = 0; i < 300000 && mismatches < 5; ++i) {
      const std::uint64_t bits = rng();
      double d;
      std::memcpy(&d, &bits, 8);
      std::string got;
      append_double_json(got, d);
      if (got != oracle(d)) {
        ++mismatches;
        CHECK(got == oracle(d));
      }
      const auto bits32 = static_cast<std::uint32_t>(bits >> 17);
      float f;
      std::memcpy(&f, &bits32, 4);
      got.clear();
      append_float_json(got, f);
      if (got != oracle(f)) {
        ++mismatches;
        CHECK(got == oracle(f));
      }
      // values near the fixed/exponent boundaries and small integers, which random bits rarely hit
      const double near = std::ldexp(static_cast<double>(bits % 100000), static_cast<int>(bits % 120) - 60);
      got.clear();
      append_double_json(got, near);
      if (got != oracle(near)) {
        ++mismatches;
        CHECK(got == oracle(near));
      }
    }
    for (double v : {1e15, 9.999999999999999e15, 1e16, 1e-4, 9.99e-5, 123456789012345.6, -0.0, 1.0, 100.0}) {
      std::string got;
      append_double_json(got, v);
      CHECK(got == oracle(v));
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("FLOAT(M,D) and DOUBLE(M,D): D decimals, as SELECT prints them") {
    auto fd = [](float v, int dec) {
      std::uint32_t u;
      std::memcpy(&u, &v, 4);
      ColumnInfo c = col(ColumnType::float_, 4);
      c.decimals = static_cast<std::int8_t>(dec);
      return ok(c, le(u, 4));
    };
    auto dd = [](double v, int dec) {
      std::uint64_t u;
      std::memcpy(&u, &v, 8);
      ColumnInfo c = col(ColumnType::double_, 8);
      c.decimals = static_cast<std::int8_t>(dec);
      return ok(c, le(u, 8));
    };
    // What the server stored for -0.0001 in a DOUBLE(12,4) (types corpus, t_float id 5)
    CHECK(dd(-9.999999999998899e-05, 4) == "-0.0001");
    CHECK(dd(10942098.0966, 4) == "10942098.0966");
    CHECK(dd(99999999.9999, 4) == "99999999.9999");
    CHECK(dd(0.1, 0) == "0");
    CHECK(fd(1.5f, 3) == "1.500");
    CHECK(fd(9999.999f, 3) == "9999.999");  // stored as 9999.9990234375
    CHECK(fd(-184.23f, 3) == "-184.230");
    CHECK(dd(1e300, 2).size() == 304);  // 301 integral digits, point, 2 decimals
    CHECK(dd(std::numeric_limits<double>::infinity(), 2) == "null");
  }

  TEST_CASE("BIT: big-endian unsigned value, 1..64 bits") {
    // meta: low byte = bits % 8, high byte = whole bytes
    CHECK(ok(col(ColumnType::bit, 0x0001), {0x01}) == "1");          // BIT(1)
    CHECK(ok(col(ColumnType::bit, 0x0007), {0x55}) == "85");         // BIT(7)
    CHECK(ok(col(ColumnType::bit, 0x0100), {0xff}) == "255");        // BIT(8)
    CHECK(ok(col(ColumnType::bit, 0x0101), {0x01, 0x27}) == "295");  // BIT(9)
    CHECK(ok(col(ColumnType::bit, 0x0401), {0x01, 0xff, 0xff, 0xff, 0xff}) == "8589934591");
    CHECK(ok(col(ColumnType::bit, 0x0800), Buf(8, 0xff)) == "18446744073709551615");
    CHECK(ok(col(ColumnType::bit, 0x0800), {0x80, 0, 0, 0, 0, 0, 0, 0}) == "9223372036854775808");
    CHECK(ok(col(ColumnType::bit, 0x0707), {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) ==
          "9223372036854775807");  // BIT(63)
    CHECK(fails(col(ColumnType::bit, 0x0101), {0x01}).offset == kBase);
    CHECK(fails(col(ColumnType::bit, 0x0008), {0x01}).code == Errc::bad_value);
  }

  TEST_CASE("YEAR") {
    CHECK(ok(col(ColumnType::year), {0}) == "0");
    CHECK(ok(col(ColumnType::year), {1}) == "1901");
    CHECK(ok(col(ColumnType::year), {255}) == "2155");
    CHECK(ok(col(ColumnType::year), {124}) == "2024");
    CHECK(fails(col(ColumnType::year), {}).code == Errc::truncated);
  }

  TEST_CASE("NEWDECIMAL: the documented example bytes") {
    // strings/decimal.cc: 1234567890.1234 as DECIMAL(14,4) is 81 0D FB 38 D2 04 D2
    const std::uint16_t m = 14 << 8 | 4;
    CHECK(ok(col(ColumnType::newdecimal, m), {0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x04, 0xd2}) ==
          "\"1234567890.1234\"");
    CHECK(ok(col(ColumnType::newdecimal, m), {0x7e, 0xf2, 0x04, 0xc7, 0x2d, 0xfb, 0x2d}) ==
          "\"-1234567890.1234\"");
    CHECK(dec_bin(14, 4, "1234567890.1234") == Buf{0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x04, 0xd2});
  }

  TEST_CASE("NEWDECIMAL: boundaries from the MariaDB corpus") {
    struct Case {
      int p, s;
      const char* text;
    };
    const Case cases[] = {
        {5, 2, "999.99"},
        {5, 2, "-999.99"},
        {5, 2, "0.00"},
        {5, 2, "-0.01"},
        {10, 0, "9999999999"},
        {10, 0, "-847"},
        {10, 0, "0"},
        {1, 0, "9"},
        {1, 0, "-9"},
        {1, 0, "0"},
        {1, 1, "0.9"},
        {1, 1, "-0.1"},
        {1, 1, "0.0"},
        {9, 9, "0.999999999"},
        {9, 9, "-0.000000001"},
        {10, 5, "99999.99999"},
        {10, 5, "-0.00001"},
        {18, 9, "999999999.999999999"},
        {19, 0, "9999999999999999999"},
        {19, 0, "-1"},
        {20, 10, "-0.0000000001"},
        {38, 0, "99999999999999999999999999999999999999"},
        {38, 38, "0.99999999999999999999999999999999999999"},
        {38, 38, "-0.00000000000000000000000000000000000001"},
        {65, 30, "99999999999999999999999999999999999.999999999999999999999999999999"},
        {65, 30, "-99999999999999999999999999999999999.999999999999999999999999999999"},
        {65, 30, "0.000000000000000000000000000000"},
        {65, 30, "-123.456000000000000000000000000000"},
        {65, 0, "99999999999999999999999999999999999999999999999999999999999999999"},
        {65, 0, "-99999999999999999999999999999999999999999999999999999999999999999"},
        {12, 4, "12.3400"},
        {12, 4, "10000000.0000"},
        {19, 9, "1000000000.000000001"},
        {27, 9, "123456789123456789.123456789"},
    };
    for (const Case& c : cases) {
      INFO(c.p, ",", c.s, " ", c.text);
      const std::uint16_t m = static_cast<std::uint16_t>(c.p << 8 | c.s);
      Buf b = dec_bin(c.p, c.s, c.text);
      CHECK(b.size() == decimal_binary_size(c.p, c.s));
      CHECK(ok(col(ColumnType::newdecimal, m), b) == quoted(c.text));
    }
  }

  TEST_CASE("NEWDECIMAL: every precision 1..65 with sampled scales") {
    for (int p = 1; p <= 65; ++p) {
      for (int s : {0, 1, p / 2, p - 1, p}) {
        if (s < 0 || s > p) continue;
        const int intg = p - s;
        // all nines, a one in the last place, and a mixed pattern; positive and negative
        std::string nines =
            (intg ? std::string(intg, '9') : "0") + (s ? "." + std::string(s, '9') : "");
        std::string tiny = "0" + (s ? "." + std::string(s - 1, '0') + "1" : "");
        if (s == 0) tiny = "1";
        std::string mixed;
        for (int i = 0; i < intg; ++i) mixed.push_back(static_cast<char>('1' + i % 9));
        if (mixed.empty()) mixed = "0";
        if (s) {
          mixed.push_back('.');
          for (int i = 0; i < s; ++i) mixed.push_back(static_cast<char>('0' + (i * 7) % 10));
        }
        for (const std::string& t : {nines, tiny, mixed, "-" + nines, "-" + tiny, "-" + mixed}) {
          INFO(p, ",", s, " ", t);
          if (t.find_first_not_of("-0.") == std::string::npos && t[0] == '-') continue;  // no -0
          const std::uint16_t m = static_cast<std::uint16_t>(p << 8 | s);
          CHECK(ok(col(ColumnType::newdecimal, m), dec_bin(p, s, t)) == quoted(t));
        }
      }
    }
  }

  TEST_CASE("NEWDECIMAL: leading zeros, zero, bad metadata, bad groups, truncation") {
    const std::uint16_t m = 10 << 8 | 2;
    CHECK(ok(col(ColumnType::newdecimal, m), dec_bin(10, 2, "0.05")) == "\"0.05\"");
    CHECK(ok(col(ColumnType::newdecimal, m), dec_bin(10, 2, "-0.00")) == "\"0.00\"");  // no -0
    CHECK(ok(col(ColumnType::newdecimal, 5 << 8), dec_bin(5, 0, "0")) == "\"0\"");
    CHECK(fails(col(ColumnType::newdecimal, 0), {0x80}).code == Errc::bad_value);  // p = 0
    CHECK(fails(col(ColumnType::newdecimal, 66 << 8), Buf(40)).code == Errc::bad_value);
    CHECK(fails(col(ColumnType::newdecimal, 5 << 8 | 6), Buf(40)).code == Errc::bad_value);
    // a 9-digit group holding 1e9
    Buf big = {0x80 | 0x3b, 0x9a, 0xca, 0x00};  // DECIMAL(9,0) = 0x3b9aca00 = 1000000000
    DecodeError e = fails(col(ColumnType::newdecimal, 9 << 8), big);
    CHECK(Errc{e.code} == Errc::bad_value);
    CHECK(std::uint64_t{e.offset} == kBase);
    // at most 9 digits on each side (one load): the fraction group checked too, either sign
    e = fails(col(ColumnType::newdecimal, 4 << 8 | 2), {0x80, 100});  // DECIMAL(4,2) x.100
    CHECK(Errc{e.code} == Errc::bad_value);
    CHECK(std::uint64_t{e.offset} == kBase);
    e = fails(col(ColumnType::newdecimal, 4 << 8 | 2), {0x7f, static_cast<std::uint8_t>(~100)});
    CHECK(Errc{e.code} == Errc::bad_value);
    e = fails(col(ColumnType::newdecimal, 18 << 8 | 9), {0x80 | 0x3b, 0x9a, 0xc9, 0xff, 0x3b, 0x9a, 0xca, 0x00});
    CHECK(Errc{e.code} == Errc::bad_value);  // 999999999.1000000000
    // two integer groups in the one load: DECIMAL(12,2) is 1 + 4 + 1 bytes
    CHECK(ok(col(ColumnType::newdecimal, 12 << 8 | 2), {0x80 | 9, 0x3b, 0x9a, 0xc9, 0xff, 99}) ==
          "\"9999999999.99\"");
    e = fails(col(ColumnType::newdecimal, 12 << 8 | 2), {0x80, 0x3b, 0x9a, 0xca, 0x00, 0});  // 1e9
    CHECK(Errc{e.code} == Errc::bad_value);
    e = fails(col(ColumnType::newdecimal, 12 << 8 | 2), {0x80 | 10, 0, 0, 0, 0, 0});  // 10 in 1 digit
    CHECK(Errc{e.code} == Errc::bad_value);
    Buf b = dec_bin(65, 30, "1.5");
    b.pop_back();
    e = fails(col(ColumnType::newdecimal, 65 << 8 | 30), b);
    CHECK(Errc{e.code} == Errc::truncated);
    CHECK(std::uint64_t{e.offset} == kBase);
  }

  TEST_CASE("old DECIMAL (type 0) is the stored text") {
    CHECK(ok(col(ColumnType::decimal, 7), {' ', ' ', '-', '1', '.', '2', '5'}) == "\"-1.25\"");
    CHECK(fails(col(ColumnType::decimal, 0), {'1'}).code == Errc::bad_value);
    CHECK(fails(col(ColumnType::decimal, 4), {'1'}).code == Errc::truncated);
  }

  TEST_CASE("NULL type renders null and reads nothing") {
    CHECK(ok(col(ColumnType::null), {}) == "null");
  }

  TEST_CASE("unsupported types fail without output") {
    CHECK(fails(col(ColumnType::bool_), {1}).code == Errc::bad_value);
    CHECK(fails(col(static_cast<ColumnType>(100)), {1}).code == Errc::bad_value);
  }
}
