// Canal output (binlogctl_canal): the canal-proto stream parsed back with the generated classes
// and compared with convert --format json of the same binlogs; Java number formatting; DDL
// event types; --timezone. The value renderers, the canal-json writer and the packet framing are
// checked against the first implementation (JSON round trip through nlohmann, FlatMessage built
// with nlohmann::ordered_json from the parsed entries), kept here as the reference.
#if __has_include("EntryProtocol.pb.h") && defined(BINLOGCTL_HAVE_CANAL)
#include <binlogctl/canal.h>
#include <binlogctl/chain.h>
#include <binlogctl/convert.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>

#include "convert/convert_internal.h"
#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"

#include <doctest/doctest.h>

#include "tmpfile_io.h"
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "canal/canal_internal.h"
#include "CanalProtocol.pb.h"
#include "EntryProtocol.pb.h"

namespace canalpb = com::alibaba::otter::canal::protocol;
using namespace binlogctl;

TEST_SUITE_BEGIN("canal");

namespace {

const std::string kBasic = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs";

using binlogctl::testing::read_all;

// Runs a conversion into a temporary file; returns its bytes.
std::string run(bool canal, CanalFormat fmt = CanalFormat::proto, const std::string& tz = "UTC",
                const std::string& input = kBasic, std::uint32_t batch_size = 50, bool packets = false,
                bool expect_clean = true) {
  ConvertOptions o;
  o.inputs = {input};
  o.progress = ProgressMode::never;
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  int rc;
  if (canal) {
    CanalOptions co;
    co.format = fmt;
    co.timezone = tz;
    co.batch_size = batch_size;
    co.packets = packets;
    rc = run_canal_convert(o, co, out, err);
  } else {
    rc = run_convert(o, out, err);
  }
  if (expect_clean) CHECK(rc == 0);
  CHECK(rc <= 1);
  std::string s = read_all(out);
  std::fclose(out);
  std::fclose(err);
  return s;
}

std::vector<canalpb::Entry> parse_entries(const std::string& bytes) {
  std::vector<canalpb::Entry> v;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    std::uint32_t len = 0;
    REQUIRE(in.ReadVarint32(&len));
    auto limit = in.PushLimit(static_cast<int>(len));
    canalpb::Entry e;
    REQUIRE(e.ParseFromCodedStream(&in));
    REQUIRE(in.ConsumedEntireMessage());
    in.PopLimit(limit);
    v.push_back(std::move(e));
  }
  return v;
}

using Image = std::map<std::string, std::optional<std::string>>;
struct Row {
  std::string db, table, type;
  std::optional<Image> before, after;
  std::map<std::string, std::string> mysql_types;
};

Image image_of(const google::protobuf::RepeatedPtrField<canalpb::Column>& cols, Row& r) {
  Image im;
  for (const auto& c : cols) {
    REQUIRE(c.has_isnull());
    if (c.isnull()) CHECK(c.value().empty());
    im[c.name()] = c.isnull() ? std::nullopt : std::optional<std::string>(c.value());
    r.mysql_types[c.name()] = c.mysqltype();
  }
  return im;
}

// Columns whose Canal text is the same as convert --format json's value (as text).
bool comparable(const std::string& mysql_type) {
  for (const char* p : {"tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "varchar", "char(",
                        "datetime", "date", "time", "timestamp", "text"})
    if (mysql_type.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("canal-proto round trip: rows and values agree with convert --format json") {
  const auto entries = parse_entries(run(true));
  REQUIRE(!entries.empty());
  std::vector<Row> canal_rows;
  int begins = 0, ends = 0;
  for (const auto& e : entries) {
    CHECK(e.header().version() == 1);
    CHECK(e.header().serverencode() == "UTF-8");
    CHECK(e.header().sourcetype() == canalpb::MYSQL);
    CHECK(e.header().executetime() % 1000 == 0);
    if (e.entrytype() == canalpb::TRANSACTIONBEGIN) ++begins;
    if (e.entrytype() == canalpb::TRANSACTIONEND) {
      ++ends;
      canalpb::TransactionEnd te;
      REQUIRE(te.ParseFromString(e.storevalue()));
      CHECK(!te.transactionid().empty());
    }
    if (e.entrytype() != canalpb::ROWDATA) continue;
    canalpb::RowChange rc;
    REQUIRE(rc.ParseFromString(e.storevalue()));
    REQUIRE(rc.has_isddl());
    if (rc.isddl() || !rc.sql().empty()) {
      CHECK(rc.rowdatas_size() == 0);
      continue;
    }
    CHECK(rc.eventtype() == e.header().eventtype());
    for (const auto& rd : rc.rowdatas()) {
      Row r{e.header().schemaname(), e.header().tablename(), canalpb::EventType_Name(rc.eventtype()), {}, {}, {}};
      if (rc.eventtype() != canalpb::INSERT) r.before = image_of(rd.beforecolumns(), r);
      if (rc.eventtype() != canalpb::DELETE) r.after = image_of(rd.aftercolumns(), r);
      if (rc.eventtype() == canalpb::INSERT) CHECK(rd.beforecolumns_size() == 0);
      if (rc.eventtype() == canalpb::DELETE) CHECK(rd.aftercolumns_size() == 0);
      if (rc.eventtype() == canalpb::UPDATE) {
        // updated: exactly the after columns whose value differs from the before image.
        for (const auto& a : rd.aftercolumns()) {
          bool differs = true;
          for (const auto& b : rd.beforecolumns())
            if (b.index() == a.index())
              differs = b.isnull() != a.isnull() || (!a.isnull() && a.value() != b.value());
          CHECK_MESSAGE(a.updated() == differs, a.name());
        }
      }
      canal_rows.push_back(std::move(r));
    }
  }
  CHECK(begins > 0);
  CHECK(begins == ends);

  std::vector<nlohmann::json> json_rows;
  const std::string js = run(false);
  std::size_t at = 0;
  while (at < js.size()) {
    const std::size_t nl = js.find('\n', at);
    auto j = nlohmann::json::parse(js.substr(at, nl - at));
    at = nl + 1;
    const std::string t = j["type"];
    if (t == "INSERT" || t == "UPDATE" || t == "DELETE") json_rows.push_back(std::move(j));
  }
  REQUIRE(canal_rows.size() == json_rows.size());
  std::size_t compared = 0;
  for (std::size_t i = 0; i < canal_rows.size(); ++i) {
    const Row& r = canal_rows[i];
    const nlohmann::json& j = json_rows[i];
    CAPTURE(i);
    CHECK(r.db == j["database"]);
    CHECK(r.table == j["table"]);
    CHECK(r.type == j["type"]);
    auto check_image = [&](const std::optional<Image>& im, const nlohmann::json& ji) {
      REQUIRE(im.has_value() == !ji.is_null());
      if (!im) return;
      CHECK(im->size() == ji.size());
      for (const auto& [name, v] : *im) {
        CAPTURE(name);
        REQUIRE(ji.contains(name));
        const nlohmann::json& jv = ji[name];
        CHECK(v.has_value() == !jv.is_null());
        if (!v || jv.is_null() || !comparable(r.mysql_types.at(name))) continue;
        const std::string want = jv.is_string() ? jv.get<std::string>() : jv.dump();
        CHECK(*v == want);
        ++compared;
      }
    };
    check_image(r.before, j["before"]);
    check_image(r.after, j["after"]);
  }
  CHECK(compared > 1000);
}

TEST_CASE("canal: Java number formatting") {
  CHECK(java_double_string(1e10) == "1.0E10");
  CHECK(java_double_string(1.1) == "1.1");
  CHECK(java_double_string(100.0) == "100.0");
  CHECK(java_double_string(0.001) == "0.001");
  CHECK(java_double_string(0.0001) == "1.0E-4");
  CHECK(java_double_string(-1234567.5) == "-1234567.5");
  CHECK(java_double_string(12345678.0) == "1.2345678E7");
  CHECK(java_double_string(0.30000000000000004) == "0.30000000000000004");
  CHECK(java_double_string(0.0) == "0.0");
  CHECK(java_double_string(-0.0) == "-0.0");
  // Shortest digits, as JDK 19+ prints them (older JDKs could print one digit more).
  CHECK(java_float_string(123456789.0f) == "1.2345679E8");
  CHECK(java_float_string(0.1f) == "0.1");
  CHECK(java_float_string(-3.40282e38f) == "-3.40282E38");
}

// Java's layout of std::to_chars' shortest scientific digits: the reference the Dragonbox digits
// of shortest_digits.h must agree with (they are the same digits by definition: the shortest
// that round-trip, closest to the value).
template <class F>
std::string java_reference(F v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  const bool neg = s[0] == '-';
  if (neg) s.erase(0, 1);
  const std::size_t e = s.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; ++i)
    if (s[i] != '.') digits.push_back(s[i]);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp = std::stoi(s.substr(e + 1));
  std::string out = neg ? "-" : "";
  if (exp >= -3 && exp < 7) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    } else {
      const std::size_t whole = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= whole) out += digits + std::string(whole - digits.size(), '0') + ".0";
      else out += digits.substr(0, whole) + "." + digits.substr(whole);
    }
    return out;
  }
  out += digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "E" + std::to_string(exp);
  return out;
}

TEST_CASE("canal: Java number formatting agrees with std::to_chars' shortest digits") {
  std::mt19937_64 rng(20261203);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    const auto b32 = static_cast<std::uint32_t>(bits >> 11);
    float f;
    std::memcpy(&f, &b32, sizeof f);
    // and values of a usual size: integers, cents, small fractions
    const double u = static_cast<double>(static_cast<std::int64_t>(bits % 2000000) - 1000000) / 100.0;
    for (double x : {d, u})
      if (std::isfinite(x) && x != 0) {
        const std::string got = java_double_string(x), want = java_reference(x);
        if (got != want) CHECK_MESSAGE(got == want, x);
        ++checked;
      }
    for (float x : {f, static_cast<float>(u)})
      if (std::isfinite(x) && x != 0) {
        const std::string got = java_float_string(x), want = java_reference(x);
        if (got != want) CHECK_MESSAGE(got == want, x);
        ++checked;
      }
  }
  CHECK(checked > 700000);
}

TEST_CASE("canal: statement event types") {
  CHECK(canal_statement_event_type("CREATE TABLE t (a int)") == canalpb::CREATE);
  CHECK(canal_statement_event_type("create temporary table t (a int)") == canalpb::CREATE);
  CHECK(canal_statement_event_type("/* x */ ALTER TABLE t ADD b int") == canalpb::ALTER);
  // ALTER TABLE: the first alteration decides, as in Canal's DruidDdlParser
  CHECK(canal_statement_event_type("ALTER TABLE t ADD INDEX i (a)") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("/* x */ alter table `d`.`t` add unique key u (a), add c int") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("ALTER TABLE t ADD PRIMARY KEY (a)") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("ALTER TABLE t ADD CONSTRAINT u UNIQUE (a)") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("ALTER TABLE t ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES x (a)") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE t ADD FULLTEXT INDEX ft (b)") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("ALTER TABLE t DROP INDEX i") == canalpb::DINDEX);
  CHECK(canal_statement_event_type("ALTER IGNORE TABLE t DROP KEY i, ADD c int") == canalpb::DINDEX);
  CHECK(canal_statement_event_type("ALTER TABLE t DROP COLUMN i") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE t ADD c int, ADD INDEX i (c)") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE t RENAME TO u") == canalpb::RENAME);
  CHECK(canal_statement_event_type("ALTER TABLE `a b` RENAME u") == canalpb::RENAME);
  CHECK(canal_statement_event_type("ALTER TABLE t RENAME COLUMN a TO b") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE t ENGINE=InnoDB") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE") == canalpb::ALTER);
  CHECK(canal_statement_event_type("ALTER TABLE `unterminated") == canalpb::ALTER);
  CHECK(canal_statement_event_type("DROP TABLE IF EXISTS t") == canalpb::ERASE);
  CHECK(canal_statement_event_type("TRUNCATE TABLE t") == canalpb::TRUNCATE);
  CHECK(canal_statement_event_type("RENAME TABLE a TO b") == canalpb::RENAME);
  CHECK(canal_statement_event_type("CREATE UNIQUE INDEX i ON t (a)") == canalpb::CINDEX);
  CHECK(canal_statement_event_type("DROP INDEX i ON t") == canalpb::DINDEX);
  CHECK(canal_statement_event_type("CREATE DATABASE d") == canalpb::QUERY);
  CHECK(canal_statement_event_type("GRANT ALL ON *.* TO u") == canalpb::QUERY);
  CHECK(canal_statement_event_type("INSERT INTO t VALUES (1)") == canalpb::INSERT);
  CHECK(canal_statement_event_type("update t set a=1") == canalpb::UPDATE);
  CHECK(canal_statement_event_type("DELETE FROM t") == canalpb::DELETE);
}

TEST_CASE("canal: --timezone values and TIMESTAMP rendering") {
  CHECK(canal_timezone_valid("UTC"));
  CHECK(canal_timezone_valid("+08:00"));
  CHECK(canal_timezone_valid("-05:30"));
  CHECK(!canal_timezone_valid("+25:00"));
  CHECK(!canal_timezone_valid("Nowhere/Bogus"));
  CHECK(!canal_timezone_valid("../etc/passwd"));
  if (std::filesystem::exists("/usr/share/zoneinfo/Asia/Shanghai")) CHECK(canal_timezone_valid("Asia/Shanghai"));

  // typelab.all_types row 1 has ts0 = 1970-01-01 00:00:01 UTC.
  auto ts0 = [](const std::string& jsonl) {
    std::size_t at = 0;
    while (at < jsonl.size()) {
      const std::size_t nl = jsonl.find('\n', at);
      auto j = nlohmann::json::parse(jsonl.substr(at, nl - at));
      at = nl + 1;
      if (j["table"] == "all_types" && j["type"] == "INSERT" && j["data"].is_array())
        for (const auto& row : j["data"])
          if (row["id"] == "1") return row["ts0"].get<std::string>();
    }
    return std::string();
  };
  CHECK(ts0(run(true, CanalFormat::json, "UTC")) == "1970-01-01 00:00:01");
  CHECK(ts0(run(true, CanalFormat::json, "+08:00")) == "1970-01-01 08:00:01");
}

// ---- the first implementation, kept as the reference for the renderers -------------------------

namespace {
namespace ref {

using canal_detail::CanalValue;

std::uint64_t le(Bytes b, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n && i < b.size(); ++i)
    v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  return v;
}
std::uint64_t be(Bytes b, std::size_t from, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = from; i < from + n && i < b.size(); ++i) v = (v << 8) | b[i];
  return v;
}

std::string java_format(bool neg, const std::string& digits, int sci_exp) {
  std::string s = neg ? "-" : "";
  if (sci_exp >= -3 && sci_exp < 7) {
    if (sci_exp < 0) {
      s += "0.";
      s.append(static_cast<std::size_t>(-sci_exp - 1), '0');
      s += digits;
    } else {
      const std::size_t int_len = static_cast<std::size_t>(sci_exp) + 1;
      if (digits.size() <= int_len) {
        s += digits;
        s.append(int_len - digits.size(), '0');
        s += ".0";
      } else {
        s += digits.substr(0, int_len);
        s += '.';
        s += digits.substr(int_len);
      }
    }
    return s;
  }
  s += digits[0];
  s += '.';
  s += digits.size() > 1 ? digits.substr(1) : std::string("0");
  s += 'E';
  s += std::to_string(sci_exp);
  return s;
}

template <typename F>
std::string java_fp(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view t(buf, static_cast<std::size_t>(r.ptr - buf));
  bool neg = false;
  if (!t.empty() && t[0] == '-') {
    neg = true;
    t.remove_prefix(1);
  }
  const std::size_t e = t.find('e');
  std::string digits;
  for (char c : t.substr(0, e))
    if (c != '.') digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exp = std::atoi(std::string(t.substr(e + 1)).c_str());
  return java_format(neg, digits, exp);
}

void latin1_to_utf8(std::string& out, Bytes b) {
  for (std::uint8_t c : b) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
}

std::string json_to_text(const std::string& j) {
  auto v = nlohmann::json::parse(j, nullptr, false);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_discarded()) return j;
  return v.dump();
}

void append_2(std::string& s, unsigned v) {
  s.push_back(static_cast<char>('0' + v / 10 % 10));
  s.push_back(static_cast<char>('0' + v % 10));
}

// A fixed-offset zone through gmtime_r, as the first implementation rendered it.
void append_local(std::string& out, std::int64_t seconds, std::int32_t offset) {
  std::tm tm{};
  const std::time_t t = static_cast<std::time_t>(seconds + offset);
  ::gmtime_r(&t, &tm);
  const unsigned y = static_cast<unsigned>(tm.tm_year + 1900);
  append_2(out, y / 100);
  append_2(out, y % 100);
  out.push_back('-');
  append_2(out, static_cast<unsigned>(tm.tm_mon + 1));
  out.push_back('-');
  append_2(out, static_cast<unsigned>(tm.tm_mday));
  out.push_back(' ');
  append_2(out, static_cast<unsigned>(tm.tm_hour));
  out.push_back(':');
  append_2(out, static_cast<unsigned>(tm.tm_min));
  out.push_back(':');
  append_2(out, static_cast<unsigned>(tm.tm_sec));
}

bool blob_family(ColumnType t) {
  return t == ColumnType::tiny_blob || t == ColumnType::medium_blob || t == ColumnType::long_blob ||
         t == ColumnType::blob;
}

Status render_value(const ColumnDef& c, const ColumnInfo& info, Bytes raw, std::uint64_t offset,
                    std::int32_t tz, CanalValue& v) {
  constexpr int BIT = -7, TINYINT = -6, SMALLINT = 5, INTEGER = 4, BIGINT = -5, REAL = 7,
                DOUBLE = 8, DECIMAL = 3, CHAR = 1, VARCHAR = 12, DATE = 91, TIME = 92,
                TIMESTAMP = 93, BLOB = 2004, CLOB = 2005, OTHER = 1111;
  v.is_null = false;
  v.value.clear();
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  auto sign_ext = [](std::uint64_t x, unsigned bits) {
    const std::uint64_t m = 1ull << (bits - 1);
    return static_cast<std::int64_t>((x ^ m) - m);
  };
  auto integer = [&](unsigned bytes, int base, int bumped) {
    const std::int64_t s = sign_ext(le(raw, bytes), bytes * 8);
    if (c.is_unsigned && s < 0) {
      v.value = std::to_string(le(raw, bytes));
      v.sql_type = bumped;
    } else {
      v.value = std::to_string(s);
      v.sql_type = base;
    }
  };
  switch (t) {
    case ColumnType::tiny:
      integer(1, TINYINT, SMALLINT);
      return {};
    case ColumnType::short_:
      integer(2, SMALLINT, INTEGER);
      return {};
    case ColumnType::int24:
      integer(3, INTEGER, INTEGER);
      return {};
    case ColumnType::long_:
      integer(4, INTEGER, BIGINT);
      return {};
    case ColumnType::longlong:
      integer(8, BIGINT, DECIMAL);
      return {};
    case ColumnType::float_: {
      const auto bits = static_cast<std::uint32_t>(le(raw, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      v.value = java_fp(f);
      v.sql_type = REAL;
      return {};
    }
    case ColumnType::double_: {
      const std::uint64_t bits = le(raw, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      v.value = java_fp(d);
      v.sql_type = DOUBLE;
      return {};
    }
    case ColumnType::year: {
      const unsigned y = raw.empty() ? 0 : raw[0];
      v.value = y == 0 ? "0000" : std::to_string(1900 + y);
      v.sql_type = VARCHAR;
      return {};
    }
    case ColumnType::enum_:
      v.value = std::to_string(le(raw, raw.size()));
      v.sql_type = INTEGER;
      return {};
    case ColumnType::set:
      v.value = std::to_string(le(raw, raw.size()));
      v.sql_type = BIT;
      return {};
    case ColumnType::timestamp:
    case ColumnType::timestamp2: {
      const bool v2 = t == ColumnType::timestamp2;
      // MariaDB's pre-10.0 TIMESTAMP(fsp): big-endian seconds, the fraction in 10^(6-fsp) units
      const bool hires = t == ColumnType::timestamp && c.meta >= 1 && c.meta <= 6;
      const std::uint64_t sec = v2 || hires ? be(raw, 0, 4) : le(raw, 4);
      if (sec == 0)
        v.value = "0000-00-00 00:00:00";
      else
        append_local(v.value, static_cast<std::int64_t>(sec), tz);
      const unsigned fsp = v2 || hires ? c.meta : 0;
      if (fsp >= 1 && fsp <= 6) {
        const std::size_t n = (fsp + 1) / 2;
        std::uint64_t frac = be(raw, 4, n);
        std::uint64_t unit = 1;
        for (unsigned k = fsp; k < 6; ++k) unit *= 10;
        const std::uint64_t usec = hires ? frac * unit : n == 1 ? frac * 10000 : n == 2 ? frac * 100 : frac;
        char buf[8];
        std::snprintf(buf, sizeof buf, "%06u", static_cast<unsigned>(usec % 1000000));
        v.value.push_back('.');
        v.value.append(buf, fsp);
      }
      v.sql_type = TIMESTAMP;
      return {};
    }
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry: {
      std::size_t prefix = 0;
      if (t == ColumnType::string)
        prefix = unpack_string_meta(c.meta).length > 255 ? 2 : 1;
      else if (t == ColumnType::varchar || t == ColumnType::var_string)
        prefix = c.meta > 255 ? 2 : 1;
      else
        prefix = c.meta;
      const Bytes data = raw.size() >= prefix ? raw.subspan(prefix) : Bytes{};
      const bool binary =
          t == ColumnType::geometry || c.charset == 63 || (blob_family(t) && c.charset == 0);
      if (binary) {
        latin1_to_utf8(v.value, data);
        v.sql_type = BLOB;
      } else {
        std::string j;
        append_text_json(j,
                         std::string_view(reinterpret_cast<const char*>(data.data()), data.size()),
                         c.charset);
        v.value = json_to_text(j);
        v.sql_type = blob_family(t) ? CLOB : t == ColumnType::string ? CHAR : VARCHAR;
      }
      return {};
    }
    case ColumnType::json: {
      const std::uint64_t len = le(raw, c.meta);
      v.sql_type = VARCHAR;
      if (len == 0) return {};
      return append_json_binary(v.value, raw.subspan(c.meta), offset + c.meta);
    }
    case ColumnType::decimal:
    case ColumnType::newdecimal:
    case ColumnType::bit:
    case ColumnType::date:
    case ColumnType::newdate:
    case ColumnType::time:
    case ColumnType::time2:
    case ColumnType::datetime:
    case ColumnType::datetime2: {
      std::string j;
      ByteReader r(raw, offset);
      Status st = append_value_json(info, r, j, {});
      if (!st.ok()) return st;
      v.value = json_to_text(j);
      v.sql_type = (t == ColumnType::decimal || t == ColumnType::newdecimal) ? DECIMAL
                   : t == ColumnType::bit                                    ? BIT
                   : (t == ColumnType::date || t == ColumnType::newdate)     ? DATE
                   : (t == ColumnType::time || t == ColumnType::time2)       ? TIME
                                                                             : TIMESTAMP;
      return {};
    }
    default:
      v.is_null = true;
      v.sql_type = OTHER;
      return {};
  }
}

}  // namespace ref

// Compares the renderer with the reference on one value; counts and reports the first mismatches.
struct ValueCheck {
  std::size_t compared = 0, mismatched = 0;
  canal_detail::CanalValue got, want;
  void operator()(const ColumnDef& c, const ColumnInfo& info, Bytes raw, std::uint64_t at,
                  const TimeZone& tz, std::int32_t tz_offset) {
    // The mapper's path: the typed decoder, then Canal's rendering; it must take exactly the
    // value's bytes.
    ByteReader r(raw, at);
    ColumnValue cv;
    const Status a = canal_detail::read_value(c, info, canal_detail::value_plan(c), r, tz, cv, got);
    const Status b = ref::render_value(c, info, raw, at, tz_offset, want);
    ++compared;
    bool same = a.ok() == b.ok() && (!a.ok() || r.position() == raw.size());
    if (same && a.ok())
      same =
          got.is_null == want.is_null && got.sql_type == want.sql_type && got.text() == want.text();
    if (same && a.ok() && got.plain)  // a promise that canal-json copies the text unescaped
      for (const char ch : got.text()) same = same && ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
    if (same && !a.ok())
      same = a.error().code == b.error().code && a.error().offset == b.error().offset &&
             std::string_view(a.error().what) == b.error().what;
    if (!same && ++mismatched <= 10) {
      std::string hex;
      for (std::uint8_t x : raw) hex += fmt::format("{:02x}", x);
      MESSAGE(fmt::format(
          "type {} meta {} charset {} unsigned {} raw {}: got '{}' ({}, {}), want '{}' ({}, {})",
          static_cast<int>(c.type), c.meta, c.charset, c.is_unsigned, hex, got.text(), got.sql_type,
          a.ok() ? "ok" : a.error().what, want.text(), want.sql_type,
          b.ok() ? "ok" : b.error().what));
    }
  }
};

// Every non-NULL value of the rows events of a binlog chain.
struct ValueWalk : ChainVisitor {
  ValueCheck& check;
  const TimeZone& tz;
  TableMapCache tables;
  std::string buf;
  explicit ValueWalk(ValueCheck& c, const TimeZone& z) : check(c), tz(z) {}
  void begin_file(const InputFile&) override { tables.clear(); }
  void event(const Event& ev, const InputFile&) override {
    if (ev.type() == EventType::table_map) {
      auto r = decode_table_map(ev.body_reader(), *ev.fde);
      if (!r) return;
      auto tm = parse_table_map(*r, ev.body_offset(), ev.body_offset());
      if (tm) tables.put(std::move(*tm));
      return;
    }
    const auto k = classify_rows_event(ev.type_code());
    if (!k || k->partial_json) return;
    auto h = decode_rows_header(ev.body_reader(), *ev.fde, ev.type_code());
    if (!h) return;
    const TableMap* tm = tables.find(h->table_id);
    if (tm == nullptr) return;
    Bytes rows = h->rows;
    std::uint64_t at = h->rows_offset;
    if (k->compressed) {
      if (!decompress_mariadb(rows, at, buf).ok()) return;
      rows = Bytes(reinterpret_cast<const std::uint8_t*>(buf.data()), buf.size());
    }
    ByteReader r(rows, at);
    while (r.ok() && !r.empty()) {
      if (!image(*tm, h->width, h->columns_before, r)) return;
      if (k->kind == RowsKind::update && !image(*tm, h->width, h->columns_after, r)) return;
    }
  }
  bool image(const TableMap& tm, std::uint64_t width, Bytes present, ByteReader& r) {
    const Bytes nulls = r.bytes((count_bits(present, width) + 7) / 8);
    if (!r.ok()) return false;
    std::size_t j = 0;
    for (std::size_t i = 0; i < width && i < tm.columns.size(); ++i) {
      if (!bit_is_set(present, i)) continue;
      if (bit_is_set(nulls, j++)) continue;
      const ColumnDef& cd = tm.columns[i];
      const std::uint64_t at = r.offset();
      auto sz = column_value_size(cd.type, cd.meta, r);
      if (!sz) return false;
      const Bytes raw = r.bytes(*sz);
      if (!r.ok()) return false;
      check(cd, tm.infos[i], raw, at, tz, 0);
    }
    return true;
  }
};

std::vector<std::string> fixture_chains() {
  std::vector<std::string> v;
  for (const char* c : {"basic", "compressed", "nochecksum", "schema"}) {
    const std::string d =
        std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/" + c + "/binlogs";
    if (std::filesystem::exists(d)) v.push_back(d);
  }
  // The shared corpus, when this checkout has it beside it.
  for (const char* c :
       {"/corpus/mariadb/types/binlogs", "/corpus/mariadb/txn/binlogs",
        "/corpus/public/blackbeam__rust_mysql_common/json.binlog.000001",
        "/corpus/public/blackbeam__rust_mysql_common/mysql-enum-string-set.000001",
        "/corpus/public/blackbeam__rust_mysql_common/mysql_type_bit.000001",
        "/corpus/public/blackbeam__rust_mysql_common/vector.binlog",
        "/corpus/public/blackbeam__rust_mysql_common/ver_trunk_row_v2.001",
        "/corpus/public/alibaba__canal/mysql-bin.000001",
        "/corpus/public/osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32"}) {
    const std::string d = std::string(BINLOGCTL_SHARED_DIR) + c;
    if (std::filesystem::exists(d)) v.push_back(d);
  }
  return v;
}

ColumnDef column(ColumnType t, std::uint16_t meta, std::uint16_t charset = 45,
                 bool is_unsigned = false) {
  ColumnDef c;
  c.type = t;
  c.real_type = real_column_type(t, meta);
  c.meta = meta;
  c.charset = charset;
  c.is_unsigned = is_unsigned;
  return c;
}
ColumnInfo info_of(const ColumnDef& c) {
  ColumnInfo i;
  i.type = c.type;
  i.meta = c.meta;
  i.is_unsigned = c.is_unsigned;
  i.charset = c.charset;
  return i;
}

// Random bytes leaning on what text decoders find hard: ASCII, '"', '\\', controls, UTF-8 lead
// and continuation bytes, and whole UTF-8 sequences.
std::string tricky_bytes(std::mt19937_64& g, std::size_t max_len) {
  static const char* const pieces[] = {"a",
                                       "Z",
                                       " ",
                                       "\"",
                                       "\\",
                                       "\x01",
                                       "\x1f",
                                       "\x7f",
                                       "\n",
                                       "\xc3\xa9",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80",
                                       "\xed\xa0\x80",
                                       "\xc0\xaf",
                                       "\x80",
                                       "\xbf",
                                       "\xc2",
                                       "\xe0\xa0",
                                       "\xf4\x90\x80\x80",
                                       "\xff",
                                       "\x81",
                                       "\x9d",
                                       "\xa0",
                                       "\xfe",
                                       "\\x41",
                                       "\\u0041"};
  std::string s;
  const std::size_t n = g() % (max_len + 1);
  while (s.size() < n) {
    if (g() % 4 == 0)
      s.push_back(static_cast<char>(g() & 0xff));
    else
      s += pieces[g() % std::size(pieces)];
  }
  return s;
}

std::vector<std::string> split_delimited(const std::string& bytes) {
  std::vector<std::string> v;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    std::uint32_t len = 0;
    REQUIRE(in.ReadVarint32(&len));
    std::string e;
    REQUIRE(in.ReadString(&e, static_cast<int>(len)));
    v.push_back(std::move(e));
  }
  return v;
}

// MQMessageUtils.messageConverter as the first implementation wrote it: the FlatMessage of a
// ROWDATA entry built with nlohmann::ordered_json from the parsed entry ("ts" left to the caller).
std::string reference_flat_message(const canalpb::Entry& e, const canalpb::RowChange& rc,
                                   std::uint64_t batch, std::int64_t ts) {
  using nlohmann::ordered_json;
  const canalpb::Header& h = e.header();
  ordered_json m = ordered_json::object();
  ordered_json data = nullptr, old = nullptr, pk = nullptr, sql_type = nullptr,
               mysql_type = nullptr;
  if (!rc.isddl()) {
    sql_type = ordered_json::object();
    mysql_type = ordered_json::object();
    ordered_json rows = ordered_json::array(), olds = ordered_json::array(),
                 pks = ordered_json::array();
    for (int r = 0; r < rc.rowdatas_size(); ++r) {
      const canalpb::RowData& rd = rc.rowdatas(r);
      const auto& cols = rc.eventtype() == canalpb::DELETE ? rd.beforecolumns() : rd.aftercolumns();
      ordered_json row = ordered_json::object();
      std::unordered_set<std::string> updated;
      for (const canalpb::Column& c : cols) {
        if (r == 0 && c.iskey()) pks.push_back(c.name());
        sql_type[c.name()] = c.sqltype();
        mysql_type[c.name()] = c.mysqltype();
        if (c.isnull())
          row[c.name()] = nullptr;
        else
          row[c.name()] = c.value();
        if (c.updated()) updated.insert(c.name());
      }
      if (!row.empty()) rows.push_back(std::move(row));
      if (rc.eventtype() == canalpb::UPDATE) {
        ordered_json o = ordered_json::object();
        for (const canalpb::Column& c : rd.beforecolumns()) {
          if (updated.count(c.name()) == 0) continue;
          if (c.isnull())
            o[c.name()] = nullptr;
          else
            o[c.name()] = c.value();
        }
        if (!o.empty()) olds.push_back(std::move(o));
      }
    }
    if (!rows.empty()) data = std::move(rows);
    if (!olds.empty()) old = std::move(olds);
    if (!pks.empty()) pk = std::move(pks);
  }
  m["data"] = std::move(data);
  m["database"] = h.schemaname();
  m["es"] = h.executetime();
  m["gtid"] = h.gtid().empty() ? ordered_json(nullptr) : ordered_json(h.gtid());
  m["id"] = batch;
  m["isDdl"] = rc.isddl();
  m["mysqlType"] = std::move(mysql_type);
  m["old"] = std::move(old);
  m["pkNames"] = std::move(pk);
  m["sql"] = rc.sql();
  m["sqlType"] = std::move(sql_type);
  m["table"] = h.tablename();
  m["ts"] = ts;
  m["type"] = canalpb::EventType_Name(rc.eventtype());
  return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

TEST_CASE("canal values: typed decoder + Canal rendering equal the JSON round trip, on every fixture value") {
  const TimeZone utc("UTC");
  ValueCheck check;
  for (const std::string& chain : fixture_chains()) {
    CAPTURE(chain);
    ConvertOptions o;
    o.inputs = {chain};
    o.progress = ProgressMode::never;
    std::FILE* err = std::tmpfile();
    REQUIRE(err != nullptr);
    StderrDiagnostics diag(err);
    ValueWalk walk(check, utc);
    (void)read_chain(chain_options(o), walk, diag, err);
    std::fclose(err);
  }
  CHECK(check.mismatched == 0);
  CHECK(check.compared > 2000);
}

TEST_CASE("canal values: typed decoder + Canal rendering equal the JSON round trip, on generated values") {
  std::mt19937_64 g(20261130);
  ValueCheck check;
  const TimeZone utc("UTC");
  auto random_raw = [&](std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(g());
    return b;
  };
  auto run_type = [&](const ColumnDef& c, std::size_t size, int count) {
    const ColumnInfo info = info_of(c);
    for (int k = 0; k < count; ++k) {
      const auto raw = random_raw(size);
      check(c, info, Bytes(raw), 1000, utc, 0);
    }
  };
  // Integers (the unsigned bump), FLOAT/DOUBLE (Java formatting), YEAR, ENUM/SET, BIT.
  for (bool u : {false, true}) {
    run_type(column(ColumnType::tiny, 0, 63, u), 1, 300);
    run_type(column(ColumnType::short_, 0, 63, u), 2, 300);
    run_type(column(ColumnType::int24, 0, 63, u), 3, 300);
    run_type(column(ColumnType::long_, 0, 63, u), 4, 300);
    run_type(column(ColumnType::longlong, 0, 63, u), 8, 300);
  }
  run_type(column(ColumnType::float_, 4), 4, 20000);
  run_type(column(ColumnType::double_, 8), 8, 20000);
  for (double d :
       {0.0, -0.0, 1.0, 0.001, 0.0001, 1e7, 9999999.0, 1e-300, 5e-324, 1.7976931348623157e308}) {
    std::uint8_t raw[8];
    std::memcpy(raw, &d, 8);
    check(column(ColumnType::double_, 8), info_of(column(ColumnType::double_, 8)), Bytes(raw, 8), 0,
          utc, 0);
  }
  run_type(column(ColumnType::year, 0), 1, 300);
  run_type(column(ColumnType::string, 0xf701), 1, 100);  // ENUM, 1 byte
  run_type(column(ColumnType::string, 0xf702), 2, 100);
  run_type(column(ColumnType::string, 0xf808), 8, 100);  // SET, 8 bytes
  run_type(column(ColumnType::string, 0xf703), 3, 100);  // ENUM of 3 and 8 bytes (damaged maps)
  run_type(column(ColumnType::string, 0xf708), 8, 100);
  for (std::uint16_t meta : {0x0001, 0x0100, 0x0105, 0x0800, 0x0407})
    run_type(column(ColumnType::bit, meta), (meta >> 8) + ((meta & 0xff) ? 1 : 0), 300);
  // Temporals: random bytes reach the out-of-range values the fast paths leave to the library.
  for (unsigned fsp = 0; fsp <= 6; ++fsp) {
    run_type(column(ColumnType::datetime2, static_cast<std::uint16_t>(fsp)), 5 + (fsp + 1) / 2,
             3000);
    run_type(column(ColumnType::time2, static_cast<std::uint16_t>(fsp)), 3 + (fsp + 1) / 2, 3000);
    run_type(column(ColumnType::timestamp2, static_cast<std::uint16_t>(fsp)), 4 + (fsp + 1) / 2,
             500);
  }
  run_type(column(ColumnType::date, 0), 3, 3000);
  run_type(column(ColumnType::newdate, 0), 3, 300);
  run_type(column(ColumnType::time, 0), 3, 300);
  run_type(column(ColumnType::datetime, 0), 8, 300);
  run_type(column(ColumnType::timestamp, 0), 4, 300);
  for (unsigned fsp = 1; fsp <= 6; ++fsp)  // MariaDB's pre-10.0 TIMESTAMP(fsp) (schema history)
    run_type(column(ColumnType::timestamp, static_cast<std::uint16_t>(fsp)), 4 + (fsp + 1) / 2, 300);
  // VECTOR: no value in Canal, whatever its bytes (5 is no multiple of 4).
  for (std::size_t len : {0, 4, 5, 12}) {
    std::vector<std::uint8_t> raw(1 + len, 0x3f);
    raw[0] = static_cast<std::uint8_t>(len);
    const ColumnDef c = column(ColumnType::vector, 1, 63);
    check(c, info_of(c), Bytes(raw), 0, utc, 0);
  }
  // Plausible DATETIME2 / TIME2 / DATE values (the fast paths' common case).
  for (int k = 0; k < 3000; ++k) {
    const std::uint64_t y = g() % 10000, mo = g() % 13, d = g() % 32, h = g() % 24, mi = g() % 60,
                        sec = g() % 60;
    const std::uint64_t ip = ((((y * 13 + mo) << 5) | d) << 17) | (h << 12) | (mi << 6) | sec;
    const unsigned fsp = static_cast<unsigned>(g() % 7);
    std::vector<std::uint8_t> raw(5 + (fsp + 1) / 2);
    const std::uint64_t stored = ip + 0x8000000000ULL;
    for (int b = 0; b < 5; ++b)
      raw[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(stored >> (8 * (4 - b)));
    const std::uint64_t usec = g() % 1000000;
    const std::uint64_t frac = fsp <= 2 ? usec / 10000 : fsp <= 4 ? usec / 100 : usec;
    for (std::size_t b = 5; b < raw.size(); ++b)
      raw[b] = static_cast<std::uint8_t>(frac >> (8 * (raw.size() - 1 - b)));
    const ColumnDef c = column(ColumnType::datetime2, static_cast<std::uint16_t>(fsp));
    check(c, info_of(c), Bytes(raw), 0, utc, 0);
    std::vector<std::uint8_t> t(3 + (fsp + 1) / 2);
    const std::int64_t tv =
        (g() % 2 ? -1 : 1) * static_cast<std::int64_t>((h << 12) | (mi << 6) | sec);
    const std::uint64_t ts = static_cast<std::uint64_t>(tv + 0x800000);
    for (int b = 0; b < 3; ++b)
      t[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(ts >> (8 * (2 - b)));
    for (std::size_t b = 3; b < t.size(); ++b) t[b] = static_cast<std::uint8_t>(g());
    const ColumnDef c2 = column(ColumnType::time2, static_cast<std::uint16_t>(fsp));
    check(c2, info_of(c2), Bytes(t), 0, utc, 0);
    const std::uint32_t dv = static_cast<std::uint32_t>((y << 9) | (mo << 5) | d);
    const std::uint8_t draw[3] = {static_cast<std::uint8_t>(dv), static_cast<std::uint8_t>(dv >> 8),
                                  static_cast<std::uint8_t>(dv >> 16)};
    const ColumnDef c3 = column(ColumnType::date, 0);
    check(c3, info_of(c3), Bytes(draw, 3), 0, utc, 0);
  }
  // TIMESTAMP in fixed-offset zones (the calendar replaces gmtime_r).
  for (const char* z : {"UTC", "+08:00", "-05:30", "+14:00", "-12:00"}) {
    const TimeZone zone(z);
    const std::int32_t off = *fixed_timezone_offset(z);
    for (unsigned fsp : {0u, 3u, 6u}) {
      const ColumnDef c = column(ColumnType::timestamp2, static_cast<std::uint16_t>(fsp));
      for (int k = 0; k < 2000; ++k) {
        auto raw = random_raw(4 + (fsp + 1) / 2);
        if (k % 3 == 0) raw[0] = raw[1] = 0;  // the first days after the epoch
        check(c, info_of(c), Bytes(raw), 0, zone, off);
      }
    }
  }
  // DECIMAL: random digits, some impossible (the library's errors).
  for (auto [prec, scale] :
       {std::pair{10, 2}, {14, 2}, {30, 10}, {65, 30}, {5, 5}, {1, 0}, {18, 9}}) {
    const auto meta = static_cast<std::uint16_t>((prec << 8) | scale);
    run_type(column(ColumnType::newdecimal, meta), decimal_binary_size(prec, scale), 1000);
  }
  run_type(column(ColumnType::decimal, 6), 6, 200);  // pre-5.0 DECIMAL: text
  // Text in every mode (utf8 pass-through, latin1, iconv charsets) and binary strings.
  for (std::uint16_t cs : {0, 45, 33, 11, 8, 63, 28, 1, 95, 54, 97, 25}) {
    for (const ColumnDef& c :
         {column(ColumnType::varchar, 300, cs), column(ColumnType::string, 0xfe40, cs),
          column(ColumnType::blob, 2, cs), column(ColumnType::tiny_blob, 1, cs)}) {
      const ColumnInfo info = info_of(c);
      const std::size_t prefix = c.type == ColumnType::varchar  ? 2
                                 : c.type == ColumnType::string ? 1
                                                                : c.meta;
      for (int k = 0; k < 400; ++k) {
        const std::string text = tricky_bytes(g, 40);
        std::vector<std::uint8_t> raw(prefix + text.size());
        for (std::size_t b = 0; b < prefix; ++b)
          raw[b] = static_cast<std::uint8_t>(text.size() >> (8 * b));
        std::memcpy(raw.data() + prefix, text.data(), text.size());
        check(c, info, Bytes(raw), 0, utc, 0);
      }
    }
  }
  CHECK(check.mismatched == 0);
  CHECK(check.compared > 100000);
}

// read_value reports column_value_size's error whenever the decoder fails and the size is wrong
// too, and trusts the decoder otherwise: sound only if a value the decoder (with Canal's
// leniencies) takes has the size column_value_size gives. Checked on random bytes and metadata.
TEST_CASE("canal values: the typed decoder takes exactly column_value_size's bytes") {
  std::mt19937_64 g(13);
  const ColumnType types[] = {
      ColumnType::tiny,      ColumnType::short_,     ColumnType::int24,      ColumnType::long_,
      ColumnType::longlong,  ColumnType::float_,     ColumnType::double_,    ColumnType::year,
      ColumnType::bit,       ColumnType::decimal,    ColumnType::newdecimal, ColumnType::date,
      ColumnType::newdate,   ColumnType::time,       ColumnType::time2,      ColumnType::datetime,
      ColumnType::datetime2, ColumnType::timestamp,  ColumnType::timestamp2, ColumnType::varchar,
      ColumnType::var_string, ColumnType::string,    ColumnType::enum_,      ColumnType::set,
      ColumnType::tiny_blob, ColumnType::medium_blob, ColumnType::long_blob, ColumnType::blob,
      ColumnType::geometry,  ColumnType::json,       ColumnType::null};
  std::size_t decoded = 0, bad = 0;
  std::uint8_t buf[96];
  for (ColumnType t : types) {
    for (int k = 0; k < 4000; ++k) {
      ColumnInfo info;
      info.type = t;
      // small metadata most of the time (the valid ranges), any 16 bits sometimes
      const std::uint64_t m = g();
      info.meta = static_cast<std::uint16_t>(k % 4 == 0 ? m : k % 4 == 1 ? m % 8 : m % 0x1000);
      if (t == ColumnType::string && k % 2 == 0)  // ENUM/SET real types and CHAR lengths
        info.meta = static_cast<std::uint16_t>(((0xf5 + m % 4) << 8) | (m >> 8) % 12);
      info.charset = k % 3 == 0 ? 63 : 45;
      for (auto& b : buf) b = static_cast<std::uint8_t>(g() % 4 == 0 ? g() % 8 : g());
      const std::size_t n = g() % sizeof buf;
      ByteReader r(Bytes(buf, n), 500);
      ColumnValue v;
      const Status st = decode_column_value(info, r, v, canal_detail::kCanalLeniency);
      if (!st.ok()) continue;
      ++decoded;
      const auto size = column_value_size(t, info.meta, ByteReader(Bytes(buf, n), 500));
      if ((!size || *size != r.position()) && ++bad <= 10)
        MESSAGE(fmt::format("type {} meta {:#x}: decoder took {} bytes, column_value_size {}",
                            static_cast<int>(t), info.meta, r.position(),
                            size ? std::to_string(*size) : size.error().what));
    }
  }
  CHECK(bad == 0);
  CHECK(decoded > 50000);
}

TEST_CASE("canal: ISO-8859-1 bytes as UTF-8, one code point per byte, at any length") {
  std::mt19937_64 g(11);
  for (int k = 0; k < 3000; ++k) {
    std::string in(static_cast<std::size_t>(g() % 700), '\0');
    const unsigned mix = static_cast<unsigned>(g() % 4);  // from all ASCII to all high bytes
    for (char& c : in) c = static_cast<char>(g() % 4 < mix ? 0x80 + g() % 128 : g() % 128);
    std::string want = "prefix";
    for (unsigned char c : in) {
      if (c < 0x80) {
        want.push_back(static_cast<char>(c));
      } else {
        want.push_back(static_cast<char>(0xC0 | (c >> 6)));
        want.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
    }
    std::string got = "prefix";
    canal_detail::append_iso8859_1(got, Bytes(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()));
    if (got != want) {
      CHECK(got == want);
      break;
    }
  }
}

TEST_CASE("canal: UTF-8 text taken as it is exactly when append_utf8 would copy it, and escaped as before") {
  // Texts of every length near the word sizes, mostly ASCII to mostly not, with well-formed
  // sequences of each length, the bytes that break them (overlong, surrogates, past U+10FFFF, cut
  // short, stray continuation bytes) and the ASCII a JSON string escapes.
  static const char* const kGood[] = {"\x7f",         "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
                                      "\xf0\x90\x80\x80", "\"",       "\\",           "\n",               "\x01"};
  static const char* const kBad[] = {"\xc0\xaf",     "\xc2", "\xe0\x9f\xbf", "\xed\xa0\x80",
                                     "\xf4\x90\x80\x80", "\xef\xbf", "\x80",     "\xf5"};
  std::mt19937_64 g(12);
  int taken = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string in;
    const std::size_t len = static_cast<std::size_t>(g() % (k % 10 == 0 ? 300 : 40));
    const unsigned mix = static_cast<unsigned>(g() % 8);
    const bool bad = g() % 4 == 0;
    while (in.size() < len) {
      if (g() % 8 >= mix) in += 'a';
      else if (bad && g() % 3 == 0) in += kBad[g() % std::size(kBad)];
      else in += kGood[g() % std::size(kGood)];
    }
    std::string converted;
    append_utf8(converted, in, 45, BadBytes::hex_text);  // utf8mb4_general_ci
    const bool want = converted == in;
    taken += want ? 1 : 0;
    if (canal_detail::utf8_well_formed(in) != want) {
      std::string hex;
      for (unsigned char c : in) hex += fmt::format("{:02x} ", c);
      CHECK_MESSAGE(canal_detail::utf8_well_formed(in) == want, hex);
      break;
    }
    if (want) {
      canal_detail::OutBuf a, b;
      canal_detail::append_flat_json_string(a, in);
      canal_detail::append_flat_json_utf8(b, in);
      if (a.view() != b.view()) {
        CHECK(b.view() == a.view());
        break;
      }
    }
  }
  CHECK(taken > 1000);
  CHECK(taken < 19000);
}

TEST_CASE("canal: flat JSON strings agree with nlohmann") {
  std::mt19937_64 g(7);
  auto nl_dump = [](const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::size_t bad = 0;
  auto dump_check = [&](const std::string& s) {
    std::string got;
    canal_detail::append_flat_json_string(got, s);
    if (got != nl_dump(s) && ++bad <= 5)
      MESSAGE("flat JSON string differs for "
              << nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  };
  for (int a = 0; a < 256; ++a) {
    dump_check(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b)
      dump_check(std::string{static_cast<char>(a), static_cast<char>(b)});
  }
  for (int k = 0; k < 200000; ++k) dump_check(tricky_bytes(g, 48));
  CHECK(bad == 0);
}

TEST_CASE(
    "canal-json: each line is the first implementation's FlatMessage of the canal-proto entries") {
  std::vector<std::string> chains = {kBasic};
  for (const std::string& c : fixture_chains())
    if (c != kBasic && c.find("/public/") == std::string::npos) chains.push_back(c);
  for (const std::string& chain : chains) {
    for (std::uint32_t batch_size : {50u, 3u}) {
      CAPTURE(chain);
      CAPTURE(batch_size);
      const auto entries =
          parse_entries(run(true, CanalFormat::proto, "UTC", chain, batch_size, false, false));
      const std::string js = run(true, CanalFormat::json, "UTC", chain, batch_size, false, false);
      std::vector<std::string> want;
      for (std::size_t k = 0; k < entries.size(); ++k) {
        if (entries[k].entrytype() != canalpb::ROWDATA) continue;
        canalpb::RowChange rc;
        REQUIRE(rc.ParseFromString(entries[k].storevalue()));
        want.push_back(reference_flat_message(entries[k], rc, k / batch_size + 1, 0));
      }
      std::vector<std::string> got;
      std::size_t at = 0;
      while (at < js.size()) {
        const std::size_t nl = js.find('\n', at);
        REQUIRE(nl != std::string::npos);
        std::string line = js.substr(at, nl - at);
        at = nl + 1;
        // "ts" is the wall clock: zero it.
        const std::size_t t = line.rfind(",\"ts\":");
        REQUIRE(t != std::string::npos);
        const std::size_t e = line.find(',', t + 1);
        line.replace(t, e - t, ",\"ts\":0");
        got.push_back(std::move(line));
      }
      REQUIRE(got.size() == want.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && ++differ <= 3)
          MESSAGE("line " << i << "\n got  " << got[i] << "\n want " << want[i]);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("canal-proto --canal-packets: one packet per batch, whatever the output buffer holds") {
  // Batches of 2 over more than the 256 KiB output buffer: the first implementation flushed the
  // open batch when the buffer filled, splitting it into two packets with the same batch_id.
  const std::vector<std::string> plain = split_delimited(run(true, CanalFormat::proto));
  const std::string framed = run(true, CanalFormat::proto, "UTC", kBasic, 2, true);
  REQUIRE(framed.size() > (256u << 10));
  std::vector<std::string> entries;
  std::size_t at = 0;
  std::int64_t want_batch = 1;
  while (at < framed.size()) {
    REQUIRE(at + 4 <= framed.size());
    const std::size_t n = (std::size_t{static_cast<std::uint8_t>(framed[at])} << 24) |
                          (std::size_t{static_cast<std::uint8_t>(framed[at + 1])} << 16) |
                          (std::size_t{static_cast<std::uint8_t>(framed[at + 2])} << 8) |
                          std::size_t{static_cast<std::uint8_t>(framed[at + 3])};
    canalpb::Packet p;
    REQUIRE(p.ParseFromArray(framed.data() + at + 4, static_cast<int>(n)));
    at += 4 + n;
    CHECK(p.type() == canalpb::MESSAGES);
    CHECK(p.version() == 1);
    canalpb::Messages m;
    REQUIRE(m.ParseFromString(p.body()));
    CHECK(m.batch_id() == want_batch);
    ++want_batch;
    if (at < framed.size()) CHECK(m.messages_size() == 2);
    for (const std::string& e : m.messages()) entries.push_back(e);
  }
  CHECK(entries == plain);
}
TEST_SUITE_END();
#endif

TEST_CASE("GTID_LIST as Canal prints it: java.util.HashMap order by domain") {
  using binlogctl::MariaGtidList;
  auto l = MariaGtidList::parse("0-1-100,1-2-5");
  REQUIRE(l.ok());
  CHECK(binlogctl::canal_detail::gtid_list_text(*l) == "0-1-100,1-2-5");
  auto rev = MariaGtidList::parse("11-2022-100,1-1011-1000");
  REQUIRE(rev.ok());
  CHECK(binlogctl::canal_detail::gtid_list_text(*rev) == "1-1011-1000,11-2022-100");  // buckets 1, 11
  // one entry per domain: the later one (binlog state lists a domain once per server)
  auto two = MariaGtidList::parse("1-1-5,1-2-7");
  REQUIRE(two.ok());
  CHECK(binlogctl::canal_detail::gtid_list_text(*two) == "1-2-7");
  // domain 16 falls in bucket 0 of a 16-bucket map, before domain 1; 17 collides with 1 and
  // follows it in insertion order
  auto wrap = MariaGtidList::parse("1-1-1,17-1-1,16-1-1");
  REQUIRE(wrap.ok());
  CHECK(binlogctl::canal_detail::gtid_list_text(*wrap) == "16-1-1,1-1-1,17-1-1");
  CHECK(binlogctl::canal_detail::gtid_list_text(MariaGtidList{}).empty());
}
