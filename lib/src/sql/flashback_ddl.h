// Flashback and DDL (convert --format sql --flashback, sql_convert.cpp). Undoing DDL is out of
// scope: a DDL statement in the range is never undone. It is an obstacle only when it acts on a
// table whose rows the range changes (the undo of those rows would meet another table
// definition), before or after the rows: known at the end. DDL on other tables, or on no table,
// is passed over with a "# SKIPPED" comment at its place, which is stored as a note (the
// reverse store's NUL record) and written out by expand() once every changed table is known.
// Memory: one entry per table (or dropped database) that DDL names, not per statement.
#pragma once

#include <binlogctl/schema.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace binlogctl::sql_detail {

// A log name inside a comment line: no line breaks.
inline std::string clean(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c == '\n' || c == '\r') c = ' ';
  return r;
}

class FlashbackDdl {
 public:
  struct Seen {  // the first DDL statement of the range on a table or database
    std::string log;
    std::uint64_t pos = 0;
    std::string verb, shown;
    std::uint64_t count = 0;
    std::uint64_t seq = 0;  // the order of the statements, for the messages
  };

  // The range changes rows of db.table.
  void changed(std::string_view db, std::string_view table);

  // The note of DDL statement `verb` at log:pos (`at`, as the comment shows it) on targets `t`
  // (scope database or tables), for the reverse store. Its comment is made by expand().
  std::string note(const DdlTargets& t, std::string_view at, const std::string& log, std::uint64_t pos,
                   const std::string& verb);

  // The first DDL statement on each table (or database) whose rows the range changes, in the
  // order of the statements.
  std::vector<const Seen*> conflicts() const;

  // The comment of a note (see note()), now that every changed table is known.
  void expand(std::string_view note, std::string& dst) const;

 private:
  void note_first(std::map<std::string, Seen>& m, std::string key, const std::string& log, std::uint64_t pos,
                  const std::string& verb, std::string shown);

  // The changed tables (db '\n' table) and their databases, ASCII case folded (names in DDL are
  // as typed; servers with lower_case_table_names log them so), and the DDL seen.
  std::unordered_set<std::string> changed_folded_, changed_dbs_;
  std::map<std::string, Seen> tables_, dbs_;
  std::uint64_t seq_ = 0;
};

}  // namespace binlogctl::sql_detail
