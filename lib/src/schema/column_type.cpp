// column_type_text: a column's type as its definition declares it.
#include <binlogctl/schema.h>

#include "dump/info.h"

#include <algorithm>

namespace binlogctl {

std::string column_type_text(const SchemaColumn& c) {
  std::string s = c.type;
  if (c.type == "enum" || c.type == "set") {
    s.push_back('(');
    for (std::size_t i = 0; i < c.elements.size(); ++i) {
      if (i > 0) s.push_back(',');
      s.push_back('\'');
      for (char ch : c.elements[i]) {
        if (ch == '\'') s.push_back('\'');  // SQL doubles quotes inside a literal
        s.push_back(ch);
      }
      s.push_back('\'');
    }
    s.push_back(')');
  } else if (c.type == "time" || c.type == "datetime" || c.type == "timestamp") {
    if (c.decimals >= 0) s += "(" + std::to_string(c.decimals) + ")";
  } else if (c.length >= 0) {
    s += "(" + std::to_string(c.length);
    if (c.decimals >= 0) s += "," + std::to_string(c.decimals);
    s.push_back(')');
  }
  if (c.is_unsigned) s += " unsigned";
  if (c.zerofill) s += " zerofill";
  return s;
}

}  // namespace binlogctl

namespace binlogctl {

namespace {

// MariaDB's system-versioned tables: CREATE ... WITH SYSTEM VERSIONING adds two hidden columns
// (schema.cpp appends them as generated, invisible TIMESTAMP(6) row_start / row_end).
bool hidden_versioning_columns(const SchemaTable& t) {
  const std::size_t n = t.columns.size();
  if (n < 3) return false;
  const SchemaColumn& s = t.columns[n - 2];
  const SchemaColumn& e = t.columns[n - 1];
  return s.name == "row_start" && e.name == "row_end" && s.generated && e.generated && s.invisible &&
         e.invisible && s.type == "timestamp" && e.type == "timestamp";
}

}  // namespace

std::string create_table_sql(const SchemaTable& t) {
  std::string s = "CREATE TABLE ";
  append_quoted_identifier(s, t.db);
  s.push_back('.');
  append_quoted_identifier(s, t.name);
  s.append(" (");
  const bool versioned = hidden_versioning_columns(t);
  const std::size_t n = versioned ? t.columns.size() - 2 : t.columns.size();
  for (std::size_t i = 0; i < n; ++i) {
    const SchemaColumn& c = t.columns[i];
    s.append(i == 0 ? "\n  " : ",\n  ");
    append_quoted_identifier(s, c.name);
    s.push_back(' ');
    s.append(column_type_text(c));
    if (!c.charset.empty()) s.append(" CHARACTER SET ").append(c.charset);
    if (!c.collation.empty()) s.append(" COLLATE ").append(c.collation);
    // A key column is NOT NULL whatever its map's null bit says (MySQL refuses NULL there).
    const bool key = std::find(t.primary_key.begin(), t.primary_key.end(), c.name) != t.primary_key.end();
    s.append(c.nullable && !key ? " NULL" : " NOT NULL");
    if (c.invisible) s.append(" INVISIBLE");
    if (c.generated) s.append(" /* generated: its expression is not known here */");
  }
  if (!t.primary_key.empty()) {
    s.append(",\n  PRIMARY KEY (");
    for (std::size_t i = 0; i < t.primary_key.size(); ++i) {
      if (i > 0) s.push_back(',');
      append_quoted_identifier(s, t.primary_key[i]);
    }
    s.push_back(')');
  }
  s.append("\n)");
  if (!t.default_charset.empty()) s.append(" DEFAULT CHARSET=").append(t.default_charset);
  if (versioned) s.append(" WITH SYSTEM VERSIONING");
  s.push_back(';');
  return s;
}

}  // namespace binlogctl
