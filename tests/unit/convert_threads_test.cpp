// convert --format json renders row changes on a pool of threads: whatever the number of threads,
// the batch size and the inline threshold, the output, the diagnostics and the exit status must be
// those of a run on one thread, byte for byte, on real binlogs and on damaged ones.
#include <binlogctl/convert.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>

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

Run convert(const std::vector<std::string>& inputs, unsigned threads, std::size_t batch_bytes,
            std::size_t inline_bytes, bool verify_checksums = true) {
  ConvertOptions o;
  o.inputs = inputs;
  o.progress = ProgressMode::never;
  o.verify_checksums = verify_checksums;
  o.render_threads = threads;
  o.render_batch_bytes = batch_bytes;
  o.render_inline_bytes = inline_bytes;
  return binlogctl::testing::capture([&](std::FILE* out, std::FILE* err) { return run_convert(o, out, err); });
}


}  // namespace

TEST_SUITE("convert threads") {
  TEST_CASE("every fixture set: the same records whatever the threads, batches and inline threshold") {
    for (const char* set : {"basic", "compressed", "nochecksum", "schema"}) {
      CAPTURE(set);
      const std::vector<std::string> in{(kFixtures / set / "binlogs").string()};
      const Run one = convert(in, 0, 48 * 1024, 256 * 1024);
      REQUIRE(one.rc <= 1);
      REQUIRE(one.out.size() > 1000);
      // Tiny batches (one rows event each), several threads, and every event inline.
      check_same(one, convert(in, 1, 1, 256 * 1024));
      check_same(one, convert(in, 2, 1, 256 * 1024));
      check_same(one, convert(in, 3, 700, 256 * 1024));
      check_same(one, convert(in, 2, 48 * 1024, 256 * 1024));
      check_same(one, convert(in, 2, 1, 0));
      check_same(one, convert(in, 0, 1, 0));
    }
  }

  TEST_CASE("damaged row images: diagnostics in the same order and the same exit status") {
    const fs::path dir = fs::temp_directory_path() / "binlogctl-convert-threads";
    fs::create_directories(dir);
    const fs::path src = kFixtures / "basic" / "binlogs" / "mariadb-bin.000003";
    const fs::path bad = dir / "mariadb-bin.000003";
    const int damaged = damage_rows(src, bad, 7);
    REQUIRE(damaged > 3);
    const std::vector<std::string> in{bad.string()};
    const Run one = convert(in, 0, 48 * 1024, 256 * 1024, false);
    CHECK(one.rc == 1);
    // Several undecodable rows events, each reported with its file and offset.
    std::size_t reports = 0;
    for (std::size_t p = one.err.find("undecodable_event"); p != std::string::npos;
         p = one.err.find("undecodable_event", p + 1))
      ++reports;
    CHECK(reports >= 2);
    for (unsigned threads : {1u, 2u, 4u}) {
      CAPTURE(threads);
      check_same(one, convert(in, threads, 1, 256 * 1024, false));
      check_same(one, convert(in, threads, 4096, 256 * 1024, false));
      check_same(one, convert(in, threads, 1, 0, false));
    }
    // Cut inside the last event too: the reader's finding (truncated event) comes after the
    // rendering threads' findings, as in a one-thread run.
    fs::resize_file(bad, fs::file_size(bad) - 40);
    const Run cut = convert(in, 0, 48 * 1024, 256 * 1024, false);
    REQUIRE(cut.err.find("truncated_event") != std::string::npos);
    CHECK(cut.err.rfind("undecodable_event") < cut.err.find("truncated_event"));
    for (unsigned threads : {1u, 2u}) {
      CAPTURE(threads);
      check_same(cut, convert(in, threads, 48 * 1024, 256 * 1024, false));
      check_same(cut, convert(in, threads, 4096, 256 * 1024, false));
    }
    fs::remove_all(dir);
  }
}
