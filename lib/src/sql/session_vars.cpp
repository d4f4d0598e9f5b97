// SessionVars (session_vars.h).
#include "sql/session_vars.h"

#include <fmt/format.h>

namespace binlogctl::sql_detail {

namespace {

// OPTION_* bits of Q_FLAGS2 (sql_priv.h), which mysqlbinlog turns into session variables.
constexpr std::uint32_t kOptAutoIsNull = 1u << 14;
constexpr std::uint32_t kOptNotAutocommit = 1u << 19;
constexpr std::uint32_t kOptNoForeignKeyChecks = 1u << 26;
constexpr std::uint32_t kOptRelaxedUniqueChecks = 1u << 27;
// Rows event flags.
constexpr std::uint16_t kRowsNoForeignKeyChecks = 0x2;
constexpr std::uint16_t kRowsRelaxedUniqueChecks = 0x4;

}  // namespace

// SET statements for the session variables that `want` gives (nullptr: leave as is).
void SessionVars::set(std::string& s, const std::array<const std::string*, kVarCount>& want) {
  std::string sets;
  for (std::size_t i = 0; i < kVarCount; ++i) {
    if (want[i] == nullptr || (have_set_[i] && have_[i] == *want[i])) continue;
    have_[i] = *want[i];
    have_set_[i] = true;
    sets.append(sets.empty() ? "SET " : ", ");
    if (i == kTimestamp) sets.append("TIMESTAMP");
    else sets.append("@@session.").append(kVarNames[i]);
    sets.push_back('=');
    sets.append(*want[i]);
  }
  if (!sets.empty()) {
    s.append(sets);
    s.append(";\n");
  }
}

void SessionVars::rows(std::string& s, std::uint32_t timestamp, std::uint16_t rows_flags) {
  static const std::string utc = "'+00:00'", mode = "'NO_AUTO_VALUE_ON_ZERO'", utf8mb4 = "45", zero = "0",
                           one = "1";
  const std::string ts = std::to_string(timestamp);
  std::array<const std::string*, kVarCount> want{};
  want[kTimestamp] = &ts;
  want[kSqlMode] = &mode;
  want[kTimeZone] = &utc;
  want[kCharsetClient] = &utf8mb4;
  want[kCollationConnection] = &utf8mb4;
  want[kForeignKeyChecks] = (rows_flags & kRowsNoForeignKeyChecks) ? &zero : &one;
  want[kUniqueChecks] = (rows_flags & kRowsRelaxedUniqueChecks) ? &zero : &one;
  set(s, want);
}

void SessionVars::query(std::string& s, std::uint32_t timestamp, const QueryEvent& q) {
  std::string ts = std::to_string(timestamp);
  if (q.microseconds != 0) ts += fmt::format(".{:06}", q.microseconds);
  const std::string thread = std::to_string(q.thread_id);
  const std::string mode = std::to_string(q.sql_mode);
  const std::string tz = q.time_zone.empty() ? "'SYSTEM'" : quote_plain(q.time_zone);
  const std::string cc = std::to_string(q.charset_client), cn = std::to_string(q.collation_connection),
                    cs = std::to_string(q.collation_server);
  const std::string fk = (q.flags2 & kOptNoForeignKeyChecks) ? "0" : "1";
  const std::string uc = (q.flags2 & kOptRelaxedUniqueChecks) ? "0" : "1";
  const std::string ai = (q.flags2 & kOptAutoIsNull) ? "1" : "0";
  const std::string ac = (q.flags2 & kOptNotAutocommit) ? "0" : "1";
  std::array<const std::string*, kVarCount> want{};
  want[kPseudoThreadId] = &thread;
  want[kTimestamp] = &ts;
  if (q.has_sql_mode) want[kSqlMode] = &mode;
  want[kTimeZone] = &tz;
  if (q.has_charset) {
    want[kCharsetClient] = &cc;
    want[kCollationConnection] = &cn;
    want[kCollationServer] = &cs;
  }
  if (q.has_flags2) {
    want[kForeignKeyChecks] = &fk;
    want[kUniqueChecks] = &uc;
    want[kAutoIsNull] = &ai;
    want[kAutocommit] = &ac;
  }
  set(s, want);
}

std::string SessionVars::quote_plain(std::string_view v) {
  std::string r = "'";
  for (char c : v) {
    if (c == '\'') r.push_back('\'');
    if (c == '\\') r.push_back('\\');
    r.push_back(c);
  }
  r.push_back('\'');
  return r;
}

}  // namespace binlogctl::sql_detail
