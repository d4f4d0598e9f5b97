// Canal's view of a mapped table (canal_mapper.cpp and its renderers): per column, what every
// row repeats (the encoded constant fields of a Column, the canal-json key and mysqlType), made
// once per TABLE_MAP by make_plan (column_plan.cpp); and the cells a row image is decoded into.
#pragma once

#include <binlogctl/schema.h>

#include "canal/canal_internal.h"
#include "rows/table_map.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace binlogctl::canal_detail {

// ---- rows as Canal sees them -------------------------------------------------------------------

// One column of a row image (Column: index, sqlType, isNull, updated, value). Cells live in an
// Image that keeps them, and their value strings' capacity, from row to row.
struct Cell {
  std::uint32_t index = 0;
  bool updated = false;
  std::uint32_t pb_size = 0;          // encoded Column size (canal-proto)
  const std::string* pb_pre = nullptr;  // its prepared start, if any (column_size sets both)
  CanalValue v;
};

class Image {
 public:
  void clear() noexcept { n_ = 0; }
  Cell& push() {
    if (n_ == cells_.size()) cells_.emplace_back();
    return cells_[n_++];
  }
  void pop() noexcept { --n_; }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  Cell* begin() noexcept { return cells_.data(); }
  Cell* end() noexcept { return cells_.data() + n_; }
  const Cell* begin() const noexcept { return cells_.data(); }
  const Cell* end() const noexcept { return cells_.data() + n_; }
  const Cell& operator[](std::size_t i) const noexcept { return cells_[i]; }

 private:
  std::vector<Cell> cells_;
  std::size_t n_ = 0;
};

// What every row of a mapped table repeats per column, computed once per TABLE_MAP: the
// encoded constant fields of a Column and the canal-json key and mysqlType.
struct ColumnPlan {
  std::string pb_name;  // Column.name (field 3), empty for an empty name, then isKey (4) when set
  // index (1), sqlType (2) and pb_name: what a Column starts with when its sqlType is the
  // column's usual one for a value (pb_pre) or for NULL (pb_pre_null)
  std::string pb_pre, pb_pre_null;
  std::string pb_mysql_type;  // Column.mysqlType (field 10), empty for an empty type
  std::string js_key;         // the name as a JSON string
  std::string js_member;      // ,"name": (a member after the first one; without the comma first)
  std::string js_mysql_type;  // the mysqlType as a JSON string
  std::string name, mysql_type;
  std::uint32_t slot = 0;  // first column of the same name (FlatMessage objects are keyed by name)
  bool key = false;
  bool name_ok = true, type_ok = true;  // valid UTF-8 (else protobuf logs when serializing)
  bool json = false;                    // JSON column: its values are checked for UTF-8 too
  canal_detail::ValuePlan value;        // how its values are rendered
  // A Column's bytes before its value when its sqlType is the usual one (pb_pre or pb_pre_null,
  // then updated when set, then isNull), by [isNull][updated]; and pb_mysql_type. Each padded
  // to a fixed size, so that one copy of that size writes it (fits_fixed: all of them fit).
  static constexpr std::size_t kHeadMax = 48, kTypeMax = 32;
  struct Fixed {
    char head[2][2][kHeadMax] = {};
    std::uint8_t head_len[2][2] = {};
    char type[kTypeMax] = {};
    std::uint8_t type_len = 0;
  };
  Fixed fixed;
  bool fits_fixed = false;
  // js_member padded the same way (js_fixed_len bytes, 0 when it does not fit): canal-json's
  // members are copied from it at kMemberMax bytes, from its start or past its comma.
  static constexpr std::size_t kMemberMax = 48;
  char js_fixed[kMemberMax + 1] = {};
  std::uint8_t js_fixed_len = 0;
};
struct TablePlan {
  std::vector<ColumnPlan> cols;
  bool unique_names = true;
  bool check_utf8 = false;  // some column needs the UTF-8 checks above
};


// The plan of `tm`'s columns: mysqlType from `def` (schema history) when given, else from the
// TABLE_MAP (`display_widths`: with the widths MariaDB and MySQL before 8.0.19 print).
TablePlan make_plan(const TableMap& tm, bool display_widths, const SchemaTable* def);

}  // namespace binlogctl::canal_detail
