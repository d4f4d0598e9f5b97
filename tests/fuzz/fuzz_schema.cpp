// libFuzzer target: schema history's DDL parser on arbitrary text, then the definitions it keeps
// applied to a TABLE_MAP of matching shape and a row decoded through them.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DBINLOGCTL_FUZZ=ON && cmake --build build-fuzz --target fuzz_schema
//   build-fuzz/tests/fuzz_schema testdata/mariadb-10.11/*/workload.sql
#include <binlogctl/schema.h>

#include "columns/column_json.h"
#include "rows/table_map.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace binlogctl;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  SchemaHistory h;
  h.apply_script(text, "db");
  h.apply("db", text);
  // Every table the script left: a TABLE_MAP of plain types the definition fits or not, and a
  // zero-filled row decoded through whatever apply_table_schema accepted.
  static const std::uint8_t zeros[256] = {};
  for (const char* name : {"t", "t1", "t2"}) {
    const SchemaTable* def = h.find("db", name);
    if (def == nullptr || def->columns.size() > 64) continue;
    TableMap tm;
    tm.db = "db";
    tm.table = name;
    for (const SchemaColumn& c : def->columns) {
      ColumnDef d;
      d.type = c.type == "datetime" ? ColumnType::datetime
               : c.type == "time"   ? ColumnType::time
               : c.type == "double" ? ColumnType::double_
                                    : ColumnType::long_;
      d.real_type = d.type;
      tm.columns.push_back(d);
    }
    tm.finalize();
    (void)apply_table_schema(tm, *def);
    ByteReader r(Bytes(zeros, sizeof zeros), 0);
    std::string out;
    for (const ColumnInfo& ci : tm.infos) {
      if (!append_value_json(ci, r, out).ok()) break;
    }
    for (const SchemaColumn& c : def->columns) out += column_type_text(c);
  }
  return 0;
}
