// serve's archive (binlog_archive.h): the command line's inputs listed through the input seam,
// each file scanned once for what a replica's setup queries ask (server version, checksum,
// server id, GTID state, sizes) and scanned again only when it changed.
#include "archive_internal.h"

#include <binlogctl/crypto.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/statement_kind.h>

#include "events/events.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <unordered_map>

namespace binlogctl::serve {

namespace fs = std::filesystem;

bool is_part_of_group(std::uint8_t t) noexcept {
  switch (static_cast<EventType>(t)) {
    case EventType::mariadb_gtid:
    case EventType::intvar:
    case EventType::rand:
    case EventType::user_var:
    case EventType::table_map:
    case EventType::mariadb_annotate_rows:
      return true;
    default:
      return false;
  }
}

namespace {

constexpr std::size_t kChunk = 256 * 1024;
constexpr char kPartial[] = ".partial";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Keeps the first error the framing reports (the scan stops there) and whether the file ends
// inside an event (a growing file's tail, not a problem for the scan).
class ScanSink final : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override {
    if (d.severity != Severity::error) return;
    if (d.check == Check::truncated_event) {
      torn = true;
      return;
    }
    if (!error) error = d;
  }
  std::optional<Diagnostic> error;
  bool torn = false;
};

void commit_pending(FileScan& s) {
  if (s.pending == 1 || s.pending == 2) {
    s.state_end.update(s.pending_maria);
    bool found = false;
    for (MariaGtid& g : s.domain_last) {
      if (g.domain == s.pending_maria.domain) {
        g = s.pending_maria;
        found = true;
      }
    }
    if (!found) s.domain_last.push_back(s.pending_maria);
  } else if (s.pending == 3) {
    (void)s.executed_end.add(s.pending_uuid, s.pending_tag, s.pending_gno);
  }
  s.pending = 0;
}

void scan_event(FileScan& s, const Event& ev, std::string& scratch) {
  const std::uint8_t t = ev.type_code();
  if (ev.header.timestamp != 0 && static_cast<std::int64_t>(ev.header.timestamp) > s.newest_time)
    s.newest_time = ev.header.timestamp;
  s.closed = false;
  switch (static_cast<EventType>(t)) {
    case EventType::table_map: {
      // binlog_row_metadata as the server had it: the optional metadata's COLUMN_NAME field
      // (type 4) is written only under FULL; any other field only under MINIMAL or FULL.
      auto tm = decode_table_map(ev.body_reader(), *ev.fde);
      if (!tm) return;
      s.row_metadata = tm->optional_metadata.empty() ? "NO_LOG" : "MINIMAL";
      ByteReader r(tm->optional_metadata, 0);
      while (r.remaining() > 0) {
        const auto type = r.le<std::uint8_t>();
        const std::uint64_t len = r.packed_int();
        if (!r.ok() || len > r.remaining()) break;
        if (type == 4) {
          s.row_metadata = "FULL";
          break;
        }
        r.skip(static_cast<std::size_t>(len));
      }
      return;
    }
    case EventType::format_description:
      if (!s.has_fde) {
        s.has_fde = true;
        s.fde_end = ev.pos + ev.header.event_size;
        s.server_version = ev.fde->server_version;
        s.mariadb = ev.fde->flavor == Flavor::mariadb;
        s.server_id = ev.header.server_id;
        s.checksum_alg = ev.fde->crc32() ? 1 : 0;
      }
      return;
    case EventType::rotate: {
      s.closed = true;
      auto r = decode_rotate(ev.body_reader(), *ev.fde);
      if (r) s.rotate_next.assign(r->next_file);
      return;
    }
    case EventType::stop:
      s.closed = true;
      return;
    case EventType::mariadb_gtid_list: {
      if (s.has_gtid_list) return;
      ByteReader r = ev.body_reader();
      auto l = decode_gtid_list(r);
      if (!l) return;
      s.has_gtid_list = true;
      s.gtid_list = l->entries();
      s.state_end = l.value();
      s.domain_last.clear();
      for (const MariaGtid& g : s.gtid_list) {
        bool found = false;
        for (MariaGtid& d : s.domain_last)
          if (d.domain == g.domain) {
            d = g;
            found = true;
          }
        if (!found) s.domain_last.push_back(g);
      }
      return;
    }
    case EventType::previous_gtids: {
      if (s.has_previous_gtids) return;
      ByteReader r = ev.body_reader();
      auto p = decode_previous_gtids(r);
      if (!p) return;
      s.has_previous_gtids = true;
      s.previous_gtids = p.value();
      s.executed_end = p.value();
      return;
    }
    case EventType::mariadb_gtid: {
      if (s.pending == 2) commit_pending(s);
      ByteReader r = ev.body_reader();
      auto g = decode_mariadb_gtid(r, ev.header.server_id);
      if (!g) {
        s.pending = 0;
        return;
      }
      s.pending = g->standalone() ? 2 : 1;
      s.pending_maria = g->gtid(ev.header.server_id);
      return;
    }
    case EventType::gtid:
    case EventType::gtid_tagged_log: {
      ByteReader r = ev.body_reader();
      auto g = t == static_cast<std::uint8_t>(EventType::gtid) ? decode_gtid_log(r) : decode_gtid_tagged_log(r);
      if (!g || g->gno == 0) {
        s.pending = 0;
        return;
      }
      s.pending = 3;
      s.pending_uuid = g->uuid;
      s.pending_tag.assign(g->tag);
      s.pending_gno = g->gno;
      return;
    }
    case EventType::anonymous_gtid:
      s.pending = 0;
      return;
    case EventType::xid:
    case EventType::xa_prepare:
      commit_pending(s);
      return;
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      if (s.pending == 0) return;
      if (s.pending == 2) {
        commit_pending(s);
        return;
      }
      auto q = decode_statement(ev, scratch);
      if (!q) return;
      const StatementKind k = classify_statement(q->sql);
      if (s.pending == 1 && (k == StatementKind::commit || k == StatementKind::rollback)) commit_pending(s);
      if (s.pending == 3 && k != StatementKind::begin) commit_pending(s);
      return;
    }
    default:
      if (s.pending == 2 && !is_part_of_group(t)) commit_pending(s);  // the statement itself
      return;
  }
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Scans `path` (or goes on from `prev`, the scan of the same file when it was shorter).
std::shared_ptr<FileScan> scan_file(const std::string& path, const struct stat& st,
                                    const std::shared_ptr<const FileScan>& prev, const KeyRing* keys) {
  auto s = std::make_shared<FileScan>();
  const bool compressed = is_compressed_path(path);
  std::uint64_t resume_at = 0;
  if (prev && !compressed && !prev->compressed && prev->dev == st.st_dev && prev->ino == st.st_ino &&
      static_cast<std::uint64_t>(st.st_size) >= prev->raw_size && prev->readable && prev->problem.empty() &&
      prev->has_fde && prev->end >= prev->fde_end) {
    *s = *prev;  // go on from where it stopped
    resume_at = prev->end;
  }
  s->path = path;
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  s->raw_size = static_cast<std::uint64_t>(st.st_size);
  s->mtime_ns = mtime_ns(st);
  s->compressed = compressed;
  s->torn = false;

  std::unique_ptr<Source> src;
  try {
    PreadSource* p = nullptr;
    src = open_archive_file(path, keys, &p);
    if (p != nullptr && resume_at > 0) p->set_gap(s->fde_end, resume_at);
  } catch (const std::system_error& e) {
    s->readable = false;
    s->problem = e.code().message();
    return s;
  }
  ScanSink sink;
  StreamOptions so;
  so.resync = false;
  EventStream stream(*src, log_name_of(path), sink, so);
  Event ev;
  std::string scratch;
  bool first = true;
  while (stream.next(ev)) {
    if (first) {
      s->readable = true;
      first = false;
    }
    if (sink.error) break;
    if (ev.pos < resume_at) continue;  // the FDE read again on the way to resume_at
    scan_event(*s, ev, scratch);
    s->end = ev.pos + ev.header.event_size;
  }
  if (first && !sink.error) s->readable = stream.offset() >= 4 || sink.torn;
  if (sink.error) {
    s->problem = fmt::format("offset {}: {}: {}", sink.error->pos, check_name(sink.error->check), sink.error->message);
    if (stream.events() == 0 && resume_at == 0) s->readable = false;
  }
  s->torn = sink.torn;
  if (s->end < 4 && s->readable) s->end = 4;
  return s;
}

}  // namespace

bool is_compressed_path(const std::string& path) { return ends_with(path, ".gz") || ends_with(path, ".zst"); }

std::unique_ptr<Source> open_archive_file(const std::string& path, const KeyRing* keys, PreadSource** pread) {
  if (is_compressed_path(path)) {
    std::unique_ptr<Source> s = open_source(path);
    return keys != nullptr ? decrypting_source(std::move(s), *keys) : std::move(s);
  }
  auto p = std::make_unique<PreadSource>(path);
  if (pread != nullptr) *pread = p.get();
  if (keys == nullptr) return p;
  return decrypting_view(std::move(p), *keys);
}

// ---- PreadSource -------------------------------------------------------------------------------

PreadSource::PreadSource(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), path);
}

PreadSource::~PreadSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t PreadSource::current_size() const {
  struct stat st {};
  const std::uint64_t tail = tail_ != nullptr ? tail_->end_of(tail_name_) : 0;
  if (::fstat(fd_, &st) != 0) return tail;
  return std::max(tail, static_cast<std::uint64_t>(st.st_size));
}

Bytes PreadSource::window(std::uint64_t off, std::size_t n) {
  if (tail_ != nullptr) {
    if (Bytes b = tail_->window(tail_name_, off, n); !b.empty()) {
      pos_ = std::max(pos_, off + b.size());
      return b;
    }
  }
  if (off >= buf_off_ && off - buf_off_ <= buf_len_ && n <= buf_len_ - (off - buf_off_)) {
    return {buf_.data() + (off - buf_off_), n};
  }
  // One buffer: a chunk, or one event when an event is larger; a buffer grown for a large event
  // is given back once smaller reads follow.
  const std::size_t want = std::max(n, kChunk);
  if (buf_.size() < want) {
    buf_.clear();
    buf_.shrink_to_fit();
    buf_.resize(want);
  } else if (buf_.size() > 4 * kChunk && want <= kChunk) {
    std::vector<std::uint8_t>(kChunk).swap(buf_);
  }
  std::size_t got = 0;
  while (got < want) {
    const ssize_t r = ::pread(fd_, buf_.data() + got, want - got, static_cast<off_t>(off + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      read_error_ = DecodeError{Errc::io_error, off + got, "read failed"};
      break;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  buf_off_ = off;
  buf_len_ = got;
  pos_ = std::max(pos_, off + got);
  return {buf_.data(), std::min(n, got)};
}

// ---- Archive -----------------------------------------------------------------------------------

Archive::Archive(std::vector<std::string> inputs, const KeyRing* keys)
    : inputs_(std::move(inputs)), keys_(keys), snap_(std::make_shared<Snapshot>()) {}

std::shared_ptr<const Snapshot> Archive::snapshot() const {
  std::lock_guard<std::mutex> g(snap_mu_);
  return snap_;
}

ArchiveState Archive::state() const { return snapshot()->state; }

bool Archive::refresh(std::string& error) {
  std::lock_guard<std::mutex> lock(refresh_mu_);
  const std::shared_ptr<const Snapshot> old = snapshot();

  for (const std::string& a : inputs_) {
    if (a == "-") {
      error = "-: standard input cannot be served (it cannot be read again for each replica)";
      return false;
    }
  }
  InputList list = expand_inputs(inputs_);
  // fetch --stop-never writes the file it follows as NAME.partial beside the finished ones: a
  // directory's listing leaves it out, serve takes it as the chain's growing end.
  std::vector<InputFile> partials;
  for (const std::string& a : inputs_) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) continue;
    for (const auto& e : fs::directory_iterator(a, ec)) {
      const std::string n = e.path().filename().string();
      if (!ends_with(n, kPartial) || !e.is_regular_file(ec)) continue;
      const std::string ln = n.substr(0, n.size() - (sizeof kPartial - 1));
      if (!numeric_suffix(ln)) continue;
      bool listed = false;
      for (const InputFile& f : list.files) listed = listed || (f.log_name == ln && !f.missing);
      if (listed) continue;
      partials.push_back(InputFile{e.path().string(), ln, false, a});
    }
    // a directory that holds only the .partial file is not an error
    if (!partials.empty()) {
      std::erase_if(list.errors, [&](const std::string& m) { return m.rfind(a + ":", 0) == 0; });
    }
  }
  std::sort(partials.begin(), partials.end(), [](const InputFile& x, const InputFile& y) {
    return *numeric_suffix(x.log_name) < *numeric_suffix(y.log_name);
  });
  if (!list.errors.empty()) {
    error = list.errors.front();
    return false;
  }

  auto snap = std::make_shared<Snapshot>();
  std::unordered_map<std::string, std::shared_ptr<const FileScan>> by_path, by_name;
  for (const ArchiveEntry& o : old->files) {
    if (!o.scan) continue;
    by_path[o.input.path] = o.scan;
    by_name[o.input.log_name] = o.scan;
  }
  auto add = [&](const InputFile& f, bool partial) {
    ArchiveEntry e;
    e.input = f;
    e.partial = partial;
    if (!f.missing) {
      struct stat st {};
      if (::stat(f.path.c_str(), &st) == 0) {
        std::shared_ptr<const FileScan> prev;
        if (auto it = by_path.find(f.path); it != by_path.end()) prev = it->second;
        // A file that lost its .partial suffix is the same file (same inode): scanned on.
        if (!prev)
          if (auto it = by_name.find(f.log_name);
              it != by_name.end() && it->second->ino == st.st_ino && it->second->dev == st.st_dev)
            prev = it->second;
        if (prev && prev->raw_size == static_cast<std::uint64_t>(st.st_size) && prev->mtime_ns == mtime_ns(st) &&
            prev->ino == st.st_ino && prev->dev == st.st_dev) {
          auto same = std::make_shared<FileScan>(*prev);
          same->path = f.path;
          e.scan = std::move(same);
        } else {
          e.scan = scan_file(f.path, st, prev, keys_);
        }
      } else {
        e.input.missing = true;
      }
    }
    snap->files.push_back(std::move(e));
  };
  for (const InputFile& f : list.files) add(f, false);
  for (const InputFile& f : partials) add(f, true);

  ArchiveState& st = snap->state;
  const ArchiveEntry* newest = nullptr;
  for (const ArchiveEntry& e : snap->files) {
    if (e.input.missing || !e.scan || !e.scan->readable) continue;
    ArchiveFile af;
    af.log_name = e.input.log_name;
    af.path = e.input.path;
    af.size = e.scan->compressed ? e.scan->end : e.scan->raw_size;
    st.files.push_back(af);
    newest = &e;
  }
  if (!st.files.empty()) {
    st.files.back().live = newest->partial || !newest->scan->closed;
    st.end_file = newest->input.log_name;
    st.end_position = newest->scan->end;
  }
  bool have_fde = false, have_maria = false, have_mysql = false, have_time = false, have_rm = false;
  for (auto it = snap->files.rbegin(); it != snap->files.rend(); ++it) {
    if (!it->scan || !it->scan->readable) continue;
    const FileScan& s = *it->scan;
    if (!have_fde && s.has_fde) {
      have_fde = true;
      st.mariadb = s.mariadb;
      st.server_version = s.server_version;
      st.server_id = s.server_id;
      st.checksum_alg = s.checksum_alg;
    }
    if (!have_maria && s.has_gtid_list) {
      have_maria = true;
      snap->binlog_state = s.state_end;
      snap->domain_last = s.domain_last;
      MariaGtidList pos;
      for (const MariaGtid& g : s.domain_last) pos.update(g);
      st.gtid_binlog_pos = pos.to_string();
    }
    if (!have_mysql && s.has_previous_gtids) {
      have_mysql = true;
      st.gtid_executed = s.executed_end.to_string();
    }
    if (!have_rm && s.row_metadata != nullptr) {
      have_rm = true;
      st.binlog_row_metadata = s.row_metadata;
    }
    if (!have_time && s.newest_time != 0) {
      have_time = true;
      st.newest_event_time = s.newest_time;
    }
  }
  {
    std::lock_guard<std::mutex> g(snap_mu_);
    snap_ = std::move(snap);
  }
  return true;
}

}  // namespace binlogctl::serve

namespace binlogctl {

bool binlog_gtid_pos(BinlogArchive& archive, const std::string& file, std::uint64_t pos, std::string& out,
                     std::string& error) {
  auto* a = dynamic_cast<serve::Archive*>(&archive);
  if (a == nullptr) {
    error = "internal error: the archive was not made by open_archive()";
    return false;
  }
  auto snap = a->snapshot();
  const serve::ArchiveEntry* e = nullptr;
  for (const serve::ArchiveEntry& x : snap->files) {
    if (x.input.missing || !x.scan || !x.scan->readable) continue;
    if (file.empty() ? e == nullptr : x.input.log_name == file) e = &x;
  }
  if (e == nullptr) {
    error = "Could not find first log file name in binary log index file";
    return false;
  }
  if (pos < 4) pos = 4;
  // Per domain the newest GTID: the file's Gtid_list, then every GTID before the position.
  std::vector<MariaGtid> state;
  auto update = [&](const MariaGtid& g) {
    for (MariaGtid& d : state)
      if (d.domain == g.domain) {
        d = g;
        return;
      }
    state.push_back(g);
  };
  for (const MariaGtid& g : e->scan->gtid_list) update(g);
  bool valid = pos == 4;
  try {
    std::unique_ptr<Source> src = serve::open_archive_file(e->input.path, a->keys());
    struct Null final : DiagnosticSink {
      void report(const Diagnostic&) override {}
    } sink;
    StreamOptions so;
    so.resync = false;
    EventStream stream(*src, e->input.log_name, sink, so);
    Event ev;
    while (!valid && stream.next(ev) && ev.pos < pos) {
      if (ev.type() == EventType::mariadb_gtid) {
        ByteReader r = ev.body_reader();
        if (auto g = decode_mariadb_gtid(r, ev.header.server_id)) update(g->gtid(ev.header.server_id));
      }
      if (ev.pos + ev.header.event_size == pos) valid = true;
    }
  } catch (const std::system_error& ex) {
    error = fmt::format("{}: {}", e->input.path, ex.code().message());
    return false;
  }
  if (!valid) {
    error = fmt::format(
        "Slave requested incorrect position in master binlog. Requested position {} in file '{}', but this "
        "position does not correspond to the location of any binlog event.",
        pos, e->input.log_name);
    return false;
  }
  std::sort(state.begin(), state.end(), [](const MariaGtid& x, const MariaGtid& y) { return x.domain < y.domain; });
  out.clear();
  for (const MariaGtid& g : state) {
    if (!out.empty()) out += ',';
    out += g.to_string();
  }
  return true;
}

std::unique_ptr<BinlogArchive> open_archive(const std::vector<std::string>& inputs, const KeyRing* keys) {
  return std::make_unique<serve::Archive>(inputs, keys);
}

}  // namespace binlogctl
