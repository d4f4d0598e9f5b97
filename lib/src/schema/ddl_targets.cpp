// ddl_targets (schema.h): what a DDL statement acts on, read from its tokens. Reads only: no
// schema history is needed or changed.
#include "schema/ddl_cursor.h"

#include <utility>

namespace binlogctl {
namespace ddl {
namespace {

class TargetsReader : public DdlCursor {
 public:
  using DdlCursor::DdlCursor;

  // What the statement acts on (ddl_targets in schema.h). Reads only: the history is not used.
  void targets(DdlTargets& r) {
    r.scope = DdlTargets::Scope::unknown;
    if (accept("CREATE")) {
      r.verb = "CREATE";
      create_targets(r);
    } else if (accept("ALTER")) {
      r.verb = "ALTER";
      alter_targets(r);
    } else if (accept("DROP")) {
      r.verb = "DROP";
      drop_targets(r);
    } else if (accept("RENAME")) {
      r.verb = "RENAME";
      if (accept("USER")) {
        r.verb += " USER";
        r.scope = DdlTargets::Scope::none;
        return;
      }
      if (!accept("TABLE") && !accept("TABLES")) return;
      r.verb += " TABLE";
      accept_if_exists();
      do {
        std::string fd, fn, td, tn;
        if (!qualified(db_, fd, fn) || !accept("TO") || !qualified(db_, td, tn)) break;
        r.tables.emplace_back(std::move(fd), std::move(fn));
        r.tables.emplace_back(std::move(td), std::move(tn));
      } while (accept(','));
      if (!r.tables.empty()) r.scope = DdlTargets::Scope::tables;
    } else if (accept("TRUNCATE")) {
      r.verb = "TRUNCATE";
      accept("TABLE");
      table_list(r, false);
    } else if (kw("GRANT") || kw("REVOKE")) {
      r.verb = std::string(peek().raw);
      for (char& c : r.verb) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
      r.scope = DdlTargets::Scope::none;  // privileges: no table's rows or columns
    }
  }


 private:

  // Objects that hold no rows of a table: statements on them act on no table.
  static constexpr std::string_view kNoTableObjects[] = {
      "VIEW",     "PROCEDURE", "FUNCTION", "EVENT",     "USER",     "ROLE",  "SERVER",
      "PACKAGE",  "TABLESPACE", "LOGFILE", "RESOURCE",  "INSTANCE", "AGGREGATE", "DATABASE", "SCHEMA"};

  // The object keyword that names what a CREATE/ALTER/DROP acts on, looked for past the
  // clauses that may precede it (OR REPLACE, DEFINER = user, ALGORITHM = x, SQL SECURITY x,
  // TEMPORARY, ...): a bounded scan of the leading tokens.
  std::string_view object_keyword() {
    static constexpr std::string_view kObjects[] = {"TABLE", "TABLES", "INDEX", "TRIGGER", "SEQUENCE"};
    for (std::size_t n = 0; n < 24 && !at_end(); ++n, next()) {
      if (peek().kind != Tok::word) continue;
      for (std::string_view w : kObjects)
        if (peek().is_kw(w)) return w;
      for (std::string_view w : kNoTableObjects)
        if (peek().is_kw(w)) return w;
    }
    return {};
  }

  void add_verb(DdlTargets& r, std::string_view w) {
    r.verb.push_back(' ');
    r.verb.append(w);
  }

  // [IF [NOT] EXISTS] a[, b ...] into r.tables; `list` allows more than one name.
  void table_list(DdlTargets& r, bool list) {
    if (!accept_if_exists()) accept_if_not_exists();
    do {
      std::string d, n;
      if (!qualified(db_, d, n)) break;
      r.tables.emplace_back(std::move(d), std::move(n));
    } while (list && accept(','));
    if (!r.tables.empty()) r.scope = DdlTargets::Scope::tables;
  }

  // Past the next ON at parenthesis depth 0 (bounded), the table it names.
  void on_table(DdlTargets& r) {
    for (std::size_t n = 0; n < 64 && !at_end(); ++n) {
      if (accept("ON")) {
        table_list(r, false);
        return;
      }
      skip_group();
    }
  }

  void create_targets(DdlTargets& r) {
    const std::string_view obj = object_keyword();
    if (obj.empty()) return;
    add_verb(r, obj);
    next();
    if (obj == "TABLE" || obj == "SEQUENCE") {
      table_list(r, false);  // CREATE TABLE ... LIKE / SELECT only read their sources
    } else if (obj == "INDEX" || obj == "TRIGGER") {
      on_table(r);
    } else if (obj != "TABLES") {
      r.scope = DdlTargets::Scope::none;
    }
  }

  void alter_targets(DdlTargets& r) {
    const std::string_view obj = object_keyword();
    if (obj.empty()) return;
    add_verb(r, obj);
    next();
    if (obj != "TABLE" && obj != "SEQUENCE") {
      if (obj != "INDEX" && obj != "TRIGGER" && obj != "TABLES") r.scope = DdlTargets::Scope::none;
      return;
    }
    accept_if_exists();
    std::string tdb, tname;
    if (!qualified(db_, tdb, tname)) return;
    r.tables.emplace_back(tdb, std::move(tname));
    // Other tables the specs name: RENAME [TO|AS] t2 (not RENAME COLUMN/INDEX/KEY),
    // EXCHANGE PARTITION p WITH TABLE t2.
    while (!at_end()) {
      if (kw("RENAME") && !kw("COLUMN", 1) && !kw("INDEX", 1) && !kw("KEY", 1)) {
        next();
        if (!accept("TO")) accept("AS");
        std::string d, n;
        if (qualified(tdb, d, n)) r.tables.emplace_back(std::move(d), std::move(n));
        continue;
      }
      if (kw("WITH") && kw("TABLE", 1)) {
        pos_ += 2;
        std::string d, n;
        if (qualified(db_, d, n)) r.tables.emplace_back(std::move(d), std::move(n));
        continue;
      }
      skip_group();
    }
    r.scope = DdlTargets::Scope::tables;
  }

  void drop_targets(DdlTargets& r) {
    const std::string_view obj = object_keyword();
    if (obj.empty()) return;
    add_verb(r, obj);
    next();
    if (obj == "DATABASE" || obj == "SCHEMA") {
      accept_if_exists();
      if (name(r.database)) r.scope = DdlTargets::Scope::database;
    } else if (obj == "TABLE" || obj == "TABLES" || obj == "SEQUENCE") {
      table_list(r, true);
    } else if (obj == "INDEX") {
      on_table(r);
    } else if (obj != "TRIGGER") {  // DROP TRIGGER names the trigger, not its table: unknown
      r.scope = DdlTargets::Scope::none;
    }
  }
};

}  // namespace

DdlTargets read_ddl_targets(std::string_view db, const std::vector<Token>& toks) {
  DdlTargets r;
  TargetsReader(db, toks).targets(r);
  return r;
}

}  // namespace ddl

DdlTargets ddl_targets(std::string_view db, std::string_view sql) {
  ddl::Lexer lex(sql);
  std::vector<ddl::Token> toks;
  ddl::Token tok;
  while (lex.next(tok) && !tok.is_punct(';')) toks.push_back(std::move(tok));
  DdlTargets r = ddl::read_ddl_targets(db, toks);
  if (r.scope != DdlTargets::Scope::tables) r.tables.clear();
  return r;
}

}  // namespace binlogctl
