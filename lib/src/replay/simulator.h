// The discrete-event simulator of replay (replay.h's run_replay), shared by its files: the
// events it schedules, the messages of its data and control links, the upstream and sink state,
// and the Simulator, whose parts are defined by concern:
//   replay_sim.cpp             setup, the event loop (run) and the result (finish)
//   replay_sim_upstream.cpp    upstream: per-path cursors, txn-boundary stops, credits, resets,
//                              and the control link to it
//   replay_sim_sinks.cpp       the data link, the collector and the sinks
//   replay_sim_periodic.cpp    ticks (policy rules), reports and samples
//   replay_sim_invariants.cpp  online invariants and their violations
#pragma once

#include <binlogctl/replay.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <queue>
#include <thread>
#include <unordered_map>

#include "base/hash.h"
#include "base/std_regex.h"

namespace binlogctl::replay_detail {

inline constexpr std::uint64_t kInf = ~std::uint64_t{0};
inline constexpr std::uint32_t kNoEvent = 0xffffffffu;
inline constexpr std::uint32_t kHandshakeBit = 0x80000000u;
inline constexpr std::uint32_t kResolvedBit = 0x40000000u;  // a path's resolved signal (no data)
inline constexpr std::uint32_t kSignalBatch = 0x80000000u;  // a link batch of resolved signals only

// splitmix64 stream; one per component so adding a sink does not perturb the others.
struct Rng {
  std::uint64_t s = 0;
  Rng() = default;
  Rng(std::uint64_t seed, std::string_view component, std::uint64_t id = 0)
      : s(mix64(seed ^ fnv1a(component) ^ mix64(id + 0x632be59bd9b4e019ull))) {}
  std::uint64_t next() noexcept { return splitmix64(s); }
  std::uint64_t below(std::uint64_t n) noexcept { return n == 0 ? 0 : next() % n; }
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

// Log-linear histogram of microseconds: exact below 2^sub_bits, then 2^sub_bits buckets per
// octave (relative error <= 2^-sub_bits).
// (sub_bits is a template parameter: every latency sample goes through bucket(), whose shifts are
// then constants.)
template <unsigned SubBits>
class Histogram {
 public:
  static constexpr unsigned sub_bits_ = SubBits;
  void add(std::uint64_t v) {
    if (counts_.empty()) counts_.assign(bucket(kInf) + 1, 0);
    ++counts_[bucket(v)];
    ++n_;
    max_ = std::max(max_, v);
  }
  std::uint64_t count() const noexcept { return n_; }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t percentile(double q) const {
    if (n_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n_)));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(value(b), max_);
    }
    return max_;
  }

 private:
  std::size_t bucket(std::uint64_t v) const noexcept {
    const std::uint64_t lin = std::uint64_t{1} << (sub_bits_ + 1);
    if (v < lin) return static_cast<std::size_t>(v);
    const unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(v));
    const std::uint64_t sub = (v >> (msb - sub_bits_)) & ((std::uint64_t{1} << sub_bits_) - 1);
    return static_cast<std::size_t>(lin + (msb - sub_bits_ - 1) * (std::uint64_t{1} << sub_bits_) +
                                    sub);
  }
  std::uint64_t value(std::size_t b) const noexcept {  // upper bound of the bucket
    const std::uint64_t lin = std::uint64_t{1} << (sub_bits_ + 1);
    if (b < lin) return b;
    const std::uint64_t k = b - lin;
    const unsigned msb = static_cast<unsigned>(k >> sub_bits_) + sub_bits_ + 1;
    const std::uint64_t sub = k & ((std::uint64_t{1} << sub_bits_) - 1);
    const unsigned shift = msb - sub_bits_;
    return ((std::uint64_t{1} << sub_bits_ | sub) << shift) + ((std::uint64_t{1} << shift) - 1);
  }
  std::vector<std::uint32_t> counts_;
  std::uint64_t n_ = 0, max_ = 0;
};

inline double ms(std::uint64_t us) noexcept { return static_cast<double>(us) / 1000.0; }

template <unsigned SubBits>
LatencySummary summarize(const Histogram<SubBits>& h) {
  LatencySummary s;
  s.p50 = static_cast<double>(h.percentile(0.50)) / 1000.0;
  s.p95 = static_cast<double>(h.percentile(0.95)) / 1000.0;
  s.p99 = static_cast<double>(h.percentile(0.99)) / 1000.0;
  s.max = static_cast<double>(h.max()) / 1000.0;
  return s;
}

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

// The simulator's own copy of what the engine holds: an event enters when on_event says it was
// appended and leaves when the sink receives it or a discard is reported. Its bytes are the
// source's sizes, so the memory bound does not rest on the engine's accounting.
struct MirrorEntry {
  std::uint32_t g;  // global event index
};
struct MirrorQueue {
  std::vector<MirrorEntry> q;
  std::size_t head = 0;
  std::size_t size() const noexcept { return q.size() - head; }
  // Drops the entries before head once they are at least half the vector (and 4096), so the
  // vector neither grows without bound nor is shifted at every release.
  void compact() {
    if (head == q.size()) {
      q.clear();
      head = 0;
    } else if (head >= 4096 && head * 2 >= q.size()) {
      q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
  }
};

// Why the upstream let an event go (for the cause of an overshoot).
enum SentWhy : std::uint8_t {
  kSentFree,        // nothing throttled it when it left
  kSentInTxn,       // throttled, but a scan stops only at a transaction boundary
  kSentBeforeStop,  // the collector had throttled it, the upstream did not know yet
};

struct TraceRec {
  std::uint64_t t;
  char what;  // 'a' action, 'd' delivery, 'h' hand-off, 'c' control applied upstream
  std::uint8_t kind;
  std::uint32_t path;
  std::uint32_t a, b;
};

class Simulator {
 public:
  Simulator(const ReplayOptions& o, const ReplayInput& in, TimelineWriter* tl)
      : o_(o), in_(in), tl_(tl), fc_(o.policy, o.thresholds) {}
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
  // makes that check: `above_` cannot change during a step (only the collector moves it), so it
  // reads it once and tests a register per send. (Inside send() the call made the compiler
  // reload the area's fields after it on every event.)
  [[gnu::flatten]] void send(UpArea& A, std::uint32_t g, std::uint64_t& budget);
  void send_handshake(UpArea& A, std::uint32_t p);
  void upstream_step(std::uint32_t a);
  bool lagging_can_progress(const UpArea& A) const;
  void block_reader(UpArea& A);
  void wake(std::uint32_t a);
  void send_control(std::uint32_t a, ControlMsg m);
  void on_control(std::uint32_t a);
  // collector
  void on_data(std::uint32_t a);
  void try_dispatch(std::uint32_t p);
  void on_sink_done(std::uint32_t p);
  bool barrier_ok(std::uint32_t p) const;
  void complete(std::uint32_t p);
  void check_barriers(std::uint32_t a);
  void process_actions();
  void receive(std::uint32_t p, std::uint32_t g);
  std::uint64_t mirror_discard(const FlowAction& x);  // the source bytes it held
  void mirror_release(std::uint32_t p, std::uint64_t bytes) {
    const std::uint32_t a = in_.path_area[p];
    mq_bytes_[a] -= bytes;
    if (!doc_) return;  // (the per-path copy and the thresholds serve doc's own rules)
    mqp_bytes_[p] -= bytes;
    if (above_ == 0) return;  // nothing at or above a threshold
    if (above_since_[p] != kInf && mqp_bytes_[p] < path_pause_b_) {
      above_since_[p] = kInf;
      --above_;
    }
    if (area_above_since_[a] != kInf && mq_bytes_[a] < area_pause_b_) {
      area_above_since_[a] = kInf;
      --above_;
    }
  }
  [[gnu::noinline, gnu::cold]] void check_policy_rules();
  bool quiescent() const;
  // periodic
  void on_tick();
  void on_report();
  void on_sample();
  // invariants
  // A violation concerning path p (kNoPath: none) and event g (kNoEvent: none).
  void violate(std::string check, std::string msg, std::uint32_t p = kNoPath,
               std::uint32_t g = kNoEvent);
  std::string where(std::uint32_t p, std::uint32_t seq) const;
  std::uint32_t event_at(std::uint32_t p, std::uint32_t seq) const {
    const auto& list = in_.path_events[p];
    return seq < list.size() ? list[seq] : kNoEvent;
  }
  void source_break(std::uint32_t a);
  // identity_of(in_, g).rdp_id without building the identity's strings.
  std::uint64_t rdp_id_of(std::uint32_t g) const {
    const auto& txns = in_.areas[in_.path_area[in_.events[g].path]].txns;
    const std::uint32_t t = in_.events[g].txn;
    return t < txns.size() ? txns[t].rdp_id : 0;
  }
  bool done() const noexcept {
    return acked_distinct_ == total_ && inflight_ == 0 && sink_busy_ == 0;
  }
  bool upstream_has_work(const UpArea& A) const;
  void trace(char what, std::uint8_t kind, std::uint32_t p, std::uint32_t a, std::uint32_t b) {
    trace_[trace_pos_++ % trace_.size()] = TraceRec{now_, what, kind, p, a, b};
  }
  void hash(std::uint64_t x) noexcept { hash_ = mix64(hash_ ^ (x + kSplitmix64Step)); }
  void finish(ReplayResult& r);

  const ReplayOptions& o_;
  const ReplayInput& in_;
  TimelineWriter* tl_;
  FlowController fc_;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t now_ = 0;
  std::uint64_t steps_ = 0;
  std::vector<UpArea> up_;
  std::vector<UpPath> upp_;
  std::vector<SinkPath> sink_;
  std::vector<std::uint64_t> avail_;
  std::vector<std::uint8_t> discarded_;
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint8_t> touched_mark_;
  std::vector<std::uint32_t> held_;
  std::vector<std::uint8_t> ctl_paused_;  // pause/resume alternation, per path (+ areas at end)
  std::uint64_t total_ = 0, delivered_ = 0, redelivered_ = 0;
  std::uint64_t inflight_ = 0;   // data batches + control messages on the links
  std::uint64_t sink_busy_ = 0;  // batches in sinks (including held ones)
  std::uint64_t last_progress_ = 0;
  std::uint64_t source_end_ = 0, last_ack_ = 0;
  std::uint64_t mem_limit_ = kInf;
  std::uint64_t scan_step_ = 0, scan_quantum_ = 0;
  bool stop_ = false;
  bool has_barriers_ = false;
  std::uint64_t hash_ = 0x243f6a8885a308d3ull;
  Histogram<5> latency_;
  std::vector<TraceRec> trace_;
  std::size_t trace_pos_ = 0;
  std::vector<Violation> violations_;
  ReplaySeries series_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> path_samples_;  // sparse
  std::size_t sparse_entries_ = 0;
  std::vector<TimelinePathSample> sample_buf_;
  std::uint64_t stale_ = 0;
  // independent checks
  std::vector<MirrorQueue> mq_;          // per path
  std::vector<std::uint64_t> mq_bytes_;  // per area
  std::vector<std::uint64_t> mqp_bytes_;  // per path
  // doc: the policy's own thresholds, computed here from the options (not the engine's), and
  // since when a path / area holds at least its pause threshold (kInf: below it).
  std::uint64_t path_pause_b_ = kInf, path_resume_b_ = 0, area_pause_b_ = kInf, area_resume_b_ = 0;
  std::vector<std::uint64_t> above_since_, area_above_since_;
  std::uint32_t above_ = 0;  // paths and areas at or above their pause threshold
  bool doc_ = false;
  // doc: per area, an event of the transaction holding the most bytes at the peak above H and
  // those bytes; scratch: per transaction (first event seen, bytes held)
  std::vector<std::uint32_t> peak_txn_;
  std::vector<std::uint64_t> peak_txn_bytes_;
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> txn_bytes_;
  std::vector<std::uint64_t> mq_peak_;   // per area
  std::vector<std::uint8_t> sent_why_;   // per event: SentWhy of its last send
  // doc: per event, 1 when its transaction's bytes on its path exceed H (empty: none does)
  std::vector<std::uint8_t> oversized_;
  std::vector<std::uint8_t> peak_why_;    // per area: SentWhy of the event that made the peak
  std::vector<std::uint64_t> peak_time_;  // per area
  std::vector<std::uint64_t> imax_;       // per area: max pending since the last sample
  std::vector<std::uint64_t> path_imax_;  // per path: max pending since the last sample
  std::vector<std::vector<std::uint64_t>> area_max_series_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> path_max_samples_;
  std::uint64_t acked_distinct_ = 0;
  std::vector<std::uint32_t> last_reset_epoch_;  // per path
  std::vector<std::uint8_t> reset_open_;         // per path: reset sent, no handshake yet
};

}  // namespace binlogctl::replay_detail
