// run_sql_convert: inputs -> EventStream -> TransactionFront -> SQL statements (convert
// --format sql), or the statements that undo them in reverse order (--flashback).
//
// A sink of the shared front half (txn_front.h): transactions, GTID selection and the damage
// policy come from there; table maps and schema history from TableMapLoader; values from the
// typed decoder (column_value.h, decode_image_cells) and the SQL literal renderer (sql.h).
//
// The converter is the driving part: transaction framing, GTIDs, comments, the order of what is
// written, and the flashback's policy. Beside it: the statement writer (row_statements.h), the
// session variables (session_vars.h), the flashback's reversed spool (reverse_store.h) and its
// DDL bookkeeping (flashback_ddl.h).
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
#include "sql/flashback_ddl.h"
#include "sql/reverse_store.h"
#include "sql/row_statements.h"
#include "sql/session_vars.h"
#include "txn/row_stream.h"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <unordered_set>
#include <vector>

namespace binlogctl {

namespace {

using sql_detail::clean;
using sql_detail::FlashbackDdl;
using sql_detail::kOutBlock;
using sql_detail::kQueryEnd;
using sql_detail::Records;
using sql_detail::ReverseStore;
using sql_detail::rewritten_db;
using sql_detail::RowsJobView;
using sql_detail::RowsOutcome;
using sql_detail::RowTextSink;
using sql_detail::SessionVars;
using sql_detail::SqlRowRenderer;

constexpr std::uint16_t kSuppressUse = 0x8;  // LOG_EVENT_SUPPRESS_USE_F

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
      store_.replay(out_, [this](std::string_view note, std::string& dst) { ddl_.expand(note, dst); });
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

  // ---- flashback and DDL (flashback_ddl.h) ----------------------------------------------------

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
    // The note, completed at the end (FlashbackDdl::expand).
    add_record(ddl_.note(t, at, *log_name_, top_pos(ev), verb));
  }

  // The DDL notes' targets against the tables whose rows the range changes: an error each (or a
  // warning with --flashback-skip-unsafe), at the first DDL statement on that table.
  void ddl_conflicts() {
    auto conflict = [&](const FlashbackDdl::Seen& d) {
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
    for (const FlashbackDdl::Seen* d : ddl_.conflicts()) conflict(*d);
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
    vars_.query(s, ev.header.timestamp, q);
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
    if (changed_tables_.insert(table_key).second && sql_.flashback) ddl_.changed(tm->db, tm->table);
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
    if (!sql_.flashback) vars_.rows(session_, ev.header.timestamp, h->flags);  // flashback: one header (finish_run)
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
      struct Sink final : RowTextSink {  // each row to the transaction's records as it is rendered
        Sink(SqlConverter& conv, const RowsJobView& view, RenderBuf& buf) : RowTextSink(buf), c(conv), v(view) {}
        SqlConverter& c;
        const RowsJobView& v;
        std::size_t rows = 0;
        void row_done() override {
          c.add_undo_row(buf().view().substr(4), v.head, v.session);
          ++rows;
          buf().clear();
        }
      };
      RenderBuf b;
      Sink sink(*this, v, b);
      o = renderer_.render(v, sink);
      end_rows_prefix(sink.rows, v.head, v.session);
    } else {
      struct Sink final : RowTextSink {  // whole statements to the output in blocks
        Sink(SqlConverter& conv, RenderBuf& buf, bool held) : RowTextSink(buf), c(conv), hold(held) {}
        SqlConverter& c;
        // In a query: held until it is known whether the query before takes the first part (at
        // most --sql-batch-bytes, or one statement larger than that).
        bool hold;
        void row_done() override {
          if (hold && c.renderer_.query_closed()) {
            c.query_join(c.renderer_.query_first());
            hold = false;
          }
          if (!hold && buf().size() >= kOutBlock) write();
        }
        void write() {
          c.put(buf().view());
          buf().clear();
        }
      };
      Sink sink(*this, stream_buf_, query_mode_);
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
    txn_records_.add_tagged(Records::kRow, stmt);
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
  SessionVars vars_;  // the session variables written so far
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
  FlashbackDdl ddl_;  // flashback: the DDL seen and the changed tables
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
  struct Sink final : RowTextSink {
    using RowTextSink::RowTextSink;
  } sink(b.out);
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
