// The statement writer of convert --format sql and --flashback (row_statements.cpp): the rows of
// one rows event as INSERT / UPDATE / DELETE statements, forward or undoing them. Used by the
// converting thread and by each rendering thread (sql_convert.cpp); it touches no shared state.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/result.h>
#include <binlogctl/sql.h>

#include "render/render_buf.h"
#include "rows/rows.h"
#include "rows/table_map.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace binlogctl::sql_detail {

// --rewrite-db: the name a database is written under.
inline std::string_view rewritten_db(const SqlOptions& sql, std::string_view db) {
  for (const auto& [from, to] : sql.rewrite_db)
    if (db == from) return to;
  return db;
}

// --sql-queries transaction: what closes a multi-statement query (the client's delimiter then).
inline constexpr std::string_view kQueryEnd = ";;\n";

// What rendering one rows event needs (views into a batch, or into the event when the
// converting thread renders it).
struct RowsJobView {
  std::shared_ptr<const TableMap> map;
  Bytes rows, present_before, present_after;
  std::uint64_t rows_offset = 0, width = 0;
  RowsKind kind = RowsKind::insert;
  bool partial_json = false;
  std::string_view head;       // the position comment every statement of the event has
  std::string_view session;    // SET lines before the first statement (forward)
  std::string_view generated;  // per column: 1 when generated (not set by statements)
  // --sql-queries transaction: the statements go into multi-statement queries of at most
  // `query_bound` bytes (0: not in a query). They are rendered as if the first began a query: the
  // writing side closes the query before them when it cannot take their first part
  // (SqlConverter::query_join), so that the output does not depend on where rendering happened.
  std::size_t query_bound = 0;
};

// How rendering a rows event ended.
struct RowsOutcome {
  std::optional<DecodeError> error;  // the error that stopped it (the rows before it are rendered)
  bool render_error = false;         // the row decoded but its statement could not be rendered
  // With RowsJobView::query_bound: the bytes of the output before the first `;;` that it wrote
  // (all of it when none), whether it wrote one, and the length of the query it ends in.
  std::size_t query_first = 0, query_len = 0;
  bool query_closed = false;
};

// Where the statements of a rows event go: render() appends each row's text to buf() and calls
// row_done() after it (the text is still in buf(): a sink writes out only there, or later).
class RowTextSink {
 public:
  explicit RowTextSink(RenderBuf& buf) : buf_(buf) {}
  RenderBuf& buf() { return buf_; }
  virtual void row_done() {}

 protected:
  ~RowTextSink() = default;

 private:
  RenderBuf& buf_;
};

// Renders the rows of rows events as statements: one per rendering thread (and one for the
// converting thread). Forward: head, the session lines before the first statement, then the
// statement, per row. Flashback: per row, its undo statement alone, preceded by its length in 4
// bytes (the shared lines travel once per event: Records::kPrefix).
class SqlRowRenderer {
 public:
  SqlRowRenderer();
  ~SqlRowRenderer();
  SqlRowRenderer(SqlRowRenderer&&) noexcept;
  SqlRowRenderer& operator=(SqlRowRenderer&&) noexcept;

  void configure(const SqlOptions& sql);
  RowsOutcome render(const RowsJobView& v, RowTextSink& sink);
  // The rows event being rendered has closed a query (--sql-queries transaction): the bytes
  // before it.
  bool query_closed() const;
  std::size_t query_first() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace binlogctl::sql_detail
