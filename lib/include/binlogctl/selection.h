// Selection shared by every consumer of the row-change stream: Canal's table filter and GTID
// sets. (Positions and times are selected where events are read: chain.h.)
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/gtid.h>
#include <binlogctl/result.h>
#include <binlogctl/transaction.h>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binlogctl {

// Canal's table filter (canal.instance.filter.regex, AviaterRegexFilter): comma-separated
// regular expressions, each matched against the whole "schema.table" text (as if wrapped in
// ^...$), case-insensitively (the target is lower-cased). An empty rule list matches everything.
// Example: `shop\..*,crm.users`.
class TableFilter {
 public:
  // Errors: Errc::bad_value with offset = the position of the rule that does not compile.
  static Result<TableFilter> parse(std::string_view rules);
  // Also notes which rules matched (thread-safe), for unmatched_rules().
  bool matches(std::string_view schema, std::string_view table) const;
  // The rules (as written, blanks trimmed) that no call to matches() has matched so far.
  std::vector<std::string> unmatched_rules() const;
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  struct Rules;  // the compiled std::regex list (filter.cpp)
  std::shared_ptr<const Rules> rules_;
  std::size_t size_ = 0;
};

// mysqlbinlog's -d/--database for event listings (dump): keeps the events that concern database
// `db` (compared exactly, as mysqlbinlog does): statements whose default database is `db`,
// TABLE_MAPs of its tables and the rows events that use them; transaction keywords (BEGIN,
// COMMIT, ROLLBACK, SAVEPOINT, XA) and every other event (GTID, XID, file events, ...) always.
// Call keep() for every event in stream order, reset() at each new file.
class DatabaseFilter {
 public:
  explicit DatabaseFilter(std::string db) : db_(std::move(db)) {}
  bool keep(const Event& ev);
  void reset() { skipped_tables_.clear(); }
  // Whether any statement or TABLE_MAP of the database was met (warn_unmatched_database).
  bool matched() const noexcept { return matched_; }

 private:
  std::string db_;
  std::string sql_buf_;
  std::vector<std::uint64_t> skipped_tables_;  // table ids of other databases' TABLE_MAPs
  bool matched_ = false;
};

// mysqlbinlog's -d/--database for the row-change consumers (convert's JSON, Canal and SQL): a
// table, or a statement by its default database, is selected when it is of database `db`
// (compared exactly), everything when `db` is empty; each selection notes the match for
// warn_unmatched_database.
class DatabaseSelection {
 public:
  explicit DatabaseSelection(std::string db) : db_(std::move(db)) {}
  bool selects(std::string_view db) {
    if (db_.empty()) return true;
    if (db != db_) return false;
    matched_ = true;
    return true;
  }
  // Whether any table or statement of the database was selected (warn_unmatched_database).
  bool matched() const noexcept { return matched_; }

 private:
  std::string db_;
  bool matched_ = false;
};

// At the end of a run: one warning line on `err` per --filter rule that matched no table
// ("binlogctl: warning: --filter rule 'RULE' matched no table"). Returns how many.
std::size_t warn_unmatched_filter_rules(const TableFilter& filter, std::FILE* err);

// At the end of a run, as warn_unmatched_filter_rules does for --filter: when -d/--database `db`
// was given (non-empty) and no statement or TABLE_MAP of it was met, one warning line on `err`
// ("binlogctl: warning: -d/--database 'DB' matched nothing: ..."). Returns whether it warned.
bool warn_unmatched_database(const std::string& db, bool matched, std::FILE* err);

// --include-gtids / --exclude-gtids: a MySQL GTID set (`uuid[:tag]:1-5:7,...`) or a MariaDB GTID
// set (MariaGtidSet: `0-1-100` one GTID, `0-1:1-100` intervals, `..0-1-100` everything up to it).
// The MySQL form is recognised by a ':' after something that is not a MariaDB `domain-server`.
class GtidSelection {
 public:
  static Result<GtidSelection> parse(std::string_view text);
  // Whether the transaction's GTID is in the selection; transactions without a GTID never are.
  bool contains(const TransactionState& t) const;
  bool is_mysql() const noexcept { return mysql_; }
  const GtidSet& mysql_set() const noexcept { return mysql_set_; }  // empty unless is_mysql()
  // No GTID at all (a text of blanks only): selects nothing.
  bool empty() const noexcept { return mysql_ ? mysql_set_.empty() : mariadb_set_.empty(); }

 private:
  bool mysql_ = false;
  GtidSet mysql_set_;
  MariaGtidSet mariadb_set_;
};

}  // namespace binlogctl
