// The JSON renderer of decoded values (column_value.h append_value_json(col, ColumnValue)): every
// ValueKind from a ColumnValue built by hand, and the errors that belong to rendering.
#include "columns/column_value.h"
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace binlogctl;

namespace {

ColumnInfo col(ColumnType t, std::uint16_t charset = 45) {
  ColumnInfo c;
  c.type = t;
  c.charset = charset;
  return c;
}

std::string json(const ColumnInfo& c, const ColumnValue& v, RenderOptions o = {}) {
  std::string out = "x";  // appended to, never replaced
  const Status st = append_value_json(c, v, out, o);
  REQUIRE_MESSAGE(st.ok(), st.error().what);
  REQUIRE(out.size() >= 1);
  return out.substr(1);
}

ColumnValue kind(ValueKind k) {
  ColumnValue v;
  v.kind = k;
  v.offset = 1000;
  return v;
}

// The value's bytes, kept alive for the test run (a ColumnValue borrows them).
ColumnValue with_bytes(ValueKind k, std::vector<std::uint8_t> b) {
  static std::list<std::vector<std::uint8_t>> kept;
  kept.push_back(std::move(b));
  ColumnValue v = kind(k);
  v.bytes = Bytes(kept.back().data(), kept.back().size());
  return v;
}

ColumnValue temporal(ValueKind k, TemporalParts t) {
  ColumnValue v = kind(k);
  v.t = t;
  return v;
}

}  // namespace

TEST_CASE("value JSON: numbers") {
  ColumnValue v = kind(ValueKind::null);
  CHECK(json(col(ColumnType::null), v) == "null");

  v = kind(ValueKind::signed_int);
  v.i = -5;
  CHECK(json(col(ColumnType::long_), v) == "-5");
  v.i = std::numeric_limits<std::int64_t>::min();
  CHECK(json(col(ColumnType::longlong), v) == "-9223372036854775808");

  v = kind(ValueKind::unsigned_int);
  v.u = std::numeric_limits<std::uint64_t>::max();
  CHECK(json(col(ColumnType::longlong), v) == "18446744073709551615");

  v = kind(ValueKind::bit);
  v.u = 5;
  v.bits = 3;
  CHECK(json(col(ColumnType::bit), v) == "5");

  v = kind(ValueKind::year);
  v.u = 2024;
  CHECK(json(col(ColumnType::year), v) == "2024");
  v.u = 0;
  CHECK(json(col(ColumnType::year), v) == "0");

  v = kind(ValueKind::float32);
  v.f = 1.5f;
  CHECK(json(col(ColumnType::float_), v) == "1.5");
  v.f = 0.1f;
  CHECK(json(col(ColumnType::float_), v) == "0.1");  // float32's shortest digits, not double's
  ColumnInfo fixed = col(ColumnType::float_);
  fixed.decimals = 3;
  v.f = 1.5f;
  CHECK(json(fixed, v) == "1.500");

  v = kind(ValueKind::float64);
  v.d = 1e16;
  CHECK(json(col(ColumnType::double_), v) == "1e+16");
  v.d = 3.0;
  CHECK(json(col(ColumnType::double_), v) == "3.0");
  v.d = std::nan("");
  CHECK(json(col(ColumnType::double_), v) == "null");
  fixed.type = ColumnType::double_;
  fixed.decimals = 2;
  v.d = -0.125;
  CHECK(json(fixed, v) == "-0.12");  // exactly rounded (half to even on the exact binary value)
}

TEST_CASE("value JSON: DECIMAL") {
  // DECIMAL(5,2): 3 integer digits in 2 bytes, 2 fraction digits in 1 byte, sign bit flipped.
  const std::vector<std::uint8_t> pos = {0x80, 0x00 | 0x7b, 0x2d};  // 123.45
  ColumnValue v = with_bytes(ValueKind::decimal, pos);
  v.precision = 5;
  v.scale = 2;
  CHECK(json(col(ColumnType::newdecimal), v) == "\"123.45\"");
  const std::vector<std::uint8_t> neg = {0x7f, 0x84, 0xd2};  // every byte inverted: -123.45
  v.bytes = Bytes(neg.data(), neg.size());
  CHECK(json(col(ColumnType::newdecimal), v) == "\"-123.45\"");

  v = with_bytes(ValueKind::decimal_text, {'-', '1', '.', '5', '0'});
  CHECK(json(col(ColumnType::decimal), v) == "\"-1.50\"");
}

TEST_CASE("value JSON: temporal") {
  CHECK(json(col(ColumnType::date), temporal(ValueKind::date, {})) == "\"0000-00-00\"");
  TemporalParts d;
  d.year = 2024;
  d.month = 2;
  d.day = 29;
  CHECK(json(col(ColumnType::date), temporal(ValueKind::date, d)) == "\"2024-02-29\"");

  TemporalParts t;
  t.negative = true;
  t.hour = 838;
  t.minute = 59;
  t.second = 59;
  t.usec = 500000;
  t.fsp = 1;
  CHECK(json(col(ColumnType::time2), temporal(ValueKind::time, t)) == "\"-838:59:59.5\"");
  t = {};
  t.hour = 1;
  t.minute = 2;
  t.second = 3;
  CHECK(json(col(ColumnType::time), temporal(ValueKind::time, t)) == "\"01:02:03\"");

  TemporalParts dt = d;
  dt.hour = 13;
  dt.minute = 5;
  dt.second = 9;
  dt.usec = 123456;
  dt.fsp = 6;
  CHECK(json(col(ColumnType::datetime2), temporal(ValueKind::datetime, dt)) == "\"2024-02-29 13:05:09.123456\"");
  dt.fsp = 2;
  CHECK(json(col(ColumnType::datetime2), temporal(ValueKind::datetime, dt)) == "\"2024-02-29 13:05:09.12\"");
  dt.year = 12345;  // wider than usual (a corrupt pre-5.6 DATETIME): the general path
  dt.fsp = 0;
  dt.usec = 0;
  CHECK(json(col(ColumnType::datetime), temporal(ValueKind::datetime, dt)) == "\"12345-02-29 13:05:09\"");

  // TIMESTAMP: seconds since the epoch, parts in UTC; a time zone shifts the seconds.
  TemporalParts ts;
  ts.year = 2023;
  ts.month = 11;
  ts.day = 14;
  ts.hour = 22;
  ts.minute = 13;
  ts.second = 20;
  ColumnValue v = temporal(ValueKind::timestamp, ts);
  v.u = 1700000000;
  CHECK(json(col(ColumnType::timestamp2), v) == "\"2023-11-14 22:13:20\"");
  RenderOptions east;
  east.tz_offset_seconds = 3600;
  CHECK(json(col(ColumnType::timestamp2), v, east) == "\"2023-11-14 23:13:20\"");
  TemporalParts zero;
  zero.fsp = 3;
  v = temporal(ValueKind::timestamp, zero);
  v.u = 0;
  CHECK(json(col(ColumnType::timestamp2), v) == "\"0000-00-00 00:00:00.000\"");
  CHECK(json(col(ColumnType::timestamp2), v, east) == "\"0000-00-00 00:00:00.000\"");  // the zero timestamp stays
}

TEST_CASE("value JSON: strings") {
  const std::vector<std::uint8_t> latin1 = {'c', 'a', 'f', 0xe9};
  ColumnValue v = with_bytes(ValueKind::text, latin1);
  v.charset = 8;  // latin1_swedish_ci
  CHECK(json(col(ColumnType::varchar, 8), v) == "\"caf\xc3\xa9\"");
  const std::vector<std::uint8_t> quoted = {'a', '"', '\n'};
  v = with_bytes(ValueKind::text, quoted);
  v.charset = 45;
  CHECK(json(col(ColumnType::varchar), v) == "\"a\\\"\\n\"");

  // BINARY(4): the binlog's stripped trailing zeros put back.
  v = with_bytes(ValueKind::binary, {0x01, 0x02});
  v.pad_to = 4;
  CHECK(json(col(ColumnType::string, 63), v) == "\"AQIAAA==\"");
  RenderOptions hex;
  hex.binary_as = BinaryAs::hex;
  CHECK(json(col(ColumnType::string, 63), v, hex) == "\"01020000\"");
  v.pad_to = 0;
  CHECK(json(col(ColumnType::blob, 63), v, hex) == "\"0102\"");

  v = with_bytes(ValueKind::geometry, {0, 0, 0, 0, 1});
  CHECK(json(col(ColumnType::geometry, 63), v) == "\"AAAAAAE=\"");

  v = with_bytes(ValueKind::json, {0x04, 0x01});  // a literal: true
  CHECK(json(col(ColumnType::json, 63), v) == "true");
  v = with_bytes(ValueKind::json, {});
  CHECK(json(col(ColumnType::json, 63), v) == "null");

  // 1.0f and -2.5f, little-endian.
  v = with_bytes(ValueKind::vector, {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0});
  CHECK(json(col(ColumnType::vector, 63), v) == "[1.0,-2.5]");
}

TEST_CASE("value JSON: ENUM and SET") {
  const std::vector<std::string_view> names = {"a", "b", "c"};
  ColumnInfo e = col(ColumnType::enum_);
  ColumnValue v = kind(ValueKind::enum_index);
  v.u = 2;
  CHECK(json(e, v) == "2");  // names not known: the index
  e.names = std::span<const std::string_view>(names.data(), names.size());
  CHECK(json(e, v) == "\"b\"");
  v.u = 0;
  CHECK(json(e, v) == "\"\"");  // the error value
  v.u = 4;
  CHECK(json(e, v) == "4");  // past the names

  ColumnInfo s = col(ColumnType::set);
  v = kind(ValueKind::set_bits);
  v.u = 5;
  CHECK(json(s, v) == "5");
  s.names = std::span<const std::string_view>(names.data(), names.size());
  CHECK(json(s, v) == "\"a,c\"");
  v.u = 0;
  CHECK(json(s, v) == "\"\"");
  v.u = 8;  // a bit past the last member
  CHECK(json(s, v) == "8");
}

TEST_CASE("value JSON: UUID, INET4, INET6") {
  std::vector<std::uint8_t> b;
  for (std::uint8_t i = 0; i < 16; ++i) b.push_back(i);
  ColumnInfo c = col(ColumnType::string, 63);
  CHECK(json(c, with_bytes(ValueKind::uuid, b)) == "\"00010203-0405-0607-0809-0a0b0c0d0e0f\"");
  CHECK(json(c, with_bytes(ValueKind::inet4, {192, 168, 0, 1})) == "\"192.168.0.1\"");
  CHECK(json(c, with_bytes(ValueKind::inet6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})) == "\"::1\"");
  CHECK(json(c, with_bytes(ValueKind::inet6, {})) == "\"::\"");  // stripped zeros put back
  // A hint never applied to a BLOB: its bytes as the collation says.
  ColumnInfo blob = col(ColumnType::blob, 63);
  blob.hint = ValueHint::inet4;
  CHECK(json(blob, with_bytes(ValueKind::inet4, {192, 168, 0, 1})) == "\"wKgAAQ==\"");
  blob.charset = 45;
  CHECK(json(blob, with_bytes(ValueKind::inet4, {'a', 'b'})) == "\"ab\"");
}

TEST_CASE("value JSON: rendering errors leave the output as it was") {
  const std::vector<std::uint8_t> bad = {0x80, 0x00, 0x64};  // DECIMAL(5,2) fraction group 100
  ColumnValue v = with_bytes(ValueKind::decimal, bad);
  v.precision = 5;
  v.scale = 2;
  v.offset = 4242;
  std::string out = "kept";
  const Status st = append_value_json(col(ColumnType::newdecimal), v, out);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == Errc::bad_value);
  CHECK(st.error().offset == 4242);
  CHECK(std::string_view(st.error().what) == "DECIMAL digit group out of range");
  CHECK(out == "kept");

  v = with_bytes(ValueKind::json, {0x7f});  // no such binary JSON type
  v.offset = 77;
  const Status js = append_value_json(col(ColumnType::json, 63), v, out);
  REQUIRE_FALSE(js.ok());
  CHECK(out == "kept");
}

TEST_CASE("value JSON: the reader form is decode_column_value then the ColumnValue form") {
  struct Case {
    ColumnInfo c;
    std::vector<std::uint8_t> b;
  };
  ColumnInfo dec = col(ColumnType::newdecimal);
  dec.meta = 5 << 8 | 2;
  ColumnInfo vc = col(ColumnType::varchar, 8);
  vc.meta = 20;
  ColumnInfo t2 = col(ColumnType::time2);
  t2.meta = 3;
  const std::vector<Case> cases = {
      {col(ColumnType::long_), {0xfe, 0xff, 0xff, 0xff}},
      {dec, {0x80, 0x7b, 0x2d}},
      {vc, {3, 'a', 'b', 0xe9}},
      {t2, {0x80, 0x10, 0x83, 0x00, 0x64}},
  };
  for (const Case& k : cases) {
    ByteReader r1(Bytes(k.b.data(), k.b.size()), 100), r2 = r1;
    std::string direct, typed;
    REQUIRE(append_value_json(k.c, r1, direct).ok());
    ColumnValue v;
    REQUIRE(decode_column_value(k.c, r2, v).ok());
    REQUIRE(append_value_json(k.c, v, typed).ok());
    CHECK(direct == typed);
    CHECK(r1.position() == k.b.size());
  }
}
