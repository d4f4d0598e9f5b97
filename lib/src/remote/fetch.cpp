// binlogctl fetch (fetch.h): server events -> verify's checks -> NAME.partial -> NAME.
#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/fetch.h>
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

namespace binlogctl {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_socket{-1};

constexpr std::uint8_t kMagic[4] = {0xfe, 0x62, 0x69, 0x6e};
constexpr std::size_t kWriteBlock = 1 << 20;
constexpr char kPartial[] = ".partial";
constexpr int kResumeAgain = -1;  // stream(): start again from what the directory holds

// Bytes pushed in as they arrive, read by an EventStream at absolute offsets; what the stream
// releases is dropped (memory: about one event).
class PushSource final : public Source {
 public:
  void append(Bytes b) {
    if (head_ > 0 && head_ >= buf_.size() / 2) {
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    buf_.insert(buf_.end(), b.begin(), b.end());
  }
  std::uint64_t end() const { return start_ + (buf_.size() - head_); }
  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off < start_ || off >= end()) return {};
    const std::size_t rel = static_cast<std::size_t>(off - start_);
    const std::size_t avail = buf_.size() - head_ - rel;
    return {buf_.data() + head_ + rel, std::min(n, avail)};
  }
  void release(std::uint64_t off) override {
    if (off <= start_) return;
    const std::uint64_t drop = std::min<std::uint64_t>(off - start_, buf_.size() - head_);
    head_ += static_cast<std::size_t>(drop);
    start_ += drop;
  }
  std::optional<std::uint64_t> size() const override { return std::nullopt; }
  std::uint64_t raw_position() const override { return end(); }
  std::uint64_t raw_size() const override { return 0; }
  // A whole event starts at `off` (its header says how long it is).
  bool complete_event_at(std::uint64_t off) {
    Bytes h = window(off, kCommonHeaderLen);
    if (h.size() < kCommonHeaderLen) return false;
    return window(off, load_le32(h.data() + 9)).size() == load_le32(h.data() + 9);
  }

 private:
  std::vector<std::uint8_t> buf_;
  std::size_t head_ = 0;
  std::uint64_t start_ = 0;
};

[[noreturn]] void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw_errno(dir);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Server file names in chain order: by base name, then by numeric suffix.
bool chain_before(const std::string& a, const std::string& b) {
  const auto na = numeric_suffix(a), nb = numeric_suffix(b);
  if (na && nb && base_name_of(a) == base_name_of(b)) return *na < *nb;
  return a < b;
}

// What a file in the directory holds, read with verify's checks: `keep` is the end of the last
// complete transaction (or of the file, when it ends with ROTATE or STOP: `complete`, and
// `next` the file the ROTATE names).
struct LocalScan {
  std::uint64_t keep = 0;
  bool complete = false;
  bool in_use = false;  // its format description is flagged in use (a file its server never closed)
  std::string next;
};

constexpr std::uint64_t kFdeFlagsOffset = 4 + 17;  // the first event's header flags
constexpr std::uint8_t kFlagInUse = 0x01;          // LOG_EVENT_BINLOG_IN_USE_F

LocalScan scan_local(const std::string& path, const std::string& name) {
  LocalScan r;
  auto src = open_source(path);
  DiagnosticCollector ignored;
  ChainVerifier v(ignored);
  StreamOptions so;
  so.resync = false;
  EventStream s(*src, name, v, so);
  (void)v.begin_file(InputFile{path, name, false, ""});
  Event ev;
  while (s.next(ev)) {
    if (ev.damage || s.aborted()) break;
    v.event(ev);
    if (ev.pos == 4 && ev.type() == EventType::format_description) r.in_use = (ev.header.flags & kFlagInUse) != 0;
    const std::uint64_t end = ev.pos + ev.raw.size();
    if (ev.type() == EventType::rotate || ev.type() == EventType::stop) {
      r.keep = end;
      r.complete = true;
      if (ev.type() == EventType::rotate)
        if (auto rot = decode_rotate(ev.body_reader(), *ev.fde)) r.next.assign(rot->next_file);
      break;
    }
    if (s.seen_fde() && v.current_transaction_id() == 0) r.keep = end;
  }
  return r;
}

class Fetcher {
 public:
  Fetcher(const FetchOptions& o, std::FILE* outf, std::FILE* err)
      : o_(o), err_(err), out_(outf), printer_(verify_printer(out_, o.format)), v_(*printer_, o.verify),
        dir_(o.result_dir.empty() ? std::string(".") : o.result_dir) {}

  ~Fetcher() {
    g_socket = -1;
    if (cur_.fd >= 0) ::close(cur_.fd);
  }
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  int run() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
      fmt::print(err_, "binlogctl: {}: cannot make the result directory: {}\n", dir_, ec.message());
      return 2;
    }
    int rc = 0;
    try {
      connect();
      for (;;) {
        std::string file;
        std::uint64_t pos = 4;
        if (!resume_point(file, pos)) return 2;
        rc = stream(file, pos);
        if (rc != kResumeAgain) break;
        replay_after_ = last_closed_;
        // The stream reached a file the directory already holds (after completing an earlier
        // file a crash had left open): go on from what the directory holds, on a new dump.
        g_socket = -1;
        client_.reset();
        connect();
      }
      if (cur_.fd >= 0) {  // the server's file goes on: it stays NAME.partial
        sync_now();
        v_.end_file(cur_.stream->offset(), cur_.stream->skipped_bytes(), cur_.stream->aborted());
        ::close(cur_.fd);
        cur_.fd = -1;
      }
    } catch (const RemoteError& e) {
      fmt::print(err_, "binlogctl: {}\n", e.what());
      rc = 2;
    } catch (const std::system_error& e) {
      fmt::print(err_, "binlogctl: {}\n", e.what());
      rc = 2;
    }
    if (cur_.fd >= 0) {
      try {
        sync_now();
      } catch (const std::system_error& e) {
        fmt::print(err_, "binlogctl: {}\n", e.what());
        rc = 2;
      }
    }
    v_.finish();
    print_verify_summary(out_, o_.format, v_.summary());
    out_.flush();
    if (rc == 2) return 2;
    return damaged_ || v_.summary().errors > 0 ? 1 : rc;
  }

 private:
  struct OutFile {
    std::string name;
    int fd = -1;
    std::uint64_t size = 0;        // bytes in the file, buffered ones included
    std::vector<std::uint8_t> buf; // not written yet
    std::unique_ptr<PushSource> src;
    std::unique_ptr<EventStream> stream;
  };

  std::string path(const std::string& name, bool partial) const {
    return (std::filesystem::path(dir_) / (partial ? name + kPartial : name)).string();
  }

  void connect() {
    client_ = std::make_unique<ReplicationClient>(o_.remote);
    g_socket = client_->socket_fd();
    if (g_stop) request_fetch_stop();
  }

  // Where to start: after what the directory holds, else the given or first listed file. The
  // first NAME.partial of the chain comes first: one left in the middle (a server crash, before
  // fetch knew to complete such files) is completed from the server before the later ones.
  bool resume_point(std::string& file, std::uint64_t& pos) {
   for (;;) {
    std::vector<std::string> partials, finals;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (!e.is_regular_file()) continue;
      const std::string n = e.path().filename().string();
      if (n.empty() || n[0] == '.') continue;
      if (ends_with(n, kPartial)) partials.push_back(n.substr(0, n.size() - (sizeof kPartial - 1)));
      else if (numeric_suffix(n)) finals.push_back(n);
    }
    std::sort(partials.begin(), partials.end(), chain_before);
    std::sort(finals.begin(), finals.end(), chain_before);
    if (!partials.empty()) {
      const std::string name = partials.front();
      const LocalScan r = scan_local(path(name, true), name);
      if (r.complete) {  // killed between writing the ROTATE and the rename
        finalize_file(name);
        if (partials.size() > 1 || (!finals.empty() && chain_before(name, finals.back()))) continue;
        return next_after(name, r.next, file, pos);
      }
      replay_finals_before(name);
      if (r.keep <= 4) {
        file = name;
        pos = 4;
        return true;
      }
      open_partial(name, r.keep);
      file = name;
      pos = r.keep;
      return true;
    }
    if (!finals.empty()) {
      const std::string name = finals.back();
      const LocalScan r = scan_local(path(name, false), name);
      replay_finals_before(std::string());
      if (!r.complete && r.in_use) return next_after(name, std::string(), file, pos);  // completed after a crash
      if (!r.complete) {
        fmt::print(err_, "binlogctl: {}: offset {}: the last complete file of the result directory does not end with "
                         "ROTATE or STOP (not written by fetch?): move it away or rename it to {}{} to resume it\n",
                   path(name, false), r.keep, name, kPartial);
        return false;
      }
      return next_after(name, r.next, file, pos);
    }
    pos = 4;
    if (!o_.start_file.empty()) {
      file = o_.start_file;
      return true;
    }
    const auto logs = client_->binary_logs();
    if (!logs || logs->empty()) {
      fmt::print(err_, "binlogctl: server {}: {}: name the first file to fetch\n", client_->label(),
                 logs ? "SHOW BINARY LOGS lists no file" : "cannot list its binary logs (BINLOG MONITOR or REPLICATION CLIENT privilege)");
      return false;
    }
    file = logs->front().name;
    return true;
   }
  }

  // After a stream that stopped at a file the directory holds (kResumeAgain): the complete
  // files from there up to `before` ("": all of them) go through the chain checks, read from
  // the directory, so that the checks see the chain unbroken up to where the new dump starts.
  void replay_finals_before(const std::string& before) {
    if (replay_after_.empty()) return;
    std::vector<std::string> finals;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (!e.is_regular_file() || n.empty() || n[0] == '.' || ends_with(n, kPartial) || !numeric_suffix(n)) continue;
      if (chain_before(replay_after_, n) && (before.empty() || chain_before(n, before))) finals.push_back(n);
    }
    replay_after_.clear();
    std::sort(finals.begin(), finals.end(), chain_before);
    for (const std::string& name : finals) {
      const std::string p = path(name, false);
      auto src = open_source(p);
      StreamOptions so;
      so.resync = false;
      EventStream s(*src, name, v_, so);
      InputFile f{p, name, false, ""};
      f.after_unclosed = std::exchange(after_unclosed_, false);
      if (!v_.begin_file(f)) continue;
      Event ev;
      while (s.next(ev)) v_.event(ev);
      v_.end_file(s.offset(), s.skipped_bytes(), s.aborted());
      last_closed_ = name;
    }
  }

  // The file after `name`: the one its ROTATE names, else (after a STOP) the next one listed.
  bool next_after(const std::string& name, const std::string& rotate_next, std::string& file, std::uint64_t& pos) {
    pos = 4;
    if (!rotate_next.empty()) {
      file = rotate_next;
      return true;
    }
    const auto logs = client_->binary_logs();
    if (logs)
      for (const BinlogFileInfo& f : *logs)
        if (chain_before(name, f.name)) {
          file = f.name;
          return true;
        }
    fmt::print(err_, "binlogctl: server {}: no file after {} to fetch yet\n", client_->label(), name);
    return false;
  }

  // Resumes NAME.partial: cut back to `keep` and read through the checks again, so that the
  // stream and the chain checks go on from where the file stands.
  void open_partial(const std::string& name, std::uint64_t keep) {
    const std::string p = path(name, true);
    const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw_errno(p);
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0 || ::fdatasync(fd) != 0) {
      const int e = errno;
      ::close(fd);
      throw std::system_error(e, std::generic_category(), p);
    }
    if (::lseek(fd, 0, SEEK_END) < 0) throw_errno(p);
    start_file(name, fd);
    auto local = open_source(p);
    for (std::uint64_t off = 0; off < keep;) {
      Bytes w = local->window(off, static_cast<std::size_t>(std::min<std::uint64_t>(kWriteBlock, keep - off)));
      if (w.empty()) break;
      cur_.src->append(w);
      off += w.size();
      local->release(off);
      Event ev;
      while (cur_.stream->offset() < off && cur_.src->complete_event_at(std::max<std::uint64_t>(cur_.stream->offset(), 4)) &&
             cur_.stream->next(ev))
        v_.event(ev);
    }
    cur_.size = keep;
  }

  void start_file(const std::string& name, int fd) {
    cur_ = OutFile{};
    cur_.name = name;
    cur_.fd = fd;
    cur_.src = std::make_unique<PushSource>();
    StreamOptions so;
    so.resync = false;
    cur_.stream = std::make_unique<EventStream>(*cur_.src, name, v_, so);
    InputFile f{name, name, false, client_->label()};
    f.after_unclosed = std::exchange(after_unclosed_, false);
    (void)v_.begin_file(f);
  }

  void new_file(const std::string& name) {
    const std::string p = path(name, true);
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw_errno(p);
    start_file(name, fd);
    fsync_dir(dir_);
    if (o_.observer != nullptr) o_.observer->on_file(name);
    cur_.src->append(Bytes(kMagic, 4));
    put(Bytes(kMagic, 4));
    write_out();  // a reader of the directory (serve) never meets the file empty
  }

  void put(Bytes b) {
    cur_.buf.insert(cur_.buf.end(), b.begin(), b.end());
    cur_.size += b.size();
    if (cur_.buf.size() >= kWriteBlock) write_out();
  }

  void write_out() {
    const std::uint8_t* p = cur_.buf.data();
    std::size_t n = cur_.buf.size();
    while (n > 0) {
      const ssize_t w = ::write(cur_.fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw_errno(path(cur_.name, true));
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    cur_.buf.clear();
    if (o_.observer != nullptr) o_.observer->on_written(cur_.name, cur_.size);
  }

  void sync_now() {
    write_out();
    if (::fdatasync(cur_.fd) != 0) throw_errno(path(cur_.name, true));
    last_sync_ = std::chrono::steady_clock::now();
  }

  void finalize_file(const std::string& name) {
    const std::string from = path(name, true), to = path(name, false);
    if (::rename(from.c_str(), to.c_str()) != 0) throw_errno(to);
    fsync_dir(dir_);
  }

  // The current file's last event is on disk: sync it, give it its final name.
  void close_complete() {
    sync_now();
    v_.end_file(cur_.stream->offset(), cur_.stream->skipped_bytes(), cur_.stream->aborted());
    ::close(cur_.fd);
    cur_.fd = -1;
    finalize_file(cur_.name);
    last_closed_ = cur_.name;
  }

  // The current file, which its server never closed (see stream()), is complete: its format
  // description gets back the in-use flag that the server's file has and the server cleared in
  // what it sent (the FDE's CRC32 is computed with the flag cleared, so it still holds), so that
  // the copy is the server's file byte for byte and verify sees what it sees on the server.
  void close_unclosed(const std::string& next) {
    fmt::print(err_, "binlogctl: server {}: {} ends at {} without ROTATE or STOP, and the server went on with {}: "
                     "the server never closed it (it crashed or was killed); kept as the server has it\n",
               client_->label(), cur_.name, cur_.size, next);
    std::fflush(err_);
    write_out();
    std::uint8_t b[5] = {};
    if (::pread(cur_.fd, b, sizeof b, static_cast<off_t>(kFdeFlagsOffset - 17)) == static_cast<ssize_t>(sizeof b) &&
        b[4] == static_cast<std::uint8_t>(EventType::format_description) && cur_.size > kFdeFlagsOffset) {
      std::uint8_t flags = 0;
      if (::pread(cur_.fd, &flags, 1, static_cast<off_t>(kFdeFlagsOffset)) != 1) throw_errno(path(cur_.name, true));
      flags |= kFlagInUse;
      if (::pwrite(cur_.fd, &flags, 1, static_cast<off_t>(kFdeFlagsOffset)) != 1) throw_errno(path(cur_.name, true));
    }
    close_complete();
    after_unclosed_ = true;
  }

  int stream(std::string file, std::uint64_t pos) {
    unsigned backoff = 1;
    std::string rotate_next;
    for (;;) {
      try {
        BinlogFeed feed(*client_, file, pos, !o_.remote.stop_never);
        for (;;) {
          if (g_stop) return 0;
          BinlogFeed::Item& it = feed.next();
          if (g_stop) return 0;
          if (it.kind == BinlogFeed::Kind::end) return 0;
          if (it.kind == BinlogFeed::Kind::file) {
            if (cur_.fd >= 0 && it.file == cur_.name && it.pos == cur_.size) continue;  // resumed where we are
            if (cur_.fd >= 0) {
              // The server went on to another file from the end of this one, which has no
              // ROTATE or STOP: the server has no more of it, because it never closed it (it
              // crashed, and began the next file when it started again). The copy holds all of
              // the server's file: it is complete, as the server has it.
              close_unclosed(it.file);
              rotate_next.clear();
              if (std::filesystem::exists(path(it.file, false)) || std::filesystem::exists(path(it.file, true)))
                return kResumeAgain;
            }
            if (it.pos != 4) {
              fmt::print(err_, "binlogctl: server {}: the stream starts {} at {}, where nothing of it is on disk\n",
                         client_->label(), it.file, it.pos);
              return 2;
            }
            new_file(it.file);
            continue;
          }
          if (cur_.fd < 0) {
            fmt::print(err_, "binlogctl: server {}: an event before any file in the stream\n", client_->label());
            return 2;
          }
          // Kind::event: through the checks first; written only when sound.
          cur_.src->append(it.raw);
          Event ev;
          if (!cur_.stream->next(ev) || cur_.stream->aborted()) {
            damaged_ = true;
            return 1;
          }
          v_.event(ev);
          if (ev.damage) {
            damaged_ = true;
            return 1;
          }
          if (ev.type() == EventType::mariadb_start_encryption && !warned_encrypted_) {
            // The server decrypts what it sends (its START_ENCRYPTION flagged ignorable): the copy
            // is a binlog in the clear, which every reader takes without a key.
            warned_encrypted_ = true;
            fmt::print(err_, "binlogctl: warning: server {}: {} is encrypted on the server (START_ENCRYPTION at {}); "
                             "the backup holds its events decrypted: it is stored unencrypted\n",
                       client_->label(), cur_.name, it.pos);
            std::fflush(err_);
          }
          if (o_.observer != nullptr) o_.observer->on_event(cur_.name, cur_.size, it.raw);
          put(it.raw);
          backoff = 1;
          if (ev.type() == EventType::rotate || ev.type() == EventType::stop) {
            rotate_next.clear();
            if (ev.type() == EventType::rotate)
              if (auto r = decode_rotate(ev.body_reader(), *ev.fde)) rotate_next.assign(r->next_file);
            close_complete();
            continue;
          }
          if (v_.current_transaction_id() == 0) {
            write_out();
            const auto now = std::chrono::steady_clock::now();
            if (o_.fsync_interval <= 0 || now - last_sync_ >= std::chrono::duration<double>(o_.fsync_interval)) sync_now();
            if (o_.observer != nullptr && !o_.observer->at_boundary()) return 0;
          }
        }
      } catch (const RemoteError& e) {
        if (g_stop) return 0;
        // A file the server no longer has (purged) does not come back by reconnecting.
        if (!o_.remote.stop_never || e.server_errno() == kErrReadingBinlog || e.permanent()) throw;
        fmt::print(err_, "binlogctl: {}; reconnecting in {} s\n", e.what(), backoff);
        std::fflush(err_);
      }
      // --stop-never: reconnect with backoff, and go on from the last event on disk.
      for (;;) {
        reconnect_wait(backoff, &g_stop);
        if (g_stop) return 0;
        try {
          g_socket = -1;
          client_.reset();
          connect();
          if (cur_.fd >= 0) {
            file = cur_.name;
            pos = cur_.size;
          } else if (!next_after(last_closed_, rotate_next, file, pos)) {
            continue;
          }
          fmt::print(err_, "binlogctl: server {}: reconnected, going on from {} at {}\n", client_->label(), file, pos);
          std::fflush(err_);
          break;
        } catch (const RemoteError& e) {
          if (e.permanent()) throw;
          fmt::print(err_, "binlogctl: {}; reconnecting in {} s\n", e.what(), backoff);
          std::fflush(err_);
        }
      }
    }
  }

  const FetchOptions& o_;
  std::FILE* err_;
  LineOutput out_;
  std::unique_ptr<DiagnosticSink> printer_;
  ChainVerifier v_;
  std::string dir_;
  std::unique_ptr<ReplicationClient> client_;
  OutFile cur_;
  std::string last_closed_;
  std::string replay_after_;  // see replay_finals_before
  bool after_unclosed_ = false;  // the file closed last was left open by its server (close_unclosed)
  bool damaged_ = false;
  bool warned_encrypted_ = false;  // the warning that the backup of an encrypted log is in the clear, once
  std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

}  // namespace

void request_fetch_stop() noexcept {
  g_stop = true;
  const int fd = g_socket.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);  // wakes the read that waits for the server
}

int run_fetch(const FetchOptions& opts, std::FILE* out, std::FILE* err) {
  Fetcher f(opts, out, err);
  return f.run();
}

}  // namespace binlogctl
