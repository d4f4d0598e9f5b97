#include <binlogctl/output.h>

#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace binlogctl {

LineOutput::LineOutput(std::FILE* f) : f_(f), fd_(::fileno(f)), line_buffered_(::isatty(fd_) != 0) {
  std::fflush(f_);
  buf_.reserve(kBlock + 64 * 1024);
}

LineOutput::~LineOutput() {
  try {
    flush();
  } catch (...) {  // destructor: nothing more to do
  }
}

void LineOutput::flush() {
  const char* p = buf_.data();
  std::size_t n = buf_.size();
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
  buf_.clear();
}

}  // namespace binlogctl
