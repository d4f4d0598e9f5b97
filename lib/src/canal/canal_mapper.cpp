// run_canal_convert: inputs -> EventStream -> transactions -> Canal Entry messages (canal.h).
//
// The mapper is the driving part: a sink of the row-change stream that makes the entries' headers
// and the statements' and transactions' entries, and hands rows events to the rendering threads.
// The rest lives beside it: statement typing (canal_statements.cpp), column plans (column_plan.h),
// canal-proto's row encoding (proto_rows.h), canal-json's FlatMessage (flat_rows.h), the rows
// worker and batches (canal_rows.h), and entries, batches and packets out (entry_sink.h); values
// and the wire format in canal_internal.h.
#include <binlogctl/canal.h>
#include "convert/convert_internal.h"
#include <binlogctl/chain.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/selection.h>
#include <binlogctl/event_stream.h>
#include "events/events.h"
#include <binlogctl/inputs.h>
#include "render/json_out.h"
#include <binlogctl/progress.h>
#include "rows/rows.h"
#include <binlogctl/source.h>
#include "txn/row_stream.h"
#include "rows/table_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "CanalProtocol.pb.h"
#include "EntryProtocol.pb.h"
#include "canal/canal_internal.h"
#include "canal/canal_rows.h"
#include "canal/entry_sink.h"
#include "canal/flat_rows.h"
#include "convert/batch_pool.h"

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl {

// MariaDB's GTID_LIST: Canal's MariaGtidListLogEvent keeps a java.util.HashMap from domain to
// GTID (a later entry of a domain replaces the earlier one) and prints it comma-joined in the
// map's iteration order: by bucket, (h ^ h >>> 16) & (capacity - 1) with h the domain id, the
// capacity 16 doubled while the map is more than 3/4 full; insertion order within a bucket.
std::string canal_detail::gtid_list_text(const MariaGtidList& list) {
  std::vector<MariaGtid> by_domain;
  for (const MariaGtid& g : list.entries()) {
    auto it = std::find_if(by_domain.begin(), by_domain.end(),
                           [&](const MariaGtid& x) { return x.domain == g.domain; });
    if (it != by_domain.end()) *it = g;
    else by_domain.push_back(g);
  }
  std::size_t cap = 16;
  while (by_domain.size() > cap / 4 * 3) cap *= 2;
  const auto bucket = [cap](const MariaGtid& g) { return (g.domain ^ (g.domain >> 16)) & (cap - 1); };
  std::stable_sort(by_domain.begin(), by_domain.end(),
                   [&](const MariaGtid& a, const MariaGtid& b) { return bucket(a) < bucket(b); });
  std::string s;
  for (const MariaGtid& g : by_domain) {
    if (!s.empty()) s.push_back(',');
    s += g.to_string();
  }
  return s;
}

namespace {

using canal_detail::append_dec;
using canal_detail::append_flat_json_string;
using canal_detail::CanalBatch;
using canal_detail::CanalJob;
using canal_detail::CanalRender;
using canal_detail::CanalRowsWorker;
using canal_detail::EntrySink;
using canal_detail::FlatEntry;
using canal_detail::make_plan;
using canal_detail::OutBuf;
using canal_detail::TablePlan;
using canal_detail::Utf8Logs;

// ---- the mapper --------------------------------------------------------------------------------

// The Canal sink of the row-change stream: RowStream finds the transactions, statements and row
// changes; the mapper makes Canal entries of them (protobuf or flat JSON).
class CanalMapper final : public RowSink {
 public:
  CanalMapper(const ConvertOptions& opts, const CanalOptions& co, EntrySink& sink,
              StderrDiagnostics& diag, std::FILE* err)
      : opts_(opts),
        json_(co.format == CanalFormat::json),
        sink_(sink),
        diag_(diag),
        err_(err),
        tz_(co.timezone),
        pool_(opts.render_threads, co.render_batch_bytes, render_) {
  }

  // Writes out everything prepared so far: at the end, and before this thread writes to stderr.
  // Rethrows a write error of the pool.
  void sync() { pool_.sync(); }
  // What this thread reports goes out after every entry and diagnostic prepared before it.
  void report(const Diagnostic& d) override {
    pool_.sync();
    diag_.report(d);
  }

  // RowSink
  void before_stderr() override { pool_.sync(); }

  // The end of a file left a transaction without its COMMIT: no TRANSACTIONEND entry follows
  // its entries; said on stderr (binlogctl(1), CUT-OFF TRANSACTIONS).
  void end_file(const TransactionFront::CutOff* c, bool) override {
    if (c) report(c->diagnostic(stream().file()));
  }

  void begin_file(const InputFile& f) override {
    log_name_ = &f.log_name;
    head_.clear();
    was_begun_ = false;
    plans_.clear();
    cur_sn_.clear();
    cur_lct_.clear();
  }

  void tables_cleared() override { plans_.clear(); }

  void statement(const Event& ev, const TransactionFront::Step& step) override { statement(ev, step.query, step.kind); }

  void after_event(const Event&, const TransactionFront::Step&) override {
    was_begun_ = stream().state().open && stream().state().begun;
    pool_.maybe_submit();
  }

  // The events with entries of their own besides statements and rows.
  void event(const Event& ev, const TransactionFront::Step&) override {
    const bool was_begun = was_begun_;
    const TransactionState& ts = stream().state();
    switch (ev.type()) {
      case EventType::previous_gtids: {
        ByteReader r = ev.body_reader();
        if (auto s = decode_previous_gtids(r)) {
          executed_ = std::move(*s);
          executed_dirty_ = true;
        }
        break;
      }
      case EventType::gtid:
      case EventType::gtid_tagged_log:
        mysql_gtid(ev);
        break;
      case EventType::mariadb_gtid_list:
        if (!ev.is_inner()) gtid_list_entry(ev);
        break;
      case EventType::mariadb_gtid:
        cur_sn_.clear();
        cur_lct_.clear();
        if (stream().front().selected() && ts.has_gtid) gtid_entry(ev);
        // MariaDB writes no BEGIN after a GTID that opens a transaction: the GTID is the BEGIN.
        if (stream().front().selected() && ts.open && ts.begun && !was_begun) begin_entry(ev, 0, ts.xid);
        break;
      case EventType::xid:
        if (stream().front().selected()) {
          auto x = decode_xid(ev.body_reader(), *ev.fde);
          if (!x) {
            undecodable(ev, "XID", x.error());
          } else {
            xid_text_.clear();
            append_u64(xid_text_, x->xid);
            end_entry(ev, xid_text_);
          }
        }
        break;
      default:
        break;
    }
  }

 private:

  static Bytes as_bytes(std::string_view s) {
    return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }

  void undecodable(const Event& ev, std::string_view what, const DecodeError& e) override {
    report(Diagnostic{
        Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
        fmt::format("{} event does not decode: {} at offset {}", what, e.what, e.offset)});
  }

  // Header.gtid: the executed GTID set (MySQL) or the transaction's GTID; empty without one.
  const std::string& header_gtid() {
    const TransactionState& ts = stream().state();
    if (!ts.has_gtid) return empty_;
    if (!ts.mysql_gtid || executed_.empty()) return ts.gtid_text;
    if (executed_dirty_) {
      executed_text_ = executed_.to_string();
      executed_dirty_ = false;
    }
    return executed_text_;
  }

  // LogEventConvert.createHeader, encoded into header_bytes_ (Header, field order of the
  // generated code; version and sourceType are oneof members, written whatever their value).
  // UTF-8 logs go to `logs` when given (else to stderr at once). Without a rowsCount property:
  // a rows event's goes where the offset returned says (before the gtid), once its rows are
  // counted (CanalRowsWorker).
  std::size_t header(const Event& ev, std::string_view schema, std::string_view table, int event_type,
                     Utf8Logs* logs = nullptr) {
    using W = canal_detail::WireWriter;
    const TransactionState& ts = stream().state();
    const std::string& gtid = header_gtid();
    OutBuf& o = header_bytes_;
    o.clear();
    W w{o.room(8 * W::varint_bound() + W::bytes_bound(log_name_->size()) + W::bytes_bound(5) +
               W::bytes_bound(schema.size()) + W::bytes_bound(table.size()) + W::bytes_bound(gtid.size()) +
               W::pair_bound(8, ts.gtid_text.size()) + W::pair_bound(10, cur_sn_.size()) +
               W::pair_bound(11, cur_lct_.size())),
        logs};
    if (head_.empty()) {  // the file's first header
      head_.push_back(0x08);  // version = 1
      head_.push_back(0x01);
      if (canal_detail::is_ascii(*log_name_) || canal_detail::proto_utf8_valid(*log_name_))
        canal_detail::append_string_field(head_, 2, *log_name_, "");
      else
        head_.clear();  // logged at every header, as serializing does: not kept
    }
    if (!head_.empty()) {
      w.p = canal_detail::put_bytes(w.p, head_);
    } else {
      w.varint(1, 1);
      w.string(2, *log_name_, "com.alibaba.otter.canal.protocol.Header.logfileName");
    }
    if (const std::uint64_t pos = top_pos(ev); pos != 0) w.varint(3, pos);
    if (ev.header.server_id != 0) w.varint(4, ev.header.server_id);
    w.bytes(5, "UTF-8");
    const std::int64_t when = static_cast<std::int64_t>(ev.header.timestamp) * 1000;
    if (when != 0) w.varint(6, static_cast<std::uint64_t>(when));
    w.varint(7, canalpb::MYSQL);
    w.string(8, schema, "com.alibaba.otter.canal.protocol.Header.schemaName");
    w.string(9, table, "com.alibaba.otter.canal.protocol.Header.tableName");
    if (ev.header.event_size != 0) w.varint(10, ev.header.event_size);
    if (event_type != 0) w.varint(11, canal_detail::int32_wire(event_type));
    if (ts.has_gtid) {
      w.pair(12, "curtGtid", ts.gtid_text);
      if (!cur_sn_.empty()) w.pair(12, "curtGtidSn", cur_sn_);
      if (!cur_lct_.empty()) w.pair(12, "curtGtidLct", cur_lct_);
    }
    const std::size_t split = static_cast<std::size_t>(w.p - o.data());
    w.string(13, gtid, "com.alibaba.otter.canal.protocol.Header.gtid");
    o.set_end(w.p);
    return split;
  }

  // One Entry made whole here: canal-proto writes it (storeValue = `store`), canal-json a
  // FlatMessage for a ROWDATA entry (`flat`). It goes into the batch, in input order with the
  // rows events; `direct` (the pool drained first): written at once.
  void emit(canalpb::EntryType type, const Event& ev, std::string_view schema,
            std::string_view table, int event_type, std::string_view store, const FlatEntry* flat,
            bool direct = false) {
    if (direct) {
      const std::uint64_t batch = sink_.next_batch();
      if (!json_) {
        header(ev, schema, table, event_type);
        sink_.entry(batch, header_bytes_.view(), type, store);
      } else if (flat != nullptr) {
        scratch_.clear();
        const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), *flat);
        OutBuf& out = sink_.text();
        out.append(scratch_.view().substr(0, id_at));
        append_dec(out, batch);
        out.append(scratch_.view().substr(id_at));
        sink_.done();
      }
      return;
    }
    CanalBatch& b = pool_.current();
    CanalJob& j = b.jobs.emplace_back();
    j.entry_type = type;
    if (!json_) {
      j.logs_at = b.logs.size();
      header(ev, schema, table, event_type, &b.logs);
      j.logs_end = b.logs.size();
      j.a = b.add(header_bytes_.view());
      j.b = b.add(store);
    } else if (flat != nullptr) {
      scratch_.clear();
      const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), *flat);
      j.has_text = true;
      j.a = b.add(scratch_.view().substr(0, id_at));
      j.b = b.add(scratch_.view().substr(id_at));
    }
  }
  // A statement's entry, whose storeValue protobuf serializes: it logs on stderr when `sql` or
  // `db` (the message's strings) are not valid UTF-8, so the pool is drained first then.
  void emit(canalpb::EntryType type, const Event& ev, std::string_view schema,
            std::string_view table, int event_type, const google::protobuf::MessageLite& store,
            const FlatEntry* flat, std::string_view sql, std::string_view db) {
    bool direct = false;
    if (!json_) {
      direct = !canal_detail::is_ascii(sql) && !canal_detail::proto_utf8_valid(sql);
      direct = direct || (!canal_detail::is_ascii(db) && !canal_detail::proto_utf8_valid(db));
      if (direct) pool_.sync();
      store.SerializeToString(&store_);
    }
    emit(type, ev, schema, table, event_type, json_ ? std::string_view() : std::string_view(store_), flat,
         direct);
  }
  static std::int64_t es(const Event& ev) { return static_cast<std::int64_t>(ev.header.timestamp) * 1000; }

  // XA START / XA END: props XA_TYPE and XA_XID, as Canal adds them.
  // TransactionBegin{props (3), threadId (4)}; canal-json writes nothing for it.
  void begin_entry(const Event& ev, std::uint32_t thread_id, std::string_view xa_xid = {}) {
    store_.clear();
    if (!json_) {
      if (!xa_xid.empty()) {
        canal_detail::append_pair_field(store_, 3, "XA_TYPE", "XA START");
        canal_detail::append_pair_field(store_, 3, "XA_XID", xa_xid);
      }
      if (thread_id != 0) canal_detail::append_varint_field(store_, 4, thread_id);
    }
    emit(canalpb::TRANSACTIONBEGIN, ev, "", "", 0, store_, nullptr);
  }
  // TransactionEnd{transactionId (2), props (3)}.
  void end_entry(const Event& ev, std::string_view xid, std::string_view xa_xid = {}) {
    store_.clear();
    if (!json_) {
      canal_detail::append_string_field(
          store_, 2, xid, "com.alibaba.otter.canal.protocol.TransactionEnd.transactionId");
      if (!xa_xid.empty()) {
        canal_detail::append_pair_field(store_, 3, "XA_TYPE", "XA END");
        canal_detail::append_pair_field(store_, 3, "XA_XID", xa_xid);
      }
    }
    emit(canalpb::TRANSACTIONEND, ev, "", "", 0, store_, nullptr);
  }
  // Canal's parseGTIDLogEvent / parseMariaGTIDLogEvent: one Pair, header eventType GTID. Canal
  // fills a single Pair.Builder with setKey/setValue three times for a MySQL GTID with a logical
  // clock, so what it sends is {sequenceNumber, n}; {gtid, the GTID} otherwise.
  void gtid_entry(const Event& ev, std::string_view key, std::string_view value) {
    store_.clear();
    if (!json_) {
      canal_detail::append_string_field(store_, 1, key, "com.alibaba.otter.canal.protocol.Pair.key");
      canal_detail::append_string_field(store_, 2, value, "com.alibaba.otter.canal.protocol.Pair.value");
    }
    emit(canalpb::GTIDLOG, ev, "", "", canalpb::GTID, store_, nullptr);
  }
  void gtid_entry(const Event& ev) { gtid_entry(ev, "gtid", stream().state().gtid_text); }

  void gtid_list_entry(const Event& ev) {
    ByteReader r = ev.body_reader();
    auto l = decode_gtid_list(r);
    if (!l) {
      undecodable(ev, "GTID_LIST", l.error());
      return;
    }
    gtid_entry(ev, "gtid", canal_detail::gtid_list_text(*l));
  }

  void mysql_gtid(const Event& ev) {
    cur_sn_.clear();
    cur_lct_.clear();
    ByteReader r = ev.body_reader();
    auto g = ev.type() == EventType::gtid ? decode_gtid_log(r) : decode_gtid_tagged_log(r);
    if (!g) return;  // reported through the tracker
    if (g->has_logical_clock) {
      cur_sn_ = std::to_string(g->sequence_number);
      cur_lct_ = std::to_string(g->last_committed);
    }
    if (g->gno != 0) {
      (void)executed_.add(g->uuid, g->tag, g->gno);
      executed_dirty_ = true;
    }
    if (stream().front().selected() && stream().state().has_gtid) {
      if (g->has_logical_clock) gtid_entry(ev, "sequenceNumber", cur_sn_);
      else gtid_entry(ev);
    }
  }

  void table_map(const Event& ev, const TableMapLoader::Loaded& l) override {
    if (!l.fresh) return;
    const TableMap& stored = *l.map;
    // mysqlType: Canal spells it from its DDL-built table meta, whatever the TABLE_MAP carries:
    // the declared type from schema history when it has a fitting definition; else rebuilt from
    // the TABLE_MAP, with display widths as MariaDB and MySQL before 8.0.19 print them.
    const std::uint32_t ver = parse_server_version(ev.fde->server_version);
    const bool widths = ev.fde->server_version.find("MariaDB") != std::string::npos || ver < 80019;
    plans_[stored.table_id] = std::make_shared<const TablePlan>(make_plan(stored, widths, l.def));
  }

  void statement(const Event& ev, const QueryEvent& q, StatementKind k) {
    switch (k) {
      case StatementKind::begin:
        if (stream().front().selected()) begin_entry(ev, q.thread_id);
        return;
      case StatementKind::xa_start:
        if (stream().front().selected()) begin_entry(ev, q.thread_id, xa_statement_xid(q.sql));
        return;
      case StatementKind::xa_end:
        if (stream().front().selected()) end_entry(ev, "0", xa_statement_xid(q.sql));
        return;
      case StatementKind::commit:
        if (stream().front().selected()) end_entry(ev, "0");
        return;
      case StatementKind::xa_finish:
        if (stream().front().selected()) {
          const int et = xa_statement_is_rollback(q.sql) ? canalpb::XAROLLBACK : canalpb::XACOMMIT;
          if (q.sql.size() >= kStreamStatementAt) return streamed_statement(ev, q.db, "", et, false, q.sql, {});
          canalpb::RowChange rc;
          rc.set_eventtype(static_cast<canalpb::EventType>(et));
          rc.set_isddl(false);
          rc.set_sql(std::string(q.sql));
          const FlatEntry f{false, q.sql, et, nullptr, nullptr};
          emit(canalpb::ROWDATA, ev, q.db, "", et, rc, &f, q.sql, std::string_view());
        }
        return;
      case StatementKind::ddl:
      case StatementKind::other:
        break;
      default:
        return;
    }
    if (!stream().front().selected()) return;
    if (!stream().database().selects(q.db)) return;
    std::string db(q.db), table;
    if (!ddl_table(q.sql, db, table)) table.clear();
    if (!opts_.filter.empty()) {
      if (k == StatementKind::other) return;
      if (!opts_.filter.matches(db, table)) return;
    }
    const int et = canal_statement_event_type(q.sql);
    const bool is_ddl = et != canalpb::INSERT && et != canalpb::UPDATE && et != canalpb::DELETE;
    if (q.sql.size() >= kStreamStatementAt) return streamed_statement(ev, db, table, et, is_ddl, q.sql, q.db);
    canalpb::RowChange rc;
    rc.set_isddl(is_ddl);
    rc.set_sql(std::string(q.sql));
    if (!q.db.empty()) rc.set_ddlschemaname(std::string(q.db));
    rc.set_eventtype(static_cast<canalpb::EventType>(et));
    const FlatEntry f{is_ddl, q.sql, et, nullptr, nullptr};
    emit(canalpb::ROWDATA, ev, db, table, et, rc, &f, q.sql, q.db);
  }

  // A huge statement (a 1 GiB QUERY): its entry written at once, after everything before it, the
  // statement escaped (canal-json) or copied (canal-proto) a piece at a time, never serialized
  // whole. The bytes are those emit() writes for it.
  static constexpr std::size_t kStreamStatementAt = 1u << 20;
  static constexpr std::size_t kStatementPiece = 256u << 10;
  void streamed_statement(const Event& ev, std::string_view schema, std::string_view table, int et, bool is_ddl,
                          std::string_view sql, std::string_view ddl_schema) {
    pool_.sync();
    if (json_) {
      const std::uint64_t batch = sink_.next_batch();
      const FlatEntry f{is_ddl, std::string_view(), et, nullptr, nullptr};
      scratch_.clear();
      std::size_t sql_at = 0;
      const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), f, false, &sql_at);
      const std::string_view m = scratch_.view();
      OutBuf& out = sink_.text();
      out.append(m.substr(0, id_at));
      append_dec(out, batch);
      out.append(m.substr(id_at, sql_at - id_at));
      // Pieces end before a UTF-8 lead or ASCII byte: each maximal ill-formed sequence (one
      // U+FFFD) lies within a piece, so the pieces escape to what the whole escapes to.
      for (std::string_view s = sql; !s.empty();) {
        const std::size_t k = utf8_piece(s, kStatementPiece);
        piece_.clear();
        append_flat_json_string(piece_, s.substr(0, k));
        out.append(piece_.view().substr(1, piece_.size() - 2));  // without its quotes
        s.remove_prefix(k);
        sink_.maybe_write_out();
      }
      out.append(m.substr(sql_at));
      sink_.done();
      return;
    }
    // RowChange{eventType (2), isDdl (10), sql (11), ddlSchemaName (14)}: the fields around sql
    // serialized by the generated code (UTF-8 logs in field order, as serializing prints them),
    // sql's tag and length between them, its bytes written from where they are.
    canalpb::RowChange before, after;
    before.set_eventtype(static_cast<canalpb::EventType>(et));
    before.set_isddl(is_ddl);
    before.SerializeToString(&store_);
    canal_detail::check_utf8(sql, "com.alibaba.otter.canal.protocol.RowChange.sql");
    canal_detail::append_varint(store_, (11u << 3) | 2);
    canal_detail::append_varint(store_, sql.size());
    if (!ddl_schema.empty()) after.set_ddlschemaname(std::string(ddl_schema));
    after.SerializeToString(&store_tail_);
    const std::uint64_t batch = sink_.next_batch();
    header(ev, schema, table, et);
    sink_.entry_pieces(batch, header_bytes_.view(), canalpb::ROWDATA, store_, sql, store_tail_);
  }

  void rows(const RowsView& v) override {
    const Event& ev = *v.ev;
    const RowsEventHeader* h = v.header;
    const TableMap* tm = v.map;
    const RowsEventKind kind = v.kind;
    auto pi = plans_.find(h->table_id);
    if (pi == plans_.end() ||
        pi->second->cols.size() != tm->columns.size())  // not expected: made with the map
      pi = plans_.insert_or_assign(h->table_id, std::make_shared<const TablePlan>(make_plan(*tm, true, nullptr))).first;
    const Bytes rows = v.rows;
    const std::uint64_t rows_at = v.rows_offset;
    const int et = kind.kind == RowsKind::insert   ? canalpb::INSERT
                   : kind.kind == RowsKind::update ? canalpb::UPDATE
                                                   : canalpb::DELETE;
    // A large event is not copied: rendered here, after what the pool holds is written.
    const bool big = rows.size() > opts_.render_inline_bytes;
    if (big) pool_.sync();
    CanalBatch& b = big ? big_ : pool_.current();
    CanalJob& j = b.jobs.emplace_back();
    j.rows = true;
    j.entry_type = canalpb::ROWDATA;
    j.map = stream().tables().find_shared(h->table_id);
    j.plan = pi->second;
    j.images = b.add(rows);
    j.present_before = b.add(h->columns_before);
    j.present_after = b.add(h->columns_after);
    j.log_name = b.add(*log_name_);
    j.rows_offset = rows_at;
    j.width = h->width;
    j.table_id = h->table_id;
    j.pos = top_pos(ev);
    j.event_name = event_type_constant(ev.type_code());
    j.kind = kind.kind;
    j.partial_json = kind.partial_json;
    if (!json_) {
      j.logs_at = b.logs.size();
      const std::size_t split = header(ev, tm->db, tm->table, et, &b.logs);
      j.logs_end = b.logs.size();
      j.a = b.add(header_bytes_.view().substr(0, split));
      j.b = b.add(header_bytes_.view().substr(split));
    } else {
      j.es = es(ev);
      j.schema = b.add(tm->db);
      j.table = b.add(tm->table);
      j.gtid = b.add(header_gtid());
    }
    if (big) {
      render_.render(big_, big_worker_);
      render_.write(big_);
      big_.clear();
      big_.shrink();
    }
  }

  const ConvertOptions& opts_;
  const bool json_;
  EntrySink& sink_;
  StderrDiagnostics& diag_;
  std::FILE* err_;
  TimeZone tz_;
  const std::string* log_name_ = nullptr;  // the stream's file's name
  bool was_begun_ = false;  // the transaction was begun (BEGIN, a MariaDB GTID) before this event
  std::unordered_map<std::uint64_t, std::shared_ptr<const TablePlan>> plans_;
  GtidSet executed_;
  std::string executed_text_;
  bool executed_dirty_ = true;
  const std::string empty_;
  std::string cur_sn_, cur_lct_;
  std::string xid_text_;
  std::string store_;
  OutBuf header_bytes_;
  std::string head_;  // a header's fields up to logfileName, the same for the file's entries  // an entry's storeValue and header, being made
  OutBuf scratch_;                    // a FlatMessage being made
  OutBuf piece_;                      // a piece of a huge statement, escaped
  std::string store_tail_;            // a huge statement's storeValue after its sql
  // Rows events: rendered by the pool, or here when large (big_).
  CanalRender render_{json_, tz_, sink_, diag_};
  CanalBatch big_;
  CanalRowsWorker big_worker_;
  convert_detail::BatchPool<CanalRender> pool_;  // last: its threads stop first
};

}  // namespace

int run_canal_convert(const ConvertOptions& opts, const CanalOptions& co, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  EntrySink sink(co, outf);
  CanalMapper mapper(opts, co, sink, diag, errf);
  RowStream::Options so = RowStream::options_of(opts);
  so.database = opts.database;
  so.err = errf;
  RowStream stream(std::move(so), mapper);
  // The reader's findings go out after the entries and findings prepared before them.
  convert_detail::DrainFirst<CanalMapper> ordered(mapper, diag);
  const bool readable = read_chain(chain_options(opts), stream, ordered, errf);
  stream.finish();
  mapper.sync();
  sink.flush();
  if (!readable) return 2;
  warn_unmatched_filter_rules(opts.filter, errf);
  warn_unmatched_database(opts.database, stream.database().matched(), errf);
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl

