// Canal output (binlogctl_canal): the canal-proto stream parsed back with the generated classes
// and compared with convert --format json of the same binlogs; Java number formatting; DDL
// event types; --timezone.
#if __has_include("EntryProtocol.pb.h") && defined(BINLOGCTL_HAVE_CANAL)
#include <binlogctl/canal.h>
#include <binlogctl/convert.h>

#include <doctest/doctest.h>
#include <google/protobuf/io/coded_stream.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "EntryProtocol.pb.h"

namespace canalpb = com::alibaba::otter::canal::protocol;
using namespace binlogctl;

namespace {

const std::string kBasic = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs";

std::string read_all(std::FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

// Runs a conversion into a temporary file; returns its bytes.
std::string run(bool canal, CanalFormat fmt = CanalFormat::proto, const std::string& tz = "UTC") {
  ConvertOptions o;
  o.inputs = {kBasic};
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
    rc = run_canal_convert(o, co, out, err);
  } else {
    rc = run_convert(o, out, err);
  }
  CHECK(rc == 0);
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

TEST_CASE("canal: statement event types") {
  CHECK(canal_statement_event_type("CREATE TABLE t (a int)") == canalpb::CREATE);
  CHECK(canal_statement_event_type("create temporary table t (a int)") == canalpb::CREATE);
  CHECK(canal_statement_event_type("/* x */ ALTER TABLE t ADD b int") == canalpb::ALTER);
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
#endif
