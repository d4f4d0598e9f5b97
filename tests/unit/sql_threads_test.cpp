// convert --format sql and --flashback render rows events on a pool of threads (--threads): the
// output, the diagnostics, each transaction's COMMIT or ROLLBACK and the flashback's reversal must
// be those of a run on one thread (--threads 0), byte for byte, whatever the number of threads, the
// batch size and the inline threshold, on real binlogs and on ones with damaged row images.
#include <binlogctl/convert.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>
#include <binlogctl/sql.h>

#include <doctest/doctest.h>

#include "thread_runs.h"
#include "tmpfile_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace binlogctl;

namespace {

using binlogctl::testing::check_same;
using binlogctl::testing::damage_rows;
using binlogctl::testing::Run;

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";

// The SQL modes compare-outputs.sh runs: forward (changed / all columns), flashback (refusing,
// skipping, and spilling after 4 KiB).
struct Mode {
  const char* name;
  bool flashback, skip_unsafe;
  SqlSet set;
  std::size_t spill;
  bool queries = true;                  // --sql-queries transaction (the default) or statement
  std::size_t sql_batch = 1024 * 1024;  // --sql-batch-bytes
};
constexpr Mode kModes[] = {
    {"sql", false, false, SqlSet::changed, 4u << 20},
    {"sql --sql-set all", false, false, SqlSet::all, 4u << 20},
    {"sql --sql-queries statement", false, false, SqlSet::changed, 4u << 20, false},
    // queries closed at 700 bytes: where they close must not depend on where rows were rendered
    {"sql --sql-batch-bytes 700", false, false, SqlSet::changed, 4u << 20, true, 700},
    {"flashback", true, false, SqlSet::changed, 4u << 20},
    {"flashback-skip-unsafe", true, true, SqlSet::changed, 4u << 20},
    {"flashback-skip-unsafe 4k", true, true, SqlSet::changed, 4096},
};

Run convert_sql(const std::vector<std::string>& inputs, const Mode& m, unsigned threads, std::size_t batch_bytes,
                std::size_t inline_bytes, bool verify_checksums = true) {
  ConvertOptions o;
  o.inputs = inputs;
  o.progress = ProgressMode::never;
  o.verify_checksums = verify_checksums;
  o.render_threads = threads;
  o.render_inline_bytes = inline_bytes;
  SqlOptions s;
  s.render_batch_bytes = batch_bytes;
  s.flashback = m.flashback;
  s.skip_unsafe = m.skip_unsafe;
  s.set = m.set;
  s.spill_bytes = m.spill;
  s.transaction_queries = m.queries;
  s.batch_bytes = m.sql_batch;
  return binlogctl::testing::capture([&](std::FILE* out, std::FILE* err) { return run_sql_convert(o, s, out, err); });
}


}  // namespace

TEST_SUITE("sql threads") {
  TEST_CASE("sql threads: every fixture set and mode, the same output whatever the threads and batches") {
    for (const char* set : {"basic", "compressed", "schema"}) {
      const std::vector<std::string> in{(kFixtures / set / "binlogs").string()};
      for (const Mode& m : kModes) {
        CAPTURE(set);
        CAPTURE(m.name);
        const Run one = convert_sql(in, m, 0, 64 * 1024, 256 * 1024);
        REQUIRE(one.rc <= 1);
        REQUIRE(one.out.size() + one.err.size() > 500);
        // One rows event per batch, several threads, everything inline, the defaults.
        check_same(one, convert_sql(in, m, 1, 1, 256 * 1024));
        check_same(one, convert_sql(in, m, 2, 1, 256 * 1024));
        check_same(one, convert_sql(in, m, 3, 700, 256 * 1024));
        check_same(one, convert_sql(in, m, 2, 1, 0));
        check_same(one, convert_sql(in, m, 2, 64 * 1024, 256 * 1024));
      }
    }
  }

  TEST_CASE("sql threads: damaged row images give the same ROLLBACKs, diagnostics and exit status") {
    const fs::path dir = fs::temp_directory_path() / "binlogctl-sql-threads";
    fs::create_directories(dir);
    const fs::path src = kFixtures / "basic" / "binlogs" / "mariadb-bin.000003";
    const fs::path bad = dir / "mariadb-bin.000003";
    const int damaged = damage_rows(src, bad, 7);
    REQUIRE(damaged > 3);
    const std::vector<std::string> in{bad.string()};
    for (const Mode& m : kModes) {
      CAPTURE(m.name);
      const Run one = convert_sql(in, m, 0, 64 * 1024, 256 * 1024, false);
      CHECK(one.rc == 1);
      // Several undecodable rows events, each reported; forward: their transactions rolled back.
      std::size_t reports = 0;
      for (std::size_t p = one.err.find("does not decode"); p != std::string::npos;
           p = one.err.find("does not decode", p + 1))
        ++reports;
      CHECK(reports >= 2);
      if (!m.flashback)
        CHECK(one.out.find(m.queries ? "\nROLLBACK;; # incomplete" : "\nROLLBACK; # incomplete") != std::string::npos);
      for (unsigned threads : {1u, 2u, 4u}) {
        CAPTURE(threads);
        check_same(one, convert_sql(in, m, threads, 1, 256 * 1024, false));
        check_same(one, convert_sql(in, m, threads, 4096, 256 * 1024, false));
        check_same(one, convert_sql(in, m, threads, 1, 0, false));
      }
    }
    // Cut inside the last event too: the reader's finding (truncated event) comes after the
    // rendering threads' findings, as in a one-thread run.
    fs::resize_file(bad, fs::file_size(bad) - 40);
    for (const Mode& m : kModes) {
      CAPTURE(m.name);
      const Run cut = convert_sql(in, m, 0, 64 * 1024, 256 * 1024, false);
      REQUIRE(cut.err.find("truncated_event") != std::string::npos);
      CHECK(cut.err.rfind("does not decode") < cut.err.find("truncated_event"));
      check_same(cut, convert_sql(in, m, 2, 64 * 1024, 256 * 1024, false));
      check_same(cut, convert_sql(in, m, 2, 4096, 256 * 1024, false));
    }
    fs::remove_all(dir);
  }
}
