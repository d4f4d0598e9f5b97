// serve's event side alone: N replicas' cursors over the same archive, drained round robin one
// event at a time (as N connections interleave), to measure the throughput and the peak RSS of
// the cursors themselves (no sockets).
//
//   build/bench/serve_cursors N INPUT...
//
// Prints events and bytes per cursor, seconds, MiB/s over all cursors and ru_maxrss.
#include <binlogctl/binlog_archive.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: serve_cursors N INPUT...\n");
    return 2;
  }
  const int n = std::atoi(argv[1]);
  std::vector<std::string> inputs(argv + 2, argv + argc);
  auto archive = binlogctl::open_archive(inputs);
  std::string err;
  if (!archive->refresh(err)) {
    std::fprintf(stderr, "serve_cursors: %s\n", err.c_str());
    return 2;
  }
  binlogctl::DumpRequest req;
  req.non_blocking = true;
  req.replica_checksum = true;
  req.mariadb_capability = 4;
  std::vector<std::unique_ptr<binlogctl::DumpCursor>> cursors;
  for (int i = 0; i < n; ++i) {
    auto c = binlogctl::open_cursor(*archive, req, err);
    if (!c) {
      std::fprintf(stderr, "serve_cursors: %s\n", err.c_str());
      return 2;
    }
    cursors.push_back(std::move(c));
  }
  std::vector<std::uint64_t> events(n), bytes(n);
  std::vector<bool> done(n);
  int left = n;
  const auto t0 = std::chrono::steady_clock::now();
  while (left > 0) {
    for (int i = 0; i < n; ++i) {
      if (done[i]) continue;
      binlogctl::CursorStep s = cursors[i]->next();
      if (s.kind == binlogctl::CursorStep::Kind::event) {
        ++events[i];
        bytes[i] += s.bytes.size();
        continue;
      }
      if (s.kind == binlogctl::CursorStep::Kind::error) std::fprintf(stderr, "cursor %d: %s\n", i, s.message.c_str());
      done[i] = true;
      --left;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) total += bytes[i];
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("cursors %d  events/cursor %llu  bytes/cursor %llu  seconds %.3f  MiB/s (all) %.1f  maxrss_kib %ld\n", n,
              static_cast<unsigned long long>(events[0]), static_cast<unsigned long long>(bytes[0]), secs,
              static_cast<double>(total) / (1 << 20) / secs, ru.ru_maxrss);
  return 0;
}
