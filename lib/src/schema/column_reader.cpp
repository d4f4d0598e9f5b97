// ColumnReader (column_reader.h).
#include "schema/column_reader.h"

#include <charconv>
#include <climits>
#include <string_view>
#include <utility>

namespace binlogctl::ddl {

namespace {

int to_int(std::string_view digits) {
  long long v = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (r.ec == std::errc::result_out_of_range || v > INT_MAX) return INT_MAX;
  if (r.ec != std::errc() || v < 0) return -1;
  return static_cast<int>(v);
}

bool is_temporal_with_fsp(std::string_view type) {
  return type == "time" || type == "datetime" || type == "timestamp";
}

}  // namespace

void ColumnReader::type_args(SchemaColumn& c) {
  next();  // '('
  const bool members = c.type == "enum" || c.type == "set";
  std::size_t index = 0, depth = 0;
  while (!at_end()) {
    const Token& t = peek();
    if (t.is_punct(')')) {
      next();
      if (depth == 0) break;
      --depth;
      continue;
    }
    if (t.is_punct('(')) {
      ++depth;
    } else if (depth == 0 && t.is_punct(',')) {
      ++index;
    } else if (depth == 0 && members && t.kind == Tok::string) {
      std::string s;
      read_string(s);
      c.elements.push_back(std::move(s));
      continue;
    } else if (depth == 0 && !members && t.kind == Tok::number && index < 2) {
      (index == 0 ? c.length : c.decimals) = to_int(t.raw);
    }
    next();
  }
  // TIME(3), DATETIME(6), TIMESTAMP(3): the only argument is the fractional precision.
  if (is_temporal_with_fsp(c.type) && c.length >= 0 && c.decimals < 0) {
    c.decimals = c.length;
    c.length = -1;
  }
}

bool ColumnReader::data_type(SchemaColumn& c) {
  if (peek().kind != Tok::word) return false;
  std::string type = to_lower(peek().raw);
  next();
  bool national = type == "nchar" || type == "nvarchar";
  if (type == "national") {
    if (peek().kind != Tok::word) return false;
    national = true;
    type = to_lower(peek().raw);
    next();
  }
  if (type == "double") {
    accept("PRECISION");
  } else if (type == "char" || type == "character" || type == "nchar") {
    if (accept("VARYING") || (type == "nchar" && accept("VARCHAR")))
      type = "varchar";
    else if (national)
      type = type == "nchar" ? "nchar" : "char";
  } else if (type == "long") {
    // LONG VARCHAR / LONG VARBINARY are MEDIUMTEXT / MEDIUMBLOB; plain LONG stays as written.
    if (accept("VARBINARY"))
      type = "mediumblob";
    else if (accept("VARCHAR"))
      type = "mediumtext";
    else if ((kw("CHAR") || kw("CHARACTER")) && kw("VARYING", 1)) {
      pos_ += 2;
      type = "mediumtext";
    }
  } else if (type == "serial") {  // BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
    type = "bigint";
    c.is_unsigned = true;
    c.nullable = false;
  }
  c.type = std::move(type);
  if (national) c.charset = "utf8mb3";
  if (punct('(')) type_args(c);
  return true;
}

void ColumnReader::references() {
  std::string d, n;
  qualified(db_, d, n);
  if (punct('(')) skip_group();
  while (!at_end()) {
    if (accept("MATCH")) {
      next();
    } else if (kw("ON") && (kw("DELETE", 1) || kw("UPDATE", 1))) {
      const std::size_t save = pos_;
      pos_ += 2;
      if (accept("RESTRICT") || accept("CASCADE")) continue;
      if (kw("SET") && (kw("NULL", 1) || kw("DEFAULT", 1))) {
        pos_ += 2;
        continue;
      }
      if (kw("NO") && kw("ACTION", 1)) {
        pos_ += 2;
        continue;
      }
      pos_ = save;  // ON UPDATE CURRENT_TIMESTAMP: a column attribute after all
      return;
    } else {
      return;
    }
  }
}

void ColumnReader::column_attributes(ColumnDef& d, bool in_alter) {
  SchemaColumn& c = d.col;
  while (!at_end()) {
    const Token& t = peek();
    if (t.is_punct(',') || t.is_punct(')')) return;
    if (t.kind != Tok::word) {
      skip_item();
      return;
    }
    if (accept("NOT")) {
      if (accept("NULL"))
        c.nullable = false;
      else if (!accept("ENFORCED"))
        skip_item();
    } else if (accept("NULL")) {
      c.nullable = true;
    } else if (accept("DEFAULT")) {
      skip_expr();
    } else if (kw("ON") && kw("UPDATE", 1)) {
      pos_ += 2;
      skip_expr();
    } else if (accept("UNIQUE")) {
      accept("KEY");
    } else if (accept("PRIMARY") || accept("KEY")) {  // a column's "KEY" is its PRIMARY KEY
      accept("KEY");
      d.primary = true;
      c.nullable = false;
    } else if (accept("COMMENT")) {
      accept('=');
      std::string s;
      if (!read_string(s)) next();
    } else if (accept("COLLATE")) {
      accept('=');
      std::string v;
      if (name(v)) c.collation = to_lower(v);
    } else if (accept_charset_keyword()) {
      accept('=');
      std::string v;
      if (name(v)) c.charset = to_lower(v);
    } else if (accept("ASCII")) {
      c.charset = "latin1";
    } else if (accept("UNICODE")) {
      c.charset = "ucs2";
    } else if (accept("GENERATED")) {
      accept("ALWAYS");
    } else if (accept("AS")) {
      if (punct('(')) {
        skip_group();
        c.generated = true;
      } else if (accept("ROW")) {  // MariaDB system versioning period column
        next();                    // START | END
        c.generated = true;
        d.row_period = true;
      } else {
        skip_item();
      }
    } else if (accept("INVISIBLE")) {
      c.invisible = true;
    } else if (accept("VISIBLE")) {
      c.invisible = false;
    } else if (accept("UNSIGNED")) {
      c.is_unsigned = true;
    } else if (accept("ZEROFILL")) {
      c.zerofill = true;
      c.is_unsigned = true;  // the servers add UNSIGNED to ZEROFILL columns
    } else if (accept("SIGNED")) {
      c.is_unsigned = false;
    } else if (accept("CHECK")) {
      skip_group();
    } else if (accept("CONSTRAINT")) {
      if (!kw("CHECK")) next();  // the constraint name
    } else if (accept("REFERENCES")) {
      references();
    } else if (accept("SERIAL")) {  // SERIAL DEFAULT VALUE = NOT NULL AUTO_INCREMENT UNIQUE
      if (kw("DEFAULT") && kw("VALUE", 1)) pos_ += 2;
      c.nullable = false;
    } else if (accept("WITH") || accept("WITHOUT")) {  // [WITH|WITHOUT] SYSTEM VERSIONING
      accept("SYSTEM");
      accept("VERSIONING");
    } else if (accept("COLUMN_FORMAT") || accept("STORAGE") || accept("SRID")) {
      next();  // FIXED|DYNAMIC|DEFAULT, DISK|MEMORY|DEFAULT, the SRID number
    } else if (accept("COMPRESSED")) {
      if (accept('=')) next();
    } else if (in_alter && accept("FIRST")) {
      d.first = true;
    } else if (in_alter && accept("AFTER")) {
      d.has_after = name(d.after);
    } else if (accept("AUTO_INCREMENT") || accept("VIRTUAL") || accept("STORED") ||
               accept("PERSISTENT") || accept("ENFORCED") || accept("BINARY") || accept("BYTE")) {
      // nothing recorded
    } else if (punct('=', 1)) {  // engine-defined attributes: name = value
      pos_ += 2;
      skip_group();
    } else {
      skip_item();
    }
  }
}

bool ColumnReader::column_def(ColumnDef& d, bool in_alter) {
  if (!name(d.col.name) || d.col.name.empty()) return false;
  if (!data_type(d.col)) return false;
  column_attributes(d, in_alter);
  return true;
}

bool ColumnReader::is_constraint_start() const {
  const Token& t = peek();
  return t.is_kw("PRIMARY") || t.is_kw("UNIQUE") || t.is_kw("KEY") || t.is_kw("INDEX") ||
         t.is_kw("FULLTEXT") || t.is_kw("SPATIAL") || t.is_kw("FOREIGN") ||
         t.is_kw("CONSTRAINT") || t.is_kw("CHECK") || (t.is_kw("PERIOD") && kw("FOR", 1));
}

bool ColumnReader::key_parts(std::vector<std::string>& out) {
  while (!at_end() && !punct('(') && !punct(',') && !punct(')')) next();
  if (!accept('(')) return false;
  out.clear();
  while (true) {
    if (at_end()) return false;
    std::string n;
    if (name(n)) {
      if (out.size() >= kMaxColumns) return false;
      out.push_back(std::move(n));
    }
    skip_item();  // (prefix length) ASC|DESC, or a functional part
    if (accept(',')) continue;
    if (accept(')')) break;
  }
  skip_item();  // index options
  return true;
}

Constraint ColumnReader::constraint(std::vector<std::string>& pk) {
  if (accept("CONSTRAINT")) {
    accept_if_not_exists();
    if (!kw("PRIMARY") && !kw("UNIQUE") && !kw("FOREIGN") && !kw("CHECK")) next();  // name
  }
  if (accept("PRIMARY")) {
    accept("KEY");
    return key_parts(pk) ? Constraint::primary : Constraint::bad;
  }
  skip_item();
  return Constraint::other;
}

}  // namespace binlogctl::ddl
