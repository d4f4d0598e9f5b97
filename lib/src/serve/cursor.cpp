// serve's per-replica cursor (binlog_archive.h): events of the archive, each verified by the
// framing (checksum, size, torn tail) and by verify's chain checks (end_log_pos chain, ROTATE
// and file sequence, transaction grammar, GTID duplicates) before it is handed out, with the
// artificial events a primary sends around them.
//
// What a MariaDB primary does, read in MariaDB's sql/sql_repl.cc (mysql_binlog_send,
// send_format_descriptor_event, send_event_to_slave, gtid_find_binlog_file,
// check_slave_start_position, is_until_reached, send_heartbeat_event, fake_rotate_event):
// * first an artificial ROTATE (timestamp 0, log_pos 0, LOG_EVENT_ARTIFICIAL_F, the server's id)
//   naming the file and the start position, then the file's FDE with LOG_EVENT_BINLOG_IN_USE_F
//   cleared; when the start is past 4 its log_pos and `created` are zeroed (and with a GTID start
//   whose position is not reached yet, `created`), and its CRC recomputed;
// * with a GTID start: the file found from the Gtid_list events (newest first, the first whose
//   list the requested state covers), every event group up to the requested GTID of each domain
//   skipped, and after the group where a domain's start is reached a fake Gtid_list (log_pos =
//   the end of the last event read) so that the replica knows its position;
// * UNTIL (@slave_until_gtid): stop after that group with a fake Gtid_list flagged
//   FLAG_UNTIL_REACHED;
// * at the end of a file, the file's own ROTATE, then the next file's artificial ROTATE and FDE.
// * the events go out as stored, CRC32 included, whatever the replica set
//   @master_binlog_checksum to (mariadb-binlog sets 'NONE' and writes byte-identical files); only
//   the first artificial ROTATE follows that setting, the later artificial events (ROTATEs at
//   rotations, fake Gtid_lists, heartbeats) the checksum of the file being read (MariaDB's
//   current_checksum_alg). A replica that did not set the variable at all is refused by a
//   primary when the files have checksums: that is the protocol side's to answer;
// * ANNOTATE_ROWS only with dump flag 2 (testdata/serve captures: a replica asking flags 0 gets
//   none, the end_log_pos of the next event jumps over it).
// * a replica below @mariadb_slave_capability 4 (MySQL replicas, MariaDB before 10.0, a client
//   that sets nothing) does not know MariaDB's GTID, GTID_LIST, BINLOG_CHECKPOINT (below 3) and
//   ANNOTATE_ROWS (below 1) events: from capability 2 on (it tolerates holes) they are left out,
//   below it each is replaced by a dummy of the same size (a QUERY holding only a comment, or a
//   NULL USER_VAR when too short for that), so that positions stay right; a GTID that opens a
//   transaction becomes a QUERY "BEGIN" of the same size, or the dump ends with the primary's
//   error when the GTID event is longer (XA, extra flags). cli.serve compares these bytes with a
//   real mariadbd's for capabilities 0-3.
#include "archive_internal.h"

#include <binlogctl/event_stream.h>
#include <binlogctl/relay.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/verify.h>

#include "events/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>

namespace binlogctl::serve {

namespace {

constexpr std::uint32_t kGtidListUntilReached = 1;  // Gtid_list_log_event::FLAG_UNTIL_REACHED (bit 28)
constexpr std::size_t kFdeCreatedOffset = kCommonHeaderLen + 2 + 50;
// @mariadb_slave_capability levels (MariaDB's log_event.h)
constexpr int kCapAnnotate = 1;
constexpr int kCapTolerateHoles = 2;
constexpr int kCapBinlogCheckpoint = 3;
constexpr int kCapGtid = 4;
constexpr std::uint16_t kFlagThreadSpecific = 0x4;  // LOG_EVENT_THREAD_SPECIFIC_F
constexpr std::uint16_t kFlagSuppressUse = 0x8;     // LOG_EVENT_SUPPRESS_USE_F
constexpr std::uint8_t kGtidStandalone = 1;         // Gtid_log_event::FL_STANDALONE
constexpr std::size_t kQueryPostHeaderLen = 13;     // thread id, exec time, db len, error, status len
constexpr std::size_t kGtidPostHeaderLen = 19;      // seq_no, domain, flags2, 6 zero bytes


// What an old replica gets instead of one event: the event as stored, nothing, or a rewrite.
enum class Compat { as_stored, omit, rewritten, error };

// A replacement of the same size as `ev` (header fields kept, flags adjusted) in `out`: a QUERY
// holding a comment, or a NULL USER_VAR "!dummyvar" cut to fit when a QUERY would not. False
// when the event is too short even for that.
bool dummy_event(Bytes ev, bool crc, std::vector<std::uint8_t>& out) {
  const std::size_t data_len = ev.size() - (crc ? kChecksumLen : 0);
  constexpr std::size_t min_user_var = kCommonHeaderLen + 4 + 1 + 1;
  constexpr std::size_t min_query = kCommonHeaderLen + kQueryPostHeaderLen + 1 + 1;
  if (ev.size() < kCommonHeaderLen + (crc ? kChecksumLen : 0) || data_len < min_user_var) return false;
  out.assign(ev.begin(), ev.end());
  std::uint8_t* p = out.data();
  const std::uint8_t old_type = p[4];
  const std::uint16_t flags =
      static_cast<std::uint16_t>((load_le16(p + 17) & ~kFlagThreadSpecific) | kFlagSuppressUse);
  p[17] = static_cast<std::uint8_t>(flags);
  p[18] = static_cast<std::uint8_t>(flags >> 8);
  std::uint8_t* q = p + kCommonHeaderLen;
  if (data_len < min_query) {
    static constexpr char name[] = "!dummyvar";
    const std::size_t name_len = data_len - (min_user_var - 1);  // 1 to 9
    p[4] = static_cast<std::uint8_t>(EventType::user_var);
    store_le32(q, static_cast<std::uint32_t>(name_len));
    std::memcpy(q + 4, name, name_len);
    q[4 + name_len] = 1;  // NULL
  } else {
    p[4] = static_cast<std::uint8_t>(EventType::query);
    std::memset(q, 0, kQueryPostHeaderLen + 1);  // thread id, time, db len, error, status len, db's NUL
    q += kQueryPostHeaderLen + 1;
    const std::string text = fmt::format("# Dummy event replacing event type {} that slave cannot handle.", old_type);
    const std::size_t comment_len = data_len - (min_query - 1);
    std::memcpy(q, text.data(), std::min(comment_len, text.size()));
    if (comment_len > text.size()) std::memset(q + text.size(), ' ', comment_len - text.size());
  }
  if (crc) store_le32(p + data_len, compute_event_crc(Bytes(out.data(), out.size())));
  return true;
}

// A GTID event that opens a transaction as a QUERY "BEGIN" of the same size: only the two sizes a
// plain GTID event has (19 bytes, or 21 with a commit id), as a primary does.
bool gtid_as_begin(Bytes ev, bool crc, std::vector<std::uint8_t>& out) {
  if (ev.size() < kCommonHeaderLen + (crc ? kChecksumLen : 0)) return false;
  const std::size_t data_len = ev.size() - (crc ? kChecksumLen : 0);
  const bool plain = data_len == kCommonHeaderLen + kGtidPostHeaderLen;
  if (!plain && data_len != kCommonHeaderLen + kGtidPostHeaderLen + 2) return false;
  out.assign(ev.begin(), ev.end());
  std::uint8_t* p = out.data();
  const std::uint16_t flags =
      static_cast<std::uint16_t>((load_le16(p + 17) & ~kFlagThreadSpecific) | kFlagSuppressUse);
  p[17] = static_cast<std::uint8_t>(flags);
  p[18] = static_cast<std::uint8_t>(flags >> 8);
  p[4] = static_cast<std::uint8_t>(EventType::query);
  std::uint8_t* q = p + kCommonHeaderLen;
  std::memset(q, 0, kQueryPostHeaderLen);
  q += kQueryPostHeaderLen - 2;
  if (plain) {
    store_le16(q, 0);
    q[2] = 0;  // the empty database's NUL
    q += 3;
  } else {
    store_le16(q, 2);  // an empty time zone status variable takes up the 2 bytes more
    q[2] = 5;     // Q_TIME_ZONE_CODE
    q[3] = 0;
    q[4] = 0;
    q += 5;
  }
  std::memcpy(q, "BEGIN", 5);
  if (crc) store_le32(p + data_len, compute_event_crc(Bytes(out.data(), out.size())));
  return true;
}


// Framing findings: a file that ends inside an event is noted (at the live end that is no
// damage: the writer is still writing it); everything else goes on to the chain verifier.
class FramingSink final : public DiagnosticSink {
 public:
  explicit FramingSink(DiagnosticSink& next) : next_(next) {}
  void report(const Diagnostic& d) override {
    if (d.check == Check::truncated_event) {
      truncated = d;
      return;
    }
    next_.report(d);
  }
  std::optional<Diagnostic> truncated;

 private:
  DiagnosticSink& next_;
};

// The chain verifier's findings: the first error stops the cursor.
class StopSink final : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override {
    if (d.severity == Severity::error && !error) error = d;
  }
  std::optional<Diagnostic> error;
};

bool is_commit_or_rollback(const Event& ev, std::string& scratch) {
  if (ev.type() != EventType::query) return false;  // a compressed query is never COMMIT
  auto q = decode_statement(ev, scratch);
  if (!q) return false;
  const StatementKind k = classify_statement(q->sql);
  return k == StatementKind::commit || k == StatementKind::rollback;
}

// "D-S-N,D-S-N": one GTID per domain, as MariaDB's slave_connection_state::load accepts.
bool parse_connect_state(const std::string& text, std::vector<MariaGtid>& out) {
  out.clear();
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    std::string_view item(text.data() + i, j - i);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t' || item.front() == '\n')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t' || item.back() == '\n')) item.remove_suffix(1);
    if (!item.empty()) {
      auto g = MariaGtid::parse(item);
      if (!g) return false;
      for (const MariaGtid& o : out)
        if (o.domain == g->domain) return false;
      out.push_back(g.value());
    } else if (j != text.size() || i != 0) {
      if (!(i == j && j == text.size() && i == 0)) return false;
    }
    if (j == text.size()) break;
    i = j + 1;
  }
  return true;
}

const MariaGtid* find_domain(const std::vector<MariaGtid>& v, std::uint32_t domain) {
  for (const MariaGtid& g : v)
    if (g.domain == domain) return &g;
  return nullptr;
}

// A replica's view of the relay's tail.
class RelayFeed final : public TailFeed {
 public:
  explicit RelayFeed(RelayTail& t) : t_(t), id_(t.open_replica()) {}
  ~RelayFeed() override { t_.close_replica(id_); }
  RelayFeed(const RelayFeed&) = delete;
  RelayFeed& operator=(const RelayFeed&) = delete;
  Bytes window(const std::string& log_name, std::uint64_t off, std::size_t n) override {
    return t_.window(id_, log_name, off, n);
  }
  std::uint64_t end_of(const std::string& log_name) override { return t_.end_of(id_, log_name); }
  std::uint32_t id() const { return id_; }

 private:
  RelayTail& t_;
  std::uint32_t id_;
};

class Cursor final : public DumpCursor {
 public:
  Cursor(Archive& arch, const DumpRequest& req, RelayTail* relay = nullptr)
      : arch_(arch), req_(req), verifier_(stop_), fsink_(verifier_) {
    if (relay != nullptr) feed_ = std::make_unique<RelayFeed>(*relay);
  }
  ~Cursor() override {
    stream_.reset();
    src_.reset();
  }
  std::optional<std::uint32_t> relay_replica() const override {
    if (feed_) return feed_->id();
    return std::nullopt;
  }

  bool open(std::string& error);
  CursorStep next() override;
  const std::string& file() const override { return log_name_; }
  std::uint64_t position() const override { return pos_; }
  std::int64_t last_event_time() const override { return last_time_; }
  Bytes heartbeat() override;

 private:
  enum class Phase { open_wait, rotate, fde, events, wait, done, failed };
  enum class Skip { none, standalone, transaction };
  enum class Until { not_done, after_standalone, after_transaction };
  enum class Open { ok, failed, not_yet };

  Open open_file(std::size_t idx, std::uint64_t start, bool first);
  bool start_mariadb_gtid(std::string& error);
  bool start_mysql_gtid(std::string& error);
  bool validate_start(std::string& error);
  void fail(std::string msg) {
    phase_ = Phase::failed;
    error_ = std::move(msg);
  }
  void fail_diag(const Diagnostic& d);
  CursorStep error_step() const {
    CursorStep s;
    s.kind = CursorStep::Kind::error;
    s.message = error_;
    return s;
  }
  CursorStep event_step(Bytes b) {
    CursorStep s;
    s.kind = CursorStep::Kind::event;
    s.bytes = b;
    return s;
  }
  bool wire_crc() const { return first_rotate_ ? req_.replica_checksum : file_crc_; }
  Bytes artificial(std::uint8_t type, std::uint32_t log_pos, std::uint16_t flags, Bytes body_a, Bytes body_b,
                   std::vector<std::uint8_t>& out);
  Bytes fake_rotate();
  Bytes wire_fde();
  Bytes fake_gtid_list(const MariaGtidList& l, std::uint32_t flags, std::vector<std::uint8_t>& out);
  void refresh_snapshot(bool force);
  bool has_successor() const;
  std::string path_of(const std::string& log_name) const;
  // What happens at the end of the current stream; returns true when next() should go on.
  bool at_stream_end();
  bool resume_grown();
  // MariaDB GTID filtering of one verified event: true = send it.
  bool mariadb_filter(const Event& ev);
  bool mysql_filter(const Event& ev);
  // What a replica below capability 4 gets instead of `ev` (a rewrite goes to out_; an error's
  // text to `why`).
  Compat old_replica(const Event& ev, std::string& why);

  std::unique_ptr<RelayFeed> feed_;  // first: the sources below refer to it
  Archive& arch_;
  DumpRequest req_;
  std::shared_ptr<const Snapshot> snap_;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::uint32_t server_id_ = 0;

  StopSink stop_;
  ChainVerifier verifier_;
  FramingSink fsink_;

  Phase phase_ = Phase::rotate;
  std::string error_;

  // current file
  std::size_t idx_ = 0;
  std::string log_name_;
  std::string path_;
  std::vector<std::pair<std::string, std::string>> paths_;  // log name -> path, files opened
  std::unique_ptr<Source> src_;
  PreadSource* pread_ = nullptr;
  std::unique_ptr<EventStream> stream_;
  bool compressed_ = false;
  bool began_ = false;           // the verifier was told of this file
  std::uint64_t start_ = 4;      // the position the artificial ROTATE names
  bool first_file_ = true;
  std::uint64_t fde_end_ = 0;
  bool file_crc_ = false;
  std::vector<std::uint8_t> fde_;  // the file's FDE as read
  std::uint64_t emit_from_ = 0;    // events before are read and verified, not sent
  bool emitted_start_ = false;
  std::string first_event_file_;  // where the dump started, for the primary's error texts
  std::uint64_t first_event_pos_ = 4;
  std::uint64_t resume_below_ = 0;  // a grown file read again: events before were read already
  bool true_gap_pending_ = false;   // the first event after a start past the FDE: events were left out
  std::uint64_t read_end_ = 4;      // end of the last event read
  std::uint64_t seen_size_ = 0;     // the file's size when its stream ended

  std::uint64_t pos_ = 4;
  std::int64_t last_time_ = 0;

  std::vector<std::uint8_t> out_;    // artificial or rewritten events
  std::vector<std::uint8_t> queue_;  // an artificial event due after the one handed out
  bool queued_ = false;
  bool end_after_queue_ = false;
  std::uint64_t queued_pos_ = 0;
  std::vector<std::uint8_t> hb_;
  bool first_rotate_ = false;  // building the first artificial ROTATE
  std::string scratch_;

  // MariaDB GTID start / until
  bool using_gtid_ = false;
  std::vector<MariaGtid> gtid_start_;
  std::vector<bool> start_on_empty_;
  bool has_until_ = false;
  std::vector<MariaGtid> until_;
  Skip skip_ = Skip::none;
  Until until_group_ = Until::not_done;
  bool send_fake_list_ = false;
  MariaGtidList until_binlog_state_;
  // MySQL GTID exclusion
  bool mysql_gtid_ = false;
  bool mysql_excluding_ = false;
};

void Cursor::fail_diag(const Diagnostic& d) {
  fail(fmt::format("{}: offset {}: {}: {}", path_of(d.log_name), d.pos, check_name(d.check), d.message));
}

std::string Cursor::path_of(const std::string& log_name) const {
  for (auto it = paths_.rbegin(); it != paths_.rend(); ++it)
    if (it->first == log_name) return it->second;
  if (snap_)
    for (const ArchiveEntry& e : snap_->files)
      if (e.input.log_name == log_name) return e.input.path;
  return log_name;
}

void Cursor::refresh_snapshot(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_refresh_ < std::chrono::milliseconds(100)) return;
  last_refresh_ = now;
  std::string err;
  if (arch_.refresh(err)) snap_ = arch_.snapshot();
}

bool Cursor::has_successor() const {
  for (std::size_t i = 0; i < snap_->files.size(); ++i)
    if (snap_->files[i].input.log_name == log_name_) return i + 1 < snap_->files.size();
  return false;
}

// ---- wire bytes ----------------------------------------------------------------------------------

Bytes Cursor::artificial(std::uint8_t type, std::uint32_t log_pos, std::uint16_t flags, Bytes a, Bytes b,
                         std::vector<std::uint8_t>& out) {
  // timestamp 0: not an event of the file
  return encode_event(EventHeader{0, type, server_id_, 0, log_pos, flags}, a, b, wire_crc(), out);
}

Bytes Cursor::fake_rotate() {
  std::uint8_t pos[8];
  store_le64(pos, start_);
  first_rotate_ = first_file_;
  struct Reset {
    bool& b;
    ~Reset() { b = false; }
  } reset{first_rotate_};
  return artificial(static_cast<std::uint8_t>(EventType::rotate), 0, kFlagArtificial, Bytes(pos, 8),
                    Bytes(reinterpret_cast<const std::uint8_t*>(log_name_.data()), log_name_.size()), out_);
}

Bytes Cursor::fake_gtid_list(const MariaGtidList& l, std::uint32_t flags, std::vector<std::uint8_t>& out) {
  std::vector<MariaGtid> v = l.entries();
  std::sort(v.begin(), v.end(), [](const MariaGtid& x, const MariaGtid& y) {
    return x.domain != y.domain ? x.domain < y.domain : x.seq < y.seq;
  });
  std::vector<std::uint8_t> body;
  encode_gtid_list(v, flags, body);
  return artificial(static_cast<std::uint8_t>(EventType::mariadb_gtid_list), static_cast<std::uint32_t>(read_end_),
                    kFlagArtificial, Bytes(body.data(), body.size()), {}, out);
}

Bytes Cursor::wire_fde() {
  out_ = fde_;
  std::uint8_t* p = out_.data();
  const std::uint16_t flags = static_cast<std::uint16_t>(load_le16(p + 17) & ~kFlagInUse);
  p[17] = static_cast<std::uint8_t>(flags);
  p[18] = static_cast<std::uint8_t>(flags >> 8);
  bool changed = false;
  if (first_file_ && start_ > 4) {
    store_le32(p + 13, 0);  // the replica must not take it for a position of the file
    if (out_.size() >= kFdeCreatedOffset + 4) store_le32(p + kFdeCreatedOffset, 0);
    changed = true;
  } else if (using_gtid_ && !gtid_start_.empty()) {
    // the replica has seen later GTIDs: `created` would make it drop its temporary tables
    if (out_.size() >= kFdeCreatedOffset + 4) store_le32(p + kFdeCreatedOffset, 0);
    changed = true;
  }
  if (file_crc_ && changed) {
    store_le32(p + out_.size() - kChecksumLen, compute_event_crc(Bytes(out_.data(), out_.size())));
  }
  return {out_.data(), out_.size()};
}


Bytes Cursor::heartbeat() {
  std::uint8_t sub[8];
  const bool big = read_end_ > 0xffffffffull;
  store_le64(sub, read_end_);
  // MariaDB: log_pos is the position; past 4 GiB it is 0 and an 8-byte position comes first.
  const Bytes name(reinterpret_cast<const std::uint8_t*>(log_name_.data()), log_name_.size());
  return artificial(static_cast<std::uint8_t>(EventType::heartbeat), big ? 0 : static_cast<std::uint32_t>(read_end_),
                    0, big ? Bytes(sub, 8) : Bytes(), name, hb_);
}

// ---- files -----------------------------------------------------------------------------------------

Cursor::Open Cursor::open_file(std::size_t idx, std::uint64_t start, bool first) {
  const ArchiveEntry& e = snap_->files[idx];
  idx_ = idx;
  log_name_ = e.input.log_name;
  path_ = e.input.path;
  paths_.emplace_back(log_name_, path_);
  if (paths_.size() > 4) paths_.erase(paths_.begin());
  start_ = start;
  first_file_ = first;
  resume_below_ = 0;
  emit_from_ = 0;
  emitted_start_ = start <= 4;
  if (first) {
    first_event_file_ = log_name_;
    first_event_pos_ = start;
  }
  true_gap_pending_ = false;
  read_end_ = 4;
  began_ = false;
  stream_.reset();
  src_.reset();
  pread_ = nullptr;
  fsink_.truncated.reset();
  if (e.input.missing) {
    verifier_.begin_file(e.input);  // reports the file as missing
    if (stop_.error) fail_diag(*stop_.error);
    else fail(fmt::format("{}: the file is missing", path_));
    return Open::failed;
  }
  compressed_ = is_compressed_path(path_);
  try {
    src_ = open_archive_file(path_, arch_.keys(), &pread_);
  } catch (const std::system_error& ex) {
    // fetch --stop-never renames NAME.partial to NAME once the file is complete: it may have done
    // so between the directory's snapshot and this open (the same file, under its final name)
    static constexpr char kPartialSuffix[] = ".partial";
    constexpr std::size_t n = sizeof kPartialSuffix - 1;
    bool reopened = false;
    if (ex.code() == std::errc::no_such_file_or_directory && path_.size() > n &&
        path_.compare(path_.size() - n, n, kPartialSuffix) == 0) {
      const std::string done = path_.substr(0, path_.size() - n);
      try {
        src_ = open_archive_file(done, arch_.keys(), &pread_);
        path_ = done;
        paths_.back().second = done;
        reopened = true;
      } catch (const std::system_error&) {
      }
    }
    if (!reopened) {
      fail(fmt::format("{}: cannot open: {}", path_, ex.code().message()));
      return Open::failed;
    }
  }
  if (pread_ != nullptr && feed_) pread_->set_tail(feed_.get(), log_name_);
  // fetch --stop-never has made the newest file and not written its magic yet: not an error.
  if (pread_ != nullptr && !compressed_ && pread_->current_size() < 4 && !has_successor()) return Open::not_yet;
  StreamOptions so;
  so.resync = false;
  stream_ = std::make_unique<EventStream>(*src_, log_name_, fsink_, so);
  Event ev;
  const bool got = stream_->next(ev);
  if (stop_.error) {
    fail_diag(*stop_.error);
    return Open::failed;
  }
  if (!got || ev.type() != EventType::format_description) {
    if (!got && (fsink_.truncated || stream_->offset() <= 4) && !compressed_ && !has_successor() &&
        !stream_->aborted()) {
      return Open::not_yet;  // the writer has not written the FDE yet
    }
    fail(fmt::format("{}: offset {}: Failed to find format descriptor event in start of binlog", path_,
                     got ? ev.pos : stream_->offset()));
    return Open::failed;
  }
  if (!verifier_.begin_file(e.input)) {
    if (stop_.error) fail_diag(*stop_.error);
    else fail(fmt::format("{}: given twice", path_));
    return Open::failed;
  }
  began_ = true;
  verifier_.event(ev);
  if (stop_.error) {
    fail_diag(*stop_.error);
    return Open::failed;
  }
  fde_.assign(ev.raw.begin(), ev.raw.end());
  fde_end_ = ev.pos + ev.header.event_size;
  file_crc_ = ev.fde->crc32() && ev.has_checksum;
  read_end_ = fde_end_;
  if (ev.header.timestamp != 0) last_time_ = ev.header.timestamp;
  phase_ = Phase::rotate;
  return Open::ok;
}

// A start position past the FDE must be where an event starts (MariaDB reads from it whatever
// is there; its GTID position lookup refuses such a position, and so does this).
bool Cursor::validate_start(std::string& error) {
  if (start_ <= 4) return true;
  const std::string bad = fmt::format(
      "Slave requested incorrect position in master binlog. Requested position {} in file '{}', but this position "
      "does not correspond to the location of any binlog event.",
      start_, log_name_);
  if (start_ < fde_end_) {
    error = bad;
    return false;
  }
  if (start_ == fde_end_) return true;
  if (compressed_) {  // read (and verified) up to there, not sent
    emit_from_ = start_;
    return true;
  }
  const std::uint64_t size = pread_->current_size();
  if (start_ > size) {
    error = fmt::format(
        "Client requested master to start replication from impossible position; the first event '{}' at {}, the last "
        "event read from '{}' at 4, the last byte read from '{}' at 4.",
        log_name_, start_, log_name_, log_name_);
    return false;
  }
  // The event headers from the FDE on, walked without reading the events.
  std::uint64_t p = fde_end_;
  while (p < start_) {
    Bytes w = src_->window(p, kCommonHeaderLen);
    if (w.size() < kCommonHeaderLen) break;
    const std::uint32_t sz = load_le32(w.data() + 9);
    if (sz < kCommonHeaderLen) break;
    p += sz;
  }
  if (p != start_) {
    error = bad;
    return false;
  }
  // An encrypting primary sends the START_ENCRYPTION after the FDE wherever the dump starts (the
  // events decrypted, the event flagged ignorable): the gap begins after it.
  std::uint64_t gap_from = fde_end_;
  if (Bytes h = src_->window(fde_end_, kCommonHeaderLen);
      h.size() == kCommonHeaderLen && h[4] == static_cast<std::uint8_t>(EventType::mariadb_start_encryption) &&
      fde_end_ + load_le32(h.data() + 9) <= start_)
    gap_from = fde_end_ + load_le32(h.data() + 9);
  pread_->set_gap(gap_from, start_);
  read_end_ = start_;
  true_gap_pending_ = true;
  return true;
}

bool Cursor::resume_grown() {
  // The file grew since its stream ended: read on from where it stopped.
  const std::uint64_t at = read_end_;
  StreamOptions so;
  so.resync = false;
  fsink_.truncated.reset();
  pread_->set_gap(fde_end_, at);
  stream_ = std::make_unique<EventStream>(*src_, log_name_, fsink_, so);
  resume_below_ = at;
  phase_ = Phase::events;
  return true;
}

bool Cursor::at_stream_end() {
  if (stop_.error) {
    fail_diag(*stop_.error);
    return true;
  }
  if (stream_->aborted()) {
    fail(fmt::format("{}: offset {}: the file cannot be read on", path_, stream_->offset()));
    return true;
  }
  const bool torn = fsink_.truncated.has_value();
  if (pread_ != nullptr) {
    // How far the stream saw bytes; more bytes now: the file grew, read on.
    if (phase_ == Phase::events) seen_size_ = pread_->raw_position();
    if (pread_->current_size() > seen_size_) return resume_grown();
  }
  if (!emitted_start_ && read_end_ < start_) {
    fail(fmt::format(
        "Client requested master to start replication from impossible position; the first event '{}' at {}, the last "
        "event read from '{}' at {}, the last byte read from '{}' at {}.",
        log_name_, start_, log_name_, read_end_, log_name_, read_end_));
    return true;
  }
  if (!has_successor()) refresh_snapshot(false);
  if (has_successor()) {
    if (torn) {
      fail(fmt::format("{}: offset {}: truncated_event: {}; the next file follows it", path_, fsink_.truncated->pos,
                       fsink_.truncated->message));
      return true;
    }
    verifier_.end_file(read_end_, 0, false);
    if (stop_.error) {
      fail_diag(*stop_.error);
      return true;
    }
    std::size_t next = 0;
    for (std::size_t i = 0; i < snap_->files.size(); ++i)
      if (snap_->files[i].input.log_name == log_name_) next = i + 1;
    const Open o = open_file(next, 4, false);
    if (o == Open::not_yet) phase_ = Phase::open_wait;
    return true;
  }
  if (torn && compressed_) {
    fail(fmt::format("{}: offset {}: truncated_event: {}", path_, fsink_.truncated->pos, fsink_.truncated->message));
    return true;
  }
  if (req_.non_blocking) {
    phase_ = Phase::done;
    return true;
  }
  phase_ = Phase::wait;
  return false;
}

// ---- GTID starts ----------------------------------------------------------------------------------

bool Cursor::start_mariadb_gtid(std::string& error) {
  using_gtid_ = true;
  if (!parse_connect_state(*req_.mariadb_connect_state, gtid_start_)) {
    error = "Out of memory or malformed slave request when obtaining start position from GTID state";
    return false;
  }
  if (req_.mariadb_until_gtid) {
    has_until_ = true;
    if (!parse_connect_state(*req_.mariadb_until_gtid, until_)) {
      error = "Out of memory or malformed slave request when obtaining UNTIL position sent from slave";
      return false;
    }
  }
  start_on_empty_.assign(gtid_start_.size(), false);
  const MariaGtidList& bs = snap_->binlog_state;
  auto not_found = [&](const MariaGtid& g) {
    const MariaGtid* last = find_domain(snap_->domain_last, g.domain);
    if (last != nullptr && last->seq >= g.seq)
      return fmt::format("Connecting slave requested to start from GTID {}, which is not in the master's binlog. Since "
                         "the master's binlog contains GTIDs with higher sequence numbers, it probably means that the "
                         "slave has diverged due to executing extra erroneous transactions",
                         g.to_string());
    return fmt::format("Connecting slave requested to start from GTID {}, which is not in the master's binlog",
                       g.to_string());
  };
  // check_slave_start_position
  for (std::size_t i = 0; i < gtid_start_.size(); ++i) {
    const MariaGtid& g = gtid_start_[i];
    const MariaGtid* have = bs.find(g.domain, g.server_id);
    if (have != nullptr && have->seq >= g.seq) continue;
    const MariaGtid* last = find_domain(snap_->domain_last, g.domain);
    if (last == nullptr) {  // nothing of this domain here: another primary's
      start_on_empty_[i] = true;
      continue;
    }
    if (req_.mariadb_ignore_duplicates && last->seq < g.seq) continue;
    if (has_until_) {
      const MariaGtid* u = find_domain(until_, g.domain);
      const MariaGtid* uh = u != nullptr ? bs.find(u->domain, u->server_id) : nullptr;
      if (u == nullptr || (uh != nullptr && uh->seq >= u->seq)) {
        if (u != nullptr) std::erase_if(until_, [&](const MariaGtid& x) { return x.domain == g.domain; });
        continue;
      }
    }
    error = not_found(g);
    return false;
  }
  // gtid_find_binlog_file: newest first, the first file whose Gtid_list the state covers
  auto covers = [&](const std::vector<MariaGtid>& list) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const MariaGtid* g = find_domain(gtid_start_, list[i].domain);
      if (g == nullptr) return false;
      if (g->server_id == list[i].server_id && g->seq <= list[i].seq) {
        if (g->seq < list[i].seq) return false;
        if (i + 1 < list.size() && list[i + 1].domain == list[i].domain) return false;
      }
    }
    return true;
  };
  for (std::size_t k = snap_->files.size(); k-- > 0;) {
    const ArchiveEntry& e = snap_->files[k];
    if (e.input.missing || !e.scan || !e.scan->readable) continue;
    if (e.scan->has_gtid_list && !covers(e.scan->gtid_list)) continue;
    for (const MariaGtid& l : e.scan->gtid_list) {
      for (std::size_t i = 0; i < gtid_start_.size(); ++i) {
        if (gtid_start_[i].domain == l.domain && gtid_start_[i].server_id == l.server_id &&
            gtid_start_[i].seq == l.seq) {
          gtid_start_.erase(gtid_start_.begin() + static_cast<std::ptrdiff_t>(i));
          start_on_empty_.erase(start_on_empty_.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
      if (has_until_)
        std::erase_if(until_, [&](const MariaGtid& u) {
          return u.domain == l.domain && u.server_id == l.server_id && u.seq <= l.seq;
        });
    }
    const Open o = open_file(k, 4, true);
    if (o == Open::failed) {
      error = error_;
      return false;
    }
    if (o == Open::not_yet) phase_ = Phase::open_wait;
    if (has_until_ && until_.empty()) until_group_ = Until::after_standalone;
    return true;
  }
  error =
      "Could not find GTID state requested by slave in any binlog files. Probably the slave state is too old and "
      "required binlog files have been purged.";
  return false;
}

bool Cursor::start_mysql_gtid(std::string& error) {
  mysql_gtid_ = true;
  const GtidSet& have = *req_.mysql_gtids;
  if (!req_.file.empty()) return true;  // file and position given: excluded GTIDs are skipped there
  // The oldest file's Previous_gtids are the GTIDs purged before the archive.
  for (const ArchiveEntry& e : snap_->files) {
    if (e.input.missing || !e.scan || !e.scan->readable) continue;
    GtidSet missing = e.scan->previous_gtids;
    missing.subtract(have);
    if (!missing.empty()) {
      error = fmt::format(
          "Cannot replicate because the master purged required binary logs. Replicate the missing transactions from "
          "elsewhere, or provision a new slave from backup. Consider increasing the master's binary log expiration "
          "period. The GTID set sent by the slave is '{}', and the missing transactions are '{}'",
          have.to_string(), missing.to_string());
      return false;
    }
    break;
  }
  // The newest file whose Previous_gtids the replica has: the first event it lacks is there or later.
  for (std::size_t k = snap_->files.size(); k-- > 0;) {
    const ArchiveEntry& e = snap_->files[k];
    if (e.input.missing || !e.scan || !e.scan->readable) continue;
    if (!have.contains(e.scan->previous_gtids)) continue;
    const Open o = open_file(k, 4, true);
    if (o == Open::failed) {
      error = error_;
      return false;
    }
    if (o == Open::not_yet) phase_ = Phase::open_wait;
    return true;
  }
  error = "Could not find the first log file name in the binary log index file for the GTID set the replica sent";
  return false;
}

bool Cursor::open(std::string& error) {
  snap_ = arch_.snapshot();
  if (snap_->files.empty()) refresh_snapshot(true);
  server_id_ = snap_->state.server_id;
  if (snap_->files.empty()) {
    error = "Could not find first log file name in binary log index file";
    return false;
  }
  if (req_.mariadb_connect_state) return start_mariadb_gtid(error);
  if (req_.mysql_gtids && !start_mysql_gtid(error)) return false;
  if (req_.mysql_gtids && req_.file.empty()) return true;
  std::size_t idx = snap_->files.size();
  if (req_.file.empty()) {
    for (std::size_t i = 0; i < snap_->files.size(); ++i)
      if (!snap_->files[i].input.missing) {
        idx = i;
        break;
      }
  } else {
    for (std::size_t i = 0; i < snap_->files.size(); ++i)
      if (snap_->files[i].input.log_name == req_.file) idx = i;
  }
  if (idx == snap_->files.size() || snap_->files[idx].input.missing) {
    error = "Could not find first log file name in binary log index file";
    return false;
  }
  std::uint64_t start = req_.position < 4 ? 4 : req_.position;
  if (req_.file.empty()) start = 4;
  const Open o = open_file(idx, start, true);
  if (o == Open::failed) {
    error = error_;
    return false;
  }
  if (o == Open::not_yet) {
    if (start > 4) {
      error = fmt::format(
          "Client requested master to start replication from impossible position; the first event '{}' at {}, the "
          "last event read from '{}' at 4, the last byte read from '{}' at 4.",
          log_name_, start, log_name_, log_name_);
      return false;
    }
    phase_ = Phase::open_wait;
    return true;
  }
  return validate_start(error);
}

// ---- filtering ------------------------------------------------------------------------------------

bool Cursor::mariadb_filter(const Event& ev) {
  const std::uint8_t t = ev.type_code();
  if (t == static_cast<std::uint8_t>(EventType::mariadb_gtid_list) && has_until_) {
    ByteReader r = ev.body_reader();
    if (auto l = decode_gtid_list(r)) until_binlog_state_ = l.value();
  }
  if (t == static_cast<std::uint8_t>(EventType::mariadb_gtid) && (!gtid_start_.empty() || has_until_)) {
    ByteReader r = ev.body_reader();
    auto d = decode_mariadb_gtid(r, ev.header.server_id);
    if (!d) return true;  // the verifier stopped on it already
    const MariaGtid g = d->gtid(ev.header.server_id);
    const Skip group = d->standalone() ? Skip::standalone : Skip::transaction;
    until_binlog_state_.update(g);
    for (std::size_t i = 0; i < gtid_start_.size(); ++i) {
      MariaGtid& s = gtid_start_[i];
      if (s.domain != g.domain) continue;
      if (start_on_empty_[i]) {
        const MariaGtid* have = snap_->binlog_state.find(s.domain, s.server_id);
        if (have == nullptr || have->seq < s.seq) {
          fail(fmt::format("Connecting slave requested to start from GTID {}, which is not in the master's binlog",
                           s.to_string()));
          return false;
        }
        start_on_empty_[i] = false;
      }
      if (g.server_id != s.server_id || g.seq <= s.seq) skip_ = group;
      if (g.server_id == s.server_id && g.seq >= s.seq) {
        if (req_.mariadb_gtid_strict && g.seq > s.seq) {
          fail(fmt::format("The binlog on the master is missing the GTID {} requested by the slave (even though a "
                           "subsequent sequence number does exist), and GTID strict mode is enabled",
                           s.to_string()));
          return false;
        }
        send_fake_list_ = true;
        gtid_start_.erase(gtid_start_.begin() + static_cast<std::ptrdiff_t>(i));
        start_on_empty_.erase(start_on_empty_.begin() + static_cast<std::ptrdiff_t>(i));
      }
      break;
    }
    if (has_until_) {
      auto it = std::find_if(until_.begin(), until_.end(), [&](const MariaGtid& u) { return u.domain == g.domain; });
      if (it == until_.end()) {
        skip_ = group;  // this domain reached its UNTIL already
      } else if (g.server_id == it->server_id && g.seq >= it->seq) {
        const std::uint64_t useq = it->seq;
        until_.erase(it);
        if (until_.empty())
          until_group_ = group == Skip::standalone ? Until::after_standalone : Until::after_transaction;
        if (g.seq > useq) skip_ = group;
      }
    }
  }
  switch (skip_) {
    case Skip::standalone:
      if (!is_part_of_group(t)) skip_ = Skip::none;
      return false;
    case Skip::transaction:
      if (t == static_cast<std::uint8_t>(EventType::xid) || is_commit_or_rollback(ev, scratch_)) skip_ = Skip::none;
      return false;
    case Skip::none:
      return true;
  }
  return true;
}

bool Cursor::mysql_filter(const Event& ev) {
  const std::uint8_t t = ev.type_code();
  if (t == static_cast<std::uint8_t>(EventType::gtid) || t == static_cast<std::uint8_t>(EventType::gtid_tagged_log)) {
    ByteReader r = ev.body_reader();
    auto g = t == static_cast<std::uint8_t>(EventType::gtid) ? decode_gtid_log(r) : decode_gtid_tagged_log(r);
    mysql_excluding_ = g && req_.mysql_gtids->contains(g->uuid, g->tag, g->gno);
  } else if (t == static_cast<std::uint8_t>(EventType::anonymous_gtid)) {
    mysql_excluding_ = false;
  }
  return !mysql_excluding_;
}

Compat Cursor::old_replica(const Event& ev, std::string& why) {
  const int cap = req_.mariadb_capability;
  const bool crc = file_crc_;
  const std::uint8_t t = ev.type_code();
  auto dummy_or = [&](const char* failure) {
    if (cap >= kCapTolerateHoles) return Compat::omit;
    if (dummy_event(ev.raw, crc, out_)) return Compat::rewritten;
    why = failure;
    return Compat::error;
  };
  if (t == static_cast<std::uint8_t>(EventType::mariadb_annotate_rows) && !req_.send_annotate_rows) {
    if (cap < kCapTolerateHoles && cap >= kCapAnnotate) return Compat::as_stored;  // it ignores them
    return dummy_or("Failed to replace binlog annotate event with dummy event");
  }
  if (cap >= kCapGtid) return Compat::as_stored;
  if (t == static_cast<std::uint8_t>(EventType::mariadb_gtid)) {
    static constexpr char corrupt[] = "Failed to replace GTID event with backwards-compatible event: corrupt event.";
    if (ev.raw.size() < kCommonHeaderLen + kGtidPostHeaderLen) {
      why = corrupt;
      return Compat::error;
    }
    if (ev.raw[kCommonHeaderLen + 12] & kGtidStandalone) return dummy_or(corrupt);
    if (gtid_as_begin(ev.raw, crc, out_)) return Compat::rewritten;
    why = corrupt;
    return Compat::error;
  }
  if ((t == static_cast<std::uint8_t>(EventType::mariadb_binlog_checkpoint) && cap < kCapBinlogCheckpoint) ||
      t == static_cast<std::uint8_t>(EventType::mariadb_gtid_list))
    return dummy_or("Failed to replace binlog checkpoint or gtid list event with dummy event");
  return Compat::as_stored;
}

// ---- next -----------------------------------------------------------------------------------------

CursorStep Cursor::next() {
  if (queued_) {
    queued_ = false;
    out_.swap(queue_);
    pos_ = queued_pos_;
    if (end_after_queue_) phase_ = Phase::done;
    return event_step(Bytes(out_.data(), out_.size()));
  }
  for (;;) {
    switch (phase_) {
      case Phase::failed:
        return error_step();
      case Phase::done:
        return CursorStep{};
      case Phase::open_wait: {
        refresh_snapshot(false);
        const Open o = open_file(idx_, start_, first_file_);
        if (o == Open::failed) return error_step();
        if (o == Open::not_yet) {
          if (req_.non_blocking) {
            phase_ = Phase::done;
            continue;
          }
          phase_ = Phase::open_wait;
          CursorStep s;
          s.kind = CursorStep::Kind::wait;
          return s;
        }
        continue;
      }
      case Phase::rotate:
        phase_ = Phase::fde;
        pos_ = start_;
        return event_step(fake_rotate());
      case Phase::fde:
        phase_ = Phase::events;
        return event_step(wire_fde());
      case Phase::wait: {
        if (at_stream_end()) continue;
        CursorStep s;
        s.kind = CursorStep::Kind::wait;
        return s;
      }
      case Phase::events: {
        Event ev;
        if (!stream_->next(ev)) {
          if (at_stream_end()) continue;
          CursorStep s;
          s.kind = CursorStep::Kind::wait;
          return s;
        }
        if (ev.pos < resume_below_) continue;  // the FDE, read again on the way to where it stopped
        if (!stop_.error) {
          if (true_gap_pending_ || !resume_below_ || ev.pos != resume_below_) {
            true_gap_pending_ = false;
            verifier_.event(ev);
          } else {
            Event same = ev;  // nothing was left out: the stream goes on where it stopped
            same.omitted_before = 0;
            verifier_.event(same);
          }
        }
        if (ev.type() == EventType::transaction_payload && !stop_.error) {
          ByteReader r = ev.body_reader();
          if (auto p = decode_transaction_payload(r, *ev.fde)) {
            PayloadExpander x(ev, p.value(), log_name_, verifier_);
            Event inner;
            while (!stop_.error && x.next(inner)) verifier_.event(inner);
          }
        }
        if (stop_.error) {
          fail_diag(*stop_.error);
          return error_step();
        }
        read_end_ = ev.pos + ev.header.event_size;
        // An encrypting MariaDB primary sends the START_ENCRYPTION after the format description
        // (flagged ignorable: the events are decrypted) wherever the dump starts in the file.
        const bool start_encryption = ev.type() == EventType::mariadb_start_encryption && ev.pos == fde_end_;
        if (ev.pos < emit_from_ && !start_encryption) continue;
        if (!emitted_start_ && !start_encryption) {
          emitted_start_ = true;
          if (ev.pos != start_) {
            fail(fmt::format("Slave requested incorrect position in master binlog. Requested position {} in file '{}', "
                             "but this position does not correspond to the location of any binlog event.",
                             start_, log_name_));
            return error_step();
          }
        }
        bool send = true;
        if (using_gtid_) send = mariadb_filter(ev);
        else if (mysql_gtid_) send = mysql_filter(ev);
        if (phase_ == Phase::failed) return error_step();
        Compat compat = Compat::as_stored;
        if (send && (req_.mariadb_capability < kCapGtid || (ev.type() == EventType::mariadb_annotate_rows &&
                                                             !req_.send_annotate_rows))) {
          std::string why;
          compat = old_replica(ev, why);
          if (compat == Compat::error) {
            // the primary's own text: a replica shows it in Last_IO_Error
            fail(fmt::format("{}; the first event '{}' at {}, the last event read from '{}' at {}, the last byte read "
                             "from '{}' at {}.",
                             why, first_event_file_, first_event_pos_, log_name_, ev.pos, log_name_,
                             ev.pos + ev.header.event_size));
            return error_step();
          }
          if (compat == Compat::omit) send = false;
        }
        // After the event (sent or skipped): the fake Gtid_list a primary sends once a domain's
        // start is reached, and the end of an UNTIL.
        bool until_reached = false;
        if (has_until_) {
          const std::uint8_t t = ev.type_code();
          if (until_group_ == Until::after_standalone) until_reached = !is_part_of_group(t);
          else if (until_group_ == Until::after_transaction)
            until_reached = t == static_cast<std::uint8_t>(EventType::xid) || is_commit_or_rollback(ev, scratch_);
        }
        Bytes list;
        if (send_fake_list_ && skip_ == Skip::none) {
          send_fake_list_ = false;
          list = fake_gtid_list(until_binlog_state_, 0, queue_);
        }
        if (until_reached) {
          // one list: the UNTIL one (a start list due at the same time carries the same state)
          list = fake_gtid_list(until_binlog_state_, kGtidListUntilReached, queue_);
          end_after_queue_ = true;
        }
        if (ev.header.timestamp != 0) last_time_ = ev.header.timestamp;
        if (send && start_encryption && !emitted_start_) {
          // Before a start further in: log_pos 0, as the FDE's (the position is not the replica's).
          out_.assign(ev.raw.begin(), ev.raw.end());
          store_le32(out_.data() + 13, 0);
          if (ev.has_checksum) store_le32(out_.data() + out_.size() - kChecksumLen, compute_event_crc(Bytes(out_.data(), out_.size())));
          return event_step(Bytes(out_.data(), out_.size()));
        }
        if (send) {
          pos_ = read_end_;
          if (!list.empty()) {
            queued_ = true;
            queued_pos_ = read_end_;
          }
          return event_step(compat == Compat::rewritten ? Bytes(out_.data(), out_.size()) : ev.raw);
        }
        if (!list.empty()) {
          out_.swap(queue_);
          pos_ = read_end_;
          if (end_after_queue_) phase_ = Phase::done;
          return event_step(Bytes(out_.data(), out_.size()));
        }
        continue;
      }
    }
  }
}

}  // namespace

}  // namespace binlogctl::serve

namespace binlogctl {

std::unique_ptr<DumpCursor> open_cursor(BinlogArchive& archive, const DumpRequest& req, std::string& error) {
  auto* a = dynamic_cast<serve::Archive*>(&archive);
  if (a == nullptr) {
    error = "internal error: the archive was not made by open_archive()";
    return nullptr;
  }
  auto c = std::make_unique<serve::Cursor>(*a, req);
  if (!c->open(error)) return nullptr;
  return c;
}

std::unique_ptr<DumpCursor> open_cursor(BinlogArchive& archive, const DumpRequest& req, std::string& error,
                                        RelayTail* relay) {
  auto* a = dynamic_cast<serve::Archive*>(&archive);
  if (a == nullptr) {
    error = "internal error: the archive was not made by open_archive()";
    return nullptr;
  }
  auto c = std::make_unique<serve::Cursor>(*a, req, relay);
  if (!c->open(error)) return nullptr;
  return c;
}

}  // namespace binlogctl
