// A progress bar on stderr for long inputs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace binlogctl {

enum class ProgressMode { auto_, always, never };

class Progress {
 public:
  Progress(ProgressMode mode, std::uint64_t total_bytes);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Bytes done so far over all inputs; cheap to call per event (redraws at most 10 times/s).
  void update(std::uint64_t done) {
    if (enabled_ && ++calls_ % 4096 == 0) redraw(done, false);
  }
  void finish(std::uint64_t done);
  bool enabled() const { return enabled_; }

 private:
  void redraw(std::uint64_t done, bool final);
  bool enabled_;
  std::uint64_t total_;
  std::uint64_t calls_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace binlogctl
