// run_canal_convert: inputs -> EventStream -> transactions -> Canal Entry messages (canal.h).
#include <binlogctl/canal.h>
#include "convert/convert_internal.h"
#include <binlogctl/chain.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/selection.h>
#include <binlogctl/event_stream.h>
#include "events/events.h"
#include <binlogctl/inputs.h>
#include "render/json_out.h"
#include <binlogctl/progress.h>
#include "rows/rows.h"
#include <binlogctl/source.h>
#include "txn/row_stream.h"
#include "rows/table_map.h"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include <sys/uio.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "CanalProtocol.pb.h"
#include "EntryProtocol.pb.h"
#include "canal_internal.h"
#include "base/sql_lexer.h"
#include "convert/batch_pool.h"

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl {

using canal_detail::CanalValue;

// ---- statement classification ------------------------------------------------------------------

namespace {

// Statements are read as Canal reads them: versioned comments (/*!NNNNN ... */) are comments.
using sql_lexer::Lexer;
using sql_lexer::Tok;
using sql_lexer::Token;
constexpr Lexer::Versioned kCanalComments = Lexer::Versioned::comment;

// The run of unquoted words that follows in `lex` (comments and whitespace skipped) into
// w[from..max); returns how many were read.
std::size_t leading_words(Lexer& lex, Token (&w)[4], std::size_t from, std::size_t max) {
  std::size_t k = from;
  while (k < max && lex.next(w[k], false) && w[k].kind == Tok::word) ++k;
  return k - from;
}

// The first alteration of ALTER TABLE, as Canal's DruidDdlParser classifies it (Canal keeps the
// type of the first DdlResult, one per alteration): RENAME [TO|AS] -> RENAME; ADD INDEX/KEY/
// FULLTEXT/SPATIAL, ADD UNIQUE, ADD PRIMARY KEY, ADD CONSTRAINT [name] UNIQUE|PRIMARY -> CINDEX;
// DROP INDEX/KEY -> DINDEX; anything else, and statements with table options, -> ALTER.
int alter_table_event_type(std::string_view sql) {
  Lexer lex(sql, kCanalComments);
  Token t;
  // Past ALTER [ONLINE|IGNORE] TABLE
  bool table = false;
  for (int words = 0; words < 4 && !table; ++words) {
    if (!lex.next(t, false) || t.kind != Tok::word) return canalpb::ALTER;
    table = t.is_kw("TABLE");
  }
  if (!table) return canalpb::ALTER;
  // and the (possibly quoted, qualified) table name: ident or `quoted`, joined by '.'.
  Token w[4];
  for (;;) {
    if (!lex.next(t, false)) return canalpb::ALTER;
    if (t.kind != Tok::word && t.kind != Tok::quoted) break;  // no name: what follows is read as is
    if (!lex.next(t, false)) return canalpb::ALTER;
    if (!t.is_punct('.')) break;
  }
  // t: the first token after the name; the alteration's leading words start there.
  std::size_t n = 0;
  if (t.kind == Tok::word) {
    w[n++] = std::move(t);
    n += leading_words(lex, w, n, 4);
  }
  const auto is = [&](std::size_t k, std::string_view kw) { return k < n && w[k].is_kw(kw); };
  if (is(0, "RENAME") && !is(1, "COLUMN") && !is(1, "INDEX") && !is(1, "KEY")) return canalpb::RENAME;
  if (is(0, "ADD")) {
    std::size_t k = 1;
    if (is(1, "CONSTRAINT")) k = is(2, "UNIQUE") || is(2, "PRIMARY") ? 2 : 3;
    if (is(k, "INDEX") || is(k, "KEY") || is(k, "FULLTEXT") || is(k, "SPATIAL") || is(k, "UNIQUE") || is(k, "PRIMARY"))
      return canalpb::CINDEX;
  }
  if (is(0, "DROP") && (is(1, "INDEX") || is(1, "KEY"))) return canalpb::DINDEX;
  return canalpb::ALTER;
}

}  // namespace

int canal_statement_event_type(std::string_view sql) noexcept {
  try {
    Lexer lex(sql, kCanalComments);
    Token w[4];
    const std::size_t n = leading_words(lex, w, 0, 4);
    if (n == 0) return canalpb::QUERY;
    const auto is = [&](std::size_t k, std::string_view kw) { return k < n && w[k].is_kw(kw); };
    if (is(0, "INSERT") || is(0, "REPLACE")) return canalpb::INSERT;
    if (is(0, "UPDATE")) return canalpb::UPDATE;
    if (is(0, "DELETE")) return canalpb::DELETE;
    if (is(0, "TRUNCATE")) return canalpb::TRUNCATE;
    if (is(0, "RENAME") && is(1, "TABLE")) return canalpb::RENAME;
    if (is(0, "CREATE")) {
      if (is(1, "INDEX") || is(2, "INDEX")) return canalpb::CINDEX;  // CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX
      if (is(1, "TABLE") || is(2, "TABLE")) return canalpb::CREATE;  // CREATE [TEMPORARY] TABLE
      if (is(1, "OR") && is(3, "TABLE")) return canalpb::CREATE;
      return canalpb::QUERY;
    }
    if (is(0, "ALTER") && (is(1, "TABLE") || is(2, "TABLE"))) return alter_table_event_type(sql);
    if (is(0, "DROP")) {
      if (is(1, "TABLE") || is(2, "TABLE")) return canalpb::ERASE;
      if (is(1, "INDEX")) return canalpb::DINDEX;
    }
    return canalpb::QUERY;
  } catch (...) {
    return canalpb::QUERY;
  }
}

// MariaDB's GTID_LIST: Canal's MariaGtidListLogEvent keeps a java.util.HashMap from domain to
// GTID (a later entry of a domain replaces the earlier one) and prints it comma-joined in the
// map's iteration order: by bucket, (h ^ h >>> 16) & (capacity - 1) with h the domain id, the
// capacity 16 doubled while the map is more than 3/4 full; insertion order within a bucket.
std::string canal_detail::gtid_list_text(const MariaGtidList& list) {
  std::vector<MariaGtid> by_domain;
  for (const MariaGtid& g : list.entries()) {
    auto it = std::find_if(by_domain.begin(), by_domain.end(),
                           [&](const MariaGtid& x) { return x.domain == g.domain; });
    if (it != by_domain.end()) *it = g;
    else by_domain.push_back(g);
  }
  std::size_t cap = 16;
  while (by_domain.size() > cap / 4 * 3) cap *= 2;
  const auto bucket = [cap](const MariaGtid& g) { return (g.domain ^ (g.domain >> 16)) & (cap - 1); };
  std::stable_sort(by_domain.begin(), by_domain.end(),
                   [&](const MariaGtid& a, const MariaGtid& b) { return bucket(a) < bucket(b); });
  std::string s;
  for (const MariaGtid& g : by_domain) {
    if (!s.empty()) s.push_back(',');
    s += g.to_string();
  }
  return s;
}

namespace {

using canal_detail::append_dec;
using canal_detail::append_flat_json_string;
using canal_detail::int32_wire;
using canal_detail::OutBuf;
using canal_detail::put_bytes;
using canal_detail::put_varint;
using canal_detail::varint_size;

// ---- rows as Canal sees them -------------------------------------------------------------------

// One column of a row image (Column: index, sqlType, isNull, updated, value). Cells live in an
// Image that keeps them, and their value strings' capacity, from row to row.
struct Cell {
  std::uint32_t index = 0;
  bool updated = false;
  std::uint32_t pb_size = 0;          // encoded Column size (canal-proto)
  const std::string* pb_pre = nullptr;  // its prepared start, if any (column_size sets both)
  CanalValue v;
};

class Image {
 public:
  void clear() noexcept { n_ = 0; }
  Cell& push() {
    if (n_ == cells_.size()) cells_.emplace_back();
    return cells_[n_++];
  }
  void pop() noexcept { --n_; }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  Cell* begin() noexcept { return cells_.data(); }
  Cell* end() noexcept { return cells_.data() + n_; }
  const Cell* begin() const noexcept { return cells_.data(); }
  const Cell* end() const noexcept { return cells_.data() + n_; }
  const Cell& operator[](std::size_t i) const noexcept { return cells_[i]; }

 private:
  std::vector<Cell> cells_;
  std::size_t n_ = 0;
};

// What every row of a mapped table repeats per column, computed once per TABLE_MAP: the
// encoded constant fields of a Column and the canal-json key and mysqlType.
struct ColumnPlan {
  std::string pb_name;  // Column.name (field 3), empty for an empty name, then isKey (4) when set
  // index (1), sqlType (2) and pb_name: what a Column starts with when its sqlType is the
  // column's usual one for a value (pb_pre) or for NULL (pb_pre_null)
  std::string pb_pre, pb_pre_null;
  std::string pb_mysql_type;  // Column.mysqlType (field 10), empty for an empty type
  std::string js_key;         // the name as a JSON string
  std::string js_member;      // ,"name": (a member after the first one; without the comma first)
  std::string js_mysql_type;  // the mysqlType as a JSON string
  std::string name, mysql_type;
  std::uint32_t slot = 0;  // first column of the same name (FlatMessage objects are keyed by name)
  bool key = false;
  bool name_ok = true, type_ok = true;  // valid UTF-8 (else protobuf logs when serializing)
  bool json = false;                    // JSON column: its values are checked for UTF-8 too
  canal_detail::ValuePlan value;        // how its values are rendered
  // A Column's bytes before its value when its sqlType is the usual one (pb_pre or pb_pre_null,
  // then updated when set, then isNull), by [isNull][updated]; and pb_mysql_type. Each padded
  // to a fixed size, so that one copy of that size writes it (fits_fixed: all of them fit).
  static constexpr std::size_t kHeadMax = 48, kTypeMax = 32;
  struct Fixed {
    char head[2][2][kHeadMax] = {};
    std::uint8_t head_len[2][2] = {};
    char type[kTypeMax] = {};
    std::uint8_t type_len = 0;
  };
  Fixed fixed;
  bool fits_fixed = false;
  // js_member padded the same way (js_fixed_len bytes, 0 when it does not fit): canal-json's
  // members are copied from it at kMemberMax bytes, from its start or past its comma.
  static constexpr std::size_t kMemberMax = 48;
  char js_fixed[kMemberMax + 1] = {};
  std::uint8_t js_fixed_len = 0;
};
struct TablePlan {
  std::vector<ColumnPlan> cols;
  bool unique_names = true;
  bool check_utf8 = false;  // some column needs the UTF-8 checks above
};

TablePlan make_plan(const TableMap& tm, bool display_widths, const SchemaTable* def) {
  TablePlan plan;
  plan.cols.resize(tm.columns.size());
  std::unordered_map<std::string_view, std::uint32_t> first;
  for (std::size_t i = 0; i < tm.columns.size(); ++i) {
    const ColumnDef& c = tm.columns[i];
    ColumnPlan& p = plan.cols[i];
    const std::string mysql_type =
        def != nullptr ? column_type_text(def->columns[i]) : canal_detail::mysql_type_text(c, display_widths);
    if (!c.name.empty()) canal_detail::append_len_field(p.pb_name, 3, c.name);
    if (!mysql_type.empty()) canal_detail::append_len_field(p.pb_mysql_type, 10, mysql_type);
    append_flat_json_string(p.js_key, c.name);
    p.js_member = "," + p.js_key + ":";
    append_flat_json_string(p.js_mysql_type, mysql_type);
    if (p.js_member.size() <= ColumnPlan::kMemberMax) {
      std::memcpy(p.js_fixed, p.js_member.data(), p.js_member.size());
      p.js_fixed_len = static_cast<std::uint8_t>(p.js_member.size());
    }
    p.name = c.name;
    p.mysql_type = mysql_type;
    p.key = c.in_primary_key;
    if (p.key) p.pb_name.append("\x20\x01", 2);
    p.value = canal_detail::value_plan(c);
    for (std::string* pre : {&p.pb_pre, &p.pb_pre_null}) {
      const int sql_type = pre == &p.pb_pre ? p.value.sql_type : p.value.null_sql_type;
      if (i != 0) {
        pre->push_back(0x08);
        canal_detail::append_varint(*pre, i);
      }
      if (sql_type != 0) {
        pre->push_back(0x10);
        canal_detail::append_varint(*pre, canal_detail::int32_wire(sql_type));
      }
      pre->append(p.pb_name);
    }
    p.fits_fixed = p.pb_pre.size() + 4 <= ColumnPlan::kHeadMax && p.pb_pre_null.size() + 4 <= ColumnPlan::kHeadMax &&
                   p.pb_mysql_type.size() <= ColumnPlan::kTypeMax;
    if (p.fits_fixed) {
      for (int null = 0; null < 2; ++null)
        for (int upd = 0; upd < 2; ++upd) {
          std::string h = null != 0 ? p.pb_pre_null : p.pb_pre;
          if (upd != 0) h.append("\x28\x01", 2);
          h.push_back(0x30);
          h.push_back(static_cast<char>(null));
          std::memcpy(p.fixed.head[null][upd], h.data(), h.size());
          p.fixed.head_len[null][upd] = static_cast<std::uint8_t>(h.size());
        }
      std::memcpy(p.fixed.type, p.pb_mysql_type.data(), p.pb_mysql_type.size());
      p.fixed.type_len = static_cast<std::uint8_t>(p.pb_mysql_type.size());
    }
    p.name_ok = canal_detail::proto_utf8_valid(c.name);
    p.type_ok = canal_detail::proto_utf8_valid(mysql_type);
    p.json = c.type == ColumnType::json;
    if (!p.name_ok || !p.type_ok || p.json) plan.check_utf8 = true;
    auto [it, fresh] = first.emplace(c.name, static_cast<std::uint32_t>(i));
    p.slot = it->second;
    if (!fresh) plan.unique_names = false;
  }
  return plan;
}

// The first and last sizeof(W) bytes of x and y (n >= sizeof(W)) are equal.
template <class W>
inline bool same_ends(const char* x, const char* y, std::size_t n) noexcept {
  W x0, x1, y0, y1;
  std::memcpy(&x0, x, sizeof(W));
  std::memcpy(&x1, x + n - sizeof(W), sizeof(W));
  std::memcpy(&y0, y, sizeof(W));
  std::memcpy(&y1, y + n - sizeof(W), sizeof(W));
  return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}
// a == b, short texts (most values) compared inline rather than by a call to memcmp.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* const x = a.data();
  const char* const y = b.data();
  if (n > 16) return std::memcmp(x, y, n) == 0;
  if (n >= 8) return same_ends<std::uint64_t>(x, y, n);
  if (n >= 4) return same_ends<std::uint32_t>(x, y, n);
  return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

// The strings of the encoded columns that are not valid UTF-8, in the order serializing would
// have checked them (name, value, mysqlType per column): protobuf logs each one.
using Utf8Logs = std::vector<std::pair<std::string, const char*>>;

// Appends Column `index` with value `v` as field `tag` of RowData (field order of the generated
// code: 1 2 3 4 5 6 8 10; isNull is a oneof member and always written, other scalars only when
// not zero/empty). Returns where the value's bytes are in `out`.
[[gnu::always_inline]] inline std::size_t put_column(OutBuf& out, std::uint8_t tag, std::uint32_t index,
                                                     const ColumnPlan& p, const CanalValue& v, bool updated) {
  const bool usual = v.sql_type == (v.is_null ? p.value.null_sql_type : p.value.sql_type);
  const std::string_view text = v.text();
  const std::size_t vn = text.size();
  if (usual && p.fits_fixed) [[likely]] {
    // The prepared bytes, copied at their fixed sizes into room past the Column's end.
    const ColumnPlan::Fixed& f = p.fixed;
    const std::size_t head_len = f.head_len[v.is_null ? 1 : 0][updated ? 1 : 0];
    std::size_t n = head_len + f.type_len;
    if (vn != 0) n += 1 + varint_size(vn) + vn;
    char* o = out.room(1 + 10 + n + ColumnPlan::kHeadMax);
    *o++ = static_cast<char>(tag);
    o = put_varint(o, n);
    std::memcpy(o, f.head[v.is_null ? 1 : 0][updated ? 1 : 0], ColumnPlan::kHeadMax);
    o += head_len;
    if (vn != 0) {
      *o++ = 0x42;
      o = put_varint(o, vn);
      constexpr std::size_t kShort = 32;
      static_assert(sizeof v.short_text >= 24 + kShort);  // short_at < 24 (render_value)
      if (v.in_short && vn <= kShort && v.short_at < 24)
        std::memcpy(o, text.data(), kShort);
      else
        copy_bytes(o, text.data(), vn);
      o += vn;
    }
    const std::size_t value_at = static_cast<std::size_t>(o - out.data()) - vn;
    std::memcpy(o, f.type, ColumnPlan::kTypeMax);
    out.set_end(o + f.type_len);
    return value_at;
  }
  // The column's prepared start (index, sqlType, name, isKey) when the sqlType is its usual one.
  const std::string* pre = nullptr;
  if (usual) pre = v.is_null ? &p.pb_pre_null : &p.pb_pre;
  std::size_t n = 2 + p.pb_mysql_type.size();
  if (pre != nullptr) {
    n += pre->size();
  } else {
    n += p.pb_name.size();
    if (index != 0) n += 1 + varint_size(index);
    if (v.sql_type != 0) n += v.sql_type < 0 ? 11 : 1 + varint_size(static_cast<std::uint32_t>(v.sql_type));
  }
  if (updated) n += 2;
  if (vn != 0) n += 1 + varint_size(vn) + vn;
  char* o = out.extend(1 + varint_size(n) + n);
  *o++ = static_cast<char>(tag);
  o = put_varint(o, n);
  if (pre != nullptr) {
    o = put_bytes(o, *pre);
  } else {
    if (index != 0) {
      *o++ = 0x08;
      o = put_varint(o, index);
    }
    if (v.sql_type != 0) {
      *o++ = 0x10;
      o = put_varint(o, int32_wire(v.sql_type));
    }
    o = put_bytes(o, p.pb_name);  // and isKey
  }
  if (updated) {
    *o++ = 0x28;
    *o++ = 1;
  }
  *o++ = 0x30;
  *o++ = v.is_null ? 1 : 0;
  if (vn != 0) {
    *o++ = 0x42;
    o = put_varint(o, vn);
    o = put_bytes(o, text);
  }
  const std::size_t value_at = static_cast<std::size_t>(o - out.data()) - vn;
  put_bytes(o, p.pb_mysql_type);
  return value_at;
}

// RowChange.rowDatas (field 12) = RowData{beforeColumns (1), afterColumns (2)}: a row's Columns
// are written after 3 bytes kept at `at` for its tag and length, which are then written there
// (the Columns moved when the length does not take 2 bytes).
constexpr std::size_t kRowDataHead = 3;
void close_row_data(OutBuf& out, std::size_t at) {
  const std::size_t rd = out.size() - at - kRowDataHead;
  const std::size_t k = varint_size(rd);
  if (k < kRowDataHead - 1) {
    std::memmove(out.data() + at + 1 + k, out.data() + at + kRowDataHead, rd);
    out.truncate(at + 1 + k + rd);
  } else if (k > kRowDataHead - 1) {
    out.extend(k - (kRowDataHead - 1));
    std::memmove(out.data() + at + 1 + k, out.data() + at + kRowDataHead, rd);
  }
  char* o = out.data() + at;
  *o++ = 0x62;
  put_varint(o, rd);
}

// The rows part of a FlatMessage (MQMessageUtils.messageConverter), built row by row: data,
// old, pkNames and the sqlType/mysqlType maps. JSON objects are keyed by column name: a name
// seen twice keeps its first position and its last value (as ordered_json assignment did).
class FlatRows {
 public:
  // `data`: where the objects of "data" go, comma-separated (begin() remembers its size; they
  // are what it holds past that). Null: kept here (data()).
  void begin(OutBuf* data = nullptr) {
    data_.clear();
    out_ = data != nullptr ? data : &data_;
    data_at_ = out_->size();
    old_.clear();
    pks_.clear();
    keys_.clear();
    ++event_;
  }

  void row(const TablePlan& plan, RowsKind kind, const Image& before, const Image& after,
           bool first) {
    const std::size_t width = plan.cols.size();
    if (key_seen_.size() < width) {
      key_seen_.resize(width, 0);
      last_sql_.resize(width, 0);
      last_col_.resize(width, 0);
      pos_stamp_.resize(width, 0);
      pos_.resize(width, 0);
      upd_stamp_.resize(width, 0);
    }
    const Image& cols = kind == RowsKind::delete_ ? before : after;
    if (first)
      for (const Cell& c : cols)
        if (plan.cols[c.index].key) {
          if (!pks_.empty()) pks_.push_back(',');
          pks_ += plan.cols[c.index].js_key;
        }
    for (const Cell& c : cols) {
      const std::uint32_t slot = plan.cols[c.index].slot;
      if (key_seen_[slot] != event_) {
        key_seen_[slot] = event_;
        keys_.push_back(slot);
      }
      last_sql_[slot] = c.v.sql_type;
      last_col_[slot] = c.index;
    }
    if (!cols.empty()) {
      if (out_->size() != data_at_) out_->push_back(',');
      object(*out_, plan, cols, nullptr);
    }
    if (kind == RowsKind::update) {
      ++row_;
      bool any = false;
      for (const Cell& c : after)
        if (c.updated) upd_stamp_[plan.cols[c.index].slot] = row_;
      for (const Cell& c : before) any = any || upd_stamp_[plan.cols[c.index].slot] == row_;
      if (any) {
        if (!old_.empty()) old_.push_back(',');
        object(old_, plan, before, &upd_stamp_);
      }
    }
  }

  // "mysqlType":{...},"old":..,"pkNames":.. and "sqlType" come apart in the message; each
  // writer appends its value.
  void mysql_types(OutBuf& out, const TablePlan* plan) const {
    out.push_back('{');
    for (std::size_t k = 0; plan != nullptr && k < keys_.size(); ++k) {
      const std::string& m = plan->cols[keys_[k]].js_member;
      out.append(m.data() + (k == 0 ? 1 : 0), m.size() - (k == 0 ? 1 : 0));
      out += plan->cols[last_col_[keys_[k]]].js_mysql_type;
    }
    out.push_back('}');
  }
  void sql_types(OutBuf& out, const TablePlan* plan) const {
    out.push_back('{');
    for (std::size_t k = 0; plan != nullptr && k < keys_.size(); ++k) {
      const std::string& m = plan->cols[keys_[k]].js_member;
      out.append(m.data() + (k == 0 ? 1 : 0), m.size() - (k == 0 ? 1 : 0));
      append_dec(out, static_cast<std::int64_t>(last_sql_[keys_[k]]));
    }
    out.push_back('}');
  }
  static void array_or_null(OutBuf& out, const OutBuf& items) {
    if (items.empty()) {
      out.append("null", 4);
      return;
    }
    char* o = out.extend(items.size() + 2);
    o[0] = '[';
    std::memcpy(o + 1, items.data(), items.size());
    o[items.size() + 1] = ']';
  }
  const OutBuf& data() const { return data_; }
  // Whether any object went to the caller's buffer of begin().
  bool wrote_data() const { return out_->size() != data_at_; }
  const OutBuf& old() const { return old_; }
  const OutBuf& pks() const { return pks_; }

 private:
  // One JSON object of the cells (only those whose slot is stamped with the current row when
  // `only` is given).
  void object(OutBuf& out, const TablePlan& plan, const Image& cells,
              const std::vector<std::uint64_t>* only) {
    out.push_back('{');
    bool first = true;
    const ColumnPlan* const cplans = plan.cols.data();
    auto put = [&](const Cell& c) {
      const ColumnPlan& p = cplans[c.index];
      const std::size_t skip = first ? 1 : 0;  // the comma
      first = false;
      if (p.js_fixed_len != 0) [[likely]] {
        // The member copied at its padded size; a null or a short plain value with it.
        constexpr std::size_t kShort = 32;
        const std::size_t m = p.js_fixed_len - skip;
        char* o = out.room(ColumnPlan::kMemberMax + 2 + kShort);
        std::memcpy(o, p.js_fixed + skip, ColumnPlan::kMemberMax);
        o += m;
        if (c.v.is_null) {
          std::memcpy(o, "null", 4);
          out.set_end(o + 4);
          return;
        }
        if (c.v.plain && c.v.in_short && c.v.short_len <= kShort && c.v.short_at < 24) {
          static_assert(sizeof c.v.short_text >= 24 + kShort);
          *o++ = '"';
          std::memcpy(o, c.v.short_text + c.v.short_at, kShort);
          o += c.v.short_len;
          *o++ = '"';
          out.set_end(o);
          return;
        }
        out.set_end(o);
      } else {
        const std::string& m = p.js_member;
        out.append(m.data() + skip, m.size() - skip);
      }
      if (c.v.is_null) {
        out.append("null", 4);
      } else if (c.v.plain) {  // what append_flat_json_string writes for it, without its checks
        const std::string_view text = c.v.text();
        const std::size_t n = text.size();
        char* o = out.extend(n + 2);
        o[0] = '"';
        copy_bytes(o + 1, text.data(), n);
        o[n + 1] = '"';
      } else {
        append_flat_json_string(out, c.v.text());
      }
    };
    if (plan.unique_names) {
      for (const Cell& c : cells)
        if (only == nullptr || (*only)[plan.cols[c.index].slot] == row_) put(c);
    } else {
      ++pos_gen_;
      order_.clear();
      for (const Cell& c : cells) {
        const std::uint32_t slot = plan.cols[c.index].slot;
        if (only != nullptr && (*only)[slot] != row_) continue;
        if (pos_stamp_[slot] != pos_gen_) {
          pos_stamp_[slot] = pos_gen_;
          pos_[slot] = order_.size();
          order_.push_back(&c);
        } else {
          order_[pos_[slot]] = &c;
        }
      }
      for (const Cell* c : order_) put(*c);
    }
    out.push_back('}');
  }

  OutBuf data_, old_, pks_;
  OutBuf* out_ = &data_;
  std::size_t data_at_ = 0;
  std::vector<std::uint32_t> keys_;  // slots in first-seen order
  std::uint64_t event_ = 0, row_ = 0, pos_gen_ = 0;
  std::vector<std::uint64_t> key_seen_, pos_stamp_, upd_stamp_;
  std::vector<std::int32_t> last_sql_;
  std::vector<std::uint32_t> last_col_;
  std::vector<std::size_t> pos_;
  std::vector<const Cell*> order_;
};

// What a ROWDATA entry's FlatMessage needs besides the header.
struct FlatEntry {
  bool is_ddl = false;
  std::string_view sql;
  int event_type = 0;
  const FlatRows* rows = nullptr;  // rows events
  const TablePlan* plan = nullptr;
};

// MQMessageUtils.messageConverter: one FlatMessage per ROWDATA entry, keys in the order the
// first implementation's ordered_json wrote them, appended to `out` without the value of "id"
// (the batch number, known only when the entry is written): it goes at the offset returned.
// `es`: the event's timestamp in milliseconds; `gtid`: Header.gtid (empty: null). `sql_at`, when
// given, is set to the offset in `out` just past the opening quote of "sql"'s string (for a huge
// statement written in pieces there: f.sql is then empty).
std::size_t flat_message(OutBuf& out, std::int64_t es, std::string_view schema, std::string_view table,
                         std::string_view gtid, const FlatEntry& f, bool data_written = false,
                         std::size_t* sql_at = nullptr) {
  const bool rows = f.rows != nullptr;
  if (!data_written) {
    out.append("{\"data\":", 8);
    if (rows)
      FlatRows::array_or_null(out, f.rows->data());
    else
      out.append("null", 4);
  }
  out.append(",\"database\":", 12);
  append_flat_json_string(out, schema);
  out.append(",\"es\":", 6);
  append_dec(out, es);
  out.append(",\"gtid\":", 8);
  if (gtid.empty())
    out.append("null", 4);
  else
    append_flat_json_string(out, gtid);
  out.append(",\"id\":", 6);
  const std::size_t id_at = out.size();
  out.append(",\"isDdl\":", 9);
  out.append(f.is_ddl ? std::string_view("true") : std::string_view("false"));
  out.append(",\"mysqlType\":", 13);
  if (f.is_ddl)
    out.append("null", 4);
  else if (rows)
    f.rows->mysql_types(out, f.plan);
  else
    out.append("{}", 2);
  out.append(",\"old\":", 7);
  if (rows)
    FlatRows::array_or_null(out, f.rows->old());
  else
    out.append("null", 4);
  out.append(",\"pkNames\":", 11);
  if (rows)
    FlatRows::array_or_null(out, f.rows->pks());
  else
    out.append("null", 4);
  out.append(",\"sql\":", 7);
  if (sql_at != nullptr) *sql_at = out.size() + 1;
  append_flat_json_string(out, f.sql);
  out.append(",\"sqlType\":", 11);
  if (f.is_ddl)
    out.append("null", 4);
  else if (rows)
    f.rows->sql_types(out, f.plan);
  else
    out.append("{}", 2);
  out.append(",\"table\":", 9);
  append_flat_json_string(out, table);
  out.append(",\"ts\":", 6);
  append_dec(out,
             static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count()));
  out.append(",\"type\":", 8);
  append_flat_json_string(out, canalpb::EventType_Name(static_cast<canalpb::EventType>(f.event_type)));
  out.append("}\n", 2);
  return id_at;
}

// ---- output ------------------------------------------------------------------------------------

class EntrySink {
 public:
  EntrySink(const CanalOptions& o, std::FILE* f) : o_(o), f_(f) {}

  // Batch number of the next entry (every entry counts, also where canal-json writes nothing).
  std::uint64_t next_batch() {
    const std::uint64_t batch = entries_ / (o_.batch_size == 0 ? 1 : o_.batch_size) + 1;
    ++entries_;
    return batch;
  }

  // canal-proto: Entry{header (1), entryType (2), storeValue (3, when not empty)}. `borrowed`:
  // `store` stays valid until release() (it is written from where it is, not copied).
  void entry(std::uint64_t batch, std::string_view header, int entry_type, std::string_view store,
             bool borrowed = false) {
    std::size_t n = 1 + varint_size(header.size()) + header.size() + 1 +
                    varint_size(static_cast<std::uint64_t>(entry_type));
    if (!store.empty()) n += 1 + varint_size(store.size()) + store.size();
    char* p;
    if (o_.packets) {
      if (batch != batch_id_ && messages_.messages_size() > 0) packet();
      batch_id_ = batch;
      std::string* m = messages_.add_messages();
      m->resize(n);
      p = m->data();
    } else if (borrowed && store.size() >= kBorrowFrom && fd_ >= 0) {
      // Everything up to the store's bytes here, then the store where it is.
      p = buf_.extend(varint_size(n) + n - store.size());
      p = put_varint(p, n);
      canal_detail::WireWriter w{p};
      w.bytes(1, header);
      w.varint(2, static_cast<std::uint64_t>(entry_type));
      *w.p++ = static_cast<char>((3u << 3) | 2);
      w.p = put_varint(w.p, store.size());
      buf_.truncate(static_cast<std::size_t>(w.p - buf_.data()));
      borrow(store);
      if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
      return;
    } else {
      p = buf_.extend(varint_size(n) + n);
      p = put_varint(p, n);
    }
    canal_detail::WireWriter w{p};
    w.bytes(1, header);
    w.varint(2, static_cast<std::uint64_t>(entry_type));
    if (!store.empty()) w.bytes(3, store);
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }
  // canal-proto: an Entry whose storeValue is head + big + tail, for a huge statement (a 1 GiB
  // QUERY): `big` is written out a block at a time, never serialized whole; into a packet
  // (--canal-packets) it is copied once, the batch's packet being sized only at its end.
  void entry_pieces(std::uint64_t batch, std::string_view header, int entry_type, std::string_view head,
                    std::string_view big, std::string_view tail) {
    const std::size_t store = head.size() + big.size() + tail.size();
    const std::size_t n = 1 + varint_size(header.size()) + header.size() + 1 +
                          varint_size(static_cast<std::uint64_t>(entry_type)) + 1 + varint_size(store) + store;
    std::string& pre = pre_;
    pre.clear();
    if (!o_.packets) canal_detail::append_varint(pre, n);
    canal_detail::append_len_field(pre, 1, header);
    canal_detail::append_varint_field(pre, 2, static_cast<std::uint64_t>(entry_type));
    canal_detail::append_varint(pre, (3u << 3) | 2);
    canal_detail::append_varint(pre, store);
    pre.append(head);
    if (o_.packets) {
      if (batch != batch_id_ && messages_.messages_size() > 0) packet();
      batch_id_ = batch;
      std::string* m = messages_.add_messages();
      m->reserve(n);
      m->append(pre).append(big).append(tail);
      return;
    }
    buf_.append(pre);
    for (std::size_t at = 0; at < big.size(); at += kFlushAt) {
      buf_.append(big.substr(at, kFlushAt));
      if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
    }
    buf_.append(tail);
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }
  // canal-json: the buffer is written out when it is a block long (a huge statement's line is
  // appended to text() a piece at a time).
  void maybe_write_out() {
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }

  // `s` written after what the buffer holds, from where it is when it is large enough (it must
  // stay valid until release()), else copied.
  void borrow(std::string_view s) {
    if (s.size() < kBorrowFrom || fd_ < 0) {
      buf_.append(s);
      return;
    }
    pieces_.push_back(Piece{nullptr, copied_, buf_.size() - copied_});
    pieces_.push_back(Piece{s.data(), 0, s.size()});
    copied_ = buf_.size();
    borrowed_bytes_ += s.size();
    if (pieces_.size() >= kMaxPieces) write_out();
  }
  // The borrowed bytes are about to go: written out now.
  void release() {
    if (!pieces_.empty()) write_out();
  }

  // canal-json: lines are appended here, then done() is called.
  OutBuf& text() { return buf_; }
  void done() {
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }

  // At the end of the input: the last batch's packet, and everything written out.
  void flush() {
    if (messages_.messages_size() > 0) packet();
    write_out();
  }

 private:
  static constexpr std::size_t kFlushAt = 256u << 10;

  // Writes the buffer out. Only whole batches are in it: a batch's packet is made when the next
  // batch starts (or at the end), never because the buffer is full (the first implementation
  // flushed the open batch here, which split a batch into two packets of the same batch_id).
  void write_out() {
    if (!pieces_.empty()) {
      if (copied_ < buf_.size()) pieces_.push_back(Piece{nullptr, copied_, buf_.size() - copied_});
      write_pieces();
      pieces_.clear();
      copied_ = 0;
      borrowed_bytes_ = 0;
      buf_.clear();
      return;
    }
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::system_error(errno, std::generic_category(), "write");
    buf_.clear();
    if (std::fflush(f_) != 0) throw std::system_error(errno, std::generic_category(), "write");
  }

  // The pieces, in order, with writev on the stream's descriptor (nothing is left in its
  // buffer: every write_out flushes it).
  void write_pieces() {
    std::vector<iovec>& v = iov_;
    v.clear();
    for (const Piece& pc : pieces_) {
      const char* at = pc.ext != nullptr ? pc.ext : buf_.data() + pc.at;
      if (pc.len != 0) v.push_back(iovec{const_cast<char*>(at), pc.len});
    }
    std::size_t i = 0;
    while (i < v.size()) {
      const int cnt = static_cast<int>(std::min<std::size_t>(v.size() - i, 1024));  // IOV_MAX
      const ssize_t w = ::writev(fd_, v.data() + i, cnt);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "write");
      }
      auto left = static_cast<std::size_t>(w);
      while (i < v.size() && left >= v[i].iov_len) left -= v[i++].iov_len;
      if (left > 0) {
        v[i].iov_base = static_cast<char*>(v[i].iov_base) + left;
        v[i].iov_len -= left;
      }
    }
  }

  // One MESSAGES packet for the batch collected in messages_ (SessionHandler, NettyUtils.write):
  // 4-byte big-endian length, then Packet{version, type, [compression], body = Messages{batch_id,
  // messages}}. The small fields are serialized by the generated code; the body, its last field,
  // is written here field by field as the generated code writes it, so that no message (a huge
  // statement's entry) is copied into a serialized body and again into the output.
  void packet() {
    head_msg_.Clear();
    head_msg_.set_batch_id(static_cast<std::int64_t>(batch_id_));
    std::string& m0 = plain_;
    m0.clear();
    head_msg_.SerializeToString(&m0);
    packet_.Clear();
    packet_.set_version(1);
    packet_.set_type(canalpb::MESSAGES);
    const bool compress = o_.compression != CanalCompression::none;
    if (compress)
      packet_.set_compression(o_.compression == CanalCompression::zlib ? canalpb::ZLIB : canalpb::GZIP);
    packet_.SerializeToString(&p0_);  // without body: field 5 comes last
    std::size_t body = m0.size();
    for (const std::string& m : messages_.messages()) body += 1 + varint_size(m.size()) + m.size();
    if (compress) {
      deflate_body(m0, messages_, o_.compression == CanalCompression::gzip, zbody_);
      body = zbody_.size();
    }
    const std::size_t n = p0_.size() + (body == 0 ? 0 : 1 + varint_size(body) + body);
    if (n > 0x7fffffffu)
      throw std::length_error("Canal packet over 2 GiB: use a smaller --batch-size");
    char* p = buf_.extend(4);
    for (int shift = 24; shift >= 0; shift -= 8) *p++ = static_cast<char>((n >> shift) & 0xff);
    buf_.append(p0_);
    if (body != 0) {
      std::string& f = pre_;
      f.clear();
      canal_detail::append_varint(f, (5u << 3) | 2);
      canal_detail::append_varint(f, body);
      buf_.append(f);
    }
    if (compress) {
      buf_.append(zbody_);
      if (zbody_.capacity() > (4u << 20)) std::string().swap(zbody_);
    } else {
      buf_.append(m0);
      for (const std::string& m : messages_.messages()) {
        std::string& f = pre_;
        f.clear();
        canal_detail::append_varint(f, (2u << 3) | 2);
        canal_detail::append_varint(f, m.size());
        buf_.append(f);
        for (std::size_t at = 0; at < m.size(); at += kFlushAt) {
          buf_.append(std::string_view(m).substr(at, kFlushAt));
          if (buf_.size() >= kFlushAt && m.size() >= kFlushAt) write_out();
        }
      }
    }
    messages_.Clear();
  }

  // Messages{batch_id (m0, serialized), messages} deflated (zlib or gzip framing) into `out`, fed
  // to zlib field by field (a huge message from where it is).
  static void deflate_body(const std::string& m0, const canalpb::Messages& msgs, bool gzip, std::string& out) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 31 : 15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::runtime_error("deflateInit2 failed");
    std::size_t plain = m0.size();
    for (const std::string& m : msgs.messages()) plain += 1 + varint_size(m.size()) + m.size();
    out.resize(plain < (1u << 20) ? deflateBound(&z, static_cast<uLong>(plain)) + 32 : (1u << 20));
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    auto feed = [&](const char* d, std::size_t len, int flush) {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(d));
      z.avail_in = 0;
      std::size_t left = len;
      for (;;) {
        if (z.avail_in == 0 && left > 0) {
          const std::size_t k = std::min<std::size_t>(left, 1u << 30);
          z.avail_in = static_cast<uInt>(k);
          left -= k;
        }
        if (z.avail_out == 0) {
          const std::size_t done = z.total_out;
          out.resize(out.size() * 2);
          z.next_out = reinterpret_cast<Bytef*>(out.data()) + done;
          z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - done, 1u << 30));
        }
        const int rc = deflate(&z, flush);
        if (rc == Z_STREAM_END) return;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
          deflateEnd(&z);
          throw std::runtime_error("deflate failed");
        }
        if (flush == Z_NO_FLUSH && z.avail_in == 0 && left == 0) return;
      }
    };
    std::string small(m0);
    for (const std::string& m : msgs.messages()) {
      canal_detail::append_varint(small, (2u << 3) | 2);
      canal_detail::append_varint(small, m.size());
      if (m.size() < (1u << 20)) {
        small.append(m);
        continue;
      }
      feed(small.data(), small.size(), Z_NO_FLUSH);
      small.clear();
      feed(m.data(), m.size(), Z_NO_FLUSH);
    }
    feed(small.data(), small.size(), Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
  }

  const CanalOptions& o_;
  std::FILE* f_;
  int fd_ = f_ != nullptr ? ::fileno(f_) : -1;
  OutBuf buf_;
  // Borrowed stores (canal-proto without packets): what is written out is, in order, the pieces
  // (a range of buf_ when ext is null, else ext's bytes), then buf_ past copied_.
  struct Piece {
    const char* ext;
    std::size_t at, len;
  };
  static constexpr std::size_t kBorrowFrom = 512;  // smaller stores are cheaper to copy
  static constexpr std::size_t kMaxPieces = 2048;
  std::vector<Piece> pieces_;
  std::vector<iovec> iov_;
  std::size_t copied_ = 0, borrowed_bytes_ = 0;
  std::string plain_, pre_, p0_, zbody_;
  std::uint64_t entries_ = 0;
  std::uint64_t batch_id_ = 0;
  canalpb::Messages messages_, head_msg_;
  canalpb::Packet packet_;
};

// ---- rows events on the rendering threads --------------------------------------------------------
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
  void render(CanalBatch& b, CanalJob& j, bool json, const TimeZone& tz) {
    const TableMap& tm = *j.map;
    const TablePlan& plan = *j.plan;
    const std::size_t out_at = b.out.size();
    j.row_logs_at = b.row_logs.size();
    const int et = j.kind == RowsKind::insert   ? canalpb::INSERT
                   : j.kind == RowsKind::update ? canalpb::UPDATE
                                                : canalpb::DELETE;
    if (!json) {
      // RowChange{tableId, eventType, isDdl = false, rowDatas...}, encoded as the rows decode.
      if (j.table_id != 0) {
        b.out.push_back(0x08);
        char buf[10];
        b.out.append(buf, static_cast<std::size_t>(put_varint(buf, j.table_id) - buf));
      }
      b.out.push_back(0x10);
      char buf[10];
      b.out.append(buf, static_cast<std::size_t>(put_varint(buf, static_cast<std::uint64_t>(et)) - buf));
      b.out.append("\x50\x00", 2);
    } else {
      b.out.append("{\"data\":[", 9);
      flat_rows_.begin(&b.out);
    }
    const Bytes present_before = b.bytes(j.present_before), present_after = b.bytes(j.present_after);
    std::size_t n_rows = 0;
    const std::size_t n_before = count_bits(present_before, j.width);
    const std::size_t n_after = j.kind == RowsKind::update ? count_bits(present_after, j.width) : 0;
    ByteReader r(b.bytes(j.images), j.rows_offset);
    Status st;
    if (!json && pb_before_.size() < tm.columns.size()) pb_before_.resize(tm.columns.size());
    while (r.ok() && !r.empty()) {
      ++row_stamp_;
      const std::size_t row_at = r.position();
      if (json) {
        if (j.kind == RowsKind::insert) {
          before_.clear();
          st = image<false>(tm, plan, j.width, present_before, n_before, false, r, Target{&after_}, false, tz);
          // INSERT: after columns; `updated` is Canal's isUpdate against no before image (true).
          for (Cell& c : after_) c.updated = true;
        } else {
          after_.clear();
          st = image<false>(tm, plan, j.width, present_before, n_before, false, r, Target{&before_}, false, tz);
          if (st.ok() && j.kind == RowsKind::update) {
            index_before(tm.columns.size());
            st = image<false>(tm, plan, j.width, present_after, n_after, j.partial_json, r, Target{&after_}, true,
                              tz);
          }
        }
      } else {
        const std::size_t rd_at = b.out.size();
        b.out.extend(kRowDataHead);
        if (j.kind == RowsKind::insert) {
          const Target t{nullptr, &b.out, &b.row_logs, 0x12, true, false};
          st = image<true>(tm, plan, j.width, present_before, n_before, false, r, t, false, tz);
        } else {
          const bool update = j.kind == RowsKind::update;
          st = image<true>(tm, plan, j.width, present_before, n_before, false, r,
                           Target{nullptr, &b.out, &b.row_logs, 0x0a, false, update}, false, tz);
          if (st.ok() && update)
            st = image<true>(tm, plan, j.width, present_after, n_after, j.partial_json, r,
                             Target{nullptr, &b.out, &b.row_logs, 0x12, false, false}, true, tz);
        }
        if (st.ok()) close_row_data(b.out, rd_at);
      }
      if (st.ok() && r.position() == row_at)  // the bytes after it could never be consumed
        st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
      if (!st.ok()) break;
      if (json) flat_rows_.row(plan, j.kind, before_, after_, n_rows == 0);
      ++n_rows;
    }
    if (st.ok() && !r.ok()) st = r.error();
    if (!st.ok()) {
      const DecodeError& e = st.error();
      b.out.truncate(out_at);
      b.row_logs.resize(j.row_logs_at);
      j.diag = static_cast<std::ptrdiff_t>(b.diags.size());
      b.diags.push_back(Diagnostic{Check::undecodable_event, Severity::error, std::string(b.view(j.log_name)), j.pos,
                                   fmt::format("{} event does not decode: {} at offset {}", j.event_name, e.what, e.offset)});
      return;
    }
    j.row_logs_end = b.row_logs.size();
    if (json) {
      if (flat_rows_.wrote_data()) {
        b.out.push_back(']');
      } else {
        b.out.truncate(out_at + 8);  // {"data":
        b.out.append("null", 4);
      }
      const FlatEntry f{false, std::string_view(), et, &flat_rows_, &plan};
      const std::size_t id_at =
          flat_message(b.out, j.es, b.view(j.schema), b.view(j.table), b.view(j.gtid), f, true);
      j.out_a = Span{out_at, id_at - out_at};
      j.out_b = Span{id_at, b.out.size() - id_at};
      return;
    }
    // The header: the mapper's, with rowsCount between its parts.
    const std::size_t header_at = b.out.size();
    b.out.append(b.view(j.a));
    if (n_rows > 0) {
      using W = canal_detail::WireWriter;
      count_text_.clear();
      append_u64(count_text_, n_rows);
      W w{b.out.extend(W::pair_bound(9, count_text_.size()))};
      w.pair(12, "rowsCount", count_text_);
      b.out.truncate(static_cast<std::size_t>(w.p - b.out.data()));
    }
    b.out.append(b.view(j.b));
    j.out_a = Span{header_at, b.out.size() - header_at};
    j.out_b = Span{out_at, header_at - out_at};
  }

 private:
  // The before image's cell of column i in the current row, or null.
  const Cell* before_cell(std::size_t i) const {
    if (i >= before_stamp_.size() || before_stamp_[i] != row_stamp_) return nullptr;
    return &before_[before_pos_[i]];
  }
  void index_before(std::size_t width) {
    if (before_stamp_.size() < width) {
      before_stamp_.resize(width, 0);
      before_pos_.resize(width, 0);
    }
    for (std::size_t k = 0; k < before_.size(); ++k) {
      before_stamp_[before_[k].index] = row_stamp_;
      before_pos_[before_[k].index] = static_cast<std::uint32_t>(k);
    }
  }

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
  bool before_value(std::size_t i, const Target& t, bool& is_null, std::string_view& value) const {
    if constexpr (kProto) {
      if (i >= pb_before_.size() || pb_before_[i].stamp != row_stamp_) return false;
      const BeforeValue& bv = pb_before_[i];
      is_null = bv.is_null;
      value = std::string_view(t.out->data() + bv.at, bv.len);
    } else {
      const Cell* b = before_cell(i);
      if (b == nullptr) return false;
      is_null = b->v.is_null;
      value = b->v.text();
    }
    return true;
  }

  // One image, only the columns present in the image's bitmap. `with_before`: an UPDATE's after
  // image, compared with the before image (index_before, or pb_before_) for `updated`.
  template <bool kProto>
  Status image(const TableMap& tm, const TablePlan& plan, std::uint64_t width, Bytes present,
               std::size_t n_present, bool partial, ByteReader& r, const Target& t, bool with_before,
               const TimeZone& tz) {
    if constexpr (!kProto) t.cells->clear();
    // The row bytes cannot be read column by column with a table that has fewer columns.
    if (width > tm.columns.size())
      return DecodeError{Errc::bad_value, r.offset(), "rows event has more columns than its TABLE_MAP"};
    Bytes partial_bits;
    if (partial) {
      auto opts = r.packed_int();
      if (!r.ok()) return r.error();
      if ((opts & 1) != 0) {
        partial_bits = r.bytes((tm.json_columns + 7) / 8);
        if (!r.ok()) return r.error();
      }
    }
    Bytes nulls = r.bytes((n_present + 7) / 8);
    if (!r.ok()) return r.error();
    std::size_t j = 0, json_index = 0;
    const auto n = static_cast<std::size_t>(width);
    const bool all_present = n_present == width;  // a full image (the bitmap cannot have more bits)
    // The tables' arrays, held in locals: the compiler would reload them from their vectors after
    // every write through a char pointer.
    const ColumnDef* const defs = tm.columns.data();
    const ColumnInfo* const infos = tm.infos.data();
    const ColumnPlan* const cplans = plan.cols.data();
    for (std::size_t i = 0; i < n; ++i) {
      const ColumnDef& cd = defs[i];
      const bool is_json = cd.type == ColumnType::json;
      if (!all_present && !bit_is_set(present, i)) {
        if (is_json) ++json_index;
        continue;
      }
      Cell* c = nullptr;
      if constexpr (!kProto) {
        c = &t.cells->push();
        c->index = static_cast<std::uint32_t>(i);
        c->updated = false;
      }
      CanalValue& v = kProto ? pb_value_ : c->v;
      if (bit_is_set(nulls, j++)) {
        v.is_null = true;
        v.sql_type = cplans[i].value.null_sql_type;
        v.long_text();
      } else if (is_json && bit_is_set(partial_bits, json_index)) {
        // A partial JSON update: length-prefixed diffs (sized, not decoded: no value here).
        const std::uint64_t at = r.offset();
        auto sz = column_value_size(cd.type, cd.meta, r);
        if (!sz) return sz.error();
        Bytes raw = r.bytes(*sz);
        if (!r.ok()) return r.error();
        // The full document: the diffs applied to the before image's value.
        bool before_null = true;
        std::string_view before_doc;
        if (!with_before || !before_value<kProto>(i, t, before_null, before_doc) || before_null) {
          // No document to apply the diffs to (MINIMAL before image): left out, as convert
          // --format json leaves it out of "after".
          ++json_index;
          if constexpr (!kProto) t.cells->pop();
          continue;
        }
        const std::size_t lp = cd.meta;
        doc_.clear();
        Status st = apply_json_diffs(before_doc, raw.subspan(lp), at + lp, doc_);
        if (!st.ok()) return st;
        v.is_null = false;
        v.plain = false;
        v.long_text().swap(doc_);
        v.sql_type = 12;
      } else {
        Status st = canal_detail::read_value(cd, infos[i], cplans[i].value, r, tz, cv_, v);
        if (!st.ok()) return st;
      }
      if (is_json) ++json_index;
      bool updated = t.all_updated;
      if (with_before) {
        // isUpdate: changed unless both null or equal strings; absent from the before image =
        // changed.
        bool before_null = false;
        std::string_view before_text;
        updated = !before_value<kProto>(i, t, before_null, before_text) || before_null != v.is_null ||
                  (!v.is_null && !same_text(before_text, v.text()));
      }
      if constexpr (kProto) {
        const ColumnPlan& p = cplans[i];
        if (plan.check_utf8) {
          if (!p.name_ok) t.logs->emplace_back(p.name, "com.alibaba.otter.canal.protocol.Column.name");
          if (p.json && !v.text().empty() && !canal_detail::proto_utf8_valid(v.text()))
            t.logs->emplace_back(v.text(), "com.alibaba.otter.canal.protocol.Column.value");
          if (!p.type_ok)
            t.logs->emplace_back(p.mysql_type, "com.alibaba.otter.canal.protocol.Column.mysqlType");
        }
        const std::size_t value_at = put_column(*t.out, t.tag, static_cast<std::uint32_t>(i), p, v, updated);
        if (t.record_before) pb_before_[i] = BeforeValue{row_stamp_, v.is_null, value_at, v.text().size()};
      } else {
        c->updated = updated;
      }
    }
    return {};
  }

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

  void render(Batch& b, Worker& w) const {
    for (CanalJob& j : b.jobs)
      if (j.rows) w.render(b, j, json, tz);
  }
  void write(Batch& b) const {
    for (const CanalJob& j : b.jobs) {
      if (j.diag >= 0) {
        diag.report(b.diags[static_cast<std::size_t>(j.diag)]);
        continue;
      }
      const std::uint64_t batch = sink.next_batch();
      if (!json) {
        for (std::size_t i = j.row_logs_at; i < j.row_logs_end; ++i)
          canal_detail::log_invalid_utf8(b.row_logs[i].first, b.row_logs[i].second);
        for (std::size_t i = j.logs_at; i < j.logs_end; ++i)
          canal_detail::log_invalid_utf8(b.logs[i].first, b.logs[i].second);
        if (j.rows) sink.entry(batch, b.rendered(j.out_a), j.entry_type, b.rendered(j.out_b), true);
        else sink.entry(batch, b.view(j.a), j.entry_type, b.view(j.b), true);
      } else if (j.rows || j.has_text) {
        sink.borrow(j.rows ? b.rendered(j.out_a) : b.view(j.a));
        append_dec(sink.text(), batch);
        sink.borrow(j.rows ? b.rendered(j.out_b) : b.view(j.b));
        sink.done();
      }
    }
    sink.release();  // the batch's bytes are reused next
  }
};

// ---- the mapper --------------------------------------------------------------------------------

// The Canal sink of the row-change stream: RowStream finds the transactions, statements and row
// changes; the mapper makes Canal entries of them (protobuf or flat JSON).
class CanalMapper final : public RowSink {
 public:
  CanalMapper(const ConvertOptions& opts, const CanalOptions& co, EntrySink& sink,
              StderrDiagnostics& diag, std::FILE* err)
      : opts_(opts),
        json_(co.format == CanalFormat::json),
        sink_(sink),
        diag_(diag),
        err_(err),
        tz_(co.timezone),
        pool_(opts.render_threads, co.render_batch_bytes, render_) {
  }

  // Writes out everything prepared so far: at the end, and before this thread writes to stderr.
  // Rethrows a write error of the pool.
  void sync() { pool_.sync(); }
  // What this thread reports goes out after every entry and diagnostic prepared before it.
  void report(const Diagnostic& d) override {
    pool_.sync();
    diag_.report(d);
  }

  // RowSink
  void before_stderr() override { pool_.sync(); }

  // The end of a file left a transaction without its COMMIT: no TRANSACTIONEND entry follows
  // its entries; said on stderr (binlogctl(1), CUT-OFF TRANSACTIONS).
  void end_file(const TransactionFront::CutOff* c, bool) override {
    if (c) report(c->diagnostic(stream().file()));
  }

  void begin_file(const InputFile& f) override {
    log_name_ = &f.log_name;
    was_begun_ = false;
    plans_.clear();
    cur_sn_.clear();
    cur_lct_.clear();
  }

  void tables_cleared() override { plans_.clear(); }

  void statement(const Event& ev, const TransactionFront::Step& step) override { statement(ev, step.query, step.kind); }

  void after_event(const Event&, const TransactionFront::Step&) override {
    was_begun_ = stream().state().open && stream().state().begun;
    pool_.maybe_submit();
  }

  // The events with entries of their own besides statements and rows.
  void event(const Event& ev, const TransactionFront::Step&) override {
    const bool was_begun = was_begun_;
    const TransactionState& ts = stream().state();
    switch (ev.type()) {
      case EventType::previous_gtids: {
        ByteReader r = ev.body_reader();
        if (auto s = decode_previous_gtids(r)) {
          executed_ = std::move(*s);
          executed_dirty_ = true;
        }
        break;
      }
      case EventType::gtid:
      case EventType::gtid_tagged_log:
        mysql_gtid(ev);
        break;
      case EventType::mariadb_gtid_list:
        if (!ev.is_inner()) gtid_list_entry(ev);
        break;
      case EventType::mariadb_gtid:
        cur_sn_.clear();
        cur_lct_.clear();
        if (stream().front().selected() && ts.has_gtid) gtid_entry(ev);
        // MariaDB writes no BEGIN after a GTID that opens a transaction: the GTID is the BEGIN.
        if (stream().front().selected() && ts.open && ts.begun && !was_begun) begin_entry(ev, 0, ts.xid);
        break;
      case EventType::xid:
        if (stream().front().selected()) {
          auto x = decode_xid(ev.body_reader(), *ev.fde);
          if (!x) {
            undecodable(ev, "XID", x.error());
          } else {
            xid_text_.clear();
            append_u64(xid_text_, x->xid);
            end_entry(ev, xid_text_);
          }
        }
        break;
      default:
        break;
    }
  }

 private:

  static Bytes as_bytes(std::string_view s) {
    return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }

  void undecodable(const Event& ev, std::string_view what, const DecodeError& e) override {
    report(Diagnostic{
        Check::undecodable_event, Severity::error, *log_name_, top_pos(ev),
        fmt::format("{} event does not decode: {} at offset {}", what, e.what, e.offset)});
  }

  // Header.gtid: the executed GTID set (MySQL) or the transaction's GTID; empty without one.
  const std::string& header_gtid() {
    const TransactionState& ts = stream().state();
    if (!ts.has_gtid) return empty_;
    if (!ts.mysql_gtid || executed_.empty()) return ts.gtid_text;
    if (executed_dirty_) {
      executed_text_ = executed_.to_string();
      executed_dirty_ = false;
    }
    return executed_text_;
  }

  // LogEventConvert.createHeader, encoded into header_bytes_ (Header, field order of the
  // generated code; version and sourceType are oneof members, written whatever their value).
  // UTF-8 logs go to `logs` when given (else to stderr at once). Without a rowsCount property:
  // a rows event's goes where the offset returned says (before the gtid), once its rows are
  // counted (CanalRowsWorker).
  std::size_t header(const Event& ev, std::string_view schema, std::string_view table, int event_type,
                     Utf8Logs* logs = nullptr) {
    using W = canal_detail::WireWriter;
    const TransactionState& ts = stream().state();
    const std::string& gtid = header_gtid();
    std::string& o = header_bytes_;
    o.resize(8 * W::varint_bound() + W::bytes_bound(log_name_->size()) + W::bytes_bound(5) +
             W::bytes_bound(schema.size()) + W::bytes_bound(table.size()) +
             W::bytes_bound(gtid.size()) + W::pair_bound(8, ts.gtid_text.size()) +
             W::pair_bound(10, cur_sn_.size()) + W::pair_bound(11, cur_lct_.size()));
    W w{o.data(), logs};
    w.varint(1, 1);
    w.string(2, *log_name_, "com.alibaba.otter.canal.protocol.Header.logfileName");
    if (const std::uint64_t pos = top_pos(ev); pos != 0) w.varint(3, pos);
    if (ev.header.server_id != 0) w.varint(4, ev.header.server_id);
    w.bytes(5, "UTF-8");
    const std::int64_t when = static_cast<std::int64_t>(ev.header.timestamp) * 1000;
    if (when != 0) w.varint(6, static_cast<std::uint64_t>(when));
    w.varint(7, canalpb::MYSQL);
    w.string(8, schema, "com.alibaba.otter.canal.protocol.Header.schemaName");
    w.string(9, table, "com.alibaba.otter.canal.protocol.Header.tableName");
    if (ev.header.event_size != 0) w.varint(10, ev.header.event_size);
    if (event_type != 0) w.varint(11, canal_detail::int32_wire(event_type));
    if (ts.has_gtid) {
      w.pair(12, "curtGtid", ts.gtid_text);
      if (!cur_sn_.empty()) w.pair(12, "curtGtidSn", cur_sn_);
      if (!cur_lct_.empty()) w.pair(12, "curtGtidLct", cur_lct_);
    }
    const std::size_t split = static_cast<std::size_t>(w.p - o.data());
    w.string(13, gtid, "com.alibaba.otter.canal.protocol.Header.gtid");
    o.resize(static_cast<std::size_t>(w.p - o.data()));
    return split;
  }

  // One Entry made whole here: canal-proto writes it (storeValue = `store`), canal-json a
  // FlatMessage for a ROWDATA entry (`flat`). It goes into the batch, in input order with the
  // rows events; `direct` (the pool drained first): written at once.
  void emit(canalpb::EntryType type, const Event& ev, std::string_view schema,
            std::string_view table, int event_type, std::string_view store, const FlatEntry* flat,
            bool direct = false) {
    if (direct) {
      const std::uint64_t batch = sink_.next_batch();
      if (!json_) {
        header(ev, schema, table, event_type);
        sink_.entry(batch, header_bytes_, type, store);
      } else if (flat != nullptr) {
        scratch_.clear();
        const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), *flat);
        OutBuf& out = sink_.text();
        out.append(scratch_.view().substr(0, id_at));
        append_dec(out, batch);
        out.append(scratch_.view().substr(id_at));
        sink_.done();
      }
      return;
    }
    CanalBatch& b = pool_.current();
    CanalJob& j = b.jobs.emplace_back();
    j.entry_type = type;
    if (!json_) {
      j.logs_at = b.logs.size();
      header(ev, schema, table, event_type, &b.logs);
      j.logs_end = b.logs.size();
      j.a = b.add(header_bytes_);
      j.b = b.add(store);
    } else if (flat != nullptr) {
      scratch_.clear();
      const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), *flat);
      j.has_text = true;
      j.a = b.add(scratch_.view().substr(0, id_at));
      j.b = b.add(scratch_.view().substr(id_at));
    }
  }
  // A statement's entry, whose storeValue protobuf serializes: it logs on stderr when `sql` or
  // `db` (the message's strings) are not valid UTF-8, so the pool is drained first then.
  void emit(canalpb::EntryType type, const Event& ev, std::string_view schema,
            std::string_view table, int event_type, const google::protobuf::MessageLite& store,
            const FlatEntry* flat, std::string_view sql, std::string_view db) {
    bool direct = false;
    if (!json_) {
      direct = !canal_detail::is_ascii(sql) && !canal_detail::proto_utf8_valid(sql);
      direct = direct || (!canal_detail::is_ascii(db) && !canal_detail::proto_utf8_valid(db));
      if (direct) pool_.sync();
      store.SerializeToString(&store_);
    }
    emit(type, ev, schema, table, event_type, json_ ? std::string_view() : std::string_view(store_), flat,
         direct);
  }
  static std::int64_t es(const Event& ev) { return static_cast<std::int64_t>(ev.header.timestamp) * 1000; }

  // XA START / XA END: props XA_TYPE and XA_XID, as Canal adds them.
  // TransactionBegin{props (3), threadId (4)}; canal-json writes nothing for it.
  void begin_entry(const Event& ev, std::uint32_t thread_id, std::string_view xa_xid = {}) {
    store_.clear();
    if (!json_) {
      if (!xa_xid.empty()) {
        canal_detail::append_pair_field(store_, 3, "XA_TYPE", "XA START");
        canal_detail::append_pair_field(store_, 3, "XA_XID", xa_xid);
      }
      if (thread_id != 0) canal_detail::append_varint_field(store_, 4, thread_id);
    }
    emit(canalpb::TRANSACTIONBEGIN, ev, "", "", 0, store_, nullptr);
  }
  // TransactionEnd{transactionId (2), props (3)}.
  void end_entry(const Event& ev, std::string_view xid, std::string_view xa_xid = {}) {
    store_.clear();
    if (!json_) {
      canal_detail::append_string_field(
          store_, 2, xid, "com.alibaba.otter.canal.protocol.TransactionEnd.transactionId");
      if (!xa_xid.empty()) {
        canal_detail::append_pair_field(store_, 3, "XA_TYPE", "XA END");
        canal_detail::append_pair_field(store_, 3, "XA_XID", xa_xid);
      }
    }
    emit(canalpb::TRANSACTIONEND, ev, "", "", 0, store_, nullptr);
  }
  // Canal's parseGTIDLogEvent / parseMariaGTIDLogEvent: one Pair, header eventType GTID. Canal
  // fills a single Pair.Builder with setKey/setValue three times for a MySQL GTID with a logical
  // clock, so what it sends is {sequenceNumber, n}; {gtid, the GTID} otherwise.
  void gtid_entry(const Event& ev, std::string_view key, std::string_view value) {
    store_.clear();
    if (!json_) {
      canal_detail::append_string_field(store_, 1, key, "com.alibaba.otter.canal.protocol.Pair.key");
      canal_detail::append_string_field(store_, 2, value, "com.alibaba.otter.canal.protocol.Pair.value");
    }
    emit(canalpb::GTIDLOG, ev, "", "", canalpb::GTID, store_, nullptr);
  }
  void gtid_entry(const Event& ev) { gtid_entry(ev, "gtid", stream().state().gtid_text); }

  void gtid_list_entry(const Event& ev) {
    ByteReader r = ev.body_reader();
    auto l = decode_gtid_list(r);
    if (!l) {
      undecodable(ev, "GTID_LIST", l.error());
      return;
    }
    gtid_entry(ev, "gtid", canal_detail::gtid_list_text(*l));
  }

  void mysql_gtid(const Event& ev) {
    cur_sn_.clear();
    cur_lct_.clear();
    ByteReader r = ev.body_reader();
    auto g = ev.type() == EventType::gtid ? decode_gtid_log(r) : decode_gtid_tagged_log(r);
    if (!g) return;  // reported through the tracker
    if (g->has_logical_clock) {
      cur_sn_ = std::to_string(g->sequence_number);
      cur_lct_ = std::to_string(g->last_committed);
    }
    if (g->gno != 0) {
      (void)executed_.add(g->uuid, g->tag, g->gno);
      executed_dirty_ = true;
    }
    if (stream().front().selected() && stream().state().has_gtid) {
      if (g->has_logical_clock) gtid_entry(ev, "sequenceNumber", cur_sn_);
      else gtid_entry(ev);
    }
  }

  void table_map(const Event& ev, const TableMapLoader::Loaded& l) override {
    if (!l.fresh) return;
    const TableMap& stored = *l.map;
    // mysqlType: Canal spells it from its DDL-built table meta, whatever the TABLE_MAP carries:
    // the declared type from schema history when it has a fitting definition; else rebuilt from
    // the TABLE_MAP, with display widths as MariaDB and MySQL before 8.0.19 print them.
    const std::uint32_t ver = parse_server_version(ev.fde->server_version);
    const bool widths = ev.fde->server_version.find("MariaDB") != std::string::npos || ver < 80019;
    plans_[stored.table_id] = std::make_shared<const TablePlan>(make_plan(stored, widths, l.def));
  }

  void statement(const Event& ev, const QueryEvent& q, StatementKind k) {
    switch (k) {
      case StatementKind::begin:
        if (stream().front().selected()) begin_entry(ev, q.thread_id);
        return;
      case StatementKind::xa_start:
        if (stream().front().selected()) begin_entry(ev, q.thread_id, xa_statement_xid(q.sql));
        return;
      case StatementKind::xa_end:
        if (stream().front().selected()) end_entry(ev, "0", xa_statement_xid(q.sql));
        return;
      case StatementKind::commit:
        if (stream().front().selected()) end_entry(ev, "0");
        return;
      case StatementKind::xa_finish:
        if (stream().front().selected()) {
          const int et = xa_statement_is_rollback(q.sql) ? canalpb::XAROLLBACK : canalpb::XACOMMIT;
          if (q.sql.size() >= kStreamStatementAt) return streamed_statement(ev, q.db, "", et, false, q.sql, {});
          canalpb::RowChange rc;
          rc.set_eventtype(static_cast<canalpb::EventType>(et));
          rc.set_isddl(false);
          rc.set_sql(std::string(q.sql));
          const FlatEntry f{false, q.sql, et, nullptr, nullptr};
          emit(canalpb::ROWDATA, ev, q.db, "", et, rc, &f, q.sql, std::string_view());
        }
        return;
      case StatementKind::ddl:
      case StatementKind::other:
        break;
      default:
        return;
    }
    if (!stream().front().selected()) return;
    if (!stream().database().selects(q.db)) return;
    std::string db(q.db), table;
    if (!ddl_table(q.sql, db, table)) table.clear();
    if (!opts_.filter.empty()) {
      if (k == StatementKind::other) return;
      if (!opts_.filter.matches(db, table)) return;
    }
    const int et = canal_statement_event_type(q.sql);
    const bool is_ddl = et != canalpb::INSERT && et != canalpb::UPDATE && et != canalpb::DELETE;
    if (q.sql.size() >= kStreamStatementAt) return streamed_statement(ev, db, table, et, is_ddl, q.sql, q.db);
    canalpb::RowChange rc;
    rc.set_isddl(is_ddl);
    rc.set_sql(std::string(q.sql));
    if (!q.db.empty()) rc.set_ddlschemaname(std::string(q.db));
    rc.set_eventtype(static_cast<canalpb::EventType>(et));
    const FlatEntry f{is_ddl, q.sql, et, nullptr, nullptr};
    emit(canalpb::ROWDATA, ev, db, table, et, rc, &f, q.sql, q.db);
  }

  // A huge statement (a 1 GiB QUERY): its entry written at once, after everything before it, the
  // statement escaped (canal-json) or copied (canal-proto) a piece at a time, never serialized
  // whole. The bytes are those emit() writes for it.
  static constexpr std::size_t kStreamStatementAt = 1u << 20;
  static constexpr std::size_t kStatementPiece = 256u << 10;
  void streamed_statement(const Event& ev, std::string_view schema, std::string_view table, int et, bool is_ddl,
                          std::string_view sql, std::string_view ddl_schema) {
    pool_.sync();
    if (json_) {
      const std::uint64_t batch = sink_.next_batch();
      const FlatEntry f{is_ddl, std::string_view(), et, nullptr, nullptr};
      scratch_.clear();
      std::size_t sql_at = 0;
      const std::size_t id_at = flat_message(scratch_, es(ev), schema, table, header_gtid(), f, false, &sql_at);
      const std::string_view m = scratch_.view();
      OutBuf& out = sink_.text();
      out.append(m.substr(0, id_at));
      append_dec(out, batch);
      out.append(m.substr(id_at, sql_at - id_at));
      // Pieces end before a UTF-8 lead or ASCII byte: each maximal ill-formed sequence (one
      // U+FFFD) lies within a piece, so the pieces escape to what the whole escapes to.
      for (std::string_view s = sql; !s.empty();) {
        const std::size_t k = utf8_piece(s, kStatementPiece);
        piece_.clear();
        append_flat_json_string(piece_, s.substr(0, k));
        out.append(piece_.view().substr(1, piece_.size() - 2));  // without its quotes
        s.remove_prefix(k);
        sink_.maybe_write_out();
      }
      out.append(m.substr(sql_at));
      sink_.done();
      return;
    }
    // RowChange{eventType (2), isDdl (10), sql (11), ddlSchemaName (14)}: the fields around sql
    // serialized by the generated code (UTF-8 logs in field order, as serializing prints them),
    // sql's tag and length between them, its bytes written from where they are.
    canalpb::RowChange before, after;
    before.set_eventtype(static_cast<canalpb::EventType>(et));
    before.set_isddl(is_ddl);
    before.SerializeToString(&store_);
    canal_detail::check_utf8(sql, "com.alibaba.otter.canal.protocol.RowChange.sql");
    canal_detail::append_varint(store_, (11u << 3) | 2);
    canal_detail::append_varint(store_, sql.size());
    if (!ddl_schema.empty()) after.set_ddlschemaname(std::string(ddl_schema));
    after.SerializeToString(&store_tail_);
    const std::uint64_t batch = sink_.next_batch();
    header(ev, schema, table, et);
    sink_.entry_pieces(batch, header_bytes_, canalpb::ROWDATA, store_, sql, store_tail_);
  }

  void rows(const RowsView& v) override {
    const Event& ev = *v.ev;
    const RowsEventHeader* h = v.header;
    const TableMap* tm = v.map;
    const RowsEventKind kind = v.kind;
    auto pi = plans_.find(h->table_id);
    if (pi == plans_.end() ||
        pi->second->cols.size() != tm->columns.size())  // not expected: made with the map
      pi = plans_.insert_or_assign(h->table_id, std::make_shared<const TablePlan>(make_plan(*tm, true, nullptr))).first;
    const Bytes rows = v.rows;
    const std::uint64_t rows_at = v.rows_offset;
    const int et = kind.kind == RowsKind::insert   ? canalpb::INSERT
                   : kind.kind == RowsKind::update ? canalpb::UPDATE
                                                   : canalpb::DELETE;
    // A large event is not copied: rendered here, after what the pool holds is written.
    const bool big = rows.size() > opts_.render_inline_bytes;
    if (big) pool_.sync();
    CanalBatch& b = big ? big_ : pool_.current();
    CanalJob& j = b.jobs.emplace_back();
    j.rows = true;
    j.entry_type = canalpb::ROWDATA;
    j.map = stream().tables().find_shared(h->table_id);
    j.plan = pi->second;
    j.images = b.add(rows);
    j.present_before = b.add(h->columns_before);
    j.present_after = b.add(h->columns_after);
    j.log_name = b.add(*log_name_);
    j.rows_offset = rows_at;
    j.width = h->width;
    j.table_id = h->table_id;
    j.pos = top_pos(ev);
    j.event_name = event_type_constant(ev.type_code());
    j.kind = kind.kind;
    j.partial_json = kind.partial_json;
    if (!json_) {
      j.logs_at = b.logs.size();
      const std::size_t split = header(ev, tm->db, tm->table, et, &b.logs);
      j.logs_end = b.logs.size();
      j.a = b.add(std::string_view(header_bytes_).substr(0, split));
      j.b = b.add(std::string_view(header_bytes_).substr(split));
    } else {
      j.es = es(ev);
      j.schema = b.add(tm->db);
      j.table = b.add(tm->table);
      j.gtid = b.add(header_gtid());
    }
    if (big) {
      render_.render(big_, big_worker_);
      render_.write(big_);
      big_.clear();
      big_.shrink();
    }
  }

  const ConvertOptions& opts_;
  const bool json_;
  EntrySink& sink_;
  StderrDiagnostics& diag_;
  std::FILE* err_;
  TimeZone tz_;
  const std::string* log_name_ = nullptr;  // the stream's file's name
  bool was_begun_ = false;  // the transaction was begun (BEGIN, a MariaDB GTID) before this event
  std::unordered_map<std::uint64_t, std::shared_ptr<const TablePlan>> plans_;
  GtidSet executed_;
  std::string executed_text_;
  bool executed_dirty_ = true;
  const std::string empty_;
  std::string cur_sn_, cur_lct_;
  std::string xid_text_;
  std::string store_, header_bytes_;  // an entry's storeValue and header, being made
  OutBuf scratch_;                    // a FlatMessage being made
  OutBuf piece_;                      // a piece of a huge statement, escaped
  std::string store_tail_;            // a huge statement's storeValue after its sql
  // Rows events: rendered by the pool, or here when large (big_).
  CanalRender render_{json_, tz_, sink_, diag_};
  CanalBatch big_;
  CanalRowsWorker big_worker_;
  convert_detail::BatchPool<CanalRender> pool_;  // last: its threads stop first
};

}  // namespace

int run_canal_convert(const ConvertOptions& opts, const CanalOptions& co, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  EntrySink sink(co, outf);
  CanalMapper mapper(opts, co, sink, diag, errf);
  RowStream::Options so = RowStream::options_of(opts);
  so.database = opts.database;
  so.err = errf;
  RowStream stream(std::move(so), mapper);
  // The reader's findings go out after the entries and findings prepared before them.
  convert_detail::DrainFirst<CanalMapper> ordered(mapper, diag);
  const bool readable = read_chain(chain_options(opts), stream, ordered, errf);
  stream.finish();
  mapper.sync();
  sink.flush();
  if (!readable) return 2;
  warn_unmatched_filter_rules(opts.filter, errf);
  warn_unmatched_database(opts.database, stream.database().matched(), errf);
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
