// --include-gtids / --exclude-gtids (selection.h).
#include <binlogctl/selection.h>

namespace binlogctl {

Result<GtidSelection> GtidSelection::parse(std::string_view text) {
  GtidSelection s;
  if (text.find(':') != std::string_view::npos) {
    auto set = GtidSet::parse(text);
    if (!set) return set.error();
    s.mysql_ = true;
    s.mysql_set_ = std::move(*set);
  } else {
    auto list = MariaGtidList::parse(text);
    if (!list) return list.error();
    s.mariadb_list_ = std::move(*list);
  }
  return s;
}

bool GtidSelection::contains(const TransactionState& t) const {
  if (!t.has_gtid) return false;
  if (t.mysql_gtid) return mysql_ && mysql_set_.contains(t.uuid, t.tag, t.gno);
  return !mysql_ && mariadb_list_.contains(t.mariadb_gtid);
}

}  // namespace binlogctl
