// decode_image_cells: a row image as typed values (rows.h), the layout row_image.cpp documents.
#include "rows/rows.h"

namespace binlogctl {

Status decode_image_cells(const TableMap& tm, std::uint64_t width, Bytes present, ImageRole role, bool partial,
                          ByteReader& r, std::vector<ImageCell>& cells) {
  const std::uint64_t image_at = r.offset();
  if (width > tm.columns.size() || width > tm.infos.size())
    return DecodeError{Errc::bad_value, image_at, "rows event has more columns than its TABLE_MAP"};
  const auto n = static_cast<std::size_t>(width);
  Bytes partial_bits;
  bool partial_updates = false;
  if (partial && role == ImageRole::after) {
    const std::uint64_t value_options = r.packed_int();
    partial_updates = (value_options & 1u) != 0;  // PARTIAL_JSON_UPDATES
    if (partial_updates) partial_bits = r.bytes((tm.json_columns + 7u) / 8u);
  }
  const std::size_t n_present = count_bits(present, width);
  const Bytes nulls = r.bytes((n_present + 7) / 8);
  if (!r.ok()) return r.error();
  cells.resize(n);
  std::size_t null_index = 0, json_index = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ImageCell& c = cells[i];
    const ColumnInfo& ci = tm.infos[i];
    const bool is_partial = partial_updates && ci.type == ColumnType::json && bit_is_set(partial_bits, json_index);
    if (ci.type == ColumnType::json) ++json_index;
    c.present = bit_is_set(present, i);
    c.is_null = false;
    c.partial_json = false;
    c.diffs = {};
    c.raw = {};
    if (!c.present) continue;
    c.is_null = bit_is_set(nulls, null_index++);
    if (c.is_null) continue;
    if (is_partial) {
      const std::uint64_t at = r.offset();
      const std::uint64_t len = r.le_n(ci.meta >= 1 && ci.meta <= 4 ? ci.meta : 4);
      if (!r.ok()) return r.error();
      if (len > r.remaining()) return DecodeError{Errc::truncated, at, "partial JSON value runs past the end of the row"};
      c.partial_json = true;
      c.diffs_at = r.offset();
      c.diffs = r.bytes(static_cast<std::size_t>(len));
      continue;
    }
    const std::size_t from = r.position();
    Status st = decode_column_value(ci, r, c.value);
    if (!st.ok()) return st;
    if (!r.ok()) return r.error();
    c.raw = r.data().subspan(from, r.position() - from);
  }
  return {};
}

}  // namespace binlogctl
