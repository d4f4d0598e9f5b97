// A progress bar on stderr for long inputs.
#pragma once

#include <chrono>
#include <cstddef>
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
  // The file being read (0-based) of `count`; shown as "file N/M" when the chain has several.
  void set_file(std::size_t index, std::size_t count) {
    file_ = index;
    files_ = count;
  }
  bool enabled() const { return enabled_; }

 private:
  void redraw(std::uint64_t done, bool final);
  bool enabled_;
  std::uint64_t total_;
  std::uint64_t calls_ = 0;  // update() calls: one per event
  std::size_t file_ = 0, files_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace binlogctl
