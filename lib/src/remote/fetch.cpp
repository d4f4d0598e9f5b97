// binlogctl fetch (fetch.h): server events -> verify's checks -> NAME.partial -> NAME.
#include <binlogctl/event_stream.h>
#include <binlogctl/fetch.h>
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include "events/events.h"

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
constexpr int kFailover = -2;     // stream(): the server is gone; another of --upstream goes on by GTID
constexpr int kGoOn = -3;         // put_event(): written, read on
constexpr char kFailoverLog[] = ".binlogctl-failover";  // in the directory: a failover happened (see follow_by_gtid)

// A server that cannot go on where the directory stands (its history differs, its format
// differs): reported, and the next server is tried.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The directory's newest transaction, where a failover goes on from (MariaDB GTIDs).
struct DirHistory {
  bool have_last = false;
  MariaGtid last{};                       // its GTID
  std::string path;                       // the file that holds it
  std::optional<Fde> fde;                 // that file's format description
  std::vector<std::pair<std::uint64_t, std::uint32_t>> events;  // its events (ANNOTATE_ROWS left out)
  MariaGtidList before;                   // per domain, the newest GTID before it
  MariaGtidList after;                    // per domain, the newest GTID at the end of the file
  MariaGtidList state;                    // the binlog state there (per domain and server id)
  bool have_state = false;                // a Gtid_list or a GTID was seen
  bool has_list = false;                  // the file has a Gtid_list
};

void set_domain(MariaGtidList& l, const MariaGtid& g) {
  // one entry per domain (a replica's position): the newest GTID of the domain
  std::vector<MariaGtid> drop;
  for (const MariaGtid& e : l.entries())
    if (e.domain == g.domain && e.server_id != g.server_id) drop.push_back(e);
  for (const MariaGtid& e : drop) l.erase(e.domain, e.server_id);
  l.update(g);
}

// A local binlog read to learn where it stands (scan_history, scan_local): framed without
// resynchronisation and tracked by a ChainVerifier whose findings are ignored, up to its first
// damage. next() hands out each event once the verifier has seen it.
class LocalWalk {
 public:
  LocalWalk(const std::string& path, const std::string& name)
      : src_(open_source(path)), v_(ignored_), s_(*src_, name, v_, no_resync()) {
    (void)v_.begin_file(InputFile{path, name, false, ""});
  }
  bool next(Event& ev) {
    if (!s_.next(ev) || ev.damage || s_.aborted()) return false;
    v_.event(ev);
    return true;
  }
  const ChainVerifier& verifier() const { return v_; }
  const EventStream& stream() const { return s_; }

 private:
  static StreamOptions no_resync() {
    StreamOptions so;
    so.resync = false;
    return so;
  }
  std::unique_ptr<Source> src_;
  DiagnosticCollector ignored_;
  ChainVerifier v_;
  EventStream s_;
};

DirHistory scan_history(const std::string& path, const std::string& name) {
  DirHistory h;
  h.path = path;
  LocalWalk w(path, name);
  MariaGtidList state, cur_before;
  MariaGtid cur{};
  bool collecting = false, list_seen = false;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> cur_events;
  Event ev;
  while (w.next(ev)) {
    const EventType t = ev.type();
    if (ev.pos == 4 && t == EventType::format_description) h.fde = *ev.fde;
    if (t == EventType::mariadb_gtid_list && !list_seen) {
      list_seen = true;
      h.has_list = true;
      ByteReader r = ev.body_reader();
      if (auto l = decode_gtid_list(r)) {
        for (const MariaGtid& g : l->entries()) {
          set_domain(state, g);
          h.state.update(g);
        }
        h.have_state = true;
      }
    } else if (t == EventType::mariadb_gtid) {
      ByteReader r = ev.body_reader();
      if (auto g = decode_mariadb_gtid(r, ev.header.server_id)) {
        cur_before = state;
        cur = g->gtid(ev.header.server_id);
        collecting = true;
        cur_events.clear();
      }
    }
    if (collecting && t != EventType::mariadb_annotate_rows)
      cur_events.emplace_back(ev.pos, static_cast<std::uint32_t>(ev.raw.size()));
    if (collecting && w.verifier().current_transaction_id() == 0) {
      collecting = false;
      h.have_last = true;
      h.last = cur;
      h.before = cur_before;
      h.events.swap(cur_events);
      set_domain(state, cur);
      h.state.update(cur);
      h.have_state = true;
    }
  }
  h.after = state;
  return h;
}

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
  LocalWalk w(path, name);
  Event ev;
  while (w.next(ev)) {
    if (ev.pos == 4 && ev.type() == EventType::format_description) r.in_use = (ev.header.flags & kFlagInUse) != 0;
    const std::uint64_t end = ev.pos + ev.raw.size();
    if (ev.type() == EventType::rotate || ev.type() == EventType::stop) {
      r.keep = end;
      r.complete = true;
      if (ev.type() == EventType::rotate)
        if (auto rot = decode_rotate(ev.body_reader(), *ev.fde)) r.next.assign(rot->next_file);
      break;
    }
    if (w.stream().seen_fde() && w.verifier().current_transaction_id() == 0) r.keep = end;
  }
  return r;
}

class Fetcher {
 public:
  Fetcher(const FetchOptions& o, std::FILE* outf, std::FILE* err)
      : o_(o), err_(err), out_(outf), printer_(verify_printer(out_, o.format)), v_(std::make_unique<ChainVerifier>(*printer_, o.verify)),
        dir_(o.result_dir.empty() ? std::string(".") : o.result_dir) {
    servers_.push_back(o.remote);
    for (const RemoteOptions& r : o.failover) servers_.push_back(r);
  }

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
      // After a failover the directory goes on by GTID only (its positions are its own).
      bool by_gtid = std::filesystem::exists(std::filesystem::path(dir_) / kFailoverLog);
      std::size_t first = 0;
      if (!by_gtid) {
        try {
          connect();
        } catch (const RemoteError& e) {
          if (servers_.size() == 1 || e.permanent()) throw;
          fmt::print(err_, "binlogctl: {}; trying the other servers of --upstream\n", e.what());
          std::fflush(err_);
          if (holds_binlogs()) {
            by_gtid = true;
            first = 1;
          } else {
            // Nothing to go on from: the first server that answers is read from its first file.
            for (server_ = 1;; ++server_) {
              try {
                connect();
                break;
              } catch (const RemoteError& e2) {
                if (server_ + 1 == servers_.size() || e2.permanent()) throw;
                fmt::print(err_, "binlogctl: {}\n", e2.what());
                std::fflush(err_);
              }
            }
          }
        }
      }
      for (;;) {
        if (by_gtid) {
          rc = follow_by_gtid(first);
          break;
        }
        std::string file;
        std::uint64_t pos = 4;
        if (!resume_point(file, pos)) return 2;
        rc = stream(file, pos);
        if (rc == kFailover) {
          by_gtid = true;
          first = (server_ + 1) % servers_.size();
          continue;
        }
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
        v_->end_file(cur_.stream->offset(), cur_.stream->skipped_bytes(), cur_.stream->aborted());
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
    v_->finish();
    print_verify_summary(out_, o_.format, v_->summary());
    out_.flush();
    if (rc == 2) return 2;
    return damaged_ || v_->summary().errors > 0 || earlier_errors_ > 0 ? 1 : rc;
  }

 private:
  struct OutFile {
    std::string name;
    int fd = -1;
    std::uint64_t size = 0;        // bytes in the file, buffered ones included
    std::vector<std::uint8_t> buf; // not written yet
    // Events in `buf` the observer is told of when they are written (write_out): a transaction
    // reaches serve's replicas whole, as a primary sends it, unless it passes the 1 MiB buffer.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> told;
    std::unique_ptr<PushSource> src;
    std::unique_ptr<EventStream> stream;
  };

  std::string path(const std::string& name, bool partial) const {
    return (std::filesystem::path(dir_) / (partial ? name + kPartial : name)).string();
  }

  std::string label() const { return server_label(servers_[server_]); }

  void connect() {
    client_ = std::make_unique<ReplicationClient>(servers_[server_]);
    g_socket = client_->socket_fd();
    if (o_.observer != nullptr) o_.observer->on_server(label(), false);
    if (g_stop) request_fetch_stop();
  }

  // The directory's files, NAME.partial ones apart, in chain order.
  void list_dir(std::vector<std::string>& partials, std::vector<std::string>& finals) const {
    partials.clear();
    finals.clear();
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (!e.is_regular_file()) continue;
      const std::string n = e.path().filename().string();
      if (n.empty() || n[0] == '.') continue;
      if (ends_with(n, kPartial)) partials.push_back(n.substr(0, n.size() - (sizeof kPartial - 1)));
      else if (numeric_suffix(n)) finals.push_back(n);
    }
    std::sort(partials.begin(), partials.end(), chain_before);
    std::sort(finals.begin(), finals.end(), chain_before);
  }

  // Where to start: after what the directory holds, else the given or first listed file. The
  // first NAME.partial of the chain comes first: one left in the middle (a server crash, before
  // fetch knew to complete such files) is completed from the server before the later ones.
  bool resume_point(std::string& file, std::uint64_t& pos) {
   for (;;) {
    std::vector<std::string> partials, finals;
    list_dir(partials, finals);
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
      EventStream s(*src, name, *v_, so);
      InputFile f{p, name, false, ""};
      f.after_unclosed = std::exchange(after_unclosed_, false);
      if (!v_->begin_file(f)) continue;
      Event ev;
      while (s.next(ev)) v_->event(ev);
      v_->end_file(s.offset(), s.skipped_bytes(), s.aborted());
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
        v_->event(ev);
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
    cur_.stream = std::make_unique<EventStream>(*cur_.src, name, *v_, so);
    InputFile f{name, name, false, label()};
    f.after_unclosed = std::exchange(after_unclosed_, false);
    (void)v_->begin_file(f);
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
    if (o_.observer != nullptr && !cur_.told.empty()) {
      const std::uint64_t base = cur_.size - cur_.buf.size();
      for (const auto& [pos, len] : cur_.told)
        o_.observer->on_event(cur_.name, pos, Bytes(cur_.buf.data() + (pos - base), len));
      cur_.told.clear();
    }
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
    v_->end_file(cur_.stream->offset(), cur_.stream->skipped_bytes(), cur_.stream->aborted());
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

  // One event of the server's (or placed in the directory's file by a failover), through the
  // checks first, then written. kGoOn, or what stream() returns.
  int put_event(Bytes raw, std::string& rotate_next) {
    cur_.src->append(raw);
    Event ev;
    if (!cur_.stream->next(ev) || cur_.stream->aborted()) {
      damaged_ = true;
      return 1;
    }
    v_->event(ev);
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
                 label(), cur_.name, ev.pos);
      std::fflush(err_);
    }
    if (o_.observer != nullptr) cur_.told.emplace_back(cur_.size, static_cast<std::uint32_t>(raw.size()));
    put(raw);
    if (ev.type() == EventType::rotate || ev.type() == EventType::stop) {
      rotate_next.clear();
      if (ev.type() == EventType::rotate)
        if (auto r = decode_rotate(ev.body_reader(), *ev.fde)) rotate_next.assign(r->next_file);
      close_complete();
      return kGoOn;
    }
    if (v_->current_transaction_id() == 0) {
      write_out();
      const auto now = std::chrono::steady_clock::now();
      if (o_.fsync_interval <= 0 || now - last_sync_ >= std::chrono::duration<double>(o_.fsync_interval)) sync_now();
      if (o_.observer != nullptr && !o_.observer->at_boundary()) return 0;
    }
    return kGoOn;
  }

  bool holds_binlogs() const {
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      std::string n = e.path().filename().string();
      if (ends_with(n, kPartial)) n.resize(n.size() - (sizeof kPartial - 1));
      if (e.is_regular_file() && !n.empty() && n[0] != '.' && numeric_suffix(n)) return true;
    }
    return false;
  }

  // ---- failover (--upstream A,B,...): another server goes on where the directory stands ----
  //
  // The directory's newest transaction (GTID d-s-n) is asked of the server from the GTID before it
  // (MariaDB @slave_connect_state, strict mode: a server without that GTID refuses). The server's
  // copy of it must do what the directory's does, event by event (comparable_event()): otherwise the
  // server's history differs and it is refused, nothing of it written. Its later events go on in
  // the directory's current file: its bytes, but for end_log_pos and the CRC32, which are those
  // of their place in the file (as a replica's relay log places a primary's events). Where the
  // server begins a file (ROTATE, or a new format description after a restart), the directory
  // ends its file with a ROTATE to its own next name and begins that file with the server's
  // format description, Gtid_list and checkpoint: from there its files are the server's, byte
  // for byte, but for their names and the ROTATE that ends each. Positions are the directory's
  // own from the failover on: every later reconnect goes by GTID (kFailoverLog marks it).

  static std::string next_name(const std::string& name) {
    const auto n = numeric_suffix(name);
    const std::size_t dot = name.rfind('.');
    const std::size_t width = dot == std::string::npos ? 6 : name.size() - dot - 1;
    return fmt::format("{}.{:0{}}", base_name_of(name), n ? *n + 1 : 1, width);
  }

  // The directory where a failover goes on: its current file cut back to its last complete
  // transaction and read again through a fresh verifier (the old one saw a transaction that will
  // not be finished); a file that ended with ROTATE is followed by the (empty) next one.
  void prepare_dir() {
    if (cur_.fd >= 0) {
      // What is not written yet is the unfinished transaction of the server that went away: it
      // is dropped, never told to the observer (its replicas get no part of it).
      cur_.size -= cur_.buf.size();
      cur_.buf.clear();
      cur_.told.clear();
      if (::fdatasync(cur_.fd) != 0) throw_errno(path(cur_.name, true));
      ::close(cur_.fd);
      cur_.fd = -1;
    }
    cur_ = OutFile{};
    earlier_errors_ += v_->summary().errors;
    v_ = std::make_unique<ChainVerifier>(*printer_, o_.verify);
    header_phase_ = false;
    std::vector<std::string> partials, finals;
    for (;;) {
      list_dir(partials, finals);
      if (partials.empty()) break;
      const std::string name = partials.front();
      const LocalScan r = scan_local(path(name, true), name);
      if (r.complete) {  // killed between the ROTATE and the rename
        finalize_file(name);
        continue;
      }
      open_partial(name, std::max<std::uint64_t>(r.keep, 4));
      header_phase_ = cur_.size <= 4;
      return;
    }
    if (finals.empty()) throw Refused("the result directory holds no binlog to go on from");
    const std::string last = finals.back();
    const LocalScan r = scan_local(path(last, false), last);
    last_closed_ = last;
    new_file(r.complete && !r.next.empty() ? r.next : next_name(last));
    header_phase_ = true;
  }

  // The newest transaction of the directory: in its current file, else in the complete files
  // before it (newest first).
  DirHistory history() {
    DirHistory cur = scan_history(path(cur_.name, true), cur_.name);
    if (cur.have_last) return cur;
    std::vector<std::string> partials, finals;
    list_dir(partials, finals);
    for (auto it = finals.rbegin(); it != finals.rend(); ++it) {
      if (!chain_before(*it, cur_.name)) continue;
      DirHistory h = scan_history(path(*it, false), *it);
      if (!h.have_last) continue;
      if (cur.have_state) {
        h.after = cur.after;
        h.state = cur.state;
      }
      return h;
    }
    return cur;
  }

  void log_failover(const std::string& gtid) {
    const std::string p = (std::filesystem::path(dir_) / kFailoverLog).string();
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw_errno(p);
    const std::string line = fmt::format("{} went on after GTID {} at {} {}\n", label(), gtid, cur_.name, cur_.size);
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
    const int e = errno;
    ::close(fd);
    if (!ok) throw std::system_error(e, std::generic_category(), p);
    fsync_dir(dir_);
  }

  // The event as it stands in the directory's file: end_log_pos (unless 0, MariaDB 11.4's inside
  // transactions) and the CRC32 for its place there.
  Bytes place(Bytes raw) {
    rewrite_.assign(raw.begin(), raw.end());
    const std::uint64_t end = cur_.size + rewrite_.size();
    if (end > kMaxDumpPosition) throw Refused(fmt::format("{} would pass 4 GiB", cur_.name));
    if (load_le32(rewrite_.data() + 13) != 0) store_le32(rewrite_.data() + 13, static_cast<std::uint32_t>(end));
    if (dir_crc_) store_le32(rewrite_.data() + rewrite_.size() - 4, compute_event_crc(Bytes(rewrite_.data(), rewrite_.size())));
    return Bytes(rewrite_.data(), rewrite_.size());
  }

  // A ROTATE to the directory's next file, as the server's own would be (its time, server id).
  int rotate_dir(std::uint32_t when, std::uint32_t server_id, std::uint16_t flags) {
    const std::string next = next_name(cur_.name);
    std::uint8_t pos[8];
    store_le64(pos, 4);
    std::vector<std::uint8_t> ev;
    encode_event_at(cur_.size, EventHeader{when, static_cast<std::uint8_t>(EventType::rotate), server_id, 0, 0, flags},
                    Bytes(pos, 8), Bytes(reinterpret_cast<const std::uint8_t*>(next.data()), next.size()), dir_crc_, ev);
    std::string rotate_next;
    const int r = put_event(Bytes(ev.data(), ev.size()), rotate_next);
    if (r != kGoOn) return r;
    new_file(next);
    header_phase_ = true;
    hdr_fde_ = false;
    hdr_list_ = false;
    return kGoOn;
  }

  // A Gtid_list for a file the directory begins where the server's own file began before the
  // failover point (its list would say less than the directory holds): the directory's state.
  int put_gtid_list(const MariaGtidList& state, std::uint32_t when, std::uint32_t server_id) {
    std::vector<std::uint8_t> body;
    encode_gtid_list(state.entries(), 0, body);
    std::vector<std::uint8_t> ev;
    encode_event_at(cur_.size, EventHeader{when, static_cast<std::uint8_t>(EventType::mariadb_gtid_list), server_id, 0, 0, 0},
                    Bytes(body.data(), body.size()), {}, dir_crc_, ev);
    std::string rotate_next;
    return put_event(Bytes(ev.data(), ev.size()), rotate_next);
  }

  // Server `i` goes on after the directory's newest transaction. Returns what run() returns,
  // or kFailover when the connection was lost after it went on (the caller tries again).
  // Throws Refused (the server cannot go on here) or RemoteError (it cannot be read).
  int take_over(std::size_t i) {
    server_ = i;
    g_socket = -1;
    client_.reset();
    prepare_dir();
    const DirHistory h = history();
    const DirHistory here = scan_history(path(cur_.name, true), cur_.name);  // the current file
    std::optional<Fde> dir_fde = here.fde;
    hdr_fde_ = here.fde.has_value();
    hdr_list_ = here.has_list;
    if (h.have_last && !h.fde) throw Refused(h.path + ": no format description");
    dir_crc_ = dir_fde && dir_fde->crc32();
    RemoteOptions ro = servers_[i];
    // Heartbeats at least twice per wait: they are when a server that sends nothing is given up.
    const unsigned wait = std::max(1u, o_.failover_wait_seconds);
    if (ro.heartbeat_seconds == 0 || ro.heartbeat_seconds > (wait + 1) / 2) ro.heartbeat_seconds = (wait + 1) / 2;
    // One GTID per domain: the newest before the directory's newest transaction, whose copy
    // the server then sends first.
    ro.start_gtid = (h.have_last ? h.before : h.after).to_string();
    if (ro.start_gtid.empty())
      throw Refused("the result directory holds no GTID to go on from (failover needs MariaDB GTIDs)");
    client_ = std::make_unique<ReplicationClient>(ro);
    g_socket = client_->socket_fd();
    if (g_stop) request_fetch_stop();
    if (!client_->is_mariadb()) throw Refused("failover goes on by MariaDB GTID, and this is a MySQL server");
    BinlogFeed feed(*client_, std::string(), 4, false, true);
    feed.report_idle(true);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
    std::optional<Fde> fde;              // the server's current one
    std::vector<std::uint8_t> fde_raw;   // its bytes (a directory file that begins here needs one)
    std::size_t matched = 0;
    bool compared = !h.have_last;  // nothing to compare: the directory has a state, no transaction
    bool went_on = false;
    std::vector<std::uint8_t> mine;
    int dir_fd = -1;
    struct Closer {
      int& fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } closer{dir_fd};
    std::string rotate_next;
    auto go_on = [&]() -> int {
      went_on = true;
      fmt::print(err_, "binlogctl: server {}: goes on after GTID {} ({} at {}): the result directory continues "
                       "with this server's transactions\n",
                 label(), h.have_last ? h.last.to_string() : std::string("(none)"), cur_.name, cur_.size);
      std::fflush(err_);
      log_failover(h.have_last ? h.last.to_string() : ro.start_gtid);
      if (o_.observer != nullptr) o_.observer->on_server(label(), true);
      if (cur_.size > 4) return kGoOn;
      // A file the directory began: the server's format description, then the directory's state.
      if (fde_raw.empty()) throw Refused("it sent no format description");
      dir_crc_ = fde->crc32();
      int r = put_event(place(Bytes(fde_raw.data(), fde_raw.size())), rotate_next);
      if (r != kGoOn) return r;
      hdr_fde_ = true;
      hdr_list_ = true;
      return put_gtid_list(h.state, load_le32(fde_raw.data()), load_le32(fde_raw.data() + 5));
    };
    try {
      for (;;) {
        if (g_stop) return 0;
        BinlogFeed::Item& it = feed.next();
        if (g_stop) return 0;
        if (it.kind == BinlogFeed::Kind::end) return 0;
        if (it.kind == BinlogFeed::Kind::file) continue;
        if (!compared && matched == 0 && std::chrono::steady_clock::now() >= give_up)
          // A server that has the GTID before the directory's newest transaction and not that
          // one waits for it, which a replica of a dead primary does for ever.
          throw Refused(fmt::format("it sent no copy of GTID {} within {} s (it lacks it, or lags behind)",
                                    h.have_last ? h.last.to_string() : ro.start_gtid, wait));
        if (it.kind == BinlogFeed::Kind::idle) continue;
        const Bytes raw = it.raw;
        if (raw.size() < kCommonHeaderLen) throw Refused("it sent a short event");
        const auto t = static_cast<EventType>(raw[4]);
        if (t == EventType::format_description) {
          auto f = decode_fde(raw, it.pos);
          if (!f) throw Refused(fmt::format("its format description at {} {} does not decode", it.file, it.pos));
          if (!went_on && dir_fde)
            if (std::string d = format_difference(*dir_fde, *f); !d.empty())
              throw Refused("its binlog format differs from the result directory's: " + d);
          fde = *f;
          fde_raw.assign(raw.begin(), raw.end());
          if (!went_on) continue;
        }
        if (!fde && !dir_fde && !h.fde) throw Refused("it sent events before a format description");
        const Fde& ef = fde ? *fde : (dir_fde ? *dir_fde : *h.fde);
        if (ef.crc32() && raw.size() >= kCommonHeaderLen + 4 &&
            compute_event_crc(raw) != load_le32(raw.data() + raw.size() - 4)) {
          fmt::print(err_, "binlogctl: server {}: {}: offset {}: the event's CRC32 does not match: not written\n",
                     label(), it.file, it.pos);
          damaged_ = true;
          return 1;
        }
        // Events of a file's header: the Gtid_list (and START_ENCRYPTION) only begin a file.
        const bool header = t == EventType::format_description || t == EventType::mariadb_gtid_list ||
                            t == EventType::mariadb_start_encryption || t == EventType::rotate ||
                            t == EventType::stop;
        if (!went_on) {
          if (header || t == EventType::mariadb_binlog_checkpoint) continue;
          if (!compared) {
            if (t == EventType::mariadb_annotate_rows) continue;
            // The server's copy of the directory's newest transaction, event by event.
            if (matched == 0 && t != EventType::mariadb_gtid)
              throw Refused(fmt::format("its first event after GTID {} is not a GTID event", ro.start_gtid));
            if (matched >= h.events.size()) throw Refused("its copy of GTID " + h.last.to_string() + " is longer");
            const auto [off, size] = h.events[matched];
            if (dir_fd < 0) {
              dir_fd = ::open(h.path.c_str(), O_RDONLY | O_CLOEXEC);
              if (dir_fd < 0) throw_errno(h.path);
            }
            mine.resize(size);
            if (::pread(dir_fd, mine.data(), size, static_cast<off_t>(off)) != static_cast<ssize_t>(size))
              throw_errno(h.path);
            const ComparableEvent a = comparable_event(Bytes(mine.data(), mine.size()), *h.fde);
            const ComparableEvent b = comparable_event(raw, ef);
            if (a.type != b.type || a.text != b.text)
              throw Refused(fmt::format("its history differs: its GTID {} is not the result directory's (event {} of "
                                        "the transaction: type {} at {} {}, the directory's: type {} at {} {})",
                                        h.last.to_string(), matched + 1, b.type, it.file, it.pos, a.type, h.path, off));
            if (++matched < h.events.size()) continue;
            compared = true;
            if (const int r = go_on(); r != kGoOn) return r;
            continue;
          }
          if (const int r = go_on(); r != kGoOn) return r;
          // this event is the first one placed
        }
        // After the failover point: the server's events go on in the directory's files.
        int r = kGoOn;
        if (t == EventType::rotate) {
          if (!header_phase_)
            r = rotate_dir(load_le32(raw.data()), load_le32(raw.data() + 5),
                           static_cast<std::uint16_t>(raw[17] | (raw[18] << 8)));
        } else if (t == EventType::stop) {
          // the format description of the server's next file ends the directory's file
        } else if (t == EventType::format_description) {
          if (!header_phase_) r = rotate_dir(load_le32(raw.data()), load_le32(raw.data() + 5), 0);
          if (r == kGoOn && !hdr_fde_) {
            dir_crc_ = fde->crc32();
            hdr_fde_ = true;
            r = put_event(place(raw), rotate_next);
          }
        } else if (t == EventType::mariadb_gtid_list) {
          if (header_phase_ && !hdr_list_) {
            hdr_list_ = true;
            r = put_event(place(raw), rotate_next);
          }
        } else if (header) {  // START_ENCRYPTION
          if (header_phase_ && hdr_fde_ && !hdr_list_) r = put_event(place(raw), rotate_next);
        } else {
          if (t != EventType::mariadb_binlog_checkpoint) header_phase_ = false;
          r = put_event(place(raw), rotate_next);
        }
        if (r != kGoOn) return r;
      }
    } catch (const RemoteError& e) {
      if (!went_on || g_stop || e.permanent()) throw;
      fmt::print(err_, "binlogctl: {}\n", e.what());
      std::fflush(err_);
      return kFailover;
    }
  }

  // The servers of --upstream in turn from `first`, each asked to go on where the directory
  // stands, until one does; again with fetch's backoff when none can.
  int follow_by_gtid(std::size_t first) {
    unsigned backoff = 1;
    for (;;) {
      bool again = false;
      for (std::size_t k = 0; k < servers_.size() && !again; ++k) {
        if (g_stop) return 0;
        const std::size_t i = (first + k) % servers_.size();
        try {
          const int rc = take_over(i);
          if (rc != kFailover) return rc;
          first = i;  // lost after going on: the same server first, after a short wait
          backoff = 1;
          again = true;
        } catch (const Refused& e) {
          fmt::print(err_, "binlogctl: server {}: refused: {}\n", server_label(servers_[i]), e.what());
          std::fflush(err_);
        } catch (const RemoteError& e) {
          if (g_stop) return 0;
          fmt::print(err_, "binlogctl: {}; trying the next server of --upstream\n", e.what());
          std::fflush(err_);
        }
      }
      reconnect_wait(backoff, &g_stop);
      if (g_stop) return 0;
    }
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
          const int r = put_event(it.raw, rotate_next);
          if (r != kGoOn) return r;
          backoff = 1;
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
          if (servers_.size() > 1) {
            try {
              connect();
            } catch (const RemoteError& e) {
              if (e.permanent()) throw;
              fmt::print(err_, "binlogctl: {}; trying the other servers of --upstream\n", e.what());
              std::fflush(err_);
              return kFailover;
            }
          } else {
            connect();
          }
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
  std::unique_ptr<ChainVerifier> v_;
  std::string dir_;
  std::unique_ptr<ReplicationClient> client_;
  OutFile cur_;
  std::string last_closed_;
  std::string replay_after_;  // see replay_finals_before
  bool after_unclosed_ = false;  // the file closed last was left open by its server (close_unclosed)
  bool damaged_ = false;
  bool warned_encrypted_ = false;
  std::vector<RemoteOptions> servers_;  // --upstream's servers: the first, then the failover ones
  std::size_t server_ = 0;              // the one read
  std::vector<std::uint8_t> rewrite_;   // place()'s event
  bool dir_crc_ = false;                // the directory's current file has CRC32s (failover)
  bool header_phase_ = false;           // it holds its header events only (failover)
  bool hdr_fde_ = false, hdr_list_ = false;  // its header has a format description, a Gtid_list
  std::uint64_t earlier_errors_ = 0;    // findings of the verifiers before a failover  // the warning that the backup of an encrypted log is in the clear, once
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
