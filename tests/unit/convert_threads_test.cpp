// convert --format json renders row changes on a pool of threads: whatever the number of threads,
// the batch size and the inline threshold, the output, the diagnostics and the exit status must be
// those of a run on one thread, byte for byte, on real binlogs and on damaged ones.
#include <binlogctl/convert.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>

#include <doctest/doctest.h>

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

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";

using binlogctl::testing::read_all;

struct Run {
  int rc = -1;
  std::string out, err;
};

Run convert(const std::vector<std::string>& inputs, unsigned threads, std::size_t batch_bytes,
            std::size_t inline_bytes, bool verify_checksums = true) {
  ConvertOptions o;
  o.inputs = inputs;
  o.progress = ProgressMode::never;
  o.verify_checksums = verify_checksums;
  o.render_threads = threads;
  o.render_batch_bytes = batch_bytes;
  o.render_inline_bytes = inline_bytes;
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  Run r;
  r.rc = run_convert(o, out, err);
  r.out = read_all(out);
  r.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  return r;
}

void check_same(const Run& a, const Run& b) {
  CHECK(a.rc == b.rc);
  CHECK(a.out.size() == b.out.size());
  CHECK(a.out == b.out);
  CHECK(a.err == b.err);
}

// Overwrites bytes inside the row images of rows events (not their headers, so framing holds and
// every damage is the converter's to report) of `file`; returns how many events were damaged.
int damage_rows(const fs::path& file, const fs::path& to, unsigned seed) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Target {
    std::uint64_t at, len;
  };
  std::vector<Target> targets;
  {
    auto src = open_source(file.string());
    struct Quiet : DiagnosticSink {
      void report(const Diagnostic&) override {}
    } quiet;
    EventStream s(*src, file.filename().string(), quiet);
    Event ev;
    while (s.next(ev)) {
      const std::uint8_t t = ev.type_code();
      if ((t >= 23 && t <= 25) || (t >= 30 && t <= 32)) {
        const std::uint64_t body = ev.body_offset();
        // past the post-header (8 or 10 bytes), the packed width and the bitmaps
        if (ev.body.size() > 24) targets.push_back({body + 16, ev.body.size() - 16});
      }
    }
  }
  std::mt19937 rng(seed);
  int damaged = 0;
  for (std::size_t i = 0; i < targets.size(); i += 3) {
    const Target& t = targets[i];
    for (int k = 0; k < 4; ++k) {
      const std::uint64_t p = t.at + rng() % t.len;
      bytes[p] = static_cast<char>(0xff);
    }
    ++damaged;
  }
  std::ofstream o(to, std::ios::binary);
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return damaged;
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
    fs::remove_all(dir);
  }
}
