// flat_message (flat_rows.h).
#include "canal/flat_rows.h"

#include "EntryProtocol.pb.h"

#include <chrono>

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl::canal_detail {

std::size_t flat_message(OutBuf& out, std::int64_t es, std::string_view schema, std::string_view table,
                         std::string_view gtid, const FlatEntry& f, bool data_written, std::size_t* sql_at) {
  const bool rows = f.rows != nullptr;
  if (!data_written) {
    out.append("{\"data\":", 8);
    if (rows)
      FlatRows::array_or_null(out, f.rows->data());
    else
      out.append("null", 4);
  }
  out.append(",\"database\":", 12);
  append_flat_json_string(out, schema);
  out.append(",\"es\":", 6);
  append_dec(out, es);
  out.append(",\"gtid\":", 8);
  if (gtid.empty())
    out.append("null", 4);
  else
    append_flat_json_string(out, gtid);
  out.append(",\"id\":", 6);
  const std::size_t id_at = out.size();
  out.append(",\"isDdl\":", 9);
  out.append(f.is_ddl ? std::string_view("true") : std::string_view("false"));
  out.append(",\"mysqlType\":", 13);
  if (f.is_ddl)
    out.append("null", 4);
  else if (rows)
    f.rows->mysql_types(out, f.plan);
  else
    out.append("{}", 2);
  out.append(",\"old\":", 7);
  if (rows)
    FlatRows::array_or_null(out, f.rows->old());
  else
    out.append("null", 4);
  out.append(",\"pkNames\":", 11);
  if (rows)
    FlatRows::array_or_null(out, f.rows->pks());
  else
    out.append("null", 4);
  out.append(",\"sql\":", 7);
  if (sql_at != nullptr) *sql_at = out.size() + 1;
  append_flat_json_string(out, f.sql);
  out.append(",\"sqlType\":", 11);
  if (f.is_ddl)
    out.append("null", 4);
  else if (rows)
    f.rows->sql_types(out, f.plan);
  else
    out.append("{}", 2);
  out.append(",\"table\":", 9);
  append_flat_json_string(out, table);
  out.append(",\"ts\":", 6);
  append_dec(out,
             static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count()));
  out.append(",\"type\":", 8);
  append_flat_json_string(out, canalpb::EventType_Name(static_cast<canalpb::EventType>(f.event_type)));
  out.append("}\n", 2);
  return id_at;
}

}  // namespace binlogctl::canal_detail
