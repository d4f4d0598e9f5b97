// serve --upstream's core (relay.h) driven from memory: a fake upstream (events in transactions,
// written to a fake file at each transaction boundary, held while the area is paused) and fake
// replicas of given speeds that take from the tail or, when it sends them away, from the file.
// Every replica must get every event, once, in order; the mutants show what each rule prevents.
#include <binlogctl/relay.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

struct FakeEvent {
  std::string file;
  std::uint64_t pos = 0;
  std::vector<std::uint8_t> bytes;
};

struct Run {
  std::uint64_t peak_pending = 0, peak_held = 0, max_event = 0, max_txn = 0;
  std::uint64_t lost = 0, duplicated = 0, wrong_bytes = 0;
  bool complete = true;
  RelayStatus status;
  std::vector<std::uint64_t> tail_events;
};

struct ReplicaSpec {
  unsigned per_step = 1;                 // events taken per step
  unsigned every = 1;                    // ... every N steps
  std::uint64_t stall_from = 0, stall_to = 0;  // takes nothing in [from, to)
};

// Steps of 1 ms: the upstream appends one transaction per step unless held; each replica takes
// per its spec. Then the upstream stops and every replica drains (bounded).
Run simulate(const RelaySettings& rs, const std::vector<ReplicaSpec>& specs, unsigned txns,
             EngineFault engine_fault = EngineFault::none) {
  std::uint64_t now = 0;
  RelayTail tail(rs, [&now] { return now; });
  if (engine_fault != EngineFault::none) tail.inject_engine_fault(engine_fault);
  std::vector<FakeEvent> upstream;           // every event, in order
  std::map<std::pair<std::string, std::uint64_t>, std::size_t> at;  // (file, pos) -> index
  std::size_t written = 0;                   // upstream[0, written) are in the file
  struct Rep {
    std::uint32_t id = 0;
    std::string file;
    std::uint64_t pos = 4;
    std::size_t next = 0;                    // index of the next event it must get
    std::vector<std::size_t> got;
  };
  std::vector<Rep> reps;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Rep r;
    r.id = tail.open_replica();
    r.file = "mariadb-bin.000001";
    reps.push_back(std::move(r));
  }
  Run run;
  std::uint32_t rng = 12345;
  auto rand = [&rng] {
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) & 0xffff;
  };
  std::string file = "mariadb-bin.000001";
  std::uint64_t pos = 4;
  tail.on_file(file);
  unsigned made = 0;
  auto produce = [&] {
    const unsigned n = made % 50 == 49 ? 60 : 2 + rand() % 6;  // now and then a big transaction
    std::uint64_t txn = 0;
    for (unsigned i = 0; i < n; ++i) {
      FakeEvent e;
      e.file = file;
      e.pos = pos;
      e.bytes.resize(60 + rand() % 300);
      for (std::size_t b = 0; b < e.bytes.size(); ++b) e.bytes[b] = static_cast<std::uint8_t>(rand());
      tail.on_event(file, pos, Bytes(e.bytes.data(), e.bytes.size()));
      at[{file, pos}] = upstream.size();
      pos += e.bytes.size();
      txn += e.bytes.size();
      run.max_event = std::max<std::uint64_t>(run.max_event, e.bytes.size());
      upstream.push_back(std::move(e));
    }
    run.max_txn = std::max(run.max_txn, txn);
    written = upstream.size();
    tail.on_written(file, pos);
    ++made;
    if (made % 300 == 0) {  // a rotation
      file = "mariadb-bin.00000" + std::to_string(2 + made / 300);
      pos = 4;
      tail.on_file(file);
    }
  };
  auto take_one = [&](Rep& r) {
    if (auto t = tail.take(r.id, r.file, r.pos)) {
      auto it = at.find({t->file, t->pos});
      REQUIRE(it != at.end());
      r.got.push_back(it->second);
      if (upstream[it->second].bytes != t->bytes) ++run.wrong_bytes;
      r.file = t->file;
      r.pos = t->pos + t->bytes.size();
      return true;
    }
    // the files: the event at its position when the file has it, else the next file's first
    auto it = at.find({r.file, r.pos});
    if (it == at.end()) {
      // end of its file: the next one, if the file ended (the next event is in another file)
      for (std::size_t i = 0; i < written; ++i)
        if (upstream[i].file > r.file && upstream[i].pos == 4) {
          r.file = upstream[i].file;
          r.pos = 4;
          it = at.find({r.file, r.pos});
          break;
        }
      if (it == at.end()) return false;
    }
    if (it->second >= written) return false;
    r.got.push_back(it->second);
    r.pos += upstream[it->second].bytes.size();
    return true;
  };
  const unsigned steps_max = txns * 20;
  for (unsigned step = 0; step < steps_max; ++step) {
    now += 1000;
    if (made < txns && !tail.upstream_held()) produce();
    for (std::size_t i = 0; i < reps.size(); ++i) {
      const ReplicaSpec& sp = specs[i];
      if (step >= sp.stall_from && step < sp.stall_to) continue;
      if (step % sp.every != 0) continue;
      for (unsigned k = 0; k < sp.per_step; ++k)
        if (!take_one(reps[i])) break;
    }
    tail.tick();
    const RelayStatus st = tail.status();
    run.peak_pending = std::max(run.peak_pending, st.pending);
    run.peak_held = std::max(run.peak_held, st.held_bytes);
    if (std::getenv("RELAY_DEBUG") && step % 50 == 0) {
      std::fprintf(stderr, "step %u pending %llu held %llu paused %d:", step, (unsigned long long)st.pending, (unsigned long long)st.held_bytes, st.paused);
      for (const auto& x : st.replicas) std::fprintf(stderr, " [q%llu fed%d p%d t%llu pos%llu]", (unsigned long long)x.queue_bytes, x.fed, x.paused, (unsigned long long)x.tail_events, (unsigned long long)x.position);
      std::fprintf(stderr, "\n");
    }
    if (made >= txns) {
      bool all = true;
      for (const Rep& r : reps) all &= r.got.size() >= upstream.size();
      if (all) break;
    }
  }
  run.status = tail.status();
  run.peak_pending = std::max(run.peak_pending, run.status.counters.peak_pending);
  for (Rep& r : reps) {
    // exactly once, in order: got == 0, 1, 2, ...
    std::size_t expect = 0;
    for (std::size_t g : r.got) {
      if (g > expect) run.lost += g - expect;
      if (g < expect) ++run.duplicated;
      expect = std::max(expect, g + 1);
    }
    if (expect < upstream.size()) run.complete = false;
    run.tail_events.push_back(0);
  }
  for (std::size_t i = 0; i < run.status.replicas.size(); ++i) run.tail_events[i] = run.status.replicas[i].tail_events;
  for (Rep& r : reps) tail.close_replica(r.id);
  CHECK(tail.status().pending == 0);  // closing every replica gives every byte back
  return run;
}

RelaySettings small_quota() {
  RelaySettings s;
  s.policy = Policy::doc;
  // Paths pause at 90%: the relay stops feeding a paused path at once (it has no control delay),
  // so at the seed's 20% two fed replicas could never take the area to its pause or its hard
  // limit (each queue stops one event past 20%).
  s.thresholds.quota = 16 * 1024;
  s.thresholds.path_pause = 0.9;
  s.thresholds.path_resume = 0.45;
  s.thresholds.feedback_interval_us = 20'000;
  s.stall_release_us = 100'000;
  s.chunk_bytes = 4096;
  return s;
}

// fast, slow, and one that stops reading for 0.8 s then resumes
const std::vector<ReplicaSpec> kMix = {{100, 1, 0, 0}, {3, 1, 0, 0}, {100, 1, 300, 1100}};

}  // namespace

TEST_CASE("relay: every replica gets every event once, in order, under pauses, breaks and resets") {
  const RelaySettings s = small_quota();
  const Run r = simulate(s, kMix, 1500);
  CHECK(r.complete);
  CHECK(r.lost == 0);
  CHECK(r.duplicated == 0);
  CHECK(r.wrong_bytes == 0);
  const AreaCounters& a = r.status.counters;
  MESSAGE("pauses " << a.pauses << " resumes " << a.resumes << " breaks " << a.circuit_breaks << " releases "
                    << a.releases << " resets " << a.resets << " peak pending " << r.peak_pending << " peak held "
                    << r.peak_held << " max txn " << r.max_txn);
  CHECK(a.pauses > 0);   // the area paused the upstream
  CHECK(a.resumes > 0);
  CHECK(a.circuit_breaks > 0);  // the big transactions trip the breaker
  CHECK(a.resets > 0);
  std::uint32_t path_pauses = 0, path_resumes = 0;
  for (const RelayReplicaStatus& x : r.status.replicas) {
    path_pauses += x.counters.pauses;
    path_resumes += x.counters.resumes;
  }
  CHECK(path_pauses > 0);
  CHECK(path_resumes > 0);
  // the fast replica took most of its events from the tail
  CHECK(r.tail_events[0] > 0);
  // Memory: the accounted bytes never pass the hard limit by more than one event; the bytes held
  // are the longest queue plus the transaction not yet written, in chunks.
  const std::uint64_t hard = s.thresholds.quota * 3 / 2;
  CHECK(r.peak_pending <= hard + r.max_event);
  CHECK(r.peak_held <= hard + r.max_event + r.max_txn + 2 * s.chunk_bytes);
}

TEST_CASE("relay: without the stream reset, a replica whose queue the breaker discarded loses events") {
  RelaySettings s = small_quota();
  s.fault = RelayFault::no_stream_reset;
  const Run r = simulate(s, kMix, 1500);
  CHECK(r.status.counters.circuit_breaks + r.status.counters.releases > 0);
  CHECK(r.lost > 0);
}

TEST_CASE("relay: with no flow control (policy none) the tail grows with the stalled replica's backlog") {
  const RelaySettings s = small_quota();
  const Run with = simulate(s, kMix, 1500);
  RelaySettings none = s;
  none.policy = Policy::none;
  const Run unbounded = simulate(none, kMix, 1500);
  MESSAGE("peak pending with doc " << with.peak_pending << ", with no policy " << unbounded.peak_pending);
  CHECK(with.peak_pending <= s.thresholds.quota * 3 / 2 + with.max_event);
  CHECK(unbounded.peak_pending > 4 * s.thresholds.quota);
  CHECK(unbounded.lost == 0);
  CHECK(unbounded.complete);
}

TEST_CASE("relay: without path pauses a stalled replica's queue holds the tail until the breaker") {
  const RelaySettings s = small_quota();
  const Run with = simulate(s, kMix, 1500);
  const Run without = simulate(s, kMix, 1500, EngineFault::no_path_pause);
  std::uint64_t peak_with = 0, peak_without = 0;
  for (const auto& x : with.status.replicas) peak_with = std::max(peak_with, x.peak_queue_bytes);
  for (const auto& x : without.status.replicas) peak_without = std::max(peak_without, x.peak_queue_bytes);
  MESSAGE("longest queue with path pauses " << peak_with << ", without " << peak_without);
  CHECK(peak_without > peak_with);
  CHECK(without.lost == 0);
}

TEST_CASE("relay: a replica's lag counts the bytes received after its position, across files") {
  std::uint64_t now = 0;
  RelayTail tail(RelaySettings{}, [&now] { return now; });
  const std::vector<std::uint8_t> ev(100, 0x5a);
  tail.on_file("b.000001");
  tail.on_event("b.000001", 4, Bytes{ev.data(), 100});
  tail.on_event("b.000001", 104, Bytes{ev.data(), 50});  // b.000001 ends at 154
  tail.on_file("b.000002");
  tail.on_event("b.000002", 4, Bytes{ev.data(), 100});   // b.000002 ends at 104
  tail.on_file("b.000003");
  tail.on_event("b.000003", 4, Bytes{ev.data(), 30});    // the upstream is at b.000003:34
  const std::uint32_t a = tail.open_replica(), b = tail.open_replica(), c = tail.open_replica();
  (void)tail.window(a, "b.000001", 104, 19);
  (void)tail.window(b, "b.000002", 4, 19);
  (void)tail.window(c, "b.000003", 4, 19);
  const RelayStatus st = tail.status();
  REQUIRE(st.replicas.size() == 3);
  CHECK(st.replicas[0].lag_bytes == 50 + 100 + 30);  // the rest of b.000001, b.000002, b.000003
  CHECK(st.replicas[1].lag_bytes == 100 + 30);
  CHECK(st.replicas[2].lag_bytes == 30);
}
