// Flow-control engine: accounting, policies, reset protocol (collector side).
#include <binlogctl/flow_control.h>

#include <algorithm>
#include <cmath>

namespace binlogctl {

// ratio * quota as a byte threshold: "used >= ratio*Q" <=> "used >= ceil(ratio*Q)" for integer
// used. Products within 1e-9 of an integer are taken as that integer (0.2 * 100 == 20).
std::uint64_t ratio_bytes(double ratio, std::uint64_t quota) noexcept {
  if (!(ratio > 0)) return 0;
  const double x = ratio * static_cast<double>(quota);
  if (!(x < 1.8e19)) return ~std::uint64_t{0};  // never wrapped (options refuse such ratios)
  const double r = std::round(x);
  if (std::fabs(x - r) <= 1e-9 * std::max(1.0, x)) return static_cast<std::uint64_t>(r);
  return static_cast<std::uint64_t>(std::ceil(x));
}

std::string_view to_string(Policy p) noexcept {
  switch (p) {
    case Policy::doc:
      return "doc";
    case Policy::ticdc:
      return "ticdc";
    case Policy::none:
      return "none";
    case Policy::blocking:
      return "blocking";
  }
  return "?";
}

bool parse_policy(std::string_view text, Policy& out) noexcept {
  for (Policy p : {Policy::doc, Policy::ticdc, Policy::none, Policy::blocking}) {
    if (text == to_string(p)) {
      out = p;
      return true;
    }
  }
  return false;
}

std::string_view to_string(ActionKind k) noexcept {
  switch (k) {
    case ActionKind::pause_path:
      return "pause_path";
    case ActionKind::resume_path:
      return "resume_path";
    case ActionKind::pause_area:
      return "pause_area";
    case ActionKind::resume_area:
      return "resume_area";
    case ActionKind::release_path:
      return "release_path";
    case ActionKind::circuit_break:
      return "circuit_break";
    case ActionKind::drop_marker:
      return "drop_marker";
    case ActionKind::reset:
      return "reset";
    case ActionKind::gap_discard:
      return "gap_discard";
  }
  return "?";
}

std::string_view to_string(ResetCause c) noexcept {
  switch (c) {
    case ResetCause::none:
      return "none";
    case ResetCause::drop_marker:
      return "drop_marker";
    case ResetCause::circuit_break:
      return "circuit_break";
    case ResetCause::release_path:
      return "release_path";
    case ResetCause::gap:
      return "gap";
    case ResetCause::injected:
      return "injected";
    case ResetCause::hard_limit:
      return "hard_limit";
  }
  return "?";
}

std::uint64_t FlowThresholds::hard_limit() const noexcept {
  return ratio_bytes(hard_limit_ratio, quota);
}

std::uint64_t FlowThresholds::path_max() const noexcept {
  return std::max(ratio_bytes(path_credit_ratio, quota), path_credit_floor);
}

PauseChange hysteresis(bool paused, std::uint64_t used, std::uint64_t quota, double pause_ratio,
                       double resume_ratio) noexcept {
  if (!paused && used >= ratio_bytes(pause_ratio, quota)) return PauseChange::pause;
  if (paused && used < ratio_bytes(resume_ratio, quota)) return PauseChange::resume;
  return PauseChange::none;
}

PathThresholds calculate_v2_thresholds(std::size_t paths, double area_usage) noexcept {
  if (paths <= 1) return {0.8, 0.4};
  if (paths == 2) return {0.5, 0.25};
  PathThresholds base;
  if (area_usage <= 0.5) {
    base = {0.2, 0.1};
  } else if (area_usage <= 0.8) {
    base = {0.1, 0.05};
  } else if (area_usage <= 1.0) {
    base = {0.05, 0.01};
  } else if (area_usage <= 1.2) {
    base = {0.01, 0.005};
  } else if (area_usage <= 1.5) {
    base = {0.005, 0.001};
  } else {
    return {0, 0};  // no tier: pauses on any byte and never resumes (the edge case to avoid)
  }
  const double penalty = 1.0 - 0.5 / static_cast<double>(paths);
  return {base.pause / penalty, base.resume / penalty};
}

std::vector<std::uint32_t> select_release_paths(std::span<const ReleaseCandidate> candidates,
                                                std::uint64_t area_pending, double ratio,
                                                std::uint64_t min_bytes) {
  std::vector<ReleaseCandidate> sorted(candidates.begin(), candidates.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.last_handled != b.last_handled) return a.last_handled > b.last_handled;
    return a.path < b.path;
  });
  const double target = ratio * static_cast<double>(area_pending);
  std::vector<std::uint32_t> out;
  std::uint64_t selected = 0;
  for (const auto& c : sorted) {
    if (static_cast<double>(selected) >= target && !out.empty()) break;
    if (!c.blocking || c.pending < min_bytes) continue;
    out.push_back(c.path);
    selected += c.pending;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

FlowController::FlowController(Policy policy, const FlowThresholds& thresholds)
    : policy_(policy),
      t_(thresholds),
      hard_limit_(thresholds.hard_limit()),
      path_pause_bytes_(ratio_bytes(thresholds.path_pause, thresholds.quota)),
      path_resume_bytes_(ratio_bytes(thresholds.path_resume, thresholds.quota)),
      area_pause_bytes_(ratio_bytes(thresholds.area_pause, thresholds.quota)),
      area_resume_bytes_(ratio_bytes(thresholds.area_resume, thresholds.quota)) {}

std::uint32_t FlowController::add_area() {
  areas_.emplace_back();
  return static_cast<std::uint32_t>(areas_.size() - 1);
}

std::uint32_t FlowController::add_path(std::uint32_t area) {
  if (!free_paths_.empty()) {
    const std::uint32_t id = free_paths_.back();
    free_paths_.pop_back();
    paths_[id] = PathState{};
    paths_[id].area = area;
    areas_[area].paths.push_back(id);
    return id;
  }
  const auto id = static_cast<std::uint32_t>(paths_.size());
  paths_.emplace_back();
  paths_.back().area = area;
  areas_[area].paths.push_back(id);
  return id;
}

void FlowController::remove_path(std::uint64_t now, std::uint32_t p) {
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  a.pending -= s.pending;
  a.exempt_pending -= s.oversized_pending;
  if (s.paused) {
    s.c.paused_us += now - s.paused_since;
    std::erase(paused_paths_, p);
  }
  std::erase(a.paths, p);
  const std::uint32_t area = s.area;
  s = PathState{};
  s.area = area;
  free_paths_.push_back(p);
  a.last_decrease = now;
  settle_admission(a);
  after_decrease(now, p);  // the area may resume
}

void FlowController::release_path(std::uint64_t now, std::uint32_t p) {
  PathState& s = paths_[p];
  if (s.broken || s.awaiting) return;
  ++s.c.releases;
  ++areas_[s.area].c.releases;
  discard_queue(now, p, ActionKind::release_path);
  if (!markers_) {
    s.broken_by = ResetCause::release_path;
    if (!s.awaiting) start_reset(now, p);
  }
}

std::size_t FlowController::queued_events(std::uint32_t p) const noexcept {
  return paths_[p].q.size() - paths_[p].qhead;
}

std::uint64_t FlowController::area_credit(std::uint32_t a) const noexcept {
  const auto used = areas_[a].pending;
  return used >= t_.quota ? 0 : t_.quota - used;
}

std::uint64_t FlowController::path_credit(std::uint32_t p) const noexcept {
  const auto max = t_.path_max();
  const auto used = paths_[p].pending;
  return used >= max ? 0 : max - used;
}

void FlowController::emit(std::uint64_t now, ActionKind k, std::uint32_t area, std::uint32_t path,
                          std::uint64_t bytes, std::uint32_t seq, std::uint32_t count,
                          std::uint32_t epoch) {
  actions_.push_back(FlowAction{now, k, area, path, epoch, seq, count, bytes});
  actions_.back().order = cur_order_;
}

bool FlowController::resume_allowed(bool had, std::uint64_t last,
                                    std::uint64_t now) const noexcept {
  if (fault_ == EngineFault::early_resume) return true;
  return !had || now >= last + t_.feedback_interval_us;
}

AppendStatus FlowController::on_handshake(std::uint64_t now, std::uint32_t p, std::uint32_t epoch,
                                          std::uint32_t start_seq) {
  (void)now;
  PathState& s = paths_[p];
  if (epoch != s.epoch || !s.awaiting) {
    ++s.c.stale;
    return AppendStatus::stale_epoch;
  }
  s.awaiting = false;
  s.expect = start_seq;
  return AppendStatus::appended;
}

AppendStatus FlowController::on_event(std::uint64_t now, std::uint32_t p, std::uint32_t epoch,
                                      std::uint32_t seq, std::uint32_t size, std::uint32_t order,
                                      bool inject_drop, bool oversized, std::uint32_t txn) {
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  cur_order_ = order;
  if (epoch != s.epoch) {
    ++s.c.stale;
    return AppendStatus::stale_epoch;
  }
  if (s.awaiting) {
    ++a.c.protocol_errors;
    return AppendStatus::before_handshake;
  }
  if (s.broken) {
    ++s.c.discarded;
    return AppendStatus::discarded;
  }
  if (markers_) {
    if (seq != s.expect) {
      ++s.c.discarded;
      mark_broken(now, p, ResetCause::gap);
      return AppendStatus::gap;
    }
  } else if (!s.blocking && s.qhead == s.q.size() && seq != s.forwarded && seq >= s.forwarded) {
    // Without markers: an idle dispatcher (nothing queued, nothing in the sink) handles the
    // event at once, and sees the gap if it is not the next it must forward; otherwise the
    // event is queued as it came and the gap is seen when it reaches the head (check_head).
    s.expect = seq + 1;
    ++s.c.discarded;
    s.broken_by = ResetCause::gap;
    start_reset(now, p);
    return AppendStatus::gap;
  }
  s.expect = seq + 1;
  // An upstream that restarts further back than the checkpoint the reset named (a driver whose
  // upstream is a real server may): what was already forwarded is skipped, exactly once. (The
  // simulator's upstream restarts at the checkpoint itself, and the dispatcher resets only when
  // the sink holds nothing, so its runs never meet this.)
  if (seq < s.forwarded) {
    ++s.c.filtered;
    return AppendStatus::filtered;
  }
  a.last_append = now;
  if (policy_ == Policy::ticdc) {
    check_deadlock(now, s.area);
    const bool at_hard_limit = a.pending >= hard_limit_;
    if (at_hard_limit) release_memory(now, s.area);
    // The release may have discarded this very path: its stream is broken (a marker waits in
    // the queue, or the reset already went out), so this event of the old stream is dropped and
    // must not become a second marker that resets the path again.
    if (s.broken || s.epoch != epoch) {
      ++s.c.discarded;
      return AppendStatus::discarded;
    }
    if (at_hard_limit) return drop_event(now, p, size, seq, ResetCause::hard_limit);
  }
  if (inject_drop) return drop_event(now, p, size, seq, ResetCause::injected);
  // doc: a transaction larger than H, or the re-read of a path discarded twice from the same
  // event with nothing delivered since (a third try would meet the same burst), goes through
  // alone: one transaction at a time (the area's admitted one), whose bytes alone may take the
  // area above H.
  const bool retry =
      policy_ == Policy::doc && !oversized && s.breaks_at_seq >= 2 && s.break_seq == s.forwarded;
  bool exempt = false;
  if (policy_ == Policy::doc) {
    if (a.has_admitted && a.admitted_txn == txn) {
      exempt = true;
    } else if ((oversized || retry) && a.exempt_pending == 0) {
      exempt = true;  // a new admission (the previous transaction's bytes are all gone)
    }
    if (fault_ == EngineFault::path_exemption && s.oversized_pending != 0) {
      exempt = true;  // the old rule: a whole path let through with the transaction
      fault_fired_ |= !(oversized || retry);
    }
  }
  if (policy_ == Policy::doc && !exempt && a.pending - a.exempt_pending + size > hard_limit_) {
    circuit_breaker(now, s.area, p, size);
    if (s.broken || s.epoch != epoch) {  // this very path was the victim: its stream restarts
      ++s.c.discarded;
      return AppendStatus::discarded;
    }
    if (a.pending - a.exempt_pending + size > hard_limit_) {
      // Only paths that hold the admitted transaction hold bytes, this one among them: the
      // event is dropped alone (its queue keeps the transaction), and the path resets once
      // its queue has drained.
      ++a.c.circuit_breaks;
      ++s.c.circuit_breaks;
      ++s.c.discarded;
      note_break(p);
      emit(now, ActionKind::drop_marker, s.area, p, size, seq, 1);
      actions_.back().cause = ResetCause::circuit_break;
      if (markers_) {
        mark_broken(now, p, ResetCause::circuit_break);
      } else {
        check_head(now, p);
      }
      return AppendStatus::marker;
    }
  }
  ++appends_;
  if (fault_ == EngineFault::undercount && appends_ >= fault_at_) {
    fault_fired_ = true;
    size = std::max<std::uint32_t>(size / 4, 1);
  }
  if (exempt) {
    if (!a.has_admitted || a.admitted_txn != txn) {
      a.has_admitted = true;
      a.admitted_txn = txn;
      a.admitted_by_retry = !oversized;
      a.admission_counted = false;
    }
    s.oversized_pending += size;
    a.exempt_pending += size;
  }
  s.q.push_back(Entry{size, order, epoch, seq, exempt});
  s.pending += size;
  a.pending += size;
  s.c.peak_pending = std::max(s.c.peak_pending, s.pending);
  a.c.peak_pending = std::max(a.c.peak_pending, a.pending);
  if (policy_ == Policy::doc && a.pending > hard_limit_ && !a.admitting && a.exempt_pending != 0) {
    a.admitting = true;          // above H with the admitted transaction
    if (!a.admission_counted) {  // counted once per transaction
      a.admission_counted = true;
      if (a.admitted_by_retry) {
        ++a.c.retry_admissions;
      } else {
        ++a.c.oversized_admissions;
      }
    }
  }
  if (policy_ == Policy::doc) after_increase(now, p);
  return AppendStatus::appended;
}

// An incoming event dropped (`cause`: injected, or ticdc at the hard limit): a marker stands for
// it, or without markers the dispatcher finds its sequence broken.
AppendStatus FlowController::drop_event(std::uint64_t now, std::uint32_t p, std::uint32_t size,
                                        std::uint32_t seq, ResetCause cause) {
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  ++s.c.drop_markers;
  ++a.c.drop_markers;
  ++s.c.discarded;
  emit(now, ActionKind::drop_marker, s.area, p, size, seq, 1);
  actions_.back().cause = cause;
  if (markers_) {
    mark_broken(now, p, ResetCause::drop_marker);
  } else {
    check_head(now, p);  // dropped: the dispatcher finds its sequence broken
  }
  return AppendStatus::marker;
}

// Without markers: the dispatcher, when it can handle its queue (not blocking, no reset open),
// compares the sequence it must forward next with what it holds: the head's sequence, or with
// an empty queue the next one the stream owes it. A difference is a gap (events discarded or
// lost on the way): it drops what follows the gap and resets.
void FlowController::check_head(std::uint64_t now, std::uint32_t p) {
  PathState& s = paths_[p];
  if (s.blocking || s.awaiting || s.broken) return;
  const bool queued = s.qhead < s.q.size();
  if (queued ? s.q[s.qhead].seq == s.forwarded : s.expect == s.forwarded) return;
  if (queued) {
    AreaState& a = areas_[s.area];
    const auto count = static_cast<std::uint32_t>(s.q.size() - s.qhead);
    const std::uint32_t handling = cur_order_;
    cur_order_ = s.q[s.qhead].order;
    emit(now, ActionKind::gap_discard, s.area, p, s.pending, s.q[s.qhead].seq, count);
    actions_.back().area_pending = a.pending;
    cur_order_ = handling;
    s.c.discarded += count;
    a.pending -= s.pending;
    a.exempt_pending -= s.oversized_pending;
    s.pending = 0;
    s.oversized_pending = 0;
    s.q.clear();
    s.qhead = 0;
    a.last_decrease = now;
    settle_admission(a);
    after_decrease(now, p);
  }
  s.broken_by = ResetCause::gap;
  start_reset(now, p);
}

void FlowController::on_resolved(std::uint64_t now, std::uint32_t p, std::uint32_t epoch,
                                 std::uint32_t next_seq) {
  PathState& s = paths_[p];
  if (epoch != s.epoch || s.awaiting || s.broken || next_seq <= s.expect) return;
  // Events up to next_seq were sent and never arrived.
  if (markers_) {
    mark_broken(now, p, ResetCause::gap);
  } else {
    s.expect = next_seq;
    check_head(now, p);
  }
}

void FlowController::settle_admission(AreaState& a) noexcept {
  if (a.admitting && a.pending <= hard_limit_) a.admitting = false;
}

bool FlowController::can_pop(std::uint32_t p) const noexcept {
  const PathState& s = paths_[p];
  return !s.blocking && s.qhead < s.q.size();
}

std::uint32_t FlowController::front_order(std::uint32_t p) const noexcept {
  const PathState& s = paths_[p];
  return s.q[s.qhead].order;
}

template <bool Plain>
[[gnu::always_inline]] inline Batch FlowController::pop_batch_impl(std::uint64_t now,
                                                                   std::uint32_t p,
                                                                   std::uint32_t max_events,
                                                                   std::uint64_t max_bytes,
                                                                   std::uint32_t max_order) {
  PathState& s = paths_[p];
  Batch b;
  b.path = p;
  b.epoch = s.epoch;
  b.first_seq = s.forwarded;
  b.first_order = s.q[s.qhead].order;
  cur_order_ = b.first_order;
  std::size_t i = s.qhead;
  const std::size_t end = s.q.size();
  std::uint32_t n = 0;
  std::uint64_t bytes = 0;
  std::uint64_t oversized_bytes = 0;
  bool stale = false;
  popped_.clear();
  while (i < end && n < max_events && bytes < max_bytes) {
    const Entry& e = s.q[i];
    if (n > 0 && e.order > max_order) break;
    // A gap (markers off): the dispatcher stops at it. (With markers the queue holds consecutive
    // sequences from `forwarded`: on_event appends only the expected one, a gap breaks the
    // stream, and a reset starts with an empty queue; so Plain has no gap to look for.)
    if (!Plain && e.seq != b.first_seq + n) break;
    bytes += e.size;
    if (e.oversized) oversized_bytes += e.size;
    stale |= e.epoch != s.epoch;
    popped_.push_back(e.order);
    ++n;
    ++i;
  }
  std::uint64_t released = bytes;
  if (!Plain && fault_ != EngineFault::none && fault_ != EngineFault::undercount && !fault_fired_ &&
      ++pops_ >= fault_at_) {
    switch (fault_) {
      case EngineFault::lose:
        popped_.erase(popped_.begin());
        fault_fired_ = true;
        break;
      case EngineFault::duplicate:
        popped_.push_back(popped_.front());
        fault_fired_ = true;
        break;
      case EngineFault::reorder:
        if (popped_.size() >= 2) {
          std::swap(popped_[0], popped_[1]);
          fault_fired_ = true;
        }
        break;
      case EngineFault::leak:
        released -= s.q[s.qhead].size;
        fault_fired_ = true;
        break;
      default:
        break;
    }
  }
  s.qhead = i;
  if (s.qhead == s.q.size()) {
    s.q.clear();
    s.qhead = 0;
  } else if (s.qhead >= 4096 && s.qhead * 2 >= s.q.size()) {
    s.q.erase(s.q.begin(), s.q.begin() + static_cast<std::ptrdiff_t>(s.qhead));
    s.qhead = 0;
  }
  b.count = n;
  b.bytes = bytes;
  b.stale = stale;
  s.forwarded += n;
  s.pending -= released;
  s.oversized_pending -= oversized_bytes;
  AreaState& a = areas_[s.area];
  a.pending -= released;
  a.exempt_pending -= oversized_bytes;
  settle_admission(a);
  s.blocking = true;
  s.last_handled = b.first_order;
  a.last_decrease = now;
  if (policy_ == Policy::doc) after_decrease(now, p);  // (it acts under doc only)
  // A marker now at the head is handled by the dispatcher once this batch is acknowledged
  // (batch_done): a blocking path handles nothing.
  return b;
}

template <bool Plain>
[[gnu::always_inline]] inline void FlowController::batch_done_impl(std::uint64_t now,
                                                                   const Batch& b) {
  PathState& s = paths_[b.path];
  s.blocking = false;
  s.acked = std::max(s.acked, b.first_seq + b.count);
  if (s.broken && s.qhead == s.q.size()) {
    if (!Plain && fault_ == EngineFault::stuck_broken) {
      fault_fired_ = true;  // the marker is never handled
      return;
    }
    start_reset(now, b.path);
  }
  if (!Plain && !markers_) check_head(now, b.path);
}

bool FlowController::resume_scheduled(std::uint32_t area) const noexcept {
  if (policy_ != Policy::doc) return false;
  const AreaState& a = areas_[area];
  if (a.paused && a.pending < area_resume_bytes_) return true;
  for (std::uint32_t p : paused_paths_) {
    if (paths_[p].area == area && paths_[p].pending < path_resume_bytes_) return true;
  }
  return false;
}

void FlowController::inject_fault(EngineFault f, std::uint32_t at) noexcept {
  fault_ = f;
  fault_at_ = at == 0 ? 1 : at;
  plain_ = markers_ && fault_ == EngineFault::none;
  // The audit's variants of the policy's own rules (#32): fixed for the whole run.
  path_pause_bytes_ = ratio_bytes(f == EngineFault::path_pause_60 ? 0.6 : t_.path_pause, t_.quota);
  path_resume_bytes_ =
      f == EngineFault::early_resume ? path_pause_bytes_ : ratio_bytes(t_.path_resume, t_.quota);
}

void FlowController::after_increase(std::uint64_t now, std::uint32_t p) {  // doc (the caller tests)
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  if (!s.paused && s.pending >= path_pause_bytes_) {  // fast pause
    if (fault_ == EngineFault::no_path_pause) [[unlikely]] {
      fault_fired_ = true;
    } else {
      s.paused = true;
      s.paused_since = now;
      s.last_feedback = now;
      s.had_feedback = true;
      ++s.c.pauses;
      paused_paths_.push_back(p);
      emit(now, ActionKind::pause_path, s.area, p, s.pending);
    }
  }
  if (!a.paused && a.pending >= area_pause_bytes_) {
    if (fault_ == EngineFault::no_area_pause) [[unlikely]] {
      fault_fired_ = true;
    } else {
      a.paused = true;
      a.paused_since = now;
      a.last_feedback = now;
      a.had_feedback = true;
      ++a.c.pauses;
      emit(now, ActionKind::pause_area, s.area, kNoPath, a.pending);
    }
  }
}

void FlowController::after_decrease(std::uint64_t now, std::uint32_t p) {
  if (policy_ != Policy::doc) return;
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  if (s.paused && s.pending < path_resume_bytes_ &&
      resume_allowed(s.had_feedback, s.last_feedback, now)) {
    s.paused = false;
    s.last_feedback = now;
    ++s.c.resumes;
    s.c.paused_us += now - s.paused_since;
    if (now - s.paused_since < 2 * t_.feedback_interval_us) ++s.c.flaps;
    auto it = std::find(paused_paths_.begin(), paused_paths_.end(), p);
    if (it != paused_paths_.end()) {
      *it = paused_paths_.back();
      paused_paths_.pop_back();
    }
    emit(now, ActionKind::resume_path, s.area, p, s.pending);
  }
  if (a.paused && a.pending < area_resume_bytes_ &&
      resume_allowed(a.had_feedback, a.last_feedback, now)) {
    a.paused = false;
    a.last_feedback = now;
    ++a.c.resumes;
    a.c.paused_us += now - a.paused_since;
    if (now - a.paused_since < 2 * t_.feedback_interval_us) ++a.c.flaps;
    emit(now, ActionKind::resume_area, s.area, kNoPath, a.pending);
  }
}

// The stream of `p` is broken: a marker (standing for the dropped events) goes to the tail of its
// queue. The dispatcher handles it, sees that the sequence is broken and starts the reset, when
// it reaches the head of a path that is not blocking: at once, or when the sink acknowledges the
// batch in flight (batch_done). Events arriving meanwhile are dropped (they follow the gap).
void FlowController::mark_broken(std::uint64_t now, std::uint32_t p, ResetCause why) {
  PathState& s = paths_[p];
  if (!s.broken) s.broken_by = why;
  s.broken = true;
  if (s.qhead == s.q.size() && !s.blocking) {
    if (fault_ == EngineFault::stuck_broken) {
      fault_fired_ = true;
      return;
    }
    start_reset(now, p);
  }
}

void FlowController::start_reset(std::uint64_t now, std::uint32_t p) {
  PathState& s = paths_[p];
  s.broken = false;
  s.awaiting = true;
  ++s.epoch;
  ++s.c.resets;
  ++areas_[s.area].c.resets;
  emit(now, ActionKind::reset, s.area, p, 0, s.acked, 0, s.epoch);
  actions_.back().cause = s.broken_by;
  s.broken_by = ResetCause::none;
}

void FlowController::discard_queue(std::uint64_t now, std::uint32_t p, ActionKind why) {
  PathState& s = paths_[p];
  AreaState& a = areas_[s.area];
  const auto count = static_cast<std::uint32_t>(s.q.size() - s.qhead);
  const std::uint64_t bytes = s.pending;
  const std::uint32_t handling = cur_order_;
  if (count != 0) cur_order_ = s.q[s.qhead].order;
  emit(now, why, s.area, p, bytes, s.forwarded, count);
  actions_.back().area_pending = a.pending;
  s.c.discarded += count;
  s.q.clear();
  s.qhead = 0;
  a.pending -= bytes;
  a.exempt_pending -= s.oversized_pending;
  s.pending = 0;
  s.oversized_pending = 0;
  a.last_decrease = now;
  settle_admission(a);
  // The stream is broken: a marker replaces the discarded events (TiCDC's OnDrop); the reset
  // starts when the dispatcher reaches it. Later events of this epoch are dropped until then.
  // Without markers the dispatcher finds the gap in the sequence itself.
  if (markers_) {
    mark_broken(
        now, p,
        why == ActionKind::release_path ? ResetCause::release_path : ResetCause::circuit_break);
  }
  after_decrease(now, p);
  if (!markers_) check_head(now, p);
  cur_order_ = handling;
}

void FlowController::note_break(std::uint32_t p) {
  PathState& s = paths_[p];
  if (s.breaks_at_seq != 0 && s.break_seq == s.forwarded) {
    ++s.breaks_at_seq;
  } else {
    s.break_seq = s.forwarded;
    s.breaks_at_seq = 1;
  }
}

// doc: discards the queue of the path with the most pending bytes (ties: the lower id), until
// the bytes outside the admitted transaction make room for `size`. A path holding bytes of the
// admitted transaction is never discarded (the transaction goes through alone).
void FlowController::circuit_breaker(std::uint64_t now, std::uint32_t area, std::uint32_t incoming,
                                     std::uint32_t size) {
  AreaState& a = areas_[area];
  while (a.pending - a.exempt_pending + size > hard_limit_) {
    std::uint32_t victim = kNoPath;
    std::uint64_t most = 0;
    for (std::uint32_t p : a.paths) {  // longest path; ties keep the lower id
      if (paths_[p].oversized_pending == 0 && paths_[p].pending > most) {
        most = paths_[p].pending;
        victim = p;
      }
    }
    if (victim == kNoPath) {
      // Only the admitted transaction's paths hold bytes: an event of another path discards
      // its own (empty) stream and resets; one of those paths: on_event drops it alone.
      if (paths_[incoming].oversized_pending == 0 && !paths_[incoming].broken) {
        ++a.c.circuit_breaks;
        ++paths_[incoming].c.circuit_breaks;
        note_break(incoming);
        discard_queue(now, incoming, ActionKind::circuit_break);
      }
      return;
    }
    ++a.c.circuit_breaks;
    ++paths_[victim].c.circuit_breaks;
    note_break(victim);
    discard_queue(now, victim, ActionKind::circuit_break);
    if (victim == incoming) return;
  }
}

void FlowController::release_memory(std::uint64_t now, std::uint32_t area) {
  AreaState& a = areas_[area];
  if (a.released_once && now < a.last_release + t_.release_interval_us) return;
  a.released_once = true;
  a.last_release = now;
  std::vector<ReleaseCandidate> cands;
  cands.reserve(a.paths.size());
  for (std::uint32_t p : a.paths) {
    const PathState& s = paths_[p];
    cands.push_back(ReleaseCandidate{p, s.pending, s.last_handled, s.blocking});
  }
  const auto chosen =
      select_release_paths(cands, a.pending, t_.release_ratio, t_.release_min_bytes);
  if (!chosen.empty()) ++a.c.release_rounds;
  for (std::uint32_t p : chosen) {
    ++a.c.releases;
    ++paths_[p].c.releases;
    discard_queue(now, p, ActionKind::release_path);
  }
  a.last_decrease = now;
}

void FlowController::check_deadlock(std::uint64_t now, std::uint32_t area) {
  AreaState& a = areas_[area];
  const bool recent_append = now < a.last_append + t_.deadlock_window_us;
  const bool no_decrease = now > a.last_decrease + t_.deadlock_window_us;
  const double usage = static_cast<double>(a.pending) / static_cast<double>(t_.quota);
  if (recent_append && no_decrease && usage > t_.release_ratio) release_memory(now, area);
}

void FlowController::on_signal(std::uint64_t now, std::uint32_t area) {
  areas_[area].last_append = now;
  if (policy_ == Policy::ticdc) check_deadlock(now, area);
}

void FlowController::on_tick(std::uint64_t now) {
  if (policy_ != Policy::doc) return;
  cur_order_ = kNoOrder;
  // Lazy resumes that were suppressed by the feedback interval (without this timer a path that
  // drained while its resume was suppressed would stay paused: the stuck-paused bug).
  for (std::size_t i = paused_paths_.size(); i-- > 0;) {
    if (i < paused_paths_.size()) after_decrease(now, paused_paths_[i]);
  }
  for (std::uint32_t a = 0; a < areas_.size(); ++a) {
    if (areas_[a].paused && !areas_[a].paths.empty()) after_decrease(now, areas_[a].paths.front());
  }
}

void FlowController::finish(std::uint64_t now) {
  for (auto& s : paths_) {
    if (s.paused) {
      s.c.paused_us += now - s.paused_since;
      s.paused_since = now;
    }
  }
  for (auto& a : areas_) {
    if (a.paused) {
      a.c.paused_us += now - a.paused_since;
      a.paused_since = now;
    }
  }
}

bool FlowController::accounting_consistent() const noexcept {
  for (const auto& a : areas_) {
    std::uint64_t sum = 0;
    for (std::uint32_t p : a.paths) {
      const PathState& s = paths_[p];
      std::uint64_t q = 0;
      for (std::size_t i = s.qhead; i < s.q.size(); ++i) q += s.q[i].size;
      if (q != s.pending) return false;
      sum += s.pending;
    }
    if (sum != a.pending) return false;
  }
  return true;
}

// The public entry points: Plain unless markers are off or a fault is injected.
Batch FlowController::pop_batch(std::uint64_t now, std::uint32_t p, std::uint32_t max_events,
                                std::uint64_t max_bytes, std::uint32_t max_order) {
  if (!plain_) [[unlikely]]
    return pop_batch_checked(now, p, max_events, max_bytes, max_order);
  return pop_batch_impl<true>(now, p, max_events, max_bytes, max_order);
}

[[gnu::noinline]] Batch FlowController::pop_batch_checked(std::uint64_t now, std::uint32_t p,
                                                          std::uint32_t max_events,
                                                          std::uint64_t max_bytes,
                                                          std::uint32_t max_order) {
  return pop_batch_impl<false>(now, p, max_events, max_bytes, max_order);
}

void FlowController::batch_done(std::uint64_t now, const Batch& b) {
  if (!plain_) [[unlikely]] {
    batch_done_checked(now, b);
    return;
  }
  batch_done_impl<true>(now, b);
}

[[gnu::noinline]] void FlowController::batch_done_checked(std::uint64_t now, const Batch& b) {
  batch_done_impl<false>(now, b);
}

}  // namespace binlogctl
