// Selection shared by every consumer of the row-change stream: Canal's table filter and GTID
// sets. (Positions and times are selected where events are read: chain.h.)
#pragma once

#include <binlogctl/gtid.h>
#include <binlogctl/result.h>
#include <binlogctl/transaction.h>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
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

// At the end of a run: one warning line on `err` per --filter rule that matched no table
// ("binlogctl: warning: --filter rule 'RULE' matched no table"). Returns how many.
std::size_t warn_unmatched_filter_rules(const TableFilter& filter, std::FILE* err);

// --include-gtids / --exclude-gtids: a MySQL GTID set (`uuid[:tag]:1-5:7,...`) or a MariaDB GTID
// list (`0-1-100,1-2-5`, meaning every GTID of domain 0 / server 1 up to seq 100, and so on).
// The form is chosen by the presence of ':'.
class GtidSelection {
 public:
  static Result<GtidSelection> parse(std::string_view text);
  // Whether the transaction's GTID is in the selection; transactions without a GTID never are.
  bool contains(const TransactionState& t) const;
  bool is_mysql() const noexcept { return mysql_; }

 private:
  bool mysql_ = false;
  GtidSet mysql_set_;
  MariaGtidList mariadb_list_;
};

}  // namespace binlogctl
