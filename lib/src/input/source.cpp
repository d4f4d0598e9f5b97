#include <binlogctl/source.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <system_error>

namespace binlogctl {
namespace {

constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::uint64_t kDropBehind = 1ull << 20;  // madvise(DONTNEED) granularity

// ---- memory-mapped regular file -------------------------------------------------------------
class MappedSource final : public Source {
 public:
  // Takes `fd` (kept open for read_at()).
  MappedSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
    base_ = static_cast<const std::uint8_t*>(p);
    ::madvise(p, size_, MADV_SEQUENTIAL);
  }
  ~MappedSource() override {
    if (base_ != nullptr) ::munmap(const_cast<std::uint8_t*>(base_), size_);
    ::close(fd_);
  }
  MappedSource(const MappedSource&) = delete;
  MappedSource& operator=(const MappedSource&) = delete;

  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off >= size_) return {};
    std::uint64_t avail = size_ - off;
    if (n > avail) n = static_cast<std::size_t>(avail);
    pos_ = std::max(pos_, off + n);
    return {base_ + off, n};
  }
  void release(std::uint64_t off) override {
    // Drop the pages behind us so that the mapping's resident set stays small.
    if (off < dropped_ + kDropBehind) return;
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::uint64_t upto = off / page * page;
    {
      ::madvise(const_cast<std::uint8_t*>(base_) + dropped_, upto - dropped_, MADV_DONTNEED);
      dropped_ = upto;
    }
  }
  void prefetch(std::uint64_t off, std::size_t n) override {
#ifdef MADV_POPULATE_READ
    // Page-table entries for pages already in the page cache (reading them in if not), in one
    // call instead of a fault per 64 KiB on the reading thread. Errors (a kernel before 5.14,
    // a file cut short meanwhile) leave the pages to be faulted in as before.
    if (off >= size_ || !populate_) return;
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t from = off / page * page;
    const std::uint64_t to = std::min<std::uint64_t>(size_, off + n);
    if (::madvise(const_cast<std::uint8_t*>(base_) + from, to - from, MADV_POPULATE_READ) != 0 && errno == EINVAL)
      populate_ = false;
#else
    (void)off;
    (void)n;
#endif
  }
  void drop(std::uint64_t off, std::size_t n) override {
    if (off >= size_) return;
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t from = (off + page - 1) / page * page;
    const std::uint64_t to = std::min<std::uint64_t>(size_, off + n) / page * page;
    if (to > from) ::madvise(const_cast<std::uint8_t*>(base_) + from, to - from, MADV_DONTNEED);
  }
  std::size_t read_at(std::uint64_t off, std::uint8_t* dst, std::size_t n) override {
    if (off >= size_) return 0;
    if (n > size_ - off) n = static_cast<std::size_t>(size_ - off);  // the size it was opened at
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, dst + got, n - got, static_cast<off_t>(off + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        if (read_error_.code == Errc::ok) read_error_ = DecodeError{Errc::io_error, off + got, "read failed"};
        break;
      }
      if (r == 0) break;  // cut short since it was opened
      got += static_cast<std::size_t>(r);
    }
    pos_ = std::max(pos_, off + got);
    return got;
  }
  std::optional<std::uint64_t> size() const override { return size_; }
  std::uint64_t raw_position() const override { return pos_; }
  std::uint64_t raw_size() const override { return size_; }

 private:
  int fd_ = -1;
  bool populate_ = true;
  const std::uint8_t* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t pos_ = 0;
};

// ---- bytes in memory --------------------------------------------------------------------------
class MemorySource final : public Source {
 public:
  explicit MemorySource(Bytes b) : data_(b) {}
  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off >= data_.size()) return {};
    std::size_t avail = data_.size() - static_cast<std::size_t>(off);
    return data_.subspan(static_cast<std::size_t>(off), std::min(n, avail));
  }
  void release(std::uint64_t) override {}
  std::optional<std::uint64_t> size() const override { return data_.size(); }
  std::uint64_t raw_position() const override { return 0; }
  std::uint64_t raw_size() const override { return data_.size(); }

 private:
  Bytes data_;
};

// ---- file descriptor stream ------------------------------------------------------------------
class FdStream final : public ByteStream {
 public:
  FdStream(int fd, bool owned, std::vector<std::uint8_t> prefix = {})
      : fd_(fd), owned_(owned), prefix_(std::move(prefix)) {}
  ~FdStream() override {
    if (owned_) ::close(fd_);
  }
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    if (prefix_pos_ < prefix_.size()) {
      std::size_t n = std::min(cap, prefix_.size() - prefix_pos_);
      std::memcpy(dst, prefix_.data() + prefix_pos_, n);
      prefix_pos_ += n;
      return n;
    }
    for (;;) {
      ssize_t n = ::read(fd_, dst, cap);
      if (n >= 0) {
        pos_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
      }
      if (errno == EINTR) continue;
      err = DecodeError{Errc::io_error, pos_, "read failed"};
      return 0;
    }
  }
  std::uint64_t raw_position() const override { return pos_; }

 private:
  int fd_;
  bool owned_;
  std::vector<std::uint8_t> prefix_;
  std::size_t prefix_pos_ = 0;
  std::uint64_t pos_ = 0;
};

// ---- gzip / zlib (multi-member) ----------------------------------------------------------------
class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(std::unique_ptr<ByteStream> in) : in_(std::move(in)), buf_(kReadChunk) {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 32) != Z_OK) failed_ = true;  // +32: gzip or zlib header
  }
  ~GzipStream() override { inflateEnd(&z_); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    if (failed_) {
      err = DecodeError{Errc::decompress_failed, out_pos_, "gzip stream is corrupt"};
      return 0;
    }
    if (cap > (1u << 30)) cap = 1u << 30;
    z_.next_out = dst;
    z_.avail_out = static_cast<uInt>(cap);
    while (z_.avail_out == cap && !done_) {
      if (z_.avail_in == 0) {
        std::size_t n = in_->read(buf_.data(), buf_.size(), err);
        if (err.code != Errc::ok) return 0;
        if (n == 0) {
          if (!at_member_start_) {
            err = DecodeError{Errc::decompress_failed, out_pos_, "gzip stream ends early"};
            return 0;
          }
          done_ = true;
          break;
        }
        z_.next_in = buf_.data();
        z_.avail_in = static_cast<uInt>(n);
      }
      at_member_start_ = false;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        inflateReset(&z_);
        at_member_start_ = true;  // another member may follow
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        failed_ = true;
        err = DecodeError{Errc::decompress_failed, out_pos_, "gzip stream is corrupt"};
        return 0;
      }
    }
    std::size_t produced = cap - z_.avail_out;
    out_pos_ += produced;
    return produced;
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  std::unique_ptr<ByteStream> in_;
  std::vector<std::uint8_t> buf_;
  z_stream z_;
  bool failed_ = false;
  bool done_ = false;
  bool at_member_start_ = true;
  std::uint64_t out_pos_ = 0;
};

// ---- zstd --------------------------------------------------------------------------------------
class ZstdStream final : public ByteStream {
 public:
  explicit ZstdStream(std::unique_ptr<ByteStream> in)
      : in_(std::move(in)), buf_(ZSTD_DStreamInSize()), ds_(ZSTD_createDStream()) {
    ZSTD_DCtx_setParameter(ds_, ZSTD_d_windowLogMax, 27);  // bounded window memory (128 MiB)
  }
  ~ZstdStream() override { ZSTD_freeDStream(ds_); }
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    ZSTD_outBuffer out{dst, cap, 0};
    while (out.pos == 0) {
      if (in_pos_ == in_len_) {
        if (eof_) {
          if (frame_open_) err = DecodeError{Errc::decompress_failed, out_pos_, "zstd stream ends early"};
          return 0;
        }
        in_len_ = in_->read(buf_.data(), buf_.size(), err);
        in_pos_ = 0;
        if (err.code != Errc::ok) return 0;
        if (in_len_ == 0) {
          eof_ = true;
          continue;
        }
      }
      ZSTD_inBuffer in{buf_.data(), in_len_, in_pos_};
      std::size_t rc = ZSTD_decompressStream(ds_, &out, &in);
      in_pos_ = in.pos;
      if (ZSTD_isError(rc)) {
        err = DecodeError{Errc::decompress_failed, out_pos_, "zstd stream is corrupt"};
        return 0;
      }
      frame_open_ = rc != 0;
    }
    out_pos_ += out.pos;
    return out.pos;
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  std::unique_ptr<ByteStream> in_;
  std::vector<std::uint8_t> buf_;
  ZSTD_DStream* ds_;
  std::size_t in_pos_ = 0, in_len_ = 0;
  bool eof_ = false;
  bool frame_open_ = false;
  std::uint64_t out_pos_ = 0;
};

// ---- buffered stream source ----------------------------------------------------------------------
// Offsets handed out are the input's offsets: the stream's bytes, plus the gaps it reports
// (take_gap). Internally the buffer holds the stream's bytes only ("data offsets"); `gaps_`
// says where the gaps sit between them. Gaps are rare and short-lived (released with the bytes
// before them), so the list stays a few entries long.
class StreamSource final : public Source {
 public:
  StreamSource(std::unique_ptr<ByteStream> in, std::uint64_t raw_size) : in_(std::move(in)), raw_size_(raw_size) {}
  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off < released_) return {};  // released: a caller bug, answer "nothing"
    auto d = to_data(off);
    if (!d) return {};  // inside a gap: no bytes there
    // Grow the buffered range until it covers [d, d + n), a gap cuts it, or the input ends.
    while (!eof_ && start_ + buf_len() < *d + n && !gap_within(*d, *d + n)) fill();
    std::uint64_t end = start_ + buf_len();
    for (const Gap& g : gaps_)
      if (g.data_at > *d) {
        end = std::min(end, g.data_at);
        break;
      }
    if (*d >= end || *d < start_) return {};
    std::size_t rel = static_cast<std::size_t>(*d - start_);
    std::size_t avail = static_cast<std::size_t>(end - *d);
    return {buf_.data() + head_ + rel, std::min(n, avail)};
  }
  void release(std::uint64_t off) override {
    if (off <= released_) return;
    released_ = off;
    // Gaps wholly behind `off` are folded into the base shift.
    while (!gaps_.empty() && gaps_.front().data_at + shift_ + gaps_.front().len <= off) {
      shift_ += gaps_.front().len;
      gaps_.pop_front();
    }
    const std::uint64_t data_off = data_floor(off);
    if (data_off <= start_) return;
    std::uint64_t drop = std::min<std::uint64_t>(data_off - start_, buf_len());
    head_ += static_cast<std::size_t>(drop);
    start_ += drop;
  }
  std::optional<std::uint64_t> gap_at(std::uint64_t off) override {
    if (off < released_) return std::nullopt;
    for (;;) {
      std::uint64_t shift = shift_;
      for (const Gap& g : gaps_) {
        const std::uint64_t gap_start = g.data_at + shift;
        if (off == gap_start) return off + g.len;
        if (off < gap_start + g.len) return std::nullopt;  // before it, or inside it
        shift += g.len;
      }
      // Past every known gap: read until the bytes at `off` are there or a gap shows up.
      if (eof_ || start_ + buf_len() > off - shift) return std::nullopt;
      fill();
    }
  }
  std::optional<std::uint64_t> size() const override { return std::nullopt; }
  std::uint64_t raw_position() const override { return in_->raw_position(); }
  std::uint64_t raw_size() const override { return raw_size_; }
  std::optional<FileBegin> file_begin_at(std::uint64_t off) override { return in_->file_begin_at(off); }

 private:
  struct Gap {
    std::uint64_t data_at;  // the gap sits right before this data offset
    std::uint64_t len;
  };
  std::size_t buf_len() const { return tail_ - head_; }
  // The data offset of input offset `off`; nullopt inside a gap (its first offset included).
  std::optional<std::uint64_t> to_data(std::uint64_t off) const {
    std::uint64_t shift = shift_;
    for (const Gap& g : gaps_) {
      const std::uint64_t gap_start = g.data_at + shift;
      if (off < gap_start) break;
      if (off < gap_start + g.len) return std::nullopt;
      shift += g.len;
    }
    return off - shift;
  }
  // The data offset of the first byte at or after input offset `off`.
  std::uint64_t data_floor(std::uint64_t off) const {
    std::uint64_t shift = shift_;
    for (const Gap& g : gaps_) {
      const std::uint64_t gap_start = g.data_at + shift;
      if (off < gap_start) break;
      if (off < gap_start + g.len) return g.data_at;
      shift += g.len;
    }
    return off - shift;
  }
  // A gap sits inside the data range (lo, hi): a window from lo ends there.
  bool gap_within(std::uint64_t lo, std::uint64_t hi) const {
    for (const Gap& g : gaps_)
      if (g.data_at > lo && g.data_at < hi) return true;
    return false;
  }
  // Reads at least one more chunk (or learns of a gap). Capacity grows with the data actually
  // read (at most twice it), so a huge length field alone cannot make us allocate.
  void fill() {
    if (head_ > 0) {
      std::memmove(buf_.data(), buf_.data() + head_, buf_len());
      tail_ -= head_;
      head_ = 0;
    }
    if (buf_.size() < tail_ + kReadChunk) buf_.resize(std::max(tail_ + kReadChunk, 2 * tail_));
    std::size_t n = in_->read(buf_.data() + tail_, buf_.size() - tail_, read_error_);
    tail_ += n;
    if (const std::uint64_t g = in_->take_gap(); g > 0) {
      const std::uint64_t at = start_ + buf_len();
      if (!gaps_.empty() && gaps_.back().data_at == at) gaps_.back().len += g;
      else gaps_.push_back(Gap{at, g});
    } else if (n == 0) {
      eof_ = true;
    }
  }

  std::unique_ptr<ByteStream> in_;
  std::vector<std::uint8_t> buf_;
  std::size_t head_ = 0, tail_ = 0;
  std::uint64_t start_ = 0;     // data offset of buf_[head_]
  std::uint64_t released_ = 0;  // input offset released up to
  std::uint64_t shift_ = 0;     // the gaps folded away, all before start_
  std::deque<Gap> gaps_;
  bool eof_ = false;
  std::uint64_t raw_size_;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Compression sniff(const std::uint8_t* p, std::size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return Compression::gzip;
  if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) return Compression::zstd;
  return Compression::none;
}

}  // namespace

std::size_t Source::read_at(std::uint64_t off, std::uint8_t* dst, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    Bytes w = window(off + got, n - got);
    if (w.empty()) break;
    std::memcpy(dst + got, w.data(), w.size());
    got += w.size();
  }
  return got;
}

std::unique_ptr<ByteStream> decompress_stream(std::unique_ptr<ByteStream> in, Compression c) {
  switch (c) {
    case Compression::gzip: return std::make_unique<GzipStream>(std::move(in));
    case Compression::zstd: return std::make_unique<ZstdStream>(std::move(in));
    case Compression::none: break;
  }
  return in;
}

std::unique_ptr<Source> memory_source(Bytes data) { return std::make_unique<MemorySource>(data); }

namespace {
class MemoryStream final : public ByteStream {
 public:
  explicit MemoryStream(Bytes b) : data_(b) {}
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError&) override {
    const std::size_t n = std::min(cap, data_.size() - pos_);
    if (n > 0) std::memcpy(dst, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::uint64_t raw_position() const override { return pos_; }

 private:
  Bytes data_;
  std::size_t pos_ = 0;
};
}  // namespace

std::unique_ptr<ByteStream> memory_stream(Bytes data) { return std::make_unique<MemoryStream>(data); }

std::unique_ptr<Source> stream_source(std::unique_ptr<ByteStream> in, std::uint64_t raw_size) {
  return std::make_unique<StreamSource>(std::move(in), raw_size);
}

std::unique_ptr<Source> open_source(const std::string& path, const OpenOptions& opts) {
  const bool is_stdin = path == "-";
  int fd = is_stdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    if (!is_stdin) ::close(fd);
    throw std::system_error(e, std::generic_category(), path);
  }
  if (S_ISDIR(st.st_mode)) {
    if (!is_stdin) ::close(fd);
    throw std::system_error(EISDIR, std::generic_category(), path);
  }
  // Sniff the first bytes (pushed back into the stream afterwards).
  std::vector<std::uint8_t> head(4);
  std::size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  Compression c = sniff(head.data(), head.size());
  if (c == Compression::none) {
    if (ends_with(path, ".gz")) c = Compression::gzip;
    if (ends_with(path, ".zst")) c = Compression::zstd;
  }
  const bool regular = S_ISREG(st.st_mode);
  if (c == Compression::none && regular && opts.allow_mmap && !is_stdin) {
    try {
      return std::make_unique<MappedSource>(fd, static_cast<std::uint64_t>(st.st_size));
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  auto fds = std::make_unique<FdStream>(fd, !is_stdin, std::move(head));
  std::uint64_t raw = regular ? static_cast<std::uint64_t>(st.st_size) : 0;
  return stream_source(decompress_stream(std::move(fds), c), raw);
}

}  // namespace binlogctl
