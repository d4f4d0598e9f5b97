// The flashback's reversed row spool (convert --format sql --flashback, sql_convert.cpp): the
// statements that undo a range, reversed with bounded memory. Records are appended in
// stream order into a buffer that is written to an unlinked temporary file in chunks once it
// passes the spill size, and read back chunk by chunk, last first. A record is its text followed
// by its length (4 bytes), so a chunk is read backwards without an index. A record that starts
// with a NUL byte is a note whose text is only known at the end (a DDL statement's comment,
// which depends on rows that may come after it): replay() hands it to an expander.
//
// Chunks go to the file compressed (zstd, fast mode: kSpillLevel): writing gigabytes of
// fresh page-cache pages costs more system time than the whole conversion (1 GiB of binlog made
// 2.7 GB of spill: 5-6 s in the kernel). The compression and the write run on a spill thread, one
// chunk at a time, while the reading goes on: the reader hands over a full buffer and takes back
// an empty one (two buffers of the spill size, a third for the compressed chunk).
#pragma once

#include <binlogctl/output.h>

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace binlogctl::sql_detail {

// Output goes out in blocks of this size (LineOutput::write would make a system call per
// statement): the store's replay and the converter's writing alike.
inline constexpr std::size_t kOutBlock = 256 * 1024;

// Records in one flat buffer, framed as the store frames them (text, then its length in 4
// bytes): a transaction's undo statements until its outcome is known, without an allocation per
// row. The rows of one rows event share their first lines (the position comment, SET TIMESTAMP):
// each row is a kRow record of its statement alone, and after the event's rows comes one kPrefix
// record of the shared lines; read back last first, the prefix comes before its rows and is
// written in front of each.
class Records {
 public:
  static constexpr char kPrefix = '\x01', kRow = '\x02';

  void add(std::string_view rec) {
    check(rec.size());
    buf_.append(rec);
    end_at(buf_.size() - rec.size());
  }
  // A record written in place: begin() gives the buffer (append the text), end(mark) frames it.
  std::string& begin(std::size_t& mark) {
    mark = buf_.size();
    return buf_;
  }
  void end(std::size_t mark) {
    check(buf_.size() - mark);
    end_at(mark);
  }
  // A record of one byte, `tag`, then `text`. Flattened: it runs per row (the converter's
  // undo statements), and std::string's appends are not always inlined where it is called.
  [[gnu::flatten]] void add_tagged(char tag, std::string_view text) {
    const std::size_t mark = buf_.size();
    buf_.push_back(tag);
    buf_.append(text);
    end(mark);
  }
  void cancel(std::size_t mark) { buf_.resize(mark); }
  bool empty() const { return buf_.empty(); }
  void clear() { buf_.clear(); }
  const std::string& framed() const { return buf_; }

 private:
  static void check(std::size_t n) {
    if (n > 0xffffffffu)  // events are at most 1 GiB, so a statement stays far below
      throw std::system_error(EFBIG, std::generic_category(), "a flashback statement over 4 GiB");
  }
  void end_at(std::size_t mark) {
    const auto n = static_cast<std::uint32_t>(buf_.size() - mark);
    char len[4];
    std::memcpy(len, &n, 4);
    buf_.append(len, 4);
  }
  std::string buf_;
};

class ReverseStore {
 public:
  static constexpr std::size_t kMaxChunk = 1024 * 1024;
  // Chunks of at most 1 MiB whatever the spill size: four buffers of a chunk (and a transaction's
  // records) are in flight at a time.
  ReverseStore(std::string dir, std::size_t chunk)
      : dir_(std::move(dir)), chunk_(std::clamp<std::size_t>(chunk, 4096, kMaxChunk)) {}
  ~ReverseStore();
  ReverseStore(const ReverseStore&) = delete;
  ReverseStore& operator=(const ReverseStore&) = delete;

  void add(std::string_view rec) {
    if (rec.size() > 0xffffffffu)  // events are at most 1 GiB, so a statement stays far below
      throw std::system_error(EFBIG, std::generic_category(), "a flashback statement over 4 GiB");
    buf_.append(rec);
    const auto n = static_cast<std::uint32_t>(rec.size());
    char len[4];
    std::memcpy(len, &n, 4);
    buf_.append(len, 4);
    if (buf_.size() >= chunk_) spill();
  }
  // Records already framed (a Records buffer), in order.
  void add(const Records& recs) {
    buf_.append(recs.framed());
    if (buf_.size() >= chunk_) spill();
  }

  using Expander = std::function<void(std::string_view, std::string&)>;

  // Every record, last first. The spill thread reads and decompresses the chunks, last first,
  // one ahead of this thread, which writes their records out.
  void replay(LineOutput& out, const Expander& expand);

 private:
  struct Chunk {
    std::uint64_t at = 0;
    std::size_t packed = 0, raw = 0;
  };

  static void emit_chunk(const std::string& c, LineOutput& out, const Expander& expand, std::string& prefix);
  bool read_at(char* p, std::size_t n, std::uint64_t at) const;
  void open_file();
  // Hands the full buffer to the spill thread (waiting while it still works on the previous one).
  void spill();
  // The spill thread: compresses each handed-over chunk and appends it to the file.
  void write_loop();
  // The spill thread while replaying: each chunk, last first, decompressed and handed over.
  void read_loop();
  int write_chunk(const std::string& raw);
  // Stops the spill thread (writing: after the chunk handed over; reading: at once).
  void stop_writer();

  std::string dir_;
  std::size_t chunk_;
  std::string buf_;   // the reader's: records being added
  int fd_ = -1;
  // Shared with the spill thread, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::string full_;  // a full chunk handed over
  bool has_full_ = false, stop_ = false;
  int error_ = 0;
  std::thread thread_;  // the spill thread: writing chunks, then reading them back
  // The spill thread's while it runs; the reader's after stop_writer().
  ZSTD_CCtx* cctx_ = nullptr;
  std::string packed_;
  std::uint64_t file_size_ = 0;
  std::vector<Chunk> chunks_;
};

}  // namespace binlogctl::sql_detail
