// The row walk stats uses to count row changes without rendering them (row_walk.cpp); the
// library's own, next to stats (stats.h is the public report).
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/columns.h>
#include <binlogctl/result.h>

#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"

#include <cstdint>
#include <span>
#include <vector>

namespace binlogctl {

// A table's columns as the row walk skips them when none is NULL: `fixed` bytes (a run of
// fixed-size columns, summed), then, when `prefix` is not 0, a length-prefixed value (a length of
// `prefix` bytes and that many bytes).
struct RowSkipStep {
  std::uint32_t fixed = 0;
  std::uint8_t prefix = 0;
};
// The steps of a table whose columns have `rules` (value_size_rule of each); empty when a
// column has no rule (its values are sized by column_value_size, one at a time).
std::vector<RowSkipStep> row_skip_steps(std::span<const ValueSizeRule> rules);

// Skips one row image of `width` columns at `r` without decoding values: the null bitmap, then
// each present non-NULL column by its size (column_value_size, columns.h). `present` is the
// image's column bitmap; `partial_after` selects the PARTIAL_UPDATE_ROWS after-image layout
// (value_options, then the partial JSON bitmap when bit 0 is set). Errors: Errc::bad_value when
// the event has more columns than the TABLE_MAP, else those of column_value_size / the reader,
// with the offset of the failing field.
// `rules`: optional, value_size_rule of each column of `tm` (as many as its columns), so that
// fixed-size and length-prefixed values are skipped without a call.
// `steps`: optional, row_skip_steps(rules): an image of every column with none NULL (the usual
// full image) is then skipped a run of fixed-size columns at a time.
Status skip_row_image(const TableMap& tm, std::uint64_t width, Bytes present, bool partial_after,
                      ByteReader& r, std::span<const ValueSizeRule> rules = {},
                      std::span<const RowSkipStep> steps = {});

// Number of row changes in the (already decompressed) rows part of a rows event: images for
// WRITE and DELETE, before/after pairs for UPDATE. `rows_offset` is the absolute offset of
// rows[0], for error offsets; `rules` as for skip_row_image.
Result<std::uint64_t> count_row_changes(const TableMap& tm, const RowsEventHeader& h,
                                        RowsEventKind kind, Bytes rows, std::uint64_t rows_offset,
                                        std::span<const ValueSizeRule> rules = {},
                                        std::span<const RowSkipStep> steps = {});

}  // namespace binlogctl
