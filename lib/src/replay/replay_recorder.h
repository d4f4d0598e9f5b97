// What replay's simulator (simulator.h) records of a run for its report: the run hash, the
// latency of every delivery, the actions and memory samples of the timeline (--timeline), and
// the series of the plot (--plot: pending and its envelope per area and per path, actions,
// admissions above the hard limit). It only records: nothing in it feeds back into the run.
// The Simulator calls it where things happen (hash, add_latency, appended, action, sample) and
// once at the end (finish).
#pragma once

#include <binlogctl/replay.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "replay/sim_base.h"

namespace binlogctl::replay_detail {

// What a timeline sample shows of an area's upstream: what it holds anywhere (link, queue, sinks),
// what it delivered, and the event it reads next (kNoEvent: none).
struct AreaSnapshot {
  std::uint64_t resident = 0, delivered = 0;
  std::uint32_t reading = kNoEvent;
};

class ReplayRecorder {
 public:
  ReplayRecorder(const ReplayOptions& o, const ReplayInput& in, TimelineWriter* tl)
      : o_(o), in_(in), tl_(tl), record_series_(o.record_series) {}
  void setup();

  // The run hash: what the sinks acknowledged, the engine's actions and the violations, in order.
  void hash(std::uint64_t x) noexcept { hash_ = mix64(hash_ ^ (x + kSplitmix64Step)); }
  void add_latency(std::uint64_t us) { latency_.add(us); }
  // Area a holds `held` bytes (the simulator's copy) after event g of path p was appended: the
  // plot's envelope, and an admission when it crosses the hard limit.
  void appended(std::uint64_t now, std::uint32_t a, std::uint32_t p, std::uint32_t g,
                std::uint64_t held, std::uint64_t size, const FlowController& fc) {
    if (record_series_) [[unlikely]] {
      imax_[a] = std::max(imax_[a], held);
      path_imax_[p] = std::max(path_imax_[p], fc.path_pending(p));
      if (held > fc.hard_limit_bytes() && held - size <= fc.hard_limit_bytes() &&
          series_.admissions.size() < 100'000) {
        series_.admissions.push_back(ReplayAdmission{now, a, held, rdp_id_of(g)});
      }
    }
  }
  // An action of the engine concerning event g (kNoEvent: none): the plot's mark, the timeline's
  // action.
  void action(const FlowAction& x, std::uint32_t g, const FlowController& fc);
  // A memory sample: state(a) gives an area's AreaSnapshot (asked only when there is a timeline).
  template <class AreaState>
  void sample(std::uint64_t now, const FlowController& fc, AreaState&& state) {
    begin_sample(now);
    for (std::uint32_t a = 0; a < imax_.size(); ++a) {
      sample_area(now, fc, a, tl_ != nullptr ? state(a) : AreaSnapshot{});
    }
  }
  // The run's latency summary, series and hash into r (after the last violation: they hash too).
  void finish(const FlowController& fc, ReplayResult& r);

 private:
  // identity_of(in_, g).rdp_id without building the identity's strings.
  std::uint64_t rdp_id_of(std::uint32_t g) const {
    const auto& txns = in_.areas[in_.path_area[in_.events[g].path]].txns;
    const std::uint32_t t = in_.events[g].txn;
    return t < txns.size() ? txns[t].rdp_id : 0;
  }
  void begin_sample(std::uint64_t now);
  void sample_area(std::uint64_t now, const FlowController& fc, std::uint32_t a,
                   const AreaSnapshot& up);

  const ReplayOptions& o_;
  const ReplayInput& in_;
  TimelineWriter* tl_;
  bool record_series_;  // o_.record_series, read on every append
  std::uint64_t hash_ = 0x243f6a8885a308d3ull;
  Histogram<5> latency_;
  ReplaySeries series_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> path_samples_;  // sparse
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> path_max_samples_;
  std::size_t sparse_entries_ = 0;
  std::vector<TimelinePathSample> sample_buf_;
  std::vector<std::uint64_t> imax_;       // per area: max pending since the last sample
  std::vector<std::uint64_t> path_imax_;  // per path: max pending since the last sample
};

}  // namespace binlogctl::replay_detail
