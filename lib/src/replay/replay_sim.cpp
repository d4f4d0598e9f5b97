// run_replay (replay.h): the discrete-event simulator's setup, event loop and result. Its
// parts: simulator.h.
#include "replay/simulator.h"

namespace binlogctl {

namespace replay_detail {

void Simulator::setup() {
  const std::size_t n = in_.events.size();
  total_ = n;
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
  checker_.setup();
  rec_.setup();
  fc_.set_drop_markers(o_.drop_markers);
  fc_.inject_fault(o_.engine_fault, o_.engine_fault_at);
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
  const bool ended_early = stop_ && checker_.violated();
  if (!ended_early) {
    // Every source position must have been acknowledged by its sink. One that is not, while
    // nothing (queue, link, sink, upstream) holds it any more, was lost.
    for (std::uint32_t p = 0; p < sink_.size() && !checker_.violated(); ++p) {
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
  if (!checker_.violated() && done()) {
    // Every path drained: nothing left in the engine's queues, the links, the sinks, and the
    // engine's accounting back to zero.
    for (std::uint32_t p = 0; p < sink_.size() && !checker_.violated(); ++p) {
      if (fc_.path_pending(p) != 0 || fc_.queued_events(p) != 0 || fc_.path_blocking(p) ||
          checker_.mirror_events(p) != 0) {
        violate("drained",
                fmt::format("path {}: every event was delivered, yet the engine still accounts {} "
                            "bytes / {} events queued{} (the simulator's copy: {} events)",
                            in_.path_names[p], fc_.path_pending(p), fc_.queued_events(p),
                            fc_.path_blocking(p) ? ", the path blocking" : "",
                            checker_.mirror_events(p)),
                p);
      }
    }
    for (std::uint32_t a = 0; a < up_.size() && !checker_.violated(); ++a) {
      const UpArea& A = up_[a];
      if (fc_.area_pending(a) != 0 || A.in_sink != 0 || A.link_bytes != 0 || A.outstanding != 0 ||
          checker_.mirror_bytes(a) != 0) {
        violate("drained",
                fmt::format("area {}: pending {}, in sinks {}, on the link {}, "
                            "outstanding {} bytes after the drain",
                            a, fc_.area_pending(a), A.in_sink, A.link_bytes, A.outstanding));
      }
    }
    if (!checker_.violated() && !fc_.accounting_consistent()) {
      violate("accounting", "area totals differ from the sum of their paths");
    }
  }
  if (o_.policy == Policy::doc) checker_.open_pauses(now_, r);
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
    checker_.peak_stats(a, c, r.hard_limit, s);
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
  rec_.finish(fc_, r);  // (after the last violation: the run hash takes each)
  r.violations = checker_.take_violations();
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
