// run_sql_convert: inputs -> EventStream -> TransactionFront -> SQL statements (convert
// --format sql), or the statements that undo them in reverse order (--flashback).
//
// A sink of the shared front half (txn_front.h): transactions, GTID selection and the damage
// policy come from there; table maps and schema history from TableMapLoader; values from the
// typed decoder (column_value.h, decode_image_cells) and the SQL literal renderer (sql.h).
#include <binlogctl/chain.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/output.h>
#include <binlogctl/sql.h>
#include <binlogctl/transaction.h>

#include "convert/batch_pool.h"
#include "convert/convert_internal.h"
#include "dump/info.h"
#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "sql/sql_value.h"
#include "txn/row_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include <unistd.h>
#include <zstd.h>

namespace binlogctl {

namespace {

constexpr std::uint16_t kSuppressUse = 0x8;  // LOG_EVENT_SUPPRESS_USE_F
// OPTION_* bits of Q_FLAGS2 (sql_priv.h), which mysqlbinlog turns into session variables.
constexpr std::uint32_t kOptAutoIsNull = 1u << 14;
constexpr std::uint32_t kOptNotAutocommit = 1u << 19;
constexpr std::uint32_t kOptNoForeignKeyChecks = 1u << 26;
constexpr std::uint32_t kOptRelaxedUniqueChecks = 1u << 27;
// Rows event flags.
constexpr std::uint16_t kRowsNoForeignKeyChecks = 0x2;
constexpr std::uint16_t kRowsRelaxedUniqueChecks = 0x4;

// The statements that undo a range, reversed with bounded memory: records are appended in
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
constexpr std::size_t kOutBlock = 256 * 1024;
// zstd's fast mode (negative levels): on this SQL, -3 still shrinks it about 13x at 1.5 GB/s
// (level 1: 30x at 1.1 GB/s); what matters is leaving the spill thread's core to the others.
constexpr int kSpillLevel = -3;

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
  ~ReverseStore() {
    stop_writer();
    if (fd_ >= 0) close(fd_);
    ZSTD_freeCCtx(cctx_);
  }
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
  void replay(LineOutput& out, const Expander& expand) {
    std::string prefix;
    stop_writer();
    if (error_ != 0) throw std::system_error(error_, std::generic_category(), "writing the flashback spill file");
    if (!chunks_.empty()) {
      stop_ = false;
      thread_ = std::thread([this] { read_loop(); });
    }
    emit_chunk(buf_, out, expand, prefix);
    std::string chunk;
    for (std::size_t i = chunks_.size(); i-- > 0;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return has_full_ || error_ != 0; });
        if (!has_full_) {
          lock.unlock();
          stop_writer();
          throw std::system_error(error_, std::generic_category(), "reading the flashback spill file");
        }
        chunk.swap(full_);
        has_full_ = false;
      }
      cv_.notify_all();
      emit_chunk(chunk, out, expand, prefix);
    }
    stop_writer();
  }

 private:
  struct Chunk {
    std::uint64_t at = 0;
    std::size_t packed = 0, raw = 0;
  };

  static void emit_chunk(const std::string& c, LineOutput& out, const Expander& expand, std::string& prefix) {
    std::size_t end = c.size();
    while (end >= 4) {
      std::uint32_t n = 0;
      std::memcpy(&n, c.data() + end - 4, 4);
      if (n > end - 4) break;  // cannot happen: the store wrote it
      const std::string_view rec(c.data() + end - 4 - n, n);
      if (rec.empty()) {
      } else if (rec[0] == Records::kRow) {
        out.buf().append(prefix);
        out.buf().append(rec.substr(1));
      } else if (rec[0] == Records::kPrefix) {
        prefix.assign(rec.substr(1));
      } else if (rec[0] == '\0') {
        expand(rec.substr(1), out.buf());
      } else {
        out.buf().append(rec);
      }
      if (out.buf().size() >= kOutBlock) out.flush();
      end -= 4 + n;
    }
  }

  bool read_at(char* p, std::size_t n, std::uint64_t at) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p += got;
      n -= static_cast<std::size_t>(got);
      at += static_cast<std::uint64_t>(got);
    }
    return true;
  }

  void open_file() {
    std::string dir = dir_;
    if (dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      dir = t != nullptr && *t != 0 ? t : "/tmp";
    }
    std::string path = dir + "/binlogctl-flashback-XXXXXX";
    fd_ = mkstemp(path.data());
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "creating a spill file in " + dir);
    unlink(path.c_str());  // gone when closed, whatever happens
    cctx_ = ZSTD_createCCtx();
    if (cctx_ == nullptr) throw std::bad_alloc();
    thread_ = std::thread([this] { write_loop(); });
  }

  // Hands the full buffer to the spill thread (waiting while it still works on the previous one).
  void spill() {
    if (fd_ < 0) open_file();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !has_full_; });
    if (error_ != 0) throw std::system_error(error_, std::generic_category(), "writing the flashback spill file");
    full_.swap(buf_);
    has_full_ = true;
    lock.unlock();
    cv_.notify_all();
    buf_.clear();
  }

  // The spill thread: compresses each handed-over chunk and appends it to the file.
  void write_loop() {
    std::string work;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return has_full_ || stop_; });
        if (!has_full_) return;
        work.swap(full_);
        has_full_ = false;
      }
      cv_.notify_all();
      if (error_ != 0) continue;  // (read by the reader only after this thread handed back)
      const int e = write_chunk(work);
      if (e != 0) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = e;
      }
    }
  }

  // The spill thread while replaying: each chunk, last first, decompressed and handed over.
  void read_loop() {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::string work;
    int e = dctx == nullptr ? ENOMEM : 0;
    for (std::size_t i = chunks_.size(); e == 0 && i-- > 0;) {
      const Chunk& c = chunks_[i];
      packed_.resize(c.packed);
      if (!read_at(packed_.data(), c.packed, c.at)) {
        e = errno != 0 ? errno : EIO;
        break;
      }
      work.resize(c.raw);
      const std::size_t n = ZSTD_decompressDCtx(dctx, work.data(), work.size(), packed_.data(), packed_.size());
      if (ZSTD_isError(n) || n != c.raw) {
        e = EIO;  // the file changed under us
        break;
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !has_full_ || stop_; });
      if (stop_) break;
      full_.swap(work);
      has_full_ = true;
      lock.unlock();
      cv_.notify_all();
    }
    ZSTD_freeDCtx(dctx);
    if (e != 0) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = e;
    }
    cv_.notify_all();
  }

  int write_chunk(const std::string& raw) {
    packed_.resize(ZSTD_compressBound(raw.size()));
    const std::size_t n = ZSTD_compressCCtx(cctx_, packed_.data(), packed_.size(), raw.data(), raw.size(), kSpillLevel);
    if (ZSTD_isError(n)) return ENOMEM;
    const char* p = packed_.data();
    std::size_t left = n;
    std::uint64_t at = file_size_;
    while (left > 0) {
      const ssize_t w = ::pwrite(fd_, p, left, static_cast<off_t>(at));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      p += w;
      left -= static_cast<std::size_t>(w);
      at += static_cast<std::uint64_t>(w);
    }
    chunks_.push_back(Chunk{file_size_, n, raw.size()});
    file_size_ += n;
    return 0;
  }

  // Stops the spill thread (writing: after the chunk handed over; reading: at once).
  void stop_writer() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

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

// --rewrite-db: the name a database is written under.
std::string_view rewritten_db(const SqlOptions& sql, std::string_view db) {
  for (const auto& [from, to] : sql.rewrite_db)
    if (db == from) return to;
  return db;
}

// Session variables the output sets, each written only when the value it needs differs from
// the last one written.
enum Var : std::size_t {
  kPseudoThreadId,
  kTimestamp,
  kSqlMode,
  kTimeZone,
  kCharsetClient,
  kCollationConnection,
  kCollationServer,
  kForeignKeyChecks,
  kUniqueChecks,
  kAutoIsNull,
  kAutocommit,
  kVarCount
};
constexpr const char* kVarNames[kVarCount] = {
    "pseudo_thread_id",     "timestamp",          "sql_mode",      "time_zone",           "character_set_client",
    "collation_connection", "collation_server",   "foreign_key_checks", "unique_checks", "sql_auto_is_null",
    "autocommit"};

// --sql-queries transaction: what closes a multi-statement query (the client's delimiter then).
constexpr std::string_view kQueryEnd = ";;\n";

// What rendering one rows event needs (views into a batch, or into the event when the
// converting thread renders it).
struct RowsJobView {
  std::shared_ptr<const TableMap> map;
  Bytes rows, present_before, present_after;
  std::uint64_t rows_offset = 0, width = 0;
  RowsKind kind = RowsKind::insert;
  bool partial_json = false;
  std::string_view head;       // the position comment every statement of the event has
  std::string_view session;    // SET lines before the first statement (forward)
  std::string_view generated;  // per column: 1 when generated (not set by statements)
  // --sql-queries transaction: the statements go into multi-statement queries of at most
  // `query_bound` bytes (0: not in a query). They are rendered as if the first began a query: the
  // writing side closes the query before them when it cannot take their first part
  // (SqlConverter::query_join), so that the output does not depend on where rendering happened.
  std::size_t query_bound = 0;
};

// How rendering a rows event ended.
struct RowsOutcome {
  std::optional<DecodeError> error;  // the error that stopped it (the rows before it are rendered)
  bool render_error = false;         // the row decoded but its statement could not be rendered
  // With RowsJobView::query_bound: the bytes of the output before the first `;;` that it wrote
  // (all of it when none), whether it wrote one, and the length of the query it ends in.
  std::size_t query_first = 0, query_len = 0;
  bool query_closed = false;
};

// Renders the rows of rows events as statements: one per rendering thread (and one for the
// converting thread). Forward: head, the session lines before the first statement, then the
// statement, per row. Flashback: per row, its undo statement alone, preceded by its length in 4
// bytes (the shared lines travel once per event: Records::kPrefix).
class SqlRowRenderer {
 public:
  void configure(const SqlOptions& sql) {
    flashback_ = sql.flashback;
    set_ = sql.set;
    sql_ = &sql;
    batch_bytes_ = sql.flashback ? 0 : sql.batch_bytes;
    if (sql.rewrite_db.size() != rewrite_count_) {
      rewrite_count_ = sql.rewrite_db.size();
      names_serial_ = 0;
    }
  }

  // `sink` has `RenderBuf& buf()` and `void row_done()` (after each row's text is appended).
  template <class Sink>
  RowsOutcome render(const RowsJobView& v, Sink& sink) {
    RowsOutcome o;
    const TableMap& tm = *v.map;
    const bool update = v.kind == RowsKind::update;
    quote_names(tm);
    generated_ = v.generated;
    insert_prefix_.clear();
    std::string_view session = v.session;
    qbound_ = v.query_bound;
    qlen_ = 0;
    qfirst_ = 0;
    qclosed_ = false;
    auto done = [&](RowsOutcome& out) -> RowsOutcome& {
      out.query_len = qlen_;
      out.query_first = qclosed_ ? qfirst_ : qlen_;
      out.query_closed = qclosed_;
      return out;
    };
    // Forward INSERTs: the rows of the event as multi-row statements, each closed before it
    // would pass batch_bytes_ (a row larger than that is a statement of its own).
    const bool multi = batch_bytes_ > 0 && v.kind == RowsKind::insert;
    // Forward UPDATEs (of changed columns) and DELETEs: runs of rows by an integer primary key
    // as one statement each (keyed_add).
    const bool keyed = batch_bytes_ > 0 && !flashback_ &&
                       (v.kind == RowsKind::delete_ || (update && set_ == SqlSet::changed));
    kb_rows_ = 0;
    auto flush_keyed = [&] {
      if (kb_rows_ == 0) return;
      RenderBuf& dst = sink.buf();
      const std::size_t at = dst.size();
      dst.append(v.head);
      dst.append(session);
      session = {};
      keyed_statement(dst, tm, update);
      query_piece(dst, at);
      kb_rows_ = 0;
      sink.row_done();
    };
    std::size_t stmt_len = 0;
    bool stmt_open = false;
    auto close_stmt = [&] {
      if (!stmt_open) return;
      sink.buf().append(";\n", 2);
      stmt_open = false;
    };
    ByteReader r(v.rows, v.rows_offset);
    while (r.ok() && !r.empty()) {
      const std::size_t before_pos = r.position();
      Status st = decode_image_cells(tm, v.width, v.present_before, update ? ImageRole::before : ImageRole::after,
                                     false, r, cells_a_);
      if (st.ok() && update)
        st = decode_image_cells(tm, v.width, v.present_after, ImageRole::after, v.partial_json, r, cells_b_);
      if (st.ok() && r.position() == before_pos) st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
      if (!st.ok()) {
        close_stmt();
        flush_keyed();
        o.error = st.error();
        return done(o);
      }
      if (keyed) {
        Keyed k = keyed_add(tm, update, st);
        if (k == Keyed::full) {
          flush_keyed();
          k = keyed_add(tm, update, st);
        }
        if (!st.ok()) {
          flush_keyed();
          o.error = st.error();
          o.render_error = true;
          return done(o);
        }
        if (k == Keyed::taken) continue;
        flush_keyed();  // a row of its own, after the rows before it
      }
      row_.clear();
      st = multi ? insert_values(row_, tm, cells_a_) : render_row(row_, tm, v.kind);
      if (!st.ok()) {
        close_stmt();
        o.error = st.error();
        o.render_error = true;
        return done(o);
      }
      RenderBuf& dst = sink.buf();
      if (multi) {
        if (stmt_open && stmt_len + 1 + row_.size() + 1 > batch_bytes_) close_stmt();  // (+ the ';')
        // (the query holds the statement's ";\n" already: query_piece counted it with the first row)
        if (stmt_open && qbound_ != 0 && qlen_ + 1 + row_.size() > qbound_) close_stmt();
        if (!stmt_open) {
          const std::size_t start = dst.size();
          dst.append(v.head);
          dst.append(session);
          session = {};
          const std::size_t at = dst.size();
          insert_head(dst, tm, cells_a_);
          stmt_len = dst.size() - at;
          stmt_open = true;
          dst.append(row_.view());
          stmt_len += row_.size();
          query_piece(dst, start, 2);
        } else {
          dst.push_back(',');
          dst.append(row_.view());
          stmt_len += 1 + row_.size();
          if (qbound_ != 0) qlen_ += 1 + row_.size();
        }
        sink.row_done();
        continue;
      }
      if (flashback_) {
        const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(row_.size(), 0xffffffffu));
        char len[4];
        std::memcpy(len, &n, 4);
        dst.append(len, 4);
        dst.append(row_.view());
      } else {
        const std::size_t at = dst.size();
        dst.append(v.head);
        dst.append(session);
        session = {};
        dst.append(row_.view());
        query_piece(dst, at);
      }
      sink.row_done();
    }
    close_stmt();
    flush_keyed();
    return done(o);
  }

 private:
  // --sql-queries transaction: the statement (with its comment and SET lines) just appended at
  // `at`, and `reserve` bytes still to come of it, go into the current query when they fit in
  // qbound_; otherwise `;;` closes the query before them (a statement larger than qbound_ is then
  // a query of its own). The statement's start is still in `dst`: a sink writes out only in
  // row_done(), after it.
  void query_piece(RenderBuf& dst, std::size_t at, std::size_t reserve = 0) {
    if (qbound_ == 0) return;
    const std::size_t len = dst.size() - at + reserve;
    if (qlen_ > 0 && qlen_ + len > qbound_) {
      if (!qclosed_) qfirst_ = qlen_;
      qclosed_ = true;
      const std::size_t n = dst.size() - at;
      dst.resize(dst.size() + kQueryEnd.size());
      std::memmove(dst.data() + at + kQueryEnd.size(), dst.data() + at, n);
      std::memcpy(dst.data() + at, kQueryEnd.data(), kQueryEnd.size());
      qlen_ = 0;
    }
    qlen_ += len;
  }
  std::size_t qbound_ = 0, qlen_ = 0, qfirst_ = 0;
  bool qclosed_ = false;

 public:
  // The rows event being rendered has closed a query (query_piece): the bytes before it.
  bool query_closed() const { return qclosed_; }
  std::size_t query_first() const { return qfirst_; }

 private:

  // `name` per column of the table, quoted, for the statements of one rows event.
  void quote_names(const TableMap& tm) {
    // Maps are mapped again by every transaction: reuse the names while the map is the same one
    // (TableMap::serial: never reused, new whenever the map's columns change).
    if (tm.serial != 0 && names_serial_ == tm.serial) return;
    names_serial_ = tm.serial;
    table_q_.clear();
    append_quoted_identifier(table_q_, sql_ != nullptr ? rewritten_db(*sql_, tm.db) : std::string_view(tm.db));
    table_q_.push_back('.');
    append_quoted_identifier(table_q_, tm.table);
    if (names_q_.size() < tm.columns.size()) names_q_.resize(tm.columns.size());
    for (std::size_t i = 0; i < tm.columns.size(); ++i) {
      names_q_[i].clear();
      append_quoted_identifier(names_q_[i], tm.columns[i].name);
    }
  }

  // The images of the current row: cells and, rendered on demand, their literals ("NULL" for
  // nulls; only absent columns have none). Most statements need a few of them: the key and the
  // changed columns.
  // The literals of an image are kept one after the other in one buffer (spans per column).
  struct LitSpan {
    std::size_t at = 0, len = 0;
  };
  struct Image {
    std::vector<ImageCell>* cells = nullptr;
    RenderBuf* lits = nullptr;
    std::vector<LitSpan>* spans = nullptr;
    std::vector<char>* done = nullptr;
    bool after = false;
  };
  Image image_a() { return Image{&cells_a_, &lits_a_, &spans_a_, &done_a_, false}; }
  Image image_b() { return Image{&cells_b_, &lits_b_, &spans_b_, &done_b_, true}; }
  void reset_literals(std::size_t n) {
    lits_a_.clear();
    lits_b_.clear();
    if (spans_a_.size() < n) {
      spans_a_.resize(n);
      spans_b_.resize(n);
    }
    done_a_.assign(n, 0);
    done_b_.assign(n, 0);
  }
  bool present(const Image& im, std::size_t i) const { return i < im.cells->size() && (*im.cells)[i].present; }
  bool is_null(const Image& im, std::size_t i) const { return (*im.cells)[i].is_null; }
  // Equal values in the two images (raw bytes compared; a partial JSON value always differs).
  bool same(std::size_t i) const {
    const ImageCell& a = cells_a_[i];
    const ImageCell& b = cells_b_[i];
    if (a.is_null || b.is_null) return a.is_null == b.is_null;
    if (a.partial_json || b.partial_json) return false;
    return a.raw.size() == b.raw.size() && std::equal(a.raw.begin(), a.raw.end(), b.raw.begin());
  }

  // The literal of column i of the image, rendered once per row; `out` views it until the next
  // literal of that image is rendered.
  Status literal(const TableMap& tm, const Image& im, std::size_t i, std::string_view& out) {
    RenderBuf& lits = *im.lits;
    LitSpan& span = (*im.spans)[i];
    if (!(*im.done)[i]) {
      (*im.done)[i] = 1;
      span.at = lits.size();
      Status st = literal_text(tm, im, i, lits);
      span.len = lits.size() - span.at;
      if (!st.ok()) return st;
    }
    out = std::string_view(lits.data() + span.at, span.len);
    return {};
  }
  Status literal_text(const TableMap& tm, const Image& im, std::size_t i, RenderBuf& lits) {
    const ImageCell& c = (*im.cells)[i];
    if (c.is_null) {
      lits.append("NULL", 4);
      return {};
    }
    if (c.partial_json) {
      const bool have_before = im.after && i < cells_a_.size() && cells_a_[i].present && !cells_a_[i].is_null &&
                               cells_a_[i].value.kind == ValueKind::json;
      std::string l;
      Status st = have_before ? full_json_after(l, cells_a_[i].value, c) : json_diff_expression(l, tm, i, c);
      lits.append(l);
      return st;
    }
    return append_sql_literal(lits, tm.infos[i], c.value);
  }

  // A partial JSON after image with the before image's document: the whole new document.
  Status full_json_after(std::string& l, const ColumnValue& before, const ImageCell& c) {
    json_before_.clear();
    Status st = append_json_binary(json_before_, before.bytes, before.offset);
    if (!st.ok()) return st;
    json_after_.clear();
    st = apply_json_diffs(json_before_, c.diffs, c.diffs_at, json_after_);
    if (!st.ok()) return st;
    l = "CAST(";
    append_sql_text(l, json_after_, 45);
    l.append(" AS JSON)");
    return {};
  }

  // Without it (binlog_row_image=MINIMAL): the diffs as functions of the column, in order:
  // REPLACE -> JSON_REPLACE, INSERT -> JSON_ARRAY_INSERT at an array index, else JSON_INSERT,
  // REMOVE -> JSON_REMOVE.
  Status json_diff_expression(std::string& l, const TableMap& tm, std::size_t i, const ImageCell& c) {
    l.clear();
    append_quoted_identifier(l, tm.columns[i].name);
    JsonDiffReader rd(c.diffs, c.diffs_at);
    JsonDiff d;
    while (rd.next(d)) {
      const bool array_index = !d.path.empty() && d.path.back() == ']';
      const char* fn = d.op == JsonDiffOp::replace  ? "JSON_REPLACE("
                       : d.op == JsonDiffOp::remove ? "JSON_REMOVE("
                       : array_index                ? "JSON_ARRAY_INSERT("
                                                    : "JSON_INSERT(";
      std::string e = fn;
      e.append(l);
      e.append(", ");
      append_sql_text(e, d.path, 45);
      if (d.op != JsonDiffOp::remove) {
        json_after_.clear();
        Status st = append_json_binary(json_after_, d.value, d.value_offset);
        if (!st.ok()) return st;
        e.append(", CAST(");
        append_sql_text(e, json_after_, 45);
        e.append(" AS JSON)");
      }
      e.push_back(')');
      l.swap(e);
    }
    if (!rd.ok()) return rd.error();
    return {};
  }

  void table_name(RenderBuf& s, const TableMap&) { s.append(table_q_); }

  // INSERT INTO t (present columns) VALUES (...): the part before the values is the same for
  // every row of an event (one column bitmap), kept in insert_prefix_.
  void insert_head(RenderBuf& s, const TableMap&, const std::vector<ImageCell>& cells) {
    if (insert_prefix_.empty()) {
      insert_prefix_.append("INSERT INTO ");
      insert_prefix_.append(table_q_);
      insert_prefix_.append(" (");
      bool first = true;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (!cells[i].present || generated_[i]) continue;
        if (!first) insert_prefix_.push_back(',');
        first = false;
        insert_prefix_.append(names_q_[i]);
      }
      insert_prefix_.append(") VALUES ");
    }
    s.append(insert_prefix_);
  }

  // An INSERT of the image's values, rendered straight from the cells.
  Status insert_cells(RenderBuf& s, const TableMap& tm, const std::vector<ImageCell>& cells) {
    insert_head(s, tm, cells);
    Status st = insert_values(s, tm, cells);
    if (st.ok()) s.append(";\n", 2);
    return st;
  }

  // `(v1,v2,...)`: the image's values of the columns a statement sets.
  Status insert_values(RenderBuf& s, const TableMap& tm, const std::vector<ImageCell>& cells) {
    s.push_back('(');
    bool first = true;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const ImageCell& c = cells[i];
      if (!c.present || generated_[i]) continue;
      if (!first) s.push_back(',');
      first = false;
      if (c.is_null) {
        s.append("NULL", 4);
        continue;
      }
      Status st = append_sql_literal(s, tm.infos[i], c.value);
      if (!st.ok()) return st;
    }
    s.push_back(')');
    return {};
  }

  // WHERE by the primary key when every key column is in the image and not null, else by every
  // column of the image (IS NULL for nulls) and LIMIT 1.
  Status where(RenderBuf& s, const TableMap& tm, const Image& im) {
    bool by_key = !tm.primary_key.empty();
    for (std::uint32_t k : tm.primary_key) by_key = by_key && present(im, k) && !is_null(im, k);
    s.append(" WHERE ");
    bool first = true;
    auto term = [&](std::size_t i) -> Status {
      if (!first) s.append(" AND ");
      first = false;
      s.append(names_q_[i]);
      if (is_null(im, i)) {
        s.append(" IS NULL");
        return {};
      }
      std::string_view l;
      Status st = literal(tm, im, i, l);
      if (!st.ok()) return st;
      s.push_back('=');
      s.append(l);
      return {};
    };
    if (by_key) {
      for (std::uint32_t k : tm.primary_key) {
        Status st = term(k);
        if (!st.ok()) return st;
      }
      return {};
    }
    for (std::size_t i = 0; i < im.cells->size(); ++i) {
      if (!present(im, i)) continue;
      Status st = term(i);
      if (!st.ok()) return st;
    }
    if (first) s.append("1=1");
    s.append(" LIMIT 1");
    return {};
  }

  Status delete_stmt(RenderBuf& s, const TableMap& tm, const Image& where_image) {
    s.append("DELETE FROM ");
    table_name(s, tm);
    Status st = where(s, tm, where_image);
    if (!st.ok()) return st;
    s.append(";\n");
    return {};
  }

  // UPDATE t SET (the columns of `set_image` whose value differs from `where_image`'s, or all)
  // WHERE ...
  Status update_stmt(RenderBuf& s, const TableMap& tm, const Image& set_image, const Image& where_image) {
    const std::size_t start = s.size();
    s.append("UPDATE ");
    table_name(s, tm);
    s.append(" SET ");
    bool any = false;
    for (std::size_t i = 0; i < set_image.cells->size(); ++i) {
      if (!present(set_image, i) || generated_[i]) continue;
      if (set_ == SqlSet::changed && present(where_image, i) && same(i)) continue;
      std::string_view l;
      Status st = literal(tm, set_image, i, l);
      if (!st.ok()) return st;
      if (any) s.push_back(',');
      any = true;
      s.append(names_q_[i]);
      s.push_back('=');
      s.append(l);
    }
    if (!any) {  // nothing changed: no statement
      s.resize(start);
      s.append("# (no column changed)\n");
      return {};
    }
    Status st = where(s, tm, where_image);
    if (!st.ok()) return st;
    s.append(";\n");
    return {};
  }

  Status render_row(RenderBuf& s, const TableMap& tm, RowsKind kind) {
    // An INSERT needs no literal kept: the values go out as they are rendered.
    if (kind == RowsKind::insert && !flashback_) return insert_cells(s, tm, cells_a_);
    if (kind == RowsKind::delete_ && flashback_) return insert_cells(s, tm, cells_a_);
    reset_literals(cells_a_.size());
    switch (kind) {
      case RowsKind::insert:   // flashback
      case RowsKind::delete_:  // forward
        return delete_stmt(s, tm, image_a());
      case RowsKind::update:
        return flashback_ ? update_stmt(s, tm, image_a(), image_b()) : update_stmt(s, tm, image_b(), image_a());
    }
    return {};
  }

  // Forward UPDATE and DELETE rows in bulk. A run of rows of one rows event becomes one statement
  // when every row is found by its primary key and the key's columns are all integers (no
  // collation, padding or rounding: `k IN (...)` finds exactly the rows `k=...` finds), the keys
  // run strictly one way (ORDER BY the key, ASC or DESC, then changes the rows in the order the
  // source did, so unique and foreign key checks and triggers see the same sequence), and, for an
  // UPDATE, no key column changes and every row sets the same columns, each to a literal whose
  // type CASE cannot change (integers, DECIMAL of the column's scale, dates and times as text,
  // X'..' bytes, _utf8mb4 text, NULL; not FLOAT/DOUBLE, BIT, ENUM/SET, JSON, ...):
  //   DELETE FROM t WHERE `id` IN (1,2,3) ORDER BY `id`;
  //   DELETE FROM t WHERE (`a`,`b`) IN ((1,1),(1,2)) ORDER BY `a`,`b`;
  //   UPDATE t SET `c`=CASE `id` WHEN 1 THEN 5 WHEN 2 THEN 6 END WHERE `id` IN (1,2) ORDER BY `id`;
  //   UPDATE t SET `c`=CASE WHEN `a`=1 AND `b`=1 THEN 5 ... END WHERE (`a`,`b`) IN (...) ...;
  // A statement stays within batch_bytes_ and kMaxKeyedRows rows; a run of one row is written as
  // the row's own statement. Any other row ends the run and is written as before.
  static constexpr std::size_t kMaxKeyedRows = 1000;
  enum class Keyed { taken, full, alone };

  static bool integer_kind(const ImageCell& c) {
    return c.present && !c.is_null &&
           (c.value.kind == ValueKind::signed_int || c.value.kind == ValueKind::unsigned_int);
  }
  // A SET value CASE gives to the column as the row's own statement would.
  static bool case_safe(const ImageCell& c, std::string_view lit) {
    if (c.is_null) return true;
    if (c.partial_json) return false;
    switch (c.value.kind) {
      case ValueKind::signed_int:
      case ValueKind::unsigned_int:
      case ValueKind::year:
      case ValueKind::decimal:
      case ValueKind::date:
      case ValueKind::time:
      case ValueKind::datetime:
      case ValueKind::timestamp:
      case ValueKind::binary:
        return true;
      case ValueKind::text:  // _utf8mb4'..' in every row (not _charset X'..' beside it)
        return lit.size() >= 9 && lit.substr(0, 9) == "_utf8mb4'";
      default:
        return false;
    }
  }
  static int compare_key(const ImageCell& a, const ImageCell& b) {
    if (a.value.kind == ValueKind::signed_int) return a.value.i < b.value.i ? -1 : a.value.i > b.value.i ? 1 : 0;
    return a.value.u < b.value.u ? -1 : a.value.u > b.value.u ? 1 : 0;
  }
  std::size_t keyed_cond_len(std::size_t row) const {  // WHEN's condition
    const std::size_t nk = kb_key_.size();
    if (nk == 1) return kb_key_spans_[row].len;
    std::size_t n = 0;
    for (std::size_t j = 0; j < nk; ++j) n += (j ? 5 : 0) + names_q_[kb_key_[j]].size() + 1 + kb_key_spans_[row * nk + j].len;
    return n;
  }

  // Takes the decoded row into the run when it can go there (taken), says when the run must be
  // written first (full), or that the row is written alone.
  Keyed keyed_add(const TableMap& tm, bool update, Status& st) {
    const std::vector<std::uint32_t>& pk = tm.primary_key;
    if (pk.empty()) return Keyed::alone;
    for (std::uint32_t k : pk) {
      if (k >= cells_a_.size() || !integer_kind(cells_a_[k])) return Keyed::alone;
      if (update && k < cells_b_.size() && cells_b_[k].present && !same(k)) return Keyed::alone;
    }
    // The columns this row sets (update_stmt's choice).
    cols_.clear();
    if (update) {
      for (std::size_t i = 0; i < cells_b_.size(); ++i) {
        if (!cells_b_[i].present || generated_[i]) continue;
        if (i < cells_a_.size() && cells_a_[i].present && same(i)) continue;
        cols_.push_back(static_cast<std::uint32_t>(i));
      }
      if (cols_.empty()) return Keyed::alone;
    }
    if (kb_rows_ > 0) {
      if (kb_rows_ >= kMaxKeyedRows || (update && cols_ != kb_cols_)) return Keyed::full;
      int c = 0;
      for (std::size_t j = 0; j < pk.size() && c == 0; ++j) c = compare_key(kb_last_[j], cells_a_[pk[j]]);
      if (c == 0 || (kb_dir_ != 0 && c != kb_dir_)) return Keyed::full;
    }
    // The literals, and what they add to the statement.
    reset_literals(cells_a_.size() > cells_b_.size() ? cells_a_.size() : cells_b_.size());
    const std::size_t key_at = kb_key_lits_.size(), key_spans = kb_key_spans_.size();
    const std::size_t val_at = kb_val_lits_.size(), val_spans = kb_val_spans_.size();
    auto undo = [&] {
      kb_key_lits_.resize(key_at);
      kb_key_spans_.resize(key_spans);
      kb_val_lits_.resize(val_at);
      kb_val_spans_.resize(val_spans);
    };
    if (kb_rows_ == 0) {
      kb_key_lits_.clear();
      kb_key_spans_.clear();
      kb_val_lits_.clear();
      kb_val_spans_.clear();
    }
    std::size_t keys_len = 0;
    for (std::uint32_t k : pk) {
      std::string_view l;
      st = literal(tm, image_a(), k, l);
      if (!st.ok()) return Keyed::alone;
      kb_key_spans_.push_back(LitSpan{kb_key_lits_.size(), l.size()});
      kb_key_lits_.append(l);
      keys_len += l.size();
    }
    std::size_t vals_len = 0;
    for (std::uint32_t i : cols_) {
      std::string_view l;
      st = literal(tm, image_b(), i, l);
      if (!st.ok() || !case_safe(cells_b_[i], l)) {
        undo();
        return Keyed::alone;
      }
      kb_val_spans_.push_back(LitSpan{kb_val_lits_.size(), l.size()});
      kb_val_lits_.append(l);
      vals_len += l.size();
    }
    if (kb_rows_ == 0) {
      kb_key_.assign(pk.begin(), pk.end());
      kb_cols_ = cols_;
      kb_dir_ = 0;
      // The fixed part: DELETE FROM t WHERE (k) IN () ORDER BY k DESC; / UPDATE t SET c=CASE .. END, ...
      std::size_t keys_names = 0;
      for (std::uint32_t k : pk) keys_names += names_q_[k].size() + 1;
      // ("UPDATE " + " SET " or "DELETE FROM ") t " WHERE " (k,..) " IN (" ") ORDER BY " k DESC,.. ";"
      kb_len_ = 12 + table_q_.size() + 7 + keys_names + (pk.size() > 1 ? 2 : 0) + 5 + 11 + keys_names +
                pk.size() * 5 + 1;
      for (std::uint32_t i : cols_)  // ,c=CASE[ k] ... END
        kb_len_ += 1 + names_q_[i].size() + 1 + 4 + (pk.size() == 1 ? 1 + names_q_[pk[0]].size() : 0) + 4;
    }
    // This row: its key in the IN list, and a WHEN per column.
    const std::size_t row = kb_rows_;
    std::size_t add = keys_len + (pk.size() - 1) + (pk.size() > 1 ? 2 : 0) + 1;
    if (update) add += cols_.size() * (6 + keyed_cond_len(row) + 6) + vals_len;
    if (kb_rows_ > 0 && kb_len_ + add > batch_bytes_) {
      undo();
      return Keyed::full;
    }
    if (kb_rows_ == 1) {
      int c = 0;
      for (std::size_t j = 0; j < pk.size() && c == 0; ++j) c = compare_key(kb_last_[j], cells_a_[pk[j]]);
      kb_dir_ = c;
    }
    kb_len_ += add;
    kb_last_.resize(pk.size());
    for (std::size_t j = 0; j < pk.size(); ++j) kb_last_[j] = cells_a_[pk[j]];
    ++kb_rows_;
    return Keyed::taken;
  }

  // The run as one statement (a run of one row: the row's own statement).
  void keyed_statement(RenderBuf& s, const TableMap& tm, bool update) {
    const std::size_t nk = kb_key_.size(), nc = kb_cols_.size();
    auto key = [&](std::size_t row, std::size_t j) {
      const LitSpan& sp = kb_key_spans_[row * nk + j];
      return std::string_view(kb_key_lits_.data() + sp.at, sp.len);
    };
    auto val = [&](std::size_t row, std::size_t c) {
      const LitSpan& sp = kb_val_spans_[row * nc + c];
      return std::string_view(kb_val_lits_.data() + sp.at, sp.len);
    };
    auto cond = [&](std::size_t row) {  // `a`=1 AND `b`=2
      for (std::size_t j = 0; j < nk; ++j) {
        if (j) s.append(" AND ", 5);
        s.append(names_q_[kb_key_[j]]);
        s.push_back('=');
        s.append(key(row, j));
      }
    };
    [[maybe_unused]] const std::size_t start = s.size();
    s.append(update ? "UPDATE " : "DELETE FROM ");
    table_name(s, tm);
    if (update) {
      s.append(" SET ", 5);
      for (std::size_t c = 0; c < nc; ++c) {
        if (c) s.push_back(',');
        s.append(names_q_[kb_cols_[c]]);
        s.push_back('=');
        if (kb_rows_ == 1) {
          s.append(val(0, c));
          continue;
        }
        s.append("CASE", 4);
        if (nk == 1) {
          s.push_back(' ');
          s.append(names_q_[kb_key_[0]]);
        }
        for (std::size_t r = 0; r < kb_rows_; ++r) {
          s.append(" WHEN ", 6);
          if (nk == 1) s.append(key(r, 0));
          else cond(r);
          s.append(" THEN ", 6);
          s.append(val(r, c));
        }
        s.append(" END", 4);
      }
    }
    s.append(" WHERE ", 7);
    if (kb_rows_ == 1) {
      cond(0);
      s.append(";\n", 2);
      return;
    }
    if (nk > 1) s.push_back('(');
    for (std::size_t j = 0; j < nk; ++j) {
      if (j) s.push_back(',');
      s.append(names_q_[kb_key_[j]]);
    }
    if (nk > 1) s.push_back(')');
    s.append(" IN (", 5);
    for (std::size_t r = 0; r < kb_rows_; ++r) {
      if (r) s.push_back(',');
      if (nk > 1) s.push_back('(');
      for (std::size_t j = 0; j < nk; ++j) {
        if (j) s.push_back(',');
        s.append(key(r, j));
      }
      if (nk > 1) s.push_back(')');
    }
    s.append(") ORDER BY ", 11);
    for (std::size_t j = 0; j < nk; ++j) {
      if (j) s.push_back(',');
      s.append(names_q_[kb_key_[j]]);
      if (kb_dir_ > 0) s.append(" DESC", 5);
    }
    s.push_back(';');
    assert(s.size() - start <= kb_len_);
    s.push_back('\n');
  }

  std::size_t kb_rows_ = 0;  // rows in the run
  int kb_dir_ = 0;           // the keys' order: -1 ascending, 1 descending (0: one row so far)
  std::size_t kb_len_ = 0;   // the run's statement, at most this many bytes (with its ';')
  std::vector<std::uint32_t> kb_key_, kb_cols_, cols_;
  std::vector<ImageCell> kb_last_;  // the last row's key cells (they view the event's bytes)
  RenderBuf kb_key_lits_, kb_val_lits_;
  std::vector<LitSpan> kb_key_spans_, kb_val_spans_;

  bool flashback_ = false;
  SqlSet set_ = SqlSet::changed;
  const SqlOptions* sql_ = nullptr;
  std::size_t rewrite_count_ = 0;
  std::size_t batch_bytes_ = 0;  // forward INSERTs: rows per statement up to this size (0: one per row)
  std::vector<ImageCell> cells_a_, cells_b_;
  RenderBuf lits_a_, lits_b_;
  std::vector<LitSpan> spans_a_, spans_b_;
  RenderBuf row_;  // the statement of the row being rendered
  std::vector<char> done_a_, done_b_;
  std::string json_before_, json_after_;
  std::string_view generated_;  // per column of the table being written (1: generated)
  std::vector<std::string> names_q_;  // per column, quoted (the current rows event)
  std::string table_q_;                // `db`.`table`
  std::uint64_t names_serial_ = 0;  // the map names_q_ and table_q_ were made from
  std::string insert_prefix_;
};

// --threads: the converting thread keeps transactions, table maps, session state and selection
// and puts what it writes into batches, in order: text (already rendered), rows events to render
// (their bytes copied, the table map held), and the ends of transactions (whose COMMIT or
// ROLLBACK, and flashback's bookkeeping, depend on how their rows rendered). Rendering threads
// render the rows; the batches are then written in order (batch_pool.h), so output, diagnostics
// and the flashback spill come out as a one-thread run makes them.
struct SqlJob {
  enum class Kind : std::uint8_t { text, rows, finish, query_mode };
  Kind kind = Kind::text;
  convert_detail::Span text;  // text: the text; rows: the head; finish: the closing statement
  // rows
  convert_detail::Span session, rows, present_before, present_after, generated, log_name;
  std::uint64_t rows_offset = 0, width = 0;
  std::uint64_t pos = 0;  // rows: the event's position; finish: the transaction's number
  std::uint64_t seq = 0;  // the SqlConverter::txn_seq_ it belongs to
  std::string_view event_name;  // static storage
  RowsKind rows_kind = RowsKind::insert;
  bool partial_json = false;
  bool query = false;  // rows: in a multi-statement query; query_mode: entering (else leaving)
  std::shared_ptr<const TableMap> map;
  // finish
  convert_detail::Span xid;
  bool incomplete = false;
  // rendered (rows)
  convert_detail::Span out;  // in SqlBatch::out
  RowsOutcome outcome;
};

struct SqlBatch : convert_detail::Arena {
  std::vector<SqlJob> jobs;
  RenderBuf out;
  std::size_t query_bound = 0;  // SqlOptions::batch_bytes with --sql-queries transaction

  std::size_t size() const { return arena.size(); }
  bool empty() const { return jobs.empty(); }
  void clear() {
    arena.clear();
    jobs.clear();
    out.clear();
  }
  RowsJobView rows_view(const SqlJob& j) const {
    RowsJobView v;
    v.map = j.map;
    v.rows = bytes(j.rows);
    v.present_before = bytes(j.present_before);
    v.present_after = bytes(j.present_after);
    v.rows_offset = j.rows_offset;
    v.width = j.width;
    v.kind = j.rows_kind;
    v.partial_json = j.partial_json;
    v.head = view(j.text);
    v.session = view(j.session);
    v.generated = view(j.generated);
    v.query_bound = j.query ? query_bound : 0;
    return v;
  }
};

class SqlConverter;

// SqlConverter's side of BatchPool.
struct SqlRender {
  using Batch = SqlBatch;
  using Worker = SqlRowRenderer;
  SqlConverter& conv;
  const SqlOptions& sql;
  void render(Batch& b, Worker& w) const;
  void write(Batch& b) const;
};

// The SQL sink of the row-change stream: RowStream finds the transactions, statements and row
// changes; the converter writes them as SQL (forward, or reversed by the flashback store).
class SqlConverter final : public RowSink {
 public:
  SqlConverter(const ConvertOptions& opts, const SqlOptions& sql, LineOutput& out, StderrDiagnostics& diag,
               std::FILE* err)
      : opts_(opts), sql_(sql), out_(out), diag_(diag), err_(err), store_(sql.tmpdir, sql.spill_bytes) {
    renderer_.configure(sql);
    if (!out.interactive() && opts.render_threads > 0)  // a terminal: every line as it is complete
      pool_ = std::make_unique<convert_detail::BatchPool<SqlRender>>(
          opts.render_threads,
          sql.render_batch_bytes != 0 ? sql.render_batch_bytes : sql.flashback ? 256 * 1024 : 128 * 1024, render_);
  }

  // Writes out everything handed on so far: after it, this thread may touch what the writing
  // side owns (the output, the flashback store and transaction records).
  void sync() {
    if (pool_) pool_->sync();
  }

  // RowSink
  void begin_file(const InputFile& f) override { log_name_ = &f.log_name; }
  void before_stderr() override { sync(); }
  std::string_view selection_db(const TableMap& tm) override { return rewritten_db(sql_, tm.db); }

  // The end of a file left a transaction without its COMMIT (binlogctl(1), CUT-OFF
  // TRANSACTIONS): the finding on stderr, as every row consumer reports it; the output rolls it
  // back (flashback: it is not undone).
  void end_file(const TransactionFront::CutOff* c, bool) override {
    if (c) report(c->diagnostic(stream().file()));
    if (!open_) return;
    open_ = false;
    if (!sql_.flashback) {
      set_query_mode(false);
      emit(fmt::format("ROLLBACK; # cut off: {}\n", c ? clean(c->message()) : std::string("the transaction is incomplete")));
      return;
    }
    sync();
    if (txn_spilled_) {
      note_unsafe_at_end("a cut-off transaction too large to take back");
      flush_txn_records(true, open_txn_);
      return;
    }
    txn_records_.clear();  // only ever held here: nothing of it reached the store
    txn_bytes_ = 0;
  }

  void hole(const Event& ev, std::uint64_t bytes) override {
    const std::uint64_t at = top_pos(ev) - (ev.is_inner() ? 0 : bytes);
    comment_line(fmt::format("# DAMAGE {}:{}: {} bytes could not be read as events; nothing of them is rendered",
                             clean(*log_name_), at, bytes));
    note_unsafe(ev, "a hole in the data inside the range", false);
    if (open_) txn_incomplete_ = true;
  }
  void damaged(const Event& ev) override {
    comment_line(fmt::format("# DAMAGE {}:{}: the event failed its checksum; nothing of it is rendered",
                             clean(*log_name_), top_pos(ev)));
    note_unsafe(ev, "a damaged event inside the range", false);
    if (open_) txn_incomplete_ = true;
  }

  void statement(const Event& ev, const TransactionFront::Step& step) override {
    statement(ev, step.query, step.kind);
  }

  // The events that carry a statement's context, LOAD DATA, INCIDENT and XA PREPARE (statements,
  // table maps and rows come through their own calls).
  void event(const Event& ev, const TransactionFront::Step& step) override {
    if (step.is_statement && !step.statement_ok) return;
    const TransactionState& ts = stream().state();
    if (open_ && ts.txn_id != open_txn_) close_open("the next transaction began before it ended");
    switch (ev.type()) {
      case EventType::intvar: {
        auto iv = decode_intvar(ev.body_reader(), *ev.fde);
        if (!iv) {
          undecodable(ev, "INTVAR", iv.error());
          break;
        }
        pending_.append(iv->type == 1 ? "SET LAST_INSERT_ID=" : "SET INSERT_ID=");
        pending_.append(std::to_string(iv->value));
        pending_.append(";\n");
        break;
      }
      case EventType::rand: {
        auto rv = decode_rand(ev.body_reader(), *ev.fde);
        if (!rv) {
          undecodable(ev, "RAND", rv.error());
          break;
        }
        pending_.append(fmt::format("SET @@RAND_SEED1={}, @@RAND_SEED2={};\n", rv->seed1, rv->seed2));
        break;
      }
      case EventType::user_var: {
        std::string text;
        Status st = append_info(text, ev, scratch_);
        if (!st.ok()) {
          undecodable(ev, "USER_VAR", st.error());
          break;
        }
        pending_.append("SET ");
        pending_.append(text);
        pending_.append(";\n");
        break;
      }
      case EventType::load:
      case EventType::new_load:
      case EventType::exec_load:
      case EventType::execute_load_query:
        // LOAD DATA logged as a statement: its file travels in other events; not written as SQL.
        if (stream().front().selected()) {
          if (open_) txn_incomplete_ = true;
          comment_line(fmt::format("# SKIPPED {}:{}: LOAD DATA logged as a statement (its data is not written as SQL)",
                                   clean(*log_name_), top_pos(ev)));
          if (!note_unsafe(ev, "LOAD DATA logged as a statement", false))
            report(Diagnostic{Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
                              "LOAD DATA logged as a statement: not written as SQL (binlog_format=ROW logs its rows)"});
        }
        break;
      case EventType::incident:
        // The server lost events here (LOST_EVENTS): whatever follows may not match the data.
        comment_line(fmt::format("# INCIDENT {}:{}: the server recorded lost events here", clean(*log_name_),
                                 top_pos(ev)));
        if (!note_unsafe(ev, "an INCIDENT (lost events) inside the range", false))
          report(Diagnostic{Check::undecodable_event, Severity::warning, *log_name_, top_pos(ev),
                            "INCIDENT event: the server recorded lost events here"});
        break;
      case EventType::xa_prepare:
        if (open_) {
          if (open_xa_) xa_prepared_here_ = true;
          finish(open_xa_ ? "XA END " + ts.xid + ";\nXA PREPARE " + ts.xid + ";\n" : std::string("COMMIT;\n"));
        } else if (sql_.flashback && stream().front().selected() && !ts.xid.empty()) {
          // Prepared in the range with nothing to undo (its rows are not selected): its XA COMMIT
          // is then no commit of a transaction prepared before the range.
          sync();
          prepared_.try_emplace(ts.xid, Prepared{ts.txn_id, 0, {}});
        }
        break;
      default:
        break;
    }
  }

  void after_event(const Event& ev, const TransactionFront::Step& step) override {
    if (step.is_statement && !step.statement_ok) return;
    if (ev.type() == EventType::xid || ev.type() == EventType::xa_prepare) pending_.clear();
    if (open_ && !stream().state().open) {
      // The event ended the transaction: XID, COMMIT, or a rows event flagged STMT_END in a
      // transaction without GTID or BEGIN.
      if (step.is_statement && step.kind == StatementKind::rollback) finish("ROLLBACK;\n");
      else finish("COMMIT;\n");
    }
    if (pool_) pool_->maybe_submit();
    else if (out_.interactive()) out_.flush();
  }

  // -D: the output's own statements are not written to the target's binlog (mysqlbinlog's
  // --disable-log-bin); the session's setting is saved first and set back at the end.
  void begin_run() {
    if (sql_.disable_log_bin && !sql_.flashback) put(kLogBinOff);
  }
  static constexpr std::string_view kLogBinOff =
      "SET @binlogctl_sql_log_bin=@@session.sql_log_bin, @@session.sql_log_bin=0;\n";
  static constexpr std::string_view kLogBinBack = "SET @@session.sql_log_bin=@binlogctl_sql_log_bin;\n";

  // After RowStream::finish().
  int finish_run() {
    sync();  // the writing side is idle from here on
    if (sql_.flashback) {
      for (const auto& [xid, p] : prepared_)
        if (!p.records.empty())
          note_unsafe_at_end(fmt::format("XA transaction {} ({}) prepared in the range without its outcome", p.txn, xid));
      ddl_conflicts();
      if (refused_) {
        fmt::print(err_, "binlogctl: --flashback: the range cannot be undone from its row changes (see the errors "
                         "above; --flashback-skip-unsafe skips those parts with a warning): nothing written\n");
        return 1;
      }
      if (sql_.disable_log_bin) put(kLogBinOff);
      // The records are read back reversed: the session they need is set once, first.
      put("SET @@session.sql_mode='NO_AUTO_VALUE_ON_ZERO', @@session.time_zone='+00:00', "
                 "@@session.character_set_client=45, @@session.collation_connection=45;\n");
      store_.replay(out_, [this](std::string_view note, std::string& dst) { expand_ddl_note(note, dst); });
    } else {
      leave_query_mode_now();
      gtid_end();
    }
    if (sql_.disable_log_bin) put(kLogBinBack);
    out_.flush();
    return 0;
  }

 private:
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }
  // Output in blocks (LineOutput::write would make a system call per statement).
  void put(std::string_view text) {
    std::string& b = out_.buf();
    b.append(text);
    if (b.size() >= kOutBlock) out_.flush();
  }
  static std::string_view event_name(const Event& ev) { return event_type_constant(ev.type_code()); }

  // --sql-queries transaction (SqlOptions::transaction_queries). The row statements of a
  // transaction, with its GTID, BEGIN and COMMIT, go between `DELIMITER ;;` lines: the client
  // then sends everything up to a `;;` as one multi-statement query (one round trip). The queries
  // end at the COMMIT (`COMMIT;;`) and before they would pass --sql-batch-bytes (a `;;` line).
  // Statements logged as statements (DDL, statement-logged DML, XA) go outside, as before: the
  // output goes back to `DELIMITER ;` first (a USE at the start of a query would be taken by the
  // client for its own `use` command, a DELIMITER line inside a query would be sent as text).
  // This thread's side: whether `DELIMITER ;;` is on in what it has handed on.
  bool query_mode_ = false;
  bool queries() const { return sql_.transaction_queries && !sql_.flashback && sql_.batch_bytes > 0; }
  void set_query_mode(bool on) {
    if (query_mode_ == on) return;
    query_mode_ = on;
    if (!pool_) return write_query_mode(on);
    SqlBatch& b = pool_->current();
    b.query_bound = sql_.batch_bytes;
    SqlJob j;
    j.kind = SqlJob::Kind::query_mode;
    j.query = on;
    b.jobs.push_back(std::move(j));
  }
  // After sync(): back to `DELIMITER ;`, straight to the output.
  void leave_query_mode_now() {
    if (!query_mode_) return;
    query_mode_ = false;
    write_query_mode(false);
  }
  // The writing side: `DELIMITER ;;` on in the output, and the bytes of the query not yet closed.
  bool out_query_ = false;
  std::size_t query_bytes_ = 0;
  void write_query_mode(bool on) {
    if (on) {
      put("DELIMITER ;;\n");
    } else {
      if (query_bytes_ > 0) put(kQueryEnd);
      put("DELIMITER ;\n");
    }
    out_query_ = on;
    query_bytes_ = 0;
  }
  // (the writing side) Text of `n` bytes goes into the current query, or closes it first when it
  // would pass the bound.
  void query_room(std::size_t n) {
    if (!out_query_) return;
    if (query_bytes_ > 0 && query_bytes_ + n > sql_.batch_bytes) {
      put(kQueryEnd);
      query_bytes_ = 0;
    }
    query_bytes_ += n;
  }
  // (the writing side) Before a rows event's statements, rendered as if they began a query: the
  // current query is closed first when it cannot take their first `first` bytes.
  void query_join(std::size_t first) {
    if (query_bytes_ > 0 && query_bytes_ + first > sql_.batch_bytes) {
      put(kQueryEnd);
      query_bytes_ = 0;
    }
  }
  void put_text(std::string_view text) {
    query_room(text.size());
    put(text);
  }
  // A log name inside a comment line: no line breaks.
  static std::string clean(std::string_view s) {
    std::string r(s);
    for (char& c : r)
      if (c == '\n' || c == '\r') c = ' ';
    return r;
  }

  // Text in the output, after everything handed on before it.
  void emit(std::string_view text) {
    if (!pool_) {
      put_text(text);
      return;
    }
    SqlBatch& b = pool_->current();
    if (!b.jobs.empty() && b.jobs.back().kind == SqlJob::Kind::text &&
        b.jobs.back().text.at + b.jobs.back().text.len == b.arena.size()) {
      b.jobs.back().text.len += text.size();
      b.arena.append(text);
      return;
    }
    SqlJob j;
    j.text = b.add(text);
    b.jobs.push_back(std::move(j));
  }

  // A diagnostic after everything handed on before it.
  void report(const Diagnostic& d) override {
    sync();
    report_now(d);
  }
  // (the writing side, or this thread after sync())
  void report_now(const Diagnostic& d) {
    out_.flush();
    diag_.report(d);
  }
  void undecodable(const Event& ev, std::string_view what, const DecodeError& e) override {
    if (open_) txn_incomplete_ = true;
    report(Diagnostic{Check::undecodable_event, Severity::error, *log_name_, e.offset,
                      fmt::format("{} event at {} does not decode: {}", what, top_pos(ev), e.what)});
  }

  // Something the flashback cannot undo: an error (nothing is written at the end), or with
  // --flashback-skip-unsafe a warning and a comment where it was. In forward mode `forward`
  // says whether it is worth a message at all.
  bool note_unsafe(const Event& ev, std::string_view why, bool forward_error) {
    if (sql_.flashback || forward_error) sync();
    return note_unsafe_at(*log_name_, top_pos(ev), why, forward_error, open_);
  }
  // (the writing side, or this thread after sync(); `open`: within a transaction written)
  bool note_unsafe_at(std::string_view log_name, std::uint64_t pos, std::string_view why, bool forward_error,
                      bool open) {
    if (!sql_.flashback) {
      if (forward_error)
        report_now(Diagnostic{Check::undecodable_event, Severity::error, std::string(log_name), pos, std::string(why)});
      return false;
    }
    if (sql_.skip_unsafe) {
      report_now(Diagnostic{Check::undecodable_event, Severity::warning, std::string(log_name), pos,
                            fmt::format("--flashback: {}: skipped", why)});
      std::string c = fmt::format("# SKIPPED {}:{}: {} (not undone)\n", clean(log_name), pos, why);
      if (open) txn_records_.add(c);
      else store_.add(c);
      return true;
    }
    refused_ = true;
    report_now(Diagnostic{Check::undecodable_event, Severity::error, std::string(log_name), pos,
                          fmt::format("--flashback: {}: cannot be undone", why)});
    return true;
  }

  // ---- flashback and DDL ---------------------------------------------------------------------
  // Undoing DDL is out of scope: a DDL statement in the range is never undone. It is an
  // obstacle only when it acts on a table whose rows the range changes (the undo of those rows
  // would meet another table definition), before or after the rows: known at the end. DDL on
  // other tables, or on no table, is passed over with a "# SKIPPED" comment at its place.
  // Memory: one entry per table (or dropped database) that DDL names, not per statement.

  static std::string fold(std::string_view s) {
    std::string r(s);
    for (char& c : r)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    return r;
  }

  struct DdlSeen {  // the first DDL statement of the range on a table or database
    std::string log;
    std::uint64_t pos = 0;
    std::string verb, shown;
    std::uint64_t count = 0;
    std::uint64_t seq = 0;  // the order of the statements, for the messages
  };

  void note_first(std::map<std::string, DdlSeen>& m, std::string key, const std::string& log, std::uint64_t pos,
                  const std::string& verb, std::string shown) {
    DdlSeen& d = m[std::move(key)];
    if (d.count++ == 0) {
      d.seq = ddl_seq_++;
      d.log = log;
      d.pos = pos;
      d.verb = verb;
      d.shown = std::move(shown);
    }
  }

  void add_record(std::string rec) {
    sync();
    if (open_) {
      txn_bytes_ += rec.size();
      txn_records_.add(rec);
    } else {
      store_.add(rec);
    }
  }

  void flashback_ddl(const Event& ev, const QueryEvent& q) {
    const DdlTargets t = ddl_targets(q.db, q.sql);
    const std::string verb = t.verb.empty() ? std::string("DDL") : t.verb;
    const std::string at = fmt::format("{}:{}", clean(*log_name_), top_pos(ev));
    switch (t.scope) {
      case DdlTargets::Scope::none:
        add_record(fmt::format("# SKIPPED {}: {} (DDL that acts on no table; not undone)\n", at, verb));
        return;
      case DdlTargets::Scope::unknown:
        note_unsafe(ev, fmt::format("{} (DDL whose tables binlogctl cannot tell: it may act on a table whose rows the "
                                    "range changes)", verb), false);
        return;
      case DdlTargets::Scope::database:
      case DdlTargets::Scope::tables:
        break;
    }
    // The note, completed at the end: "\0" at "\0" verb "\0", then per target "d" db "\0" or
    // "t" db "\0" table "\0" (names hold no NUL: the parser refuses them).
    std::string rec(1, '\0');
    rec.append(at).push_back('\0');
    rec.append(verb).push_back('\0');
    if (t.scope == DdlTargets::Scope::database) {
      rec.push_back('d');
      rec.append(t.database).push_back('\0');
      note_first(ddl_dbs_, fold(t.database), *log_name_, top_pos(ev), verb,
                 "every table of database " + clean(t.database));
    } else {
      for (const auto& [db, table] : t.tables) {
        rec.push_back('t');
        rec.append(db).push_back('\0');
        rec.append(table).push_back('\0');
        note_first(ddl_tables_, fold(db + '\n' + table), *log_name_, top_pos(ev), verb,
                   clean(db) + '.' + clean(table));
      }
    }
    add_record(std::move(rec));
  }

  // The DDL notes' targets against the tables whose rows the range changes: an error each (or a
  // warning with --flashback-skip-unsafe), at the first DDL statement on that table.
  void ddl_conflicts() {
    auto conflict = [&](const DdlSeen& d) {
      const std::string more =
          d.count > 1 ? fmt::format(" (the first of {} DDL statements on it in the range)", d.count) : std::string();
      const std::string why = fmt::format("{} on {}, whose rows the range changes{}", d.verb, d.shown, more);
      if (sql_.skip_unsafe) {
        report(Diagnostic{Check::undecodable_event, Severity::warning, d.log, d.pos,
                          fmt::format("--flashback: {}: the DDL is skipped, the undo of the rows may not apply", why)});
        return;
      }
      refused_ = true;
      report(Diagnostic{Check::undecodable_event, Severity::error, d.log, d.pos,
                        fmt::format("--flashback: {}: cannot be undone", why)});
    };
    std::vector<const DdlSeen*> found;
    for (const auto& [key, d] : ddl_tables_)
      if (changed_folded_.count(key) != 0) found.push_back(&d);
    for (const auto& [db, d] : ddl_dbs_)
      if (changed_dbs_.count(db) != 0) found.push_back(&d);
    std::sort(found.begin(), found.end(), [](const DdlSeen* a, const DdlSeen* b) { return a->seq < b->seq; });
    for (const DdlSeen* d : found) conflict(*d);
  }

  // The comment of a DDL note (see flashback_ddl), now that every changed table is known.
  void expand_ddl_note(std::string_view note, std::string& dst) const {
    auto field = [&note]() {
      const std::size_t e = note.find('\0');
      std::string_view f = note.substr(0, e);
      note = e == std::string_view::npos ? std::string_view() : note.substr(e + 1);
      return f;
    };
    const std::string_view at = field(), verb = field();
    std::string shown;
    bool changed = false;
    while (!note.empty()) {
      const char kind = note[0];
      note.remove_prefix(1);
      const std::string_view db = field();
      if (!shown.empty()) shown.append(", ");
      if (kind == 'd') {
        shown.append("every table of database ").append(clean(db));
        changed = changed || changed_dbs_.count(fold(db)) != 0;
        continue;
      }
      const std::string_view table = field();
      shown.append(clean(db)).append(".").append(clean(table));
      changed = changed || changed_folded_.count(fold(std::string(db) + '\n' + std::string(table))) != 0;
    }
    dst.append(fmt::format("# SKIPPED {}: {} on {}", at, verb, shown));
    dst.append(changed ? ", whose rows the range changes (not undone; --flashback-skip-unsafe)\n"
                       : " (DDL on tables whose rows the range does not change; not undone)\n");
  }

  void comment_line(const std::string& line) {
    if (sql_.flashback) return;  // flashback output holds undo statements and SKIPPED notes only
    emit(line);
    emit("\n");
  }

  // "# log:pos GTID g YYYY-MM-DD HH:MM:SS" before every statement.
  void position_comment(std::string& s, const Event& ev) {
    const TransactionState& ts = stream().state();
    s.append("# ");
    s.append(clean(*log_name_));
    s.push_back(':');
    s.append(std::to_string(top_pos(ev)));
    if (ev.is_inner()) s.append(fmt::format(" inner {}", ev.inner_index));
    if (!ts.gtid_text.empty()) {
      s.append(" GTID ");
      s.append(ts.gtid_text);
    }
    s.push_back(' ');
    append_utc_datetime(s, ev.header.timestamp);
    s.append(" UTC\n");
  }

  // SET statements for the session variables that `want` gives (nullptr: leave as is).
  void session(std::string& s, const std::array<const std::string*, kVarCount>& want) {
    std::string sets;
    for (std::size_t i = 0; i < kVarCount; ++i) {
      if (want[i] == nullptr || (have_set_[i] && have_[i] == *want[i])) continue;
      have_[i] = *want[i];
      have_set_[i] = true;
      sets.append(sets.empty() ? "SET " : ", ");
      if (i == kTimestamp) sets.append("TIMESTAMP");
      else sets.append("@@session.").append(kVarNames[i]);
      sets.push_back('=');
      sets.append(*want[i]);
    }
    if (!sets.empty()) {
      s.append(sets);
      s.append(";\n");
    }
  }

  // What row statements need: UTC for TIMESTAMP literals, utf8mb4 for identifiers, a sql_mode
  // that stores the values as given (NO_AUTO_VALUE_ON_ZERO keeps an explicit 0 in an
  // AUTO_INCREMENT column; no STRICT, so zero dates are accepted as the source had them), the
  // event's time for ON UPDATE CURRENT_TIMESTAMP columns, and the checks the event was run with.
  void row_session(std::string& s, const Event& ev, std::uint16_t rows_flags) {
    static const std::string utc = "'+00:00'", mode = "'NO_AUTO_VALUE_ON_ZERO'", utf8mb4 = "45", zero = "0",
                             one = "1";
    const std::string ts = std::to_string(ev.header.timestamp);
    std::array<const std::string*, kVarCount> want{};
    want[kTimestamp] = &ts;
    want[kSqlMode] = &mode;
    want[kTimeZone] = &utc;
    want[kCharsetClient] = &utf8mb4;
    want[kCollationConnection] = &utf8mb4;
    want[kForeignKeyChecks] = (rows_flags & kRowsNoForeignKeyChecks) ? &zero : &one;
    want[kUniqueChecks] = (rows_flags & kRowsRelaxedUniqueChecks) ? &zero : &one;
    session(s, want);
  }

  void query_session(std::string& s, const Event& ev, const QueryEvent& q) {
    std::string ts = std::to_string(ev.header.timestamp);
    if (q.microseconds != 0) ts += fmt::format(".{:06}", q.microseconds);
    const std::string thread = std::to_string(q.thread_id);
    const std::string mode = std::to_string(q.sql_mode);
    const std::string tz = q.time_zone.empty() ? "'SYSTEM'" : quote_plain(q.time_zone);
    const std::string cc = std::to_string(q.charset_client), cn = std::to_string(q.collation_connection),
                      cs = std::to_string(q.collation_server);
    const std::string fk = (q.flags2 & kOptNoForeignKeyChecks) ? "0" : "1";
    const std::string uc = (q.flags2 & kOptRelaxedUniqueChecks) ? "0" : "1";
    const std::string ai = (q.flags2 & kOptAutoIsNull) ? "1" : "0";
    const std::string ac = (q.flags2 & kOptNotAutocommit) ? "0" : "1";
    std::array<const std::string*, kVarCount> want{};
    want[kPseudoThreadId] = &thread;
    want[kTimestamp] = &ts;
    if (q.has_sql_mode) want[kSqlMode] = &mode;
    want[kTimeZone] = &tz;
    if (q.has_charset) {
      want[kCharsetClient] = &cc;
      want[kCollationConnection] = &cn;
      want[kCollationServer] = &cs;
    }
    if (q.has_flags2) {
      want[kForeignKeyChecks] = &fk;
      want[kUniqueChecks] = &uc;
      want[kAutoIsNull] = &ai;
      want[kAutocommit] = &ac;
    }
    session(s, want);
  }

  static std::string quote_plain(std::string_view v) {
    std::string r = "'";
    for (char c : v) {
      if (c == '\'') r.push_back('\'');
      if (c == '\\') r.push_back('\\');
      r.push_back(c);
    }
    r.push_back('\'');
    return r;
  }

  // The BEGIN of the current transaction, once something of it is written.
  void open_txn(const Event& ev) {
    if (open_) return;
    const TransactionState& ts = stream().state();
    open_ = true;
    txn_incomplete_ = false;
    ++txn_seq_;
    open_xa_ = !ts.xid.empty();  // ends with XA PREPARE, its outcome later
    open_txn_ = ts.txn_id;
    // (flashback: txn_records_ is empty here, every end of a transaction empties it)
    if (sql_.flashback) return;
    std::string s;
    if (sql_.comments != SqlComments::none) {
      s.append(fmt::format("# transaction {}", ts.txn_id));
      if (!ts.gtid_text.empty()) s.append(" GTID ").append(ts.gtid_text);
      s.append(" at ").append(clean(*log_name_)).append(":").append(std::to_string(top_pos(ev)));
      s.push_back('\n');
    }
    // In a query (--sql-queries transaction): nothing is open here unless the client went on
    // (--force) after a query that failed within its transaction; that one is rolled back whole
    // rather than committed in part by this BEGIN (and its open transaction would make MariaDB
    // refuse this transaction's gtid_seq_no, and so every query after it).
    if (query_mode_) s.append("ROLLBACK;\n");
    gtid_set(s);
    if (open_xa_) {  // MariaDB: XA START is in the GTID event (MySQL logs it as a statement)
      s.append("XA START ").append(ts.xid).append(";\n");
    } else {
      s.append("BEGIN;\n");
    }
    emit(s);
  }

  // The GTID of the current transaction, as the server that wrote it replays it, once per
  // transaction before the first statement of it (and before its BEGIN: MariaDB refuses to change
  // gtid_seq_no inside a transaction). MariaDB: the GTID event's domain, server_id and sequence
  // number, as mariadb-binlog writes them (in /*M! */, which MySQL skips); the session's own
  // domain and server_id are saved before the first and set back at the end (finish_run). MySQL:
  // GTID_NEXT, 'ANONYMOUS' for anonymous transactions, 'AUTOMATIC' again at the end.
  void gtid_set(std::string& s) {
    if (sql_.flashback || !sql_.gtids) return;
    const TransactionState& ts = stream().state();
    if (ts.txn_id == gtid_txn_) return;
    gtid_txn_ = ts.txn_id;
    if (ts.has_gtid && !ts.mysql_gtid) {
      if (!maria_saved_) {
        s.append("/*M!100001 SET @binlogctl_server_id=@@session.server_id, "
                 "@binlogctl_gtid_domain_id=@@session.gtid_domain_id*/;\n");
        maria_saved_ = true;
      }
      s.append("/*M!100001 SET ");
      if (!maria_have_ || maria_domain_ != ts.mariadb_gtid.domain)
        s.append(fmt::format("@@session.gtid_domain_id={}, ", ts.mariadb_gtid.domain));
      if (!maria_have_ || maria_server_ != ts.mariadb_gtid.server_id)
        s.append(fmt::format("@@session.server_id={}, ", ts.mariadb_gtid.server_id));
      s.append(fmt::format("@@session.gtid_seq_no={}*/;\n", ts.mariadb_gtid.seq));
      maria_have_ = true;
      maria_domain_ = ts.mariadb_gtid.domain;
      maria_server_ = ts.mariadb_gtid.server_id;
    } else if (ts.has_gtid) {
      s.append("SET @@SESSION.GTID_NEXT='").append(ts.gtid_text).append("';\n");
      mysql_next_ = true;
    } else if (ts.anonymous) {
      s.append("SET @@SESSION.GTID_NEXT='ANONYMOUS';\n");
      mysql_next_ = true;
    }
  }

  // The end of the output: the session as it was before the GTIDs.
  void gtid_end() {
    if (mysql_next_) put("SET @@SESSION.GTID_NEXT='AUTOMATIC';\n");
    if (maria_saved_)
      put("/*M!100001 SET @@session.server_id=@binlogctl_server_id, "
          "@@session.gtid_domain_id=@binlogctl_gtid_domain_id*/;\n");
  }

  // Ends the transaction written so far with `closing` (COMMIT, ROLLBACK, XA PREPARE): what it
  // becomes depends on how its rows rendered, so it is decided by the writing side.
  void finish(std::string_view closing) {
    if (!open_) return;
    open_ = false;
    const bool incomplete = txn_incomplete_;
    txn_incomplete_ = false;
    const std::uint64_t seq = txn_seq_++;
    if (!pool_) {
      finish_txn(closing, incomplete, seq, open_txn_, stream().state().xid);
      return;
    }
    SqlBatch& b = pool_->current();
    SqlJob j;
    j.kind = SqlJob::Kind::finish;
    j.text = b.add(closing);
    j.xid = b.add(stream().state().xid);
    j.incomplete = incomplete;
    j.seq = seq;
    j.pos = open_txn_;
    b.jobs.push_back(std::move(j));
  }

  // (the writing side) The end of transaction `txn`: `incomplete` when an event of it was damaged
  // or did not decode; `seq` its txn_seq_, which failed_seq_ has when one of its rows did not.
  void finish_txn(std::string_view closing, bool incomplete, std::uint64_t seq, std::uint64_t txn,
                  std::string_view xid) {
    if (!sql_.flashback) {
      if ((incomplete || failed_seq_ == seq) && closing == "COMMIT;\n") {
        // Part of it is missing (damaged or undecodable): applying the rest would be a change the
        // server never made.
        if (out_query_) query_join(9);
        put(out_query_ ? "ROLLBACK;; # incomplete: an event of this transaction is damaged or does not decode\n"
                       : "ROLLBACK; # incomplete: an event of this transaction is damaged or does not decode\n");
        query_bytes_ = 0;
        return;
      }
      if (out_query_ && (closing == "COMMIT;\n" || closing == "ROLLBACK;\n")) {
        query_join(closing.size());
        put(closing.substr(0, closing.size() - 2));  // COMMIT;; / ROLLBACK;;: the end of the query
        put(kQueryEnd);
        query_bytes_ = 0;
        return;
      }
      put(closing);
      return;
    }
    const bool prepare = closing.find("XA PREPARE") != std::string_view::npos;
    if (prepare || closing.rfind("ROLLBACK", 0) == 0) {
      // Rolled back: nothing to undo. Prepared XA: held until its XA COMMIT / XA ROLLBACK.
      if (txn_spilled_) {  // part of it is in the store already
        note_unsafe_at_end(prepare ? "an XA transaction too large to hold until its outcome"
                                   : "a rolled back transaction too large to take back");
        flush_txn_records(true, txn);
        return;
      }
      if (prepare) {
        if (prepared_bytes_ + txn_bytes_ > sql_.spill_bytes) {
          note_unsafe_at_end("XA transactions prepared in the range hold more than --flashback-memory");
        } else {
          prepared_bytes_ += txn_bytes_;
          Prepared& p = prepared_[std::string(xid)];
          p.txn = txn;
          p.bytes = txn_bytes_;
          p.records = txn_records_;
        }
      }
      txn_records_.clear();
      txn_bytes_ = 0;
      return;
    }
    flush_txn_records(true, txn);
  }

  // Flashback: the transaction's undo records go to the store as COMMIT, the rows in order, BEGIN
  // (read back reversed). Large transactions were flushed piecewise already.
  void flush_txn_records(bool complete, std::uint64_t txn) {
    if (txn_records_.empty() && !txn_spilled_) return;
    if (!txn_spilled_) store_.add("COMMIT;\n");
    store_.add(txn_records_);
    txn_records_.clear();
    txn_bytes_ = 0;
    if (complete) {
      store_.add(fmt::format("# undo of transaction {}\nBEGIN;\n", txn));
      txn_spilled_ = false;
    }
  }

  void note_unsafe_at_end(std::string_view why) {
    if (sql_.skip_unsafe) {
      fmt::print(err_, "binlogctl: warning: --flashback: {}: skipped\n", why);
      return;
    }
    refused_ = true;
    fmt::print(err_, "binlogctl: error: --flashback: {}: cannot be undone\n", why);
    diag_errors_ = true;
  }

  void close_open(std::string_view why) {
    if (!open_) return;
    open_ = false;
    sync();
    out_.flush();
    fmt::print(err_, "binlogctl: warning: transaction {} is incomplete ({}): {}\n", open_txn_, why,
               sql_.flashback ? "not undone" : "rolled back in the output");
    if (!sql_.flashback) {
      leave_query_mode_now();
      put("ROLLBACK; # incomplete transaction\n");
      return;
    }
    if (txn_spilled_) {
      // Part of it is in the spill file already: cannot be taken back out.
      note_unsafe_at_end("an incomplete transaction too large to hold back");
      flush_txn_records(true, open_txn_);
      return;
    }
    txn_records_.clear();  // only ever held here: nothing of it reached the store
  }

  // Flashback: the kPrefix record of the current rows event's rows, after them (see Records).
  void end_rows_prefix(std::size_t rows, std::string_view head, std::string_view session) {
    if (rows == 0) return;
    std::size_t mark = 0;
    std::string& b = txn_records_.begin(mark);
    b.push_back(Records::kPrefix);
    b.append(head);
    b.append(session);
    txn_records_.end(mark);
  }

  void statement(const Event& ev, const QueryEvent& q, StatementKind k) {
    std::string pending;  // the context events before this statement are for it alone
    pending.swap(pending_);
    switch (k) {
      case StatementKind::begin:
      case StatementKind::commit:
      case StatementKind::rollback:
        return;  // transaction structure: written by open_txn / finish
      case StatementKind::xa_end:
        return;  // written with XA PREPARE
      case StatementKind::savepoint:
        if (sql_.flashback) return;  // nothing to undo
        break;
      default:
        break;
    }
    if (!stream().front().selected()) return;
    // -d/--database: statements whose default database it is (mysqlbinlog's meaning)
    if (!stream().database().selects(rewritten_db(sql_, q.db)) && k != StatementKind::xa_finish &&
        k != StatementKind::xa_start)
      return;
    std::string db(q.db), table;
    const bool is_ddl = k == StatementKind::ddl;
    if (is_ddl) {
      if (!ddl_table(q.sql, db, table)) table.clear();
      if (!opts_.filter.empty() && !opts_.filter.matches(db, table)) return;
    } else if (!opts_.filter.empty() && k == StatementKind::other) {
      return;  // statements name no table we can check reliably
    }
    if (sql_.flashback) {
      if (is_ddl) {
        flashback_ddl(ev, q);
      } else if (k == StatementKind::xa_finish) {
        const bool rollback = xa_statement_is_rollback(q.sql);
        sync();
        auto it = prepared_.find(std::string(xa_statement_xid(q.sql)));
        if (it != prepared_.end()) {  // prepared in the range: undone where it committed
          if (!rollback) {
            store_.add("COMMIT;\n");
            store_.add(it->second.records);
            store_.add(fmt::format("# undo of XA transaction {} ({})\nBEGIN;\n", it->second.txn, it->first));
          }
          prepared_bytes_ -= it->second.bytes;
          prepared_.erase(it);
          return;
        }
        if (rollback) return;  // nothing happened
        note_unsafe(ev, "XA COMMIT of a transaction prepared before the range", false);
      } else if (k == StatementKind::xa_start) {
        return;
      } else {
        note_unsafe(ev, "a statement-logged change (binlog_format=STATEMENT/MIXED)", false);
      }
      return;
    }
    set_query_mode(false);
    std::string s;
    if (sql_.comments != SqlComments::none) position_comment(s, ev);
    query_session(s, ev, q);
    if (!(ev.header.flags & kSuppressUse) && !q.db.empty() && cur_db_ != q.db) {
      s.append("USE ");
      append_quoted_identifier(s, rewritten_db(sql_, q.db));
      s.append(";\n");
      cur_db_ = std::string(q.db);
    }
    const bool in_txn = stream().state().begun && !is_ddl && k != StatementKind::xa_finish;
    // (in a transaction: open_txn writes it before BEGIN; MySQL's XA START is logged as a statement)
    if (k == StatementKind::xa_finish && xa_prepared_here_ && stream().state().has_gtid &&
        !stream().state().mysql_gtid && sql_.gtids) {
      // MariaDB refuses to set gtid_seq_no in a session that holds a prepared XA transaction:
      // the XA COMMIT / ROLLBACK of one prepared earlier in this output gets the target's GTID.
      s.append("# GTID ").append(stream().state().gtid_text).append(
          " not kept: MariaDB sets no GTID in a session holding a prepared XA transaction\n");
      gtid_txn_ = stream().state().txn_id;
    }
    if (k == StatementKind::xa_finish) xa_prepared_here_ = false;
    if (!in_txn || k == StatementKind::xa_start) gtid_set(s);
    if (k == StatementKind::xa_start) {
      emit(s);
      if (!open_) {
        open_ = true;
        open_xa_ = true;
        open_txn_ = stream().state().txn_id;
      }
      std::string x;
      append_statement(x, q.sql);
      emit(x);
      return;
    }
    if (in_txn) open_txn(ev);
    s.append(pending);
    if (q.sql.size() >= kStreamStatementAt) return emit_huge_statement(s, q.sql);
    append_statement(s, q.sql);
    emit(s);
  }

  // A huge statement (a 1 GiB QUERY): `s`, what goes before it, handed on; then, once everything
  // before it is written, the statement written straight out a block at a time, never copied
  // whole. The text is what append_statement gives.
  static constexpr std::size_t kStreamStatementAt = 1u << 20;
  void emit_huge_statement(std::string& s, std::string_view sql) {
    const std::string_view d = statement_delimiter(sql);
    if (!d.empty()) s.append("DELIMITER ").append(d).append("\n");
    emit(s);
    sync();
    for (std::size_t at = 0; at < sql.size(); at += kOutBlock) put(sql.substr(at, kOutBlock));
    if (d.empty()) {
      put(";\n");
    } else {
      put(d);
      put("\nDELIMITER ;\n");
    }
    out_.flush();
  }

  // The delimiter a statement goes between DELIMITER lines with ("" when it holds no ';').
  static std::string_view statement_delimiter(std::string_view sql) {
    if (sql.find(';') == std::string_view::npos) return {};
    static constexpr std::string_view kDelimiters[] = {"/*!*/;", "$$", "//", "@@;;@@"};
    std::string_view d = kDelimiters[0];
    for (std::string_view c : kDelimiters) {
      d = c;
      if (sql.find(c) == std::string_view::npos) break;
    }
    return d;
  }

  // A logged statement and its terminator. A statement with a ';' of its own (CREATE TRIGGER /
  // PROCEDURE / FUNCTION / EVENT with a BEGIN ... END body) would be cut there by the client:
  // it goes between DELIMITER lines, as mysqlbinlog writes it, with a delimiter it does not hold.
  static void append_statement(std::string& s, std::string_view sql) {
    const std::string_view d = statement_delimiter(sql);
    if (d.empty()) {
      s.append(sql);
      s.append(";\n");
      return;
    }
    s.append("DELIMITER ").append(d).append("\n");
    s.append(sql);
    s.append(d).append("\nDELIMITER ;\n");
  }

  // All `width` columns present in the bitmap.
  static bool full_image(Bytes present, std::uint64_t width, const TableMap& tm) {
    return width == tm.columns.size() && count_bits(present, width) == width;
  }

  // A rows event without its TABLE_MAP: after a start inside its transaction, said in the SQL too.
  void missing_table_map(const Event& ev, const RowsEventHeader& h) override {
    if (stream().mid_stream() && stream().front().selected()) {
      // The start fell inside a transaction, after its TABLE_MAP: these rows cannot be written,
      // and SQL that lacks them is no complete replay of the range: said in the SQL, exit 1.
      comment_line(fmt::format("# SKIPPED {}:{}: {} for table id {}: the start falls inside its transaction, "
                               "after the TABLE_MAP (start at the transaction's GTID or BEGIN event to include it)",
                               clean(*log_name_), top_pos(ev), event_name(ev), h.table_id));
      report(Diagnostic{Check::transaction_structure, Severity::error, *log_name_, top_pos(ev),
                        fmt::format("{} for table id {}: the start falls inside its transaction, after the "
                                    "TABLE_MAP; its rows are not written (start at the transaction's GTID or "
                                    "BEGIN event to include them)",
                                    event_name(ev), h.table_id)});
      if (sql_.flashback && !sql_.skip_unsafe) refused_ = true;
      return;
    }
    RowSink::missing_table_map(ev, h);
  }

  void rows(const RowsView& rv) override {
    const Event& ev = *rv.ev;
    const RowsEventHeader* h = rv.header;
    const TableMap* tm = rv.map;
    const RowsEventKind kind = rv.kind;
    const std::string table_key = tm->db + '\n' + tm->table;
    if (!tm->has_names()) {
      if (refused_tables_.insert(table_key).second)
        report(Diagnostic{Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
                          fmt::format("table {}.{} has no column names (binlog_row_metadata is not FULL and no "
                                      "definition was given with --schema): its row changes are not written as SQL",
                                      tm->db, tm->table)});
      if (sql_.flashback && !sql_.skip_unsafe) refused_ = true;
      if (!sql_.flashback)
        comment_line(fmt::format("# SKIPPED {}:{}: rows of {}.{} (no column names)", clean(*log_name_), top_pos(ev),
                                 clean(tm->db), clean(tm->table)));
      return;
    }
    if (changed_tables_.insert(table_key).second && sql_.flashback) {
      changed_folded_.insert(fold(table_key));
      changed_dbs_.insert(fold(tm->db));
    }
    const bool update = kind.kind == RowsKind::update;
    if (sql_.flashback) {
      const bool full = full_image(h->columns_before, h->width, *tm) &&
                        (!update || full_image(h->columns_after, h->width, *tm)) && !kind.partial_json;
      if (!full) {
        note_unsafe(ev, fmt::format("row images of {}.{} are not FULL (binlog_row_image)", tm->db, tm->table), false);
        return;
      }
    }
    const Bytes data = rv.rows;
    const std::uint64_t at = rv.rows_offset;
    const bool xa = open_ ? open_xa_ : !stream().state().xid.empty();
    if (queries()) set_query_mode(!xa);  // (an XA transaction's statements go one by one)
    open_txn(ev);
    load_generated(*tm);
    // What every row of the event shares: the comment line, the session settings (written before
    // the first row only), the quoted column names.
    head_.clear();  // (flashback: the undo statements' comment)
    if (sql_.flashback || sql_.comments == SqlComments::row) position_comment(head_, ev);
    session_.clear();
    if (!sql_.flashback) row_session(session_, ev, h->flags);  // flashback: one header (finish_run)
    else if (update)  // ON UPDATE CURRENT_TIMESTAMP columns the undo does not set: the original time
      session_.append(fmt::format("SET TIMESTAMP={};\n", ev.header.timestamp));
    RowsJobView v;
    v.map = stream().tables().find_shared(h->table_id);
    v.rows = data;
    v.rows_offset = at;
    v.present_before = h->columns_before;
    v.present_after = h->columns_after;
    v.width = h->width;
    v.kind = kind.kind;
    v.partial_json = kind.partial_json;
    v.head = head_;
    v.session = session_;
    v.generated = generated_;
    if (pool_ && data.size() <= opts_.render_inline_bytes) {
      SqlBatch& b = pool_->current();
      SqlJob j;
      j.kind = SqlJob::Kind::rows;
      j.text = b.add(v.head);
      j.session = b.add(v.session);
      j.rows = b.add(v.rows);
      j.present_before = b.add(v.present_before);
      j.present_after = b.add(v.present_after);
      j.generated = b.add(v.generated);
      j.log_name = b.add(*log_name_);
      j.rows_offset = v.rows_offset;
      j.width = v.width;
      j.pos = top_pos(ev);
      j.seq = txn_seq_;
      j.event_name = event_name(ev);
      j.rows_kind = v.kind;
      j.partial_json = v.partial_json;
      j.query = query_mode_;
      if (query_mode_) b.query_bound = sql_.batch_bytes;
      j.map = std::move(v.map);
      b.jobs.push_back(std::move(j));
      return;
    }
    // Without rendering threads, or a large event (rendered here, streaming, rather than copied).
    sync();
    if (query_mode_) v.query_bound = sql_.batch_bytes;
    RowsOutcome o;
    if (sql_.flashback) {
      struct Sink {  // each row to the transaction's records as it is rendered
        SqlConverter& c;
        const RowsJobView& v;
        RenderBuf b;
        std::size_t rows = 0;
        RenderBuf& buf() { return b; }
        void row_done() {
          c.add_undo_row(b.view().substr(4), v.head, v.session);
          ++rows;
          b.clear();
        }
      } sink{*this, v, {}, 0};
      o = renderer_.render(v, sink);
      end_rows_prefix(sink.rows, v.head, v.session);
    } else {
      struct Sink {  // whole statements to the output in blocks
        SqlConverter& c;
        RenderBuf& b;
        // In a query: held until it is known whether the query before takes the first part (at
        // most --sql-batch-bytes, or one statement larger than that).
        bool hold;
        RenderBuf& buf() { return b; }
        void row_done() {
          if (hold && c.renderer_.query_closed()) {
            c.query_join(c.renderer_.query_first());
            hold = false;
          }
          if (!hold && b.size() >= kOutBlock) write();
        }
        void write() {
          c.put(b.view());
          b.clear();
        }
      } sink{*this, stream_buf_, query_mode_};
      o = renderer_.render(v, sink);
      if (sink.hold) query_join(o.query_first);
      sink.write();
      if (query_mode_) query_bytes_ = o.query_closed ? o.query_len : query_bytes_ + o.query_len;
    }
    if (o.error) rows_failed(o, *log_name_, top_pos(ev), event_name(ev), txn_seq_);
  }

  // (the writing side) One undo statement of a rows event to the transaction's records.
  void add_undo_row(std::string_view stmt, std::string_view head, std::string_view session) {
    // One kRow record per row, its statement alone (the shared lines in the kPrefix record).
    std::size_t mark = 0;
    std::string& dst = txn_records_.begin(mark);
    dst.push_back(Records::kRow);
    dst.append(stmt);
    txn_records_.end(mark);
    // What the statement is as text, as the spill threshold counts it.
    txn_bytes_ += head.size() + session.size() + stmt.size();
    if (txn_bytes_ >= sql_.spill_bytes) {  // a large transaction: to the store in pieces
      flush_txn_records(false, 0);
      txn_spilled_ = true;
    }
  }

  // (the writing side) A rows event whose rendering stopped at an error.
  void rows_failed(const RowsOutcome& o, std::string_view log_name, std::uint64_t pos, std::string_view event,
                   std::uint64_t seq) {
    failed_seq_ = seq;  // the transaction is incomplete
    report_now(Diagnostic{Check::undecodable_event, Severity::error, std::string(log_name), o.error->offset,
                          fmt::format("{} event at {} does not decode: {}", event, pos, o.error->what)});
    note_unsafe_at(log_name, pos, o.render_error ? "a row that cannot be rendered" : "a rows event that does not decode",
                   false, true);
  }

 public:
  // (the writing side) A batch, rendered, in order.
  void write_batch(SqlBatch& b) {
    for (const SqlJob& j : b.jobs) {
      switch (j.kind) {
        case SqlJob::Kind::text:
          put_text(b.view(j.text));
          break;
        case SqlJob::Kind::query_mode:
          write_query_mode(j.query);
          break;
        case SqlJob::Kind::finish:
          finish_txn(b.view(j.text), j.incomplete, j.seq, j.pos, b.view(j.xid));
          break;
        case SqlJob::Kind::rows: {
          const std::string_view out = std::string_view(b.out.data() + j.out.at, j.out.len);
          if (!sql_.flashback) {
            if (j.query) {
              query_join(j.outcome.query_first);
              query_bytes_ = j.outcome.query_closed ? j.outcome.query_len : query_bytes_ + j.outcome.query_len;
            }
            put(out);
          } else {
            const std::string_view head = b.view(j.text), session = b.view(j.session);
            std::size_t rows = 0;
            for (std::size_t at = 0; at + 4 <= out.size(); ++rows) {
              std::uint32_t n = 0;
              std::memcpy(&n, out.data() + at, 4);
              add_undo_row(out.substr(at + 4, n), head, session);
              at += 4 + std::size_t{n};
            }
            end_rows_prefix(rows, head, session);
          }
          if (j.outcome.error) rows_failed(j.outcome, b.view(j.log_name), j.pos, j.event_name, j.seq);
          break;
        }
      }
    }
  }

 private:
  // Columns a statement must not set: generated ones (VIRTUAL/STORED, known from schema history).
  void load_generated(const TableMap& tm) {
    generated_.assign(tm.columns.size(), '\0');
    const SchemaTable* def = stream().schema().find(tm.db, tm.table);
    if (def == nullptr || def->columns.size() != tm.columns.size()) return;
    for (std::size_t i = 0; i < def->columns.size(); ++i) generated_[i] = def->columns[i].generated ? '\1' : '\0';
  }


  const ConvertOptions& opts_;
  const SqlOptions& sql_;
  LineOutput& out_;
  StderrDiagnostics& diag_;
  std::FILE* err_;
  const std::string* log_name_ = nullptr;  // the stream's file's name
  InfoScratch scratch_;
  std::string generated_;  // per column of the table being written (1: generated)
  std::string head_, session_;  // the current rows event's shared parts
  std::string pending_;  // INTVAR / RAND / USER_VAR context of the next statement
  std::string cur_db_;
  std::array<std::string, kVarCount> have_{};
  std::array<bool, kVarCount> have_set_{};
  bool open_ = false, open_xa_ = false;
  // GTIDs written (gtid_set): the transaction whose GTID was written last; MariaDB: the session's
  // domain and server_id saved, the last ones set; MySQL: GTID_NEXT set.
  std::uint64_t gtid_txn_ = 0;
  bool maria_saved_ = false, maria_have_ = false, mysql_next_ = false;
  bool xa_prepared_here_ = false;  // an XA PREPARE written, its XA COMMIT / ROLLBACK not yet
  std::uint32_t maria_domain_ = 0, maria_server_ = 0;
  bool txn_incomplete_ = false;  // an event of the open transaction is damaged or does not decode
  // Counts the transactions opened and ended; failed_seq_ (the writing side's) is the count of the
  // last one a rows event of which did not render: it is incomplete too.
  std::uint64_t txn_seq_ = 1, failed_seq_ = 0;
  std::uint64_t open_txn_ = 0;
  std::unordered_set<std::string> refused_tables_, changed_tables_;
  // flashback: the changed tables (db '\n' table) and their databases, ASCII case folded (names
  // in DDL are as typed; servers with lower_case_table_names log them so), and the DDL seen
  std::unordered_set<std::string> changed_folded_, changed_dbs_;
  std::map<std::string, DdlSeen> ddl_tables_, ddl_dbs_;
  std::uint64_t ddl_seq_ = 0;
  // flashback
  ReverseStore store_;
  Records txn_records_;
  std::size_t txn_bytes_ = 0;
  bool txn_spilled_ = false;
  std::atomic<bool> refused_{false};  // set by both sides
  struct Prepared {  // an XA transaction prepared in the range: its undo records, until its outcome
    std::uint64_t txn = 0;
    std::size_t bytes = 0;
    Records records;
  };
  std::map<std::string, Prepared> prepared_;
  std::size_t prepared_bytes_ = 0;
  bool diag_errors_ = false;
  SqlRowRenderer renderer_;        // this thread's
  RenderBuf stream_buf_;             // rows rendered here, forward
  SqlRender render_{*this, sql_};
  std::unique_ptr<convert_detail::BatchPool<SqlRender>> pool_;  // null: everything on this thread

 public:
  bool extra_errors() const { return diag_errors_; }
};

void SqlRender::render(SqlBatch& b, SqlRowRenderer& w) const {
  w.configure(sql);
  struct Sink {
    RenderBuf& b;
    RenderBuf& buf() { return b; }
    void row_done() {}
  } sink{b.out};
  for (SqlJob& j : b.jobs) {
    if (j.kind != SqlJob::Kind::rows) continue;
    const std::size_t at = b.out.size();
    j.outcome = w.render(b.rows_view(j), sink);
    j.out = {at, b.out.size() - at};
  }
}

void SqlRender::write(SqlBatch& b) const { conv.write_batch(b); }

}  // namespace

int run_sql_convert(const ConvertOptions& opts, const SqlOptions& sql, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  LineOutput out(outf);
  SqlConverter conv(opts, sql, out, diag, errf);
  RowStream::Options so = RowStream::options_of(opts);
  so.database = opts.database;
  so.err = errf;
  RowStream stream(std::move(so), conv);
  conv.begin_run();
  ChainOptions co = chain_options(opts);
  co.threads = 1;
  // The reader's findings go out after the statements and findings prepared before them (the
  // pool reports a batch's findings when it writes the batch).
  convert_detail::DrainFirst<SqlConverter> ordered(conv, diag);
  const bool readable = read_chain(co, stream, ordered, errf);
  int rc = 0;
  try {
    stream.finish();
    rc = conv.finish_run();
  } catch (const std::system_error& e) {
    fmt::print(errf, "binlogctl: error: {}\n", e.what());
    return 2;
  }
  if (!readable) return 2;
  warn_unmatched_filter_rules(opts.filter, errf);
  warn_unmatched_database(opts.database, stream.database().matched(), errf);
  return (rc != 0 || diag.errors() > 0 || conv.extra_errors()) ? 1 : 0;
}

}  // namespace binlogctl
