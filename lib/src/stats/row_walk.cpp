// Counting the rows of a rows event without rendering them: each image is skipped column by
// column by its ValueSizeRule, else with column_value_size (the layout is in rows.h).
#include <binlogctl/columns.h>
#include <binlogctl/rows.h>
#include <binlogctl/stats.h>

namespace binlogctl {

Status skip_row_image(const TableMap& tm, std::uint64_t width, Bytes present, bool partial_after,
                      ByteReader& r, std::span<const ValueSizeRule> rules) {
  const std::uint64_t image_at = r.offset();
  if (width > tm.columns.size())
    return DecodeError{Errc::bad_value, image_at, "rows event has more columns than its TABLE_MAP"};
  if (partial_after) {
    const std::uint64_t value_options = r.packed_int();
    if ((value_options & 1u) != 0) r.skip((tm.json_columns + 7u) / 8u);  // PARTIAL_JSON_UPDATES
  }
  const std::size_t n_present = count_bits(present, width);
  const Bytes nulls = r.bytes((n_present + 7) / 8);
  if (!r.ok()) return r.error();
  const auto n = static_cast<std::size_t>(width);
  if (rules.size() < n) rules = {};
  std::size_t null_index = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!bit_is_set(present, i)) continue;  // absent from this image
    if (bit_is_set(nulls, null_index++)) continue;
    if (!rules.empty()) {
      const ValueSizeRule sr = rules[i];
      const std::size_t rem = r.remaining();
      if (sr.fixed != 0 && sr.fixed <= rem) {
        r.skip(sr.fixed);
        continue;
      }
      if (sr.prefix != 0 && sr.prefix <= rem) {
        const std::uint64_t len = load_le(r.data().data() + r.position(), sr.prefix);
        if (len <= rem - sr.prefix) {
          r.skip(sr.prefix + static_cast<std::size_t>(len));
          continue;
        }
      }
    }
    const ColumnDef& c = tm.columns[i];
    // A partial JSON value has the column's length prefix too: the same size rule.
    auto size = column_value_size(c.type, c.meta, r);
    if (!size) return size.error();
    r.skip(*size);
    if (!r.ok()) return r.error();
  }
  return {};
}

Result<std::uint64_t> count_row_changes(const TableMap& tm, const RowsEventHeader& h,
                                        RowsEventKind kind, Bytes rows, std::uint64_t rows_offset,
                                        std::span<const ValueSizeRule> rules) {
  ByteReader r(rows, rows_offset);
  std::uint64_t n = 0;
  while (!r.empty()) {
    const std::size_t before = r.position();
    Status st = skip_row_image(tm, h.width, h.columns_before, false, r, rules);
    if (st.ok() && kind.kind == RowsKind::update)
      st = skip_row_image(tm, h.width, h.columns_after, kind.partial_json, r, rules);
    if (!st.ok()) return st.error();
    if (r.position() == before)  // an image of no bytes would never end the event
      return DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
    ++n;
  }
  if (!r.ok()) return r.error();
  return n;
}

}  // namespace binlogctl
