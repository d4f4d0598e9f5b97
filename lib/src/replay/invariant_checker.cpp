// The independent checks of replay's simulator and their violations (invariant_checker.h).
#include "replay/invariant_checker.h"

#include <fmt/format.h>

#include <algorithm>

namespace binlogctl::replay_detail {

void InvariantChecker::setup() {
  const std::uint64_t hard_limit = fc_.hard_limit_bytes();
  const std::size_t n = in_.events.size();
  const std::size_t paths = in_.path_names.size(), areas = in_.areas.size();
  trace_.resize(std::max<std::size_t>(o_.trace_lines, 1));
  // SPEC: "memory never above the hard limit". doc discards before an append would pass H, so
  // its bound is H itself; blocking admits into a non-empty queue only what fits in Q, and one
  // event alone (whatever its size) into an empty one; ticdc, like TiCDC, tests H before the
  // append (usage >= 1.5 Q makes a marker), so the event that crosses H is in: H + one event.
  if (o_.policy == Policy::doc) {
    mem_limit_ = hard_limit;
  } else if (o_.policy == Policy::ticdc) {
    mem_limit_ = hard_limit + in_.max_event_size;
  } else if (o_.policy == Policy::blocking) {
    mem_limit_ = std::max<std::uint64_t>(o_.thresholds.quota, in_.max_event_size);
  }
  mq_.resize(paths);
  ctl_paused_.assign(paths + areas, 0);
  last_reset_epoch_.assign(paths, 0);
  reset_open_.assign(paths, 0);
  mq_bytes_.assign(areas, 0);
  mqp_bytes_.assign(paths, 0);
  above_since_.assign(paths, kInf);
  area_above_since_.assign(areas, kInf);
  peak_txn_.assign(areas, kNoEvent);
  peak_txn_bytes_.assign(areas, 0);
  doc_ = o_.policy == Policy::doc;
  if (doc_) {
    const FlowThresholds& t = o_.thresholds;
    path_pause_b_ = ratio_bytes(t.path_pause, t.quota);
    path_resume_b_ = ratio_bytes(t.path_resume, t.quota);
    area_pause_b_ = ratio_bytes(t.area_pause, t.quota);
    area_resume_b_ = ratio_bytes(t.area_resume, t.quota);
  }
  mq_peak_.assign(areas, 0);
  peak_why_.assign(areas, kSentFree);
  peak_time_.assign(areas, 0);
  sent_why_.assign(n, kSentFree);
  if (doc_) {  // the oversized-transaction rule needs them
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
}

// ---- the upstream

void InvariantChecker::path_pause_violation(std::uint64_t now, std::uint32_t p,
                                            std::uint64_t bound) {
  violate(
      now, "path_pause",
      fmt::format("path {} holds {} bytes, at or above its pause threshold {} (--path-pause "
                  "{} of the quota {}) since {:.3f} ms, and the upstream still reads it "
                  "{:.3f} ms later (the control link takes {:.3f} ms)",
                  in_.path_names[p], mqp_bytes_[p], path_pause_b_, o_.thresholds.path_pause,
                  o_.thresholds.quota, ms(above_since_[p]), ms(now - above_since_[p]), ms(bound)),
      p, mq_[p].size() != 0 ? mq_[p].q[mq_[p].head].g : kNoEvent);
}

void InvariantChecker::area_pause_violation(std::uint64_t now, std::uint32_t a,
                                            std::uint64_t bound) {
  violate(now, "area_pause",
          fmt::format("area {} holds {} bytes, at or above its pause threshold {} (--area-pause "
                      "{} of the quota {}) since {:.3f} ms, and the upstream still reads it "
                      "{:.3f} ms later (the control link takes {:.3f} ms)",
                      a, mq_bytes_[a], area_pause_b_, o_.thresholds.area_pause, o_.thresholds.quota,
                      ms(area_above_since_[a]), ms(now - area_above_since_[a]), ms(bound)));
}

// ---- the mirror

// Area a holds more than the bound after event g was appended.
void InvariantChecker::over_bound(std::uint64_t now, std::uint32_t a, std::uint32_t g,
                                  bool new_peak) {
  const std::uint64_t held = mq_bytes_[a];
  const ReplayInputEvent& e = in_.events[g];
  // doc lets one transaction larger than H through alone: above H the area may hold no more
  // than H outside it. The transaction is the one holding the most bytes now (if any
  // transaction makes the rest fit, that one does), found in the simulator's own copy of what
  // the area holds, whatever the engine thinks it admitted.
  std::uint32_t top = kNoEvent;
  std::uint64_t top_bytes = 0;
  if (o_.policy == Policy::doc) {
    txn_bytes_.clear();
    for (std::uint32_t q : in_.areas[a].paths) {
      const MirrorQueue& oq = mq_[q];
      for (std::size_t i = oq.head; i < oq.q.size(); ++i) {
        const std::uint32_t h = oq.q[i].g;
        auto [it, fresh] = txn_bytes_.try_emplace(in_.events[h].txn, h, 0);
        it->second.second += in_.events[h].size;
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
    violate(now, "memory_bound",
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
            e.path, g);
  }
}

void InvariantChecker::take(std::uint32_t p, std::uint32_t g) {
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
  mq.compact();
  if (held) release(p, in_.events[g].size);
}

std::uint64_t InvariantChecker::discard(std::uint64_t now, const FlowAction& x,
                                        std::vector<std::uint8_t>& discarded) {
  MirrorQueue& mq = mq_[x.path];
  std::uint64_t bytes = 0;
  for (std::size_t i = mq.head; i < mq.q.size(); ++i) {
    const std::uint32_t g = mq.q[i].g;
    discarded[g] = 1;
    bytes += in_.events[g].size;
  }
  const std::size_t count = mq.size();
  release(x.path, bytes);
  mq.q.clear();
  mq.head = 0;
  if (count != x.count && !stop_) {
    violate(now, "accounting",
            fmt::format("path {}: the engine reports {} events discarded, it held {}",
                        in_.path_names[x.path], x.count, count),
            x.path);
  }
  return bytes;
}

// ---- the control protocol

// A pause or a resume of a path or an area, as the documented protocol has them: a resume only
// once what it holds is below its resume threshold, and pauses and resumes alternate.
bool InvariantChecker::control(std::uint64_t now, const FlowAction& x, std::uint32_t g) {
  const bool of_path = x.kind == ActionKind::pause_path || x.kind == ActionKind::resume_path;
  const bool pause = x.kind == ActionKind::pause_path || x.kind == ActionKind::pause_area;
  const std::string who =
      of_path ? fmt::format("path {}", in_.path_names[x.path]) : fmt::format("area {}", x.area);
  const std::uint32_t p = of_path ? x.path : kNoPath;
  // below 10% (a path) or 50% (an area) first
  const std::uint64_t held = of_path ? mqp_bytes_[x.path] : mq_bytes_[x.area];
  const std::uint64_t resume_b = of_path ? path_resume_b_ : area_resume_b_;
  if (doc_ && !pause && held >= resume_b) {
    violate(now, "resume_threshold",
            fmt::format("{} resumed while it holds {} bytes, not below its resume threshold {} "
                        "({} {} of the quota {})",
                        who, held, resume_b, of_path ? "--path-resume" : "--area-resume",
                        of_path ? o_.thresholds.path_resume : o_.thresholds.area_resume,
                        o_.thresholds.quota),
            p, g);
    if (stop_) return false;
  }
  std::uint8_t& paused = ctl_paused_[of_path ? x.path : in_.path_names.size() + x.area];
  if (paused == static_cast<std::uint8_t>(pause)) {
    violate(now, "pause_alternation",
            fmt::format("{}: two {} in a row", who, pause ? "pauses" : "resumes"), p, g);
  }
  paused = pause ? 1 : 0;
  return true;
}

void InvariantChecker::reset(std::uint64_t now, const FlowAction& x, std::uint32_t g) {
  if (fc_.path_epoch(x.path) != x.epoch || x.epoch != last_reset_epoch_[x.path] + 1 ||
      reset_open_[x.path]) {
    violate(now, "protocol",
            fmt::format("path {}: reset to epoch {} while the reset to epoch {} has not "
                        "been answered by a handshake (one gap, two resets)",
                        in_.path_names[x.path], x.epoch, last_reset_epoch_[x.path]),
            x.path, g);
  }
  last_reset_epoch_[x.path] = x.epoch;
  reset_open_[x.path] = 1;
}

// ---- violations

std::string InvariantChecker::where(std::uint32_t p, std::uint32_t seq) const {
  const auto& list = in_.path_events[p];
  if (seq >= list.size()) return fmt::format("{} seq {} (past the end)", in_.path_names[p], seq);
  // The transaction (RDP id, GTID), the file and the event's start position (of its
  // TRANSACTION_PAYLOAD for an inner event, then its index inside it); row: a sub-event of a
  // rows event split by key (hash:N), its first row.
  return fmt::format("{} seq {} ({})", in_.path_names[p], seq,
                     describe(identity_of(in_, list[seq])));
}

void InvariantChecker::source_break(std::uint64_t now, const SourceBreak& b, std::uint32_t g) {
  violate(now, "source_context",
          fmt::format("{}:{}: {}: {}; the upstream read past it{}", b.log_name, b.pos, b.check,
                      b.message,
                      g != kNoEvent ? fmt::format(" at {}", describe(identity_of(in_, g)))
                                    : std::string(" at the end of the source")),
          g != kNoEvent ? in_.events[g].path : kNoPath, g);
  Violation& v = violations_.back();
  v.log_name = b.log_name;  // where the context breaks (`at`: where the upstream met it)
  v.pos = b.pos;
}

void InvariantChecker::violate(std::uint64_t now, std::string check, std::string msg,
                               std::uint32_t p, std::uint32_t g) {
  Violation v;
  v.check = std::move(check);
  v.time_us = now;
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
    ta.time_us = now;
    ta.kind = v.check == "deadlock" ? "deadlock" : "violation";
    ta.detail = v.message;
    ta.at = v.at;
    if (!v.path.empty()) ta.path = v.path;
    tl_->action(ta);
  }
  rec_.hash(fnv1a(v.check));
  violations_.push_back(std::move(v));
  if (o_.stop_on_violation) stop_ = true;
}

// ---- the result

// Pauses still open at the end. After the drain nothing is pending, so each is below its
// resume threshold: the lazy resume is waiting for the feedback interval since the path's (or
// area's) last feedback. That is the design, not a fault, unless the interval (plus the timer
// period) has already passed: then the resume was lost (stuck paused, #1542).
void InvariantChecker::open_pauses(std::uint64_t now, ReplayResult& r) {
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
    } else if (now < last + grace) {
      op.why = fmt::format(
          "below the resume threshold; the lazy resume is due at {:.3f} s, "
          "{:.3f} s after the end of the run (fast pause, lazy resume): not a "
          "violation",
          ms(op.resume_due_us) / 1000,
          ms(op.resume_due_us > now ? op.resume_due_us - now : 0) / 1000);
    } else {
      op.violation = true;
      op.why = fmt::format(
          "below the resume threshold since more than the feedback interval: "
          "stuck paused");
    }
    if (op.violation && violations_.empty()) {
      violate(now, "stuck_paused",
              fmt::format("{} still paused at the end: {}",
                          op.path.empty() ? fmt::format("area {}", a) : "path " + op.path, op.why));
    }
    r.open_pauses.push_back(std::move(op));
  };
  for (std::uint32_t a = 0; a < in_.areas.size(); ++a) {
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

void InvariantChecker::peak_stats(std::uint32_t a, const AreaCounters& c, std::uint64_t hard_limit,
                                  AreaStats& s) const {
  s.peak_time_us = peak_time_[a];
  s.over_quota = mq_peak_[a] > o_.thresholds.quota ? mq_peak_[a] - o_.thresholds.quota : 0;
  s.over_hard_limit = mq_peak_[a] > hard_limit ? mq_peak_[a] - hard_limit : 0;
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
}

}  // namespace binlogctl::replay_detail
