// run_convert: inputs -> EventStream -> transactions -> one JSON line per row change / statement.
#include <binlogctl/chain.h>
#include <binlogctl/convert.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/selection.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/source.h>

#include "convert/convert_internal.h"
#include "events/events.h"
#include "render/json_out.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "txn/row_stream.h"

#include "render_pool.h"

#include <fmt/format.h>

#include <filesystem>
#include <iterator>
#include <system_error>
#include <unordered_set>

namespace binlogctl {

// ---- the converter -----------------------------------------------------------------------------

namespace {

using convert_detail::Batch;
using convert_detail::Job;
using convert_detail::RenderPool;
using RenderRows = convert_detail::RowsView;

// The JSON sink of the row-change stream: RowStream finds the transactions, statements and row
// changes; the converter renders them (on the render pool's threads) in stream order.
class Converter final : public RowSink {
 public:
  Converter(const ConvertOptions& opts, LineOutput& out, StderrDiagnostics& diag, std::FILE* err)
      : opts_(opts),
        out_(out),
        diag_(diag),
        err_(err),
        interactive_(out.interactive()),
        pool_(interactive_ ? 0u : opts.render_threads, opts.render_batch_bytes, out, diag, opts.render) {}

  // Writes out everything prepared so far (at the end, and before anything goes to stderr).
  void sync() { pool_.sync(); }

  // RowSink
  void begin_file(const InputFile& f) override { log_name_ = &f.log_name; }

  void hole(const Event& ev, std::uint64_t bytes) override {
    const std::uint64_t at = ev.is_inner() ? ev.pos - bytes : top_pos(ev) - bytes;
    damage_record(ev, at, ev.skip_check,
                  fmt::format("{} bytes could not be read as events; reading resumed at the next event", bytes), bytes);
  }
  void damaged(const Event& ev) override {
    damage_record(ev, top_pos(ev), *ev.damage, "the event failed its checksum: none of its contents are passed on",
                  ev.header.event_size);
  }

  void event(const Event& ev, const TransactionFront::Step& step) override {
    if (step.is_statement && !step.statement_ok) return;
    const TransactionState& ts = stream().state();
    if (ts.txn_id != ts_txn_) {
      ts_txn_ = ts.txn_id;
      ts_text_.clear();
      append_utc_datetime(ts_text_, ts.timestamp);
      annotate_.clear();
      has_annotate_ = has_thread_ = false;
    }
    if ((ev.type() == EventType::mariadb_annotate_rows || ev.type() == EventType::rows_query) &&
        opts_.with_statement) {
      auto a = ev.type() == EventType::rows_query ? decode_rows_query(ev.body_reader(), *ev.fde)
                                                  : decode_annotate_rows(ev.body_reader(), *ev.fde);
      has_annotate_ = static_cast<bool>(a);
      if (a) annotate_.assign(a->text);
    }
  }

  void statement(const Event& ev, const TransactionFront::Step& step) override {
    thread_id_ = step.query.thread_id;
    has_thread_ = true;
    statement(ev, step.query, step.kind);
  }

  void after_event(const Event&, const TransactionFront::Step&) override {
    if (interactive_) pool_.sync();  // every line as soon as it is complete
    else pool_.maybe_submit();
  }

  void undecodable(const Event& ev, std::string_view what, const DecodeError& e) override {
    report(convert_detail::undecodable_rows(*log_name_, top_pos(ev), inner_index(ev), what, e));
  }
  // What this thread reports goes out after every record prepared before it.
  void report(const Diagnostic& d) override {
    pool_.sync();
    diag_.report(d);
  }
  void before_stderr() override { pool_.sync(); }

  // The end of a file left a transaction without its COMMIT: say so on stderr and, in order, in
  // the stream: {"type":"CUT_OFF","log_name","pos","txn_id","gtid","message"} (binlogctl(1),
  // CUT-OFF TRANSACTIONS; mysqlbinlog ends such output with a ROLLBACK).
  void end_file(const TransactionFront::CutOff* c, bool) override {
    if (c == nullptr) return;
    const std::string message = c->message();
    std::string& b = open_literal();
    b.append("{\"type\":\"CUT_OFF\",\"log_name\":");
    append_json_quoted(b, *log_name_);
    b.append(",\"pos\":");
    append_u64(b, c->end_pos);
    b.append(",\"txn_id\":");
    append_u64(b, c->txn_id);
    b.append(",\"gtid\":");
    if (c->gtid.empty()) b.append("null");
    else append_json_quoted(b, c->gtid);
    b.append(",\"message\":");
    append_json_quoted(b, message);
    b.append("}\n");
    close_literal();
    report(c->diagnostic(stream().file()));
  }

 private:
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }
  // An inner event of a TRANSACTION_PAYLOAD: its place, ,"payload_pos":N,"inner_index":N (the
  // keys every record of one ends with; nothing for a top-level event).
  static void append_inner_place(std::string& b, const Event& ev) {
    if (!ev.is_inner()) return;
    b.append(",\"payload_pos\":");
    append_u64(b, ev.payload_pos);
    b.append(",\"inner_index\":");
    append_u64(b, static_cast<std::uint64_t>(ev.inner_index));
  }

  static std::int64_t inner_index(const Event& ev) {
    return ev.is_inner() ? static_cast<std::int64_t>(ev.inner_index) : -1;
  }

  // {"type":"DAMAGE","log_name","pos","txn_id","check","message","skipped_bytes"}: where data is
  // missing, in stream order, so that a consumer of the records can tell (binlogctl-convert(1)).
  // Inner events of a TRANSACTION_PAYLOAD add payload_pos and inner_index as other records do.
  void damage_record(const Event& ev, std::uint64_t pos, Check check, std::string_view message,
                     std::uint64_t skipped) {
    std::string& b = open_literal();
    b.append("{\"type\":\"DAMAGE\",\"log_name\":");
    append_json_quoted(b, *log_name_);
    b.append(",\"pos\":");
    append_u64(b, ev.is_inner() ? ev.payload_pos : pos);
    b.append(",\"txn_id\":");
    append_u64(b, stream().state().txn_id);
    b.append(",\"check\":\"");
    b.append(check_name(check));
    b.append("\",\"message\":");
    append_json_quoted(b, message);
    b.append(",\"skipped_bytes\":");
    append_u64(b, skipped);
    append_inner_place(b, ev);
    b.append("}\n");
    close_literal();
  }

  void begin_record(std::string& b, const Event& ev) {
    b.append("{\"log_name\":");
    append_json_quoted(b, *log_name_);
    b.append(",\"pos\":");
    append_u64(b, top_pos(ev));
    b.append(",\"txn_id\":");
    append_u64(b, stream().state().txn_id);
    b.append(",\"gtid\":");
    if (stream().state().gtid_text.empty()) b.append("null");
    else append_json_quoted(b, stream().state().gtid_text);
    b.append(",\"timestamp\":\"");
    b.append(ts_text_);
    b.append("\",\"database\":");
  }

  // The keys after the record's own ones, and its closing brace.
  void end_record(std::string& b, const Event& ev, bool rows = false) {
    if (opts_.with_statement) {
      if (rows && has_annotate_) {
        b.append(",\"statement\":");
        append_text_json(b, annotate_, 0);
      }
      if (has_thread_) {
        b.append(",\"thread_id\":");
        append_u64(b, thread_id_);
      }
    }
    if (!stream().state().xid.empty()) {
      b.append(",\"xid\":");
      append_json_quoted(b, stream().state().xid);
    }
    append_inner_place(b, ev);
    b.push_back('}');
  }

  // Text written here, between open_literal() and close_literal(), is a literal job of the
  // current batch (whole lines, passed on as they are in stream order).
  std::string& open_literal() {
    std::string& arena = pool_.current().arena;
    literal_at_ = arena.size();
    return arena;
  }
  void close_literal() {
    Batch& batch = pool_.current();
    Job j;
    j.literal = true;
    j.text = {literal_at_, batch.arena.size() - literal_at_};
    batch.jobs.push_back(std::move(j));
  }
  // A record of the common keys rendered here, as a literal job.
  std::string& begin_literal(const Event& ev) {
    std::string& b = open_literal();
    begin_record(b, ev);
    return b;
  }
  void end_literal() {
    pool_.current().arena.push_back('\n');
    close_literal();
  }

  void statement(const Event& ev, const QueryEvent& q, StatementKind k) {
    if (k == StatementKind::xa_finish) {
      // The outcome of a prepared XA transaction (or the end of a one-phase one).
      if (!stream().front().selected()) return;
      const std::string_view xid = xa_statement_xid(q.sql);
      std::string& b = begin_literal(ev);
      append_text_json(b, q.db, 0);
      b.append(xa_statement_is_rollback(q.sql) ? ",\"type\":\"XA_ROLLBACK\",\"xid\":"
                                                : ",\"type\":\"XA_COMMIT\",\"xid\":");
      append_text_json(b, xid, 0);
      if (xa_statement_one_phase(q.sql)) b.append(",\"one_phase\":true");
      b.append(",\"sql\":");
      append_text_json(b, q.sql, 0);
      // the xid key is in the record already
      append_inner_place(b, ev);
      b.push_back('}');
      end_literal();
      return;
    }
    if (k != StatementKind::ddl && k != StatementKind::other) return;  // transaction structure
    if (!stream().front().selected()) return;
    if (!stream().database().selects(q.db)) return;
    if (!opts_.filter.empty()) {
      std::string db(q.db), table;
      if (k == StatementKind::other) return;  // statements name no table we can check reliably
      if (!ddl_table(q.sql, db, table)) table.clear();
      if (!opts_.filter.matches(db, table)) return;
    }
    if (q.sql.size() >= kStreamStatementAt) return streamed_statement(ev, q, k);
    std::string& b = begin_literal(ev);
    append_text_json(b, q.db, 0);
    b.append(",\"type\":\"");
    b.append(k == StatementKind::ddl ? "DDL" : "QUERY");
    b.append("\",\"sql\":");
    append_text_json(b, q.sql, 0);
    end_record(b, ev);
    end_literal();
  }

  // A huge statement (a 1 GiB QUERY): written here, after every batch before it, escaped and
  // written piece by piece rather than copied whole into a batch, so that memory stays bounded
  // by a piece. The record is the one statement() makes.
  void streamed_statement(const Event& ev, const QueryEvent& q, StatementKind k) {
    pool_.sync();
    std::string& b = stream_text_;
    b.clear();
    begin_record(b, ev);
    append_text_json(b, q.db, 0);
    b.append(k == StatementKind::ddl ? ",\"type\":\"DDL\",\"sql\":\"" : ",\"type\":\"QUERY\",\"sql\":\"");
    for (std::string_view sql = q.sql; !sql.empty();) {
      const std::size_t n = utf8_piece(sql, kStreamBlock);
      append_json_escaped(b, sql.substr(0, n));  // append_text_json's body for collation 0 (UTF-8)
      sql.remove_prefix(n);
      if (b.size() >= kStreamBlock) {
        out_.write(b);
        b.clear();
      }
    }
    b.push_back('"');
    end_record(b, ev);
    b.push_back('\n');
    out_.write(b);
    b.clear();
    out_.flush();
  }

  void rows(const RowsView& v) override {
    const Event& ev = *v.ev;
    const RowsEventHeader* h = v.header;
    const TableMap* tm = v.map;
    const RowsEventKind kind = v.kind;
    // Per-event parts of every record.
    suffix_.clear();
    suffix_.append(",\"primary_key\":[");
    for (std::size_t k = 0; k < tm->primary_key.size(); ++k) {
      if (k > 0) suffix_.push_back(',');
      append_json_string(suffix_, tm->columns[tm->primary_key[k]].name);
    }
    suffix_.push_back(']');
    if (const RowsExtraInfo* x = v.extra) {
      if (x->has_partition) {
        suffix_.append(",\"partition_id\":");
        append_u64(suffix_, x->partition_id);
        if (x->has_source_partition) {
          suffix_.append(",\"source_partition_id\":");
          append_u64(suffix_, x->source_partition_id);
        }
      }
      if (x->has_ndb) {
        suffix_.append(",\"ndb_info\":{\"format\":");
        append_u64(suffix_, x->ndb_format);
        suffix_.append(",\"data\":");
        append_binary_json(suffix_, x->ndb_data, opts_.render.binary_as);
        suffix_.push_back('}');
      }
    }

    const Bytes rows = v.rows;
    const std::uint64_t rows_at = v.rows_offset;
    // The parts every record of this event shares.
    prefix_.clear();
    begin_record(prefix_, ev);
    append_json_string(prefix_, tm->db);
    prefix_.append(",\"table\":");
    append_json_string(prefix_, tm->table);
    prefix_.append(",\"type\":\"");
    prefix_.append(rows_kind_name(kind.kind));
    prefix_.append("\",\"before\":");
    if (kind.kind == RowsKind::insert) prefix_.append("null,\"after\":");
    tail_.clear();
    end_record(tail_, ev, true);
    if ((h->flags & 0x1) != 0) has_annotate_ = false;  // STMT_END_F: the statement's last rows event
    if (!kind.partial_json) {  // nothing goes between them: one append per record
      suffix_.append(tail_);
      tail_.clear();
    }

    RenderRows r;
    r.map = tm;
    r.text = prefix_;
    r.suffix = suffix_;
    r.tail = tail_;
    r.rows = rows;
    r.present_before = h->columns_before;
    r.present_after = h->columns_after;
    r.rows_offset = rows_at;
    r.width = h->width;
    r.kind = kind.kind;
    r.partial_json = kind.partial_json;
    if (rows.size() > opts_.render_inline_bytes) {
      // A large event: rendered here, streaming, rather than copied into a batch.
      pool_.sync();
      struct Sink {  // whole lines to the output in blocks (at once for a terminal)
        LineOutput& out;
        RenderBuf& b;
        RenderBuf& buf() { return b; }
        void end_line() {
          b.push_back('\n');
          if (out.interactive() || b.size() >= kStreamBlock) write();
        }
        void write() {
          out.write(b.view());
          b.clear();
        }
      } sink{out_, stream_buf_};
      auto e = convert_detail::render_rows(r, sink, images_, opts_.render);
      sink.write();
      out_.flush();
      if (e) undecodable(ev, event_name(ev), *e);
      return;
    }
    pool_.current().add_rows(r, stream().tables().find_shared(h->table_id), *log_name_, top_pos(ev), inner_index(ev),
                             event_name(ev));
  }

  static std::string_view event_name(const Event& ev) { return event_type_constant(ev.type_code()); }

  const ConvertOptions& opts_;
  LineOutput& out_;
  StderrDiagnostics& diag_;
  std::FILE* err_;
  bool interactive_;
  RenderPool pool_;
  std::string prefix_, tail_;
  std::size_t literal_at_ = 0;
  const std::string* log_name_ = nullptr;  // the stream's file's name
  RowImageDecoder images_;
  std::uint64_t ts_txn_ = ~0ull;  // the transaction ts_text_ is the commit time of
  std::string ts_text_;
  // --with-statement: the ANNOTATE_ROWS / ROWS_QUERY text of the current statement, the thread id
  // of the transaction's QUERY events
  std::string annotate_;
  bool has_annotate_ = false, has_thread_ = false;
  std::uint32_t thread_id_ = 0;
  std::string suffix_;
  static constexpr std::size_t kStreamBlock = 256 * 1024;
  RenderBuf stream_buf_;  // large rows events, rendered here
  static constexpr std::size_t kStreamStatementAt = 1u << 20;  // statements this large: streamed
  std::string stream_text_;  // a huge statement's record, a block at a time
};

}  // namespace

ChainOptions chain_options(const ConvertOptions& opts) {
  ChainOptions co = chain_options_of(opts);
  co.pass_fde_before_start = true;  // row decoding needs the format description in force
  co.threads = opts.read_threads;
  return co;
}

int run_convert(const ConvertOptions& opts, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  LineOutput out(outf);
  Converter conv(opts, out, diag, errf);
  RowStream::Options so = RowStream::options_of(opts);
  so.database = opts.database;
  so.decode_extra = true;  // partition_id, ndb_info
  so.err = errf;
  RowStream stream(std::move(so), conv);
  // The reader's findings go out after the records and findings prepared before them (the pool
  // reports a batch's findings when it writes the batch).
  convert_detail::DrainFirst<Converter> ordered(conv, diag);
  const bool readable = read_chain(chain_options(opts), stream, ordered, errf);
  stream.finish();
  conv.sync();
  out.flush();
  if (!readable) return 2;
  warn_unmatched_filter_rules(opts.filter, errf);
  warn_unmatched_database(opts.database, stream.database().matched(), errf);
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
