// Tests for binlogctl stats (lib/include/binlogctl/stats.h): the counts on the project's real
// MariaDB fixtures against ground truth the server wrote (SHOW BINLOG EVENTS for event types and
// sizes, mariadb-binlog -vv for the rows per table), the rankings, the timeline, the selections,
// and error paths on binlogs built in memory (tests/support/binlog_builder.h).
#include <binlogctl/columns.h>
#include <binlogctl/stats.h>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "stats/row_walk.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "binlog_builder.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";
using Buf = std::vector<std::uint8_t>;

// A sink that keeps the findings (collect_stats runs the reader on a second thread: locked).
class Findings : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override {
    std::lock_guard<std::mutex> l(m_);
    list.push_back(d);
  }
  std::vector<Diagnostic> list;

 private:
  std::mutex m_;
};

StatsReport stats_of(StatsOptions o, Findings* findings = nullptr) {
  o.progress = ProgressMode::never;
  StatsReport rep;
  Findings local;
  Findings& f = findings != nullptr ? *findings : local;
  std::FILE* err = std::tmpfile();
  REQUIRE(collect_stats(o, rep, f, err));
  std::fclose(err);
  return rep;
}

StatsReport stats_of(const std::string& input) {
  StatsOptions o;
  o.inputs = {input};
  Findings f;
  StatsReport rep = stats_of(o, &f);
  CHECK(f.list.empty());
  return rep;
}

std::string slurp(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

// SHOW BINLOG EVENTS of every file of a set (expected/show-binlog-events/*.tsv): per event type,
// the count and the summed size (End_log_pos - Pos).
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> show_binlog_events(
    const std::string& set) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> m;
  for (const auto& e :
       fs::directory_iterator(kFixtures / set / "expected" / "show-binlog-events")) {
    std::ifstream in(e.path());
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      std::string cell;
      while (std::getline(ss, cell, '\t')) f.push_back(cell);
      REQUIRE(f.size() >= 5);
      auto& [count, bytes] = m[f[2]];
      ++count;
      bytes += std::stoull(f[4]) - std::stoull(f[1]);
    }
  }
  return m;
}

// mariadb-binlog -vv of every file of a set: "### INSERT INTO `db`.`t`", "### UPDATE `db`.`t`",
// "### DELETE FROM `db`.`t`" lines, one per row change.
std::map<std::string, std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> mariadb_binlog_rows(
    const std::string& set) {
  std::map<std::string, std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> m;
  for (const auto& e : fs::directory_iterator(kFixtures / set / "expected" / "mariadb-binlog")) {
    if (e.path().filename() == "exit-codes.txt") continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      int op = -1;  // 0 insert, 1 update, 2 delete
      std::string_view rest;
      for (const auto& [prefix, kind] :
           {std::pair{"### INSERT INTO `", 0}, std::pair{"### UPDATE `", 1},
            std::pair{"### DELETE FROM `", 2}}) {
        if (line.rfind(prefix, 0) == 0) {
          op = kind;
          rest = std::string_view(line).substr(std::string_view(prefix).size());
        }
      }
      if (op < 0) continue;
      const std::size_t db_end = rest.find("`.`");
      const std::size_t t_end = rest.find('`', db_end + 3);
      REQUIRE(db_end != std::string_view::npos);
      REQUIRE(t_end != std::string_view::npos);
      const std::string key = std::string(rest.substr(0, db_end)) + "." +
                              std::string(rest.substr(db_end + 3, t_end - db_end - 3));
      auto& [ins, upd, del] = m[key];
      ++(op == 1 ? upd : op == 2 ? del : ins);
    }
  }
  return m;
}

// A MySQL 8.0 binlog with table t.items (INT, VARCHAR(20)) and one transaction: 3 inserts,
// 2 updates, 1 delete; optionally a corrupt WRITE_ROWS event, or no TABLE_MAP.
struct Synthetic {
  BinlogBuilder b;
  std::size_t write_event = 0;  // index of the WRITE_ROWS event
  Synthetic(bool corrupt_write, bool without_table_map) {
    b.fde("8.0.32", false);
    b.query("t", "BEGIN");
    Buf tm;
    BinlogBuilder::le(tm, 42, 6);  // table id
    BinlogBuilder::le(tm, 1, 2);   // flags
    tm.push_back(1);
    tm.push_back('t');
    tm.push_back(0);
    tm.push_back(5);
    for (char c : std::string("items")) tm.push_back(static_cast<std::uint8_t>(c));
    tm.push_back(0);
    tm.push_back(2);               // columns
    tm.push_back(3);               // LONG
    tm.push_back(15);              // VARCHAR
    tm.push_back(2);               // metadata length
    BinlogBuilder::le(tm, 80, 2);  // VARCHAR(20) utf8mb4: 80 bytes
    tm.push_back(0x02);            // null bitmap
    if (!without_table_map) b.raw(19, tm);
    auto row = [](Buf& r, std::uint32_t id, const std::string& s) {
      r.push_back(0x00);  // null bitmap
      BinlogBuilder::le(r, id, 4);
      r.push_back(static_cast<std::uint8_t>(s.size()));
      r.insert(r.end(), s.begin(), s.end());
    };
    auto header = [](Buf& r, bool update, bool stmt_end) {
      BinlogBuilder::le(r, 42, 6);
      BinlogBuilder::le(r, stmt_end ? 1 : 0, 2);
      BinlogBuilder::le(r, 2, 2);  // extra info length (itself)
      r.push_back(2);              // width
      r.push_back(0x03);           // columns present
      if (update) r.push_back(0x03);
    };
    Buf w;
    header(w, false, false);
    row(w, 1, "one");
    row(w, 2, "two");
    row(w, 3, "three");
    if (corrupt_write) w[w.size() - 6] = 200;  // "three": its length prefix now runs past the row
    write_event = 3 - (without_table_map ? 1 : 0);
    b.raw(30, w);
    Buf u;
    header(u, true, false);
    row(u, 1, "one");
    row(u, 1, "uno");
    row(u, 2, "two");
    row(u, 2, "dos");
    b.raw(31, u);
    Buf d;
    header(d, false, true);
    row(d, 3, "three");
    b.raw(32, d);
    b.xid(9);
  }
};

struct TempFile {
  fs::path path;
  explicit TempFile(const Buf& bytes) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / ("binlogctl-stats-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++) + ".000001");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

const TableStats* find_table(const StatsReport& r, const std::string& db, const std::string& t) {
  for (const TableStats& s : r.tables)
    if (s.database == db && s.table == t) return &s;
  return nullptr;
}

}  // namespace

TEST_SUITE("stats") {
  TEST_CASE("stats: event types: count and bytes equal SHOW BINLOG EVENTS") {
    for (const std::string set : {"basic", "nochecksum", "compressed", "schema"}) {
      CAPTURE(set);
      const StatsReport rep = stats_of((kFixtures / set / "binlogs").string());
      std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> got;
      std::uint64_t events = 0, bytes = 0;
      for (const EventTypeStats& e : rep.event_types) {
        got[e.name] = {e.count, e.bytes};
        events += e.count;
        bytes += e.bytes;
      }
      CHECK(got == show_binlog_events(set));
      CHECK(rep.summary.events == events);
      CHECK(rep.summary.bytes == bytes);  // no payloads: every event is on disk
      CHECK(rep.summary.inner_events == 0);
      // Sorted by bytes, largest first.
      for (std::size_t i = 1; i < rep.event_types.size(); ++i)
        CHECK(rep.event_types[i - 1].bytes >= rep.event_types[i].bytes);
    }
  }

  TEST_CASE(
      "stats: tables: row changes equal mariadb-binlog -vv (compressed rows events included)") {
    for (const std::string set : {"basic", "nochecksum", "compressed"}) {
      CAPTURE(set);
      const StatsReport rep = stats_of((kFixtures / set / "binlogs").string());
      std::map<std::string, std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> got;
      std::uint64_t ins = 0, upd = 0, del = 0;
      for (const TableStats& t : rep.tables) {
        got[t.database + "." + t.table] = {t.inserts, t.updates, t.deletes};
        ins += t.inserts;
        upd += t.updates;
        del += t.deletes;
        CHECK(t.events > 0);
        CHECK(t.transactions > 0);
        CHECK(t.transactions <= t.events);
      }
      CHECK(got == mariadb_binlog_rows(set));
      CHECK(rep.summary.inserts == ins);
      CHECK(rep.summary.updates == upd);
      CHECK(rep.summary.deletes == del);
      CHECK(rep.summary.uncounted_rows_events == 0);
      CHECK(rep.summary.tables == rep.tables.size());
    }
    // A table's bytes are the sizes of its rows events: the compressed set has only compressed
    // ones for packed.docs.
    const StatsReport rep = stats_of((kFixtures / "compressed" / "binlogs").string());
    const auto sbe = show_binlog_events("compressed");
    std::uint64_t rows_bytes = 0;
    for (const TableStats& t : rep.tables) rows_bytes += t.bytes;
    std::uint64_t expected = 0;
    for (const auto& [name, cb] : sbe)
      if (name.find("_rows") != std::string::npos && name != "Annotate_rows") expected += cb.second;
    CHECK(rows_bytes == expected);
  }

  TEST_CASE("stats: transactions: one per GTID and rankings bounded and ordered and the true top") {
    const std::string basic = (kFixtures / "basic" / "binlogs").string();
    StatsOptions all;
    all.inputs = {basic};
    all.top = 100000;
    const StatsReport full = stats_of(all);
    CHECK(full.summary.transactions == show_binlog_events("basic").at("Gtid").first);
    REQUIRE(full.largest.size() == full.summary.transactions);
    REQUIRE(full.longest.size() == full.summary.transactions);
    std::uint64_t rows = 0;
    for (const TransactionStats& t : full.largest) rows += t.rows;
    CHECK(rows == full.summary.rows());

    StatsOptions three = all;
    three.top = 3;
    const StatsReport top = stats_of(three);
    REQUIRE(top.largest.size() == 3);
    REQUIRE(top.longest.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(top.largest[i].txn_id == full.largest[i].txn_id);
      CHECK(top.longest[i].txn_id == full.longest[i].txn_id);
    }
    for (std::size_t i = 1; i < full.largest.size(); ++i) {
      CHECK(full.largest[i - 1].bytes >= full.largest[i].bytes);
      CHECK(full.longest[i - 1].duration() >= full.longest[i].duration());
    }
    // The INSERT ... SELECT of 400 rows is the largest transaction: GTID 1-1011-23, begun in
    // mariadb-bin.000001 at its GTID event.
    const TransactionStats& big = top.largest[0];
    CHECK(big.gtid == "1-1011-23");
    CHECK(big.rows == 400);
    CHECK(big.log_name == "mariadb-bin.000001");
    CHECK(big.complete);
    CHECK(big.bytes > 14000);

    StatsOptions none = all;
    none.top = 0;
    const StatsReport nothing = stats_of(none);
    CHECK(nothing.largest.empty());
    CHECK(nothing.longest.empty());
    CHECK(nothing.summary.transactions == full.summary.transactions);
  }

  TEST_CASE("stats: timeline: intervals add up to the summary") {
    for (std::uint32_t width : {60u, 3600u, 1u}) {
      CAPTURE(width);
      StatsOptions o;
      o.inputs = {(kFixtures / "basic" / "binlogs").string()};
      o.interval_seconds = width;
      const StatsReport rep = stats_of(o);
      CHECK(rep.interval_seconds == width);
      std::uint64_t events = 0, rows = 0, txns = 0, bytes = 0;
      std::int64_t last = -1;
      for (const IntervalStats& iv : rep.intervals) {
        CHECK(iv.start % width == 0);
        CHECK(iv.start > last);
        last = iv.start;
        events += iv.events;
        rows += iv.rows();
        txns += iv.transactions;
        bytes += iv.bytes;
      }
      CHECK(events == rep.summary.events);  // no event of these files has time 0
      CHECK(bytes == rep.summary.bytes);
      CHECK(rows == rep.summary.rows());
      CHECK(txns == rep.summary.transactions);
      REQUIRE(rep.summary.first_time.has_value());
      CHECK(rep.intervals.front().start <= *rep.summary.first_time);
    }
  }

  TEST_CASE("stats: selections: --filter and GTID sets and positions") {
    const std::string basic = (kFixtures / "basic" / "binlogs").string();
    StatsOptions o;
    o.inputs = {basic};
    auto f = TableFilter::parse("shop\\.orders");
    REQUIRE(f);
    o.filter = *f;
    const StatsReport only = stats_of(o);
    REQUIRE(only.tables.size() == 1);
    CHECK(only.tables[0].table == "orders");
    CHECK(only.summary.rows() == 41);   // 25 + 13 + 3, as mariadb-binlog -vv
    CHECK(only.summary.events == 618);  // events are not filtered

    // ..1-1011-23 selects every seq_no up to 23: the first 23 transactions of domain 1, server
    // 1011 (the 400-row INSERT included, its DELETE not); 1-1011:1-23 is the same set.
    StatsOptions inc;
    inc.inputs = {basic};
    auto one = GtidSelection::parse("1-1011-23");
    REQUIRE(one);
    inc.include_gtids = *one;
    CHECK(stats_of(inc).summary.transactions == 1);
    auto range = GtidSelection::parse("1-1011:1-23");
    REQUIRE(range);
    inc.include_gtids = *range;
    CHECK(stats_of(inc).summary.transactions == 23);
    auto sel = GtidSelection::parse("..1-1011-23");
    REQUIRE(sel);
    inc.include_gtids = *sel;
    const StatsReport in = stats_of(inc);
    CHECK(in.summary.transactions == 23);
    const TableStats* ev = find_table(in, "shop", "event_log");
    REQUIRE(ev != nullptr);
    CHECK(ev->inserts == 400);
    CHECK(ev->deletes == 0);
    StatsOptions exc = inc;
    exc.include_gtids.reset();
    exc.exclude_gtids = *sel;
    const StatsReport ex = stats_of(exc);
    CHECK(ex.summary.transactions == 105 - 23);
    const StatsReport all = stats_of(basic);
    CHECK(in.summary.rows() + ex.summary.rows() == all.summary.rows());

    // Positions: the events SHOW BINLOG EVENTS lists from 389 (the GTID of the 360-row DELETE)
    // to before 13800 in mariadb-bin.000002 (the format description read first is not counted).
    StatsOptions pos;
    pos.inputs = {(kFixtures / "basic" / "binlogs" / "mariadb-bin.000002").string()};
    pos.start_position = 389;
    pos.stop_position = 13800;
    const StatsReport p = stats_of(pos);
    std::ifstream in2(kFixtures / "basic" / "expected" / "show-binlog-events" /
                      "mariadb-bin.000002.tsv");
    std::string line;
    std::getline(in2, line);
    std::uint64_t expected = 0;
    while (std::getline(in2, line)) {
      const std::uint64_t at = std::stoull(line.substr(line.find('\t') + 1));
      if (at >= 389 && at < 13800) ++expected;
    }
    CHECK(p.summary.events == expected);
    const TableStats* del = find_table(p, "shop", "event_log");
    REQUIRE(del != nullptr);
    CHECK(del->deletes == 360);
  }

  TEST_CASE("stats: schema history: MariaDB pre-10.0 temporals need their definitions") {
    const std::string file = (kFixtures / "schema" / "binlogs" / "mariadb-bin.000002").string();
    StatsOptions o;
    o.inputs = {file};
    Findings f;
    const StatsReport without = stats_of(o, &f);
    CHECK(without.summary.uncounted_rows_events == 1);
    REQUIRE(f.list.size() == 1);
    CHECK(f.list[0].check == Check::undecodable_event);
    CHECK(f.list[0].log_name == "mariadb-bin.000002");
    CHECK(f.list[0].pos == 789);
    auto h = std::make_shared<SchemaHistory>();
    std::string error;
    REQUIRE(
        load_schema_file((kFixtures / "schema" / "expected" / "schema.sql").string(), *h, error));
    o.schema = h;
    const StatsReport with = stats_of(o);
    CHECK(with.summary.uncounted_rows_events == 0);
    const TableStats* lt = find_table(with, "sch", "legacy_time");
    REQUIRE(lt != nullptr);
    CHECK(lt->inserts == 1);
    // The whole chain needs no --schema: its DDL is schema history.
    const StatsReport chain = stats_of((kFixtures / "schema" / "binlogs").string());
    CHECK(chain.summary.uncounted_rows_events == 0);
    CHECK(chain.summary.rows() == 24);
  }

  TEST_CASE("stats: synthetic MySQL 8 binlog: rows per kind with UPDATE pairs counted once") {
    Synthetic s(false, false);
    TempFile file(s.b.bytes());
    const StatsReport rep = stats_of(file.path.string());
    REQUIRE(rep.tables.size() == 1);
    const TableStats& t = rep.tables[0];
    CHECK(t.database == "t");
    CHECK(t.table == "items");
    CHECK(t.inserts == 3);
    CHECK(t.updates == 2);
    CHECK(t.deletes == 1);
    CHECK(t.events == 3);
    CHECK(t.transactions == 1);
    CHECK(rep.summary.transactions == 1);
    REQUIRE(rep.largest.size() == 1);
    CHECK(rep.largest[0].rows == 6);
    CHECK(rep.largest[0].events == 6);  // BEGIN, TABLE_MAP, 3 rows events, XID
    CHECK(rep.largest[0].gtid.empty());
    CHECK(rep.largest[0].pos == s.b.event_offset(1));
  }

  TEST_CASE(
      "stats: errors: undecodable rows and a missing TABLE_MAP name the file and offset (exit 1)") {
    {
      Synthetic s(true, false);
      TempFile file(s.b.bytes());
      StatsOptions o;
      o.inputs = {file.path.string()};
      o.format = OutputFormat::json;
      o.progress = ProgressMode::never;
      std::FILE* out = std::tmpfile();
      std::FILE* err = std::tmpfile();
      CHECK(run_stats(o, out, err) == 1);
      const std::string e = slurp(err);
      const std::string name = file.path.filename().string();
      CHECK(e.find(name + ":" + std::to_string(s.b.event_offset(s.write_event)) +
                   ": error: undecodable_event: WRITE_ROWS_EVENT event does not decode") !=
            std::string::npos);
      CHECK(e.find("runs past the end of the row") != std::string::npos);
      const std::string json = slurp(out);
      CHECK(json.find("\"uncounted_rows_events\":1,") != std::string::npos);
      CHECK(json.find("\"errors\":1,") != std::string::npos);
      std::fclose(out);
      std::fclose(err);
    }
    {
      Synthetic s(false, true);
      TempFile file(s.b.bytes());
      Findings f;
      StatsOptions o;
      o.inputs = {file.path.string()};
      const StatsReport rep = stats_of(o, &f);
      CHECK(rep.summary.uncounted_rows_events == 3);
      CHECK(rep.tables.empty());
      REQUIRE(f.list.size() == 3);
      CHECK(f.list[0].check == Check::transaction_structure);
      CHECK(f.list[0].severity == Severity::error);
      CHECK(f.list[0].pos == s.b.event_offset(2));
    }
    {  // unreadable input: 2
      StatsOptions o;
      o.inputs = {"/nonexistent/binlog.000001"};
      o.progress = ProgressMode::never;
      std::FILE* out = std::tmpfile();
      std::FILE* err = std::tmpfile();
      CHECK(run_stats(o, out, err) == 2);
      CHECK(slurp(err).find("/nonexistent/binlog.000001: offset 0: file not found") !=
            std::string::npos);
      std::fclose(out);
      std::fclose(err);
    }
  }

  TEST_CASE(
      "stats: JSON: every line an object with a kind and valid UTF-8 for any name and the summary "
      "last") {
    StatsReport rep = stats_of((kFixtures / "basic" / "binlogs").string());
    TableStats odd;
    odd.database = std::string("d\xff\"b", 4);
    odd.table = std::string("t\n\xc3", 3);
    odd.inserts = 1;
    rep.tables.push_back(odd);
    std::string out;
    append_stats_json(rep, out);
    std::stringstream ss(out);
    std::string line;
    std::map<std::string, int> kinds;
    std::string last_kind;
    bool saw_odd = false;
    while (std::getline(ss, line)) {
      const nlohmann::json j = nlohmann::json::parse(line);  // throws on invalid JSON or UTF-8
      REQUIRE(j.is_object());
      REQUIRE(j.contains("kind"));
      last_kind = j["kind"].get<std::string>();
      ++kinds[last_kind];
      if (last_kind == "table") {
        for (const char* k :
             {"database", "table", "inserts", "updates", "deletes", "bytes", "transactions"})
          CHECK(j.contains(k));
        if (j["database"] == "d\\xff\"b") {
          saw_odd = true;
          CHECK(j["table"] == "t\n\\xc3");
        }
      }
    }
    CHECK(saw_odd);
    CHECK(last_kind == "summary");
    CHECK(kinds["summary"] == 1);
    CHECK(kinds["table"] == 12);
    CHECK(kinds["event_type"] == 17);
    CHECK(kinds["transaction"] == 20);
    CHECK(kinds["interval"] == static_cast<int>(rep.intervals.size()));
  }

  TEST_CASE("stats: damaged input: no crash and the totals stay consistent") {
    // Without checksums every mutation reaches the decoders and the row walk.
    std::mt19937_64 rng(20261130);
    for (const char* path :
         {"nochecksum/binlogs/mariadb-bin.000001", "compressed/binlogs/mariadb-bin.000001",
          "schema/binlogs/mariadb-bin.000001"}) {
      std::ifstream in(kFixtures / path, std::ios::binary);
      const Buf orig{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      REQUIRE(orig.size() > 1000);
      for (int round = 0; round < 150; ++round) {
        CAPTURE(path);
        CAPTURE(round);
        Buf b = orig;
        if (round % 3 == 0) {
          b.resize(4 + rng() % (b.size() - 4));
        } else {
          for (int k = 0; k < 1 + static_cast<int>(rng() % 6); ++k)
            b[4 + rng() % (b.size() - 4)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        }
        TempFile file(b);
        StatsOptions o;
        o.inputs = {file.path.string()};
        o.verify_checksums = false;
        Findings f;
        const StatsReport rep = stats_of(o, &f);
        std::uint64_t events = 0, table_rows = 0, txn_rows = 0;
        for (const EventTypeStats& e : rep.event_types) events += e.count;
        for (const TableStats& t : rep.tables) table_rows += t.rows();
        for (const TransactionStats& t : rep.largest) txn_rows += t.rows;
        CHECK(events == rep.summary.events);
        CHECK(table_rows == rep.summary.rows());
        CHECK(rep.largest.size() <= 10);
        CHECK(txn_rows <= rep.summary.rows());
        if (rep.summary.uncounted_rows_events > 0) CHECK(!f.list.empty());
      }
    }
  }

  TEST_CASE("stats: text: one section per kind") {
    const StatsReport rep = stats_of((kFixtures / "compressed" / "binlogs").string());
    std::string out;
    append_stats_text(rep, out);
    for (const char* title :
         {"Tables (2)\n", "\nEvent types\n", "\nLargest transactions (top 10 by bytes)\n",
          "\nTimeline (per minute)\n", "\nSummary\n"})
      CHECK(out.find(title) != std::string::npos);
    // Every duration of this fixture is 0 s: one line says so instead of a second table.
    CHECK(out.find("\nLongest transactions: every transaction took under a second") != std::string::npos);
    CHECK(out.find("\nLongest transactions (top") == std::string::npos);
    CHECK(out.find("Update_rows_compressed_v1") != std::string::npos);
    CHECK(out.find("packed    docs") != std::string::npos);
  }

  TEST_CASE("row walk: value_size_rule gives what column_value_size gives, for every type") {
    // Every type code and a spread of metadata, random bytes: a fixed size is column_value_size's
    // on any bytes; a prefix rule is prefix + the length it reads when that fits, and an error
    // of column_value_size when it does not.
    std::mt19937 rng(7);
    std::vector<std::uint8_t> buf(300);
    int fixed = 0, prefixed = 0;
    for (int code = 0; code < 256; ++code) {
      for (std::uint16_t meta : {0, 1, 2, 3, 4, 5, 6, 7, 8, 40, 255, 256, 300, 0x0102, 0x0a02, 0x4100,
                                 0x411e, 0x0801, 0x0107, 0xf702, 0xf801, 0xfe01, 0xfe10, 0xee30, 0xffff}) {
        const auto t = static_cast<ColumnType>(code);
        const ValueSizeRule sr = value_size_rule(t, meta);
        INFO("type " << code << " meta " << meta);
        CHECK((sr.fixed == 0 || sr.prefix == 0));
        if (sr.fixed == 0 && sr.prefix == 0) continue;
        sr.fixed != 0 ? ++fixed : ++prefixed;
        for (int k = 0; k < 20; ++k) {
          for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
          if (k % 2 == 0 && sr.prefix != 0) {  // half the time a length that fits
            for (std::size_t b = 0; b < sr.prefix; ++b) buf[b] = 0;
            buf[0] = static_cast<std::uint8_t>(rng() % 200);
          }
          auto sz = column_value_size(t, meta, ByteReader(Bytes(buf.data(), buf.size()), 0));
          if (sr.fixed != 0) {
            REQUIRE(sz.ok());
            CHECK(*sz == sr.fixed);
          } else {
            const std::uint64_t len = load_le(buf.data(), sr.prefix);
            if (len <= buf.size() - sr.prefix) {
              REQUIRE(sz.ok());
              CHECK(*sz == sr.prefix + len);
            } else {
              CHECK_FALSE(sz.ok());
            }
          }
        }
      }
    }
    CHECK(fixed > 100);
    CHECK(prefixed > 20);
    CHECK(value_size_rule(ColumnType::longlong, 0).fixed == 8);
    CHECK(value_size_rule(ColumnType::datetime2, 3).fixed == 7);
    CHECK(value_size_rule(ColumnType::newdecimal, 0x0a02).fixed == 5);
    CHECK(value_size_rule(ColumnType::varchar, 40).prefix == 1);
    CHECK(value_size_rule(ColumnType::varchar, 300).prefix == 2);
    CHECK(value_size_rule(ColumnType::blob, 3).prefix == 3);
    CHECK(value_size_rule(ColumnType::string, 0xfe10).prefix == 1);   // CHAR(16)
    CHECK(value_size_rule(ColumnType::string, 0xf702).fixed == 2);    // ENUM inside STRING
    CHECK(value_size_rule(ColumnType::datetime2, 7).fixed == 0);      // refused by column_value_size
    CHECK(value_size_rule(ColumnType::datetime2, 7).prefix == 0);
    CHECK(value_size_rule(ColumnType::blob, 5).prefix == 0);
  }

  TEST_CASE("row walk: count_row_changes with size rules = without, counts and errors") {
    // Two-row UPDATE image pairs over INT, VARCHAR(40), DATETIME2(3), BIGINT; then every prefix
    // of the bytes (cut anywhere) gives the same result and the same error offset both ways.
    TableMap tm;
    auto col = [](ColumnType t, std::uint16_t meta) {
      ColumnDef c;
      c.type = c.real_type = t;
      c.meta = meta;
      return c;
    };
    tm.columns = {col(ColumnType::long_, 0), col(ColumnType::varchar, 40), col(ColumnType::datetime2, 3),
                  col(ColumnType::longlong, 0)};
    std::vector<ValueSizeRule> fixed;
    for (const ColumnDef& c : tm.columns) fixed.push_back(value_size_rule(c.type, c.meta));
    REQUIRE(fixed.size() == 4);
    CHECK(fixed[0].fixed == 4);
    CHECK(fixed[1].prefix == 1);
    CHECK(fixed[2].fixed == 7);
    CHECK(fixed[3].fixed == 8);
    const std::uint8_t bitmap[] = {0x0f};
    RowsEventHeader h;
    h.width = 4;
    h.columns_before = Bytes(bitmap, 1);
    h.columns_after = Bytes(bitmap, 1);
    std::vector<std::uint8_t> rows;
    auto image = [&](std::uint8_t nulls, const std::string& text) {
      rows.push_back(nulls);
      for (int i = 0; i < 4; ++i) rows.push_back(static_cast<std::uint8_t>(i + 1));
      if ((nulls & 2) == 0) {
        rows.push_back(static_cast<std::uint8_t>(text.size()));
        rows.insert(rows.end(), text.begin(), text.end());
      }
      for (int i = 0; i < 7; ++i) rows.push_back(0x99);
      for (int i = 0; i < 8; ++i) rows.push_back(static_cast<std::uint8_t>(i));
    };
    image(0, "hello");
    image(0, "hello, world");
    image(2, "");
    image(0, "x");
    RowsEventKind update;
    update.kind = RowsKind::update;
    // The steps: INT, then the VARCHAR's 1-byte length; DATETIME2(3) and BIGINT summed.
    const std::vector<RowSkipStep> steps = row_skip_steps(fixed);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].fixed == 4);
    CHECK(steps[0].prefix == 1);
    CHECK(steps[1].fixed == 15);
    CHECK(steps[1].prefix == 0);
    for (std::size_t cut = 0; cut <= rows.size(); ++cut) {
      const Bytes b(rows.data(), cut);
      auto slow = count_row_changes(tm, h, update, b, 500);
      INFO("cut " << cut);
      for (int with_steps = 0; with_steps < 2; ++with_steps) {
        auto quick = with_steps != 0 ? count_row_changes(tm, h, update, b, 500, fixed, steps)
                                     : count_row_changes(tm, h, update, b, 500, fixed);
        INFO("steps " << with_steps);
        REQUIRE(slow.ok() == quick.ok());
        if (slow.ok()) {
          CHECK(*slow == *quick);
        } else {
          CHECK(slow.error().code == quick.error().code);
          CHECK(slow.error().offset == quick.error().offset);
          CHECK(std::string(slow.error().what) == quick.error().what);
        }
      }
    }
    auto whole = count_row_changes(tm, h, update, Bytes(rows.data(), rows.size()), 500, fixed, steps);
    REQUIRE(whole.ok());
    CHECK(*whole == 2);
    // A column no rule sizes: no steps (its values go through column_value_size).
    std::vector<ValueSizeRule> unsized = fixed;
    unsized[2] = ValueSizeRule{};
    CHECK(row_skip_steps(unsized).empty());
  }

}  // TEST_SUITE
