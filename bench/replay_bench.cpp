// Simulated events per second through the flow-control engine with a fast sink, on a real
// binlog: loads the chain once (not timed), then times run_replay per policy.
//   cmake -B build -DBINLOGCTL_BUILD_BENCH=ON && cmake --build build --target replay_bench
//   build/bench/replay_bench bench/work/mariadb-1024mb/mariadb-bin.000001
#include <binlogctl/dump.h>
#include <binlogctl/replay.h>
#include <binlogctl/replay_binlog.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  using namespace binlogctl;
  if (argc < 2) {
    std::fprintf(stderr, "usage: replay_bench FILE...\n");
    return 2;
  }
  StderrDiagnostics diag(stderr);
  std::vector<std::string> inputs(argv + 1, argv + argc);
  auto t0 = std::chrono::steady_clock::now();
  BinlogEventSource src(inputs, diag);
  ReplayInput input = load_replay_input(src);
  auto t1 = std::chrono::steady_clock::now();
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  fmt::print("loaded {} events ({} paths) in {:.2f} s\n", input.events.size(), input.path_names.size(), load_s);
  for (Policy p : {Policy::doc, Policy::ticdc, Policy::none, Policy::blocking}) {
    ReplayOptions o;
    o.policy = p;
    o.thresholds.quota = 64u << 20;  // default quota, instant sink (the default sink model)
    auto a = std::chrono::steady_clock::now();
    ReplayResult r = run_replay(o, input);
    auto b = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(b - a).count();
    fmt::print("{:<9} {:>10} events in {:6.2f} s = {:6.2f} M events/s, invariants {}\n", to_string(p),
               r.delivered, s, static_cast<double>(input.events.size()) / s / 1e6, r.ok ? "ok" : "BROKEN");
  }
  return 0;
}
