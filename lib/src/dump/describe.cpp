#include <binlogctl/columns.h>
#include <binlogctl/gtid.h>

#include "dump/describe.h"
#include "events/events.h"

namespace binlogctl {
namespace {

#define TRY_DECODE(var, expr) \
  auto var = (expr);          \
  if (!var) return var.error()

void hex_field(JsonWriter& w, std::string_view k, Bytes b) { w.key(k).hex(b.data(), b.size()); }

// `sql_at` given: "sql" written empty, *sql_at set to the offset in w's output just past its
// opening quote (describe_statement_parts).
void describe_query(JsonWriter& w, const QueryEvent& q, std::string_view sql, std::size_t* sql_at = nullptr) {
  w.key("thread_id").u64(q.thread_id);
  w.key("exec_time").u64(q.exec_time);
  w.key("error_code").u64(q.error_code);
  w.key("database").str(q.db);
  w.key("sql");
  if (sql_at != nullptr) {
    w.str("");
    *sql_at = w.out().size() - 1;
  } else {
    w.str(sql);
  }
  if (q.has_flags2) w.key("flags2").u64(q.flags2);
  if (q.has_sql_mode) w.key("sql_mode").u64(q.sql_mode);
  if (q.has_charset) {
    w.key("charset_client").u64(q.charset_client);
    w.key("collation_connection").u64(q.collation_connection);
    w.key("collation_server").u64(q.collation_server);
  }
  if (!q.time_zone.empty()) w.key("time_zone").str(q.time_zone);
  if (!q.catalog.empty()) w.key("catalog").str(q.catalog);
  if (q.has_xid) w.key("xid").u64(q.xid);
  if (q.has_ddl_xid) w.key("ddl_xid").u64(q.ddl_xid);
}

void describe_gtid(JsonWriter& w, const GtidLog& g) {
  w.key("flags").u64(g.flags);
  w.key("uuid").str(g.uuid.to_string());
  if (!g.tag.empty()) w.key("tag").str(g.tag);
  w.key("gno").u64(g.gno);
  if (g.has_logical_clock) {
    w.key("last_committed").i64(g.last_committed);
    w.key("sequence_number").i64(g.sequence_number);
  }
  if (g.has_timestamps) {
    w.key("immediate_commit_timestamp").u64(g.immediate_commit_timestamp);
    w.key("original_commit_timestamp").u64(g.original_commit_timestamp);
  }
  if (g.has_length) w.key("transaction_length").u64(g.transaction_length);
  if (g.has_server_versions) {
    w.key("immediate_server_version").u64(g.immediate_server_version);
    w.key("original_server_version").u64(g.original_server_version);
  }
}

}  // namespace

Status describe_body(JsonWriter& w, const Event& ev, InfoScratch& scratch) {
  const Fde& fde = *ev.fde;
  ByteReader r = ev.body_reader();
  const std::uint8_t code = ev.type_code();
  switch (static_cast<EventType>(code)) {
    case EventType::format_description: {
      TRY_DECODE(f, decode_fde(ev.raw, ev.pos));
      w.key("binlog_version").u64(f->binlog_version);
      w.key("server_version").str(f->server_version);
      w.key("create_timestamp").u64(f->create_timestamp);
      w.key("common_header_len").u64(f->common_header_len);
      w.key("checksum").str(f->checksum == ChecksumAlg::crc32 ? "CRC32" : f->checksum == ChecksumAlg::off ? "NONE" : "UNDEFINED");
      w.key("post_header_lengths").begin_array();
      for (std::size_t i = 1; i <= f->n_post_headers; ++i) w.u64(f->post_header_len[i]);
      w.end_array();
      return {};
    }
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      TRY_DECODE(q, decode_query_text(ev, scratch));
      describe_query(w, *q, q->sql);
      return {};
    }
    case EventType::rotate: {
      TRY_DECODE(x, decode_rotate(r, fde));
      w.key("position").u64(x->position);
      w.key("next_file").str(x->next_file);
      return {};
    }
    case EventType::xid: {
      TRY_DECODE(x, decode_xid(r, fde));
      w.key("xid").u64(x->xid);
      return {};
    }
    case EventType::intvar: {
      TRY_DECODE(x, decode_intvar(r, fde));
      w.key("type").str(x->type == 1 ? "LAST_INSERT_ID" : x->type == 2 ? "INSERT_ID" : "INVALID_INT");
      w.key("value").u64(x->value);
      return {};
    }
    case EventType::rand: {
      TRY_DECODE(x, decode_rand(r, fde));
      w.key("seed1").u64(x->seed1);
      w.key("seed2").u64(x->seed2);
      return {};
    }
    case EventType::user_var: {
      TRY_DECODE(x, decode_user_var(r, fde));
      w.key("name").str(x->name);
      w.key("is_null").boolean(x->is_null);
      if (!x->is_null) {
        static constexpr const char* kTypes[] = {"STRING", "REAL", "INT", "ROW", "DECIMAL"};
        w.key("value_type").str(x->value_type < 5 ? kTypes[x->value_type] : "UNKNOWN");
        w.key("charset").u64(x->charset);
        hex_field(w, "value", x->value);
        if (x->has_flags) w.key("unsigned").boolean((x->flags & 1) != 0);
      }
      return {};
    }
    case EventType::table_map: {
      TRY_DECODE(t, decode_table_map(r, fde));
      w.key("table_id").u64(t->table_id);
      w.key("flags").u64(t->flags);
      w.key("database").str(t->db);
      w.key("table").str(t->table);
      w.key("column_count").u64(t->column_count);
      w.key("column_types").begin_array();
      for (std::uint8_t c : t->column_types) w.str(column_type_name(static_cast<ColumnType>(c)));
      w.end_array();
      hex_field(w, "metadata", t->metadata);
      hex_field(w, "null_bitmap", t->null_bitmap);
      hex_field(w, "optional_metadata", t->optional_metadata);
      return {};
    }
    case EventType::rows_query:
    case EventType::mariadb_annotate_rows: {
      TRY_DECODE(t, code == 29 ? decode_rows_query(r, fde) : decode_annotate_rows(r, fde));
      w.key("query").str(t->text);
      return {};
    }
    case EventType::mariadb_binlog_checkpoint: {
      TRY_DECODE(c, decode_binlog_checkpoint(r, fde));
      w.key("file").str(c->file);
      return {};
    }
    case EventType::gtid:
    case EventType::anonymous_gtid: {
      TRY_DECODE(g, decode_gtid_log(r));
      describe_gtid(w, *g);
      return {};
    }
    case EventType::gtid_tagged_log: {
      TRY_DECODE(g, decode_gtid_tagged_log(r));
      describe_gtid(w, *g);
      return {};
    }
    case EventType::previous_gtids: {
      TRY_DECODE(s, decode_previous_gtids(r));
      w.key("gtid_set").str(s->to_string());
      return {};
    }
    case EventType::mariadb_gtid: {
      TRY_DECODE(g, decode_mariadb_gtid(r, ev.header.server_id));
      w.key("gtid").str(g->gtid(ev.header.server_id).to_string());
      w.key("domain_id").u64(g->domain);
      w.key("server_id").u64(ev.header.server_id);
      w.key("seq_no").u64(g->seq);
      w.key("flags2").u64(g->flags2);
      w.key("standalone").boolean(g->standalone());
      if (g->flags2 & MariaGtidEvent::kFlGroupCommitId) w.key("commit_id").u64(g->commit_id);
      if (g->is_xa()) {
        w.key("xa_format_id").i64(g->xa_format_id);
        w.key("xa_gtrid").hex(reinterpret_cast<const std::uint8_t*>(g->xa_gtrid.data()), g->xa_gtrid.size());
        w.key("xa_bqual").hex(reinterpret_cast<const std::uint8_t*>(g->xa_bqual.data()), g->xa_bqual.size());
      }
      return {};
    }
    case EventType::mariadb_gtid_list: {
      TRY_DECODE(l, decode_gtid_list(r));
      w.key("gtid_list").str(l->to_string());
      w.key("count").u64(l->size());
      return {};
    }
    case EventType::xa_prepare: {
      TRY_DECODE(x, decode_xa_prepare(r, fde));
      w.key("one_phase").boolean(x->one_phase);
      w.key("format_id").i64(x->format_id);
      hex_field(w, "gtrid", x->gtrid);
      hex_field(w, "bqual", x->bqual);
      return {};
    }
    case EventType::transaction_payload: {
      TRY_DECODE(p, decode_transaction_payload(r, fde));
      w.key("compression").str(compression_name(p->compression_type));
      w.key("payload_size").u64(p->payload.size());
      w.key("uncompressed_size").u64(p->uncompressed_size);
      return {};
    }
    case EventType::incident: {
      TRY_DECODE(x, decode_incident(r, fde));
      w.key("incident").u64(x->type);
      w.key("message").str(x->message);
      return {};
    }
    case EventType::mariadb_start_encryption: {
      TRY_DECODE(x, decode_start_encryption(r, fde));
      w.key("scheme").u64(x->scheme);
      w.key("key_version").u64(x->key_version);
      return {};
    }
    case EventType::begin_load_query:
    case EventType::append_block:
    case EventType::exec_load:
    case EventType::delete_file: {
      TRY_DECODE(x, decode_load_block(r, fde, code));
      w.key("file_id").u64(x->file_id);
      w.key("block_len").u64(x->block.size());
      return {};
    }
    case EventType::execute_load_query: {
      TRY_DECODE(x, decode_execute_load_query(r, fde));
      describe_query(w, x->query, x->query.sql);
      w.key("file_id").u64(x->file_id);
      return {};
    }
    default:
      break;
  }
  if (is_rows_event(code)) {
    TRY_DECODE(h, decode_rows_header(r, fde, code));
    w.key("table_id").u64(h->table_id);
    w.key("flags").u64(h->flags);
    if (!h->extra.empty()) hex_field(w, "extra_data", h->extra);
    w.key("column_count").u64(h->width);
    hex_field(w, "columns_present", h->columns_before);
    if (!h->columns_after.empty()) hex_field(w, "columns_present_after", h->columns_after);
    w.key("rows_bytes").u64(h->rows.size());
    return {};
  }
  return {};
}

bool describe_statement_parts(std::string& out, const Event& ev, InfoScratch& scratch, std::string_view& sql,
                              std::size_t& sql_at) {
  const Fde& fde = *ev.fde;
  ByteReader r = ev.body_reader();
  const std::size_t start = out.size();
  JsonWriter w(out);
  w.begin_object();
  switch (ev.type()) {
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      auto q = decode_query_text(ev, scratch);
      if (!q) break;
      describe_query(w, *q, {}, &sql_at);
      sql = q->sql;
      w.end_object();
      return true;
    }
    case EventType::execute_load_query: {
      auto x = decode_execute_load_query(r, fde);
      if (!x) break;
      describe_query(w, x->query, {}, &sql_at);
      sql = x->query.sql;
      w.key("file_id").u64(x->file_id);
      w.end_object();
      return true;
    }
    default:
      break;
  }
  out.resize(start);
  return false;
}

}  // namespace binlogctl
