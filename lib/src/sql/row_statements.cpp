// SqlRowRenderer (row_statements.h): the statements of a rows event's rows. Forward INSERTs go
// out as multi-row statements, forward UPDATEs and DELETEs by an integer key as runs (keyed_add);
// flashback writes each row's undo statement alone.
#include "sql/row_statements.h"

#include "columns/column_json.h"
#include "dump/info.h"
#include "sql/sql_value.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>
#include <vector>

namespace binlogctl::sql_detail {

class SqlRowRenderer::Impl {
 public:
  void configure(const SqlOptions& sql) {
    flashback_ = sql.flashback;
    set_ = sql.set;
    sql_ = &sql;
    batch_bytes_ = sql.flashback ? 0 : sql.batch_bytes;
    if (sql.rewrite_db.size() != rewrite_count_) {
      rewrite_count_ = sql.rewrite_db.size();
      names_serial_ = 0;
    }
  }

  RowsOutcome render(const RowsJobView& v, RowTextSink& sink) {
    RowsOutcome o;
    const TableMap& tm = *v.map;
    const bool update = v.kind == RowsKind::update;
    quote_names(tm);
    generated_ = v.generated;
    insert_prefix_.clear();
    std::string_view session = v.session;
    qbound_ = v.query_bound;
    qlen_ = 0;
    qfirst_ = 0;
    qclosed_ = false;
    auto done = [&](RowsOutcome& out) -> RowsOutcome& {
      out.query_len = qlen_;
      out.query_first = qclosed_ ? qfirst_ : qlen_;
      out.query_closed = qclosed_;
      return out;
    };
    // Forward INSERTs: the rows of the event as multi-row statements, each closed before it
    // would pass batch_bytes_ (a row larger than that is a statement of its own).
    const bool multi = batch_bytes_ > 0 && v.kind == RowsKind::insert;
    // Forward UPDATEs (of changed columns) and DELETEs: runs of rows by an integer primary key
    // as one statement each (keyed_add).
    const bool keyed = batch_bytes_ > 0 && !flashback_ &&
                       (v.kind == RowsKind::delete_ || (update && set_ == SqlSet::changed));
    kb_rows_ = 0;
    auto flush_keyed = [&] {
      if (kb_rows_ == 0) return;
      RenderBuf& dst = sink.buf();
      const std::size_t at = dst.size();
      dst.append(v.head);
      dst.append(session);
      session = {};
      keyed_statement(dst, tm, update);
      query_piece(dst, at);
      kb_rows_ = 0;
      sink.row_done();
    };
    std::size_t stmt_len = 0;
    bool stmt_open = false;
    auto close_stmt = [&] {
      if (!stmt_open) return;
      sink.buf().append(";\n", 2);
      stmt_open = false;
    };
    ByteReader r(v.rows, v.rows_offset);
    while (r.ok() && !r.empty()) {
      const std::size_t before_pos = r.position();
      Status st = decode_image_cells(tm, v.width, v.present_before, update ? ImageRole::before : ImageRole::after,
                                     false, r, cells_a_);
      if (st.ok() && update)
        st = decode_image_cells(tm, v.width, v.present_after, ImageRole::after, v.partial_json, r, cells_b_);
      if (st.ok() && r.position() == before_pos) st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
      if (!st.ok()) {
        close_stmt();
        flush_keyed();
        o.error = st.error();
        return done(o);
      }
      if (keyed) {
        Keyed k = keyed_add(tm, update, st);
        if (k == Keyed::full) {
          flush_keyed();
          k = keyed_add(tm, update, st);
        }
        if (!st.ok()) {
          flush_keyed();
          o.error = st.error();
          o.render_error = true;
          return done(o);
        }
        if (k == Keyed::taken) continue;
        flush_keyed();  // a row of its own, after the rows before it
      }
      row_.clear();
      st = multi ? insert_values(row_, tm, cells_a_) : render_row(row_, tm, v.kind);
      if (!st.ok()) {
        close_stmt();
        o.error = st.error();
        o.render_error = true;
        return done(o);
      }
      RenderBuf& dst = sink.buf();
      if (multi) {
        if (stmt_open && stmt_len + 1 + row_.size() + 1 > batch_bytes_) close_stmt();  // (+ the ';')
        // (the query holds the statement's ";\n" already: query_piece counted it with the first row)
        if (stmt_open && qbound_ != 0 && qlen_ + 1 + row_.size() > qbound_) close_stmt();
        if (!stmt_open) {
          const std::size_t start = dst.size();
          dst.append(v.head);
          dst.append(session);
          session = {};
          const std::size_t at = dst.size();
          insert_head(dst, tm, cells_a_);
          stmt_len = dst.size() - at;
          stmt_open = true;
          dst.append(row_.view());
          stmt_len += row_.size();
          query_piece(dst, start, 2);
        } else {
          dst.push_back(',');
          dst.append(row_.view());
          stmt_len += 1 + row_.size();
          if (qbound_ != 0) qlen_ += 1 + row_.size();
        }
        sink.row_done();
        continue;
      }
      if (flashback_) {
        const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(row_.size(), 0xffffffffu));
        char len[4];
        std::memcpy(len, &n, 4);
        dst.append(len, 4);
        dst.append(row_.view());
      } else {
        const std::size_t at = dst.size();
        dst.append(v.head);
        dst.append(session);
        session = {};
        dst.append(row_.view());
        query_piece(dst, at);
      }
      sink.row_done();
    }
    close_stmt();
    flush_keyed();
    return done(o);
  }

 private:
  // --sql-queries transaction: the statement (with its comment and SET lines) just appended at
  // `at`, and `reserve` bytes still to come of it, go into the current query when they fit in
  // qbound_; otherwise `;;` closes the query before them (a statement larger than qbound_ is then
  // a query of its own). The statement's start is still in `dst`: a sink writes out only in
  // row_done(), after it.
  void query_piece(RenderBuf& dst, std::size_t at, std::size_t reserve = 0) {
    if (qbound_ == 0) return;
    const std::size_t len = dst.size() - at + reserve;
    if (qlen_ > 0 && qlen_ + len > qbound_) {
      if (!qclosed_) qfirst_ = qlen_;
      qclosed_ = true;
      const std::size_t n = dst.size() - at;
      dst.resize(dst.size() + kQueryEnd.size());
      std::memmove(dst.data() + at + kQueryEnd.size(), dst.data() + at, n);
      std::memcpy(dst.data() + at, kQueryEnd.data(), kQueryEnd.size());
      qlen_ = 0;
    }
    qlen_ += len;
  }
  std::size_t qbound_ = 0, qlen_ = 0, qfirst_ = 0;
  bool qclosed_ = false;

 public:
  // The rows event being rendered has closed a query (query_piece): the bytes before it.
  bool query_closed() const { return qclosed_; }
  std::size_t query_first() const { return qfirst_; }

 private:

  // `name` per column of the table, quoted, for the statements of one rows event.
  void quote_names(const TableMap& tm) {
    // Maps are mapped again by every transaction: reuse the names while the map is the same one
    // (TableMap::serial: never reused, new whenever the map's columns change).
    if (tm.serial != 0 && names_serial_ == tm.serial) return;
    names_serial_ = tm.serial;
    table_q_.clear();
    append_quoted_identifier(table_q_, sql_ != nullptr ? rewritten_db(*sql_, tm.db) : std::string_view(tm.db));
    table_q_.push_back('.');
    append_quoted_identifier(table_q_, tm.table);
    if (names_q_.size() < tm.columns.size()) names_q_.resize(tm.columns.size());
    for (std::size_t i = 0; i < tm.columns.size(); ++i) {
      names_q_[i].clear();
      append_quoted_identifier(names_q_[i], tm.columns[i].name);
    }
  }

  // The images of the current row: cells and, rendered on demand, their literals ("NULL" for
  // nulls; only absent columns have none). Most statements need a few of them: the key and the
  // changed columns.
  // The literals of an image are kept one after the other in one buffer (spans per column).
  struct LitSpan {
    std::size_t at = 0, len = 0;
  };
  struct Image {
    std::vector<ImageCell>* cells = nullptr;
    RenderBuf* lits = nullptr;
    std::vector<LitSpan>* spans = nullptr;
    std::vector<char>* done = nullptr;
    bool after = false;
  };
  Image image_a() { return Image{&cells_a_, &lits_a_, &spans_a_, &done_a_, false}; }
  Image image_b() { return Image{&cells_b_, &lits_b_, &spans_b_, &done_b_, true}; }
  void reset_literals(std::size_t n) {
    lits_a_.clear();
    lits_b_.clear();
    if (spans_a_.size() < n) {
      spans_a_.resize(n);
      spans_b_.resize(n);
    }
    done_a_.assign(n, 0);
    done_b_.assign(n, 0);
  }
  bool present(const Image& im, std::size_t i) const { return i < im.cells->size() && (*im.cells)[i].present; }
  bool is_null(const Image& im, std::size_t i) const { return (*im.cells)[i].is_null; }
  // Equal values in the two images (raw bytes compared; a partial JSON value always differs).
  bool same(std::size_t i) const {
    const ImageCell& a = cells_a_[i];
    const ImageCell& b = cells_b_[i];
    if (a.is_null || b.is_null) return a.is_null == b.is_null;
    if (a.partial_json || b.partial_json) return false;
    return a.raw.size() == b.raw.size() && std::equal(a.raw.begin(), a.raw.end(), b.raw.begin());
  }

  // The literal of column i of the image, rendered once per row; `out` views it until the next
  // literal of that image is rendered.
  Status literal(const TableMap& tm, const Image& im, std::size_t i, std::string_view& out) {
    RenderBuf& lits = *im.lits;
    LitSpan& span = (*im.spans)[i];
    if (!(*im.done)[i]) {
      (*im.done)[i] = 1;
      span.at = lits.size();
      Status st = literal_text(tm, im, i, lits);
      span.len = lits.size() - span.at;
      if (!st.ok()) return st;
    }
    out = std::string_view(lits.data() + span.at, span.len);
    return {};
  }
  Status literal_text(const TableMap& tm, const Image& im, std::size_t i, RenderBuf& lits) {
    const ImageCell& c = (*im.cells)[i];
    if (c.is_null) {
      lits.append("NULL", 4);
      return {};
    }
    if (c.partial_json) {
      const bool have_before = im.after && i < cells_a_.size() && cells_a_[i].present && !cells_a_[i].is_null &&
                               cells_a_[i].value.kind == ValueKind::json;
      std::string l;
      Status st = have_before ? full_json_after(l, cells_a_[i].value, c) : json_diff_expression(l, tm, i, c);
      lits.append(l);
      return st;
    }
    return append_sql_literal(lits, tm.infos[i], c.value);
  }

  // A partial JSON after image with the before image's document: the whole new document.
  Status full_json_after(std::string& l, const ColumnValue& before, const ImageCell& c) {
    json_before_.clear();
    Status st = append_json_binary(json_before_, before.bytes, before.offset);
    if (!st.ok()) return st;
    json_after_.clear();
    st = apply_json_diffs(json_before_, c.diffs, c.diffs_at, json_after_);
    if (!st.ok()) return st;
    l = "CAST(";
    append_sql_text(l, json_after_, 45);
    l.append(" AS JSON)");
    return {};
  }

  // Without it (binlog_row_image=MINIMAL): the diffs as functions of the column, in order:
  // REPLACE -> JSON_REPLACE, INSERT -> JSON_ARRAY_INSERT at an array index, else JSON_INSERT,
  // REMOVE -> JSON_REMOVE.
  Status json_diff_expression(std::string& l, const TableMap& tm, std::size_t i, const ImageCell& c) {
    l.clear();
    append_quoted_identifier(l, tm.columns[i].name);
    JsonDiffReader rd(c.diffs, c.diffs_at);
    JsonDiff d;
    while (rd.next(d)) {
      const bool array_index = !d.path.empty() && d.path.back() == ']';
      const char* fn = d.op == JsonDiffOp::replace  ? "JSON_REPLACE("
                       : d.op == JsonDiffOp::remove ? "JSON_REMOVE("
                       : array_index                ? "JSON_ARRAY_INSERT("
                                                    : "JSON_INSERT(";
      std::string e = fn;
      e.append(l);
      e.append(", ");
      append_sql_text(e, d.path, 45);
      if (d.op != JsonDiffOp::remove) {
        json_after_.clear();
        Status st = append_json_binary(json_after_, d.value, d.value_offset);
        if (!st.ok()) return st;
        e.append(", CAST(");
        append_sql_text(e, json_after_, 45);
        e.append(" AS JSON)");
      }
      e.push_back(')');
      l.swap(e);
    }
    if (!rd.ok()) return rd.error();
    return {};
  }

  void table_name(RenderBuf& s, const TableMap&) { s.append(table_q_); }

  // INSERT INTO t (present columns) VALUES (...): the part before the values is the same for
  // every row of an event (one column bitmap), kept in insert_prefix_.
  void insert_head(RenderBuf& s, const TableMap&, const std::vector<ImageCell>& cells) {
    if (insert_prefix_.empty()) {
      insert_prefix_.append("INSERT INTO ");
      insert_prefix_.append(table_q_);
      insert_prefix_.append(" (");
      bool first = true;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (!cells[i].present || generated_[i]) continue;
        if (!first) insert_prefix_.push_back(',');
        first = false;
        insert_prefix_.append(names_q_[i]);
      }
      insert_prefix_.append(") VALUES ");
    }
    s.append(insert_prefix_);
  }

  // An INSERT of the image's values, rendered straight from the cells.
  Status insert_cells(RenderBuf& s, const TableMap& tm, const std::vector<ImageCell>& cells) {
    insert_head(s, tm, cells);
    Status st = insert_values(s, tm, cells);
    if (st.ok()) s.append(";\n", 2);
    return st;
  }

  // `(v1,v2,...)`: the image's values of the columns a statement sets.
  Status insert_values(RenderBuf& s, const TableMap& tm, const std::vector<ImageCell>& cells) {
    s.push_back('(');
    bool first = true;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const ImageCell& c = cells[i];
      if (!c.present || generated_[i]) continue;
      if (!first) s.push_back(',');
      first = false;
      if (c.is_null) {
        s.append("NULL", 4);
        continue;
      }
      Status st = append_sql_literal(s, tm.infos[i], c.value);
      if (!st.ok()) return st;
    }
    s.push_back(')');
    return {};
  }

  // WHERE by the primary key when every key column is in the image and not null, else by every
  // column of the image (IS NULL for nulls) and LIMIT 1.
  Status where(RenderBuf& s, const TableMap& tm, const Image& im) {
    bool by_key = !tm.primary_key.empty();
    for (std::uint32_t k : tm.primary_key) by_key = by_key && present(im, k) && !is_null(im, k);
    s.append(" WHERE ");
    bool first = true;
    auto term = [&](std::size_t i) -> Status {
      if (!first) s.append(" AND ");
      first = false;
      s.append(names_q_[i]);
      if (is_null(im, i)) {
        s.append(" IS NULL");
        return {};
      }
      std::string_view l;
      Status st = literal(tm, im, i, l);
      if (!st.ok()) return st;
      s.push_back('=');
      s.append(l);
      return {};
    };
    if (by_key) {
      for (std::uint32_t k : tm.primary_key) {
        Status st = term(k);
        if (!st.ok()) return st;
      }
      return {};
    }
    for (std::size_t i = 0; i < im.cells->size(); ++i) {
      if (!present(im, i)) continue;
      Status st = term(i);
      if (!st.ok()) return st;
    }
    if (first) s.append("1=1");
    s.append(" LIMIT 1");
    return {};
  }

  Status delete_stmt(RenderBuf& s, const TableMap& tm, const Image& where_image) {
    s.append("DELETE FROM ");
    table_name(s, tm);
    Status st = where(s, tm, where_image);
    if (!st.ok()) return st;
    s.append(";\n");
    return {};
  }

  // UPDATE t SET (the columns of `set_image` whose value differs from `where_image`'s, or all)
  // WHERE ...
  Status update_stmt(RenderBuf& s, const TableMap& tm, const Image& set_image, const Image& where_image) {
    const std::size_t start = s.size();
    s.append("UPDATE ");
    table_name(s, tm);
    s.append(" SET ");
    bool any = false;
    for (std::size_t i = 0; i < set_image.cells->size(); ++i) {
      if (!present(set_image, i) || generated_[i]) continue;
      if (set_ == SqlSet::changed && present(where_image, i) && same(i)) continue;
      std::string_view l;
      Status st = literal(tm, set_image, i, l);
      if (!st.ok()) return st;
      if (any) s.push_back(',');
      any = true;
      s.append(names_q_[i]);
      s.push_back('=');
      s.append(l);
    }
    if (!any) {  // nothing changed: no statement
      s.resize(start);
      s.append("# (no column changed)\n");
      return {};
    }
    Status st = where(s, tm, where_image);
    if (!st.ok()) return st;
    s.append(";\n");
    return {};
  }

  Status render_row(RenderBuf& s, const TableMap& tm, RowsKind kind) {
    // An INSERT needs no literal kept: the values go out as they are rendered.
    if (kind == RowsKind::insert && !flashback_) return insert_cells(s, tm, cells_a_);
    if (kind == RowsKind::delete_ && flashback_) return insert_cells(s, tm, cells_a_);
    reset_literals(cells_a_.size());
    switch (kind) {
      case RowsKind::insert:   // flashback
      case RowsKind::delete_:  // forward
        return delete_stmt(s, tm, image_a());
      case RowsKind::update:
        return flashback_ ? update_stmt(s, tm, image_a(), image_b()) : update_stmt(s, tm, image_b(), image_a());
    }
    return {};
  }

  // Forward UPDATE and DELETE rows in bulk. A run of rows of one rows event becomes one statement
  // when every row is found by its primary key and the key's columns are all integers (no
  // collation, padding or rounding: `k IN (...)` finds exactly the rows `k=...` finds), the keys
  // run strictly one way (ORDER BY the key, ASC or DESC, then changes the rows in the order the
  // source did, so unique and foreign key checks and triggers see the same sequence), and, for an
  // UPDATE, no key column changes and every row sets the same columns, each to a literal whose
  // type CASE cannot change (integers, DECIMAL of the column's scale, dates and times as text,
  // X'..' bytes, _utf8mb4 text, NULL; not FLOAT/DOUBLE, BIT, ENUM/SET, JSON, ...):
  //   DELETE FROM t WHERE `id` IN (1,2,3) ORDER BY `id`;
  //   DELETE FROM t WHERE (`a`,`b`) IN ((1,1),(1,2)) ORDER BY `a`,`b`;
  //   UPDATE t SET `c`=CASE `id` WHEN 1 THEN 5 WHEN 2 THEN 6 END WHERE `id` IN (1,2) ORDER BY `id`;
  //   UPDATE t SET `c`=CASE WHEN `a`=1 AND `b`=1 THEN 5 ... END WHERE (`a`,`b`) IN (...) ...;
  // A statement stays within batch_bytes_ and kMaxKeyedRows rows; a run of one row is written as
  // the row's own statement. Any other row ends the run and is written as before.
  static constexpr std::size_t kMaxKeyedRows = 1000;
  enum class Keyed { taken, full, alone };

  static bool integer_kind(const ImageCell& c) {
    return c.present && !c.is_null &&
           (c.value.kind == ValueKind::signed_int || c.value.kind == ValueKind::unsigned_int);
  }
  // A SET value CASE gives to the column as the row's own statement would.
  static bool case_safe(const ImageCell& c, std::string_view lit) {
    if (c.is_null) return true;
    if (c.partial_json) return false;
    switch (c.value.kind) {
      case ValueKind::signed_int:
      case ValueKind::unsigned_int:
      case ValueKind::year:
      case ValueKind::decimal:
      case ValueKind::date:
      case ValueKind::time:
      case ValueKind::datetime:
      case ValueKind::timestamp:
      case ValueKind::binary:
        return true;
      case ValueKind::text:  // _utf8mb4'..' in every row (not _charset X'..' beside it)
        return lit.size() >= 9 && lit.substr(0, 9) == "_utf8mb4'";
      default:
        return false;
    }
  }
  static int compare_key(const ImageCell& a, const ImageCell& b) {
    if (a.value.kind == ValueKind::signed_int) return a.value.i < b.value.i ? -1 : a.value.i > b.value.i ? 1 : 0;
    return a.value.u < b.value.u ? -1 : a.value.u > b.value.u ? 1 : 0;
  }
  std::size_t keyed_cond_len(std::size_t row) const {  // WHEN's condition
    const std::size_t nk = kb_key_.size();
    if (nk == 1) return kb_key_spans_[row].len;
    std::size_t n = 0;
    for (std::size_t j = 0; j < nk; ++j) n += (j ? 5 : 0) + names_q_[kb_key_[j]].size() + 1 + kb_key_spans_[row * nk + j].len;
    return n;
  }

  // Takes the decoded row into the run when it can go there (taken), says when the run must be
  // written first (full), or that the row is written alone.
  Keyed keyed_add(const TableMap& tm, bool update, Status& st) {
    const std::vector<std::uint32_t>& pk = tm.primary_key;
    if (pk.empty()) return Keyed::alone;
    for (std::uint32_t k : pk) {
      if (k >= cells_a_.size() || !integer_kind(cells_a_[k])) return Keyed::alone;
      if (update && k < cells_b_.size() && cells_b_[k].present && !same(k)) return Keyed::alone;
    }
    // The columns this row sets (update_stmt's choice).
    cols_.clear();
    if (update) {
      for (std::size_t i = 0; i < cells_b_.size(); ++i) {
        if (!cells_b_[i].present || generated_[i]) continue;
        if (i < cells_a_.size() && cells_a_[i].present && same(i)) continue;
        cols_.push_back(static_cast<std::uint32_t>(i));
      }
      if (cols_.empty()) return Keyed::alone;
    }
    if (kb_rows_ > 0) {
      if (kb_rows_ >= kMaxKeyedRows || (update && cols_ != kb_cols_)) return Keyed::full;
      int c = 0;
      for (std::size_t j = 0; j < pk.size() && c == 0; ++j) c = compare_key(kb_last_[j], cells_a_[pk[j]]);
      if (c == 0 || (kb_dir_ != 0 && c != kb_dir_)) return Keyed::full;
    }
    // The literals, and what they add to the statement.
    reset_literals(cells_a_.size() > cells_b_.size() ? cells_a_.size() : cells_b_.size());
    const std::size_t key_at = kb_key_lits_.size(), key_spans = kb_key_spans_.size();
    const std::size_t val_at = kb_val_lits_.size(), val_spans = kb_val_spans_.size();
    auto undo = [&] {
      kb_key_lits_.resize(key_at);
      kb_key_spans_.resize(key_spans);
      kb_val_lits_.resize(val_at);
      kb_val_spans_.resize(val_spans);
    };
    if (kb_rows_ == 0) {
      kb_key_lits_.clear();
      kb_key_spans_.clear();
      kb_val_lits_.clear();
      kb_val_spans_.clear();
    }
    std::size_t keys_len = 0;
    for (std::uint32_t k : pk) {
      std::string_view l;
      st = literal(tm, image_a(), k, l);
      if (!st.ok()) return Keyed::alone;
      kb_key_spans_.push_back(LitSpan{kb_key_lits_.size(), l.size()});
      kb_key_lits_.append(l);
      keys_len += l.size();
    }
    std::size_t vals_len = 0;
    for (std::uint32_t i : cols_) {
      std::string_view l;
      st = literal(tm, image_b(), i, l);
      if (!st.ok() || !case_safe(cells_b_[i], l)) {
        undo();
        return Keyed::alone;
      }
      kb_val_spans_.push_back(LitSpan{kb_val_lits_.size(), l.size()});
      kb_val_lits_.append(l);
      vals_len += l.size();
    }
    if (kb_rows_ == 0) {
      kb_key_.assign(pk.begin(), pk.end());
      kb_cols_ = cols_;
      kb_dir_ = 0;
      // The fixed part: DELETE FROM t WHERE (k) IN () ORDER BY k DESC; / UPDATE t SET c=CASE .. END, ...
      std::size_t keys_names = 0;
      for (std::uint32_t k : pk) keys_names += names_q_[k].size() + 1;
      // ("UPDATE " + " SET " or "DELETE FROM ") t " WHERE " (k,..) " IN (" ") ORDER BY " k DESC,.. ";"
      kb_len_ = 12 + table_q_.size() + 7 + keys_names + (pk.size() > 1 ? 2 : 0) + 5 + 11 + keys_names +
                pk.size() * 5 + 1;
      for (std::uint32_t i : cols_)  // ,c=CASE[ k] ... END
        kb_len_ += 1 + names_q_[i].size() + 1 + 4 + (pk.size() == 1 ? 1 + names_q_[pk[0]].size() : 0) + 4;
    }
    // This row: its key in the IN list, and a WHEN per column.
    const std::size_t row = kb_rows_;
    std::size_t add = keys_len + (pk.size() - 1) + (pk.size() > 1 ? 2 : 0) + 1;
    if (update) add += cols_.size() * (6 + keyed_cond_len(row) + 6) + vals_len;
    if (kb_rows_ > 0 && kb_len_ + add > batch_bytes_) {
      undo();
      return Keyed::full;
    }
    if (kb_rows_ == 1) {
      int c = 0;
      for (std::size_t j = 0; j < pk.size() && c == 0; ++j) c = compare_key(kb_last_[j], cells_a_[pk[j]]);
      kb_dir_ = c;
    }
    kb_len_ += add;
    kb_last_.resize(pk.size());
    for (std::size_t j = 0; j < pk.size(); ++j) kb_last_[j] = cells_a_[pk[j]];
    ++kb_rows_;
    return Keyed::taken;
  }

  // The run as one statement (a run of one row: the row's own statement).
  void keyed_statement(RenderBuf& s, const TableMap& tm, bool update) {
    const std::size_t nk = kb_key_.size(), nc = kb_cols_.size();
    auto key = [&](std::size_t row, std::size_t j) {
      const LitSpan& sp = kb_key_spans_[row * nk + j];
      return std::string_view(kb_key_lits_.data() + sp.at, sp.len);
    };
    auto val = [&](std::size_t row, std::size_t c) {
      const LitSpan& sp = kb_val_spans_[row * nc + c];
      return std::string_view(kb_val_lits_.data() + sp.at, sp.len);
    };
    auto cond = [&](std::size_t row) {  // `a`=1 AND `b`=2
      for (std::size_t j = 0; j < nk; ++j) {
        if (j) s.append(" AND ", 5);
        s.append(names_q_[kb_key_[j]]);
        s.push_back('=');
        s.append(key(row, j));
      }
    };
    [[maybe_unused]] const std::size_t start = s.size();
    s.append(update ? "UPDATE " : "DELETE FROM ");
    table_name(s, tm);
    if (update) {
      s.append(" SET ", 5);
      for (std::size_t c = 0; c < nc; ++c) {
        if (c) s.push_back(',');
        s.append(names_q_[kb_cols_[c]]);
        s.push_back('=');
        if (kb_rows_ == 1) {
          s.append(val(0, c));
          continue;
        }
        s.append("CASE", 4);
        if (nk == 1) {
          s.push_back(' ');
          s.append(names_q_[kb_key_[0]]);
        }
        for (std::size_t r = 0; r < kb_rows_; ++r) {
          s.append(" WHEN ", 6);
          if (nk == 1) s.append(key(r, 0));
          else cond(r);
          s.append(" THEN ", 6);
          s.append(val(r, c));
        }
        s.append(" END", 4);
      }
    }
    s.append(" WHERE ", 7);
    if (kb_rows_ == 1) {
      cond(0);
      s.append(";\n", 2);
      return;
    }
    if (nk > 1) s.push_back('(');
    for (std::size_t j = 0; j < nk; ++j) {
      if (j) s.push_back(',');
      s.append(names_q_[kb_key_[j]]);
    }
    if (nk > 1) s.push_back(')');
    s.append(" IN (", 5);
    for (std::size_t r = 0; r < kb_rows_; ++r) {
      if (r) s.push_back(',');
      if (nk > 1) s.push_back('(');
      for (std::size_t j = 0; j < nk; ++j) {
        if (j) s.push_back(',');
        s.append(key(r, j));
      }
      if (nk > 1) s.push_back(')');
    }
    s.append(") ORDER BY ", 11);
    for (std::size_t j = 0; j < nk; ++j) {
      if (j) s.push_back(',');
      s.append(names_q_[kb_key_[j]]);
      if (kb_dir_ > 0) s.append(" DESC", 5);
    }
    s.push_back(';');
    assert(s.size() - start <= kb_len_);
    s.push_back('\n');
  }

  std::size_t kb_rows_ = 0;  // rows in the run
  int kb_dir_ = 0;           // the keys' order: -1 ascending, 1 descending (0: one row so far)
  std::size_t kb_len_ = 0;   // the run's statement, at most this many bytes (with its ';')
  std::vector<std::uint32_t> kb_key_, kb_cols_, cols_;
  std::vector<ImageCell> kb_last_;  // the last row's key cells (they view the event's bytes)
  RenderBuf kb_key_lits_, kb_val_lits_;
  std::vector<LitSpan> kb_key_spans_, kb_val_spans_;

  bool flashback_ = false;
  SqlSet set_ = SqlSet::changed;
  const SqlOptions* sql_ = nullptr;
  std::size_t rewrite_count_ = 0;
  std::size_t batch_bytes_ = 0;  // forward INSERTs: rows per statement up to this size (0: one per row)
  std::vector<ImageCell> cells_a_, cells_b_;
  RenderBuf lits_a_, lits_b_;
  std::vector<LitSpan> spans_a_, spans_b_;
  RenderBuf row_;  // the statement of the row being rendered
  std::vector<char> done_a_, done_b_;
  std::string json_before_, json_after_;
  std::string_view generated_;  // per column of the table being written (1: generated)
  std::vector<std::string> names_q_;  // per column, quoted (the current rows event)
  std::string table_q_;                // `db`.`table`
  std::uint64_t names_serial_ = 0;  // the map names_q_ and table_q_ were made from
  std::string insert_prefix_;
};

SqlRowRenderer::SqlRowRenderer() : impl_(std::make_unique<Impl>()) {}
SqlRowRenderer::~SqlRowRenderer() = default;
SqlRowRenderer::SqlRowRenderer(SqlRowRenderer&&) noexcept = default;
SqlRowRenderer& SqlRowRenderer::operator=(SqlRowRenderer&&) noexcept = default;

void SqlRowRenderer::configure(const SqlOptions& sql) { impl_->configure(sql); }
RowsOutcome SqlRowRenderer::render(const RowsJobView& v, RowTextSink& sink) { return impl_->render(v, sink); }
bool SqlRowRenderer::query_closed() const { return impl_->query_closed(); }
std::size_t SqlRowRenderer::query_first() const { return impl_->query_first(); }

}  // namespace binlogctl::sql_detail
