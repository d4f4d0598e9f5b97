#include <binlogctl/event_type.h>

namespace binlogctl {
namespace {

struct TypeNames {
  std::string_view mysql;     // SHOW BINLOG EVENTS on MySQL
  std::string_view mariadb;   // SHOW BINLOG EVENTS on MariaDB ("" = same as MySQL)
  std::string_view constant;  // upstream constant
};

constexpr TypeNames kMysqlTypes[kLastMysqlType + 1] = {
    {"Unknown", "", "UNKNOWN_EVENT"},
    {"Start_v3", "", "START_EVENT_V3"},
    {"Query", "", "QUERY_EVENT"},
    {"Stop", "", "STOP_EVENT"},
    {"Rotate", "", "ROTATE_EVENT"},
    {"Intvar", "", "INTVAR_EVENT"},
    {"Load", "", "LOAD_EVENT"},
    {"Slave", "", "SLAVE_EVENT"},
    {"Create_file", "", "CREATE_FILE_EVENT"},
    {"Append_block", "", "APPEND_BLOCK_EVENT"},
    {"Exec_load", "", "EXEC_LOAD_EVENT"},
    {"Delete_file", "", "DELETE_FILE_EVENT"},
    {"New_load", "", "NEW_LOAD_EVENT"},
    {"RAND", "", "RAND_EVENT"},
    {"User var", "", "USER_VAR_EVENT"},
    {"Format_desc", "", "FORMAT_DESCRIPTION_EVENT"},
    {"Xid", "", "XID_EVENT"},
    {"Begin_load_query", "", "BEGIN_LOAD_QUERY_EVENT"},
    {"Execute_load_query", "", "EXECUTE_LOAD_QUERY_EVENT"},
    {"Table_map", "", "TABLE_MAP_EVENT"},
    {"Write_rows_event_old", "", "PRE_GA_WRITE_ROWS_EVENT"},
    {"Update_rows_event_old", "", "PRE_GA_UPDATE_ROWS_EVENT"},
    {"Delete_rows_event_old", "", "PRE_GA_DELETE_ROWS_EVENT"},
    {"Write_rows_v1", "", "WRITE_ROWS_EVENT_V1"},
    {"Update_rows_v1", "", "UPDATE_ROWS_EVENT_V1"},
    {"Delete_rows_v1", "", "DELETE_ROWS_EVENT_V1"},
    {"Incident", "", "INCIDENT_EVENT"},
    {"Heartbeat", "", "HEARTBEAT_LOG_EVENT"},
    {"Ignorable", "Ignorable log event", "IGNORABLE_LOG_EVENT"},
    {"Rows_query", "MySQL Rows_query", "ROWS_QUERY_LOG_EVENT"},
    {"Write_rows", "", "WRITE_ROWS_EVENT"},
    {"Update_rows", "", "UPDATE_ROWS_EVENT"},
    {"Delete_rows", "", "DELETE_ROWS_EVENT"},
    {"Gtid", "MySQL Gtid", "GTID_LOG_EVENT"},
    {"Anonymous_Gtid", "MySQL Anonymous_Gtid", "ANONYMOUS_GTID_LOG_EVENT"},
    {"Previous_gtids", "MySQL Previous_gtids", "PREVIOUS_GTIDS_LOG_EVENT"},
    {"Transaction_context", "", "TRANSACTION_CONTEXT_EVENT"},
    {"View_change", "", "VIEW_CHANGE_EVENT"},
    {"XA_prepare", "", "XA_PREPARE_LOG_EVENT"},
    {"Update_rows_partial", "MySQL Update_rows_partial", "PARTIAL_UPDATE_ROWS_EVENT"},
    {"Transaction_payload", "MySQL Transaction_payload", "TRANSACTION_PAYLOAD_EVENT"},
    {"Unknown", "MySQL Heartbeat", "HEARTBEAT_LOG_EVENT_V2"},
    {"Gtid_tagged_log_event", "Unknown", "GTID_TAGGED_LOG_EVENT"},
};

constexpr TypeNames kMariaTypes[kLastMariaType - kFirstMariaType + 1] = {
    {"Annotate_rows", "", "ANNOTATE_ROWS_EVENT"},
    {"Binlog_checkpoint", "", "BINLOG_CHECKPOINT_EVENT"},
    {"Gtid", "", "GTID_EVENT"},
    {"Gtid_list", "", "GTID_LIST_EVENT"},
    {"Start_encryption", "", "START_ENCRYPTION_EVENT"},
    {"Query_compressed", "", "QUERY_COMPRESSED_EVENT"},
    {"Write_rows_compressed_v1", "", "WRITE_ROWS_COMPRESSED_EVENT_V1"},
    {"Update_rows_compressed_v1", "", "UPDATE_ROWS_COMPRESSED_EVENT_V1"},
    {"Delete_rows_compressed_v1", "", "DELETE_ROWS_COMPRESSED_EVENT_V1"},
    {"Write_rows_compressed", "", "WRITE_ROWS_COMPRESSED_EVENT"},
    {"Update_rows_compressed", "", "UPDATE_ROWS_COMPRESSED_EVENT"},
    {"Delete_rows_compressed", "", "DELETE_ROWS_COMPRESSED_EVENT"},
};

const TypeNames* lookup(std::uint8_t code) noexcept {
  if (code <= kLastMysqlType) return &kMysqlTypes[code];
  if (code >= kFirstMariaType && code <= kLastMariaType) return &kMariaTypes[code - kFirstMariaType];
  return nullptr;
}

}  // namespace


std::string_view event_type_name(std::uint8_t code, Flavor flavor, std::uint32_t version) noexcept {
  const TypeNames* t = lookup(code);
  if (t == nullptr) return "Unknown";
  if (flavor == Flavor::mariadb) return t->mariadb.empty() ? t->mysql : t->mariadb;
  if (code >= 160) return "Unknown";  // MySQL does not know MariaDB's codes
  if (version != 0 && version < 0x050600) {
    // MySQL 5.1/5.5 name codes 23..25 without the _v1 suffix and know nothing past 26.
    if (code == 23) return "Write_rows";
    if (code == 24) return "Update_rows";
    if (code == 25) return "Delete_rows";
    if (code > 26) return "Unknown";
  }
  if (version >= 0x080000) {
    // MySQL 8.0 dropped the pre-5.0 LOAD events, Start_v3 and the pre-GA rows events.
    switch (code) {
      case 1: case 6: case 7: case 8: case 10: case 12: case 20: case 21: case 22: return "Unknown";
      default: break;
    }
  } else if (code == 7 && version >= 0x050600) {
    return "Unknown";
  }
  return t->mysql;
}

std::string_view event_type_constant(std::uint8_t code) noexcept {
  const TypeNames* t = lookup(code);
  return t == nullptr ? std::string_view("UNKNOWN_EVENT") : t->constant;
}

}  // namespace binlogctl
