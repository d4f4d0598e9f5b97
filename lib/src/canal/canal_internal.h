// Shared between the Canal mapper's translation units (not a public header).
#pragma once

#include <binlogctl/columns.h>
#include <binlogctl/result.h>
#include <binlogctl/table_map.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace binlogctl::canal_detail {

std::optional<std::int32_t> fixed_offset(std::string_view tz);

// TIMESTAMP rendering zone. A named zone goes through TZ + localtime_r (one zone per process).
class TimeZone {
 public:
  explicit TimeZone(std::string_view tz);
  // "YYYY-MM-DD HH:MM:SS" of `seconds` since the epoch in this zone.
  void append_local(std::string& out, std::int64_t seconds) const;

 private:
  bool named_ = false;
  std::int32_t offset_ = 0;
};

struct CanalValue {
  bool is_null = false;
  int sql_type = 0;
  std::string value;
};

// sqlType Canal reports for a NULL value of the column.
int null_sql_type(const ColumnDef& c);
// Value text and sqlType of a non-NULL value whose row-image bytes are `raw` (length prefix
// included) at absolute offset `offset`.
Status render_value(const ColumnDef& c, const ColumnInfo& info, Bytes raw, std::uint64_t offset, const TimeZone& tz,
                    CanalValue& v);
// "int(11) unsigned", "varchar(32)", "decimal(10,2)", ... rebuilt from the TABLE_MAP.
std::string mysql_type_text(const ColumnDef& c, bool display_widths);

}  // namespace binlogctl::canal_detail
