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

namespace {
// "45s", "3m07s", "2h05m": how long the rest should take at the rate so far.
std::string eta_text(double seconds) {
  const auto s = static_cast<std::uint64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
}
}  // namespace

// Known total: "[####......]  33.5% 349.1/1043.1 MB 234 MB/s ETA 2s, file 2/8, 1234567 events".
// Unknown total (standard input): "349.1 MB read, 234 MB/s, file 1/1, 1234567 events".
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
    if (!final && rate > 0) line += " ETA " + eta_text((static_cast<double>(total_) / 1e6 - mb) / rate);
  } else {
    line = fmt::format("\r{:.1f} MB read, {:.0f} MB/s", mb, rate);
  }
  if (files_ > 1) line += fmt::format(", file {}/{}", file_ + 1, files_);
  line += fmt::format(", {} events\x1b[K", calls_);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace binlogctl
