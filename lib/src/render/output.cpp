#include <binlogctl/output.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>

namespace binlogctl {

namespace {
std::atomic<bool> always_line_buffered{false};
}  // namespace

void LineOutput::set_line_buffered_always(bool on) noexcept { always_line_buffered = on; }

LineOutput::LineOutput(std::FILE* f)
    : f_(f), fd_(::fileno(f)), line_buffered_(::isatty(fd_) != 0 || always_line_buffered) {
  std::fflush(f_);
  buf_.reserve(kBlock + 64 * 1024);
}

LineOutput::~LineOutput() {
  try {
    flush();
  } catch (...) {  // destructor: nothing more to do
  }
}

void LineOutput::write_all(const char* p, std::size_t n) {
  if (fd_ < 0) {  // a stream without a descriptor (open_memstream, fopencookie): through stdio
    if (n != 0 && std::fwrite(p, 1, n, f_) != n) {
      buf_.clear();
      throw std::system_error(errno != 0 ? errno : EIO, std::generic_category(), "write");
    }
    return;
  }
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      buf_.clear();
      throw std::system_error(errno, std::generic_category(), "write");
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void LineOutput::flush() {
  write_all(buf_.data(), buf_.size());
  buf_.clear();
}

void LineOutput::write(std::string_view block) {
  if (!buf_.empty()) flush();
  write_all(block.data(), block.size());
}

}  // namespace binlogctl
