// The discrete-event simulator of replay (replay.h's run_replay): the events it schedules, the
// messages of its data and control links, the upstream and sink state, and the Simulator, which
// owns the clock and the event heap, the upstream, the links, the collector and the sinks. Two
// parts own the rest, each with its own state:
//   invariant_checker.h  the independent checks (the mirror of what the engine holds, doc's own
//                        rules, the memory bound, the control protocol) and the violations
//   replay_recorder.h    the run hash, latencies, the timeline's actions and samples, the plot
// The Simulator's code, by concern:
//   replay_sim.cpp             setup, the event loop (run) and the result (finish)
//   replay_sim_upstream.cpp    upstream: per-path cursors, txn-boundary stops, credits, resets,
//                              and the control link to it
//   replay_sim_sinks.cpp       the data link, the collector and the sinks
//   replay_sim_periodic.cpp    ticks (policy rules, watchdog), reports and samples
#pragma once

#include <binlogctl/replay.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <queue>
#include <thread>

#include "base/std_regex.h"
#include "replay/invariant_checker.h"
#include "replay/replay_recorder.h"
#include "replay/sim_base.h"

namespace binlogctl::replay_detail {

inline constexpr std::uint32_t kHandshakeBit = 0x80000000u;
inline constexpr std::uint32_t kResolvedBit = 0x40000000u;  // a path's resolved signal (no data)
inline constexpr std::uint32_t kSignalBatch = 0x80000000u;  // a link batch of resolved signals only

enum class EvKind : std::uint8_t {
  upstream_step,
  data_arrival,
  control_arrival,
  sink_done,
  tick,
  report,
  sample
};

struct HeapItem {
  std::uint64_t t;
  std::uint64_t seq;
  std::uint32_t arg;
  EvKind kind;
  bool operator>(const HeapItem& o) const noexcept { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Msg {
  std::uint32_t idx;  // global event index, or kHandshakeBit | path
  std::uint32_t epoch;
  std::uint32_t seq;  // handshake: start sequence
};

enum class Ctl : std::uint8_t { pause_path, resume_path, pause_area, resume_area, reset, credit };

struct ControlMsg {
  Ctl kind = Ctl::credit;
  std::uint32_t path = kNoPath;
  std::uint32_t epoch = 0;
  std::uint32_t seq = 0;
  std::uint64_t area_credit = 0;
  std::vector<std::uint64_t> path_credit;  // credit: indexed like the area's path list
};

inline ControlMsg make_ctl(Ctl kind, std::uint32_t path = kNoPath) {
  ControlMsg m;
  m.kind = kind;
  m.path = path;
  return m;
}

struct UpPath {
  std::uint32_t cursor = 0;  // next path seq to send
  std::uint32_t epoch = 0;
  std::uint64_t credit = kInf;
  bool paused = false;
  bool in_txn = false;
  bool lagging = false;
  bool need_handshake = false;
};

struct UpArea {
  std::uint32_t first = 0, end = 0, head = 0;
  std::uint32_t next_break = 0, end_break = 0;  // its breaks in ReplayInput::source_breaks
  std::uint32_t break_at = 0xffffffffu;         // the event of next_break (none: max)
  std::vector<std::uint32_t> lagging;
  bool paused = false;
  std::int64_t credit = 0;
  // Sent, not yet popped nor dropped (blocking budget), in source sizes; signed so that an engine
  // defect that pops or discards more than was sent shows as a negative count, not a wrapped one.
  std::int64_t outstanding = 0;
  bool blocked = false;
  std::uint64_t blocked_since = 0, blocked_us = 0;
  std::uint64_t next_step = kInf;
  // data link
  std::vector<Msg> link;
  std::size_t link_head = 0;
  std::deque<std::uint32_t> link_batches;
  std::uint64_t link_last = 0, link_bytes = 0;
  // control link
  std::deque<ControlMsg> ctl;
  std::uint64_t ctl_last = 0;
  std::uint64_t in_sink = 0;
  std::uint64_t peak_resident = 0;
  std::uint64_t delivered = 0;
  std::uint64_t above_pause_us = 0;
  std::vector<std::uint32_t> txn_last;  // per txn ordinal: global index of its last event
  Rng data_rng, ctl_rng, drop_rng;
};

struct SinkPath {
  SinkModel m;
  Rng rng;
  std::uint64_t cap_free = 0;
  Batch batch;
  std::vector<std::uint32_t> orders;  // what the sink received in the batch in flight, unless
  bool fast = false;                  // it was in order: list[first_pos, first_pos + fast_count)
  std::uint32_t first_pos = 0, fast_count = 0;
  bool busy = false;
  bool held = false;
  // The sink's own record, checked against what the source sent (in_.path_events[p]), never
  // against the engine's counters: the index of the next source position it must receive.
  std::uint32_t next = 0;
  std::uint32_t acked = 0;  // [0, acked) acknowledged
  std::uint64_t delivered = 0, redelivered = 0, bytes = 0;
  Histogram<3> latency;
};

class Simulator {
 public:
  Simulator(const ReplayOptions& o, const ReplayInput& in, TimelineWriter* tl)
      : o_(o),
        in_(in),
        tl_(tl),
        fc_(o.policy, o.thresholds),
        rec_(o, in, tl),
        checker_(o, in, fc_, tl, rec_, stop_) {}
  ReplayResult run();

 private:
  // setup
  void setup();
  // scheduling
  void push(std::uint64_t t, EvKind k, std::uint32_t arg) {
    heap_.push(HeapItem{t, seq_++, arg, k});
  }
  void schedule_step(std::uint32_t a, std::uint64_t t) {
    UpArea& A = up_[a];
    if (t < A.next_step) {
      A.next_step = t;
      push(t, EvKind::upstream_step, a);
    }
  }
  // upstream
  enum class Gate : std::uint8_t { ok, path_blocked, area_blocked };
  Gate gate(const UpArea& A, const UpPath& P, std::uint32_t size) const;
  // doc: before each send, the upstream must not read a path (or an area) that has held at least
  // its pause threshold for longer than the control link takes with no pause reaching it
  // (check_policy_rules when anything is above a threshold). upstream_step, the only caller,
  // makes that check: the checker's rules_due() cannot change during a step (only the collector
  // moves it), so it reads it once and tests a register per send. (Inside send() the call made
  // the compiler reload the area's fields after it on every event.)
  [[gnu::flatten]] void send(UpArea& A, std::uint32_t g, std::uint64_t& budget);
  void send_handshake(UpArea& A, std::uint32_t p);
  void upstream_step(std::uint32_t a);
  bool lagging_can_progress(const UpArea& A) const;
  void block_reader(UpArea& A);
  void wake(std::uint32_t a);
  void send_control(std::uint32_t a, ControlMsg m);
  void on_control(std::uint32_t a);
  void source_break(std::uint32_t a);
  [[gnu::noinline, gnu::cold]] void check_policy_rules();
  bool upstream_has_work(const UpArea& A) const;
  // collector
  void on_data(std::uint32_t a);
  void try_dispatch(std::uint32_t p);
  void on_sink_done(std::uint32_t p);
  bool barrier_ok(std::uint32_t p) const;
  void complete(std::uint32_t p);
  void check_barriers(std::uint32_t a);
  void process_actions();
  void receive(std::uint32_t p, std::uint32_t g);
  bool quiescent() const;
  bool done() const noexcept {
    return acked_distinct_ == total_ && inflight_ == 0 && sink_busy_ == 0;
  }
  // periodic
  void on_tick();
  void on_report();
  void on_sample();
  void finish(ReplayResult& r);
  // the checker and the recorder, at the simulator's clock
  void violate(std::string check, std::string msg, std::uint32_t p = kNoPath,
               std::uint32_t g = kNoEvent) {
    checker_.violate(now_, std::move(check), std::move(msg), p, g);
  }
  std::string where(std::uint32_t p, std::uint32_t seq) const { return checker_.where(p, seq); }
  void trace(char what, std::uint8_t kind, std::uint32_t p, std::uint32_t a, std::uint32_t b) {
    checker_.trace(now_, what, kind, p, a, b);
  }
  std::uint32_t event_at(std::uint32_t p, std::uint32_t seq) const {
    const auto& list = in_.path_events[p];
    return seq < list.size() ? list[seq] : kNoEvent;
  }

  const ReplayOptions& o_;
  const ReplayInput& in_;
  TimelineWriter* tl_;
  FlowController fc_;
  bool stop_ = false;
  ReplayRecorder rec_;
  InvariantChecker checker_;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t now_ = 0;
  std::uint64_t steps_ = 0;
  std::vector<UpArea> up_;
  std::vector<UpPath> upp_;
  std::vector<SinkPath> sink_;
  std::vector<std::uint64_t> avail_;     // per event: when the source has it
  std::vector<std::uint8_t> discarded_;  // per event: the engine or the link dropped it once
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint8_t> touched_mark_;
  std::vector<std::uint32_t> held_;
  std::uint64_t total_ = 0, delivered_ = 0, redelivered_ = 0, acked_distinct_ = 0;
  std::uint64_t inflight_ = 0;   // data batches + control messages on the links
  std::uint64_t sink_busy_ = 0;  // batches in sinks (including held ones)
  std::uint64_t last_progress_ = 0;
  std::uint64_t source_end_ = 0, last_ack_ = 0;
  std::uint64_t scan_step_ = 0, scan_quantum_ = 0;
  std::uint64_t stale_ = 0;
  bool has_barriers_ = false;
};

}  // namespace binlogctl::replay_detail
