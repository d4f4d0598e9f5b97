// Schema history: the column definitions of tables as DDL statements declare them, for what a
// TABLE_MAP does not carry. A TABLE_MAP gives type codes and some metadata; without
// binlog_row_metadata=FULL it has no column names, and even with it nothing says that a DOUBLE
// was declared DOUBLE(12,4), that a BINARY(16) is MariaDB's UUID, or what fractional precision
// a pre-10.0 MariaDB DATETIME(3) has (its rows cannot even be split into columns without it).
//
// The history is seeded by `--schema FILE.sql` (CREATE TABLE statements, e.g. the output of
// `mysqldump --no-data`) and then follows the DDL seen in the binlog, in order: CREATE TABLE
// (incl. LIKE), ALTER TABLE (ADD/DROP/MODIFY/CHANGE/RENAME COLUMN, RENAME TO, primary key
// changes), DROP TABLE, RENAME TABLE, CREATE/ALTER/DROP DATABASE (with their default
// charsets). Statements it does not understand
// leave it as it was, except that a table whose definition it can no longer know (CREATE TABLE
// ... SELECT without a column list it can read, an ALTER it cannot parse) is forgotten rather
// than kept wrong.
//
// Names: database and table names are compared exactly first, then case-insensitively (servers
// with lower_case_table_names=1/2 log names as typed); column names case-insensitively.
#pragma once

#include <binlogctl/result.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace binlogctl {

struct SchemaColumn {
  std::string name;            // unquoted
  std::string type;            // base type, lower case, as written: "int", "double", "datetime",
                               // "varchar", "uuid", "inet6", "enum", "bigint", "timestamp", ...
                               // (synonyms kept as written: "integer", "real", "bool", "dec")
  int length = -1;             // first type argument: (M) / (M,D) M; -1 when not given
  int decimals = -1;           // second argument (M,D) D; for TIME/DATETIME/TIMESTAMP the
                               // fractional precision fsp (their only argument); -1 when absent
  bool is_unsigned = false;
  bool zerofill = false;
  bool nullable = true;        // NOT NULL / PRIMARY KEY make it false
  bool generated = false;      // GENERATED ALWAYS AS / AS (...) VIRTUAL|STORED|PERSISTENT
  bool invisible = false;      // INVISIBLE
  std::string charset;         // CHARACTER SET / CHARSET, lower case; empty when not given
  std::string collation;       // COLLATE, lower case; empty when not given
  std::vector<std::string> elements;  // ENUM/SET members, unquoted and unescaped, in order
};

struct SchemaTable {
  std::string db, name;
  std::vector<SchemaColumn> columns;  // in ordinal order
  std::vector<std::string> primary_key;  // column names in key order
  std::string default_charset;  // table option DEFAULT CHARSET / CHARACTER SET, lower case

  // Index of the column named `name` (case-insensitive), or -1.
  int column_index(std::string_view name) const noexcept;
};

class SchemaHistory {
 public:
  // Applies one statement as executed with default database `db` (the Query event's db).
  // Returns true when the statement changed the history. Never throws; any input is accepted.
  bool apply(std::string_view db, std::string_view sql);

  // Applies a script (a --schema file): statements separated by ';' (or by the delimiter that a
  // `DELIMITER xx` line sets, as the mysql client does), comments (--, #, /* */) skipped,
  // versioned comments (/*!40101 ... */, /*M!100100 ... */) read as SQL, `USE db` changing the
  // default database. Returns the number of statements that changed the history.
  // `ignored`, when given, receives the statements that look like DDL but that the history could
  // not use: no object binlogctl knows (CREATE TABL x), or a CREATE TABLE that defines nothing
  // (its definition does not parse); a --schema file's reader warns about each.
  struct IgnoredStatement {
    std::size_t offset = 0;  // of the statement's first token in `script`
    std::string why;
  };
  std::size_t apply_script(std::string_view script, std::string_view db = {},
                           std::vector<IgnoredStatement>* ignored = nullptr);

  const SchemaTable* find(std::string_view db, std::string_view table) const;
  std::size_t size() const noexcept { return tables_.size(); }
  // The default charset a database was created (or last altered) with, lower case; "" when no
  // statement seen said. CREATE TABLE without a charset of its own takes it.
  std::string_view database_charset(std::string_view db) const;
  // Every table, in (database, table) byte order of the names as stored.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [key, t] : tables_) f(t);
  }
  // Increases whenever apply/apply_script changes something (cached decisions can check it).
  std::uint64_t generation() const noexcept { return generation_; }

  // Change tracking, for a consumer that reports the versions of each table (binlogctl schema
  // --history). While on, every table that apply/apply_script defines (creates, changes, renames
  // to) or removes (drops, renames away, forgets because a statement could not be followed) is
  // noted; take_changes() returns the notes since the last call, one per table name, in the
  // order the tables were first touched.
  struct Change {
    std::string db, name;               // as stored
    const SchemaTable* table = nullptr;  // the definition now; null: the table is gone
  };
  void track_changes(bool on) {
    track_ = on;
    touched_.clear();
  }
  std::vector<Change> take_changes();

 private:
  std::map<std::string, SchemaTable> tables_;  // key: db + '\0' + table, as written
  // ASCII-lower-cased key -> key in tables_: the case-insensitive fallback of find() without a
  // scan of every table (a dump with thousands of tables would otherwise be quadratic).
  std::multimap<std::string, std::string> folded_;
  std::uint64_t generation_ = 0;
  std::map<std::string, std::string> db_charsets_;  // lower-cased database name -> charset
  bool track_ = false;
  std::vector<std::string> touched_;  // keys, in touch order, repeats possible
  friend struct SchemaHistoryAccess;  // the parser (schema.cpp)
};

// What a DDL statement (classify_statement() == ddl) acts on, read with the history's parser:
// for consumers that must know whether a statement changes a given table (--flashback refuses
// DDL on a table whose rows the range changes, and lets DDL on other tables pass).
struct DdlTargets {
  enum class Scope : std::uint8_t {
    none,      // no table: CREATE/ALTER DATABASE, GRANT, REVOKE, views, routines, events,
               // users, roles, servers, tablespaces
    tables,    // the tables in `tables`: CREATE/ALTER/DROP/RENAME/TRUNCATE TABLE (every name,
               // RENAME and ALTER ... RENAME TO targets and EXCHANGE PARTITION ... WITH TABLE
               // included), CREATE/DROP INDEX ... ON, CREATE TRIGGER ... ON, sequences
    database,  // DROP DATABASE / SCHEMA: every table of `database`
    unknown,   // not understood, or the statement does not name its table (DROP TRIGGER):
               // any table may be affected
  };
  Scope scope = Scope::unknown;
  std::vector<std::pair<std::string, std::string>> tables;  // (db, table); db defaults to the
                                                            // statement's default database
  std::string database;                                     // Scope::database
  std::string verb;  // the leading keywords, upper case: "ALTER TABLE", "DROP DATABASE", ...
};
// Never throws except std::bad_alloc; any input is accepted (unknown when not understood).
DdlTargets ddl_targets(std::string_view db, std::string_view sql);

// The column's type as declared, the way SHOW CREATE TABLE spells a definition: lower-case type,
// its arguments, " unsigned", " zerofill": "int(11) unsigned", "decimal(10,2)", "datetime(3)",
// "enum('a','b''c')", "varchar(64)". (Canal's mysqlType is this text of its DDL-built table meta.)
std::string column_type_text(const SchemaColumn& c);

// The table as a CREATE TABLE statement that a server accepts and that apply_script reads back
// as the same definition: `db`.`name` quoted, one column per line with its type, CHARACTER SET /
// COLLATE when known, NULL / NOT NULL and INVISIBLE, then PRIMARY KEY, then DEFAULT CHARSET, and
// WITH SYSTEM VERSIONING in place of MariaDB's hidden row_start/row_end columns. What the history
// does not keep is not printed: defaults, secondary keys, the expressions of generated columns
// (printed as plain columns), AUTO_INCREMENT, key prefix lengths. Ends with ";" and no newline.
std::string create_table_sql(const SchemaTable& t);

// Reads a --schema file (a script of SQL statements) into `h` with apply_script. Returns false
// with `error` set ("FILE: reason") when the file cannot be read. `warnings` (when given)
// receives one message per statement that was ignored though it looks like DDL
// ("FILE: line N, offset M: warning: ...").
bool load_schema_file(const std::string& path, SchemaHistory& h, std::string& error,
                      std::vector<std::string>* warnings = nullptr);

}  // namespace binlogctl
