// --include-gtids / --exclude-gtids (selection.h).
#include <binlogctl/selection.h>

namespace binlogctl {

namespace {

std::size_t digits_at(std::string_view t, std::size_t pos) noexcept {
  std::size_t i = pos;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  return i - pos;
}

// A MariaDB set starts with `..` or with `domain-server` followed by ':' or by `-seq` that ends
// the item. A MySQL uuid cannot: its third group is followed by '-', its second by '-', and a
// uuid without dashes has no '-' at all.
bool looks_mariadb(std::string_view t) noexcept {
  std::size_t p = 0;
  while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
  if (t.substr(p, 2) == "..") return true;
  for (int part = 0; part < 2; ++part) {
    const std::size_t d = digits_at(t, p);
    if (d == 0) return false;
    p += d;
    if (part == 0) {
      if (p >= t.size() || t[p] != '-') return false;
      ++p;
    }
  }
  if (p >= t.size()) return false;
  if (t[p] == ':') return true;
  if (t[p] != '-') return false;
  ++p;
  const std::size_t d = digits_at(t, p);
  if (d == 0) return false;
  p += d;
  return p >= t.size() || t[p] == ',' || t[p] == ' ' || t[p] == '\t';
}

}  // namespace

Result<GtidSelection> GtidSelection::parse(std::string_view text) {
  GtidSelection s;
  if (!looks_mariadb(text) && text.find(':') != std::string_view::npos) {
    auto set = GtidSet::parse(text);
    if (!set) return set.error();
    s.mysql_ = true;
    s.mysql_set_ = std::move(*set);
  } else {
    auto set = MariaGtidSet::parse(text);
    if (!set) return set.error();
    s.mariadb_set_ = std::move(*set);
  }
  return s;
}

bool GtidSelection::contains(const TransactionState& t) const {
  if (!t.has_gtid) return false;
  if (t.mysql_gtid) return mysql_ && mysql_set_.contains(t.uuid, t.tag, t.gno);
  return !mysql_ && mariadb_set_.contains(t.mariadb_gtid);
}

}  // namespace binlogctl
