// decode_image_cells: a row image as typed values (rows.h), walked by RowImageCursor.
#include "rows/rows.h"

#include "rows/row_cursor.h"

namespace binlogctl {

Status decode_image_cells(const TableMap& tm, std::uint64_t width, Bytes present, ImageRole role, bool partial,
                          ByteReader& r, std::vector<ImageCell>& cells) {
  if (width > tm.infos.size())  // the cursor checks tm.columns; the values are decoded by tm.infos
    return DecodeError{Errc::bad_value, r.offset(), "rows event has more columns than its TABLE_MAP"};
  RowImageCursor cur;
  if (Status st = cur.open(tm, width, present, partial && role == ImageRole::after, r); !st.ok()) return st;
  cells.resize(cur.width());
  while (cur.next()) {
    const std::size_t i = cur.column();
    ImageCell& c = cells[i];
    c.present = cur.kind() != CellKind::absent;
    c.is_null = cur.kind() == CellKind::null;
    c.partial_json = false;
    c.diffs = {};
    c.raw = {};
    if (cur.kind() == CellKind::partial) {
      c.partial_json = true;
      if (Status st = RowImageCursor::read_partial(r, tm.infos[i].meta, c.diffs, c.diffs_at); !st.ok()) return st;
    } else if (cur.kind() == CellKind::value) {
      const std::size_t from = r.position();
      Status st = decode_column_value(tm.infos[i], r, c.value);
      if (!st.ok()) return st;
      if (!r.ok()) return r.error();
      c.raw = r.data().subspan(from, r.position() - from);
    }
  }
  return {};
}

}  // namespace binlogctl
