// What the parts of replay's simulator (simulator.h, invariant_checker.h, replay_recorder.h)
// share: the "none" markers, the seeded random streams and the latency histogram.
#pragma once

#include <binlogctl/replay.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "base/hash.h"

namespace binlogctl::replay_detail {

inline constexpr std::uint64_t kInf = ~std::uint64_t{0};
inline constexpr std::uint32_t kNoEvent = 0xffffffffu;

// splitmix64 stream; one per component so adding a sink does not perturb the others.
struct Rng {
  std::uint64_t s = 0;
  Rng() = default;
  Rng(std::uint64_t seed, std::string_view component, std::uint64_t id = 0)
      : s(mix64(seed ^ fnv1a(component) ^ mix64(id + 0x632be59bd9b4e019ull))) {}
  std::uint64_t next() noexcept { return splitmix64(s); }
  std::uint64_t below(std::uint64_t n) noexcept { return n == 0 ? 0 : next() % n; }
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

// Log-linear histogram of microseconds: exact below 2^sub_bits, then 2^sub_bits buckets per
// octave (relative error <= 2^-sub_bits).
// (sub_bits is a template parameter: every latency sample goes through bucket(), whose shifts are
// then constants.)
template <unsigned SubBits>
class Histogram {
 public:
  static constexpr unsigned sub_bits_ = SubBits;
  void add(std::uint64_t v) {
    if (counts_.empty()) counts_.assign(bucket(kInf) + 1, 0);
    ++counts_[bucket(v)];
    ++n_;
    max_ = std::max(max_, v);
  }
  std::uint64_t count() const noexcept { return n_; }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t percentile(double q) const {
    if (n_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n_)));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(value(b), max_);
    }
    return max_;
  }

 private:
  std::size_t bucket(std::uint64_t v) const noexcept {
    const std::uint64_t lin = std::uint64_t{1} << (sub_bits_ + 1);
    if (v < lin) return static_cast<std::size_t>(v);
    const unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(v));
    const std::uint64_t sub = (v >> (msb - sub_bits_)) & ((std::uint64_t{1} << sub_bits_) - 1);
    return static_cast<std::size_t>(lin + (msb - sub_bits_ - 1) * (std::uint64_t{1} << sub_bits_) +
                                    sub);
  }
  std::uint64_t value(std::size_t b) const noexcept {  // upper bound of the bucket
    const std::uint64_t lin = std::uint64_t{1} << (sub_bits_ + 1);
    if (b < lin) return b;
    const std::uint64_t k = b - lin;
    const unsigned msb = static_cast<unsigned>(k >> sub_bits_) + sub_bits_ + 1;
    const std::uint64_t sub = k & ((std::uint64_t{1} << sub_bits_) - 1);
    const unsigned shift = msb - sub_bits_;
    return ((std::uint64_t{1} << sub_bits_ | sub) << shift) + ((std::uint64_t{1} << shift) - 1);
  }
  std::vector<std::uint32_t> counts_;
  std::uint64_t n_ = 0, max_ = 0;
};

inline double ms(std::uint64_t us) noexcept { return static_cast<double>(us) / 1000.0; }

template <unsigned SubBits>
LatencySummary summarize(const Histogram<SubBits>& h) {
  LatencySummary s;
  s.p50 = static_cast<double>(h.percentile(0.50)) / 1000.0;
  s.p95 = static_cast<double>(h.percentile(0.95)) / 1000.0;
  s.p99 = static_cast<double>(h.percentile(0.99)) / 1000.0;
  s.max = static_cast<double>(h.max()) / 1000.0;
  return s;
}

}  // namespace binlogctl::replay_detail
