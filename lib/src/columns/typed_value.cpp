// decode_column_value: one row-image value as a typed view (column_value.h). The byte formats
// are documented in column_json.h (append_value_json) and in the decoder itself (decode_value.h);
// this decoder stops at the value and leaves the text to a renderer (value_json.cpp renders
// JSON).
#include "columns/column_value.h"

#include "decode_value.h"

namespace binlogctl {

Status decode_column_value(const ColumnInfo& col, ByteReader& r, ColumnValue& v, unsigned leniency) noexcept {
  v.offset = r.offset();
  v.bytes = {};
  return value_detail::decode_value(col, r, v, leniency, value_detail::Decoded{});
}

}  // namespace binlogctl
