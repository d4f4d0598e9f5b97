// The discrete-event simulator: upstream (per-path cursors, txn-boundary stops, credits, resets),
// data and control links, sinks, online invariants, statistics.
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

namespace binlogctl {

namespace {

constexpr std::uint64_t kInf = ~std::uint64_t{0};
constexpr std::uint32_t kNoEvent = 0xffffffffu;
constexpr std::uint32_t kHandshakeBit = 0x80000000u;
constexpr std::uint32_t kResolvedBit = 0x40000000u;  // a path's resolved signal (no data)
constexpr std::uint32_t kSignalBatch = 0x80000000u;  // a link batch of resolved signals only

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

double ms(std::uint64_t us) noexcept { return static_cast<double>(us) / 1000.0; }

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

ControlMsg make_ctl(Ctl kind, std::uint32_t path = kNoPath) {
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

void Simulator::setup() {
  const std::size_t n = in_.events.size();
  total_ = n;
  trace_.resize(std::max<std::size_t>(o_.trace_lines, 1));
  discarded_.assign(n, 0);
  avail_.assign(n, 0);
  // Source availability: when each event can be read (and its commit time for latency).
  for (const auto& area : in_.areas) {
    double acc = 0;
    std::uint64_t ts0 = area.first_event < area.end_event ? in_.source_ts_us[area.first_event] : 0;
    std::uint64_t prev = 0;
    for (std::uint32_t g = area.first_event; g < area.end_event; ++g) {
      std::uint64_t t = 0;
      switch (o_.source_rate.kind) {
        case SourceRate::Kind::unlimited:
          t = 0;
          break;
        case SourceRate::Kind::events:
          t = static_cast<std::uint64_t>(static_cast<double>(g - area.first_event) * 1e6 /
                                         o_.source_rate.per_second);
          break;
        case SourceRate::Kind::bytes:
          t = static_cast<std::uint64_t>(acc * 1e6 / o_.source_rate.per_second);
          acc += in_.events[g].size;
          break;
        case SourceRate::Kind::timestamps:
          t = in_.source_ts_us[g] > ts0 ? in_.source_ts_us[g] - ts0 : 0;
          break;
      }
      t = std::max(t, prev);
      prev = t;
      avail_[g] = t;
    }
    source_end_ = std::max(source_end_, prev);
  }
  // Engine areas/paths mirror the input (path ids are the input's).
  up_.resize(in_.areas.size());
  for (std::uint32_t a = 0; a < in_.areas.size(); ++a) fc_.add_area();
  for (std::uint32_t p = 0; p < in_.path_names.size(); ++p) fc_.add_path(in_.path_area[p]);
  upp_.resize(in_.path_names.size());
  sink_.resize(in_.path_names.size());
  touched_mark_.assign(in_.path_names.size(), 0);
  ctl_paused_.assign(in_.path_names.size() + in_.areas.size(), 0);
  for (std::uint32_t a = 0; a < in_.areas.size(); ++a) {
    UpArea& A = up_[a];
    const auto& area = in_.areas[a];
    A.first = A.head = area.first_event;
    A.end = area.end_event;
    A.credit = static_cast<std::int64_t>(o_.thresholds.quota);
    A.data_rng = Rng(o_.seed, "data-link", a);
    A.ctl_rng = Rng(o_.seed, "control-link", a);
    A.drop_rng = Rng(o_.seed, "drop", a);
  }
  for (std::uint32_t i = static_cast<std::uint32_t>(in_.source_breaks.size()); i-- > 0;) {
    UpArea& A = up_[in_.source_breaks[i].area];
    if (A.end_break == 0) A.end_break = i + 1;
    A.next_break = i;
    A.break_at = in_.source_breaks[i].event;
  }
  // Sinks: first matching spec wins.
  std::vector<std::regex> res;
  for (const auto& s : o_.sinks) res.emplace_back(s.pattern, std::regex::ECMAScript);
  for (std::uint32_t p = 0; p < sink_.size(); ++p) {
    SinkPath& S = sink_[p];
    S.m = o_.default_sink;
    for (std::size_t i = 0; i < res.size(); ++i) {
      if (std::regex_match(in_.path_names[p], res[i])) {
        S.m = o_.sinks[i].model;
        break;
      }
    }
    S.rng = Rng(o_.seed, "sink:" + in_.path_names[p], p);
    if (o_.policy == Policy::ticdc) upp_[p].credit = o_.thresholds.path_max();
    if (S.m.barrier_every_txns != 0) has_barriers_ = true;
  }
  if (has_barriers_) {
    for (std::uint32_t a = 0; a < in_.areas.size(); ++a) {
      UpArea& A = up_[a];
      A.txn_last.assign(in_.areas[a].transactions, 0);
      for (std::uint32_t g = A.first; g < A.end; ++g) A.txn_last[in_.events[g].txn] = g;
    }
  }
  const std::uint64_t q = o_.thresholds.quota;
  scan_step_ =
      o_.scan_step_bytes != 0 ? o_.scan_step_bytes : std::max<std::uint64_t>(q / 4096, 8192);
  scan_quantum_ =
      o_.scan_quantum_bytes != 0 ? o_.scan_quantum_bytes : std::max<std::uint64_t>(q / 16384, 2048);
  // SPEC: "memory never above the hard limit". doc discards before an append would pass H, so
  // its bound is H itself; blocking admits into a non-empty queue only what fits in Q, and one
  // event alone (whatever its size) into an empty one; ticdc, like TiCDC, tests H before the
  // append (usage >= 1.5 Q makes a marker), so the event that crosses H is in: H + one event.
  if (o_.policy == Policy::doc) {
    mem_limit_ = fc_.hard_limit_bytes();
  } else if (o_.policy == Policy::ticdc) {
    mem_limit_ = fc_.hard_limit_bytes() + in_.max_event_size;
  } else if (o_.policy == Policy::blocking) {
    mem_limit_ = std::max<std::uint64_t>(o_.thresholds.quota, in_.max_event_size);
  }
  mq_.resize(in_.path_names.size());
  last_reset_epoch_.assign(in_.path_names.size(), 0);
  reset_open_.assign(in_.path_names.size(), 0);
  mq_bytes_.assign(in_.areas.size(), 0);
  mqp_bytes_.assign(in_.path_names.size(), 0);
  above_since_.assign(in_.path_names.size(), kInf);
  area_above_since_.assign(in_.areas.size(), kInf);
  peak_txn_.assign(in_.areas.size(), kNoEvent);
  peak_txn_bytes_.assign(in_.areas.size(), 0);
  doc_ = o_.policy == Policy::doc;
  if (doc_) {
    const FlowThresholds& t = o_.thresholds;
    path_pause_b_ = ratio_bytes(t.path_pause, t.quota);
    path_resume_b_ = ratio_bytes(t.path_resume, t.quota);
    area_pause_b_ = ratio_bytes(t.area_pause, t.quota);
    area_resume_b_ = ratio_bytes(t.area_resume, t.quota);
  }
  fc_.set_drop_markers(o_.drop_markers);
  mq_peak_.assign(in_.areas.size(), 0);
  peak_why_.assign(in_.areas.size(), kSentFree);
  peak_time_.assign(in_.areas.size(), 0);
  imax_.assign(in_.areas.size(), 0);
  path_imax_.assign(in_.path_names.size(), 0);
  sent_why_.assign(n, kSentFree);
  if (o_.policy == Policy::doc) {  // the oversized-transaction rule needs them
    // A transaction is oversized when the area cannot hold it within H: its bytes on all its
    // paths together (one path or several) exceed H. An area's events are in source order, so
    // a transaction is a run of consecutive events; only the (rare) oversized runs are marked.
    for (const auto& ar : in_.areas) {
      std::uint32_t start = ar.first_event;
      std::uint64_t bytes = 0;
      for (std::uint32_t g = ar.first_event; g <= ar.end_event; ++g) {
        if (g == ar.end_event || in_.events[g].txn != in_.events[start].txn) {
          if (bytes > mem_limit_) {
            if (oversized_.empty()) oversized_.assign(n, 0);
            std::fill(oversized_.begin() + start, oversized_.begin() + g, std::uint8_t{1});
          }
          if (g == ar.end_event) break;
          start = g;
          bytes = 0;
        }
        bytes += in_.events[g].size;
      }
    }
  }
  fc_.inject_fault(o_.engine_fault, o_.engine_fault_at);
  if (o_.record_series) {
    series_.area_pending.resize(in_.areas.size());
    series_.area_max.resize(in_.areas.size());
    path_samples_.clear();
  }
}

// ---- upstream ----

Simulator::Gate Simulator::gate(const UpArea& A, const UpPath& P, std::uint32_t size) const {
  switch (o_.policy) {
    case Policy::none:
      return Gate::ok;
    case Policy::blocking:
      if (A.outstanding > 0 &&
          static_cast<std::uint64_t>(A.outstanding) + size > o_.thresholds.quota)
        return Gate::area_blocked;
      return Gate::ok;
    case Policy::doc:
      if (P.in_txn) return Gate::ok;  // a scan stops only at a transaction boundary
      if (A.paused) return Gate::area_blocked;
      if (P.paused) return Gate::path_blocked;
      return Gate::ok;
    case Policy::ticdc:
      if (P.in_txn) return Gate::ok;
      if (A.credit <= 0) return Gate::area_blocked;
      if (P.credit == 0) return Gate::path_blocked;
      return Gate::ok;
  }
  return Gate::ok;
}

void Simulator::send(UpArea& A, std::uint32_t g, std::uint64_t& budget) {
  // The event's fields in locals: the byte store into sent_why_ may alias anything, and would
  // make the compiler load them again after it.
  const ReplayInputEvent& e = in_.events[g];
  const std::uint32_t path = e.path, size = e.size, path_seq = e.path_seq;
  const bool path_txn_end = (e.flags & kPathTxnEnd) != 0;
  UpPath& P = upp_[path];
  const bool in_txn = P.in_txn;
  {
    std::uint8_t why = kSentFree;
    switch (o_.policy) {
      case Policy::doc:
        if (in_txn && (A.paused || P.paused)) {
          why = kSentInTxn;
        } else if (fc_.area_paused(in_.path_area[path]) || fc_.path_paused(path)) {
          why = kSentBeforeStop;
        }
        break;
      case Policy::ticdc:
        if (in_txn && (A.credit <= 0 || P.credit == 0)) {
          why = kSentInTxn;
        } else if (fc_.area_pending(in_.path_area[path]) + size > o_.thresholds.quota) {
          why = kSentBeforeStop;  // the credit the upstream holds is stale
        }
        break;
      default:
        break;
    }
    sent_why_[g] = why;
  }
  A.link.push_back(Msg{g, P.epoch, path_seq});
  ++P.cursor;
  P.in_txn = !path_txn_end;
  A.outstanding += static_cast<std::int64_t>(size);
  A.credit -= static_cast<std::int64_t>(size);
  A.link_bytes += size;
  budget = budget > size ? budget - size : 0;
  last_progress_ = now_;
}

void Simulator::send_handshake(UpArea& A, std::uint32_t p) {
  UpPath& P = upp_[p];
  A.link.push_back(Msg{kHandshakeBit | p, P.epoch, P.cursor});
  P.need_handshake = false;
}

void Simulator::block_reader(UpArea& A) {
  if (!A.blocked) {
    A.blocked = true;
    A.blocked_since = now_;
  }
}

bool Simulator::lagging_can_progress(const UpArea& A) const {
  for (std::uint32_t p : A.lagging) {
    const UpPath& P = upp_[p];
    if (P.need_handshake) return true;
    const auto& list = in_.path_events[p];
    if (P.cursor >= list.size() || list[P.cursor] >= A.head) return true;  // caught up
    if (gate(A, P, in_.events[list[P.cursor]].size) == Gate::ok) return true;
  }
  return false;
}

bool Simulator::upstream_has_work(const UpArea& A) const {
  return !A.lagging.empty() || (A.head < A.end && avail_[A.head] <= now_);
}

void Simulator::upstream_step(std::uint32_t a) {
  UpArea& A = up_[a];
  if (A.next_step != now_) return;  // superseded by an earlier step
  A.next_step = kInf;
  std::uint64_t budget = scan_step_;
  const std::size_t start = A.link.size();
  const bool rules_due = above_ != 0;  // doc's rule check before each send (see send())
  if (A.blocked) {
    A.blocked = false;
    A.blocked_us += now_ - A.blocked_since;
  }
  // 1. Catch-up scans of lagging paths (paused earlier, out of credit, or reset), round robin,
  //    scan_quantum bytes each, ending at a transaction boundary.
  if (!A.lagging.empty()) {
    std::vector<std::uint32_t> keep, later;
    std::size_t i = 0;
    for (; i < A.lagging.size() && budget > 0; ++i) {
      const std::uint32_t p = A.lagging[i];
      UpPath& P = upp_[p];
      if (P.need_handshake) send_handshake(A, p);
      const auto& list = in_.path_events[p];
      std::uint64_t sent = 0;
      bool blocked = false;
      while (P.cursor < list.size()) {
        const std::uint32_t g = list[P.cursor];
        if (g >= A.head) break;
        if (budget == 0 || (sent >= scan_quantum_ && !P.in_txn)) break;
        const Gate gt = gate(A, P, in_.events[g].size);
        if (gt != Gate::ok) {
          if (gt == Gate::area_blocked && o_.policy == Policy::blocking) blocked = true;
          break;
        }
        sent += in_.events[g].size;
        if (rules_due) check_policy_rules();  // (a violation stops the run after this step)
        send(A, g, budget);
      }
      if (P.cursor >= list.size() || list[P.cursor] >= A.head) {
        P.lagging = false;
      } else {
        later.push_back(p);
      }
      if (blocked) {
        block_reader(A);
        ++i;
        break;
      }
    }
    for (; i < A.lagging.size(); ++i) keep.push_back(A.lagging[i]);
    keep.insert(keep.end(), later.begin(), later.end());
    A.lagging.swap(keep);
  }
  // 2. Live reading at the source rate. Each event is checked against its context first (a
  //    break found before it is met when the upstream reads it).
  budget = o_.upstream_step_bytes;
  const bool hol = o_.policy == Policy::blocking;
  // The rare work (a source break to report, doc's rule check before a send) is behind one
  // compare per event: from `slow` on (the next break's event, or every event when a rule check
  // is due).
  std::uint32_t slow = rules_due ? 0 : A.break_at;
  while (!A.blocked && A.head < A.end && avail_[A.head] <= now_ && budget > 0) {
    const std::uint32_t g = A.head;
    const ReplayInputEvent& e = in_.events[g];
    if (g >= slow) [[unlikely]] {
      if (g >= A.break_at) {
        source_break(a);
        if (stop_) return;
        if (!rules_due) slow = A.break_at;
      }
      // The check before the send below (not lagging, gate open); it changes neither.
      if (rules_due && !upp_[e.path].lagging && gate(A, upp_[e.path], e.size) == Gate::ok) {
        check_policy_rules();  // (a violation stops the run after this step)
      }
    }
    UpPath& P = upp_[e.path];
    if (P.lagging) {
      ++A.head;
      continue;
    }
    const Gate gt = gate(A, P, e.size);
    if (gt == Gate::ok) {
      send(A, g, budget);
      ++A.head;
      continue;
    }
    if (hol) {  // the reader blocks: head-of-line
      block_reader(A);
      break;
    }
    P.lagging = true;
    A.lagging.push_back(e.path);
    ++A.head;
  }
  if (A.head == A.end && A.next_break < A.end_break) {  // breaks after the last event
    source_break(a);
    if (stop_) return;
  }
  // 3. Ship what was sent as one link batch.
  if (A.link.size() > start) {
    std::uint64_t t = now_ + o_.data_delay_us;
    if (o_.data_jitter_us != 0) t += A.data_rng.below(o_.data_jitter_us + 1);
    t = std::max(t, A.link_last);
    A.link_last = t;
    A.link_batches.push_back(static_cast<std::uint32_t>(A.link.size() - start));
    ++inflight_;
    push(t, EvKind::data_arrival, a);
    const std::uint64_t resident = A.link_bytes + fc_.area_pending(a) + A.in_sink;
    A.peak_resident = std::max(A.peak_resident, resident);
  }
  // 4. Next step: now + tick while there is work; at the next availability otherwise; nothing
  //    when blocked (a resume, credit report, reset or pop wakes the upstream).
  std::uint64_t next = kInf;
  if (!A.blocked && lagging_can_progress(A)) next = now_ + o_.upstream_tick_us;
  if (!A.blocked && A.head < A.end) {
    next = std::min(next, std::max(now_ + o_.upstream_tick_us, avail_[A.head]));
  }
  if (next != kInf) {
    schedule_step(a, next);
  } else if (o_.policy == Policy::blocking && upstream_has_work(A)) {
    block_reader(A);  // full queue: the next pop wakes the reader
  }
}

void Simulator::wake(std::uint32_t a) { schedule_step(a, now_); }

void Simulator::send_control(std::uint32_t a, ControlMsg m) {
  UpArea& A = up_[a];
  std::uint64_t t = now_ + o_.control_delay_us;
  if (o_.control_jitter_us != 0) t += A.ctl_rng.below(o_.control_jitter_us + 1);
  t = std::max(t, A.ctl_last);
  A.ctl_last = t;
  if (m.kind != Ctl::credit) ++inflight_;  // periodic credit reports never keep a run alive
  A.ctl.push_back(std::move(m));
  push(t, EvKind::control_arrival, a);
}

void Simulator::on_control(std::uint32_t a) {
  UpArea& A = up_[a];
  ControlMsg m = std::move(A.ctl.front());
  A.ctl.pop_front();
  if (m.kind != Ctl::credit) --inflight_;
  bool wake_up = false;
  switch (m.kind) {
    case Ctl::pause_path:
      upp_[m.path].paused = true;
      break;
    case Ctl::resume_path:
      upp_[m.path].paused = false;
      wake_up = true;
      break;
    case Ctl::pause_area:
      A.paused = true;
      break;
    case Ctl::resume_area:
      A.paused = false;
      wake_up = true;
      break;
    case Ctl::reset: {
      UpPath& P = upp_[m.path];
      if (m.epoch <= P.epoch) break;  // stale reset
      P.epoch = m.epoch;
      P.cursor = m.seq;
      P.in_txn = false;
      P.need_handshake = true;
      if (!P.lagging) {
        P.lagging = true;
        A.lagging.push_back(m.path);
      }
      trace('c', 0, m.path, m.epoch, m.seq);
      if (tl_ != nullptr) {
        TimelineAction ta;
        ta.time_us = now_;
        ta.kind = "reset_applied";
        ta.area = a;
        ta.path = in_.path_names[m.path];
        if (const std::uint32_t g = event_at(m.path, m.seq); g != kNoEvent) ta.at = identity_of(in_, g);
        ta.epoch = m.epoch;
        ta.seq = m.seq;
        ta.area_pending = fc_.area_pending(a);
        tl_->action(ta);
      }
      wake_up = true;
      break;
    }
    case Ctl::credit: {
      A.credit = static_cast<std::int64_t>(m.area_credit);
      const auto& paths = in_.areas[a].paths;
      for (std::size_t i = 0; i < paths.size() && i < m.path_credit.size(); ++i) {
        upp_[paths[i]].credit = m.path_credit[i];
      }
      wake_up = true;
      break;
    }
  }
  if (wake_up) wake(a);
}

// ---- collector and sinks ----

void Simulator::on_data(std::uint32_t a) {
  UpArea& A = up_[a];
  std::uint32_t count = A.link_batches.front();
  A.link_batches.pop_front();
  if ((count & kSignalBatch) != 0) {
    count &= ~kSignalBatch;  // resolved signals only: never keeps a run alive
  } else {
    --inflight_;
  }
  const bool inject = o_.drop_rate > 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    const Msg m = A.link[A.link_head++];
    if ((m.idx & (kHandshakeBit | kResolvedBit)) != 0) [[unlikely]] {  // one test per event
      if ((m.idx & kHandshakeBit) != 0) {
        const std::uint32_t hp = m.idx & ~kHandshakeBit;
        if (fc_.on_handshake(now_, hp, m.epoch, m.seq) == AppendStatus::appended) {
          reset_open_[hp] = 0;
        }
        continue;
      }
      // a resolved signal: no data
      fc_.on_resolved(now_, m.idx & ~kResolvedBit, m.epoch, m.seq);
      if (!fc_.actions().empty()) process_actions();
      if (stop_) return;
      continue;
    }
    const ReplayInputEvent& e = in_.events[m.idx];
    A.link_bytes -= e.size;
    const bool drop = inject && A.drop_rng.uniform() < o_.drop_rate;
    if (drop && !o_.drop_markers) {  // lost on the link: the engine never sees it
      A.outstanding -= static_cast<std::int64_t>(e.size);
      discarded_[m.idx] = 1;
      continue;
    }
    const bool oversized = !oversized_.empty() && oversized_[m.idx] != 0;
    const AppendStatus st = fc_.on_event(now_, e.path, m.epoch, e.path_seq, e.size, m.idx, drop,
                                         oversized, e.txn);
    // Discards decided on this append (circuit breaker, release) leave the mirror first.
    if (!fc_.actions().empty()) process_actions();
    if (stop_) return;
    if (st == AppendStatus::appended) {
      MirrorQueue& mq = mq_[e.path];
      mq.q.push_back(MirrorEntry{m.idx});
      std::uint64_t& held = mq_bytes_[a];
      held += e.size;
      if (doc_) {
        std::uint64_t& path_held = mqp_bytes_[e.path];
        if (path_held < path_pause_b_ && path_held + e.size >= path_pause_b_) {
          above_since_[e.path] = now_;
          ++above_;
        }
        path_held += e.size;
        if (held >= area_pause_b_ && held - e.size < area_pause_b_) {
          area_above_since_[a] = now_;
          ++above_;
        }
      }
      if (o_.record_series) [[unlikely]] {  // the plot's envelope
        imax_[a] = std::max(imax_[a], held);
        path_imax_[e.path] = std::max(path_imax_[e.path], fc_.path_pending(e.path));
        if (held > fc_.hard_limit_bytes() && held - e.size <= fc_.hard_limit_bytes() &&
            series_.admissions.size() < 100'000) {
          series_.admissions.push_back(ReplayAdmission{now_, a, held, rdp_id_of(m.idx)});
        }
      }
      const bool new_peak = held > mq_peak_[a];
      if (new_peak) {
        mq_peak_[a] = held;
        peak_why_[a] = sent_why_[m.idx];
        peak_time_[a] = now_;
      }
      if (held > mem_limit_) {
        // doc lets one transaction larger than H through alone: above H the area may hold no
        // more than H outside it. The transaction is the one holding the most bytes now (if
        // any transaction makes the rest fit, that one does), found in the simulator's own
        // copy of what the area holds, whatever the engine thinks it admitted.
        std::uint32_t top = kNoEvent;
        std::uint64_t top_bytes = 0;
        if (o_.policy == Policy::doc) {
          txn_bytes_.clear();
          for (std::uint32_t q : in_.areas[a].paths) {
            const MirrorQueue& oq = mq_[q];
            for (std::size_t i = oq.head; i < oq.q.size(); ++i) {
              const std::uint32_t g = oq.q[i].g;
              auto [it, fresh] = txn_bytes_.try_emplace(in_.events[g].txn, g, 0);
              it->second.second += in_.events[g].size;
              if (it->second.second > top_bytes) {
                top_bytes = it->second.second;
                top = it->second.first;
              }
            }
          }
        }
        const std::uint64_t others = held - top_bytes;
        if (new_peak && o_.policy == Policy::doc) {
          peak_txn_[a] = top;
          peak_txn_bytes_[a] = top_bytes;
        }
        if (o_.policy != Policy::doc || others > mem_limit_) {
          violate("memory_bound",
                  fmt::format("area {} holds {} bytes (the engine accounts {}) > the bound {} "
                              "({}) after appending {}{}",
                              a, held, fc_.area_pending(a), mem_limit_,
                              o_.policy == Policy::ticdc      ? "hard limit + one event"
                              : o_.policy == Policy::blocking ? "quota"
                                                              : "hard limit",
                              where(e.path, e.path_seq),
                              top != kNoEvent
                                  ? fmt::format(", {} of them outside the transaction holding the "
                                                "most ({} bytes, {})",
                                                others, top_bytes, describe(identity_of(in_, top)))
                                  : std::string()),
                  e.path, m.idx);
        }
      }
      if (!touched_mark_[e.path]) {
        touched_mark_[e.path] = 1;
        touched_.push_back(e.path);
      }
    } else {
      A.outstanding -= static_cast<std::int64_t>(e.size);
      switch (st) {
        case AppendStatus::filtered:  // (not with this upstream: it restarts at the checkpoint)
          break;
        case AppendStatus::stale_epoch:
          ++stale_;
          [[fallthrough]];
        case AppendStatus::discarded:
        case AppendStatus::marker:
        case AppendStatus::gap:
          discarded_[m.idx] = 1;
          break;
        case AppendStatus::before_handshake:
          violate("protocol",
                  fmt::format("data before the handshake of epoch {}: {}", m.epoch,
                              where(e.path, e.path_seq)),
                  e.path, m.idx);
          break;
        case AppendStatus::appended:
          break;
      }
    }
    if (stop_) return;
  }
  if (A.link_head == A.link.size()) {
    A.link.clear();
    A.link_head = 0;
  } else if (A.link_head > 65536 && A.link_head * 2 > A.link.size()) {
    A.link.erase(A.link.begin(), A.link.begin() + static_cast<std::ptrdiff_t>(A.link_head));
    A.link_head = 0;
  }
  for (std::uint32_t p : touched_) {
    touched_mark_[p] = 0;
    try_dispatch(p);
  }
  touched_.clear();
  if (o_.policy == Policy::blocking && A.blocked) wake(a);
}

void Simulator::try_dispatch(std::uint32_t p) {
  if (stop_ || !fc_.can_pop(p)) return;
  SinkPath& S = sink_[p];
  const std::uint32_t a = in_.path_area[p];
  UpArea& A = up_[a];
  std::uint32_t max_order = 0xffffffffu;
  if (S.m.barrier_every_txns != 0) {  // a batch never spans a barrier
    const std::uint32_t k = S.m.barrier_every_txns;
    const std::uint32_t txn = in_.events[fc_.front_order(p)].txn;
    const std::uint64_t last_txn = (static_cast<std::uint64_t>(txn / k) + 1) * k - 1;
    if (last_txn < A.txn_last.size()) max_order = A.txn_last[last_txn];
  }
  const Batch b = fc_.pop_batch(now_, p, o_.batch_max_events, o_.batch_max_bytes, max_order);
  A.in_sink += b.bytes;
  trace('h', 0, p, b.first_seq, b.count);
  const auto got = fc_.last_batch_orders();
  S.orders.clear();
  S.first_pos = S.next;
  {
    // Fast path: the event is the mirror's front and the next position of the path (every check
    // of receive() holds); anything else goes to receive().
    MirrorQueue& mq = mq_[p];
    const auto& list = in_.path_events[p];
    std::uint64_t bytes = 0;
    bool slow = false;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::uint32_t g = got[k];
      if (!slow && mq.head < mq.q.size() && mq.q[mq.head].g == g && S.next < list.size() &&
          list[S.next] == g) {
        ++mq.head;
        ++S.next;
        bytes += in_.events[g].size;
        continue;
      }
      if (!slow) {  // from here on the sink keeps its own copy of what it received
        slow = true;
        S.orders.assign(list.begin() + S.first_pos, list.begin() + S.next);
      }
      S.orders.push_back(g);
      A.outstanding -= static_cast<std::int64_t>(in_.events[g].size);
      receive(p, g);
      if (stop_) break;
    }
    S.fast = !slow;
    S.fast_count = S.next - S.first_pos;
    A.outstanding -= static_cast<std::int64_t>(bytes);
    mirror_release(p, bytes);
    if (mq.head == mq.q.size()) {
      mq.q.clear();
      mq.head = 0;
    } else if (mq.head >= 4096 && mq.head * 2 >= mq.q.size()) {
      mq.q.erase(mq.q.begin(), mq.q.begin() + static_cast<std::ptrdiff_t>(mq.head));
      mq.head = 0;
    }
  }
  S.batch = b;
  S.busy = true;
  ++sink_busy_;
  // Completion time: throughput cap (serial), latency, jitter, stall windows, hang window.
  std::uint64_t t = now_;
  if (S.m.cap_bytes_per_s != 0) {
    const std::uint64_t start = std::max(now_, S.cap_free);
    t = start + (b.bytes * 1'000'000 + S.m.cap_bytes_per_s - 1) / S.m.cap_bytes_per_s;
    S.cap_free = t;
  }
  t += S.m.latency_us;
  if (S.m.jitter_us != 0) t += S.rng.below(S.m.jitter_us + 1);
  if (S.m.stall_period_us != 0 && S.m.stall_us != 0) {
    const std::uint64_t phase = t % S.m.stall_period_us;
    if (phase >= S.m.stall_period_us - S.m.stall_us) t += S.m.stall_period_us - phase;
  }
  if (S.m.hang_to_us > S.m.hang_from_us && t >= S.m.hang_from_us && now_ < S.m.hang_to_us) {
    t = std::max(t, S.m.hang_to_us);
  }
  push(t, EvKind::sink_done, p);
  if (!fc_.actions().empty()) process_actions();
  if (o_.policy == Policy::blocking && A.blocked) wake(a);
}

// The sink of path p receives event g: checked against the source's ordered list of the path's
// positions. (No event of an old epoch can reach a sink before one of the checks here or the
// protocol check sees it: the links are FIFO, so what the upstream sent before a reset arrives
// before the handshake of the new epoch, where the engine must drop it.)
void Simulator::receive(std::uint32_t p, std::uint32_t g) {
  SinkPath& S = sink_[p];
  MirrorQueue& mq = mq_[p];
  bool held = false;
  if (mq.size() != 0 && mq.q[mq.head].g == g) {
    ++mq.head;
    held = true;
  } else {
    for (std::size_t i = mq.head; i < mq.q.size(); ++i) {
      if (mq.q[i].g == g) {
        mq.q.erase(mq.q.begin() + static_cast<std::ptrdiff_t>(i));
        held = true;
        break;
      }
    }
  }
  if (mq.head == mq.q.size()) {
    mq.q.clear();
    mq.head = 0;
  } else if (mq.head >= 4096 && mq.head * 2 >= mq.q.size()) {
    mq.q.erase(mq.q.begin(), mq.q.begin() + static_cast<std::ptrdiff_t>(mq.head));
    mq.head = 0;
  }
  if (held) mirror_release(p, in_.events[g].size);
  const auto& list = in_.path_events[p];
  const ReplayInputEvent& e = in_.events[g];
  if (e.path != p) {
    violate("exactly_once",
            fmt::format("the sink of path {} received an event of path {}: {}", in_.path_names[p],
                        in_.path_names[e.path], where(e.path, e.path_seq)),
            p, g);
    return;
  }
  // The sink receives its path's positions in source order, so the positions it has received
  // are exactly [0, next): one below `next` is a second copy.
  if (e.path_seq < S.next) {
    violate("exactly_once", fmt::format("path {}: {} delivered twice (duplicate)",
                                        in_.path_names[p], where(p, e.path_seq)),
            p, g);
    return;
  }
  if (S.next >= list.size() || list[S.next] != g) {
    violate("in_order",
            fmt::format("path {}: the sink received {} while {} had not been delivered yet "
                        "({} source positions skipped)",
                        in_.path_names[p], where(p, e.path_seq), where(p, S.next),
                        e.path_seq > S.next ? e.path_seq - S.next : 0),
            p, g);
  }
  S.next = e.path_seq + 1;
}

// A queue the engine says it discarded: everything the mirror holds for the path leaves it.
std::uint64_t Simulator::mirror_discard(const FlowAction& x) {
  MirrorQueue& mq = mq_[x.path];
  std::uint64_t bytes = 0;
  for (std::size_t i = mq.head; i < mq.q.size(); ++i) {
    const std::uint32_t g = mq.q[i].g;
    discarded_[g] = 1;
    bytes += in_.events[g].size;
  }
  const std::size_t count = mq.size();
  mirror_release(x.path, bytes);
  mq.q.clear();
  mq.head = 0;
  if (count != x.count && !stop_) {
    violate("accounting",
            fmt::format("path {}: the engine reports {} events discarded, it held {}",
                        in_.path_names[x.path], x.count, count),
            x.path);
  }
  return bytes;
}

bool Simulator::barrier_ok(std::uint32_t p) const {
  const std::uint32_t k = sink_[p].m.barrier_every_txns;
  if (k == 0) return true;
  const std::uint32_t first = in_.path_events[p][sink_[p].batch.first_seq];
  const std::uint64_t need = static_cast<std::uint64_t>(in_.events[first].txn / k) * k;
  if (need == 0) return true;
  // Every path of the area must have acknowledged all its events of transactions < need.
  for (std::uint32_t q : in_.areas[in_.path_area[p]].paths) {
    if (q == p) continue;
    const auto& list = in_.path_events[q];
    const std::uint32_t acked = fc_.acked_seq(q);
    if (acked < list.size() && in_.events[list[acked]].txn < need) return false;
  }
  return true;
}

void Simulator::on_sink_done(std::uint32_t p) {
  if (has_barriers_ && !barrier_ok(p)) {
    sink_[p].held = true;
    held_.push_back(p);
    return;
  }
  complete(p);
}

void Simulator::complete(std::uint32_t p) {
  SinkPath& S = sink_[p];
  const Batch b = S.batch;
  const std::uint32_t a = in_.path_area[p];
  UpArea& A = up_[a];
  fc_.batch_done(now_, b);
  S.busy = false;
  S.held = false;
  --sink_busy_;
  A.in_sink -= b.bytes;
  // In order (the usual case), what the sink received is list[first_pos, first_pos + count).
  const std::uint32_t* rb = S.orders.data();
  std::size_t rn = S.orders.size();
  if (S.fast) {
    rb = in_.path_events[p].data() + S.first_pos;
    rn = S.fast_count;
  }
  for (std::size_t k = 0; k < rn; ++k) {
    const std::uint32_t g = rb[k];
    const std::uint64_t lat = now_ - avail_[g];
    latency_.add(lat);
    S.latency.add(lat);
    if (discarded_[g]) {
      ++S.redelivered;
      ++redelivered_;
    }
  }
  // Acknowledged: the positions received up to this batch (a path has one batch in its sink).
  acked_distinct_ += S.next - S.acked;
  S.acked = S.next;
  const auto n = static_cast<std::uint64_t>(rn);
  S.delivered += n;
  S.bytes += b.bytes;
  delivered_ += n;
  A.delivered += n;
  if (!fc_.actions().empty()) process_actions();  // the dispatcher handled a marker: reset
  if (stop_) return;
  last_progress_ = now_;
  last_ack_ = now_;
  hash(now_);
  hash((static_cast<std::uint64_t>(p) << 32) | b.first_seq);
  hash(b.count);
  trace('d', 0, p, b.first_seq, b.count);
  if (!held_.empty()) check_barriers(a);
  try_dispatch(p);
}

void Simulator::check_barriers(std::uint32_t a) {
  bool again = true;
  while (again && !held_.empty()) {
    again = false;
    for (std::size_t i = 0; i < held_.size(); ++i) {
      const std::uint32_t p = held_[i];
      if (in_.path_area[p] != a || !barrier_ok(p)) continue;
      held_[i] = held_.back();
      held_.pop_back();
      complete(p);
      again = true;
      break;
    }
  }
}

void Simulator::process_actions() {
  // Copy: handling may call back into the engine.
  std::vector<FlowAction> acts = fc_.actions();
  fc_.clear_actions();
  for (const FlowAction& x : acts) {
    hash((x.time_us << 8) ^ static_cast<std::uint64_t>(x.kind));
    hash((static_cast<std::uint64_t>(x.path) << 32) ^ x.epoch ^ (std::uint64_t{x.seq} << 16));
    trace('a', static_cast<std::uint8_t>(x.kind), x.path, x.seq, x.count);
    if (o_.record_series && series_.marks.size() < 200'000) {
      series_.marks.push_back(ReplayMark{x.time_us, x.kind, x.area, x.path, x.area_pending});
    }
    // The event the action concerns: a reset, the one at its checkpoint (re-sent first).
    const std::uint32_t g = x.kind == ActionKind::reset && x.path != kNoPath
                                ? event_at(x.path, x.seq)
                                : (x.order < in_.events.size() ? x.order : kNoEvent);
    if (tl_ != nullptr) {
      TimelineAction ta;
      if (g != kNoEvent) ta.at = identity_of(in_, g);
      ta.time_us = x.time_us;
      ta.kind = to_string(x.kind);
      ta.area = x.area;
      if (x.path != kNoPath) ta.path = in_.path_names[x.path];
      ta.epoch = x.epoch;
      ta.seq = x.seq;
      ta.count = x.count;
      ta.bytes = x.bytes;
      ta.area_pending = fc_.area_pending(x.area);
      ta.pending_before = x.area_pending;
      if (x.kind == ActionKind::reset || x.kind == ActionKind::drop_marker) {
        ta.detail = to_string(x.cause);
      }
      tl_->action(ta);
    }
    // A pause or a resume of `who` (a path, an area), as the documented protocol has them: a
    // resume only once what it holds is below its resume threshold, and pauses and resumes
    // alternate. False when a violation stops the run.
    auto check_control = [&](bool pause, const std::string& who, const auto& held, const auto& resume_b,
                             std::string_view option, const auto& fraction, std::uint8_t& paused,
                             std::uint32_t p) {
      if (doc_ && !pause && held >= resume_b) {
        violate("resume_threshold",
                fmt::format("{} resumed while it holds {} bytes, not below its resume threshold {} ({} {} of the "
                            "quota {})",
                            who, held, resume_b, option, fraction, o_.thresholds.quota),
                p, g);
        if (stop_) return false;
      }
      if (paused == static_cast<std::uint8_t>(pause))
        violate("pause_alternation", fmt::format("{}: two {} in a row", who, pause ? "pauses" : "resumes"), p, g);
      paused = pause ? 1 : 0;
      return true;
    };
    UpArea& A = up_[x.area];
    switch (x.kind) {
      case ActionKind::pause_path:
      case ActionKind::resume_path: {
        const bool pause = x.kind == ActionKind::pause_path;
        // below 10% first
        if (!check_control(pause, fmt::format("path {}", in_.path_names[x.path]), mqp_bytes_[x.path], path_resume_b_,
                           "--path-resume", o_.thresholds.path_resume, ctl_paused_[x.path], x.path))
          return;
        send_control(x.area, make_ctl(pause ? Ctl::pause_path : Ctl::resume_path, x.path));
        break;
      }
      case ActionKind::pause_area:
      case ActionKind::resume_area: {
        const bool pause = x.kind == ActionKind::pause_area;
        // below 50% first
        if (!check_control(pause, fmt::format("area {}", x.area), mq_bytes_[x.area], area_resume_b_, "--area-resume",
                           o_.thresholds.area_resume, ctl_paused_[in_.path_names.size() + x.area], kNoPath))
          return;
        send_control(x.area, make_ctl(pause ? Ctl::pause_area : Ctl::resume_area));
        break;
      }
      case ActionKind::reset: {
        if (fc_.path_epoch(x.path) != x.epoch || x.epoch != last_reset_epoch_[x.path] + 1 ||
            reset_open_[x.path]) {
          violate("protocol",
                  fmt::format("path {}: reset to epoch {} while the reset to epoch {} has not "
                              "been answered by a handshake (one gap, two resets)",
                              in_.path_names[x.path], x.epoch, last_reset_epoch_[x.path]),
                  x.path, g);
        }
        last_reset_epoch_[x.path] = x.epoch;
        reset_open_[x.path] = 1;
        ControlMsg m = make_ctl(Ctl::reset, x.path);
        m.epoch = x.epoch;
        m.seq = x.seq;
        send_control(x.area, std::move(m));
        break;
      }
      case ActionKind::release_path:
      case ActionKind::gap_discard:
      case ActionKind::circuit_break: {
        A.outstanding -= static_cast<std::int64_t>(mirror_discard(x));
        break;
      }
      case ActionKind::drop_marker:
        break;  // the event itself is flagged by on_data
    }
    if (stop_) return;
  }
}

// ---- periodic ----

// doc: no path and no area stays unpaused at or above its pause threshold for longer than the
// control link takes to carry the pause (its delay plus its jitter): checked at the upstream,
// which is what has to stop, against the simulator's own copy of what is held.
void Simulator::check_policy_rules() {
  const std::uint64_t bound = o_.control_delay_us + o_.control_jitter_us;
  for (std::uint32_t p = 0; p < upp_.size() && !stop_; ++p) {
    if (above_since_[p] == kInf || upp_[p].paused || now_ <= above_since_[p] + bound) continue;
    violate("path_pause",
            fmt::format("path {} holds {} bytes, at or above its pause threshold {} (--path-pause "
                        "{} of the quota {}) since {:.3f} ms, and the upstream still reads it "
                        "{:.3f} ms later (the control link takes {:.3f} ms)",
                        in_.path_names[p], mqp_bytes_[p], path_pause_b_, o_.thresholds.path_pause,
                        o_.thresholds.quota, ms(above_since_[p]), ms(now_ - above_since_[p]),
                        ms(bound)),
            p, mq_[p].size() != 0 ? mq_[p].q[mq_[p].head].g : kNoEvent);
  }
  for (std::uint32_t a = 0; a < up_.size() && !stop_; ++a) {
    if (area_above_since_[a] == kInf || up_[a].paused || now_ <= area_above_since_[a] + bound) continue;
    violate("area_pause",
            fmt::format("area {} holds {} bytes, at or above its pause threshold {} (--area-pause "
                        "{} of the quota {}) since {:.3f} ms, and the upstream still reads it "
                        "{:.3f} ms later (the control link takes {:.3f} ms)",
                        a, mq_bytes_[a], area_pause_b_, o_.thresholds.area_pause, o_.thresholds.quota,
                        ms(area_above_since_[a]), ms(now_ - area_above_since_[a]), ms(bound)));
  }
}

void Simulator::on_tick() {
  fc_.on_tick(now_);
  if (!fc_.actions().empty()) process_actions();
  if (o_.policy == Policy::doc) check_policy_rules();
  if (stop_) return;
  const std::uint64_t grace = o_.thresholds.feedback_interval_us + 2 * o_.tick_us;
  for (std::uint32_t p : fc_.paused_paths()) {  // stuck-paused detector (#1542, #2214)
    if (fc_.path_pending(p) < fc_.path_resume_bytes() &&
        now_ >= fc_.path_last_feedback(p) + grace) {
      violate("stuck_paused",
              fmt::format("path {} paused with {} bytes pending (< resume {}) "
                          "since {} ms",
                          in_.path_names[p], fc_.path_pending(p), fc_.path_resume_bytes(),
                          fc_.path_last_feedback(p) / 1000),
              p);
    }
  }
  bool work = false;
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    UpArea& A = up_[a];
    if (fc_.area_paused(a) && fc_.area_pending(a) < fc_.area_resume_bytes() &&
        now_ >= fc_.area_last_feedback(a) + grace) {
      violate("stuck_paused", fmt::format("area {} paused below its resume threshold", a));
    }
    if (fc_.area_pending(a) >= fc_.area_pause_bytes()) A.above_pause_us += o_.tick_us;
    work |= upstream_has_work(A) || fc_.area_pending(a) > 0;
  }
  // A path whose stream is broken (a discard's marker not yet handled) or whose reset is not
  // answered is work too, even with nothing pending: it still owes its events.
  std::uint32_t stuck = kNoPath;
  for (std::uint32_t p = 0; p < upp_.size() && stuck == kNoPath; ++p) {
    if (fc_.path_broken(p) || fc_.awaiting_handshake(p)) stuck = p;
  }
  work |= stuck != kNoPath;
  // Watchdog: pending work, nothing delivered or sent for W, nothing scheduled to complete, and
  // no message in flight: no control message on a link, no lazy resume waiting for its timer
  // (a deadlock is only a deadlock when nothing that could unblock it is on its way).
  const bool sink_active = sink_busy_ > held_.size();
  bool resume_due = false;  // a lazy resume waiting for its timer, or an upstream step due now
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    resume_due |= fc_.resume_scheduled(a) || up_[a].next_step <= now_;
  }
  if (!done() && !stop_ && now_ >= last_progress_ + o_.watchdog_us && !sink_active &&
      inflight_ == 0 && !resume_due && (work || !held_.empty())) {
    std::uint64_t pending = 0;
    for (std::uint32_t a = 0; a < up_.size(); ++a) pending += fc_.area_pending(a);
    std::string why;
    for (std::uint32_t a = 0; a < up_.size(); ++a) {
      const UpArea& A = up_[a];
      if (A.blocked && !held_.empty()) {
        why += fmt::format(
            "; area {}: the reader is blocked on a full queue ({} of {} bytes queued or in "
            "sinks) while {} batches wait at a barrier for events that are still behind the "
            "reader",
            a, A.outstanding, o_.thresholds.quota, held_.size());
      } else if (A.blocked) {
        why += fmt::format("; area {}: the reader is blocked on a full queue ({} of {} bytes)", a,
                           A.outstanding, o_.thresholds.quota);
      } else if (fc_.area_paused(a)) {
        why += fmt::format("; area {} paused with {} bytes pending", a, fc_.area_pending(a));
      }
    }
    if (stuck != kNoPath) {
      why += fmt::format("; path {} {} with {} bytes pending", in_.path_names[stuck],
                         fc_.path_broken(stuck) ? "is broken (its reset never started)"
                                                : "waits for the handshake of its reset",
                         fc_.path_pending(stuck));
    }
    violate("deadlock",
            fmt::format("watchdog: no progress for {} ms with {} bytes pending, {} of {} events "
                        "delivered, {} batches held at a barrier, {} paths paused, no message in "
                        "flight{}",
                        (now_ - last_progress_) / 1000, pending, delivered_, total_, held_.size(),
                        fc_.paused_paths().size(), why));
  }
  // Nothing left that could ever move (the upstream sent everything, no link, queue or sink holds
  // anything, nothing is due): the run is over, finish() says what is missing.
  if (!done() && !stop_ && quiescent()) {
    stop_ = true;
    return;
  }
  if (!stop_ && now_ > source_end_ + o_.drain_timeout_us) {
    violate("drain_timeout", fmt::format("{} of {} events delivered {} ms after the source ended",
                                         delivered_, total_, (now_ - source_end_) / 1000));
  }
  if (!done() && !stop_) push(now_ + o_.tick_us, EvKind::tick, 0);
}

bool Simulator::quiescent() const {
  if (inflight_ != 0 || sink_busy_ != 0 || !held_.empty()) return false;
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    const UpArea& A = up_[a];
    if (A.head < A.end || !A.lagging.empty() || A.link_head != A.link.size()) return false;
    if (fc_.resume_scheduled(a)) return false;
  }
  for (std::uint32_t p = 0; p < upp_.size(); ++p) {
    if (fc_.queued_events(p) != 0 || fc_.path_broken(p) || fc_.awaiting_handshake(p) ||
        upp_[p].need_handshake) {
      return false;
    }
  }
  return true;
}

void Simulator::on_report() {
  if (!o_.drop_markers) {
    // Without markers, each path's resolved signal on the data link (behind the events it
    // covers): every event below the cursor was sent in this epoch. The dispatcher finds a
    // gap at the end of a path (nothing follows to show it) from it.
    for (std::uint32_t a = 0; a < up_.size(); ++a) {
      UpArea& A = up_[a];
      const std::size_t start = A.link.size();
      for (std::uint32_t p : in_.areas[a].paths) {
        const UpPath& P = upp_[p];
        if (!P.need_handshake && P.cursor > 0) A.link.push_back(Msg{kResolvedBit | p, P.epoch, P.cursor});
      }
      if (A.link.size() == start) continue;
      std::uint64_t t = now_ + o_.data_delay_us;
      if (o_.data_jitter_us != 0) t += A.data_rng.below(o_.data_jitter_us + 1);
      t = std::max(t, A.link_last);
      A.link_last = t;
      A.link_batches.push_back(static_cast<std::uint32_t>(A.link.size() - start) | kSignalBatch);
      push(t, EvKind::data_arrival, a);
    }
    if (o_.policy != Policy::ticdc) {
      if (!done() && !stop_) push(now_ + o_.report_interval_us, EvKind::report, 0);
      return;
    }
  }
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    ControlMsg m = make_ctl(Ctl::credit);
    m.area_credit = fc_.area_credit(a);
    const auto& paths = in_.areas[a].paths;
    m.path_credit.resize(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) m.path_credit[i] = fc_.path_credit(paths[i]);
    send_control(a, std::move(m));
    // Resolved-ts signals keep flowing while data waits upstream: the detector's heartbeat.
    if (upstream_has_work(up_[a]) || up_[a].head < up_[a].end) fc_.on_signal(now_, a);
  }
  if (!fc_.actions().empty()) process_actions();
  if (!done() && !stop_) push(now_ + o_.report_interval_us, EvKind::report, 0);
}

void Simulator::on_sample() {
  const bool rec = o_.record_series;
  if (rec) {
    series_.time_us.push_back(now_);
    path_samples_.emplace_back();
    path_max_samples_.emplace_back();
  }
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    const UpArea& A = up_[a];
    sample_buf_.clear();
    for (std::uint32_t p : in_.areas[a].paths) {
      const std::uint64_t pend = fc_.path_pending(p);
      if (rec && path_imax_[p] > pend && sparse_entries_ < 4'000'000) {
        path_max_samples_.back().emplace_back(p, path_imax_[p]);
        ++sparse_entries_;
      }
      path_imax_[p] = pend;
      if (pend == 0 && !fc_.path_paused(p)) continue;
      if (tl_ != nullptr) sample_buf_.push_back({in_.path_names[p], pend, fc_.path_paused(p)});
      if (rec && pend != 0 && sparse_entries_ < 4'000'000) {
        path_samples_.back().emplace_back(p, pend);
        ++sparse_entries_;
      } else if (rec && pend != 0) {
        series_.truncated = true;
      }
    }
    if (rec) {
      series_.area_pending[a].push_back(fc_.area_pending(a));
      series_.area_max[a].push_back(std::max(imax_[a], fc_.area_pending(a)));
    }
    imax_[a] = fc_.area_pending(a);
    if (tl_ != nullptr) {
      TimelineSample s;
      s.time_us = now_;
      s.area = a;
      s.pending = fc_.area_pending(a);
      s.resident = A.link_bytes + fc_.area_pending(a) + A.in_sink;
      s.delivered = A.delivered;
      s.paused = fc_.area_paused(a);
      s.paths = sample_buf_;
      if (A.head < A.end) s.reading = identity_of(in_, A.head);
      tl_->sample(s);
    }
  }
  if (!done() && !stop_) push(now_ + o_.sample_interval_us, EvKind::sample, 0);
}

// ---- invariants ----

std::string Simulator::where(std::uint32_t p, std::uint32_t seq) const {
  const auto& list = in_.path_events[p];
  if (seq >= list.size()) return fmt::format("{} seq {} (past the end)", in_.path_names[p], seq);
  // The transaction (RDP id, GTID), the file and the event's start position (of its
  // TRANSACTION_PAYLOAD for an inner event, then its index inside it); row: a sub-event of a
  // rows event split by key (hash:N), its first row.
  return fmt::format("{} seq {} ({})", in_.path_names[p], seq, describe(identity_of(in_, list[seq])));
}

// The upstream reads past a break of the source's context.
void Simulator::source_break(std::uint32_t a) {
  UpArea& A = up_[a];
  const SourceBreak& b = in_.source_breaks[A.next_break++];
  A.break_at = A.next_break < A.end_break ? in_.source_breaks[A.next_break].event : 0xffffffffu;
  const std::uint32_t g = b.event < A.end ? b.event : kNoEvent;
  violate("source_context",
          fmt::format("{}:{}: {}: {}; the upstream read past it{}", b.log_name, b.pos, b.check, b.message,
                      g != kNoEvent ? fmt::format(" at {}", describe(identity_of(in_, g)))
                                    : std::string(" at the end of the source")),
          g != kNoEvent ? in_.events[g].path : kNoPath, g);
  Violation& v = violations_.back();
  v.log_name = b.log_name;  // where the context breaks (`at`: where the upstream met it)
  v.pos = b.pos;
}

void Simulator::violate(std::string check, std::string msg, std::uint32_t p, std::uint32_t g) {
  Violation v;
  v.check = std::move(check);
  v.time_us = now_;
  v.message = std::move(msg);
  if (p != kNoPath) v.path = in_.path_names[p];
  if (g != kNoEvent) {
    v.at = identity_of(in_, g);
    v.log_name = v.at.log_name;
    v.pos = v.at.pos;
  }
  const std::size_t n = std::min(trace_pos_, trace_.size());
  for (std::size_t i = trace_pos_ - n; i < trace_pos_; ++i) {
    const TraceRec& r = trace_[i % trace_.size()];
    const std::string path = r.path == kNoPath ? std::string("-") : in_.path_names[r.path];
    switch (r.what) {
      case 'a':
        v.trace.push_back(fmt::format("{:.3f} ms action {} {} seq {} count {}", ms(r.t),
                                      to_string(static_cast<ActionKind>(r.kind)), path, r.a, r.b));
        break;
      case 'd':
        v.trace.push_back(
            fmt::format("{:.3f} ms ack {} seq {}..{}", ms(r.t), path, r.a, r.a + r.b - 1));
        break;
      case 'h':
        v.trace.push_back(
            fmt::format("{:.3f} ms sink {} seq {}..{}", ms(r.t), path, r.a, r.a + r.b - 1));
        break;
      case 'c':
        v.trace.push_back(fmt::format("{:.3f} ms upstream reset {} epoch {} from seq {}", ms(r.t),
                                      path, r.a, r.b));
        break;
      default:
        break;
    }
  }
  if (tl_ != nullptr) {
    TimelineAction ta;
    ta.time_us = now_;
    ta.kind = v.check == "deadlock" ? "deadlock" : "violation";
    ta.detail = v.message;
    ta.at = v.at;
    if (!v.path.empty()) ta.path = v.path;
    tl_->action(ta);
  }
  hash(fnv1a(v.check));
  violations_.push_back(std::move(v));
  if (o_.stop_on_violation) stop_ = true;
}

// ---- run ----

ReplayResult Simulator::run() {
  setup();
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    if (up_[a].first < up_[a].end) schedule_step(a, avail_[up_[a].first]);
  }
  push(o_.tick_us, EvKind::tick, 0);
  if (o_.policy == Policy::ticdc || !o_.drop_markers) push(o_.report_interval_us, EvKind::report, 0);
  if (tl_ != nullptr || o_.record_series) push(0, EvKind::sample, 0);
  const auto wall0 = std::chrono::steady_clock::now();
  while (!heap_.empty() && !stop_ && !done()) {
    const HeapItem it = heap_.top();
    heap_.pop();
    if (o_.clock == ClockMode::real_time) {
      std::this_thread::sleep_until(wall0 + std::chrono::microseconds(it.t));
    }
    now_ = it.t;
    ++steps_;
    switch (it.kind) {
      case EvKind::upstream_step:
        upstream_step(it.arg);
        break;
      case EvKind::data_arrival:
        on_data(it.arg);
        break;
      case EvKind::control_arrival:
        on_control(it.arg);
        break;
      case EvKind::sink_done:
        on_sink_done(it.arg);
        break;
      case EvKind::tick:
        on_tick();
        break;
      case EvKind::report:
        on_report();
        break;
      case EvKind::sample:
        on_sample();
        break;
    }
  }
  ReplayResult r;
  finish(r);
  return r;
}

void Simulator::finish(ReplayResult& r) {
  fc_.finish(now_);
  const bool ended_early = stop_ && !violations_.empty();
  if (!ended_early) {
    // Every source position must have been acknowledged by its sink. One that is not, while
    // nothing (queue, link, sink, upstream) holds it any more, was lost.
    for (std::uint32_t p = 0; p < sink_.size() && violations_.empty(); ++p) {
      const auto& list = in_.path_events[p];
      const std::uint32_t first = sink_[p].acked;
      const std::uint64_t missing = list.size() - first;
      if (missing == 0) continue;
      if (quiescent()) {
        violate("exactly_once",
                fmt::format("path {}: {} source positions never delivered (lost: nothing holds "
                            "them any more), the first {}",
                            in_.path_names[p], missing, where(p, first)),
                p, event_at(p, first));
      } else {
        violate("deadlock",
                fmt::format("nothing left to simulate with {} of {} events delivered; "
                            "path {}: {} not delivered, the first {}",
                            acked_distinct_, total_, in_.path_names[p], missing, where(p, first)),
                p, event_at(p, first));
      }
    }
  }
  if (violations_.empty() && done()) {
    // Every path drained: nothing left in the engine's queues, the links, the sinks, and the
    // engine's accounting back to zero.
    for (std::uint32_t p = 0; p < sink_.size() && violations_.empty(); ++p) {
      if (fc_.path_pending(p) != 0 || fc_.queued_events(p) != 0 || fc_.path_blocking(p) ||
          mq_[p].size() != 0) {
        violate("drained",
                fmt::format("path {}: every event was delivered, yet the engine still accounts {} "
                            "bytes / {} events queued{} (the simulator's copy: {} events)",
                            in_.path_names[p], fc_.path_pending(p), fc_.queued_events(p),
                            fc_.path_blocking(p) ? ", the path blocking" : "", mq_[p].size()),
                p);
      }
    }
    for (std::uint32_t a = 0; a < up_.size() && violations_.empty(); ++a) {
      const UpArea& A = up_[a];
      if (fc_.area_pending(a) != 0 || A.in_sink != 0 || A.link_bytes != 0 || A.outstanding != 0 ||
          mq_bytes_[a] != 0) {
        violate("drained",
                fmt::format("area {}: pending {}, in sinks {}, on the link {}, "
                            "outstanding {} bytes after the drain",
                            a, fc_.area_pending(a), A.in_sink, A.link_bytes, A.outstanding));
      }
    }
    if (violations_.empty() && !fc_.accounting_consistent()) {
      violate("accounting", "area totals differ from the sum of their paths");
    }
  }
  // Pauses still open at the end. After the drain nothing is pending, so each is below its
  // resume threshold: the lazy resume is waiting for the feedback interval since the path's (or
  // area's) last feedback. That is the design, not a fault, unless the interval (plus the timer
  // period) has already passed: then the resume was lost (stuck paused, #1542).
  if (o_.policy == Policy::doc) {
    const std::uint64_t grace = o_.thresholds.feedback_interval_us + 2 * o_.tick_us;
    auto open = [&](std::uint32_t a, std::string path, std::uint64_t last, std::uint64_t pending,
                    std::uint64_t resume_at) {
      OpenPause op;
      op.area = a;
      op.path = std::move(path);
      op.last_feedback_us = last;
      op.since_us = last;
      op.pending = pending;
      op.resume_due_us = last + o_.thresholds.feedback_interval_us;
      if (pending >= resume_at) {
        op.why = fmt::format(
            "{} bytes pending, not below the resume threshold {}: still "
            "throttled (the run stopped early)",
            pending, resume_at);
      } else if (now_ < last + grace) {
        op.why = fmt::format(
            "below the resume threshold; the lazy resume is due at {:.3f} s, "
            "{:.3f} s after the end of the run (fast pause, lazy resume): not a "
            "violation",
            ms(op.resume_due_us) / 1000,
            ms(op.resume_due_us > now_ ? op.resume_due_us - now_ : 0) / 1000);
      } else {
        op.violation = true;
        op.why = fmt::format(
            "below the resume threshold since more than the feedback interval: "
            "stuck paused");
      }
      if (op.violation && violations_.empty()) {
        violate(
            "stuck_paused",
            fmt::format("{} still paused at the end: {}",
                        op.path.empty() ? fmt::format("area {}", a) : "path " + op.path, op.why));
      }
      r.open_pauses.push_back(std::move(op));
    };
    for (std::uint32_t a = 0; a < up_.size(); ++a) {
      if (fc_.area_paused(a)) {
        open(a, "", fc_.area_last_feedback(a), fc_.area_pending(a), fc_.area_resume_bytes());
      }
    }
    std::vector<std::uint32_t> paused(fc_.paused_paths().begin(), fc_.paused_paths().end());
    std::sort(paused.begin(), paused.end());
    for (std::uint32_t p : paused) {
      open(in_.path_area[p], in_.path_names[p], fc_.path_last_feedback(p), fc_.path_pending(p),
           fc_.path_resume_bytes());
    }
  }
  r.policy = o_.policy;
  r.seed = o_.seed;
  r.source_events = total_;
  r.source_bytes = in_.total_bytes;
  r.delivered = delivered_;
  r.redelivered = redelivered_;
  r.quota = o_.thresholds.quota;
  r.thresholds = o_.thresholds;
  r.hard_limit = o_.policy == Policy::blocking ? o_.thresholds.quota : fc_.hard_limit_bytes();
  r.stale_discarded = stale_;
  r.latency_ms = summarize(latency_);
  r.end_time_us = now_;
  r.source_end_us = source_end_;
  r.drain_us = last_ack_ > source_end_ ? last_ack_ - source_end_ : 0;
  r.sim_steps = steps_;
  for (std::uint32_t a = 0; a < up_.size(); ++a) {
    const AreaCounters& c = fc_.area_counters(a);
    AreaStats s;
    s.source_events = in_.areas[a].end_event - in_.areas[a].first_event;
    s.delivered = up_[a].delivered;
    s.peak_memory = c.peak_pending;
    s.peak_time_us = peak_time_[a];
    s.over_quota = mq_peak_[a] > o_.thresholds.quota ? mq_peak_[a] - o_.thresholds.quota : 0;
    const std::uint64_t h = r.hard_limit;
    s.over_hard_limit = mq_peak_[a] > h ? mq_peak_[a] - h : 0;
    if (o_.policy == Policy::none) {
      s.peak_cause = "no flow control";
    } else if (s.over_hard_limit != 0 && o_.policy == Policy::ticdc) {
      s.peak_cause = "checked before the append";
    } else if (s.over_hard_limit != 0 && o_.policy == Policy::doc) {
      s.peak_cause = c.oversized_admissions != 0 || c.retry_admissions == 0
                         ? "oversized transaction let through alone"
                         : "re-read let through alone after two discards";
    } else if (s.over_hard_limit != 0) {
      s.peak_cause = "one event larger than the limit, admitted alone";
    } else if (s.over_quota == 0) {
      s.peak_cause = "";
    } else {
      switch (peak_why_[a]) {
        case kSentInTxn:
          s.peak_cause = "unsplittable transaction";
          break;
        case kSentBeforeStop:
          s.peak_cause = "control delay";
          break;
        default:
          s.peak_cause = "burst";
          break;
      }
    }
    if (s.over_hard_limit != 0 && peak_txn_[a] != kNoEvent) {
      s.peak_transaction = identity_of(in_, peak_txn_[a]);
      s.peak_transaction_bytes = peak_txn_bytes_[a];
    }
    s.peak_resident = up_[a].peak_resident;
    s.reader_blocked_us = up_[a].blocked_us + (up_[a].blocked ? now_ - up_[a].blocked_since : 0);
    s.time_above_pause_us = up_[a].above_pause_us;
    s.counters = c;
    s.source_end_us =
        avail_.empty() || s.source_events == 0 ? 0 : avail_[in_.areas[a].end_event - 1];
    s.drain_us = r.drain_us;
    r.pauses += c.pauses;
    r.resumes += c.resumes;
    r.flaps += c.flaps;
    r.circuit_breaks += c.circuit_breaks;
    r.releases += c.releases;
    r.drop_markers += c.drop_markers;
    r.resets += c.resets;
    r.peak_memory = std::max(r.peak_memory, c.peak_pending);
    r.peak_resident = std::max(r.peak_resident, s.peak_resident);
    r.areas.push_back(std::move(s));
  }
  for (std::uint32_t p = 0; p < sink_.size(); ++p) {
    PathStats s;
    s.name = in_.path_names[p];
    s.area = in_.path_area[p];
    s.source_events = in_.path_events[p].size();
    s.delivered = sink_[p].delivered;
    s.redelivered = sink_[p].redelivered;
    s.bytes = sink_[p].bytes;
    s.counters = fc_.path_counters(p);
    s.latency_ms = summarize(sink_[p].latency);
    r.pauses += s.counters.pauses;
    r.resumes += s.counters.resumes;
    r.flaps += s.counters.flaps;
    r.discarded += s.counters.discarded;
    r.paths.push_back(std::move(s));
  }
  if (o_.record_series) {
    // Densify the top paths by peak pending.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> peaks;
    for (std::uint32_t p = 0; p < sink_.size(); ++p) {
      const auto pk = fc_.path_counters(p).peak_pending;
      if (pk > 0) peaks.emplace_back(pk, p);
    }
    std::sort(peaks.begin(), peaks.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    if (peaks.size() > 12) peaks.resize(12);
    for (const auto& [pk, p] : peaks) {
      series_.top_paths.push_back(p);
      std::vector<std::uint64_t> v(series_.time_us.size(), 0);
      for (std::size_t i = 0; i < path_samples_.size(); ++i) {
        for (const auto& [q, bytes] : path_samples_[i]) {
          if (q == p) v[i] = bytes;
        }
      }
      series_.path_pending.push_back(std::move(v));
      std::vector<std::uint64_t> mx = series_.path_pending.back();
      for (std::size_t i = 0; i < path_max_samples_.size() && i < mx.size(); ++i) {
        for (const auto& [q, bytes] : path_max_samples_[i]) {
          if (q == p) mx[i] = std::max(mx[i], bytes);
        }
      }
      series_.path_max.push_back(std::move(mx));
    }
    r.series = std::move(series_);
  }
  r.trace_hash = hash_;
  r.violations = std::move(violations_);
  r.ok = r.violations.empty();
}

}  // namespace

ReplayResult run_replay(const ReplayOptions& opts, const ReplayInput& input,
                        TimelineWriter* timeline) {
  Simulator sim(opts, input, timeline);
  return sim.run();
}

ReplayResult run_replay(const ReplayOptions& opts, EventSource& source, TimelineWriter* timeline) {
  const ReplayInput in = load_replay_input(source, opts.path_by, opts.path_hash_buckets);
  return run_replay(opts, in, timeline);
}

ReplayResult run_replay(const ReplayOptions& opts, std::span<EventSource* const> sources,
                        TimelineWriter* timeline) {
  const ReplayInput in = load_replay_input(sources, opts.path_by, opts.path_hash_buckets);
  return run_replay(opts, in, timeline);
}

}  // namespace binlogctl
