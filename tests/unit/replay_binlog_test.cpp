// replay on real binlogs: the chain read as replay events, and the property sweep
// (1,000 seeds per policy) on the project's own fixture.
#include <binlogctl/replay.h>
#include <binlogctl/replay_binlog.h>
#include <doctest/doctest.h>

#include <filesystem>

using namespace binlogctl;

namespace {
struct Count : DiagnosticSink {
  int errors = 0;
  void report(const Diagnostic& d) override { errors += d.severity == Severity::error; }
};
const std::string kBasic = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs";
}  // namespace

TEST_SUITE("replay_binlog") {
  TEST_CASE("a real chain becomes per-table paths with transaction ends") {
    Count diag;
    BinlogEventSource src({kBasic}, diag);
    ReplayEvent ev;
    std::size_t events = 0, ends = 0, rows = 0;
    std::uint32_t last_file = 0;
    while (src.next(ev)) {
      ++events;
      ends += ev.txn_end;
      if (!ev.path_key.empty()) {
        ++rows;
        CHECK(ev.path_key.find('.') != std::string_view::npos);
      }
      CHECK(ev.file_index >= last_file);
      last_file = ev.file_index;
    }
    CHECK(diag.errors == 0);
    CHECK_FALSE(src.unreadable());
    // basic: 116 rows events (Write/Update/Delete_rows_v1 in SHOW BINLOG EVENTS) and one commit
    // per transaction; the exact counts come from the fixture's listings.
    CHECK(rows == 116);
    CHECK(ends >= 75);
    CHECK(last_file == 6);  // the 8th file (index 7) holds only its header events and Stop
  }

  TEST_CASE("missing inputs are reported") {
    Count diag;
    BinlogEventSource src({"/nonexistent/binlog.000001"}, diag);
    ReplayEvent ev;
    CHECK_FALSE(src.next(ev));
    CHECK(src.unreadable());
  }

  TEST_CASE("row keys: every rows event carries its rows, whose sizes make the event's size") {
    // basic and compressed (MariaDB's compressed rows events: the rows share the compressed size).
    for (const char* set : {"basic", "compressed"}) {
      CAPTURE(set);
      Count diag;
      BinlogSourceOptions so;
      so.chain.inputs = {std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/" + set + "/binlogs"};
      so.chain.progress = ProgressMode::never;
      so.row_keys = true;
      BinlogEventSource src(so, diag);
      ReplayEvent ev;
      std::size_t rows_events = 0, rows = 0;
      std::uint64_t bytes = 0, row_bytes = 0;
      while (src.next(ev)) {
        if (ev.path_key.empty()) {
          CHECK(ev.rows.empty());
          continue;
        }
        ++rows_events;
        REQUIRE_FALSE(ev.rows.empty());
        std::uint64_t sum = 0;
        for (const ReplayRow& r : ev.rows) sum += r.size;
        CHECK(sum == ev.size);
        rows += ev.rows.size();
        bytes += ev.size;
        row_bytes += sum;
      }
      CHECK(diag.errors == 0);
      CHECK(rows_events > 10);
      CHECK(rows > rows_events);
      CHECK(row_bytes == bytes);
    }
    // Without row_keys nothing is decoded: no rows.
    Count diag;
    BinlogEventSource src({kBasic}, diag);
    ReplayEvent ev;
    while (src.next(ev)) CHECK(ev.rows.empty());
  }

  TEST_CASE("property sweep: 1,000 seeds per policy on a real fixture") {
    Count diag;
    BinlogEventSource src({kBasic}, diag);
    ReplayInput input = load_replay_input(src);
    REQUIRE(input.events.size() > 200);
#if defined(__SANITIZE_ADDRESS__)
    const std::uint32_t seeds = 250;
#else
    const std::uint32_t seeds = 1000;
#endif
    for (Policy p : {Policy::doc, Policy::ticdc, Policy::none, Policy::blocking}) {
      CAPTURE(to_string(p));
      ReplayOptions o;
      o.policy = p;
      o.thresholds.quota = 64u << 10;  // small enough that slow sinks make the engine act
      PropertyReport rep = check_replay_properties(input, o, 1, seeds);
      CHECK(rep.runs >= seeds);
      for (const auto& m : rep.messages) MESSAGE(m);
      CHECK(rep.ok());
      CHECK(rep.events_delivered >= static_cast<std::uint64_t>(seeds) * input.events.size());
    }
  }
}
