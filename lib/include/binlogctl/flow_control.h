// Flow-control engine for `binlogctl replay`: the collector side of TiCDC's dynamic stream.
//
// Pure logic with injected time (every call takes `now_us`); no threads, no clock, no I/O.
// Vocabulary (../shared/seeds/001_*, ../shared/design/flow-control.md):
//   path  = one dispatcher (a table, a schema or a key-hash bucket) with its own FIFO queue;
//   area  = one changefeed (one input chain) holding many paths and one memory quota Q;
//   pending bytes = decoded event sizes sitting in path queues (TiCDC's pendingSize); bytes are
//   released when a batch is popped to the sink, or when a queue is discarded.
//
// Each path carries the collector half of the reset protocol: an epoch, a handshake that gives the
// start sequence of a new stream, the sequence it expects next, the sequence it will forward next
// (everything below it already went to the sink, so re-read copies are skipped) and the
// acknowledged checkpoint that a RESET asks the upstream to restart from. Sequences are per-path
// 0-based indexes of the path's events in source order; the simulator maps them to exact binlog
// positions (file index, end_log_pos, inner index).
//
// Policies (share the reset machinery):
//   doc      the seed: path pause >= 20% Q / resume < 10% Q, area pause >= 80% / resume < 50%,
//            fast pause and lazy resume (>= feedback_interval after the last feedback), circuit
//            breaker when an append would pass H = hard_limit_ratio * Q: discard the queue of the
//            path with the most pending bytes (ties: lower id) and mark it for a reset.
//   ticdc    TiCDC HEAD: no pause; credits (area Q - used, path max(Q/10, 1 MiB) - used, reported
//            by the simulator); deadlock release of the most advanced blocked paths covering 60%;
//            incoming events become drop markers while pending >= H.
//   none     unbounded queues (a baseline that shows the growth).
//   blocking a bounded per-area byte queue whose reader blocks (Debezium/Canal); the bound is
//            enforced by the simulator's upstream, the engine only accounts.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace binlogctl {

enum class Policy : std::uint8_t { doc, ticdc, none, blocking };

std::string_view to_string(Policy p) noexcept;
// Parses "doc", "ticdc", "none", "blocking". Returns false (out untouched) otherwise.
bool parse_policy(std::string_view text, Policy& out) noexcept;

struct FlowThresholds {
  std::uint64_t quota = 64ull << 20;  // Q, bytes per area (--quota)
  double hard_limit_ratio = 1.5;      // H = ratio * Q (--hard-limit-ratio)
  double path_pause = 0.20;           // doc: pause a path at pending >= 0.20 Q (--path-pause)
  double path_resume = 0.10;          // doc: resume it below 0.10 Q (--path-resume)
  double area_pause = 0.80;           // doc: pause the area at >= 0.80 Q (--area-pause)
  double area_resume = 0.50;          // doc: resume it below 0.50 Q (--area-resume)
  std::uint64_t feedback_interval_us = 1'000'000;  // lazy resume: >= this after the last feedback
  // ticdc
  double release_ratio = 0.6;                     // deadlock watermark and release target (#4172)
  std::uint64_t deadlock_window_us = 5'000'000;   // no size decrease for this long → release
  std::uint64_t release_interval_us = 1'000'000;  // releaseMemory at most once per interval
  std::uint64_t release_min_bytes = 256;          // only paths with at least this much pending
  double path_credit_ratio = 0.10;                // path max = max(ratio * Q, floor)
  std::uint64_t path_credit_floor = 1ull << 20;

  std::uint64_t hard_limit() const noexcept;  // H in bytes
  std::uint64_t path_max() const noexcept;    // ticdc per-path credit ceiling
};

// ---- pure decision helpers (unit-tested; the engine applies the same rules) ----

// A fraction of the quota as a byte threshold: "used >= ratio * quota" <=> "used >=
// ratio_bytes(ratio, quota)" for whole bytes (products within 1e-9 of an integer are that
// integer: 0.2 x 100 = 20). 0 for a ratio <= 0.
std::uint64_t ratio_bytes(double ratio, std::uint64_t quota) noexcept;

enum class PauseChange : std::uint8_t { none, pause, resume };

// Hysteresis: pause when !paused and used >= pause_ratio * quota; resume when paused and
// used < resume_ratio * quota; otherwise none.
PauseChange hysteresis(bool paused, std::uint64_t used, std::uint64_t quota, double pause_ratio,
                       double resume_ratio) noexcept;

// TiCDC's v2 adaptive path thresholds (memory_control_algorithm.go calculateThresholds), as
// ratios of path bytes to the area quota. Above 1.5 usage the table has no entry: returns {0, 0}.
struct PathThresholds {
  double pause = 0;
  double resume = 0;
};
PathThresholds calculate_v2_thresholds(std::size_t paths, double area_usage) noexcept;

struct ReleaseCandidate {
  std::uint32_t path = 0;
  std::uint64_t pending = 0;       // bytes queued
  std::uint64_t last_handled = 0;  // order of the first event of the last batch handled
  bool blocking = false;           // a batch of this path is in the sink
};
// TiCDC releaseMemory choice: most advanced (last_handled descending, ties lower path id) blocking
// paths with pending >= min_bytes, until the selected bytes reach ratio * area_pending.
std::vector<std::uint32_t> select_release_paths(std::span<const ReleaseCandidate> candidates,
                                                std::uint64_t area_pending, double ratio,
                                                std::uint64_t min_bytes);

// ---- actions ----

enum class ActionKind : std::uint8_t {
  pause_path,
  resume_path,
  pause_area,
  resume_area,
  release_path,   // ticdc: queue discarded by the deadlock release
  circuit_break,  // doc: queue of the longest path discarded at the hard limit
  drop_marker,    // an incoming event dropped (FlowAction::cause: injected, hard_limit at H
                  // under ticdc, circuit_break under doc), with a marker unless markers are off
  reset,          // epoch++ and RESET(checkpoint) sent upstream
  gap_discard,    // without markers: the events queued after a gap, dropped by the dispatcher
                  // that found the gap (a reset follows)
};
std::string_view to_string(ActionKind k) noexcept;

inline constexpr std::uint32_t kNoPath = 0xffffffffu;
inline constexpr std::uint32_t kNoOrder = 0xffffffffu;

// What the dispatcher detected when it started a reset: the marker a discard left in the queue
// (drop marker, circuit breaker, release) or a gap in the sequence numbers it received.
// A drop_marker action's cause is one of injected (fault injection, TiCDC's InjectDropEvent),
// hard_limit (ticdc at H) and circuit_break (doc: the event of a path that holds the admitted
// transaction, dropped alone).
enum class ResetCause : std::uint8_t {
  none,
  drop_marker,
  circuit_break,
  release_path,
  gap,
  injected,
  hard_limit
};
std::string_view to_string(ResetCause c) noexcept;

// Deliberate engine defects for the tests that prove each invariant check can fail (the
// simulator's checks are independent of the engine's own counters). Each fires once, on the
// `at`-th pop (lose, duplicate, reorder, leak) or from the `at`-th append on (undercount).
enum class EngineFault : std::uint8_t {
  none,
  lose,        // a popped event is not handed to the sink (its bytes are released)
  duplicate,   // a popped event is handed to the sink twice
  reorder,     // the first two events of a batch are swapped
  undercount,  // appended events are accounted at a quarter of their size
  leak,        // the bytes of a popped event are not released
  // The audit's variants of the policy's own rules (#32), for the whole run:
  no_path_pause,   // doc never pauses a path
  path_pause_60,   // doc pauses a path at 60% of Q instead of its --path-pause
  no_area_pause,   // doc never pauses the area
  early_resume,    // doc resumes a path as soon as it is below its pause threshold, without
                   // waiting for the feedback interval
  path_exemption,  // doc lets through a whole path with an oversized transaction (the old rule)
  stuck_broken,    // the marker of a discard is never handled (the reset never starts)
};

struct FlowAction {
  std::uint64_t time_us = 0;
  ActionKind kind = ActionKind::pause_path;
  std::uint32_t area = 0;
  std::uint32_t path = kNoPath;    // kNoPath for area actions
  std::uint32_t epoch = 0;         // reset: the new epoch
  std::uint32_t seq = 0;           // reset: checkpoint (first seq to re-send); discards: first seq
  std::uint32_t count = 0;         // discards: events discarded
  std::uint64_t bytes = 0;         // discards: bytes released; pause/resume: pending at decision
  std::uint64_t area_pending = 0;  // circuit_break / release_path: area pending just before it
  ResetCause cause = ResetCause::none;  // reset: what the dispatcher detected
  // The driver's `order` of the event the action concerns (kNoOrder: none): pause, drop
  // marker, discard: the event appended / dropped / first discarded; resume: the first event of
  // the batch whose pop allowed it (none for a lazy resume sent by the timer). A reset concerns
  // the event at its checkpoint `seq`, which the driver knows.
  std::uint32_t order = kNoOrder;
};

enum class AppendStatus : std::uint8_t {
  appended,
  filtered,          // already forwarded before a reset: skipped (exactly once)
  stale_epoch,       // from another epoch: dropped
  discarded,         // the path is waiting for its reset: dropped
  marker,            // turned into a drop marker: dropped, a reset follows
  gap,               // sequence gap: dropped, a reset follows
  before_handshake,  // data of the current epoch before its handshake (protocol error)
};

// A batch handed to the sink: events first_seq .. first_seq + count - 1 of `path`.
struct Batch {
  std::uint32_t path = kNoPath;
  std::uint32_t epoch = 0;
  std::uint32_t first_seq = 0;
  std::uint32_t count = 0;
  std::uint64_t bytes = 0;
  std::uint32_t first_order = 0;
  bool stale = false;  // some event was queued under another epoch (must never happen)
};

struct PathCounters {
  std::uint32_t pauses = 0, resumes = 0, flaps = 0;
  std::uint64_t paused_us = 0;
  std::uint32_t releases = 0, circuit_breaks = 0, drop_markers = 0, resets = 0;
  std::uint64_t peak_pending = 0;
  std::uint64_t filtered = 0, stale = 0, discarded = 0;  // events
};

struct AreaCounters {
  std::uint32_t pauses = 0, resumes = 0, flaps = 0;
  std::uint64_t paused_us = 0;
  std::uint32_t releases = 0, release_rounds = 0, circuit_breaks = 0, drop_markers = 0, resets = 0;
  std::uint64_t peak_pending = 0;
  std::uint32_t protocol_errors = 0;
  std::uint32_t oversized_admissions = 0;  // doc: transactions larger than H let through alone
                                           // that took the area above H
  // doc: re-reads let through alone because the breaker had discarded them twice from the same
  // event (what a scan burst in flight brings can exceed H: no progress otherwise).
  std::uint32_t retry_admissions = 0;
};

class FlowController {
 public:
  FlowController(Policy policy, const FlowThresholds& thresholds);

  std::uint32_t add_area();
  // A new path, or the id of a removed one given again (with fresh state and counters).
  std::uint32_t add_path(std::uint32_t area);
  // A driver whose consumers come and go (serve --upstream: a replica disconnects): the path's
  // queued bytes are released with no marker and no reset (TiCDC's RemovePath), an open pause is
  // closed, and the id may be given to the next add_path.
  void remove_path(std::uint64_t now_us, std::uint32_t path);
  // The deadlock release of one path (TiCDC's ReleasePath), for a driver whose producer blocks
  // while the area is paused (no append comes to trip the breaker): its queue is discarded and
  // the path resets, as a circuit break does; counted as a release.
  void release_path(std::uint64_t now_us, std::uint32_t path);

  // A new stream for `path` starts at `start_seq` (sent by the upstream after a RESET).
  AppendStatus on_handshake(std::uint64_t now_us, std::uint32_t path, std::uint32_t epoch,
                            std::uint32_t start_seq);
  // Event `seq` of `path` arrives. `order` is comparable across the paths of one area (source
  // order). `inject_drop` drops it (fault injection, TiCDC InjectDropEvent).
  // `oversized`: the event belongs to a transaction whose bytes exceed H, on one path or spread
  // over several (the upstream knows it from its scan); `txn` names its transaction (any token
  // the driver gives all events of one transaction of the area). doc lets such a transaction
  // through alone, as TiCDC does: one transaction at a time (the area's admitted one), whose
  // bytes alone may take the area above H: for every other event the breaker makes the bytes
  // outside that transaction fit under H, never discarding a path holding its events (an
  // event of such a path that would not fit is dropped alone and its path resets once its
  // queue has drained). A path the breaker discarded twice from the same event, with nothing
  // delivered in between, has the transaction of its next re-read admitted alike: retrying the
  // same burst would be discarded again and again (a livelock).
  AppendStatus on_event(std::uint64_t now_us, std::uint32_t path, std::uint32_t epoch,
                        std::uint32_t seq, std::uint32_t size, std::uint32_t order,
                        bool inject_drop = false, bool oversized = false, std::uint32_t txn = 0);
  // The upstream's resolved signal for `path`: it has sent every event below `next_seq` in
  // `epoch`. Events that never arrived are a gap: the path resets.
  void on_resolved(std::uint64_t now_us, std::uint32_t path, std::uint32_t epoch,
                   std::uint32_t next_seq);
  // Markers (default on) are an optimisation: a discard or a drop leaves one in the queue, and
  // the dispatcher resets when it reaches it. Off, nothing is left: the dispatcher finds the gap
  // in the sequence numbers itself, TiCDC's own mechanism (the head of its queue, or with an
  // empty queue the next sequence the stream owes it, is not the one it must forward next).
  void set_drop_markers(bool on) noexcept {
    markers_ = on;
    plain_ = markers_ && fault_ == EngineFault::none;
  }
  bool drop_markers() const noexcept { return markers_; }
  // doc: `path` holds events of an oversized transaction (the breaker never discards it).
  bool holds_oversized(std::uint32_t path) const noexcept {
    return paths_[path].oversized_pending != 0;
  }

  bool can_pop(std::uint32_t path) const noexcept;
  std::uint32_t front_order(std::uint32_t path) const noexcept;  // requires a non-empty queue
  // Pops up to max_events / max_bytes (one event may overshoot the bytes) and never an event
  // whose order exceeds max_order; at least one event. The path is blocking until batch_done().
  Batch pop_batch(std::uint64_t now_us, std::uint32_t path, std::uint32_t max_events,
                  std::uint64_t max_bytes, std::uint32_t max_order = 0xffffffffu);
  // The events of the last pop_batch, in the order handed to the sink (their `order` values):
  // what the sink actually receives. Valid until the next pop_batch.
  std::span<const std::uint32_t> last_batch_orders() const noexcept { return popped_; }
  // The sink acknowledged `b`. When the path's queue then holds only the marker of a discard
  // (or of a gap), the dispatcher handles it now and starts the reset.
  void batch_done(std::uint64_t now_us, const Batch& b);

  void inject_fault(EngineFault f, std::uint32_t at = 1) noexcept;
  bool fault_fired() const noexcept { return fault_fired_; }

  // Liveness heartbeat of an area (the resolvedTs signal): refreshes the last append for the
  // ticdc deadlock detector and runs it.
  void on_signal(std::uint64_t now_us, std::uint32_t area);
  // Timers: lazy resumes that became allowed, ticdc deadlock detection.
  void on_tick(std::uint64_t now_us);
  // Closes open paused intervals into the counters (end of run).
  void finish(std::uint64_t now_us);

  // Actions emitted since the last clear, in order.
  const std::vector<FlowAction>& actions() const noexcept { return actions_; }
  void clear_actions() noexcept { actions_.clear(); }

  Policy policy() const noexcept { return policy_; }
  const FlowThresholds& thresholds() const noexcept { return t_; }
  std::size_t area_count() const noexcept { return areas_.size(); }
  std::size_t path_count() const noexcept { return paths_.size(); }
  std::uint32_t path_area(std::uint32_t p) const noexcept { return paths_[p].area; }
  const std::vector<std::uint32_t>& area_paths(std::uint32_t a) const { return areas_[a].paths; }

  std::uint64_t area_pending(std::uint32_t a) const noexcept { return areas_[a].pending; }
  std::uint64_t path_pending(std::uint32_t p) const noexcept { return paths_[p].pending; }
  std::size_t queued_events(std::uint32_t p) const noexcept;
  bool path_paused(std::uint32_t p) const noexcept { return paths_[p].paused; }
  bool area_paused(std::uint32_t a) const noexcept { return areas_[a].paused; }
  bool path_blocking(std::uint32_t p) const noexcept { return paths_[p].blocking; }
  std::uint32_t path_epoch(std::uint32_t p) const noexcept { return paths_[p].epoch; }
  std::uint32_t acked_seq(std::uint32_t p) const noexcept { return paths_[p].acked; }
  std::uint32_t forwarded_seq(std::uint32_t p) const noexcept { return paths_[p].forwarded; }
  bool awaiting_handshake(std::uint32_t p) const noexcept { return paths_[p].awaiting; }
  std::uint64_t path_last_feedback(std::uint32_t p) const noexcept {
    return paths_[p].last_feedback;
  }
  std::uint64_t area_last_feedback(std::uint32_t a) const noexcept {
    return areas_[a].last_feedback;
  }
  const std::vector<std::uint32_t>& paused_paths() const noexcept { return paused_paths_; }
  // A lazy resume is due (paused below the resume threshold, waiting for the feedback
  // interval): on_tick will send it, so the run is not stuck even if nothing is in flight.
  bool resume_scheduled(std::uint32_t area) const noexcept;
  // The path's queue ends in the marker of a discard or gap, not yet handled by the dispatcher.
  bool path_broken(std::uint32_t p) const noexcept { return paths_[p].broken; }
  std::uint64_t path_resume_bytes() const noexcept { return path_resume_bytes_; }
  std::uint64_t area_resume_bytes() const noexcept { return area_resume_bytes_; }
  std::uint64_t area_pause_bytes() const noexcept { return area_pause_bytes_; }
  std::uint64_t hard_limit_bytes() const noexcept { return hard_limit_; }
  // ticdc credits as the collector reports them.
  std::uint64_t area_credit(std::uint32_t a) const noexcept;
  std::uint64_t path_credit(std::uint32_t p) const noexcept;

  const PathCounters& path_counters(std::uint32_t p) const noexcept { return paths_[p].c; }
  const AreaCounters& area_counters(std::uint32_t a) const noexcept { return areas_[a].c; }

  // Accounting self-check: area totals equal the sum of their paths, queues match pending bytes.
  bool accounting_consistent() const noexcept;

 private:
  struct Entry {
    std::uint32_t size;  // accounted size
    std::uint32_t order;
    std::uint32_t epoch;
    std::uint32_t seq;
    bool oversized;  // part of the admitted transaction (doc)
  };
  struct PathState {
    std::uint32_t area = 0;
    std::uint32_t epoch = 0;
    std::uint32_t expect = 0;     // next sequence expected from the stream
    std::uint32_t forwarded = 0;  // next sequence to hand to the sink (queue front)
    std::uint32_t acked = 0;      // checkpoint: every seq below was acknowledged by the sink
    std::uint64_t pending = 0;
    std::vector<Entry> q;
    std::size_t qhead = 0;
    bool blocking = false;
    bool broken = false;  // a drop marker sits at the queue tail: reset when it reaches the head
    ResetCause broken_by = ResetCause::none;
    bool awaiting = false;  // reset sent, handshake not yet received
    bool paused = false;
    std::uint64_t paused_since = 0;
    std::uint64_t last_feedback = 0;
    bool had_feedback = false;
    std::uint64_t last_handled = 0;
    std::uint64_t oversized_pending = 0;  // queued bytes of the admitted transaction
    std::uint32_t break_seq = 0;          // `forwarded` at the last circuit break
    std::uint32_t breaks_at_seq = 0;      // circuit breaks in a row at break_seq
    PathCounters c;
  };
  struct AreaState {
    std::vector<std::uint32_t> paths;
    std::uint64_t pending = 0;
    bool paused = false;
    std::uint64_t paused_since = 0;
    std::uint64_t last_feedback = 0;
    bool had_feedback = false;
    std::uint64_t last_append = 0;
    std::uint64_t last_decrease = 0;
    std::uint64_t last_release = 0;
    bool released_once = false;
    bool admitting = false;            // above H with an oversized transaction let through
    std::uint64_t exempt_pending = 0;  // bytes of the admitted transaction queued (doc)
    bool has_admitted = false;
    bool admitted_by_retry = false;
    bool admission_counted = false;
    std::uint32_t admitted_txn = 0;
    AreaCounters c;
  };

  void emit(std::uint64_t now, ActionKind k, std::uint32_t area, std::uint32_t path,
            std::uint64_t bytes, std::uint32_t seq = 0, std::uint32_t count = 0,
            std::uint32_t epoch = 0);
  void discard_queue(std::uint64_t now, std::uint32_t p, ActionKind why);
  void mark_broken(std::uint64_t now, std::uint32_t p, ResetCause why);
  void start_reset(std::uint64_t now, std::uint32_t p);
  void circuit_breaker(std::uint64_t now, std::uint32_t area, std::uint32_t incoming,
                       std::uint32_t size);
  void check_head(std::uint64_t now, std::uint32_t p);
  void settle_admission(AreaState& a) noexcept;
  void note_break(std::uint32_t p);
  void release_memory(std::uint64_t now, std::uint32_t area);
  void check_deadlock(std::uint64_t now, std::uint32_t area);
  // pop_batch and batch_done, once per batch, come in two builds of one source: Plain (markers
  // on, no fault injected: every run of binlogctl replay) leaves out the tests that only a fault
  // or markers off can make true (per popped event: the gap compare); the other makes them all.
  // The public functions pick one by plain_.
  template <bool Plain>
  Batch pop_batch_impl(std::uint64_t now, std::uint32_t p, std::uint32_t max_events,
                       std::uint64_t max_bytes, std::uint32_t max_order);
  template <bool Plain>
  void batch_done_impl(std::uint64_t now, const Batch& b);
  // The checked builds, out of line (inlined beside the Plain one, they would make the compiler
  // stop inlining what the Plain one calls).
  Batch pop_batch_checked(std::uint64_t now, std::uint32_t p, std::uint32_t max_events,
                          std::uint64_t max_bytes, std::uint32_t max_order);
  void batch_done_checked(std::uint64_t now, const Batch& b);
  AppendStatus drop_event(std::uint64_t now, std::uint32_t p, std::uint32_t size, std::uint32_t seq,
                          ResetCause cause);
  void after_increase(std::uint64_t now, std::uint32_t p);  // doc only
  void after_decrease(std::uint64_t now, std::uint32_t p);
  bool resume_allowed(bool had, std::uint64_t last, std::uint64_t now) const noexcept;

  Policy policy_;
  FlowThresholds t_;
  std::uint64_t hard_limit_;
  std::uint64_t path_pause_bytes_, path_resume_bytes_, area_pause_bytes_, area_resume_bytes_;
  std::vector<PathState> paths_;
  std::vector<AreaState> areas_;
  std::vector<std::uint32_t> paused_paths_;
  std::vector<std::uint32_t> free_paths_;  // removed, to be given again
  std::vector<FlowAction> actions_;
  std::vector<std::uint32_t> popped_;
  EngineFault fault_ = EngineFault::none;
  std::uint32_t fault_at_ = 1;
  std::uint64_t pops_ = 0, appends_ = 0;
  std::uint32_t cur_order_ = kNoOrder;  // the event being handled (FlowAction::order)
  bool markers_ = true;
  bool plain_ = true;  // markers_ && fault_ == none
  bool fault_fired_ = false;
};

}  // namespace binlogctl
