// canal-json's FlatMessage (MQMessageUtils.messageConverter): the rows part built row by row on
// the rendering threads (FlatRows, inline: it runs per column), and the message around it
// (flat_message, flat_rows.cpp).
#pragma once

#include "canal/canal_internal.h"
#include "canal/column_plan.h"
#include "rows/rows.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace binlogctl::canal_detail {

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
        if (c.v.in_source && !c.v.in_short)  // well-formed UTF-8 (render_value checked it)
          append_flat_json_utf8(out, c.v.source);
        else
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
                         std::size_t* sql_at = nullptr);

}  // namespace binlogctl::canal_detail
