#include <binlogctl/progress.h>

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace binlogctl {

Progress::Progress(ProgressMode mode, std::uint64_t total)
    : enabled_(mode == ProgressMode::always || (mode == ProgressMode::auto_ && ::isatty(2) != 0)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\n", stderr);
}

void Progress::finish(std::uint64_t done) {
  if (enabled_) redraw(done, true);
}

void Progress::redraw(std::uint64_t done, bool final) {
  auto now = std::chrono::steady_clock::now();
  if (!final && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double mb = static_cast<double>(done) / 1e6;
  const double rate = secs > 0 ? mb / secs : 0;
  std::string line;
  if (total_ > 0) {
    const double frac = done >= total_ ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
    const int width = 30;
    const int fill = static_cast<int>(frac * width);
    line = fmt::format("\r[{}{}] {:5.1f}% {:.1f}/{:.1f} MB {:.0f} MB/s", std::string(static_cast<std::size_t>(fill), '#'),
                       std::string(static_cast<std::size_t>(width - fill), '.'), frac * 100, mb,
                       static_cast<double>(total_) / 1e6, rate);
  } else {
    line = fmt::format("\r{:.1f} MB {:.0f} MB/s", mb, rate);
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace binlogctl
