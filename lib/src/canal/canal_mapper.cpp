// run_canal_convert: inputs -> EventStream -> transactions -> Canal Entry messages (canal.h).
#include <binlogctl/canal.h>
#include <binlogctl/chain.h>
#include <binlogctl/dump.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>
#include <binlogctl/rows.h>
#include <binlogctl/source.h>
#include <binlogctl/table_map.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <zlib.h>

#include <chrono>
#include <stdexcept>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <unordered_set>

#include "CanalProtocol.pb.h"
#include "EntryProtocol.pb.h"
#include "canal_internal.h"

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl {

using canal_detail::CanalValue;
using canal_detail::TimeZone;

// ---- statement classification ------------------------------------------------------------------

namespace {

// The leading words of a statement, upper-cased, comments and whitespace skipped.
std::vector<std::string> leading_words(std::string_view sql, std::size_t n) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < sql.size() && words.size() < n) {
    const char c = sql[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (sql.substr(i, 2) == "/*") {
      const std::size_t e = sql.find("*/", i + 2);
      i = e == std::string_view::npos ? sql.size() : e + 2;
    } else if (sql.substr(i, 2) == "--" || c == '#') {
      const std::size_t e = sql.find('\n', i);
      i = e == std::string_view::npos ? sql.size() : e + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string w;
      while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_'))
        w.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++]))));
      words.push_back(std::move(w));
    } else {
      break;
    }
  }
  return words;
}

}  // namespace

int canal_statement_event_type(std::string_view sql) noexcept {
  try {
    const auto w = leading_words(sql, 4);
    if (w.empty()) return canalpb::QUERY;
    const std::string& a = w[0];
    const std::string b = w.size() > 1 ? w[1] : std::string();
    const std::string c = w.size() > 2 ? w[2] : std::string();
    if (a == "INSERT" || a == "REPLACE") return canalpb::INSERT;
    if (a == "UPDATE") return canalpb::UPDATE;
    if (a == "DELETE") return canalpb::DELETE;
    if (a == "TRUNCATE") return canalpb::TRUNCATE;
    if (a == "RENAME" && b == "TABLE") return canalpb::RENAME;
    if (a == "CREATE") {
      if (b == "INDEX" || c == "INDEX") return canalpb::CINDEX;  // CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX
      if (b == "TABLE" || c == "TABLE") return canalpb::CREATE;  // CREATE [TEMPORARY] TABLE
      if (b == "OR" && w.size() > 3 && w[3] == "TABLE") return canalpb::CREATE;
      return canalpb::QUERY;
    }
    if (a == "ALTER" && (b == "TABLE" || c == "TABLE")) return canalpb::ALTER;
    if (a == "DROP") {
      if (b == "TABLE" || c == "TABLE") return canalpb::ERASE;
      if (b == "INDEX") return canalpb::DINDEX;
    }
    return canalpb::QUERY;
  } catch (...) {
    return canalpb::QUERY;
  }
}

namespace {

// ---- output ------------------------------------------------------------------------------------

class EntrySink {
 public:
  EntrySink(const CanalOptions& o, std::FILE* f) : o_(o), f_(f) {}
  ~EntrySink() = default;

  void write(const canalpb::Entry& e, const canalpb::RowChange* rc) {
    const std::uint64_t batch = entries_ / (o_.batch_size == 0 ? 1 : o_.batch_size) + 1;
    ++entries_;
    if (o_.format == CanalFormat::proto && o_.packets) {
      if (batch != batch_id_ && messages_.messages_size() > 0) packet();
      batch_id_ = batch;
      e.SerializeToString(messages_.add_messages());
    } else if (o_.format == CanalFormat::proto) {
      const std::size_t n = e.ByteSizeLong();
      std::size_t v = n;
      while (v >= 0x80) {
        buf_.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
      }
      buf_.push_back(static_cast<char>(v));
      const std::size_t at = buf_.size();
      buf_.resize(at + n);
      e.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(buf_.data() + at));
    } else if (rc != nullptr && e.entrytype() == canalpb::ROWDATA) {
      flat_message(e, *rc, batch);
    }
    if (buf_.size() >= (256u << 10)) flush();
  }

  void flush() {
    if (messages_.messages_size() > 0) packet();
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::system_error(errno, std::generic_category(), "write");
    buf_.clear();
    if (std::fflush(f_) != 0) throw std::system_error(errno, std::generic_category(), "write");
  }

 private:
  // MQMessageUtils.messageConverter: one FlatMessage per ROWDATA entry.
  void flat_message(const canalpb::Entry& e, const canalpb::RowChange& rc, std::uint64_t batch) {
    using nlohmann::ordered_json;
    const canalpb::Header& h = e.header();
    ordered_json m = ordered_json::object();
    ordered_json data = nullptr, old = nullptr, pk = nullptr, sql_type = nullptr, mysql_type = nullptr;
    if (!rc.isddl()) {
      sql_type = ordered_json::object();
      mysql_type = ordered_json::object();
      ordered_json rows = ordered_json::array(), olds = ordered_json::array(), pks = ordered_json::array();
      for (int r = 0; r < rc.rowdatas_size(); ++r) {
        const canalpb::RowData& rd = rc.rowdatas(r);
        const auto& cols = rc.eventtype() == canalpb::DELETE ? rd.beforecolumns() : rd.aftercolumns();
        ordered_json row = ordered_json::object();
        std::unordered_set<std::string> updated;
        for (const canalpb::Column& c : cols) {
          if (r == 0 && c.iskey()) pks.push_back(c.name());
          sql_type[c.name()] = c.sqltype();
          mysql_type[c.name()] = c.mysqltype();
          if (c.isnull()) row[c.name()] = nullptr;
          else row[c.name()] = c.value();
          if (c.updated()) updated.insert(c.name());
        }
        if (!row.empty()) rows.push_back(std::move(row));
        if (rc.eventtype() == canalpb::UPDATE) {
          ordered_json o = ordered_json::object();
          for (const canalpb::Column& c : rd.beforecolumns()) {
            if (updated.count(c.name()) == 0) continue;
            if (c.isnull()) o[c.name()] = nullptr;
            else o[c.name()] = c.value();
          }
          if (!o.empty()) olds.push_back(std::move(o));
        }
      }
      if (!rows.empty()) data = std::move(rows);
      if (!olds.empty()) old = std::move(olds);
      if (!pks.empty()) pk = std::move(pks);
    }
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    m["data"] = std::move(data);
    m["database"] = h.schemaname();
    m["es"] = h.executetime();
    m["gtid"] = h.gtid().empty() ? ordered_json(nullptr) : ordered_json(h.gtid());
    m["id"] = batch;
    m["isDdl"] = rc.isddl();
    m["mysqlType"] = std::move(mysql_type);
    m["old"] = std::move(old);
    m["pkNames"] = std::move(pk);
    m["sql"] = rc.sql();
    m["sqlType"] = std::move(sql_type);
    m["table"] = h.tablename();
    m["ts"] = static_cast<std::int64_t>(now);
    m["type"] = canalpb::EventType_Name(rc.eventtype());
    buf_ += m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    buf_.push_back('\n');
  }

  // One MESSAGES packet for the batch collected in messages_ (SessionHandler, NettyUtils.write).
  void packet() {
    messages_.set_batch_id(static_cast<std::int64_t>(batch_id_));
    canalpb::Packet p;
    p.set_version(1);
    p.set_type(canalpb::MESSAGES);
    if (o_.compression == CanalCompression::none) {
      messages_.SerializeToString(p.mutable_body());
    } else {
      p.set_compression(o_.compression == CanalCompression::zlib ? canalpb::ZLIB : canalpb::GZIP);
      deflate_body(messages_.SerializeAsString(), o_.compression == CanalCompression::gzip, *p.mutable_body());
    }
    messages_.Clear();
    const std::size_t n = p.ByteSizeLong();
    if (n > 0x7fffffffu) throw std::length_error("Canal packet over 2 GiB: use a smaller --batch-size");
    for (int shift = 24; shift >= 0; shift -= 8) buf_.push_back(static_cast<char>((n >> shift) & 0xff));
    const std::size_t at = buf_.size();
    buf_.resize(at + n);
    p.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(buf_.data() + at));
  }

  static void deflate_body(const std::string& in, bool gzip, std::string& out) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::runtime_error("deflateInit2 failed");
    out.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  }

  const CanalOptions& o_;
  std::FILE* f_;
  std::string buf_;
  std::uint64_t entries_ = 0;
  std::uint64_t batch_id_ = 0;
  canalpb::Messages messages_;
};

// ---- the mapper --------------------------------------------------------------------------------

class CanalMapper {
 public:
  CanalMapper(const ConvertOptions& opts, const CanalOptions& co, EntrySink& sink, StderrDiagnostics& diag,
              std::FILE* err)
      : opts_(opts), sink_(sink), diag_(diag), err_(err), tz_(co.timezone) {}

  bool mid_stream = false;

  void begin_file(const std::string& log_name) {
    log_name_ = &log_name;
    tracker_.reset();
    tables_.clear();
    cur_sn_.clear();
    cur_lct_.clear();
  }

  void event(const Event& ev) {
    const std::uint8_t t = ev.type_code();
    std::string_view sql;
    QueryEvent qe;
    bool have_query = false;
    if (t == 2 || t == 165) {
      auto r = decode_query(ev.body_reader(), *ev.fde);
      if (r) {
        qe = *r;
        have_query = true;
        if (t == 165) {
          Status st = decompress_mariadb(as_bytes(qe.sql), ev.body_offset(), sql_buf_);
          if (!st.ok()) {
            undecodable(ev, "QUERY_COMPRESSED", st.error());
            have_query = false;
          } else {
            qe.sql = sql_buf_;
          }
        }
      } else {
        undecodable(ev, "QUERY", r.error());
      }
      if (have_query) sql = qe.sql;
    }
    const bool was_begun = tracker_.state().open && tracker_.state().begun;
    if (!tracker_.begin_event(ev, sql))
      diag_.report(Diagnostic{Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
                              "GTID event does not decode"});
    if (tracker_.open_at_gtid())
      diag_.report(Diagnostic{Check::transaction_structure, Severity::warning, *log_name_, top_pos(ev),
                              "GTID event while the previous transaction is still open"});
    const TransactionState& ts = tracker_.state();
    if (ts.txn_id != selected_txn_) {
      selected_txn_ = ts.txn_id;
      txn_selected_ = true;
      if (opts_.include_gtids && !opts_.include_gtids->contains(ts)) txn_selected_ = false;
      if (opts_.exclude_gtids && opts_.exclude_gtids->contains(ts)) txn_selected_ = false;
    }
    switch (ev.type()) {
      case EventType::format_description:
      case EventType::rotate:
        if (!ev.is_inner()) tables_.clear();
        break;
      case EventType::previous_gtids: {
        ByteReader r = ev.body_reader();
        if (auto s = decode_previous_gtids(r)) executed_ = std::move(*s);
        break;
      }
      case EventType::gtid:
      case EventType::gtid_tagged_log:
        mysql_gtid(ev);
        break;
      case EventType::mariadb_gtid:
        cur_sn_.clear();
        cur_lct_.clear();
        if (txn_selected_ && ts.has_gtid) gtid_entry(ev);
        // MariaDB writes no BEGIN after a GTID that opens a transaction: the GTID is the BEGIN.
        if (txn_selected_ && ts.open && ts.begun && !was_begun) begin_entry(ev, 0, ts.xid);
        break;
      case EventType::table_map:
        table_map(ev);
        break;
      case EventType::xid:
        if (txn_selected_) {
          auto x = decode_xid(ev.body_reader(), *ev.fde);
          if (!x) undecodable(ev, "XID", x.error());
          else end_entry(ev, std::to_string(x->xid));
        }
        break;
      case EventType::query:
      case EventType::mariadb_query_compressed:
        if (have_query) statement(ev, qe);
        break;
      default:
        if (auto k = classify_rows_event(t)) rows(ev, *k);
        break;
    }
    tracker_.end_event();
  }

 private:
  static Bytes as_bytes(std::string_view s) {
    return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }

  void undecodable(const Event& ev, std::string_view what, const DecodeError& e) {
    diag_.report(Diagnostic{Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
                            fmt::format("{} event does not decode: {} at offset {}", what, e.what, e.offset)});
  }

  // LogEventConvert.createHeader.
  void header(canalpb::Header* h, const Event& ev, std::string_view schema, std::string_view table, int event_type,
              int rows_count) {
    const TransactionState& ts = tracker_.state();
    h->set_version(1);
    h->set_logfilename(*log_name_);
    h->set_logfileoffset(static_cast<std::int64_t>(top_pos(ev)));
    h->set_serverid(ev.header.server_id);
    h->set_serverencode("UTF-8");
    h->set_executetime(static_cast<std::int64_t>(ev.header.timestamp) * 1000);
    h->set_sourcetype(canalpb::MYSQL);
    h->set_schemaname(std::string(schema));
    h->set_tablename(std::string(table));
    h->set_eventlength(ev.header.event_size);
    if (event_type != 0) h->set_eventtype(static_cast<canalpb::EventType>(event_type));
    if (ts.has_gtid) {
      h->set_gtid(ts.mysql_gtid && !executed_.empty() ? executed_.to_string() : ts.gtid_text);
      add_pair(h->add_props(), "curtGtid", ts.gtid_text);
      if (!cur_sn_.empty()) add_pair(h->add_props(), "curtGtidSn", cur_sn_);
      if (!cur_lct_.empty()) add_pair(h->add_props(), "curtGtidLct", cur_lct_);
    }
    if (rows_count > 0) add_pair(h->add_props(), "rowsCount", std::to_string(rows_count));
  }
  static void add_pair(canalpb::Pair* p, std::string_view k, std::string_view v) {
    p->set_key(std::string(k));
    p->set_value(std::string(v));
  }

  void emit(canalpb::EntryType type, const Event& ev, std::string_view schema, std::string_view table,
            int event_type, int rows_count, const google::protobuf::MessageLite& store,
            const canalpb::RowChange* rc) {
    entry_.Clear();
    header(entry_.mutable_header(), ev, schema, table, event_type, rows_count);
    entry_.set_entrytype(type);
    store.SerializeToString(entry_.mutable_storevalue());
    sink_.write(entry_, rc);
  }

  // XA START / XA END: props XA_TYPE and XA_XID, as Canal adds them.
  void begin_entry(const Event& ev, std::uint32_t thread_id, std::string_view xa_xid = {}) {
    canalpb::TransactionBegin b;
    b.set_threadid(thread_id);
    if (!xa_xid.empty()) {
      add_pair(b.add_props(), "XA_TYPE", "XA START");
      add_pair(b.add_props(), "XA_XID", xa_xid);
    }
    emit(canalpb::TRANSACTIONBEGIN, ev, "", "", 0, 0, b, nullptr);
  }
  void end_entry(const Event& ev, const std::string& xid, std::string_view xa_xid = {}) {
    canalpb::TransactionEnd e;
    e.set_transactionid(xid);
    if (!xa_xid.empty()) {
      add_pair(e.add_props(), "XA_TYPE", "XA END");
      add_pair(e.add_props(), "XA_XID", xa_xid);
    }
    emit(canalpb::TRANSACTIONEND, ev, "", "", 0, 0, e, nullptr);
  }
  // Canal's parseGTIDLogEvent: a Pair {gtid, the GTID}; header eventType GTID.
  void gtid_entry(const Event& ev) {
    canalpb::Pair p;
    add_pair(&p, "gtid", tracker_.state().gtid_text);
    emit(canalpb::GTIDLOG, ev, "", "", canalpb::GTID, 0, p, nullptr);
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
    if (g->gno != 0) (void)executed_.add(g->uuid, g->tag, g->gno);
    if (txn_selected_ && tracker_.state().has_gtid) gtid_entry(ev);
  }

  void table_map(const Event& ev) {
    auto r = decode_table_map(ev.body_reader(), *ev.fde);
    if (!r) {
      undecodable(ev, "TABLE_MAP", r.error());
      return;
    }
    TableMap* cached = tables_.find(r->table_id);
    if (cached != nullptr && cached->same_as(*r)) return;
    const std::uint64_t base = ev.body_offset();
    const auto off = [&](Bytes b) {
      return b.empty() ? base : base + static_cast<std::uint64_t>(b.data() - ev.body.data());
    };
    auto tm = parse_table_map(*r, off(r->metadata), off(r->optional_metadata));
    if (!tm) {
      undecodable(ev, "TABLE_MAP", tm.error());
      return;
    }
    TableMap& stored = tables_.put(std::move(*tm));
    if (!stored.has_names()) {
      std::string key = stored.db + "." + stored.table;
      if (warned_.insert(key).second)
        fmt::print(err_, "binlogctl: {}:{}: warning: table {}: the TABLE_MAP carries no column names "
                         "(binlog_row_metadata is not FULL); columns are named @1, @2, ...\n",
                   *log_name_, top_pos(ev), key);
    }
    // mysqlType: display widths as MariaDB and MySQL before 8.0.19 print them.
    const std::uint32_t ver = parse_server_version(ev.fde->server_version);
    const bool widths = ev.fde->server_version.find("MariaDB") != std::string::npos || ver < 80019;
    types_[stored.table_id].clear();
    for (const ColumnDef& c : stored.columns) types_[stored.table_id].push_back(canal_detail::mysql_type_text(c, widths));
  }

  void statement(const Event& ev, const QueryEvent& q) {
    const StatementKind k = classify_statement(q.sql);
    switch (k) {
      case StatementKind::begin:
        if (txn_selected_) begin_entry(ev, q.thread_id);
        return;
      case StatementKind::xa_start:
        if (txn_selected_) begin_entry(ev, q.thread_id, xa_statement_xid(q.sql));
        return;
      case StatementKind::xa_end:
        if (txn_selected_) end_entry(ev, "0", xa_statement_xid(q.sql));
        return;
      case StatementKind::commit:
        if (txn_selected_) end_entry(ev, "0");
        return;
      case StatementKind::xa_finish:
        if (txn_selected_) {
          canalpb::RowChange rc;
          const int et = xa_statement_is_rollback(q.sql) ? canalpb::XAROLLBACK : canalpb::XACOMMIT;
          rc.set_eventtype(static_cast<canalpb::EventType>(et));
          rc.set_isddl(false);
          rc.set_sql(std::string(q.sql));
          emit(canalpb::ROWDATA, ev, q.db, "", et, 0, rc, &rc);
        }
        return;
      case StatementKind::ddl:
      case StatementKind::other:
        break;
      default:
        return;
    }
    if (!txn_selected_) return;
    std::string db(q.db), table;
    if (!ddl_table(q.sql, db, table)) table.clear();
    if (!opts_.filter.empty()) {
      if (k == StatementKind::other) return;
      if (!opts_.filter.matches(db, table)) return;
    }
    const int et = canal_statement_event_type(q.sql);
    canalpb::RowChange rc;
    rc.set_isddl(et != canalpb::INSERT && et != canalpb::UPDATE && et != canalpb::DELETE);
    rc.set_sql(std::string(q.sql));
    if (!q.db.empty()) rc.set_ddlschemaname(std::string(q.db));
    rc.set_eventtype(static_cast<canalpb::EventType>(et));
    emit(canalpb::ROWDATA, ev, db, table, et, 0, rc, &rc);
  }

  bool rows_type_in_this_server(const Event& ev) {
    const std::uint8_t t = ev.type_code();
    if (t > ev.fde->n_post_headers) return true;
    const std::uint8_t ph = ev.fde->post_header(t);
    return ph == 6 || ph == 8 || ph == 10;
  }

  // One image into `cols`: only the columns present in the image's bitmap.
  Status image(const TableMap& tm, std::uint64_t width, Bytes present, bool partial, ByteReader& r,
               std::vector<canalpb::Column>& cols, const std::vector<canalpb::Column>* before) {
    cols.clear();
    const std::vector<std::string>& mtypes = types_[tm.table_id];
    Bytes partial_bits;
    if (partial) {
      auto opts = r.packed_int();
      if (!r.ok()) return r.error();
      if ((opts & 1) != 0) {
        partial_bits = r.bytes((tm.json_columns + 7) / 8);
        if (!r.ok()) return r.error();
      }
    }
    const std::size_t n_present = count_bits(present, width);
    Bytes nulls = r.bytes((n_present + 7) / 8);
    if (!r.ok()) return r.error();
    std::size_t j = 0, json_index = 0;
    for (std::size_t i = 0; i < width && i < tm.columns.size(); ++i) {
      const ColumnDef& cd = tm.columns[i];
      const bool is_json = cd.type == ColumnType::json;
      if (!bit_is_set(present, i)) {
        if (is_json) ++json_index;
        continue;
      }
      canalpb::Column c;
      c.set_index(static_cast<std::int32_t>(i));
      c.set_name(cd.name);
      c.set_iskey(cd.in_primary_key);
      c.set_mysqltype(i < mtypes.size() ? mtypes[i] : std::string());
      if (bit_is_set(nulls, j++)) {
        c.set_isnull(true);
        c.set_sqltype(canal_detail::null_sql_type(cd));
      } else {
        const std::uint64_t at = r.offset();
        auto sz = column_value_size(cd.type, cd.meta, r);
        if (!sz) return sz.error();
        Bytes raw = r.bytes(*sz);
        if (!r.ok()) return r.error();
        const bool partial_json = is_json && bit_is_set(partial_bits, json_index);
        if (partial_json) {
          // The full document: the diffs applied to the before image's value.
          std::string doc;
          const canalpb::Column* b = nullptr;
          if (before != nullptr)
            for (const auto& bc : *before)
              if (bc.index() == static_cast<std::int32_t>(i)) b = &bc;
          if (b == nullptr || b->isnull()) {
            // No document to apply the diffs to (MINIMAL before image): left out, as convert
            // --format json leaves it out of "after".
            ++json_index;
            continue;
          }
          const std::size_t lp = cd.meta;
          Status st = apply_json_diffs(b->value(), raw.subspan(lp), at + lp, doc);
          if (!st.ok()) return st;
          val_.is_null = false;
          val_.value = std::move(doc);
          val_.sql_type = 12;
        } else {
          Status st = canal_detail::render_value(cd, tm.infos[i], raw, at, tz_, val_);
          if (!st.ok()) return st;
        }
        c.set_isnull(val_.is_null);
        c.set_sqltype(val_.sql_type);
        if (!val_.is_null) c.set_value(val_.value);
      }
      if (is_json) ++json_index;
      if (before != nullptr) {
        // isUpdate: changed unless both null or equal strings; absent from the before image = changed.
        bool changed = true;
        for (const auto& bc : *before)
          if (bc.index() == c.index()) {
            changed = bc.isnull() != c.isnull() || (!c.isnull() && bc.value() != c.value());
            break;
          }
        c.set_updated(changed);
      } else {
        c.set_updated(false);
      }
      cols.push_back(std::move(c));
    }
    return {};
  }

  void rows(const Event& ev, RowsEventKind kind) {
    if (!rows_type_in_this_server(ev)) return;
    auto h = decode_rows_header(ev.body_reader(), *ev.fde, ev.type_code());
    if (!h) {
      undecodable(ev, event_type_constant(ev.type_code()), h.error());
      return;
    }
    const TableMap* tm = tables_.find(h->table_id);
    if (tm == nullptr) {
      if (h->table_id == 0xffffff || h->table_id == 0xffffffffffffULL) return;
      diag_.report(Diagnostic{Check::transaction_structure, mid_stream ? Severity::warning : Severity::error,
                              *log_name_, top_pos(ev),
                              fmt::format("{} for table id {} without a TABLE_MAP before it",
                                          event_type_constant(ev.type_code()), h->table_id)});
      return;
    }
    if (!txn_selected_) return;
    TableMap& tmm = *tables_.find(h->table_id);
    if (tmm.selected < 0) tmm.selected = opts_.filter.matches(tm->db, tm->table) ? 1 : 0;
    if (tmm.selected == 0) return;
    Bytes rows = h->rows;
    std::uint64_t rows_at = h->rows_offset;
    if (kind.compressed) {
      Status st = decompress_mariadb(rows, rows_at, rows_buf_);
      if (!st.ok()) {
        undecodable(ev, event_type_constant(ev.type_code()), st.error());
        return;
      }
      rows = as_bytes(rows_buf_);
    }
    const int et = kind.kind == RowsKind::insert ? canalpb::INSERT
                   : kind.kind == RowsKind::update ? canalpb::UPDATE
                                                   : canalpb::DELETE;
    canalpb::RowChange rc;
    rc.set_tableid(static_cast<std::int64_t>(h->table_id));
    rc.set_eventtype(static_cast<canalpb::EventType>(et));
    rc.set_isddl(false);
    ByteReader r(rows, rows_at);
    while (r.ok() && !r.empty()) {
      canalpb::RowData* rd = rc.add_rowdatas();
      Status st;
      if (kind.kind == RowsKind::insert) {
        st = image(*tm, h->width, h->columns_before, false, r, after_, nullptr);
        // INSERT: after columns; `updated` is Canal's isUpdate against no before image (true).
        for (auto& c : after_) c.set_updated(true);
        for (auto& c : after_) *rd->add_aftercolumns() = std::move(c);
      } else {
        st = image(*tm, h->width, h->columns_before, false, r, before_, nullptr);
        if (st.ok() && kind.kind == RowsKind::update) {
          st = image(*tm, h->width, h->columns_after, kind.partial_json, r, after_, &before_);
          for (auto& c : after_) *rd->add_aftercolumns() = std::move(c);
        }
        for (auto& c : before_) *rd->add_beforecolumns() = std::move(c);
      }
      if (!st.ok()) {
        undecodable(ev, event_type_constant(ev.type_code()), st.error());
        return;
      }
    }
    if (!r.ok()) {
      undecodable(ev, event_type_constant(ev.type_code()), r.error());
      return;
    }
    emit(canalpb::ROWDATA, ev, tm->db, tm->table, et, rc.rowdatas_size(), rc, &rc);
  }

  const ConvertOptions& opts_;
  EntrySink& sink_;
  StderrDiagnostics& diag_;
  std::FILE* err_;
  TimeZone tz_;
  const std::string* log_name_ = nullptr;
  TransactionTracker tracker_;
  TableMapCache tables_;
  std::unordered_map<std::uint64_t, std::vector<std::string>> types_;
  std::unordered_set<std::string> warned_;
  std::uint64_t selected_txn_ = ~0ull;
  bool txn_selected_ = true;
  GtidSet executed_;
  std::string cur_sn_, cur_lct_;
  std::string rows_buf_, sql_buf_;
  std::vector<canalpb::Column> before_, after_;
  CanalValue val_;
  canalpb::Entry entry_;
};

}  // namespace

int run_canal_convert(const ConvertOptions& opts, const CanalOptions& co, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  EntrySink sink(co, outf);
  CanalMapper mapper(opts, co, sink, diag, errf);
  mapper.mid_stream = opts.start_position.has_value() || opts.start_datetime.has_value();
  struct Visitor : ChainVisitor {
    CanalMapper& m;
    explicit Visitor(CanalMapper& mm) : m(mm) {}
    void begin_file(const InputFile& f) override { m.begin_file(f.log_name); }
    void event(const Event& ev, const InputFile&) override { m.event(ev); }
  } visitor(mapper);
  const bool readable = read_chain(chain_options(opts), visitor, diag, errf);
  sink.flush();
  if (!readable) return 2;
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
