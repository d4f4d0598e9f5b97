// run_replay (replay.h): the discrete-event simulator's setup, event loop and result. Its
// parts: simulator.h.
#include "replay/simulator.h"

namespace binlogctl {

namespace replay_detail {

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

}  // namespace replay_detail

using replay_detail::Simulator;

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
