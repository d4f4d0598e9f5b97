// convert --format json, rendering side: row changes prepared by the converting thread (which
// keeps all the state: transactions, table maps, schema history, selection) are rendered to JSON
// by a pool of threads, batch by batch, and written in the order they were prepared.
//
// A batch owns copies of what its jobs need (the rows bytes, the per-event parts of every record,
// the table map by shared pointer), so the input behind it can be released and the table map
// replaced while it waits. Diagnostics raised while rendering travel with the batch and are
// reported when it is written, so stdout and stderr keep the order of a one-thread run. Memory is
// bounded: a fixed pool of batches, each closed once its copied input passes a set size.
#pragma once

#include <binlogctl/columns.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/output.h>
#include "batch_pool.h"

#include "rows/rows.h"
#include "rows/table_map.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl::convert_detail {

// What rendering one rows event needs, as views (into a batch, or into the event itself when the
// converting thread renders it).
struct RowsView {
  const TableMap* map = nullptr;
  std::string_view text;    // the record up to "before": (inserts: up to "before":null,"after":)
  std::string_view suffix;  // ,"primary_key":[..] and the extra row info keys (and the tail when
                            // the event has no partial JSON: nothing goes between them then)
  std::string_view tail;    // ,"xid", ,"payload_pos","inner_index", and '}'
  Bytes rows;                            // the row images (decompressed if they were compressed)
  Bytes present_before, present_after;   // the column bitmaps
  std::uint64_t rows_offset = 0, width = 0;
  RowsKind kind = RowsKind::insert;
  bool partial_json = false;
};

// One job: literal lines (statements, already rendered), or the rows of one rows event (a
// RowsView whose bytes were copied into the batch's arena).
struct Job {
  bool literal = true;
  Span text;  // literal: whole lines; rows: RowsView::text
  // rows only:
  Span suffix, tail, rows, present_before, present_after;  // RowsView's, in the arena
  Span log_name;                    // for diagnostics
  std::uint64_t rows_offset = 0;
  std::uint64_t width = 0;
  std::uint64_t pos = 0;            // the record's pos (the payload's for inner events)
  std::int64_t inner_index = -1;    // -1: top-level event
  std::string_view event_name;      // static storage (event_type_constant)
  RowsKind kind = RowsKind::insert;
  bool partial_json = false;
  std::shared_ptr<const TableMap> map;  // owns RowsView::map while the job waits
};

struct Batch : Arena {
  std::vector<Job> jobs;
  RenderBuf out;
  std::vector<Diagnostic> diags;

  std::size_t size() const { return arena.size(); }
  bool empty() const { return jobs.empty(); }

  // A rows job: what `v` views copied into the arena; `map` owns v.map.
  void add_rows(const RowsView& v, std::shared_ptr<const TableMap> map, std::string_view log_name,
                std::uint64_t pos, std::int64_t inner_index, std::string_view event_name);
  // The RowsView of rows job `j`, into the arena.
  RowsView rows_view(const Job& j) const;
  void clear() {
    arena.clear();
    jobs.clear();
    out.clear();
    diags.clear();
  }
};

// The diagnostic for a rows event that does not decode, as the converter words it.
Diagnostic undecodable_rows(std::string_view log_name, std::uint64_t pos, std::int64_t inner_index,
                            std::string_view event_name, const DecodeError& e);

// Renders the rows of `v` as records into `sink`, which has `RenderBuf& buf()` and
// `void end_line()`. Returns the error that stopped it, if any (the record being rendered is
// dropped; the records before it stay).
template <class Sink>
std::optional<DecodeError> render_rows(const RowsView& v, Sink& sink, RowImageDecoder& images,
                                       const RenderOptions& ro) {
  const TableMap& tm = *v.map;
  const JsonRowPlan& jp = images.plan(tm);
  ByteReader r(v.rows, v.rows_offset);
  while (r.ok() && !r.empty()) {
    RenderBuf& out = sink.buf();
    const std::size_t mark = out.size();
    const std::size_t row_at = r.position();
    out.append(v.text);
    Status st;
    if (v.kind == RowsKind::insert) {
      st = images.decode(tm, jp, v.width, v.present_before, ImageRole::after, false, r, out, ro);
    } else {
      st = images.decode(tm, jp, v.width, v.present_before, ImageRole::before, false, r, out, ro);
      if (st.ok()) {
        out.append(",\"after\":");
        if (v.kind == RowsKind::update)
          st = images.decode(tm, jp, v.width, v.present_after, ImageRole::after, v.partial_json, r, out, ro);
        else
          out.append("null");
      }
    }
    if (st.ok() && r.position() == row_at)  // the bytes after it could never be consumed
      st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
    if (!st.ok()) {
      out.resize(mark);
      return st.error();
    }
    out.append(v.suffix);
    if (v.partial_json) {
      if (!images.json_diffs().empty()) {
        out.append(",\"json_diffs\":");
        out.append(images.json_diffs());
      }
      out.append(v.tail);
    }
    sink.end_line();
  }
  if (!r.ok()) return r.error();
  return std::nullopt;
}

// Renders every job of `b` into b.out and its diagnostics into b.diags.
void render_batch(Batch& b, RowImageDecoder& images, const RenderOptions& ro);

// The JSON side of BatchPool.
struct JsonRender {
  using Batch = convert_detail::Batch;
  using Worker = RowImageDecoder;
  LineOutput& out;
  DiagnosticSink& diag;
  const RenderOptions& ro;
  void render(Batch& b, Worker& images) const { render_batch(b, images, ro); }
  void write(Batch& b) const;  // the output and the diagnostics of a rendered batch
};

class RenderPool {
 public:
  // `threads` 0: batches are rendered and written by the calling thread when submitted.
  // `batch_bytes`: a batch is handed on once its copied input passes this size.
  RenderPool(unsigned threads, std::size_t batch_bytes, LineOutput& out, DiagnosticSink& diag,
             const RenderOptions& ro)
      : render_{out, diag, ro}, pool_(threads, batch_bytes, render_) {}

  // The batch being filled (converting thread only).
  Batch& current() { return pool_.current(); }
  // Hands the current batch on when it is full enough.
  void maybe_submit() { pool_.maybe_submit(); }
  // Hands the current batch on and waits until every batch is rendered and written: after it,
  // the caller may write to the output or to stderr itself. Rethrows a write error.
  void sync() { pool_.sync(); }

 private:
  JsonRender render_;
  BatchPool<JsonRender> pool_;
};

}  // namespace binlogctl::convert_detail
