// append_value_json: one column value of a row image -> JSON, dispatched on the column type.
#include "value_dispatch.h"

namespace binlogctl {


Status append_value_json(const ColumnInfo& col, ByteReader& row, JsonBuf& out,
                         const RenderOptions& opts) {
  const std::size_t mark = out.size();
  Status st = value_detail::dispatch(col, row, out, opts);
  if (st.ok() && !row.ok()) st = row.error();
  if (!st.ok()) out.resize(mark);
  return st;
}

}  // namespace binlogctl
