// The simulator's periodic events (simulator.h): ticks and policy rules, reports, samples.
#include "replay/simulator.h"

namespace binlogctl::replay_detail {

// doc's rules (InvariantChecker::check_pause_rules) against what the upstream has stopped.
void Simulator::check_policy_rules() {
  checker_.check_pause_rules(
      now_, [this](std::uint32_t p) { return upp_[p].paused; },
      [this](std::uint32_t a) { return up_[a].paused; });
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
  rec_.sample(now_, fc_, [this](std::uint32_t a) {
    const UpArea& A = up_[a];
    return AreaSnapshot{A.link_bytes + fc_.area_pending(a) + A.in_sink, A.delivered,
                        A.head < A.end ? A.head : kNoEvent};
  });
  if (!done() && !stop_) push(now_ + o_.sample_interval_us, EvKind::sample, 0);
}

}  // namespace binlogctl::replay_detail
