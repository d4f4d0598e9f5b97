// FlashbackDdl (flashback_ddl.h).
#include "sql/flashback_ddl.h"

#include <fmt/format.h>

#include <algorithm>

namespace binlogctl::sql_detail {

namespace {

std::string fold(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
  return r;
}

}  // namespace

void FlashbackDdl::changed(std::string_view db, std::string_view table) {
  std::string key(db);
  key.push_back('\n');
  key.append(table);
  changed_folded_.insert(fold(key));
  changed_dbs_.insert(fold(db));
}

void FlashbackDdl::note_first(std::map<std::string, Seen>& m, std::string key, const std::string& log,
                              std::uint64_t pos, const std::string& verb, std::string shown) {
  Seen& d = m[std::move(key)];
  if (d.count++ == 0) {
    d.seq = seq_++;
    d.log = log;
    d.pos = pos;
    d.verb = verb;
    d.shown = std::move(shown);
  }
}

std::string FlashbackDdl::note(const DdlTargets& t, std::string_view at, const std::string& log, std::uint64_t pos,
                               const std::string& verb) {
  // "\0" at "\0" verb "\0", then per target "d" db "\0" or "t" db "\0" table "\0" (names hold
  // no NUL: the parser refuses them).
  std::string rec(1, '\0');
  rec.append(at).push_back('\0');
  rec.append(verb).push_back('\0');
  if (t.scope == DdlTargets::Scope::database) {
    rec.push_back('d');
    rec.append(t.database).push_back('\0');
    note_first(dbs_, fold(t.database), log, pos, verb, "every table of database " + clean(t.database));
  } else {
    for (const auto& [db, table] : t.tables) {
      rec.push_back('t');
      rec.append(db).push_back('\0');
      rec.append(table).push_back('\0');
      note_first(tables_, fold(db + '\n' + table), log, pos, verb, clean(db) + '.' + clean(table));
    }
  }
  return rec;
}

std::vector<const FlashbackDdl::Seen*> FlashbackDdl::conflicts() const {
  std::vector<const Seen*> found;
  for (const auto& [key, d] : tables_)
    if (changed_folded_.count(key) != 0) found.push_back(&d);
  for (const auto& [db, d] : dbs_)
    if (changed_dbs_.count(db) != 0) found.push_back(&d);
  std::sort(found.begin(), found.end(), [](const Seen* a, const Seen* b) { return a->seq < b->seq; });
  return found;
}

void FlashbackDdl::expand(std::string_view note, std::string& dst) const {
  auto field = [&note]() {
    const std::size_t e = note.find('\0');
    std::string_view f = note.substr(0, e);
    note = e == std::string_view::npos ? std::string_view() : note.substr(e + 1);
    return f;
  };
  const std::string_view at = field(), verb = field();
  std::string shown;
  bool changed = false;
  while (!note.empty()) {
    const char kind = note[0];
    note.remove_prefix(1);
    const std::string_view db = field();
    if (!shown.empty()) shown.append(", ");
    if (kind == 'd') {
      shown.append("every table of database ").append(clean(db));
      changed = changed || changed_dbs_.count(fold(db)) != 0;
      continue;
    }
    const std::string_view table = field();
    shown.append(clean(db)).append(".").append(clean(table));
    changed = changed || changed_folded_.count(fold(std::string(db) + '\n' + std::string(table))) != 0;
  }
  dst.append(fmt::format("# SKIPPED {}: {} on {}", at, verb, shown));
  dst.append(changed ? ", whose rows the range changes (not undone; --flashback-skip-unsafe)\n"
                     : " (DDL on tables whose rows the range does not change; not undone)\n");
}

}  // namespace binlogctl::sql_detail
