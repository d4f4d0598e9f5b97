// What replay's simulator records of a run (replay_recorder.h).
#include "replay/replay_recorder.h"

namespace binlogctl::replay_detail {

void ReplayRecorder::setup() {
  imax_.assign(in_.areas.size(), 0);
  path_imax_.assign(in_.path_names.size(), 0);
  if (o_.record_series) {
    series_.area_pending.resize(in_.areas.size());
    series_.area_max.resize(in_.areas.size());
    path_samples_.clear();
  }
}

void ReplayRecorder::action(const FlowAction& x, std::uint32_t g, const FlowController& fc) {
  if (o_.record_series && series_.marks.size() < 200'000) {
    series_.marks.push_back(ReplayMark{x.time_us, x.kind, x.area, x.path, x.area_pending});
  }
  if (tl_ == nullptr) return;
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
  ta.area_pending = fc.area_pending(x.area);
  ta.pending_before = x.area_pending;
  if (x.kind == ActionKind::reset || x.kind == ActionKind::drop_marker) {
    ta.detail = to_string(x.cause);
  }
  tl_->action(ta);
}

void ReplayRecorder::begin_sample(std::uint64_t now) {
  if (!o_.record_series) return;
  series_.time_us.push_back(now);
  path_samples_.emplace_back();
  path_max_samples_.emplace_back();
}

void ReplayRecorder::sample_area(std::uint64_t now, const FlowController& fc, std::uint32_t a,
                                 const AreaSnapshot& up) {
  const bool rec = o_.record_series;
  sample_buf_.clear();
  for (std::uint32_t p : in_.areas[a].paths) {
    const std::uint64_t pend = fc.path_pending(p);
    if (rec && path_imax_[p] > pend && sparse_entries_ < 4'000'000) {
      path_max_samples_.back().emplace_back(p, path_imax_[p]);
      ++sparse_entries_;
    }
    path_imax_[p] = pend;
    if (pend == 0 && !fc.path_paused(p)) continue;
    if (tl_ != nullptr) sample_buf_.push_back({in_.path_names[p], pend, fc.path_paused(p)});
    if (rec && pend != 0 && sparse_entries_ < 4'000'000) {
      path_samples_.back().emplace_back(p, pend);
      ++sparse_entries_;
    } else if (rec && pend != 0) {
      series_.truncated = true;
    }
  }
  if (rec) {
    series_.area_pending[a].push_back(fc.area_pending(a));
    series_.area_max[a].push_back(std::max(imax_[a], fc.area_pending(a)));
  }
  imax_[a] = fc.area_pending(a);
  if (tl_ != nullptr) {
    TimelineSample s;
    s.time_us = now;
    s.area = a;
    s.pending = fc.area_pending(a);
    s.resident = up.resident;
    s.delivered = up.delivered;
    s.paused = fc.area_paused(a);
    s.paths = sample_buf_;
    if (up.reading != kNoEvent) s.reading = identity_of(in_, up.reading);
    tl_->sample(s);
  }
}

void ReplayRecorder::finish(const FlowController& fc, ReplayResult& r) {
  r.latency_ms = summarize(latency_);
  if (o_.record_series) {
    // Densify the top paths by peak pending.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> peaks;
    for (std::uint32_t p = 0; p < in_.path_names.size(); ++p) {
      const auto pk = fc.path_counters(p).peak_pending;
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
}

}  // namespace binlogctl::replay_detail
