// RowImageCursor: the one walker of the row-image layout (rows.h documents it). It reads an
// image's head (PARTIAL_UPDATE_ROWS value_options and partial-JSON bitmap, the null bitmap) and
// then yields, column by column, a cell: absent (not in the image's column bitmap), null, a value
// or a partial JSON value (diffs). It never reads a value: at a value or partial cell the reader
// stands on the value's first byte, and the consumer takes it (decodes, renders, sizes or skips
// it), which is what sizes it. Everything is inline and allocates nothing: its users walk every
// image of every row through it. They are decode_image_cells (rows/image_cells.cpp: the SQL
// output, replay), stats' row walk (stats/row_walk.cpp: it takes a full image's non-NULL
// values 64 at a time, any_null and value_bits), convert's JSON renderer (RowImageDecoder,
// rows/row_image.cpp: for_each_present in both its loops, read_partial) and Canal's rows worker
// (canal/canal_rows.cpp: for_each_present, the present count given once per rows event).
//
//   RowImageCursor cur;
//   if (Status st = cur.open(tm, width, present, partial_after, r); !st.ok()) return st;
//   while (cur.next_present()) {          // or next() (absent cells too), next_value()
//     const std::size_t i = cur.column();
//     switch (cur.kind()) { ... }         // the consumer takes the value from `r`
//   }                                     // or cur.for_each_present([&](i, kind) { ... })
//   if (!r.ok()) return r.error();        // once per image
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/result.h>
#include "rows/rows.h"
#include "rows/table_map.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace binlogctl {

enum class CellKind : std::uint8_t {
  absent,   // not in the image's column bitmap (MINIMAL/NOBLOB images): no bit, no bytes
  null,     // present, its null bit set: no bytes
  value,    // present, not null: the value's bytes (format by the column's type and metadata)
  partial,  // a PARTIAL_UPDATE_ROWS after image's JSON column given as diffs: the column's
            // length prefix (metadata bytes), then the diffs (rows.h)
};

class RowImageCursor {
 public:
  // Reads the head of one image of `width` columns at `r` (once: a cursor walks one image; its
  // position and bitmap counters are not reset, so each image gets a new cursor, which costs
  // nothing). `present`: the image's column bitmap;
  // `partial_after`: the PARTIAL_UPDATE_ROWS after-image layout (value_options first).
  // Errors: a width over the map's columns (Errc::bad_value at the image), else the reader's.
  [[gnu::always_inline]] Status open(const TableMap& tm, std::uint64_t width, Bytes present, bool partial_after,
                                     ByteReader& r) {
    if (width > tm.columns.size()) return too_wide(r);
    return open_head(tm, width, present, count_bits_inline(present, width), partial_after, r);
  }
  // The same, with the image's present column count given: `n_present` = count_bits(present,
  // width), counted once for a rows event's images rather than once per image.
  [[gnu::always_inline]] Status open(const TableMap& tm, std::uint64_t width, Bytes present, std::size_t n_present,
                                     bool partial_after, ByteReader& r) {
    if (width > tm.columns.size()) return too_wide(r);
    return open_head(tm, width, present, n_present, partial_after, r);
  }

  // The next column, absent ones included: false after the last.
  [[gnu::always_inline]] bool next() noexcept {
    if (++i_ >= n_) return false;
    const bool json = partial_updates_ && defs_[i_].type == ColumnType::json;
    if (!all_present_ && !bit_is_set(present_, i_)) {
      if (json) ++json_index_;
      kind_ = CellKind::absent;
      return true;
    }
    kind_ = null_bit() ? CellKind::null : CellKind::value;
    if (json) {
      if (kind_ == CellKind::value && bit_is_set(partial_bits_, json_index_)) kind_ = CellKind::partial;
      ++json_index_;
    }
    return true;
  }
  // The next column present in the image (null, value or partial): false after the last.
  // kMayBePartial = false: the caller has seen !partial_updates() (no partial cell can come), or
  // takes a partial JSON value as a value (sizes it: it has the column's length prefix); the
  // loop has no partial JSON bookkeeping at all.
  template <bool kMayBePartial = true>
  [[gnu::always_inline]] bool next_present() noexcept {
    if (!kMayBePartial || !partial_updates_) {  // the common case, without the partial JSON bookkeeping
      do {
        if (++i_ >= n_) return false;
      } while (!all_present_ && !bit_is_set(present_, i_));
      kind_ = null_bit() ? CellKind::null : CellKind::value;
      return true;
    }
    while (next())
      if (kind_ != CellKind::absent) return true;
    return false;
  }
  // The same walk as next_present, inside out: f(column, kind) for each column present in the
  // image (kind null, value or, when kMayBePartial, partial), in order; stops when f returns false
  // and returns false then. The walk's counters are locals of the loop, where g++ keeps them in
  // registers around a large loop body (the JSON renderer's); next_present's live in the cursor
  // and go through memory at every column. A cursor is walked one way or the other, not both.
  template <bool kMayBePartial = true, class F>
  [[gnu::always_inline]] bool for_each_present(F&& f) {
    if (!kMayBePartial || !partial_updates_) {  // the common case, without the partial JSON bookkeeping
      const std::uint8_t* nulls = nulls_;
      const bool all = all_present_;
      const Bytes present = present_;
      std::size_t k = null_index_;
      for (std::size_t i = i_ + 1, n = n_; i < n; ++i) {
        if (!all && !bit_is_set(present, i)) continue;
        const bool is_null = ((nulls[k >> 3] >> (k & 7)) & 1) != 0;
        ++k;
        if (!f(i, is_null ? CellKind::null : CellKind::value)) return false;
      }
      return true;
    }
    while (next())
      if (kind_ != CellKind::absent && !f(i_, kind_)) return false;
    return true;
  }
  // The next column with bytes (value or partial): false after the last.
  template <bool kMayBePartial = true>
  [[gnu::always_inline]] bool next_value() noexcept {
    while (next_present<kMayBePartial>())
      if (kind_ != CellKind::null) return true;
    return false;
  }

  // For walkers that take a full image's values in bulk (all_present(): the null bitmap has a
  // bit per column, so a null bit's index is its column's).
  // A column of the image is NULL (any image: present columns only).
  bool any_null() const noexcept {
    for (std::size_t base = 0; base < n_present_; base += 64) {
      const std::size_t k = std::min<std::size_t>(64, n_present_ - base);
      std::uint64_t w = load_le(nulls_ + base / 8, (k + 7) / 8);
      if (k < 64) w &= (std::uint64_t{1} << k) - 1;
      if (w != 0) return true;
    }
    return false;
  }
  // A full image's columns base .. base + 63 (base a multiple of 64, below width()): bit k set
  // when column base + k is not NULL (a value, or a partial JSON value: partial_updates() tells).
  // The cells it yields are not the cursor's: next() and its kin do not move past them.
  [[gnu::always_inline]] std::uint64_t value_bits(std::size_t base) const noexcept {
    const std::size_t k = std::min<std::size_t>(64, n_ - base);
    std::uint64_t w = ~load_le(nulls_ + base / 8, (k + 7) / 8);
    if (k < 64) w &= (std::uint64_t{1} << k) - 1;
    return w;
  }

  std::size_t column() const noexcept { return i_; }  // of the current cell
  CellKind kind() const noexcept { return kind_; }
  std::size_t width() const noexcept { return n_; }
  std::size_t present_count() const noexcept { return n_present_; }
  bool all_present() const noexcept { return all_present_; }
  bool partial_updates() const noexcept { return partial_updates_; }  // value_options bit 0
  Bytes nulls() const noexcept { return Bytes(nulls_, (n_present_ + 7) / 8); }

  // At a partial cell of a column with metadata `meta`: reads its length (meta bytes, 4 when
  // meta is not 1..4) and the diffs, and sets `diffs` and `diffs_at` (their offset).
  // Errors: the reader's, or Errc::truncated when the length passes the end of the row.
  static Status read_partial(ByteReader& r, std::uint16_t meta, Bytes& diffs, std::uint64_t& diffs_at) {
    const std::uint64_t at = r.offset();
    const std::uint64_t len = r.le_n(meta >= 1 && meta <= 4 ? meta : 4);
    if (!r.ok()) return r.error();
    if (len > r.remaining()) return DecodeError{Errc::truncated, at, "partial JSON value runs past the end of the row"};
    diffs_at = r.offset();
    diffs = r.bytes(static_cast<std::size_t>(len));
    return {};
  }

 private:
  [[gnu::noinline, gnu::cold]] static Status too_wide(const ByteReader& r) {
    return DecodeError{Errc::bad_value, r.offset(), "rows event has more columns than its TABLE_MAP"};
  }
  [[gnu::always_inline]] Status open_head(const TableMap& tm, std::uint64_t width, Bytes present,
                                          std::size_t n_present, bool partial_after, ByteReader& r) {
    if (partial_after) {
      const std::uint64_t value_options = r.packed_int();
      partial_updates_ = (value_options & 1u) != 0;  // PARTIAL_JSON_UPDATES
      // One bit per JSON column of the table, present in the image or not.
      if (partial_updates_) partial_bits_ = r.bytes((tm.json_columns + 7u) / 8u);
    }
    nulls_ = r.bytes((n_present + 7) / 8).data();
    if (!r.ok()) return r.error();
    n_ = static_cast<std::size_t>(width);
    n_present_ = n_present;
    all_present_ = n_present == n_;  // the bitmap has no more than `width` bits
    present_ = present;
    defs_ = tm.columns.data();
    return {};
  }
  // The null bit of the next present column (the null bitmap has one per present column).
  [[gnu::always_inline]] bool null_bit() noexcept {
    const std::size_t k = null_index_++;
    return ((nulls_[k >> 3] >> (k & 7)) & 1) != 0;
  }

  std::size_t i_ = static_cast<std::size_t>(-1);
  std::size_t n_ = 0, n_present_ = 0, null_index_ = 0, json_index_ = 0;
  const std::uint8_t* nulls_ = nullptr;
  const ColumnDef* defs_ = nullptr;
  Bytes present_, partial_bits_;
  bool all_present_ = true, partial_updates_ = false;
  CellKind kind_ = CellKind::absent;
};

}  // namespace binlogctl
