// Rows events on the rendering threads (canal_rows.cpp): the jobs the mapper fills batches with,
// the worker that decodes a rows event's images into Canal's Columns (canal-proto) or a
// FlatMessage (canal-json), and the Canal side of BatchPool that renders and writes the batches.
#pragma once

#include <binlogctl/datetime.h>
#include <binlogctl/diagnostic.h>

#include "canal/canal_internal.h"
#include "canal/column_plan.h"
#include "canal/entry_sink.h"
#include "canal/flat_rows.h"
#include "canal/proto_rows.h"
#include "convert/batch_pool.h"
#include "rows/rows.h"
#include "rows/table_map.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {
class RowImageCursor;
}  // namespace binlogctl

namespace binlogctl::canal_detail {

//
// The mapper (the converting thread) keeps transactions, table maps, schema history, selection and
// the state Entry headers are made of. It fills batches with jobs in input order: entries it has
// made whole (BEGIN, END, GTID, statements) and rows events, whose row images the pool decodes and
// encodes (convert_detail::BatchPool, as convert --format json and sql do). Batches are written in
// the order they were filled, one writer at a time. The writer numbers the entries (an entry's
// batch number depends on whether the rows events before it decoded) and prints protobuf's UTF-8
// logs and the diagnostics of rows events that do not decode, so that stdout and stderr are those
// of a one-thread run.

using convert_detail::Span;

struct CanalJob {
  bool rows = false;      // a rows event (else an entry the mapper made whole)
  bool has_text = false;  // canal-json, an entry made whole: it writes a FlatMessage
  int entry_type = 0;     // canalpb::EntryType
  // Entries made whole: a = header, b = storeValue (canal-proto); the FlatMessage before and after
  // its id (canal-json). Rows events, canal-proto: the header before and after its rowsCount.
  Span a, b;
  std::size_t logs_at = 0, logs_end = 0;  // the header's UTF-8 logs, in CanalBatch::logs
  // rows events:
  std::shared_ptr<const TableMap> map;
  std::shared_ptr<const TablePlan> plan;
  Span images, present_before, present_after, log_name, schema, table, gtid;  // images: the row images
  std::uint64_t rows_offset = 0, width = 0, table_id = 0, pos = 0;
  std::int64_t es = 0;          // canal-json: the event's time in milliseconds
  std::string_view event_name;  // static storage (event_type_constant)
  RowsKind kind = RowsKind::insert;
  bool partial_json = false;
  // Rendered: in CanalBatch::out, the header and the storeValue (canal-proto) or the FlatMessage
  // before and after its id (canal-json), and the row values' UTF-8 logs in row_logs; or, when
  // the rows do not decode, the diagnostic (index in CanalBatch::diags) and nothing else.
  Span out_a, out_b;
  std::size_t row_logs_at = 0, row_logs_end = 0;
  std::ptrdiff_t diag = -1;
};

struct CanalBatch : convert_detail::Arena {
  std::vector<CanalJob> jobs;
  Utf8Logs logs;      // the mapper's (entry headers)
  Utf8Logs row_logs;  // the pool's (row values)
  OutBuf out;         // the pool's
  std::vector<Diagnostic> diags;

  std::size_t size() const { return arena.size(); }
  bool empty() const { return jobs.empty(); }
  void clear() {
    arena.clear();
    jobs.clear();
    logs.clear();
    row_logs.clear();
    out.clear();
    diags.clear();
  }
  std::string_view rendered(Span s) const { return out.view().substr(s.at, s.len); }
  // Releases what a very large rows event made the buffers grow to.
  void shrink() {
    if (arena.capacity() > (4u << 20)) std::string().swap(arena);
    if (out.size() == 0) out = OutBuf();
  }
};

// A rendering thread's state: the rows of one event decoded into Canal's cells, reused.
class CanalRowsWorker {
 public:
  // Renders rows job `j` of `b` (see CanalJob).
  void render(CanalBatch& b, CanalJob& j, bool json, const TimeZone& tz);

 private:
  // The before image's cell of column i in the current row, or null.
  const Cell* before_cell(std::size_t i) const {
    if (i >= before_stamp_.size() || before_stamp_[i] != row_stamp_) return nullptr;
    return &before_[before_pos_[i]];
  }
  inline void index_before(std::size_t width);

  // Where one image's columns go: Cells for canal-json (FlatRows reads them), or (canal-proto)
  // Column messages written straight into `out` under field `tag` of RowData, with their UTF-8
  // logs in `logs` in the order serializing checks them (name, value, mysqlType per column).
  struct Target {
    Image* cells = nullptr;  // canal-json
    OutBuf* out = nullptr;   // canal-proto
    Utf8Logs* logs = nullptr;
    std::uint8_t tag = 0;
    bool all_updated = false;    // an INSERT's after image: every Column has updated = true
    bool record_before = false;  // an UPDATE's before image: keep where each value went
  };

  // The before image's value of column i in the current row: false when the image does not have
  // it (`is_null` and `value` then untouched).
  template <bool kProto>
  inline bool before_value(std::size_t i, const Target& t, bool& is_null, std::string_view& value) const;

  // One image, only the columns present in the image's bitmap (`n_present` of them), walked by
  // RowImageCursor. `with_before`: an UPDATE's after image, compared with the before image
  // (index_before, or pb_before_) for `updated`.
  template <bool kProto>
  inline Status image(const TableMap& tm, const TablePlan& plan, std::uint64_t width, Bytes present,
                      std::size_t n_present, bool partial, ByteReader& r, const Target& t, bool with_before,
                      const TimeZone& tz);
  // The cells of an image `cur` has opened. kPartial: the image has partial JSON cells (an
  // after image with PARTIAL_JSON_UPDATES), walked out of line by partial_cells so that the
  // common walk has no partial JSON bookkeeping (and one copy of the cell's code).
  template <bool kProto, bool kPartial>
  inline Status cells(const TableMap& tm, const TablePlan& plan, RowImageCursor& cur, ByteReader& r,
                      const Target& t, bool with_before, const TimeZone& tz);
  template <bool kProto>
  Status partial_cells(const TableMap& tm, const TablePlan& plan, RowImageCursor& cur, ByteReader& r,
                       const Target& t, bool with_before, const TimeZone& tz);

  // Where the current row's before image put each column's value in the batch output
  // (canal-proto), for the after image's `updated` and partial JSON.
  struct BeforeValue {
    std::uint64_t stamp = 0;  // row_stamp_ of the row that has it
    bool is_null = false;
    std::size_t at = 0, len = 0;
  };

  Image before_, after_;
  std::vector<BeforeValue> pb_before_;
  CanalValue pb_value_;  // canal-proto: the value being written (scratch)
  std::uint64_t row_stamp_ = 0;
  std::vector<std::uint64_t> before_stamp_;
  std::vector<std::uint32_t> before_pos_;
  ColumnValue cv_;  // the value being rendered (scratch)
  std::string doc_, count_text_;
  FlatRows flat_rows_;
};

// The Canal side of BatchPool.
struct CanalRender {
  using Batch = CanalBatch;
  using Worker = CanalRowsWorker;
  bool json;
  const TimeZone& tz;
  EntrySink& sink;
  DiagnosticSink& diag;

  void render(Batch& b, Worker& w) const;
  void write(Batch& b) const;
};

}  // namespace binlogctl::canal_detail
