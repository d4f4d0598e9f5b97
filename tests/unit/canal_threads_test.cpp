// convert --format canal-proto and canal-json render rows events on a pool of threads
// (--threads): whatever the number of threads, the batch size and the size above which a rows
// event is rendered by the converting thread, the output (with packets, compressed, and without),
// the diagnostics and the exit status must be those of a run on one thread, byte for byte, on
// real binlogs and on ones with damaged row images (where the entry numbering depends on which
// rows events decoded).
#if defined(BINLOGCTL_HAVE_CANAL)
#include <binlogctl/canal.h>
#include <binlogctl/convert.h>

#include <doctest/doctest.h>

#include "thread_runs.h"
#include "tmpfile_io.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace binlogctl;

namespace {

using binlogctl::testing::check_same;
using binlogctl::testing::damage_rows;
using binlogctl::testing::Run;

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";

struct Mode {
  const char* name;
  CanalFormat format;
  bool packets;
  CanalCompression compression;
  std::uint32_t batch_size;
};
constexpr Mode kModes[] = {
    {"canal-proto", CanalFormat::proto, false, CanalCompression::none, 50},
    {"canal-proto --canal-packets --batch-size 3", CanalFormat::proto, true, CanalCompression::none, 3},
    {"canal-proto --canal-packets --compression zlib", CanalFormat::proto, true, CanalCompression::zlib, 50},
    {"canal-json --batch-size 2", CanalFormat::json, false, CanalCompression::none, 2},
};

Run convert_canal(const std::vector<std::string>& inputs, const Mode& m, unsigned threads, std::size_t batch_bytes,
                  std::size_t inline_bytes, bool verify_checksums = true) {
  ConvertOptions o;
  o.inputs = inputs;
  o.progress = ProgressMode::never;
  o.verify_checksums = verify_checksums;
  o.render_threads = threads;
  o.render_inline_bytes = inline_bytes;
  CanalOptions c;
  c.render_batch_bytes = batch_bytes;
  c.format = m.format;
  c.packets = m.packets;
  c.compression = m.compression;
  c.batch_size = m.batch_size;
  Run r = binlogctl::testing::capture([&](std::FILE* out, std::FILE* err) { return run_canal_convert(o, c, out, err); });
  if (m.format == CanalFormat::json) {  // "ts" is the wall clock when the message was made
    const std::string& s = r.out;
    const std::string key = "\"ts\":";
    std::string t;
    std::size_t done = 0;
    for (std::size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + 1)) {
      const std::size_t from = p + key.size();
      std::size_t to = from;
      while (to < s.size() && s[to] >= '0' && s[to] <= '9') ++to;
      if (to == from || s.compare(to, 7, ",\"type\"") != 0) continue;
      t.append(s, done, from - done);
      t.push_back('0');
      done = to;
    }
    t.append(s, done, std::string::npos);
    r.out = std::move(t);
  }
  return r;
}

}  // namespace

TEST_SUITE("canal threads") {
  TEST_CASE("canal threads: every fixture set and format, the same output whatever the threads and batches") {
    for (const char* set : {"basic", "compressed", "schema"}) {
      const std::vector<std::string> in{(kFixtures / set / "binlogs").string()};
      for (const Mode& m : kModes) {
        CAPTURE(set);
        CAPTURE(m.name);
        const Run one = convert_canal(in, m, 0, 128 * 1024, 256 * 1024);
        REQUIRE(one.rc <= 1);
        REQUIRE(one.out.size() > 1000);
        // One rows event per batch, several threads, every rows event on the converting thread,
        // the defaults.
        check_same(one, convert_canal(in, m, 1, 1, 256 * 1024));
        check_same(one, convert_canal(in, m, 2, 1, 256 * 1024));
        check_same(one, convert_canal(in, m, 3, 700, 256 * 1024));
        check_same(one, convert_canal(in, m, 2, 1, 0));
        check_same(one, convert_canal(in, m, 2, 128 * 1024, 256 * 1024));
      }
    }
  }

  TEST_CASE("canal threads: damaged row images give the same entries, batch numbers, diagnostics and exit status") {
    const fs::path dir = fs::temp_directory_path() / "binlogctl-canal-threads";
    fs::create_directories(dir);
    const fs::path src = kFixtures / "basic" / "binlogs" / "mariadb-bin.000003";
    const fs::path bad = dir / "mariadb-bin.000003";
    const int damaged = damage_rows(src, bad, 7);
    REQUIRE(damaged > 3);
    // Cut inside the last event too: the reader's finding (truncated event) and the converting
    // thread's (a cut-off transaction) come after the pool's, as in a one-thread run.
    fs::resize_file(bad, fs::file_size(bad) - 40);
    const std::vector<std::string> in{bad.string()};
    for (const Mode& m : kModes) {
      CAPTURE(m.name);
      const Run one = convert_canal(in, m, 0, 128 * 1024, 256 * 1024, false);
      CHECK(one.rc == 1);
      std::size_t reports = 0;
      for (std::size_t p = one.err.find("does not decode"); p != std::string::npos;
           p = one.err.find("does not decode", p + 1))
        ++reports;
      CHECK(reports >= 2);
      CHECK(one.err.find("truncated_event") != std::string::npos);
      CHECK(one.err.rfind("does not decode") < one.err.find("truncated_event"));
      for (unsigned threads : {1u, 2u, 4u}) {
        CAPTURE(threads);
        check_same(one, convert_canal(in, m, threads, 1, 256 * 1024, false));
        check_same(one, convert_canal(in, m, threads, 4096, 256 * 1024, false));
        check_same(one, convert_canal(in, m, threads, 1, 0, false));
      }
    }
    fs::remove_all(dir);
  }
}
#endif
