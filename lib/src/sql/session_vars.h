// The session variables of the SQL output (convert --format sql, sql_convert.cpp): the SET lines
// before a statement, each variable written only when the value it needs differs from the last
// one written.
#pragma once

#include "events/events.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl::sql_detail {

class SessionVars {
 public:
  // What row statements need: UTC for TIMESTAMP literals, utf8mb4 for identifiers, a sql_mode
  // that stores the values as given (NO_AUTO_VALUE_ON_ZERO keeps an explicit 0 in an
  // AUTO_INCREMENT column; no STRICT, so zero dates are accepted as the source had them), the
  // event's time (`timestamp`) for ON UPDATE CURRENT_TIMESTAMP columns, and the checks the event
  // was run with (the rows event's flags).
  void rows(std::string& s, std::uint32_t timestamp, std::uint16_t rows_flags);
  // What a statement logged as a statement ran with: its QUERY event's status variables.
  void query(std::string& s, std::uint32_t timestamp, const QueryEvent& q);

 private:
  // Session variables the output sets, each written only when the value it needs differs from
  // the last one written.
  enum Var : std::size_t {
    kPseudoThreadId,
    kTimestamp,
    kSqlMode,
    kTimeZone,
    kCharsetClient,
    kCollationConnection,
    kCollationServer,
    kForeignKeyChecks,
    kUniqueChecks,
    kAutoIsNull,
    kAutocommit,
    kVarCount
  };
  static constexpr const char* kVarNames[kVarCount] = {
      "pseudo_thread_id",     "timestamp",          "sql_mode",      "time_zone",           "character_set_client",
      "collation_connection", "collation_server",   "foreign_key_checks", "unique_checks", "sql_auto_is_null",
      "autocommit"};

  void set(std::string& s, const std::array<const std::string*, kVarCount>& want);
  static std::string quote_plain(std::string_view v);

  std::array<std::string, kVarCount> have_{};
  std::array<bool, kVarCount> have_set_{};
};

}  // namespace binlogctl::sql_detail
