// Tests for RowStream (lib/src/txn/row_stream.h): what a recording sink sees on the project's
// real MariaDB fixtures, against the ground truth the server wrote (SHOW BINLOG EVENTS in
// testdata/mariadb-10.11/*/expected/show-binlog-events): the call sequence of the first
// transactions, every rows event passed on with its table, the table selection, the inflated
// rows of MariaDB's compressed events, a start inside a transaction (a rows event without its
// TABLE_MAP) and a file cut off inside a transaction.
#include <binlogctl/chain.h>
#include <doctest/doctest.h>

#include "rows/rows.h"
#include "txn/row_stream.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";

class Quiet : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override { list.push_back(d); }
  std::vector<Diagnostic> list;
};

// Records the calls, one line each.
class Recorder final : public RowSink {
 public:
  std::vector<std::string> log;
  std::vector<Diagnostic> findings;
  std::map<std::string, int> rows_per_table;  // "file\tdb.table" -> rows events
  std::size_t inflated = 0, compressed_events = 0;

  void begin_file(const InputFile& f) override { log.push_back("begin_file " + f.log_name); }
  void end_file(const TransactionFront::CutOff* cut, bool more) override {
    log.push_back(std::string("end_file") + (more ? " more" : "") + (cut ? " cut:" + std::to_string(cut->end_pos) : ""));
  }
  void transaction_begin(const Event& ev, const TransactionState& ts, bool selected) override {
    log.push_back("txn_begin " + ts.gtid_text + " at " + std::to_string(ev.pos) + (selected ? "" : " unselected"));
  }
  void transaction_end(const Event* ev, bool complete) override {
    log.push_back(std::string("txn_end ") + (complete ? "complete" : "incomplete") +
                  (ev ? " at " + std::to_string(ev->pos) : ""));
  }
  void statement(const Event& ev, const TransactionFront::Step& s) override {
    log.push_back("statement " + std::to_string(ev.pos) + " " + std::string(s.query.sql.substr(0, 15)));
  }
  void table_map(const Event& ev, const TableMapLoader::Loaded& l) override {
    log.push_back("table_map " + std::to_string(ev.pos) + " " + l.map->db + "." + l.map->table);
  }
  void rows(const RowsView& v) override {
    log.push_back("rows " + std::to_string(v.ev->pos) + " " + v.map->db + "." + v.map->table + " " +
                  rows_kind_name(v.kind.kind));
    ++rows_per_table[stream().log_name() + "\t" + v.map->db + "." + v.map->table];
    if (v.kind.compressed) {
      ++compressed_events;
      if (v.rows.size() > v.header->rows.size()) ++inflated;
    }
  }
  void undecodable(const Event& ev, std::string_view layer, const DecodeError& e) override {
    log.push_back("undecodable " + std::to_string(ev.pos) + " " + std::string(layer) + ": " + e.what);
  }
  void report(const Diagnostic& d) override { findings.push_back(d); }
};

Recorder run(const fs::path& dir, RowStream::Options o, ChainOptions co = {}) {
  Recorder rec;
  RowStream s(std::move(o), rec);
  if (co.inputs.empty()) co.inputs = {(dir / "binlogs").string()};
  co.pass_fde_before_start = true;
  co.threads = 1;
  co.progress = ProgressMode::never;
  Quiet q;
  REQUIRE(read_chain(co, s, q, stderr));
  s.finish();
  return rec;
}

// From SHOW BINLOG EVENTS: rows events per file and table (their Table_map names the table).
std::map<std::string, int> expected_rows(const fs::path& dir, const std::string& only_table = "") {
  std::map<std::string, int> out;
  for (const auto& e : fs::directory_iterator(dir / "expected" / "show-binlog-events")) {
    std::ifstream in(e.path());
    std::string line;
    std::map<std::string, std::string> table_of;  // id -> db.table
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, '\t');) f.push_back(c);
      REQUIRE(f.size() >= 5);  // (an empty Info: no sixth field)
      const std::string& type = f[2];
      const std::string info = f.size() > 5 ? f[5] : std::string();
      if (type == "Table_map") {
        const auto sp = info.find(' ', 10);
        table_of[info.substr(10, sp - 10)] = info.substr(sp + 2, info.find(')') - sp - 2);
      } else if (type.find("_rows") != std::string::npos && type != "Annotate_rows") {
        const auto sp = info.find(' ', 10);
        const std::string t = table_of[info.substr(10, sp == std::string::npos ? sp : sp - 10)];
        if (only_table.empty() || t == only_table) ++out[f[0] + "\t" + t];
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("RowStream: the call sequence of the first transactions of a real binlog") {
  const fs::path dir = kFixtures / "compressed";
  Recorder rec = run(dir, RowStream::Options{});
  CHECK(rec.findings.empty());
  const std::vector<std::string> head = {
      "begin_file mariadb-bin.000001",
      "txn_begin 3-1013-1 at 330",
      "statement 372 CREATE DATABASE",
      "txn_end complete at 372",
      "txn_begin 3-1013-2 at 520",
      "statement 562 CREATE TABLE do",
      "txn_end complete at 562",
      "txn_begin 3-1013-3 at 794",
      "statement 836 CREATE TABLE ti",
      "txn_end complete at 836",
      "txn_begin 3-1013-4 at 993",
      "table_map 1352 packed.docs",
      "rows 1460 packed.docs INSERT",
      "rows 3321 packed.docs INSERT",
      "rows 5050 packed.docs INSERT",
      "rows 6737 packed.docs INSERT",
      "rows 8529 packed.docs INSERT",
      "txn_end complete at 9281",
      "txn_begin 3-1013-5 at 9312",
      "table_map 9448 packed.tiny",
      "rows 9515 packed.tiny INSERT",
      "txn_end complete at 10568",
  };
  REQUIRE(rec.log.size() > head.size());
  for (std::size_t i = 0; i < head.size(); ++i) CHECK(rec.log[i] == head[i]);
  CHECK(rec.log.back() == "end_file");
  // Every rows event the server listed reaches the sink, with its table.
  CHECK(rec.rows_per_table == expected_rows(dir));
  // MariaDB's compressed rows come inflated.
  CHECK(rec.compressed_events > 0);
  CHECK(rec.inflated == rec.compressed_events);
}

TEST_CASE("RowStream: --filter and -d pass on the selected tables only") {
  const fs::path dir = kFixtures / "basic";
  auto filter = TableFilter::parse("shop\\.orders");
  REQUIRE(filter);
  RowStream::Options o;
  o.filter = &*filter;
  Recorder rec = run(dir, o);
  const auto want = expected_rows(dir, "shop.orders");
  REQUIRE(!want.empty());
  CHECK(rec.rows_per_table == want);

  RowStream::Options d;
  d.database = "legacy";
  Recorder byd = run(dir, d);
  auto all = expected_rows(dir);
  std::map<std::string, int> legacy;
  for (const auto& [k, n] : all)
    if (k.find("\tlegacy.") != std::string::npos) legacy[k] = n;
  REQUIRE(!legacy.empty());
  CHECK(byd.rows_per_table == legacy);
}

TEST_CASE("RowStream: a start inside a transaction, and a stop inside one") {
  const fs::path dir = kFixtures / "compressed";
  // Start at the second rows event of GTID 3-1013-4, after its TABLE_MAP; stop inside 3-1013-6.
  ChainOptions co;
  co.inputs = {(dir / "binlogs" / "mariadb-bin.000001").string()};
  co.start_position = 3321;
  co.stop_position = 12068;
  RowStream::Options o;
  o.mid_stream = true;
  o.stop_given = true;
  Recorder rec = run(dir, o, co);
  REQUIRE(rec.findings.size() == 4);  // 3321, 5050, 6737, 8529: no TABLE_MAP before them
  CHECK(rec.findings[0].pos == 3321);
  CHECK(rec.findings[0].severity == Severity::warning);
  CHECK(rec.findings[0].message == "WRITE_ROWS_COMPRESSED_EVENT_V1 for table id 18 without a TABLE_MAP before it");
  // The cut-off transaction: its last complete event ends at 12068.
  CHECK(rec.log.back() == "txn_end incomplete");
  CHECK(rec.log[rec.log.size() - 2] == "end_file cut:12068");
  CHECK(rec.log[rec.log.size() - 3] == "rows 10860 packed.docs UPDATE");
}

TEST_CASE("RowStream: the schema command's options (no rows, raw maps, schema changes noted)") {
  // The `schema` set logs no column names (binlog_row_metadata=NO_LOG): completed maps take them
  // from the DDL before them, raw ones keep @1, @2, ...
  const fs::path dir = kFixtures / "schema";
  struct Tracker final : RowSink {
    std::vector<std::string> changes, first_names;
    std::size_t rows_events = 0, maps = 0;
    void statement(const Event&, const TransactionFront::Step& s) override {
      if (s.kind != StatementKind::ddl) return;
      for (const SchemaHistory::Change& c : stream().schema().take_changes())
        changes.push_back(c.db + "." + c.name + (c.table != nullptr ? " defined" : " gone"));
    }
    void table_map(const Event&, const TableMapLoader::Loaded& l) override {
      ++maps;
      if (maps == 1) first_names.push_back(l.map->columns.at(0).name);
    }
    void rows(const RowsView&) override { ++rows_events; }
    void undecodable(const Event&, std::string_view, const DecodeError&) override { CHECK(false); }
  };
  const auto read = [&](RowStream::Options o, Tracker& t) {
    RowStream s(std::move(o), t);
    ChainOptions co;
    co.inputs = {(dir / "binlogs").string()};
    co.threads = 1;
    co.progress = ProgressMode::never;
    Quiet q;
    REQUIRE(read_chain(co, s, q, stderr));
    s.finish();
  };
  RowStream::Options o;
  o.loader_notes = false;
  Tracker full;
  read(o, full);
  CHECK(full.rows_events > 0);
  CHECK(full.changes.empty());  // not tracked: nothing noted
  REQUIRE(full.first_names.size() == 1);
  CHECK(full.first_names[0] == "id");  // sch.legacy_time's first column, named by its DDL

  o.row_events = false;
  o.complete_maps = false;
  o.track_schema_changes = true;
  Tracker schema;
  read(o, schema);
  CHECK(schema.rows_events == 0);
  CHECK(schema.maps == full.maps);
  REQUIRE(schema.first_names.size() == 1);
  CHECK(schema.first_names[0] == "@1");  // as the TABLE_MAP gives it
  REQUIRE(schema.changes.size() >= 2);
  CHECK(schema.changes[0] == "sch.legacy_time defined");
  CHECK(schema.changes[1] == "sch.nums defined");
}
