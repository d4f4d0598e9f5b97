// ddl_table (convert.h): the first table ddl_targets (schema.h: the schema history's reading of
// a DDL statement, on the library's one SQL lexer) finds in a DDL statement.
#include <binlogctl/convert.h>
#include <binlogctl/schema.h>

#include "convert/convert_internal.h"

#include <utility>

namespace binlogctl {

bool ddl_table(std::string_view sql, std::string& db, std::string& table) {
  DdlTargets t = ddl_targets(db, sql);
  if (t.scope != DdlTargets::Scope::tables || t.tables.empty()) return false;
  db = std::move(t.tables.front().first);
  table = std::move(t.tables.front().second);
  return true;
}

}  // namespace binlogctl
