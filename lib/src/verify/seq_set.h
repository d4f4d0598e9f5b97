// SeqSet: the sequence numbers a GTID domain (or a domain and server_id) has used in the chain.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace binlogctl::verify {

// A set of unsigned sequence numbers as sorted, disjoint, non-adjacent closed intervals. Adding
// the next number of a run (the common case: GTID sequence numbers in commit order) extends the
// last interval in place, so a contiguous history costs one interval.

class SeqSet {
 public:
  using Interval = std::pair<std::uint64_t, std::uint64_t>;  // [first, second]

  bool contains(std::uint64_t x) const noexcept {
    auto it = upper_bound_first(x);
    if (it == iv_.begin()) return false;
    --it;
    return x <= it->second;
  }

  void add(std::uint64_t x) {
    if (!iv_.empty()) {
      Interval& last = iv_.back();
      if (x >= last.first && x <= last.second) return;
      if (x == last.second + 1) {
        last.second = x;
        return;
      }
      if (x > last.second + 1) {
        iv_.emplace_back(x, x);
        return;
      }
    } else {
      iv_.emplace_back(x, x);
      return;
    }
    // Out of order: insert and merge with the neighbours.
    auto it = upper_bound_first(x);
    if (it != iv_.begin()) {
      auto prev = std::prev(it);
      if (x <= prev->second) return;
      if (x == prev->second + 1) {
        prev->second = x;
        if (it != iv_.end() && it->first == x + 1) {
          prev->second = it->second;
          iv_.erase(it);
        }
        return;
      }
    }
    if (it != iv_.end() && it->first == x + 1) {
      it->first = x;
      return;
    }
    iv_.insert(it, Interval{x, x});
  }

  // Takes x out of the set (a transaction a crash rolled back: its GTID was never executed).
  void remove(std::uint64_t x) {
    auto it = upper_bound_first(x);
    if (it == iv_.begin()) return;
    --it;
    if (x > it->second) return;
    if (it->first == it->second) {
      iv_.erase(it);
    } else if (x == it->first) {
      ++it->first;
    } else if (x == it->second) {
      --it->second;
    } else {
      const Interval right{x + 1, it->second};
      it->second = x - 1;
      iv_.insert(std::next(it), right);
    }
  }

  // The numbers of [a, b] that are not in the set, as intervals.
  std::vector<Interval> missing(std::uint64_t a, std::uint64_t b) const {
    std::vector<Interval> out;
    std::uint64_t cur = a;
    for (const Interval& i : iv_) {
      if (i.second < cur) continue;
      if (i.first > b) break;
      if (i.first > cur) out.emplace_back(cur, i.first - 1);
      if (i.second >= b) return out;
      cur = i.second + 1;
    }
    if (cur <= b) out.emplace_back(cur, b);
    return out;
  }

  bool empty() const noexcept { return iv_.empty(); }
  std::uint64_t max() const noexcept { return iv_.empty() ? 0 : iv_.back().second; }
  const std::vector<Interval>& intervals() const noexcept { return iv_; }

 private:
  std::vector<Interval>::iterator upper_bound_first(std::uint64_t x) {
    return std::upper_bound(iv_.begin(), iv_.end(), x,
                            [](std::uint64_t v, const Interval& i) { return v < i.first; });
  }
  std::vector<Interval>::const_iterator upper_bound_first(std::uint64_t x) const {
    return std::upper_bound(iv_.begin(), iv_.end(), x,
                            [](std::uint64_t v, const Interval& i) { return v < i.first; });
  }
  std::vector<Interval> iv_;
};

}  // namespace binlogctl::verify
