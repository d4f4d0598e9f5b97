// make_plan (column_plan.h).
#include "canal/column_plan.h"

#include <cstring>
#include <string_view>
#include <unordered_map>

namespace binlogctl::canal_detail {

TablePlan make_plan(const TableMap& tm, bool display_widths, const SchemaTable* def) {
  TablePlan plan;
  plan.cols.resize(tm.columns.size());
  std::unordered_map<std::string_view, std::uint32_t> first;
  for (std::size_t i = 0; i < tm.columns.size(); ++i) {
    const ColumnDef& c = tm.columns[i];
    ColumnPlan& p = plan.cols[i];
    const std::string mysql_type =
        def != nullptr ? column_type_text(def->columns[i]) : canal_detail::mysql_type_text(c, display_widths);
    if (!c.name.empty()) canal_detail::append_len_field(p.pb_name, 3, c.name);
    if (!mysql_type.empty()) canal_detail::append_len_field(p.pb_mysql_type, 10, mysql_type);
    append_flat_json_string(p.js_key, c.name);
    p.js_member = "," + p.js_key + ":";
    append_flat_json_string(p.js_mysql_type, mysql_type);
    if (p.js_member.size() <= ColumnPlan::kMemberMax) {
      std::memcpy(p.js_fixed, p.js_member.data(), p.js_member.size());
      p.js_fixed_len = static_cast<std::uint8_t>(p.js_member.size());
    }
    p.name = c.name;
    p.mysql_type = mysql_type;
    p.key = c.in_primary_key;
    if (p.key) p.pb_name.append("\x20\x01", 2);
    p.value = canal_detail::value_plan(c);
    for (std::string* pre : {&p.pb_pre, &p.pb_pre_null}) {
      const int sql_type = pre == &p.pb_pre ? p.value.sql_type : p.value.null_sql_type;
      if (i != 0) {
        pre->push_back(0x08);
        canal_detail::append_varint(*pre, i);
      }
      if (sql_type != 0) {
        pre->push_back(0x10);
        canal_detail::append_varint(*pre, canal_detail::int32_wire(sql_type));
      }
      pre->append(p.pb_name);
    }
    p.fits_fixed = p.pb_pre.size() + 4 <= ColumnPlan::kHeadMax && p.pb_pre_null.size() + 4 <= ColumnPlan::kHeadMax &&
                   p.pb_mysql_type.size() <= ColumnPlan::kTypeMax;
    if (p.fits_fixed) {
      for (int null = 0; null < 2; ++null)
        for (int upd = 0; upd < 2; ++upd) {
          std::string h = null != 0 ? p.pb_pre_null : p.pb_pre;
          if (upd != 0) h.append("\x28\x01", 2);
          h.push_back(0x30);
          h.push_back(static_cast<char>(null));
          std::memcpy(p.fixed.head[null][upd], h.data(), h.size());
          p.fixed.head_len[null][upd] = static_cast<std::uint8_t>(h.size());
        }
      std::memcpy(p.fixed.type, p.pb_mysql_type.data(), p.pb_mysql_type.size());
      p.fixed.type_len = static_cast<std::uint8_t>(p.pb_mysql_type.size());
    }
    p.name_ok = canal_detail::proto_utf8_valid(c.name);
    p.type_ok = canal_detail::proto_utf8_valid(mysql_type);
    p.json = c.type == ColumnType::json;
    if (!p.name_ok || !p.type_ok || p.json) plan.check_utf8 = true;
    auto [it, fresh] = first.emplace(c.name, static_cast<std::uint32_t>(i));
    p.slot = it->second;
    if (!fresh) plan.unique_names = false;
  }
  return plan;
}

}  // namespace binlogctl::canal_detail
