// Row images of WRITE/UPDATE/DELETE rows events, rendered as JSON objects, and the JSON diffs of
// PARTIAL_UPDATE_ROWS.
//
// Layout of the rows part of a rows event (after the header decode_rows_header reads), for every
// version (pre-GA 20-22, v1 23-25, v2 30-32, PARTIAL_UPDATE_ROWS 39, MariaDB compressed 166-171
// once inflated):
//   repeated until the end of the event:
//     before image (UPDATE, DELETE) using the columns_before bitmap, or the only image (WRITE)
//     after image (UPDATE only) using columns_after
//   an image:
//     [PARTIAL_UPDATE_ROWS after image only: packed value_options; when bit 0
//      (PARTIAL_JSON_UPDATES) is set, a bitmap with one bit per JSON column of the table,
//      present in the image or not]
//     null bitmap: one bit per column *present* in the image's bitmap, (n + 7) / 8 bytes
//     the values of the present, non-NULL columns in column order (format: columns.h)
// Bitmaps in rows events are least-significant-bit first. A column whose bit is clear in the
// image's bitmap (binlog_row_image=MINIMAL/NOBLOB, NDB partial images) is absent from the JSON
// object, not null.
// RowImageCursor (row_cursor.h) is the one walker of this layout: for decode_image_cells below
// (the SQL output, replay), stats' row walk, RowImageDecoder (convert --format json, with
// for_each_present: its loops keep the walk's counters in registers) and Canal's rows worker
// (canal/canal_rows.cpp).
//
// A partial JSON column value (sql/json_diff.cc, Json_diff_vector::write_binary): 4-byte length
// (the column's length-prefix size from the metadata), then diffs until that length:
//   1 operation (0 REPLACE, 1 INSERT, 2 REMOVE) | packed path length | path (MySQL JSON path
//   text, e.g. `$.a[1]."b c"`) | REPLACE/INSERT: packed value length | binary JSON value (type
//   byte + data, as a JSON column stores it)
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/columns.h>
#include <binlogctl/event_type.h>
#include <binlogctl/result.h>

#include "columns/column_json.h"
#include "columns/column_value.h"
#include "rows/table_map.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace binlogctl {

// RowsKind, RowsEventKind and classify_rows_event (the rows event codes): event_type.h.

// "INSERT", "UPDATE", "DELETE"
const char* rows_kind_name(RowsKind k) noexcept;

// v2 extra row info (rows_event.h, Rows_event::Extra_row_info): TLV entries
//   0 NDB_INFO:  1 length (of the whole entry, from the length byte on), 1 format, data
//   1 PART_INFO: 2 partition id; UPDATE / PARTIAL_UPDATE also 2 source partition id
struct RowsExtraInfo {
  bool has_ndb = false;
  std::uint8_t ndb_format = 0;
  Bytes ndb_data;
  bool has_partition = false;
  std::uint16_t partition_id = 0;
  bool has_source_partition = false;
  std::uint16_t source_partition_id = 0;
};
// Errors: Errc::truncated inside an entry; Errc::bad_length for an NDB length below 2. Unknown
// tags end the parse (their length is not known) and leave what was decoded.
Result<RowsExtraInfo> decode_rows_extra(Bytes extra, std::uint64_t offset, RowsKind kind);

enum class JsonDiffOp : std::uint8_t { replace = 0, insert = 1, remove = 2 };
const char* json_diff_op_name(JsonDiffOp op) noexcept;  // "replace", "insert", "remove"

struct JsonDiff {
  JsonDiffOp op = JsonDiffOp::replace;
  std::string_view path;
  Bytes value;  // binary JSON (type byte + data); empty for remove
  std::uint64_t value_offset = 0;
};

// Walks the diffs of one partial JSON value (the bytes after the 4-byte length).
class JsonDiffReader {
 public:
  JsonDiffReader(Bytes diffs, std::uint64_t offset) : r_(diffs, offset) {}
  // The next diff; false at the end or on an error (then error() is set).
  bool next(JsonDiff& d);
  bool ok() const noexcept { return err_.code == Errc::ok; }
  const DecodeError& error() const noexcept { return err_; }

 private:
  ByteReader r_;
  DecodeError err_{};
};

// Appends the diffs as a JSON array: [{"op":"replace","path":"$.a","value":1},...].
Status append_json_diffs_json(RenderBuf& out, Bytes diffs, std::uint64_t offset);

// Applies the diffs to `doc` (JSON text, e.g. the before image's rendering of the column) as the
// server does (Json_diff_vector apply: REPLACE an existing value, INSERT an object member or an
// array element at the index (appended past the end), REMOVE), and appends the resulting
// document as compact JSON; object members are kept in the order MySQL's binary JSON stores them
// (by key length, then bytes). Errors: Errc::bad_value for a path that does not parse or does not
// lead to a value the operation can use (offset = the diff).
Status apply_json_diffs(std::string_view doc, Bytes diffs, std::uint64_t offset, RenderBuf& out);
inline Status apply_json_diffs(std::string_view doc, Bytes diffs, std::uint64_t offset, std::string& out) {
  RenderBuf b(out);
  return apply_json_diffs(doc, diffs, offset, b);
}

enum class ImageRole : std::uint8_t { before, after };

// The JSON renderer's plan for one table map, made once per map (TableMap::serial): per column
// the map's ColumnInfo and the renderer's own fast path for it (which one the row loop takes, in
// one byte it tests once per value; each falls back to decode-then-render on anything odd), and
// the key written before each value (',', the quoted name and ':'), also in fixed 32-byte slots so
// that one fixed-size copy writes a short key. The shared column model (columns.h) knows nothing
// of these. Views into the map's ENUM/SET names: valid while the map lives and is not finalized
// again.
struct JsonRowPlan {
  static constexpr std::size_t kKeySlot = 32;
  struct Column {
    ColumnInfo info;  // as the map has it
    // none: decode, then render; utf8_text: text_prefix's UTF-8 text copied out escaped;
    // enum_name: an ENUM index of 1 or 2 bytes picking one of names_json; temporal:
    // temporal_size's remembered rendering.
    enum class Fast : std::uint8_t { none, utf8_text, enum_name, temporal };
    Fast fast = Fast::none;
    std::uint8_t temporal_size = 0;  // fixed_temporal_size, for `temporal`
    std::uint8_t text_prefix = 0;    // utf8_text_prefix (length prefix 1 or 2), for `utf8_text`
    // ENUM: each name as append_text_json renders it (quoted, UTF-8), for `enum_name`.
    std::span<const std::string_view> names_json{};
  };
  std::vector<Column> cols;
  std::vector<std::string> keys;                 // per column: ,"name":
  std::string key_slots;                         // (columns + 1) slots, the last one padding
  std::vector<std::uint8_t> key_slot_len;        // 0: the key does not fit in a slot
  std::vector<std::vector<std::string>> enum_json;  // ENUM columns: each name as JSON
  std::vector<std::vector<std::string_view>> enum_json_views;

  explicit JsonRowPlan(const TableMap& tm);
  JsonRowPlan(const JsonRowPlan&) = delete;  // cols view enum_json_views
  JsonRowPlan& operator=(const JsonRowPlan&) = delete;
};

// Decodes row images into JSON objects. Keeps the spans of the last before image's values so
// that a partial JSON after image can be applied to them. Reuses its buffers: no allocation per
// row once warm (partial JSON application excepted). Holds the JsonRowPlan of the maps it
// renders (a bounded cache keyed by TableMap::serial).
class RowImageDecoder {
 public:
  // The plan for `tm`, made on first use.
  const JsonRowPlan& plan(const TableMap& tm) {
    const Recent& hot = recent_[tm.serial % kRecent];
    return hot.serial == tm.serial ? *hot.plan : plan_slow(tm);
  }
  // Decodes one image of `width` columns at `r` and appends {"col":value,...} to `out`.
  // `present` is the image's column bitmap. `partial` selects the PARTIAL_UPDATE_ROWS after-image
  // layout (value_options first). Errors carry the offset of the failing field; `out` is left
  // with a partial object on error (the caller drops the whole record).
  Status decode(const TableMap& tm, std::uint64_t width, Bytes present, ImageRole role, bool partial,
                ByteReader& r, RenderBuf& out, const RenderOptions& opts) {
    return decode(tm, plan(tm), width, present, role, partial, r, out, opts);
  }
  // The same with tm's plan (plan(tm)) looked up once by the caller, for the rows of one event.
  Status decode(const TableMap& tm, const JsonRowPlan& jp, std::uint64_t width, Bytes present, ImageRole role,
                bool partial, ByteReader& r, RenderBuf& out, const RenderOptions& opts);
  Status decode(const TableMap& tm, std::uint64_t width, Bytes present, ImageRole role, bool partial,
                ByteReader& r, std::string& out, const RenderOptions& opts) {
    RenderBuf b(out);
    return decode(tm, width, present, role, partial, r, b, opts);
  }

  // After a partial after image: {"col":[diffs...],...} for its partial JSON columns, or empty.
  std::string_view json_diffs() const noexcept { return diffs_.view(); }

 private:
  // Each value is decoded into it, then rendered from it. First: its address is `this`.
  ColumnValue cv_;
  static constexpr std::size_t kNoSpan = static_cast<std::size_t>(-1);
  // The last rendering of each column of a fixed-size temporal type (DATE, TIME2, DATETIME2,
  // TIMESTAMP, TIMESTAMP2): rows of a statement often share one (NOW(), a batch load), and the
  // rendering depends only on the type, its metadata, the time zone and the raw bytes.
  struct Memo {
    std::uint64_t raw = 0;
    std::uint32_t key = 0;  // type << 16 | meta
    std::int32_t tz = 0;
    std::uint8_t size = 0;  // 0: empty
    std::uint8_t len = 0;
    char text[38] = {};
  };
  std::vector<Memo> memo_;
  // Plans by map serial; dropped all at once when they describe more than kPlanColumns columns.
  static constexpr std::size_t kPlanColumns = 1u << 16;
  std::unordered_map<std::uint64_t, std::unique_ptr<JsonRowPlan>> plans_;
  std::size_t plan_columns_ = 0;
  // In front of plans_: the plan last used for each serial modulo kRecent (tables alternate
  // from one rows event to the next; rows of one event share one map).
  static constexpr std::size_t kRecent = 64;
  struct Recent {
    std::uint64_t serial = ~std::uint64_t{0};  // no map's
    const JsonRowPlan* plan = nullptr;
  };
  std::array<Recent, kRecent> recent_{};
  std::unique_ptr<JsonRowPlan> unfinalized_;  // a map never finalized (serial 0): made per call
  const JsonRowPlan& plan_slow(const TableMap& tm);
  // decode's walk of a partial JSON after image or a tracked before image (row_image.cpp).
  Status decode_tracked(const TableMap& tm, const JsonRowPlan& jp, std::uint64_t width, Bytes present,
                        bool partial_after, bool track, ByteReader& r, RenderBuf& out, const RenderOptions& opts);
  Status value(const JsonRowPlan::Column& c, std::size_t i, ByteReader& r, RenderBuf& out, const RenderOptions& opts);
  Status memo_value(const ColumnInfo& ci, std::size_t i, std::size_t ms, ByteReader& r, RenderBuf& out,
                    const RenderOptions& opts);
  std::vector<std::size_t> span_begin_, span_end_;  // before image value spans in `out`
  RenderBuf diffs_;
  RenderBuf doc_;
};

// One column of a row image as typed values (column_value.h), for renderers other than the JSON
// hot path (the SQL output). `present`: the column is in the image's bitmap; `partial_json`: a
// PARTIAL_UPDATE_ROWS after-image JSON column given as diffs (`diffs`, at `diffs_at`; the format
// above) instead of a value.
struct ImageCell {
  bool present = false;
  bool is_null = false;
  bool partial_json = false;
  ColumnValue value;
  Bytes raw;  // the value's bytes in the row image (equal raw bytes: equal values)
  Bytes diffs;
  std::uint64_t diffs_at = 0;
};
// Decodes one image of `width` columns at `r` into cells[0..width) (resized; reused across
// calls without allocating once warm). Errors carry the offset of the failing field.
Status decode_image_cells(const TableMap& tm, std::uint64_t width, Bytes present, ImageRole role, bool partial,
                          ByteReader& r, std::vector<ImageCell>& cells);

// The error of a row (all its images) that takes no bytes, as when the column bitmap selects no
// column, while the rows event has bytes left: they could never be consumed, so every reader of
// row images stops the event with this rather than loop.
inline constexpr const char* kEmptyRowImage = "row image without any byte (no columns)";

// Number of set bits among the first `n` bits of an LSB-first bitmap.
std::size_t count_bits(Bytes bitmap, std::uint64_t n) noexcept;

namespace rows_detail {
constexpr std::array<std::uint8_t, 256> make_bit_counts() {
  std::array<std::uint8_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(static_cast<std::uint8_t>(i)));
  return t;
}
// std::popcount is a library call on the baseline x86-64 this is built for; a table is not.
inline constexpr auto kBitCounts = make_bit_counts();
}  // namespace rows_detail

// count_bits, inline for RowImageCursor's row loops. Most tables have at most 8 columns: one byte.
[[gnu::always_inline]] inline std::size_t count_bits_inline(Bytes bitmap, std::uint64_t n) noexcept {
  using rows_detail::kBitCounts;
  if (n <= 8) return bitmap.empty() ? 0 : kBitCounts[bitmap[0] & ((1u << n) - 1u)];
  std::size_t c = 0;
  const std::size_t full = static_cast<std::size_t>(n / 8);
  for (std::size_t i = 0; i < full && i < bitmap.size(); ++i) c += kBitCounts[bitmap[i]];
  if (n % 8 != 0 && full < bitmap.size()) {
    const auto mask = static_cast<std::uint8_t>((1u << (n % 8)) - 1u);
    c += kBitCounts[static_cast<std::uint8_t>(bitmap[full] & mask)];
  }
  return c;
}
inline bool bit_is_set(Bytes bitmap, std::size_t i) noexcept {
  return i / 8 < bitmap.size() && ((bitmap[i / 8] >> (i % 8)) & 1) != 0;
}

}  // namespace binlogctl
