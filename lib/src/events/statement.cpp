// Statement-level events: QUERY (and MariaDB's compressed form), the LOAD DATA family,
// INTVAR, RAND, USER_VAR, XID, ROTATE, INCIDENT, ROWS_QUERY, ANNOTATE_ROWS, HEARTBEAT.
#include "events/events.h"

#include <zlib.h>
#include <algorithm>

namespace binlogctl {
namespace {

// Status variable codes (Q_*). MySQL 0..20, MariaDB from 128.
void walk_status_vars(ByteReader s, QueryEvent& q) {
  while (s.ok() && !s.empty()) {
    const std::uint8_t code = s.u8();
    switch (code) {
      case 0: q.flags2 = s.u32(); q.has_flags2 = true; break;                 // Q_FLAGS2_CODE
      case 1: q.sql_mode = s.u64(); q.has_sql_mode = true; break;             // Q_SQL_MODE_CODE
      case 2: { std::size_t n = s.u8(); q.catalog = s.str(n); s.skip(1); break; }  // Q_CATALOG_CODE
      case 3: s.skip(4); break;                                              // Q_AUTO_INCREMENT
      case 4:                                                                // Q_CHARSET_CODE
        q.charset_client = s.u16();
        q.collation_connection = s.u16();
        q.collation_server = s.u16();
        q.has_charset = true;
        break;
      case 5: { std::size_t n = s.u8(); q.time_zone = s.str(n); break; }     // Q_TIME_ZONE_CODE
      case 6: { std::size_t n = s.u8(); q.catalog = s.str(n); break; }       // Q_CATALOG_NZ_CODE
      case 7: s.skip(2); break;                                              // Q_LC_TIME_NAMES_CODE
      case 8: s.skip(2); break;                                              // Q_CHARSET_DATABASE_CODE
      case 9: s.skip(8); break;                                              // Q_TABLE_MAP_FOR_UPDATE_CODE
      case 10: s.skip(4); break;                                             // Q_MASTER_DATA_WRITTEN_CODE
      case 11: { std::size_t n = s.u8(); s.skip(n); n = s.u8(); s.skip(n); break; }  // Q_INVOKER
      case 12: {                                                             // Q_UPDATED_DB_NAMES
        std::uint8_t count = s.u8();
        if (count == 254) break;  // OVER_MAX_DBS_IN_EVENT_MTS: no names follow
        for (std::uint8_t i = 0; i < count && s.ok(); ++i) {
          Bytes rest = s.data().subspan(s.position());
          std::size_t len = 0;
          while (len < rest.size() && rest[len] != 0) ++len;
          s.skip(len + 1);
        }
        break;
      }
      case 13: q.microseconds = static_cast<std::uint32_t>(s.le_n(3)); break;  // Q_MICROSECONDS
      case 16: s.skip(1); break;   // Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP
      case 17: q.ddl_xid = s.u64(); q.has_ddl_xid = true; break;  // Q_DDL_LOGGED_WITH_XID
      case 18: q.default_collation_utf8mb4 = s.u16(); break;  // Q_DEFAULT_COLLATION_FOR_UTF8MB4
      case 19: s.skip(1); break;   // Q_SQL_REQUIRE_PRIMARY_KEY
      case 20: s.skip(1); break;   // Q_DEFAULT_TABLE_ENCRYPTION
      case 128: q.microseconds = static_cast<std::uint32_t>(s.le_n(3)); break;  // MariaDB Q_HRNOW
      case 129: q.xid = s.u64(); q.has_xid = true; break;                       // MariaDB Q_XID
      case 130: s.skip(1); break;  // MariaDB Q_GTID_FLAGS3
      default:
        return;  // an unknown code: its length is unknown, so stop (as the servers do)
    }
  }
}

Result<QueryEvent> decode_query_common(ByteReader& r, std::size_t post_header, Bytes* extra = nullptr) {
  QueryEvent q;
  if (post_header < 11) return DecodeError{Errc::bad_length, r.offset(), "QUERY post-header shorter than 11 bytes"};
  q.thread_id = r.u32();
  q.exec_time = r.u32();
  std::size_t db_len = r.u8();
  q.error_code = r.u16();
  std::size_t status_len = 0;
  if (post_header >= 13) status_len = r.u16();
  Bytes more = r.bytes(post_header - (post_header >= 13 ? 13 : 11));
  if (extra != nullptr) *extra = more;
  ByteReader status = r.sub(status_len);
  q.status_vars = status.data();
  q.db = r.str(db_len);
  r.skip(1);  // NUL after the db name
  if (!r.ok()) return r.error();
  walk_status_vars(status, q);
  return q;
}

}  // namespace

Result<QueryEvent> decode_query(ByteReader r, const Fde& fde) {
  std::uint8_t ph = fde.post_header(EventType::query);
  if (ph == 0) ph = 13;
  auto q = decode_query_common(r, ph);
  if (!q) return q;
  q->sql = as_string_view(r.rest());
  if (!r.ok()) return r.error();
  return q;
}

Result<QueryEvent> decode_statement(const Event& ev, std::string& buf, std::string_view* failed_layer) {
  auto q = decode_query(ev.body_reader(), *ev.fde);
  if (!q) {
    if (failed_layer != nullptr) *failed_layer = "QUERY";
    return q;
  }
  if (ev.type() == EventType::mariadb_query_compressed) {
    const Bytes packed(reinterpret_cast<const std::uint8_t*>(q->sql.data()), q->sql.size());
    Status st = decompress_mariadb(packed, ev.body_offset(), buf);
    if (!st.ok()) {
      if (failed_layer != nullptr) *failed_layer = "QUERY_COMPRESSED";
      return st.error();
    }
    q->sql = buf;
  }
  return q;
}

Result<ExecuteLoadQueryEvent> decode_execute_load_query(ByteReader r, const Fde& fde) {
  // The QUERY post-header, then file_id 4, fn_pos_start 4, fn_pos_end 4, dup_handling 1.
  std::uint8_t ph = fde.post_header(EventType::execute_load_query);
  if (ph < 26) ph = 26;
  Bytes extra;
  auto q = decode_query_common(r, ph, &extra);
  if (!q) return q.error();
  ExecuteLoadQueryEvent e;
  ByteReader x(extra, 0);
  e.file_id = x.u32();
  e.fn_pos_start = x.u32();
  e.fn_pos_end = x.u32();
  e.dup_handling = x.u8();
  e.query = std::move(q.value());
  e.query.sql = as_string_view(r.rest());
  if (!r.ok()) return r.error();
  return e;
}

Result<RotateEvent> decode_rotate(ByteReader r, const Fde& fde) {
  RotateEvent ev;
  std::uint8_t ph = fde.post_header(EventType::rotate);
  if (ph == 0) ph = 8;
  if (ph >= 8) {
    ev.position = r.u64();
    r.skip(ph - 8u);
  }
  ev.next_file = as_string_view(r.rest());
  if (!r.ok()) return r.error();
  if (ev.next_file.empty()) return DecodeError{Errc::bad_length, r.offset(), "empty file name in ROTATE_EVENT"};
  return ev;
}

Result<XidEvent> decode_xid(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::xid));
  XidEvent x;
  x.xid = r.u64();
  if (!r.ok()) return r.error();
  return x;
}

Result<IntvarEvent> decode_intvar(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::intvar));
  IntvarEvent e;
  e.type = r.u8();
  e.value = r.u64();
  if (!r.ok()) return r.error();
  return e;
}

Result<RandEvent> decode_rand(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::rand));
  RandEvent e;
  e.seed1 = r.u64();
  e.seed2 = r.u64();
  if (!r.ok()) return r.error();
  return e;
}

Result<UserVarEvent> decode_user_var(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::user_var));
  UserVarEvent e;
  std::uint32_t name_len = r.u32();
  if (name_len > r.remaining()) return DecodeError{Errc::bad_length, r.offset() - 4, "USER_VAR name length past the end of the event"};
  e.name = r.str(name_len);
  e.is_null = r.u8() != 0;
  if (!e.is_null) {
    e.value_type = r.u8();
    e.charset = r.u32();
    std::uint32_t len = r.u32();
    if (len > r.remaining()) return DecodeError{Errc::bad_length, r.offset() - 4, "USER_VAR value length past the end of the event"};
    e.value = r.bytes(len);
    if (r.remaining() > 0) {
      e.has_flags = true;
      e.flags = r.u8();
    }
  }
  if (!r.ok()) return r.error();
  return e;
}

Result<IncidentEvent> decode_incident(ByteReader r, const Fde& fde) {
  std::uint8_t ph = fde.post_header(EventType::incident);
  if (ph == 0) ph = 2;
  IncidentEvent e;
  e.type = r.u16();
  r.skip(ph > 2 ? ph - 2u : 0u);
  if (r.remaining() > 0) {
    std::size_t n = r.u8();
    e.message = r.str(n);
  }
  if (!r.ok()) return r.error();
  return e;
}

Result<TextEvent> decode_rows_query(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::rows_query));
  // One length byte (the text may be longer than 255: the length is then truncated), then the text.
  r.skip(1);
  TextEvent t{as_string_view(r.rest())};
  if (!r.ok()) return r.error();
  return t;
}

Result<TextEvent> decode_annotate_rows(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::mariadb_annotate_rows));
  TextEvent t{as_string_view(r.rest())};
  if (!r.ok()) return r.error();
  return t;
}

Result<BinlogCheckpointEvent> decode_binlog_checkpoint(ByteReader r, const Fde& fde) {
  std::uint8_t ph = fde.post_header(EventType::mariadb_binlog_checkpoint);
  if (ph < 4) ph = 4;
  std::uint32_t len = r.u32();
  r.skip(ph - 4u);
  BinlogCheckpointEvent e;
  if (len > r.remaining()) return DecodeError{Errc::bad_length, r.offset(), "BINLOG_CHECKPOINT file name length past the end of the event"};
  e.file = r.str(len);
  if (!r.ok()) return r.error();
  return e;
}

Result<StartEncryptionEvent> decode_start_encryption(ByteReader r, const Fde&) {
  StartEncryptionEvent e;
  e.scheme = r.u8();
  e.key_version = r.u32();
  e.nonce = r.bytes(12);
  if (!r.ok()) return r.error();
  return e;
}

Result<HeartbeatEvent> decode_heartbeat(ByteReader r, const Fde& fde, std::uint8_t type_code) {
  r.skip(fde.post_header(type_code));
  HeartbeatEvent e;
  e.log_ident = as_string_view(r.rest());
  if (!r.ok()) return r.error();
  return e;
}

Result<XaPrepareEvent> decode_xa_prepare(ByteReader r, const Fde& fde) {
  r.skip(fde.post_header(EventType::xa_prepare));
  XaPrepareEvent e;
  e.one_phase = r.u8() != 0;
  e.format_id = static_cast<std::int32_t>(r.u32());
  std::uint32_t gl = r.u32();
  std::uint32_t bl = r.u32();
  if (gl > 64 || bl > 64) return DecodeError{Errc::bad_length, r.offset() - 8, "XA_PREPARE gtrid/bqual longer than 64 bytes"};
  e.gtrid = r.bytes(gl);
  e.bqual = r.bytes(bl);
  if (!r.ok()) return r.error();
  return e;
}

Result<LoadBlockEvent> decode_load_block(ByteReader r, const Fde& fde, std::uint8_t type_code) {
  std::uint8_t ph = fde.post_header(type_code);
  if (ph < 4) ph = 4;
  LoadBlockEvent e;
  e.file_id = r.u32();
  r.skip(ph - 4u);
  e.block = r.rest();
  if (!r.ok()) return r.error();
  return e;
}

Status decompress_mariadb(Bytes c, std::uint64_t offset, std::string& out) {
  ByteReader r(c, offset);
  std::uint8_t head = r.u8();
  const std::size_t lenlen = head & 0x07u;
  if ((head & 0x80u) == 0 || lenlen < 1 || lenlen > 4 || ((head >> 4) & 0x07u) != 0)
    return DecodeError{Errc::unsupported_format, offset, "unknown MariaDB compressed event header"};
  std::uint64_t len = r.be_n(lenlen);
  if (!r.ok()) return r.error();
  // zlib cannot expand by more than about 1032:1, and no server writes an event past 1 GiB.
  if (len > 1032 * static_cast<std::uint64_t>(r.remaining()) + 64)
    return DecodeError{Errc::bad_length, offset, "declared uncompressed length is impossible for the compressed size"};
  if (len > kMaxEventSize)
    return DecodeError{Errc::bad_length, offset, "declared uncompressed length is past the largest event a server writes (1 GiB)"};
  // Inflated in pieces, the buffer growing with what zlib actually produces (at most twice
  // it): a declared length alone never makes us allocate.
  Bytes in = r.rest();
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return DecodeError{Errc::decompress_failed, offset, "zlib could not start"};
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  out.clear();
  std::size_t produced = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (produced == out.size()) {
      if (out.size() >= len) {  // more than declared: check whether the stream has ended
        unsigned char probe;
        z.next_out = &probe;
        z.avail_out = 1;
        rc = inflate(&z, Z_NO_FLUSH);
        if (z.avail_out == 0) rc = Z_DATA_ERROR;
        break;
      }
      const std::size_t grow = std::max<std::size_t>(std::max<std::size_t>(out.size(), 64 * 1024), in.size() * 4);
      out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(len, out.size() + grow)));
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.avail_out = static_cast<uInt>(out.size() - produced);
    rc = inflate(&z, Z_NO_FLUSH);
    produced = out.size() - z.avail_out;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended before the stream did
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != len) {
    out.clear();
    return DecodeError{Errc::decompress_failed, offset,
                       produced == len ? "zlib could not decompress the event (its stream does not end where declared)"
                                       : "zlib could not decompress the event (fewer bytes than declared)"};
  }
  out.resize(produced);
  return {};
}

}  // namespace binlogctl
