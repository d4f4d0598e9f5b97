// binlogctl convert --format canal-proto|canal-json: Canal's view of a binlog (target
// binlogctl_canal; needs protobuf). The mapping follows Canal's MySQL parser (LogEventConvert):
//   per transaction  TRANSACTIONBEGIN{threadId}  (at BEGIN / XA START; MariaDB: at a GTID event
//                    that opens a transaction), one ROWDATA entry per rows event, TRANSACTIONEND
//                    {transactionId = xid, "0" for a COMMIT statement}
//   GTID events      a GTIDLOG entry (Pairs gtid, lastCommitted, sequenceNumber; MariaDB: gtid)
//   DDL / statement  a ROWDATA entry with isDdl, sql, ddlSchemaName and the eventType found from
//                    the statement's leading keywords
// Column sqlType/value follow Canal's RowsLogBuffer (unsigned quirk included), mysqlType is
// rebuilt from the TABLE_MAP (design/canal.md §4-5; man/binlogctl-convert.1.scd).
// The public interface hides the generated protobuf classes (proto/*.proto).
#pragma once

#include <binlogctl/convert.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace binlogctl {

enum class CanalFormat : std::uint8_t { proto, json };
enum class CanalCompression : std::uint8_t { none, zlib, gzip };

struct CanalOptions {
  CanalFormat format = CanalFormat::proto;
  // TIMESTAMP rendering zone: "UTC", a fixed offset "+08:00" / "-05:30", or an IANA name
  // ("Asia/Shanghai", looked up in the system time zone database).
  std::string timezone = "UTC";
  // Entries per Canal Message (the FlatMessage id is the 1-based batch number).
  std::uint32_t batch_size = 50;
  // canal-proto only: instead of delimited entries, what a Canal server writes on its socket for
  // each batch: 4-byte big-endian length, Packet{version 1, type MESSAGES, [compression],
  // body = Messages{batch_id, messages = the serialized entries}}. With zlib/gzip the body is
  // compressed and Packet.compression says so.
  bool packets = false;
  CanalCompression compression = CanalCompression::none;
  // With rendering threads (ConvertOptions::render_threads): a batch is handed on once its
  // copied row images pass this many bytes. Larger than json's: a Canal batch's output is
  // larger per input byte, and fewer hand-offs measured faster (bench/README.md).
  std::size_t render_batch_bytes = 128 * 1024;
};

// Whether `tz` is a --timezone value canal output accepts.
bool canal_timezone_valid(std::string_view tz);

// Java's Double.toString / Float.toString (Canal renders FLOAT and DOUBLE columns through them).
std::string java_double_string(double v);
std::string java_float_string(float v);

// The Canal EventType number (EntryProtocol.proto) a DDL or other statement maps to: CREATE(4),
// ALTER(5), ERASE(6), QUERY(7), TRUNCATE(8), RENAME(9), CINDEX(10), DINDEX(11); statement-based
// INSERT/REPLACE(1), UPDATE(2), DELETE(3).
int canal_statement_event_type(std::string_view sql) noexcept;

// Like run_convert, writing Canal entries: canal-proto = each Entry length-delimited (varint
// size prefix), or packets (CanalOptions::packets); canal-json = one FlatMessage JSON line per
// ROWDATA entry.
int run_canal_convert(const ConvertOptions& opts, const CanalOptions& canal, std::FILE* out, std::FILE* err);

}  // namespace binlogctl
