// Helpers of the tests that compare a threaded run with a one-thread run (convert json, SQL):
// a captured run, its comparison, and a copy of a binlog with damaged row images.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>

#include <doctest/doctest.h>

#include "tmpfile_io.h"

#include <cstdio>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace binlogctl::testing {

// What a run of a subcommand gave: exit status, stdout, stderr.
struct Run {
  int rc = -1;
  std::string out, err;
};

// Runs `f(out, err)` (a subcommand's run_* function) with two temporary files as its output and
// error streams: its exit status and what it wrote to each.
template <class F>
Run capture(F&& f) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  Run r;
  r.rc = f(out, err);
  r.out = read_all(out);
  r.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  return r;
}

inline void check_same(const Run& a, const Run& b) {
  CHECK(a.rc == b.rc);
  CHECK(a.out.size() == b.out.size());
  CHECK(a.out == b.out);
  CHECK(a.err == b.err);
}

// Writes to `to` a copy of `file` whose row images (not their headers, so framing holds and every
// damage is the converter's to report) of every third rows event have 4 bytes set to 0xff;
// returns how many events were damaged.
inline int damage_rows(const std::filesystem::path& file, const std::filesystem::path& to, unsigned seed) {
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

}  // namespace binlogctl::testing
