// Typed views of event bodies, decoded on demand. Every string_view / Bytes member borrows
// from the event (see Event in event_stream.h for the lifetime). Each decoder takes a reader
// over the body (checksum already hidden) and the FDE in force, and never throws.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/fde.h>
#include <binlogctl/result.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

// ---- QUERY_EVENT (2), MariaDB QUERY_COMPRESSED_EVENT (165) --------------------------------------
// Post-header (13 bytes): thread_id 4, exec_time 4, db_len 1, error_code 2, status_vars_len 2.
// Then status variables, db + NUL, then the statement to the end of the body.
struct QueryEvent {
  std::uint32_t thread_id = 0;
  std::uint32_t exec_time = 0;
  std::uint16_t error_code = 0;
  Bytes status_vars;
  std::string_view db;
  std::string_view sql;  // for QUERY_COMPRESSED: the compressed bytes (see decompress_mariadb)
  // Decoded status variables (present_* tell which were there).
  bool has_flags2 = false, has_sql_mode = false, has_charset = false, has_xid = false, has_ddl_xid = false;
  std::uint32_t flags2 = 0;
  std::uint64_t sql_mode = 0;
  std::uint16_t charset_client = 0, collation_connection = 0, collation_server = 0;
  std::string_view catalog, time_zone;
  std::uint64_t xid = 0;              // MariaDB Q_XID (DDL with XID)
  std::uint64_t ddl_xid = 0;          // MySQL Q_DDL_LOGGED_WITH_XID
  std::uint32_t microseconds = 0;     // Q_MICROSECONDS / MariaDB Q_HRNOW
  std::uint16_t default_collation_utf8mb4 = 0;
};
Result<QueryEvent> decode_query(ByteReader r, const Fde& fde);
// The statement of a QUERY (2) or MariaDB QUERY_COMPRESSED (165) event, the latter inflated
// into `buf` (the result's sql then views it). On failure `*failed_layer` (when given) is
// "QUERY" when the event does not decode, "QUERY_COMPRESSED" when its statement does not inflate.
Result<QueryEvent> decode_statement(const Event& ev, std::string& buf, std::string_view* failed_layer = nullptr);

// ---- ROTATE_EVENT (4) -------------------------------------------------------------------------
struct RotateEvent {
  std::uint64_t position = 4;
  std::string_view next_file;
};
Result<RotateEvent> decode_rotate(ByteReader r, const Fde& fde);

// ---- XID_EVENT (16) ---------------------------------------------------------------------------
struct XidEvent { std::uint64_t xid = 0; };
Result<XidEvent> decode_xid(ByteReader r, const Fde& fde);

// ---- INTVAR_EVENT (5) -------------------------------------------------------------------------
struct IntvarEvent {
  std::uint8_t type = 0;  // 1 LAST_INSERT_ID, 2 INSERT_ID
  std::uint64_t value = 0;
};
Result<IntvarEvent> decode_intvar(ByteReader r, const Fde& fde);

// ---- RAND_EVENT (13) --------------------------------------------------------------------------
struct RandEvent { std::uint64_t seed1 = 0, seed2 = 0; };
Result<RandEvent> decode_rand(ByteReader r, const Fde& fde);

// ---- USER_VAR_EVENT (14) ----------------------------------------------------------------------
struct UserVarEvent {
  std::string_view name;
  bool is_null = false;
  std::uint8_t value_type = 0;  // 0 STRING, 1 REAL, 2 INT, 3 ROW, 4 DECIMAL
  std::uint32_t charset = 0;    // collation id
  Bytes value;
  bool has_flags = false;
  std::uint8_t flags = 0;       // 1 = unsigned
};
Result<UserVarEvent> decode_user_var(ByteReader r, const Fde& fde);

// ---- INCIDENT_EVENT (26) ----------------------------------------------------------------------
struct IncidentEvent {
  std::uint16_t type = 0;  // 1 LOST_EVENTS
  std::string_view message;
};
Result<IncidentEvent> decode_incident(ByteReader r, const Fde& fde);

// ---- ROWS_QUERY (29) / MariaDB ANNOTATE_ROWS (160) --------------------------------------------
struct TextEvent { std::string_view text; };
Result<TextEvent> decode_rows_query(ByteReader r, const Fde& fde);
Result<TextEvent> decode_annotate_rows(ByteReader r, const Fde& fde);

// ---- MariaDB BINLOG_CHECKPOINT (161) ----------------------------------------------------------
struct BinlogCheckpointEvent { std::string_view file; };
Result<BinlogCheckpointEvent> decode_binlog_checkpoint(ByteReader r, const Fde& fde);

// ---- MariaDB START_ENCRYPTION (164) -----------------------------------------------------------
struct StartEncryptionEvent {
  std::uint8_t scheme = 0;
  std::uint32_t key_version = 0;
  Bytes nonce;
};
Result<StartEncryptionEvent> decode_start_encryption(ByteReader r, const Fde& fde);

// ---- TABLE_MAP_EVENT (19) ---------------------------------------------------------------------
struct TableMapEvent {
  std::uint64_t table_id = 0;
  std::uint16_t flags = 0;
  std::string_view db, table;
  std::uint64_t column_count = 0;
  Bytes column_types;   // one byte per column
  Bytes metadata;       // per-column metadata block
  Bytes null_bitmap;    // (column_count + 7) / 8 bytes
  Bytes optional_metadata;  // TLV block (binlog_row_metadata), may be empty
  // The server that wrote it (from the FDE in force): MySQL and MariaDB count the columns of the
  // optional metadata differently (table_map.h).
  Flavor flavor = Flavor::mysql;
  std::uint32_t server_version = 0;  // Fde::version_product; 0 = unknown
};
Result<TableMapEvent> decode_table_map(ByteReader r, const Fde& fde);

// ---- rows events (20..25, 30..32, 39, MariaDB 166..171) ---------------------------------------
struct RowsEventHeader {
  std::uint64_t table_id = 0;
  std::uint16_t flags = 0;  // 1 STMT_END_F, 2 NO_FOREIGN_KEY_CHECKS_F, 4 RELAXED_UNIQUE_CHECKS_F, 8 COMPLETE_ROWS_F
  Bytes extra;              // v2 extra row info (after its 2-byte length)
  std::uint64_t width = 0;  // number of columns
  Bytes columns_before;     // column bitmap (present columns, before image)
  Bytes columns_after;      // update events: present columns in the after image
  Bytes rows;               // row images (for MariaDB compressed events: still compressed)
  std::uint64_t rows_offset = 0;  // absolute offset of `rows`
};
constexpr std::uint16_t kRowsStmtEnd = 0x1;
Result<RowsEventHeader> decode_rows_header(ByteReader r, const Fde& fde, std::uint8_t type_code);

// ---- TRANSACTION_PAYLOAD_EVENT (40) -----------------------------------------------------------
// Body: TLV fields (type and length as packed integers) until the end mark (0), then the
// compressed payload: 1 payload_size, 2 compression_type (0 ZSTD, 255 NONE), 3 uncompressed_size.
struct TransactionPayloadEvent {
  std::uint64_t payload_size = 0;
  std::uint64_t compression_type = 0;
  std::uint64_t uncompressed_size = 0;
  Bytes payload;
  std::uint64_t payload_offset = 0;
};
Result<TransactionPayloadEvent> decode_transaction_payload(ByteReader r, const Fde& fde);
std::string_view compression_name(std::uint64_t type) noexcept;  // "ZSTD", "NONE"

// ---- XA_PREPARE_LOG_EVENT (38) ----------------------------------------------------------------
struct XaPrepareEvent {
  bool one_phase = false;
  std::int32_t format_id = 0;
  Bytes gtrid, bqual;
};
Result<XaPrepareEvent> decode_xa_prepare(ByteReader r, const Fde& fde);

// ---- LOAD DATA family (8, 9, 10, 11, 17, 18) ---------------------------------------------------
struct LoadBlockEvent {  // APPEND_BLOCK, BEGIN_LOAD_QUERY, CREATE_FILE (block), EXEC_LOAD, DELETE_FILE
  std::uint32_t file_id = 0;
  Bytes block;
};
Result<LoadBlockEvent> decode_load_block(ByteReader r, const Fde& fde, std::uint8_t type_code);
struct ExecuteLoadQueryEvent {
  QueryEvent query;
  std::uint32_t file_id = 0;
  std::uint32_t fn_pos_start = 0, fn_pos_end = 0;
  std::uint8_t dup_handling = 0;
};
Result<ExecuteLoadQueryEvent> decode_execute_load_query(ByteReader r, const Fde& fde);

// ---- HEARTBEAT (27, 41) ------------------------------------------------------------------------
struct HeartbeatEvent { std::string_view log_ident; std::uint64_t position = 0; };
Result<HeartbeatEvent> decode_heartbeat(ByteReader r, const Fde& fde, std::uint8_t type_code);

// MariaDB compressed events: a 1-byte header (0x80 | bytes-of-length), the uncompressed length
// big-endian, then zlib data. Decompresses into out (bounded by the declared length, which
// must be plausible for the input size).
Status decompress_mariadb(Bytes compressed, std::uint64_t offset, std::string& out);

// ---- two servers' copies of one event ---------------------------------------------------------
// What a transaction's event does, without what each server numbers its own way (table ids,
// XIDs, end_log_pos, CRC32, group commit ids, exec_time): the GTID triple of a GTID event; db,
// statement and error code of a QUERY; the bytes after the table id of a TABLE_MAP or rows
// event; nothing of an XID; the whole body of any other. Equal type and text: the same event.
// Any bytes (type 0 and no text for fewer than a header's).
struct ComparableEvent {
  std::uint8_t type = 0;
  std::string text;
};
ComparableEvent comparable_event(Bytes raw, const Fde& fde);
// Why one server's events cannot go on in a file another began (checksum, binlog version,
// post-header lengths), or "" when they can.
std::string format_difference(const Fde& a, const Fde& b);

}  // namespace binlogctl
