// The typed value decoder (column_value.h) and the SQL literal renderer (sql.h), type by type.
#include <binlogctl/sql.h>
#include <doctest/doctest.h>

#include "columns/column_value.h"
#include "sql/sql_value.h"

#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using namespace binlogctl;

namespace {

using Buf = std::vector<std::uint8_t>;
constexpr std::uint64_t kBase = 1000;

ColumnInfo col(ColumnType t, std::uint16_t meta = 0, std::uint16_t charset = 45) {
  ColumnInfo c;
  c.type = t;
  c.meta = meta;
  c.charset = charset;
  return c;
}

Buf be(std::uint64_t v, int n) {
  Buf b;
  for (int i = n - 1; i >= 0; --i) b.push_back(i >= 8 ? 0 : static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}
Buf le(std::uint64_t v, int n) {
  Buf b;
  for (int i = 0; i < n; ++i) b.push_back(i >= 8 ? 0 : static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}
Buf prefixed(std::string_view data, int n) {
  Buf b = le(data.size(), n);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
Buf cat(Buf a, const Buf& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Decodes `b` as one value of `c` (all of it) and renders it.
std::string sql(const ColumnInfo& c, const Buf& b) {
  ByteReader r(Bytes(b.data(), b.size()), kBase);
  ColumnValue v;
  Status st = decode_column_value(c, r, v);
  INFO(column_type_name(c.type), " meta ", c.meta);
  REQUIRE_MESSAGE(st.ok(), st.error().what);
  CHECK(r.position() == b.size());
  std::string out;
  st = append_sql_literal(out, c, v);
  REQUIRE_MESSAGE(st.ok(), st.error().what);
  return out;
}

DecodeError fails(const ColumnInfo& c, const Buf& b) {
  ByteReader r(Bytes(b.data(), b.size()), kBase);
  ColumnValue v;
  Status st = decode_column_value(c, r, v);
  REQUIRE_FALSE(st.ok());
  return st.error();
}

}  // namespace

TEST_SUITE("sql values") {
  TEST_CASE("integers: signed by sign extension, UNSIGNED stays unsigned") {
    CHECK(sql(col(ColumnType::tiny), {0x80}) == "-128");
    ColumnInfo u = col(ColumnType::tiny);
    u.is_unsigned = true;
    CHECK(sql(u, {0x80}) == "128");
    CHECK(sql(col(ColumnType::int24), le(0xffffff, 3)) == "-1");
    CHECK(sql(col(ColumnType::longlong), le(0x8000000000000000ull, 8)) == "-9223372036854775808");
    u.type = ColumnType::longlong;
    CHECK(sql(u, le(~0ull, 8)) == "18446744073709551615");
    CHECK(sql(col(ColumnType::long_), le(0, 4)) == "0");
  }

  TEST_CASE("FLOAT and DOUBLE: digits that give back the same bits") {
    const float f = 0.1f;
    std::uint32_t fu = 0;
    std::memcpy(&fu, &f, 4);
    CHECK(sql(col(ColumnType::float_, 4), le(fu, 4)) == "0.10000000149011612");  // the double it widens to
    const double d = 0.30000000000000004;
    std::uint64_t du = 0;
    std::memcpy(&du, &d, 8);
    CHECK(sql(col(ColumnType::double_, 8), le(du, 8)) == "0.30000000000000004");
    const double tiny = 5e-324;
    std::memcpy(&du, &tiny, 8);
    CHECK(sql(col(ColumnType::double_, 8), le(du, 8)) == "5e-324");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::memcpy(&du, &nan, 8);
    CHECK(sql(col(ColumnType::double_, 8), le(du, 8)) == "NULL");
  }

  TEST_CASE("DECIMAL as stored, full scale") {
    // strings/decimal.cc: 1234567890.1234 as DECIMAL(14,4) is 81 0D FB 38 D2 04 D2
    CHECK(sql(col(ColumnType::newdecimal, 14 << 8 | 4), {0x81, 0x0d, 0xfb, 0x38, 0xd2, 0x04, 0xd2}) ==
          "1234567890.1234");
    CHECK(sql(col(ColumnType::newdecimal, 14 << 8 | 4), {0x7e, 0xf2, 0x04, 0xc7, 0x2d, 0xfb, 0x2d}) ==
          "-1234567890.1234");
    CHECK(fails(col(ColumnType::newdecimal, 0), {0x80}).code == Errc::bad_value);
  }

  TEST_CASE("BIT as b'..', YEAR as a number") {
    CHECK(sql(col(ColumnType::bit, 8 << 8), be(~0ull, 8)) == "b'" + std::string(64, '1') + "'");
    CHECK(sql(col(ColumnType::bit, 8 << 8), be(0, 8)) == "b'0'");
    CHECK(sql(col(ColumnType::bit, 5), {0x15}) == "b'10101'");
    CHECK(sql(col(ColumnType::year), {0}) == "0");
    CHECK(sql(col(ColumnType::year), {124}) == "2024");
  }

  TEST_CASE("temporal: fractions, negative TIME, zero dates, TIMESTAMP in UTC") {
    CHECK(sql(col(ColumnType::date), le(29 | 2 << 5 | 2024u << 9, 3)) == "'2024-02-29'");
    CHECK(sql(col(ColumnType::date), le(0, 3)) == "'0000-00-00'");
    // TIME2(0): -00:00:01 is the integer part -1 + 0x800000
    CHECK(sql(col(ColumnType::time2, 0), be(0x800000 - 1, 3)) == "'-00:00:01'");
    // TIME2(6): -838:59:59.000000 = -(838 << 12 | 59 << 6 | 59) << 24 + 0x800000000000
    const std::int64_t t = -((838LL << 12 | 59 << 6 | 59) << 24);
    CHECK(sql(col(ColumnType::time2, 6), be(static_cast<std::uint64_t>(t + 0x800000000000LL), 6)) ==
          "'-838:59:59.000000'");
    // TIME2(3): -00:00:00.500: intpart -1, fraction 0x10000 - 5000 (the "reversed" fraction)
    CHECK(sql(col(ColumnType::time2, 3), cat(be(0x800000 - 1, 3), be(0x10000 - 5000, 2))) == "'-00:00:00.500'");
    // DATETIME2(0) zero date; DATETIME2(6) 2000-01-01 12:00:00.5
    CHECK(sql(col(ColumnType::datetime2, 0), be(0x8000000000ull, 5)) == "'0000-00-00 00:00:00'");
    const std::uint64_t ymd = ((2000 * 13 + 1) << 5) | 1, hms = 12 << 12;
    CHECK(sql(col(ColumnType::datetime2, 6), cat(be(((ymd << 17) | hms) + 0x8000000000ull, 5), be(500000, 3))) ==
          "'2000-01-01 12:00:00.500000'");
    // TIMESTAMP2(6): 2038-01-19 03:14:07.999999 UTC; 0 is the zero timestamp
    CHECK(sql(col(ColumnType::timestamp2, 6), cat(be(2147483647, 4), be(999999, 3))) ==
          "'2038-01-19 03:14:07.999999'");
    CHECK(sql(col(ColumnType::timestamp2, 0), be(0, 4)) == "'0000-00-00 00:00:00'");
    CHECK(sql(col(ColumnType::timestamp), le(1, 4)) == "'1970-01-01 00:00:01'");
    CHECK(fails(col(ColumnType::datetime2, 7), be(0x8000000000ull, 5)).code == Errc::bad_value);
  }

  TEST_CASE("text: converted to _utf8mb4 with quotes doubled; what cannot be quoted safely as hex") {
    CHECK(sql(col(ColumnType::varchar, 40, 8), prefixed("caf\xe9 \x80", 1)) == "_utf8mb4'café €'");  // latin1
    CHECK(sql(col(ColumnType::varchar, 40), prefixed("it's", 1)) == "_utf8mb4'it''s'");
    CHECK(sql(col(ColumnType::varchar, 400), prefixed("emoji \xf0\x9f\x98\x80", 2)) == "_utf8mb4'emoji 😀'");
    // a backslash means different things with and without NO_BACKSLASH_ESCAPES: hex
    CHECK(sql(col(ColumnType::varchar, 40), prefixed("a\\b", 1)) == "_utf8mb4 X'615C62'");
    CHECK(sql(col(ColumnType::varchar, 40), prefixed(std::string_view("a\0b", 3), 1)) == "_utf8mb4 X'610062'");
    // not UTF-8 in a utf8mb4 column: the bytes as they are, in the column charset
    CHECK(sql(col(ColumnType::varchar, 40), prefixed("\xff", 1)) == "_utf8mb4 X'FF'");
    CHECK(sql(col(ColumnType::varchar, 40, 8), prefixed("a\\", 1)) == "_latin1 X'615C'");
    CHECK(sql(col(ColumnType::blob, 2), prefixed("", 2)) == "_utf8mb4''");
    CHECK(sql(col(ColumnType::varchar, 40, 33), prefixed("\xf0\x9f\x98\x80", 1)) == "_utf8mb3 X'F09F9880'");
  }

  TEST_CASE("binary: X'..', BINARY(n) padded back") {
    CHECK(sql(col(ColumnType::varchar, 64, 63), prefixed(std::string_view("\xff\x00\xfe", 3), 1)) == "X'FF00FE'");
    CHECK(sql(col(ColumnType::string, 254 << 8 | 4, 63), prefixed("ab", 1)) == "X'61620000'");
    CHECK(sql(col(ColumnType::blob, 2, 63), prefixed("", 2)) == "X''");
  }

  TEST_CASE("ENUM and SET by name, by number without names") {
    const std::string_view names[] = {"a", "c d", "\xe9"};
    ColumnInfo e = col(ColumnType::string, 247 << 8 | 1, 8);
    CHECK(sql(e, {2}) == "2");
    e.names = names;
    CHECK(sql(e, {2}) == "_utf8mb4'c d'");
    CHECK(sql(e, {3}) == "_utf8mb4'é'");
    CHECK(sql(e, {0}) == "''");
    CHECK(sql(e, {9}) == "9");
    ColumnInfo s = col(ColumnType::string, 248 << 8 | 1, 8);
    s.names = names;
    CHECK(sql(s, {5}) == "_utf8mb4'a,é'");
    CHECK(sql(s, {0}) == "_utf8mb4''");
    CHECK(sql(s, {8}) == "8");  // a bit past the names
  }

  TEST_CASE("JSON, GEOMETRY, VECTOR, UUID/INET") {
    CHECK(sql(col(ColumnType::json, 4), prefixed(std::string_view("\x04\x01", 2), 4)) == "CAST(_utf8mb4'true' AS JSON)");
    const Buf geo = cat(le(4326, 4), {0x01, 0x01, 0x00, 0x00, 0x00});
    CHECK(sql(col(ColumnType::geometry, 4, 63), cat(le(geo.size(), 4), geo)) == "ST_GeomFromWKB(X'0101000000', 4326)");
    CHECK(sql(col(ColumnType::vector, 4, 63), prefixed(std::string_view("\0\0\x80\x3f", 4), 4)) == "X'0000803F'");
    CHECK(fails(col(ColumnType::vector, 4, 63), prefixed("abc", 4)).code == Errc::bad_length);
    ColumnInfo u = col(ColumnType::string, 254 << 8 | 16, 63);
    u.hint = ValueHint::uuid;
    CHECK(sql(u, prefixed("\xa0\xee\xbc\x99\x9c\x0b\x4e\xf8\xbb\x6d\x6b\xb9\xbd\x38\x0a\x11", 1)) ==
          "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'");
    u.hint = ValueHint::inet6;
    CHECK(sql(u, prefixed(std::string_view("\0\0\0\0\0\0\0\0\0\0\xff\xff\x01\x02\x03\x04", 16), 1)) ==
          "'::ffff:1.2.3.4'");
    u.hint = ValueHint::inet4;
    u.meta = 254 << 8 | 4;
    CHECK(sql(u, prefixed(std::string_view("\x0a\x00\x00\x01", 4), 1)) == "'10.0.0.1'");
  }

  TEST_CASE("bounds: a length past the end fails before reading") {
    CHECK(fails(col(ColumnType::varchar, 40), {10, 'a', 'b'}).code == Errc::truncated);
    CHECK(fails(col(ColumnType::blob, 4), le(0xffffffffu, 4)).code == Errc::truncated);
    CHECK(fails(col(ColumnType::longlong), {1, 2, 3}).code == Errc::truncated);
    CHECK(fails(col(ColumnType::bit, 9 << 8), be(0, 9)).code == Errc::bad_value);
    CHECK(fails(col(ColumnType::typed_array), {}).code == Errc::bad_value);
  }
}

// The leniencies a renderer may ask of the typed decoder (column_value.h): the Canal renderer's
// readings of damaged values, which it printed before it shared this decoder.
TEST_CASE("typed decoder leniency: TIMESTAMP fractions wrap, ENUMs of 3..8 bytes read") {
  const unsigned wrap = kDecodeWrapTimestampFraction, wide = kDecodeWideEnum;
  auto decode = [](const ColumnInfo& c, const Buf& b, unsigned leniency, ColumnValue& v) {
    ByteReader r(Bytes(b.data(), b.size()), kBase);
    Status st = decode_column_value(c, r, v, leniency);
    if (st.ok()) CHECK(r.position() == b.size());
    return st;
  };
  struct Case {
    ColumnType type;
    std::uint16_t fsp;
    Buf frac;
    std::uint32_t usec;  // what the wrapped reading gives
  };
  const Case cases[] = {
      {ColumnType::timestamp2, 1, {0xff}, 550000},             // 255 * 10^4 mod 10^6
      {ColumnType::timestamp2, 2, {100}, 0},                   // 10^6 mod 10^6
      {ColumnType::timestamp2, 4, {0xff, 0xff}, 553500},      // 65535 * 100
      {ColumnType::timestamp2, 6, {0xff, 0xff, 0xff}, 777215}, // 16777215
      {ColumnType::timestamp, 3, {0x05, 0xdc}, 500000},        // MariaDB's old TIMESTAMP(3): 1500 ms
  };
  for (const Case& k : cases) {
    CAPTURE(column_type_name(k.type));
    CAPTURE(k.fsp);
    const Buf b = cat(be(86400, 4), k.frac);
    ColumnValue v;
    Status strict = decode(col(k.type, k.fsp), b, kDecodeStrict, v);
    REQUIRE_FALSE(strict.ok());
    CHECK(std::string_view(strict.error().what) == "TIMESTAMP fraction out of range");
    CHECK(strict.error().offset == kBase);
    REQUIRE(decode(col(k.type, k.fsp), b, wrap, v).ok());
    CHECK(v.kind == ValueKind::timestamp);
    CHECK(v.u == 86400);
    CHECK(v.t.day == 2);
    CHECK(v.t.usec == k.usec);
    CHECK(v.t.fsp == k.fsp);
    // the other leniency does not waive this check
    CHECK_FALSE(decode(col(k.type, k.fsp), b, wide, v).ok());
  }
  {  // a valid fraction reads the same either way
    ColumnValue a, w;
    const Buf b = cat(be(1, 4), be(123456, 3));
    REQUIRE(decode(col(ColumnType::timestamp2, 6), b, kDecodeStrict, a).ok());
    REQUIRE(decode(col(ColumnType::timestamp2, 6), b, wrap, w).ok());
    CHECK(a.t.usec == 123456);
    CHECK(w.t.usec == 123456);
  }
  // ENUM, as a CHAR column's real type (meta 0xf7nn) and as the ENUM type code.
  for (const ColumnInfo& c : {col(ColumnType::string, 0xf703), col(ColumnType::enum_, 3)}) {
    ColumnValue v;
    const Buf b = le(0x123456, 3);
    Status strict = decode(c, b, kDecodeStrict, v);
    REQUIRE_FALSE(strict.ok());
    CHECK(std::string_view(strict.error().what) == "ENUM size not 1 or 2");
    CHECK_FALSE(decode(c, b, wrap, v).ok());
    REQUIRE(decode(c, b, wide, v).ok());
    CHECK(v.kind == ValueKind::enum_index);
    CHECK(v.u == 0x123456);
  }
  ColumnValue v;
  CHECK(decode(col(ColumnType::string, 0xf708), le(~0ull, 8), wide, v).ok());
  CHECK(v.u == ~0ull);
  CHECK_FALSE(decode(col(ColumnType::string, 0xf709), le(1, 9), wide, v).ok());  // past a SET's 8
  CHECK_FALSE(decode(col(ColumnType::string, 0xf700), {}, wide, v).ok());
}
