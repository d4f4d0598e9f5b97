// Simulated events per second through the flow-control engine with a fast sink, on a real
// binlog: loads the chain once (timed apart), then times run_replay per policy.
//   cmake -B build -DBINLOGCTL_BUILD_BENCH=ON && cmake --build build --target replay_bench
//   build/bench/replay_bench [--path-by table|schema|hash:N] bench/work/mariadb-1024mb/mariadb-bin.000001
// (--path-by hash:N also decodes every row to hash its key: the load is slower, and the engine
// sees one sub-event per bucket a rows event reaches.)
#include <binlogctl/diagnostic.h>
#include <binlogctl/progress.h>
#include <binlogctl/replay.h>
#include <binlogctl/replay_binlog.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  using namespace binlogctl;
  int first = 1;
  PathBy by = PathBy::table;
  std::uint32_t buckets = 0;
  if (argc > 2 && std::strcmp(argv[1], "--path-by") == 0) {
    if (!parse_path_by(argv[2], by, buckets)) {
      std::fprintf(stderr, "replay_bench: bad --path-by %s\n", argv[2]);
      return 2;
    }
    first = 3;
  }
  if (argc <= first) {
    std::fprintf(stderr, "usage: replay_bench [--path-by table|schema|hash:N] FILE...\n");
    return 2;
  }
  StderrDiagnostics diag(stderr);
  BinlogSourceOptions so;
  so.chain.inputs.assign(argv + first, argv + argc);
  so.chain.progress = ProgressMode::never;
  so.row_keys = by == PathBy::hash;
  so.check_context = false;  // the chain is given many times on purpose (no source breaks)
  auto t0 = std::chrono::steady_clock::now();
  BinlogEventSource src(so, diag);
  ReplayInput input = load_replay_input(src, by, buckets);
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
