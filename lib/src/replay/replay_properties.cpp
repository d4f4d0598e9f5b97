// Property sweep over seeds: every run holds every invariant, and runs are deterministic.
#include <binlogctl/replay.h>
#include <fmt/format.h>

#include "base/hash.h"

namespace binlogctl {

namespace {

std::uint64_t pick(std::uint64_t& s, std::initializer_list<std::uint64_t> v) {
  return *(v.begin() + splitmix64(s) % v.size());
}

std::string regex_escape(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Seed-derived perturbations; never barriers (doc deadlocks with them by design, see S5).
ReplayOptions perturb(const ReplayOptions& base, const ReplayInput& in, std::uint64_t seed) {
  ReplayOptions o = base;
  o.seed = seed;
  std::uint64_t s = seed * 0x2545f4914f6cdd1dull + 7;
  const std::uint64_t q = base.thresholds.quota;
  o.thresholds.quota = std::max<std::uint64_t>(q * pick(s, {1, 2, 4, 8}) / 4, 4096);
  o.data_delay_us = pick(s, {0, 100, 1000, 5000});
  o.data_jitter_us = pick(s, {0, 0, 500});
  o.control_delay_us = pick(s, {0, 1000, 10'000, 100'000, 1'000'000});
  o.control_jitter_us = pick(s, {0, 0, 2000});
  o.drop_rate = static_cast<double>(pick(s, {0, 0, 0, 1, 5})) / 100.0;
  const double total_mb = static_cast<double>(in.total_bytes) / (1024.0 * 1024.0);
  const std::uint64_t rate_kb = pick(s, {0, 256, 1024, 4096});
  if (rate_kb == 0) {
    o.source_rate = SourceRate{};
  } else {
    o.source_rate.kind = SourceRate::Kind::bytes;
    o.source_rate.per_second = static_cast<double>(rate_kb) * 1024.0;
  }
  (void)total_mb;
  o.sinks.clear();
  for (const auto& name : in.path_names) {
    if (splitmix64(s) % 3 != 0) continue;
    SinkSpec spec;
    spec.pattern = regex_escape(name);
    SinkModel& m = spec.model;
    m.latency_us = pick(s, {0, 1000, 5000, 20'000});
    m.jitter_us = pick(s, {0, 0, 2000});
    m.cap_bytes_per_s = pick(s, {0, 0, 128u << 10, 1u << 20});
    if (splitmix64(s) % 4 == 0) {
      m.stall_period_us = pick(s, {2'000'000, 5'000'000});
      m.stall_us = pick(s, {200'000, 1'000'000});
    }
    if (splitmix64(s) % 6 == 0) {
      m.hang_from_us = pick(s, {0, 500'000, 2'000'000});
      m.hang_to_us = m.hang_from_us + pick(s, {1'000'000, 5'000'000});
    }
    o.sinks.push_back(std::move(spec));
  }
  return o;
}

}  // namespace

PropertyReport check_replay_properties(const ReplayInput& input, const ReplayOptions& base,
                                       std::uint64_t first_seed, std::uint32_t seeds,
                                       bool randomize, std::uint32_t determinism_every) {
  PropertyReport rep;
  for (std::uint32_t i = 0; i < seeds; ++i) {
    const std::uint64_t seed = first_seed + i;
    ReplayOptions o = randomize ? perturb(base, input, seed) : base;
    o.seed = seed;
    o.record_series = false;
    const ReplayResult r = run_replay(o, input);
    ++rep.runs;
    rep.events_delivered += r.delivered;
    rep.resets += r.resets;
    rep.pauses += r.pauses;
    rep.circuit_breaks += r.circuit_breaks;
    rep.releases += r.releases;
    std::string fail;
    if (!r.ok) {
      fail = fmt::format("{}: {}", r.violations.front().check, r.violations.front().message);
    } else if (r.delivered != r.source_events) {
      fail = fmt::format("delivered {} of {}", r.delivered, r.source_events);
    } else if (o.policy != Policy::none && r.peak_memory > r.hard_limit + input.max_event_size &&
               (r.areas.empty() || (r.areas.front().counters.oversized_admissions == 0 &&
                                    r.areas.front().counters.retry_admissions == 0))) {
      // (doc lets a transaction larger than H through alone; the memory_bound check holds it)
      fail = fmt::format("peak {} above hard limit {}", r.peak_memory, r.hard_limit);
    } else if (determinism_every != 0 && i % determinism_every == 0) {
      const ReplayResult again = run_replay(o, input);
      ++rep.runs;
      if (again.trace_hash != r.trace_hash || again.delivered != r.delivered ||
          again.resets != r.resets || again.end_time_us != r.end_time_us) {
        fail = fmt::format("not deterministic: trace hash {:016x} then {:016x}", r.trace_hash,
                           again.trace_hash);
      }
    }
    if (!fail.empty()) {
      ++rep.failures;
      if (rep.messages.size() < 10) {
        rep.messages.push_back(
            fmt::format("policy {} seed {}: {}", to_string(o.policy), seed, fail));
      }
    }
  }
  return rep;
}

}  // namespace binlogctl
