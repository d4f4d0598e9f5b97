// Schema history: a tolerant MySQL/MariaDB DDL parser (the contract is in schema.h).
//
// Pipeline: Lexer (base/sql_lexer.h: text -> tokens; comments dropped, versioned comments read as SQL) -> the
// tokens of one statement -> StatementParser (one member per statement kind; here) -> changes to the
// history through SchemaHistoryAccess. The parts it stands on: DdlCursor (ddl_cursor.h: the tokens
// and the reads every part shares) and ColumnReader (column_reader.h: column definitions and
// PRIMARY KEY constraints). ddl_targets (what a statement acts on) reads the same tokens through
// the same cursor, without a history (ddl_targets.cpp).
//
// The input is untrusted binlog text, so:
//   - nothing recurses: parenthesised groups are skipped with a depth counter, and every loop
//     consumes at least one token per turn (or stops);
//   - tables are capped at kMaxColumns (the servers' own limit) and ALTER at kMaxAlterSpecs, so
//     the column look-ups of one statement are bounded whatever its length;
//   - what cannot be read in a way that could change columns makes the table forgotten, never
//     kept with a definition that may be wrong (the rule of schema.h).
#include <binlogctl/columns.h>
#include <binlogctl/schema.h>

#include "schema/column_reader.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binlogctl {
namespace {

using namespace ddl;

bool is_ddl_start(const Token& t) {
  return t.is_kw("CREATE") || t.is_kw("ALTER") || t.is_kw("DROP") || t.is_kw("RENAME");
}

// Maximum bytes per character, for CONVERT TO CHARACTER SET's TEXT growth; 0 when unknown.
int charset_mbmaxlen(std::string_view cs) { return charset_max_bytes(cs); }

bool is_char_type(std::string_view t) {
  return t == "char" || t == "varchar" || t == "character" || t == "nchar" || t == "nvarchar" ||
         t == "enum" || t == "set";
}
bool is_text_type(std::string_view t) {
  return t == "tinytext" || t == "text" || t == "mediumtext" || t == "longtext" || t == "long";
}

bool same_column(const SchemaColumn& a, const SchemaColumn& b) {
  return a.name == b.name && a.type == b.type && a.length == b.length && a.decimals == b.decimals &&
         a.is_unsigned == b.is_unsigned && a.zerofill == b.zerofill && a.nullable == b.nullable &&
         a.generated == b.generated && a.invisible == b.invisible && a.charset == b.charset &&
         a.collation == b.collation && a.elements == b.elements;
}
bool same_table(const SchemaTable& a, const SchemaTable& b) {
  return a.db == b.db && a.name == b.name && a.primary_key == b.primary_key &&
         a.default_charset == b.default_charset &&
         std::equal(a.columns.begin(), a.columns.end(), b.columns.begin(), b.columns.end(),
                    same_column);
}

std::string table_key(std::string_view db, std::string_view name) {
  std::string k;
  k.reserve(db.size() + name.size() + 1);
  k.append(db).push_back('\0');
  k.append(name);
  return k;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Storage: the only code that touches SchemaHistory's private maps.

struct SchemaHistoryAccess {
  // Exact name first, then case-insensitive (schema.h).
  static SchemaTable* lookup(SchemaHistory& h, std::string_view db, std::string_view name) {
    return const_cast<SchemaTable*>(std::as_const(h).find(db, name));
  }

  static void erase_key(SchemaHistory& h, const std::string& key) {
    if (h.tables_.erase(key) == 0) return;
    if (h.track_) h.touched_.push_back(key);
    auto [b, e] = h.folded_.equal_range(to_lower(key));
    for (auto it = b; it != e; ++it) {
      if (it->second == key) {
        h.folded_.erase(it);
        break;
      }
    }
  }

  // Removes the table named so exactly, or else every table that matches case-insensitively.
  static bool forget(SchemaHistory& h, std::string_view db, std::string_view name) {
    const std::string key = table_key(db, name);
    if (h.tables_.count(key) != 0) {
      erase_key(h, key);
      return true;
    }
    auto [b, e] = h.folded_.equal_range(to_lower(key));
    std::vector<std::string> keys;
    for (auto it = b; it != e; ++it) keys.push_back(it->second);
    for (const std::string& k : keys) erase_key(h, k);
    return !keys.empty();
  }

  // Stores t under its name. Tables whose names differ only in case go: under
  // lower_case_table_names=1 they are this table under the spelling the statement used, and
  // keeping them would let find() return the old definition for the stored lower-case name.
  static void put(SchemaHistory& h, SchemaTable&& t) {
    std::string key = table_key(t.db, t.name);
    std::string folded = to_lower(key);
    erase_key(h, key);
    auto [b, e] = h.folded_.equal_range(folded);
    std::vector<std::string> others;
    for (auto it = b; it != e; ++it) others.push_back(it->second);
    for (const std::string& k : others) erase_key(h, k);
    h.folded_.emplace(std::move(folded), key);
    if (h.track_) h.touched_.push_back(key);
    h.tables_.emplace(std::move(key), std::move(t));
  }

  static bool set_database_charset(SchemaHistory& h, std::string_view db, const std::string& cs) {
    if (cs.empty()) return false;
    std::string& slot = h.db_charsets_[to_lower(db)];
    if (slot == cs) return false;
    slot = cs;
    return true;
  }

  static bool has_tables(const SchemaHistory& h, std::string_view db) {
    const std::string prefix = to_lower(table_key(db, {}));
    auto it = h.folded_.lower_bound(prefix);
    return it != h.folded_.end() && it->first.starts_with(prefix);
  }

  // The tables of a database (exact name first, then case-insensitive). Keys are db + '\0' +
  // table, so they form one range of each ordered map: no scan of every table.
  static bool drop_database(SchemaHistory& h, std::string_view db) {
    h.db_charsets_.erase(to_lower(db));
    std::string prefix = table_key(db, {});
    std::vector<std::string> gone;
    for (auto it = h.tables_.lower_bound(prefix);
         it != h.tables_.end() && it->first.starts_with(prefix); ++it) {
      if (it->second.db == db) gone.push_back(it->first);
    }
    if (gone.empty()) {
      prefix = to_lower(prefix);
      for (auto it = h.folded_.lower_bound(prefix);
           it != h.folded_.end() && it->first.starts_with(prefix); ++it) {
        gone.push_back(it->second);
      }
    }
    for (const std::string& k : gone) erase_key(h, k);
    return !gone.empty();
  }
};

namespace {

using Access = SchemaHistoryAccess;

// ---------------------------------------------------------------------------------------------
// Statement parser

class StatementParser : public ColumnReader {
 public:
  StatementParser(SchemaHistory& h, std::string_view db, const std::vector<Token>& toks)
      : ColumnReader(db, toks), h_(h) {}

  // Applies the statement; true when the history changed.
  bool run() {
    if (kw("CREATE")) return create();
    if (kw("ALTER") && (kw("DATABASE", 1) || kw("SCHEMA", 1))) {
      next();
      return alter_database();
    }
    if (kw("ALTER")) return alter();
    if (kw("DROP")) return drop();
    if (kw("RENAME")) return rename();
    return false;
  }

 private:
  // ---- CREATE -------------------------------------------------------------------------------

  // A table constraint at the cursor (PRIMARY KEY sets t's key); false when it does not parse.
  bool table_constraint(SchemaTable& t) {
    std::vector<std::string> pk;
    const Constraint r = constraint(pk);
    if (r == Constraint::primary) t.primary_key = std::move(pk);
    return r != Constraint::bad;
  }

  // A parenthesised list of column definitions and constraints, from after '(' through ')';
  // `column` parses one column definition (false: the statement is not followed).
  template <class Column>
  bool definition_list(SchemaTable& t, Column column) {
    while (true) {
      if (at_end()) return false;
      if (accept(')')) return true;
      if (accept(',')) continue;
      if (is_constraint_start() ? !table_constraint(t) : !column()) return false;
      if (!punct(',') && !punct(')')) return false;
    }
  }

  // The parenthesised list of CREATE TABLE t (...), from after '(' through ')'.
  bool create_list(SchemaTable& t, bool& row_period) {
    return definition_list(t, [&] {
      ColumnDef d;
      if (!column_def(d, false)) return false;
      if (d.primary) t.primary_key = {d.col.name};
      row_period = row_period || d.row_period;
      t.columns.push_back(std::move(d.col));
      return t.columns.size() <= kMaxColumns;
    });
  }

  // True when a query starts at peek(k): SELECT, WITH, VALUES or TABLE, maybe after '('s.
  bool is_query_at(std::size_t k) const {
    while (punct('(', k)) ++k;
    return kw("SELECT", k) || kw("WITH", k) || kw("VALUES", k) || kw("TABLE", k);
  }

  // Table options after the column list, up to a query if there is one (returns true then).
  bool table_options(SchemaTable& t, bool& versioning) {
    while (!at_end()) {
      const Token& tk = peek();
      if (tk.is_punct('(')) {
        if (is_query_at(0)) return true;
        skip_group();
        continue;
      }
      if (tk.kind != Tok::word) {
        next();
        continue;
      }
      if (tk.is_kw("WITH") && kw("SYSTEM", 1)) {
        pos_ += 2;
        accept("VERSIONING");
        versioning = true;
        continue;
      }
      if (is_query_at(0) || tk.is_kw("AS") || tk.is_kw("IGNORE") || tk.is_kw("REPLACE"))
        return true;
      if (charset_option(t.default_charset)) continue;
      next();
    }
    return false;
  }

  // [DEFAULT] CHARACTER SET|CHARSET|CHAR SET [=] x
  bool charset_option(std::string& out) {
    const std::size_t save = pos_;
    accept("DEFAULT");
    if (accept_charset_keyword()) {
      accept('=');
      std::string v;
      if (name(v)) out = to_lower(v);
      return true;
    }
    pos_ = save;
    return false;
  }

  // The name a simple select item gives its column: `a`, `t.a`, `expr AS x`, `f(a) x`, `1 x`.
  // False for anything else (`*`, bare expressions), whose column name is not knowable here.
  bool select_item_name(std::size_t b, std::size_t e, std::string& out) const {
    const std::size_t n = e - b;
    if (n == 0 || !toks_[e - 1].is_name()) return false;
    if (n >= 2 && toks_[e - 2].is_kw("AS")) {
      out.assign(toks_[e - 1].value());
      return true;
    }
    bool dotted = n % 2 == 1;
    for (std::size_t i = 0; dotted && i < n; ++i)
      dotted = i % 2 == 0 ? toks_[b + i].is_name() : toks_[b + i].is_punct('.');
    const Token& prev = n >= 2 ? toks_[e - 2] : toks_[e - 1];
    if (dotted || prev.is_punct(')') || prev.kind == Tok::number || prev.kind == Tok::string ||
        prev.kind == Tok::quoted) {
      out.assign(toks_[e - 1].value());
      return true;
    }
    return false;
  }

  // CREATE TABLE t (cols) SELECT ...: the SELECT's columns that the list does not name are
  // added to the table. True when every select item is a column of the list, so the list is
  // the whole definition.
  bool select_covered(const SchemaTable& t) {
    if (!accept("IGNORE")) accept("REPLACE");
    accept("AS");
    while (accept('(')) {
    }
    if (!accept("SELECT")) return false;
    while (accept("ALL") || accept("DISTINCT") || accept("DISTINCTROW") ||
           accept("HIGH_PRIORITY") || accept("STRAIGHT_JOIN") || accept("SQL_SMALL_RESULT") ||
           accept("SQL_BIG_RESULT") || accept("SQL_BUFFER_RESULT") || accept("SQL_NO_CACHE") ||
           accept("SQL_CACHE") || accept("SQL_CALC_FOUND_ROWS")) {
    }
    static constexpr std::string_view kEnd[] = {"FROM",  "WHERE",  "GROUP",     "HAVING",   "ORDER",
                                                "LIMIT", "UNION",  "INTO",      "WINDOW",   "FOR",
                                                "LOCK",  "EXCEPT", "INTERSECT", "PROCEDURE"};
    std::size_t items = 0;
    while (true) {
      const std::size_t b = pos_;
      std::size_t depth = 0;
      while (!at_end()) {
        const Token& tk = peek();
        if (tk.is_punct('(')) {
          ++depth;
        } else if (tk.is_punct(')')) {
          if (depth == 0) break;
          --depth;
        } else if (depth == 0 && (tk.is_punct(',') ||
                                  std::any_of(std::begin(kEnd), std::end(kEnd),
                                              [&](std::string_view w) { return tk.is_kw(w); }))) {
          break;
        }
        next();
      }
      std::string item;
      if (!select_item_name(b, pos_, item) || t.column_index(item) < 0) return false;
      if (++items > kMaxColumns) return false;
      if (!accept(',')) return true;
    }
  }

  bool create() {
    next();  // CREATE
    bool or_replace = false;
    if (accept("OR")) {
      if (!accept("REPLACE")) return false;
      or_replace = true;
    }
    const bool temporary = accept("TEMPORARY");
    if (!temporary && (kw("DATABASE") || kw("SCHEMA"))) return create_database(or_replace);
    if (!accept("TABLE")) return false;  // VIEW, INDEX, TRIGGER, ...: no columns of tables
    const bool if_not_exists = accept_if_not_exists();
    SchemaTable t;
    if (!qualified(db_, t.db, t.name)) return false;
    const SchemaTable* existing = Access::lookup(h_, t.db, t.name);
    if (existing && if_not_exists) return false;  // the server kept the old table
    // A temporary table shadows the base table of that name in one session only; which of the
    // two later rows belong to is not knowable.
    if (temporary && existing) return Access::forget(h_, t.db, t.name);

    const bool paren_like = punct('(') && kw("LIKE", 1);
    if (paren_like || kw("LIKE")) {
      pos_ += paren_like ? 2 : 1;
      std::string sdb, sname;
      const SchemaTable* src =
          qualified(db_, sdb, sname) ? Access::lookup(h_, sdb, sname) : nullptr;
      if (!src) return Access::forget(h_, t.db, t.name);
      SchemaTable copy = *src;
      copy.db = std::move(t.db);
      copy.name = std::move(t.name);
      Access::put(h_, std::move(copy));
      return true;
    }

    bool has_list = false, row_period = false, versioning = false;
    if (punct('(') && !is_query_at(0)) {
      next();
      if (!create_list(t, row_period)) return Access::forget(h_, t.db, t.name);
      has_list = true;
    }
    const bool query = table_options(t, versioning);
    // Without a charset of its own a table takes its database's default, as it stood then.
    if (t.default_charset.empty()) t.default_charset.assign(h_.database_charset(t.db));
    if (!has_list || (query && !select_covered(t))) return Access::forget(h_, t.db, t.name);
    if (versioning && !row_period) {
      // MariaDB adds hidden row_start/row_end TIMESTAMP(6) columns at the end of the table.
      for (const char* n : {"row_start", "row_end"}) {
        SchemaColumn c;
        c.name = n;
        c.type = "timestamp";
        c.decimals = 6;
        c.nullable = false;
        c.generated = true;
        c.invisible = true;
        t.columns.push_back(std::move(c));
      }
    }
    if (!finalize(t)) return Access::forget(h_, t.db, t.name);
    Access::put(h_, std::move(t));
    return true;
  }

  // CREATE DATABASE d succeeded, so no table of an older database d survives (a no-op unless
  // the history was stale). IF NOT EXISTS may have kept an existing one. Its default charset
  // is noted: tables created in it later without one of their own get it.
  bool create_database(bool or_replace) {
    next();  // DATABASE | SCHEMA
    const bool if_not_exists = accept_if_not_exists();
    std::string d;
    if (!name(d)) return false;
    const std::string cs = database_options();
    if (if_not_exists && !or_replace) {
      if (h_.database_charset(d).empty() && !cs.empty() && !Access::has_tables(h_, d))
        return Access::set_database_charset(h_, d, cs);
      return false;
    }
    const bool dropped = Access::drop_database(h_, d);
    return Access::set_database_charset(h_, d, cs) || dropped;
  }

  // ALTER DATABASE|SCHEMA [d] options: a new default charset for tables created from now on.
  bool alter_database() {
    next();  // DATABASE | SCHEMA
    std::string d(db_);
    if (peek().is_name() && !kw("DEFAULT") && !kw("CHARACTER") && !kw("CHARSET") && !kw("CHAR") && !kw("COLLATE"))
      name(d);
    const std::string cs = database_options();
    return !d.empty() && !cs.empty() && Access::set_database_charset(h_, d, cs);
  }

  // [DEFAULT] CHARACTER SET [=] x, [DEFAULT] COLLATE [=] y (x from y's name when only y is
  // given), other options skipped: the charset, lower case, or "".
  std::string database_options() {
    std::string cs, collation;
    while (!at_end()) {
      if (charset_option(cs)) continue;
      const std::size_t save = pos_;
      accept("DEFAULT");
      if (accept("COLLATE")) {
        accept('=');
        std::string v;
        if (name(v)) collation = to_lower(v);
        continue;
      }
      pos_ = save;
      next();
    }
    if (cs.empty() && !collation.empty()) cs = collation.substr(0, collation.find('_'));
    return cs;
  }

  // Primary key columns resolved to their declared spelling and made NOT NULL. False when the
  // definition cannot be right (a key on a missing column, no columns, too many).
  static bool finalize(SchemaTable& t) {
    if (t.columns.empty() || t.columns.size() > kMaxColumns) return false;
    for (std::string& k : t.primary_key) {
      const int i = t.column_index(k);
      if (i < 0) return false;
      SchemaColumn& c = t.columns[static_cast<std::size_t>(i)];
      k = c.name;
      c.nullable = false;
    }
    return true;
  }

  // ---- ALTER --------------------------------------------------------------------------------

  struct Rename {
    bool set = false;
    std::string db, name;
  };

  bool alter() {
    next();  // ALTER
    if (!accept("ONLINE")) accept("OFFLINE");
    accept("IGNORE");
    if (!accept("TABLE")) return false;
    accept_if_exists();
    std::string tdb, tname;
    if (!qualified(db_, tdb, tname)) return false;
    const SchemaTable* existing = Access::lookup(h_, tdb, tname);
    if (!existing) return false;  // nothing known to change
    if (accept("WAIT"))
      next();
    else
      accept("NOWAIT");

    SchemaTable t = *existing;
    Rename rn;
    bool ok = true;
    for (std::size_t specs = 0; ok && !at_end(); ++specs) {
      if (specs >= kMaxAlterSpecs || !alter_spec(t, tdb, rn)) {
        ok = false;
      } else if (!accept(',') && !at_end()) {
        ok = false;  // tokens left over in a spec that was thought understood
      }
    }
    ok = ok && finalize(t);
    if (ok && !rn.set && same_table(t, *existing)) return false;
    const std::string old_db = existing->db, old_name = existing->name;
    Access::forget(h_, old_db, old_name);
    if (!ok) return true;  // forgotten: its definition is no longer known
    if (rn.set) {
      Access::forget(h_, rn.db, rn.name);
      t.db = std::move(rn.db);
      t.name = std::move(rn.name);
    }
    Access::put(h_, std::move(t));
    return true;
  }

  // One ALTER TABLE spec. False when it could change the columns in a way not followed here.
  bool alter_spec(SchemaTable& t, std::string_view table_db, Rename& rn) {
    if (punct(',')) return true;  // empty spec
    if (accept("ADD")) return alter_add(t);
    if (accept("DROP")) return alter_drop(t);
    if (accept("MODIFY")) {
      accept("COLUMN");
      return alter_redefine(t, false);
    }
    if (accept("CHANGE")) {
      accept("COLUMN");
      return alter_redefine(t, true);
    }
    if (accept("RENAME")) return alter_rename(t, table_db, rn);
    if (accept("ALTER")) return alter_column(t);
    if (is_partition_op()) {
      skip_rest();  // partition maintenance moves rows, never columns, and takes the statement
      return true;
    }
    if (kw("CONVERT") && kw("TO", 1)) {
      pos_ += 2;
      return alter_convert(t);
    }
    if (kw("ORDER") && kw("BY", 1)) {
      skip_order_by();
      return true;
    }
    if (is_table_option()) {
      table_option_spec(t);
      return true;
    }
    return false;
  }

  bool is_partition_op() const {
    // PARTITION BY, REMOVE PARTITIONING, MariaDB's CONVERT TABLE t TO PARTITION p
    if (kw("PARTITION") || kw("REMOVE") || (kw("CONVERT") && kw("TABLE", 1))) return true;
    static constexpr std::string_view kOps[] = {"TRUNCATE", "ANALYZE", "CHECK",      "OPTIMIZE",
                                                "REBUILD",  "REPAIR",  "REORGANIZE", "COALESCE",
                                                "EXCHANGE", "DISCARD", "IMPORT",     "CONVERT"};
    return kw("PARTITION", 1) &&
           std::any_of(std::begin(kOps), std::end(kOps), [&](std::string_view w) { return kw(w); });
  }

  bool is_table_option() const {
    static constexpr std::string_view kOptions[] = {"ENGINE",
                                                    "TYPE",
                                                    "AUTO_INCREMENT",
                                                    "AVG_ROW_LENGTH",
                                                    "CHECKSUM",
                                                    "TABLE_CHECKSUM",
                                                    "PAGE_CHECKSUM",
                                                    "PAGE_COMPRESSED",
                                                    "PAGE_COMPRESSION_LEVEL",
                                                    "COMMENT",
                                                    "COMPRESSION",
                                                    "CONNECTION",
                                                    "DATA",
                                                    "INDEX",
                                                    "DELAY_KEY_WRITE",
                                                    "ENCRYPTION",
                                                    "ENCRYPTED",
                                                    "ENCRYPTION_KEY_ID",
                                                    "INSERT_METHOD",
                                                    "KEY_BLOCK_SIZE",
                                                    "MAX_ROWS",
                                                    "MIN_ROWS",
                                                    "PACK_KEYS",
                                                    "PASSWORD",
                                                    "ROW_FORMAT",
                                                    "STATS_AUTO_RECALC",
                                                    "STATS_PERSISTENT",
                                                    "STATS_SAMPLE_PAGES",
                                                    "TABLESPACE",
                                                    "STORAGE",
                                                    "UNION",
                                                    "TRANSACTIONAL",
                                                    "SEQUENCE",
                                                    "AUTOEXTEND_SIZE",
                                                    "ENGINE_ATTRIBUTE",
                                                    "SECONDARY_ENGINE",
                                                    "SECONDARY_ENGINE_ATTRIBUTE",
                                                    "SECONDARY_LOAD",
                                                    "SECONDARY_UNLOAD",
                                                    "ALGORITHM",
                                                    "LOCK",
                                                    "FORCE",
                                                    "ENABLE",
                                                    "DISABLE",
                                                    "DISCARD",
                                                    "IMPORT",
                                                    "WITH",
                                                    "WITHOUT",
                                                    "UPGRADE",
                                                    "DEFAULT",
                                                    "CHARACTER",
                                                    "CHARSET",
                                                    "CHAR",
                                                    "COLLATE",
                                                    "NOWAIT",
                                                    "WAIT"};
    if (kw("WITH") && kw("SYSTEM", 1)) return false;
    return std::any_of(std::begin(kOptions), std::end(kOptions),
                       [&](std::string_view w) { return kw(w); });
  }

  // Table options up to the next ',' (options may also follow each other without commas).
  void table_option_spec(SchemaTable& t) {
    while (!at_end() && !punct(',') && !punct(')')) {
      if (charset_option(t.default_charset)) continue;
      skip_group();
    }
  }

  void skip_order_by() {
    pos_ += 2;
    while (!at_end()) {
      std::string n;
      if (!name(n)) return;
      if (accept('.')) continue;  // t.col
      if (!accept("ASC")) accept("DESC");
      // "ORDER BY a, b" continues unless the next spec starts after the comma.
      if (!punct(',') || !peek(1).is_name() || is_spec_keyword(peek(1))) return;
      next();
    }
  }
  static bool is_spec_keyword(const Token& t) {
    return t.is_kw("ADD") || t.is_kw("DROP") || t.is_kw("MODIFY") || t.is_kw("CHANGE") ||
           t.is_kw("RENAME") || t.is_kw("ALTER") || t.is_kw("CONVERT") || t.is_kw("ORDER");
  }

  // Places d.col at FIRST / AFTER x / the default position.
  static bool insert_column(SchemaTable& t, ColumnDef&& d, std::size_t default_at) {
    std::size_t at = std::min(default_at, t.columns.size());
    if (d.first) {
      at = 0;
    } else if (d.has_after) {
      const int i = t.column_index(d.after);
      if (i < 0) return false;
      at = static_cast<std::size_t>(i) + 1;
    }
    t.columns.insert(t.columns.begin() + static_cast<std::ptrdiff_t>(at), std::move(d.col));
    return true;
  }

  static bool add_column(SchemaTable& t, ColumnDef&& d, bool if_not_exists) {
    if (t.column_index(d.col.name) >= 0) return if_not_exists;  // else the history is stale
    if (t.columns.size() >= kMaxColumns) return false;
    if (d.primary) t.primary_key = {d.col.name};
    return insert_column(t, std::move(d), t.columns.size());
  }

  bool alter_add(SchemaTable& t) {
    const bool column = accept("COLUMN");
    if (!column) {
      if (kw("PARTITION")) {
        skip_rest();
        return true;
      }
      if (kw("SYSTEM")) return false;  // ADD SYSTEM VERSIONING: hidden columns not followed
      if (is_constraint_start()) return table_constraint(t);
    }
    const bool if_not_exists = accept_if_not_exists();
    if (!accept('(')) {
      ColumnDef d;
      return column_def(d, true) && add_column(t, std::move(d), if_not_exists);
    }
    // ADD [COLUMN] (definition, ...): appended in order.
    return definition_list(t, [&] {
      ColumnDef d;
      return column_def(d, true) && add_column(t, std::move(d), if_not_exists);
    });
  }

  static void rename_in_key(SchemaTable& t, std::string_view from, const std::string& to) {
    for (std::string& k : t.primary_key)
      if (iequals(k, from)) k = to;
  }

  bool alter_drop(SchemaTable& t) {
    if (!accept("COLUMN")) {
      if (accept("PRIMARY")) {
        accept("KEY");
        t.primary_key.clear();
        return true;
      }
      if (kw("PARTITION")) {
        skip_rest();
        return true;
      }
      if (kw("SYSTEM")) return false;  // DROP SYSTEM VERSIONING
      if (accept("CONSTRAINT")) {
        accept_if_exists();
        std::string n;
        if (name(n) && iequals(n, "PRIMARY")) t.primary_key.clear();
        skip_item();
        return true;
      }
      if (kw("INDEX") || kw("KEY") || kw("FOREIGN") || kw("CHECK") || kw("PERIOD") ||
          kw("DEFAULT")) {
        skip_item();
        return true;
      }
    }
    const bool if_exists = accept_if_exists();
    std::string n;
    if (!name(n)) return false;
    if (!accept("RESTRICT")) accept("CASCADE");
    const int i = t.column_index(n);
    if (i < 0) return if_exists;
    t.columns.erase(t.columns.begin() + i);
    // The servers shrink an index that loses a column (and drop it when it loses the last).
    std::erase_if(t.primary_key, [&](const std::string& k) { return iequals(k, n); });
    return true;
  }

  // MODIFY [IF EXISTS] def / CHANGE [IF EXISTS] old def: the new definition replaces the old
  // one entirely (attributes not restated are gone, as on the server).
  bool alter_redefine(SchemaTable& t, bool change) {
    const bool if_exists = accept_if_exists();
    std::string old;
    if (change && !name(old)) return false;
    ColumnDef d;
    if (!column_def(d, true)) return false;
    if (!change) old = d.col.name;
    const int i = t.column_index(old);
    if (i < 0) return if_exists;
    const int j = t.column_index(d.col.name);
    if (j >= 0 && j != i) return false;  // renamed onto another column
    t.columns.erase(t.columns.begin() + i);
    rename_in_key(t, old, d.col.name);
    if (d.primary) t.primary_key = {d.col.name};
    return insert_column(t, std::move(d), static_cast<std::size_t>(i));
  }

  bool alter_rename(SchemaTable& t, std::string_view table_db, Rename& rn) {
    if (accept("COLUMN")) {
      const bool if_exists = accept_if_exists();
      std::string a, b;
      if (!name(a) || !accept("TO") || !name(b)) return false;
      const int i = t.column_index(a);
      if (i < 0) return if_exists;
      const int j = t.column_index(b);
      if (j >= 0 && j != i) return false;
      t.columns[static_cast<std::size_t>(i)].name = b;
      rename_in_key(t, a, b);
      return true;
    }
    if (kw("INDEX") || kw("KEY")) {
      skip_item();
      return true;
    }
    if (!accept("TO")) accept("AS");
    // An unqualified new name stays in the altered table's database.
    rn.set = qualified(table_db, rn.db, rn.name);
    return rn.set;
  }

  // ALTER [COLUMN] c SET DEFAULT x | DROP DEFAULT | SET VISIBLE | SET INVISIBLE
  bool alter_column(SchemaTable& t) {
    const bool column = accept("COLUMN");
    if (!column && (kw("INDEX") || kw("KEY") || kw("CHECK") || kw("CONSTRAINT"))) {
      skip_item();
      return true;
    }
    std::string n;
    if (!name(n)) return false;
    const int i = t.column_index(n);
    if (i < 0) return false;
    SchemaColumn& c = t.columns[static_cast<std::size_t>(i)];
    if (accept("SET")) {
      if (accept("DEFAULT"))
        skip_expr();
      else if (accept("VISIBLE"))
        c.invisible = false;
      else if (accept("INVISIBLE"))
        c.invisible = true;
      else
        return false;
      return true;
    }
    return accept("DROP") && accept("DEFAULT");
  }

  // CONVERT TO CHARACTER SET x [COLLATE y]: every character column takes x (and y). The servers
  // also widen TEXT types so they hold as many characters as before (latin1 TEXT becomes
  // utf8mb4 MEDIUMTEXT), which needs both character sets' widths.
  bool alter_convert(SchemaTable& t) {
    if (!accept_charset_keyword()) return false;
    accept('=');
    std::string v;
    if (!name(v)) return false;
    const std::string cs = to_lower(v);
    std::string coll;
    if (accept("COLLATE")) {
      accept('=');
      if (!name(v)) return false;
      coll = to_lower(v);
    }
    // DEFAULT (the database's, unknown here) and binary (which turns CHAR into BINARY, TEXT
    // into BLOB) are not followed.
    const int new_max = charset_mbmaxlen(cs);
    if (new_max == 0 || cs == "binary") return false;
    for (SchemaColumn& c : t.columns) {
      const bool text = is_text_type(c.type);
      if (!text && !is_char_type(c.type)) continue;
      const int old_max = charset_mbmaxlen(c.charset.empty() ? t.default_charset : c.charset);
      // Too long for a VARCHAR in the new set: the server turns it into a TEXT type.
      if (c.type == "varchar" && static_cast<long long>(c.length) * new_max > 65535) return false;
      if (text) {
        if (old_max == 0) return false;
        const unsigned long long bytes = c.type == "tinytext"   ? 255ULL
                                         : c.type == "text"     ? 65535ULL
                                         : c.type == "longtext" ? 4294967295ULL
                                                                : 16777215ULL;
        const unsigned long long need =
            bytes / static_cast<unsigned>(old_max) * static_cast<unsigned>(new_max);
        const char* grown = need <= 255        ? "tinytext"
                            : need <= 65535    ? "text"
                            : need <= 16777215 ? "mediumtext"
                                               : "longtext";
        auto rank = [](std::string_view ty) {
          return ty == "tinytext" ? 0 : ty == "text" ? 1 : ty == "longtext" ? 3 : 2;
        };
        if (rank(grown) > rank(c.type)) c.type = grown;
      }
      c.charset = cs;
      c.collation = coll;
    }
    t.default_charset = cs;
    return true;
  }

  // ---- DROP / RENAME ------------------------------------------------------------------------

  bool drop() {
    next();  // DROP
    const bool temporary = accept("TEMPORARY");
    if (!temporary && (accept("DATABASE") || accept("SCHEMA"))) {
      accept_if_exists();
      std::string d;
      return name(d) && Access::drop_database(h_, d);
    }
    if (!accept("TABLE") && !accept("TABLES")) return false;
    accept_if_exists();
    bool changed = false;
    do {
      std::string d, n;
      if (!qualified(db_, d, n)) break;
      changed = Access::forget(h_, d, n) || changed;
    } while (accept(','));
    return changed;
  }

  // RENAME TABLE a TO b, c TO d: applied in order, so swaps through a temporary name work.
  bool rename() {
    next();  // RENAME
    if (!accept("TABLE") && !accept("TABLES")) return false;
    accept_if_exists();
    bool changed = false;
    do {
      std::string fd, fn, td, tn;
      if (!qualified(db_, fd, fn) || !accept("TO") || !qualified(db_, td, tn)) break;
      const SchemaTable* src = Access::lookup(h_, fd, fn);
      if (!src) {  // unknown source: whatever we had under the target name is not it any more
        changed = Access::forget(h_, td, tn) || changed;
        continue;
      }
      SchemaTable moved = *src;
      Access::forget(h_, moved.db, moved.name);
      Access::forget(h_, td, tn);
      moved.db = std::move(td);
      moved.name = std::move(tn);
      Access::put(h_, std::move(moved));
      changed = true;
    } while (accept(','));
    return changed;
  }

  SchemaHistory& h_;
};

bool apply_tokens(SchemaHistory& h, std::string_view db, const std::vector<Token>& toks) {
  return StatementParser(h, db, toks).run();
}

}  // namespace

int SchemaTable::column_index(std::string_view column) const noexcept {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (iequals(columns[i].name, column)) return static_cast<int>(i);
  return -1;
}

bool SchemaHistory::apply(std::string_view db, std::string_view sql) {
  bool started = false;
  try {
    Lexer lex(sql);
    Token tok;
    if (!lex.next(tok) || !is_ddl_start(tok)) return false;  // most Query events end here
    std::vector<Token> toks;
    toks.push_back(std::move(tok));
    while (lex.next(tok) && !tok.is_punct(';')) toks.push_back(std::move(tok));
    started = true;
    if (!apply_tokens(*this, db, toks)) return false;
    ++generation_;
    return true;
  } catch (...) {
    // Only allocation can fail here. Past parsing, the history may be half-changed: say so, so
    // that cached decisions are dropped.
    if (started) ++generation_;
    return started;
  }
}

namespace {

// Why a DDL-looking statement of a script changed nothing, when that is a problem of the script
// (rather than a statement about objects with no table, or a no-op such as DROP TABLE IF EXISTS
// of an unknown table): "" when it is not.
std::string ignored_because(std::string_view db, const std::vector<Token>& toks) {
  const DdlTargets r = read_ddl_targets(db, toks);
  if (r.scope == DdlTargets::Scope::unknown && r.verb.find(' ') == std::string::npos)
    return std::string(toks.front().raw) + " of no kind of object binlogctl knows (not TABLE, INDEX, VIEW, DATABASE, ...)";
  if (r.verb == "CREATE TABLE") {
    bool if_not_exists = false;
    for (std::size_t i = 0; i + 2 < toks.size() && i < 24; ++i)
      if (toks[i].is_kw("IF") && toks[i + 1].is_kw("NOT") && toks[i + 2].is_kw("EXISTS")) if_not_exists = true;
    if (if_not_exists) return {};
    for (const Token& t : toks) {
      if (t.is_kw("SELECT"))
        return "CREATE TABLE ... SELECT without a column list: the columns come from a query a script does "
               "not run, the table stays undefined";
      if (t.is_kw("LIKE")) return "CREATE TABLE ... LIKE a table this schema history does not know";
    }
    return "CREATE TABLE that defines no table (its definition does not parse)";
  }
  return {};
}

}  // namespace

std::size_t SchemaHistory::apply_script(std::string_view script, std::string_view db,
                                        std::vector<IgnoredStatement>* ignored) {
  std::size_t changed = 0;
  try {
    Lexer lex(script);
    std::string delimiter = ";";
    std::string current_db(db);
    std::vector<Token> stmt;
    Token tok;
    // start: before a statement's first token; collect: a DDL statement; skip: anything else,
    // lexed (for its strings and comments) but not kept.
    enum class Mode : std::uint8_t { start, collect, skip } mode = Mode::start;
    auto finish = [&] {
      if (mode == Mode::collect && apply_tokens(*this, current_db, stmt)) {
        ++generation_;
        ++changed;
      } else if (mode == Mode::collect && ignored != nullptr && !stmt.empty()) {
        std::string why = ignored_because(current_db, stmt);
        if (!why.empty())
          ignored->push_back(IgnoredStatement{static_cast<std::size_t>(stmt.front().raw.data() - script.data()),
                                              std::move(why)});
      }
      stmt.clear();
      mode = Mode::start;
    };
    while (!lex.done()) {
      if (lex.starts_with(delimiter)) {
        lex.advance(delimiter.size());
        finish();
        continue;
      }
      if (!lex.next(tok, mode != Mode::skip)) break;
      if (delimiter != ";") lex.cut_at_delimiter(tok, delimiter);
      if (mode == Mode::skip) continue;
      if (mode == Mode::collect) {
        stmt.push_back(std::move(tok));
        continue;
      }
      // The first token of a statement: mysql client commands first.
      if (tok.is_kw("DELIMITER")) {
        const std::string_view d = lex.line_argument();
        if (!d.empty()) delimiter.assign(d);
      } else if (tok.is_punct('\\')) {
        lex.skip_line();
      } else if (tok.is_kw("USE")) {
        // USE db needs no delimiter (the client reads it as a command); one that follows ends
        // an empty statement.
        if (!lex.done() && !lex.starts_with(delimiter) && lex.next(tok) && tok.is_name())
          current_db.assign(tok.value());
      } else if (is_ddl_start(tok)) {
        mode = Mode::collect;
        stmt.push_back(std::move(tok));
      } else {
        mode = Mode::skip;
      }
    }
    finish();
  } catch (...) {
    ++generation_;  // allocation failure: the history may be half-changed
  }
  return changed;
}

std::string_view SchemaHistory::database_charset(std::string_view db) const {
  const auto it = db_charsets_.find(to_lower(db));
  return it == db_charsets_.end() ? std::string_view() : std::string_view(it->second);
}

std::vector<SchemaHistory::Change> SchemaHistory::take_changes() {
  std::vector<Change> out;
  std::vector<std::string> keys;
  keys.swap(touched_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (std::find(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(i), keys[i]) !=
        keys.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // noted already (statements touch a handful of tables)
    const std::string& key = keys[i];
    const std::size_t nul = key.find('\0');
    Change c;
    c.db = key.substr(0, nul);
    c.name = nul == std::string::npos ? std::string() : key.substr(nul + 1);
    if (auto it = tables_.find(key); it != tables_.end()) c.table = &it->second;
    out.push_back(std::move(c));
  }
  return out;
}

const SchemaTable* SchemaHistory::find(std::string_view db, std::string_view table) const {
  const std::string key = table_key(db, table);
  if (auto it = tables_.find(key); it != tables_.end()) return &it->second;
  if (auto f = folded_.find(to_lower(key)); f != folded_.end()) {
    if (auto it = tables_.find(f->second); it != tables_.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace binlogctl
