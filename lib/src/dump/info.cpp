#include <binlogctl/gtid.h>

#include "columns/column_json.h"
#include "dump/info.h"
#include "events/events.h"
#include "render/json_out.h"

#include <fmt/format.h>

#include <cstring>

namespace binlogctl {
namespace {

constexpr std::uint16_t kSuppressUse = 0x8;  // LOG_EVENT_SUPPRESS_USE_F

void append_upper_hex(std::string& out, Bytes b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (std::uint8_t c : b) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
}

// OPTION_* bits of Q_FLAGS2 that MariaDB 11 spells out in front of the statement.
constexpr std::uint32_t kOptNoForeignKeyChecks = 1u << 26;
constexpr std::uint32_t kOptAutoIsNull = 1u << 14;
constexpr std::uint32_t kOptRelaxedUniqueChecks = 1u << 27;
constexpr std::uint32_t kOptNoCheckConstraintChecks = 1u << 30;  // OPTION_NO_CHECK_CONSTRAINT_CHECKS
constexpr std::uint32_t kOptIfExists = 1u << 31;                  // OPTION_IF_EXISTS

// The Info text of a QUERY event is head + statement + tail (query_info_parts hands the statement
// out uncopied).
void append_query_head(std::string& out, const QueryEvent& q, std::uint16_t flags, const Fde& fde) {
  if (!(flags & kSuppressUse) && !q.db.empty()) {
    out.append("use ");
    append_quoted_identifier(out, q.db);
    out.append("; ");
  }
  if (fde.flavor == Flavor::mariadb && fde.version_product >= 0x0b0000 && q.has_flags2) {
    // MariaDB 11 (Query_log_event::pack_info) lists some session options; it prints "=1"
    // whatever their value, and so do we.
    const std::size_t start = out.size();
    if (q.flags2 & kOptNoForeignKeyChecks) out.append("foreign_key_checks=1, ");
    if (q.flags2 & kOptAutoIsNull) out.append("sql_auto_is_null, ");
    if (q.flags2 & kOptRelaxedUniqueChecks) out.append("unique_checks=1, ");
    if (q.flags2 & kOptNoCheckConstraintChecks) out.append("check_constraint_checks=1, ");
    if (q.flags2 & kOptIfExists) out.append("@@sql_if_exists=1, ");
    if (out.size() > start) {
      out.insert(start, "set ");
      out[out.size() - 2] = ';';
    }
  }
}

void append_query_tail(std::string& out, const QueryEvent& q, const Fde& fde) {
  if (fde.flavor == Flavor::mysql && q.has_ddl_xid && q.ddl_xid != ~std::uint64_t{0}) {
    out.append(" /* xid=");
    append_u64(out, q.ddl_xid);
    out.append(" */");
  }
}

void append_query_info(std::string& out, const QueryEvent& q, std::uint16_t flags, std::string_view sql,
                       const Fde& fde) {
  append_query_head(out, q, flags, fde);
  out.append(sql);
  append_query_tail(out, q, fde);
}

void append_user_var_info(std::string& out, const UserVarEvent& u, Flavor flavor) {
  out.push_back('@');
  append_quoted_identifier(out, u.name);
  out.push_back('=');
  if (u.is_null) {
    out.append("NULL");
    return;
  }
  switch (u.value_type) {
    case 1: {  // REAL_RESULT
      double d = 0;
      if (u.value.size() >= 8) std::memcpy(&d, u.value.data(), 8);
      out.append(fmt::format("{}", d));
      break;
    }
    case 2: {  // INT_RESULT
      std::uint64_t v = u.value.size() >= 8 ? load_le(u.value.data(), 8) : 0;
      if (u.has_flags && (u.flags & 1)) append_u64(out, v);
      else append_i64(out, static_cast<std::int64_t>(v));
      break;
    }
    case 4: {  // DECIMAL_RESULT: precision, scale, then the binary decimal
      ByteReader d(u.value, 0);
      const int precision = d.u8();
      const int scale = d.u8();
      std::string text;
      if (!append_decimal_text(text, precision, scale, d).ok()) text = "???";
      out.append(text);
      break;
    }
    default: {  // STRING_RESULT
      const char* coll = collation_name(u.charset, flavor);
      std::string_view cs = coll != nullptr ? std::string_view(coll) : std::string_view();
      std::string_view charset = cs.substr(0, cs.find('_'));
      if (coll == nullptr) {
        out.append("???");
      } else if (flavor == Flavor::mariadb) {
        out.push_back('_');
        out.append(charset);
        out.append(" X'");
        append_upper_hex(out, u.value);
        out.append("' COLLATE ");
        out.append(cs);
      } else {
        out.push_back('_');
        out.append(charset);
        if (u.value.empty()) {
          out.append(" \"\"");
        } else {
          out.append(" 0x");
          append_upper_hex(out, u.value);
        }
        out.append(" COLLATE ");
        out.append(cs);
      }
      break;
    }
  }
}

void append_xid_text(std::string& out, std::int32_t format_id, Bytes gtrid, Bytes bqual) {
  out.append("X'");
  append_hex(out, gtrid.data(), gtrid.size());
  out.append("',X'");
  append_hex(out, bqual.data(), bqual.size());
  out.append("',");
  append_i64(out, format_id);
}

#define TRY_DECODE(var, expr) \
  auto var = (expr);          \
  if (!var) return var.error()

}  // namespace

void append_quoted_identifier(std::string& out, std::string_view name) {
  out.push_back('`');
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
}

Result<QueryEvent> decode_query_text(const Event& ev, InfoScratch& scratch) {
  auto q = decode_query(ev.body_reader(), *ev.fde);
  if (!q || ev.type() != EventType::mariadb_query_compressed) return q;
  const Bytes c(reinterpret_cast<const std::uint8_t*>(q->sql.data()), q->sql.size());
  Status st = decompress_mariadb(c, ev.body_offset() + (ev.body.size() - c.size()), scratch.buf);
  if (!st) return st.error();
  q->sql = scratch.buf;
  return q;
}

bool query_info_parts(const Event& ev, InfoScratch& scratch, std::string& head, std::string_view& sql,
                      std::string& tail) {
  const Fde& fde = *ev.fde;
  ByteReader r = ev.body_reader();
  switch (ev.type()) {
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      auto q = decode_query_text(ev, scratch);
      if (!q) return false;
      append_query_head(head, *q, ev.header.flags, fde);
      sql = q->sql;
      append_query_tail(tail, *q, fde);
      return true;
    }
    case EventType::execute_load_query: {
      auto e = decode_execute_load_query(r, fde);
      if (!e) return false;
      append_query_head(head, e->query, ev.header.flags, fde);
      sql = e->query.sql;
      append_query_tail(tail, e->query, fde);
      tail.append(" ;file_id=");
      append_u64(tail, e->file_id);
      return true;
    }
    default:
      return false;
  }
}

Status append_info(std::string& out, const Event& ev, InfoScratch& scratch) {
  const Fde& fde = *ev.fde;
  ByteReader r = ev.body_reader();
  const std::uint8_t code = ev.type_code();
  switch (static_cast<EventType>(code)) {
    case EventType::format_description: {
      if (ev.body.size() < 52) return DecodeError{Errc::truncated, ev.pos, "format description too short"};
      std::uint16_t v = load_le16(ev.body.data());
      std::string_view ver = as_string_view(ev.body.subspan(2, 50));
      ver = ver.substr(0, ver.find('\0'));
      out.append("Server ver: ");
      out.append(ver);
      out.append(", Binlog ver: ");
      append_u64(out, v);
      return {};
    }
    case EventType::query:
    case EventType::mariadb_query_compressed: {
      TRY_DECODE(q, decode_query_text(ev, scratch));
      append_query_info(out, *q, ev.header.flags, q->sql, fde);
      return {};
    }
    case EventType::rotate: {
      TRY_DECODE(rot, decode_rotate(r, fde));
      out.append(rot->next_file);
      out.append(";pos=");
      append_u64(out, rot->position);
      return {};
    }
    case EventType::xid: {
      TRY_DECODE(x, decode_xid(r, fde));
      out.append("COMMIT /* xid=");
      append_u64(out, x->xid);
      out.append(" */");
      return {};
    }
    case EventType::intvar: {
      TRY_DECODE(iv, decode_intvar(r, fde));
      const bool new_names = fde.flavor == Flavor::mysql && fde.version_product >= 0x050700;
      out.append(iv->type == 1   ? "LAST_INSERT_ID="
                 : iv->type == 2 ? "INSERT_ID="
                 : iv->type == 0 && new_names ? "INVALID_INT="
                                              : "UNKNOWN=");
      append_i64(out, static_cast<std::int64_t>(iv->value));  // printed signed by both servers
      return {};
    }
    case EventType::rand: {
      TRY_DECODE(rd, decode_rand(r, fde));
      out.append("rand_seed1=");
      append_u64(out, rd->seed1);
      out.append(",rand_seed2=");
      append_u64(out, rd->seed2);
      return {};
    }
    case EventType::user_var: {
      TRY_DECODE(u, decode_user_var(r, fde));
      if (fde.flavor == Flavor::mariadb && !u->is_null && u->value_type == 0 &&
          collation_name(u->charset, fde.flavor) == nullptr) {
        out.append("???");  // MariaDB prints only this when the charset is unknown
        return {};
      }
      append_user_var_info(out, *u, fde.flavor);
      return {};
    }
    case EventType::table_map: {
      TRY_DECODE(t, decode_table_map(r, fde));
      out.append("table_id: ");
      append_u64(out, t->table_id);
      out.append(" (");
      out.append(t->db);
      out.push_back('.');
      out.append(t->table);
      out.push_back(')');
      return {};
    }
    case EventType::rows_query: {
      TRY_DECODE(t, decode_rows_query(r, fde));
      out.append("# ");
      out.append(t->text);
      return {};
    }
    case EventType::mariadb_annotate_rows: {
      TRY_DECODE(t, decode_annotate_rows(r, fde));
      out.append(t->text);
      return {};
    }
    case EventType::mariadb_binlog_checkpoint: {
      TRY_DECODE(c, decode_binlog_checkpoint(r, fde));
      out.append(c->file);
      return {};
    }
    case EventType::gtid:
    case EventType::anonymous_gtid: {
      TRY_DECODE(g, decode_gtid_log(r));
      out.append(gtid_next_info(*g, code == static_cast<std::uint8_t>(EventType::anonymous_gtid)));
      return {};
    }
    case EventType::gtid_tagged_log: {
      TRY_DECODE(g, decode_gtid_tagged_log(r));
      out.append(gtid_next_info(*g, false));
      return {};
    }
    case EventType::previous_gtids: {
      TRY_DECODE(s, decode_previous_gtids(r));
      out.append(s->to_info());
      return {};
    }
    case EventType::mariadb_gtid: {
      TRY_DECODE(g, decode_mariadb_gtid(r, ev.header.server_id));
      append_mariadb_gtid_info(out, *g, ev.header.server_id);
      return {};
    }
    case EventType::mariadb_gtid_list: {
      TRY_DECODE(l, decode_gtid_list(r));
      out.append(l->to_info());
      return {};
    }
    case EventType::xa_prepare: {
      TRY_DECODE(x, decode_xa_prepare(r, fde));
      out.append(x->one_phase ? "XA COMMIT " : "XA PREPARE ");
      append_xid_text(out, x->format_id, x->gtrid, x->bqual);
      if (x->one_phase) out.append(" ONE PHASE");
      return {};
    }
    case EventType::transaction_payload: {
      TRY_DECODE(p, decode_transaction_payload(r, fde));
      out.append("compression='");
      out.append(compression_name(p->compression_type));
      out.append("', decompressed_size=");
      append_u64(out, p->uncompressed_size);
      out.append(" bytes");
      return {};
    }
    case EventType::incident: {
      TRY_DECODE(inc, decode_incident(r, fde));
      out.push_back('#');
      append_u64(out, inc->type);
      out.append(inc->type == 1 ? " (LOST_EVENTS)" : inc->type == 0 ? " (NOTHING)" : " (UNKNOWN)");
      // Both servers test the message length the wrong way round: a message is never shown,
      // and an empty one gets ": ".
      if (inc->message.empty()) out.append(": ");
      return {};
    }
    case EventType::begin_load_query:
    case EventType::append_block: {
      TRY_DECODE(b, decode_load_block(r, fde, code));
      out.append(";file_id=");
      append_u64(out, b->file_id);
      out.append(";block_len=");
      append_u64(out, b->block.size());
      return {};
    }
    case EventType::exec_load:
    case EventType::delete_file: {
      TRY_DECODE(b, decode_load_block(r, fde, code));
      out.append(";file_id=");
      append_u64(out, b->file_id);
      return {};
    }
    case EventType::execute_load_query: {
      TRY_DECODE(e, decode_execute_load_query(r, fde));
      append_query_info(out, e->query, ev.header.flags, e->query.sql, fde);
      out.append(" ;file_id=");
      append_u64(out, e->file_id);
      return {};
    }
    case EventType::ignorable:
      if (fde.flavor == Flavor::mysql) out.append("# Unrecognized ignorable event");
      return {};
    case EventType::transaction_context: {
      // server_uuid length 1, thread_id 4, gtid_specified 1, then the uuid.
      std::size_t n = r.u8();
      std::uint32_t tid = r.u32();
      r.skip(1);
      std::string_view uuid = r.str(n);
      if (!r.ok()) return r.error();
      out.append(fmt::format("server_uuid={}\tthread_id={}", uuid, tid));
      return {};
    }
    case EventType::view_change: {
      std::string_view id = r.str(40);
      if (!r.ok()) return r.error();
      out.append("view_id=");
      out.append(id.substr(0, id.find('\0')));
      return {};
    }
    default:
      break;
  }
  if (is_rows_event(code)) {
    TRY_DECODE(h, decode_rows_header(r, fde, code));
    out.append("table_id: ");
    append_u64(out, h->table_id);
    if (fde.flavor == Flavor::mysql && fde.version_product >= 0x080200) {
      // MySQL 8.2+ (Rows_event::get_enum_flag_string) lists every flag.
      if (h->flags != 0) {
        out.append(" flags:");
        std::uint16_t rest = h->flags;
        static constexpr std::pair<std::uint16_t, const char*> kFlags[] = {
            {0x1, " STMT_END_F"}, {0x2, " NO_FOREIGN_KEY_CHECKS_F"}, {0x4, " RELAXED_UNIQUE_CHECKS_F"},
            {0x8, " COMPLETE_ROWS_F"}, {0x10, " USE_SQL_FOREIGN_KEY_F"}};
        for (const auto& [bit, name] : kFlags) {
          if (h->flags & bit) out.append(name);
          rest = static_cast<std::uint16_t>(rest & ~bit);
        }
        if (rest != 0) out.append(fmt::format(" UNKNOWN_FLAG(0x{:x})", rest));
      }
    } else if (h->flags & kRowsStmtEnd) {
      out.append(" flags: STMT_END_F");
    }
    return {};
  }
  return {};  // Stop, Heartbeat, Ignorable, unknown...: empty Info
}

}  // namespace binlogctl
