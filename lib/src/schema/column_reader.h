// ColumnReader: a column definition (name, data type, attributes) and the table constraints
// that matter to the schema history (PRIMARY KEY), read from a DdlCursor's tokens. CREATE and
// ALTER (schema.cpp) read their column and key definitions through it.
#pragma once

#include "schema/ddl_cursor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace binlogctl::ddl {

struct ColumnDef {
  SchemaColumn col;
  bool primary = false;     // PRIMARY KEY / KEY as a column attribute
  bool row_period = false;  // MariaDB GENERATED ALWAYS AS ROW START|END
  bool first = false;       // ALTER: FIRST
  bool has_after = false;   // ALTER: AFTER `after`
  std::string after;
};

enum class Constraint : std::uint8_t { other, primary, bad };

class ColumnReader : public DdlCursor {
 public:
  using DdlCursor::DdlCursor;

 protected:
  // Numbers in a type's parentheses (or ENUM/SET members).
  void type_args(SchemaColumn& c);

  // The data type: one lower-cased word, except the multi-word spellings below, which become
  // the one word they stand for.
  bool data_type(SchemaColumn& c);

  // REFERENCES t (cols) [MATCH x] [ON DELETE|UPDATE action]...: parsed so that ON UPDATE
  // CASCADE / SET NULL are not read as column attributes.
  void references();

  // Column attributes in any order, up to the ',' or ')' that ends the definition. Unknown
  // attributes are skipped to that ',' (everything after them is lost, but nothing is misread).
  void column_attributes(ColumnDef& d, bool in_alter);

  bool column_def(ColumnDef& d, bool in_alter);

  // Table constraints.

  bool is_constraint_start() const;

  // PRIMARY KEY [name] [USING x] (part, ...) [options]: the parts' column names in `out`, prefix
  // lengths dropped. Functional parts (expr) are skipped.
  bool key_parts(std::vector<std::string>& out);

  // A table constraint (CREATE list, ALTER ... ADD): only a PRIMARY KEY matters to the history.
  Constraint constraint(std::vector<std::string>& pk);
};

}  // namespace binlogctl::ddl
