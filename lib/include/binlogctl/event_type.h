// Event type codes of MySQL (0..42) and MariaDB (160..171), with the names SHOW BINLOG EVENTS
// prints for them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace binlogctl {

constexpr std::size_t kCommonHeaderLen = 19;  // LOG_EVENT_HEADER_LEN (binlog v4)
constexpr std::size_t kChecksumLen = 4;       // BINLOG_CHECKSUM_LEN
constexpr std::uint8_t kBinlogMagic[4] = {0xfe, 0x62, 0x69, 0x6e};  // "\xfebin"
constexpr std::uint16_t kFlagInUse = 0x1;     // LOG_EVENT_BINLOG_IN_USE_F
constexpr std::uint16_t kFlagArtificial = 0x20;  // LOG_EVENT_ARTIFICIAL_F
constexpr std::uint16_t kFlagRelayLog = 0x40;    // LOG_EVENT_RELAY_LOG_F

enum class EventType : std::uint8_t {
  unknown = 0,
  start_v3 = 1,
  query = 2,
  stop = 3,
  rotate = 4,
  intvar = 5,
  load = 6,
  slave = 7,
  create_file = 8,
  append_block = 9,
  exec_load = 10,
  delete_file = 11,
  new_load = 12,
  rand = 13,
  user_var = 14,
  format_description = 15,
  xid = 16,
  begin_load_query = 17,
  execute_load_query = 18,
  table_map = 19,
  pre_ga_write_rows = 20,
  pre_ga_update_rows = 21,
  pre_ga_delete_rows = 22,
  write_rows_v1 = 23,
  update_rows_v1 = 24,
  delete_rows_v1 = 25,
  incident = 26,
  heartbeat = 27,
  ignorable = 28,
  rows_query = 29,
  write_rows = 30,
  update_rows = 31,
  delete_rows = 32,
  gtid = 33,
  anonymous_gtid = 34,
  previous_gtids = 35,
  transaction_context = 36,
  view_change = 37,
  xa_prepare = 38,
  partial_update_rows = 39,
  transaction_payload = 40,
  heartbeat_v2 = 41,
  gtid_tagged_log = 42,
  // MariaDB (MARIA_EVENTS_BEGIN = 160)
  mariadb_annotate_rows = 160,
  mariadb_binlog_checkpoint = 161,
  mariadb_gtid = 162,
  mariadb_gtid_list = 163,
  mariadb_start_encryption = 164,
  mariadb_query_compressed = 165,
  mariadb_write_rows_compressed_v1 = 166,
  mariadb_update_rows_compressed_v1 = 167,
  mariadb_delete_rows_compressed_v1 = 168,
  mariadb_write_rows_compressed = 169,
  mariadb_update_rows_compressed = 170,
  mariadb_delete_rows_compressed = 171,
};

enum class Flavor : std::uint8_t { mysql, mariadb };

// The codes this version knows: MySQL's 1..kLastMysqlType, MariaDB's kFirstMariaType..kLastMariaType
// (event_type.cpp's name tables are checked against these).
inline constexpr std::uint8_t kLastMysqlType = 42;
inline constexpr std::uint8_t kFirstMariaType = 160;
inline constexpr std::uint8_t kLastMariaType = 171;
// True for the codes this version knows. Inline: every reader asks it once an event.
constexpr bool is_known_event_type(std::uint8_t code) noexcept {
  return (code != 0 && code <= kLastMysqlType) || (code >= kFirstMariaType && code <= kLastMariaType);
}
// The name SHOW BINLOG EVENTS prints for this code on a server of this flavor and version
// (major << 16 | minor << 8 | patch; 0 = unknown, taken as current): "Write_rows_v1" for code 23
// on MySQL 5.6+ and MariaDB, "Write_rows" on MySQL 5.1/5.5, "Unknown" where that server has no
// name for the code.
std::string_view event_type_name(std::uint8_t code, Flavor flavor, std::uint32_t version = 0) noexcept;
// The upstream constant name ("WRITE_ROWS_EVENT"), for messages.
std::string_view event_type_constant(std::uint8_t code) noexcept;

// The rows events, written once (classify_rows_event, here): every test of "is this a rows
// event, which kind, which version" goes through it. Inline: every consumer asks it of every
// event (a call was 3% of verify's instructions).
enum class RowsKind : std::uint8_t { insert, update, delete_ };

struct RowsEventKind {
  RowsKind kind = RowsKind::insert;
  std::uint8_t version = 1;  // 0 pre-GA (20-22), 1 (23-25, MariaDB 166-168), 2 (30-32, 39, 169-171)
  bool partial_json = false;  // PARTIAL_UPDATE_ROWS (39)
  bool compressed = false;    // MariaDB 166-171: rows part is zlib-compressed (decompress_mariadb)
};

namespace detail {
struct RowsCode {
  bool rows = false;
  RowsEventKind kind;
};
// Indexed by type code: a load, where a switch compiled to a call of 18 instructions.
inline constexpr std::array<RowsCode, 256> kRowsCodes = [] {
  std::array<RowsCode, 256> t{};
  auto set = [&t](std::uint8_t code, RowsKind k, std::uint8_t version, bool partial, bool compressed) {
    t[code] = RowsCode{true, RowsEventKind{k, version, partial, compressed}};
  };
  set(20, RowsKind::insert, 0, false, false);
  set(21, RowsKind::update, 0, false, false);
  set(22, RowsKind::delete_, 0, false, false);
  set(23, RowsKind::insert, 1, false, false);
  set(24, RowsKind::update, 1, false, false);
  set(25, RowsKind::delete_, 1, false, false);
  set(30, RowsKind::insert, 2, false, false);
  set(31, RowsKind::update, 2, false, false);
  set(32, RowsKind::delete_, 2, false, false);
  set(39, RowsKind::update, 2, true, false);  // PARTIAL_UPDATE_ROWS
  set(166, RowsKind::insert, 1, false, true);  // MariaDB's compressed rows events
  set(167, RowsKind::update, 1, false, true);
  set(168, RowsKind::delete_, 1, false, true);
  set(169, RowsKind::insert, 2, false, true);
  set(170, RowsKind::update, 2, false, true);
  set(171, RowsKind::delete_, 2, false, true);
  return t;
}();
}  // namespace detail

// The rows-event family of a type code, or nullopt for other events.
constexpr std::optional<RowsEventKind> classify_rows_event(std::uint8_t t) noexcept {
  const detail::RowsCode& c = detail::kRowsCodes[t];
  if (!c.rows) return std::nullopt;
  return c.kind;
}

// Classification helpers (classify_rows_event's list).
constexpr bool is_rows_event(std::uint8_t code) noexcept {  // 20..25, 30..32, 39, 166..171
  return classify_rows_event(code).has_value();
}
constexpr bool is_mariadb_compressed_rows(std::uint8_t code) noexcept {
  const std::optional<RowsEventKind> k = classify_rows_event(code);
  return k && k->compressed;
}

// The events about a file rather than a transaction's content: its header (FORMAT_DESCRIPTION,
// Previous_gtids, Gtid_list, START_ENCRYPTION), its end (ROTATE, STOP) and MariaDB's
// BINLOG_CHECKPOINT. Server-id selection always passes them; coverage counts them in no
// transaction.
constexpr bool is_file_event(EventType t) noexcept {
  switch (t) {
    case EventType::format_description:
    case EventType::rotate:
    case EventType::stop:
    case EventType::previous_gtids:
    case EventType::mariadb_gtid_list:
    case EventType::mariadb_binlog_checkpoint:
    case EventType::mariadb_start_encryption: return true;
    default: return false;
  }
}

}  // namespace binlogctl

template <>
struct fmt::formatter<binlogctl::EventType> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(binlogctl::EventType t, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(
        binlogctl::event_type_constant(static_cast<std::uint8_t>(t)), ctx);
  }
};
