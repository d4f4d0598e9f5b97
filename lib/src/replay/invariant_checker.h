// The independent checks of replay's simulator (simulator.h), and the violations they find.
// What it owns:
//   - the mirror: the simulator's own copy of what the engine holds, per path (an event enters
//     when the engine says it was appended, leaves when its sink receives it or the engine
//     reports a discard), in the source's sizes, so the memory bound does not rest on the
//     engine's accounting;
//   - doc's own rules: the pause thresholds computed from the options (not the engine's), since
//     when a path or an area holds at least its pause threshold, the resume thresholds and the
//     pause/resume alternation of the control messages, one reset per gap;
//   - the memory bound and what made each area's peak (why its event was sent, the transaction
//     holding the most);
//   - the violations, each with the trace ring's last records, written to the timeline and the
//     run hash, and the run's stop flag under --stop-on-violation.
// The Simulator tells it what happens (sent, appended, taken by a sink, discarded, an action);
// the checks that need the simulator's sinks, links or upstream stay in the Simulator and report
// through violate().
#pragma once

#include <binlogctl/replay.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "replay/replay_recorder.h"
#include "replay/sim_base.h"

namespace binlogctl::replay_detail {

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

class InvariantChecker {
 public:
  // fc: the engine checked; stop: the run's stop flag (a violation sets it under
  // --stop-on-violation); rec: the run hash takes each violation.
  InvariantChecker(const ReplayOptions& o, const ReplayInput& in, const FlowController& fc,
                   TimelineWriter* tl, ReplayRecorder& rec, bool& stop)
      : o_(o), in_(in), fc_(fc), tl_(tl), rec_(rec), stop_(stop) {}
  void setup();

  // ---- the upstream
  // doc: event g belongs to a transaction larger than the area can hold within H.
  bool oversized(std::uint32_t g) const noexcept {
    return !oversized_.empty() && oversized_[g] != 0;
  }
  void sent(std::uint32_t g, std::uint8_t why) noexcept { sent_why_[g] = why; }
  // doc: a path or an area is at or above its pause threshold (check_pause_rules is due).
  bool rules_due() const noexcept { return above_ != 0; }
  // doc: no path and no area stays unpaused at or above its pause threshold for longer than the
  // control link takes to carry the pause (its delay plus its jitter): checked at the upstream,
  // which is what has to stop. path_paused(p) / area_paused(a): the upstream has stopped it.
  template <class PathPaused, class AreaPaused>
  void check_pause_rules(std::uint64_t now, PathPaused&& path_paused, AreaPaused&& area_paused) {
    const std::uint64_t bound = o_.control_delay_us + o_.control_jitter_us;
    for (std::uint32_t p = 0; p < above_since_.size() && !stop_; ++p) {
      if (above_since_[p] == kInf || path_paused(p) || now <= above_since_[p] + bound) continue;
      path_pause_violation(now, p, bound);
    }
    for (std::uint32_t a = 0; a < area_above_since_.size() && !stop_; ++a) {
      if (area_above_since_[a] == kInf || area_paused(a) || now <= area_above_since_[a] + bound) {
        continue;
      }
      area_pause_violation(now, a, bound);
    }
  }

  // ---- the mirror
  // The engine appended event g (size bytes) to path p of area a: returns what the area holds.
  // (Once per appended event, in on_data's loop: GCC 12 left it out of line, which cost 3% of
  // run_replay.)
  [[gnu::always_inline]] std::uint64_t append(std::uint64_t now, std::uint32_t a, std::uint32_t p,
                                              std::uint32_t g, std::uint32_t size) {
    mq_[p].q.push_back(MirrorEntry{g});
    std::uint64_t& held = mq_bytes_[a];
    held += size;
    if (doc_) {
      std::uint64_t& path_held = mqp_bytes_[p];
      if (path_held < path_pause_b_ && path_held + size >= path_pause_b_) {
        above_since_[p] = now;
        ++above_;
      }
      path_held += size;
      if (held >= area_pause_b_ && held - size < area_pause_b_) {
        area_above_since_[a] = now;
        ++above_;
      }
    }
    const bool new_peak = held > mq_peak_[a];
    if (new_peak) {
      mq_peak_[a] = held;
      peak_why_[a] = sent_why_[g];
      peak_time_[a] = now;
    }
    if (held > mem_limit_) over_bound(now, a, g, new_peak);
    return held;
  }
  // The hand-off's fast path takes path p's events from the front of its mirror itself, then
  // releases their bytes.
  MirrorQueue& mirror(std::uint32_t p) noexcept { return mq_[p]; }
  void release(std::uint32_t p, std::uint64_t bytes) {
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
  // The sink of path p received event g out of the fast path: it leaves the mirror if held there.
  void take(std::uint32_t p, std::uint32_t g);
  // The engine discarded path x.path's queue: everything the mirror holds for it leaves it
  // (flagged in `discarded`). Returns the source bytes it held.
  std::uint64_t discard(std::uint64_t now, const FlowAction& x,
                        std::vector<std::uint8_t>& discarded);
  std::size_t mirror_events(std::uint32_t p) const noexcept { return mq_[p].size(); }
  std::uint64_t mirror_bytes(std::uint32_t a) const noexcept { return mq_bytes_[a]; }

  // ---- the control protocol (the engine's actions, concerning event g or kNoEvent)
  // A pause or a resume of a path or an area: false when a violation stops the run.
  bool control(std::uint64_t now, const FlowAction& x, std::uint32_t g);
  // A reset of path x.path to epoch x.epoch.
  void reset(std::uint64_t now, const FlowAction& x, std::uint32_t g);
  void handshake(std::uint32_t p) noexcept { reset_open_[p] = 0; }

  // ---- violations
  void trace(std::uint64_t now, char what, std::uint8_t kind, std::uint32_t p, std::uint32_t a,
             std::uint32_t b) {
    trace_[trace_pos_++ % trace_.size()] = TraceRec{now, what, kind, p, a, b};
  }
  // A violation concerning path p (kNoPath: none) and event g (kNoEvent: none).
  void violate(std::uint64_t now, std::string check, std::string msg, std::uint32_t p = kNoPath,
               std::uint32_t g = kNoEvent);
  // The upstream read past break b of the source's context, at event g (kNoEvent: the end).
  void source_break(std::uint64_t now, const SourceBreak& b, std::uint32_t g);
  std::string where(std::uint32_t p, std::uint32_t seq) const;
  bool violated() const noexcept { return !violations_.empty(); }

  // ---- the result
  // doc: the pauses still open at the end (a violation when stuck).
  void open_pauses(std::uint64_t now, ReplayResult& r);
  // Area a's peak: how far above the quota and the hard limit, and why.
  void peak_stats(std::uint32_t a, const AreaCounters& c, std::uint64_t hard_limit,
                  AreaStats& s) const;
  std::vector<Violation> take_violations() { return std::move(violations_); }

 private:
  [[gnu::noinline, gnu::cold]] void over_bound(std::uint64_t now, std::uint32_t a, std::uint32_t g,
                                               bool new_peak);
  void path_pause_violation(std::uint64_t now, std::uint32_t p, std::uint64_t bound);
  void area_pause_violation(std::uint64_t now, std::uint32_t a, std::uint64_t bound);

  const ReplayOptions& o_;
  const ReplayInput& in_;
  const FlowController& fc_;
  TimelineWriter* tl_;
  ReplayRecorder& rec_;
  bool& stop_;
  std::vector<MirrorQueue> mq_;           // per path
  std::vector<std::uint64_t> mq_bytes_;   // per area
  std::vector<std::uint64_t> mqp_bytes_;  // per path (doc)
  // doc: the policy's own thresholds, computed here from the options (not the engine's), and
  // since when a path / area holds at least its pause threshold (kInf: below it).
  std::uint64_t path_pause_b_ = kInf, path_resume_b_ = 0, area_pause_b_ = kInf, area_resume_b_ = 0;
  std::vector<std::uint64_t> above_since_, area_above_since_;
  std::uint32_t above_ = 0;  // paths and areas at or above their pause threshold
  bool doc_ = false;
  std::uint64_t mem_limit_ = kInf;
  // doc: per area, an event of the transaction holding the most bytes at the peak above H and
  // those bytes; scratch: per transaction (first event seen, bytes held)
  std::vector<std::uint32_t> peak_txn_;
  std::vector<std::uint64_t> peak_txn_bytes_;
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> txn_bytes_;
  std::vector<std::uint64_t> mq_peak_;  // per area
  std::vector<std::uint8_t> sent_why_;  // per event: SentWhy of its last send
  // doc: per event, 1 when its transaction's bytes on its path exceed H (empty: none does)
  std::vector<std::uint8_t> oversized_;
  std::vector<std::uint8_t> peak_why_;    // per area: SentWhy of the event that made the peak
  std::vector<std::uint64_t> peak_time_;  // per area
  std::vector<std::uint8_t> ctl_paused_;  // pause/resume alternation, per path (+ areas at end)
  std::vector<std::uint32_t> last_reset_epoch_;  // per path
  std::vector<std::uint8_t> reset_open_;         // per path: reset sent, no handshake yet
  std::vector<TraceRec> trace_;
  std::size_t trace_pos_ = 0;
  std::vector<Violation> violations_;
};

}  // namespace binlogctl::replay_detail
