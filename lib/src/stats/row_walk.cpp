// Counting the rows of a rows event without rendering them: each image is skipped column by
// column by its ValueSizeRule, else with column_value_size; RowImageCursor reads the layout.
#include <binlogctl/columns.h>
#include "rows/rows.h"
#include <binlogctl/stats.h>
#include "stats/row_walk.h"

#include "rows/row_cursor.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace binlogctl {

std::vector<RowSkipStep> row_skip_steps(std::span<const ValueSizeRule> rules) {
  std::vector<RowSkipStep> steps;
  std::uint64_t run = 0;
  for (const ValueSizeRule& sr : rules) {
    if (sr.fixed != 0) {
      run += sr.fixed;
    } else if (sr.prefix != 0) {
      steps.push_back(RowSkipStep{static_cast<std::uint32_t>(run), sr.prefix});
      run = 0;
    } else {
      return {};  // sized one value at a time
    }
    if (run > UINT32_MAX) return {};
  }
  if (run != 0) steps.push_back(RowSkipStep{static_cast<std::uint32_t>(run), 0});
  return steps;
}

Status skip_row_image(const TableMap& tm, std::uint64_t width, Bytes present, bool partial_after,
                      ByteReader& r, std::span<const ValueSizeRule> rules, std::span<const RowSkipStep> steps) {
  RowImageCursor cur;
  if (Status st = cur.open(tm, width, present, partial_after, r); !st.ok()) return st;
  const std::size_t n = cur.width();
  if (rules.size() < n) rules = {};
  // The values are skipped through a position `at` in the reader's bytes, by each column's rule;
  // a value no rule sizes (or one that would pass the end) goes through column_value_size.
  const Bytes data = r.data();
  const std::size_t size = data.size();
  std::size_t at = r.position();
  if (!steps.empty() && cur.all_present() && rules.size() == n && !cur.any_null()) {
    // Every column, none NULL: a run of fixed-size columns at a time. A value that would pass
    // the end leaves it to the walk below, which says where.
    std::size_t a = at;
    bool fits = true;
    for (const RowSkipStep& s : steps) {
      if (s.fixed > size - a) {
        fits = false;
        break;
      }
      a += s.fixed;
      if (s.prefix == 0) continue;
      if (s.prefix > size - a) {
        fits = false;
        break;
      }
      const std::uint64_t len = load_le(data.data() + a, s.prefix);
      a += s.prefix;
      if (len > size - a) {
        fits = false;
        break;
      }
      a += static_cast<std::size_t>(len);
    }
    if (fits) {
      r.skip(a - r.position());
      return {};
    }
  }
  Status err;
  auto skip_value = [&](std::size_t i) __attribute__((always_inline)) -> bool {
    if (!rules.empty()) {
      const ValueSizeRule sr = rules[i];
      const std::size_t rem = size - at;
      if (sr.fixed != 0 && sr.fixed <= rem) {
        at += sr.fixed;
        return true;
      }
      if (sr.prefix != 0 && sr.prefix <= rem) {
        const std::uint64_t len = load_le(data.data() + at, sr.prefix);
        if (len <= rem - sr.prefix) {
          at += sr.prefix + static_cast<std::size_t>(len);
          return true;
        }
      }
    }
    r.skip(at - r.position());
    const ColumnDef& c = tm.columns[i];
    // A partial JSON value has the column's length prefix too: the same size rule.
    auto value_size = column_value_size(c.type, c.meta, r);
    if (!value_size) {
      err = value_size.error();
      return false;
    }
    r.skip(*value_size);
    if (!r.ok()) {
      err = r.error();
      return false;
    }
    at = r.position();
    return true;
  };
  bool ok = true;
  // A partial JSON value is sized as a value: it has the column's length prefix.
  if (cur.all_present()) {
    // Every column in the image (the usual full image): the non-null ones 64 at a time.
    for (std::size_t base = 0; ok && base < n; base += 64) {
      std::uint64_t w = cur.value_bits(base);
      while (ok && w != 0) {
        const std::size_t i = base + static_cast<std::size_t>(std::countr_zero(w));
        w &= w - 1;
        ok = skip_value(i);
      }
    }
  } else {
    while (ok && cur.next_value<false>()) ok = skip_value(cur.column());
  }
  if (!ok) return err;
  r.skip(at - r.position());
  return {};
}

Result<std::uint64_t> count_row_changes(const TableMap& tm, const RowsEventHeader& h,
                                        RowsEventKind kind, Bytes rows, std::uint64_t rows_offset,
                                        std::span<const ValueSizeRule> rules,
                                        std::span<const RowSkipStep> steps) {
  ByteReader r(rows, rows_offset);
  std::uint64_t n = 0;
  while (!r.empty()) {
    const std::size_t before = r.position();
    Status st = skip_row_image(tm, h.width, h.columns_before, false, r, rules, steps);
    if (st.ok() && kind.kind == RowsKind::update)
      st = skip_row_image(tm, h.width, h.columns_after, kind.partial_json, r, rules, steps);
    if (!st.ok()) return st.error();
    if (r.position() == before)  // an image of no bytes would never end the event
      return DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
    ++n;
  }
  if (!r.ok()) return r.error();
  return n;
}

}  // namespace binlogctl
