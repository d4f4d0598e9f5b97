// append_value_json: one column value -> JSON, as the typed decoder (decode_value.h) reads it and
// the renderer (value_json.h) writes it.
#include "columns/column_value.h"
#include "columns/column_json.h"

#include "decode_value.h"
#include "value_json.h"

namespace binlogctl {

Status append_value_json(const ColumnInfo& col, ByteReader& row, RenderBuf& out, const RenderOptions& opts) {
  const std::size_t mark = out.size();
  ColumnValue v;
  Status st = value_detail::decode_value(col, row, v, kDecodeStrict, [&](const ColumnValue& cv) {
    return value_detail::render_json(col, cv, out, opts);
  });
  if (st.ok() && !row.ok()) st = row.error();
  if (!st.ok()) out.resize(mark);
  return st;
}

Status append_value_json(const ColumnInfo& col, const ColumnValue& v, RenderBuf& out, const RenderOptions& opts) {
  const std::size_t mark = out.size();
  Status st = value_detail::render_json(col, v, out, opts);
  if (!st.ok()) out.resize(mark);
  return st;
}

}  // namespace binlogctl
