// The stats report as JSON Lines (one object per line, each with a "kind") or aligned text.
#include <binlogctl/stats.h>
#include <binlogctl/transaction.h>

#include "render/json_out.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace binlogctl {

namespace {

void append_time_json(std::string& out, std::int64_t t) {
  if (t == 0) {
    out.append("null");
    return;
  }
  out.push_back('"');
  append_utc_datetime(out, t);
  out.push_back('"');
}

std::string time_text(std::int64_t t, const TimeZone& tz) {
  if (t == 0) return "-";
  std::string s;
  tz.append_local(s, t);
  return s;
}

// Names from the binlog in text output: escaped as in JSON (control characters, invalid UTF-8
// as \xHH), so that one row stays one line.
std::string name_text(std::string_view s) {
  std::string out;
  append_json_escaped(out, s);
  return out;
}

// An aligned text table: a header line, then the rows; numbers right-aligned, two spaces apart.
class TextTable {
 public:
  struct Column {
    std::string_view name;
    bool right;
  };
  explicit TextTable(std::vector<Column> cols) : cols_(std::move(cols)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void append_to(std::string& out) const {
    std::vector<std::size_t> w(cols_.size());
    for (std::size_t i = 0; i < cols_.size(); ++i) w[i] = cols_[i].name.size();
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
    auto line = [&](auto cell) {
      std::string l;
      for (std::size_t i = 0; i < cols_.size(); ++i) {
        const std::string_view c = cell(i);
        if (i > 0) l.append("  ");
        const std::size_t pad = w[i] - std::min(w[i], c.size());
        if (cols_[i].right) l.append(pad, ' ');
        l.append(c);
        if (!cols_[i].right) l.append(pad, ' ');
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out.append(l);
      out.push_back('\n');
    };
    line([&](std::size_t i) { return cols_[i].name; });
    for (const auto& r : rows_)
      line([&](std::size_t i) {
        return i < r.size() ? std::string_view(r[i]) : std::string_view();
      });
  }

 private:
  std::vector<Column> cols_;
  std::vector<std::vector<std::string>> rows_;
};

std::string num(std::uint64_t v) { return fmt::format("{}", v); }

// Byte counts for people: "512 B", "1.5 KiB", "349.1 MiB", "2.0 GiB" (JSON keeps exact integers).
std::string size_text(std::uint64_t v) {
  if (v < 1024) return fmt::format("{} B", v);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double x = static_cast<double>(v) / 1024.0;
  std::size_t u = 0;
  while (x >= 1024.0 && u + 1 < std::size(kUnits)) x /= 1024.0, ++u;
  return fmt::format("{:.1f} {}", x, kUnits[u]);
}

// One JSON object on one line, {"kind":..., then the fields in the order written}.
class JsonLine {
 public:
  JsonLine(std::string& b, std::string_view kind) : b_(b) {
    b_.append(R"({"kind":")");
    b_.append(kind);
    b_.push_back('"');
  }
  ~JsonLine() { b_.append("}\n"); }
  JsonLine(const JsonLine&) = delete;
  JsonLine& operator=(const JsonLine&) = delete;

  JsonLine& u64(std::string_view k, std::uint64_t v) {
    key(k);
    append_u64(b_, v);
    return *this;
  }
  JsonLine& i64(std::string_view k, std::int64_t v) {
    key(k);
    append_i64(b_, v);
    return *this;
  }
  JsonLine& str(std::string_view k, std::string_view v) {
    key(k);
    append_json_quoted(b_, v);
    return *this;
  }
  JsonLine& str_or_null(std::string_view k, std::string_view v) {  // null when empty
    if (v.empty()) return raw(k, "null");
    return str(k, v);
  }
  JsonLine& time(std::string_view k, std::int64_t t) {  // UTC "YYYY-MM-DD HH:MM:SS", null for 0
    key(k);
    append_time_json(b_, t);
    return *this;
  }
  JsonLine& time(std::string_view k, const std::optional<std::int64_t>& t) { return time(k, t.value_or(0)); }
  JsonLine& boolean(std::string_view k, bool v) { return raw(k, v ? "true" : "false"); }
  JsonLine& raw(std::string_view k, std::string_view json) {
    key(k);
    b_.append(json);
    return *this;
  }

 private:
  void key(std::string_view k) {
    b_.append(",\"");
    b_.append(k);
    b_.append("\":");
  }
  std::string& b_;
};

void append_transaction_json(std::string& b, const TransactionStats& t, std::string_view rank) {
  JsonLine(b, "transaction")
      .str("rank", rank)
      .u64("txn_id", t.txn_id)
      .str_or_null("gtid", t.gtid)
      .str("log_name", t.log_name)
      .u64("pos", t.pos)
      .u64("bytes", t.bytes)
      .u64("events", t.events)
      .u64("rows", t.rows)
      .i64("duration_s", t.duration())
      .time("first_timestamp", t.first_time)
      .time("last_timestamp", t.last_time)
      .time("timestamp", t.commit_time)
      .boolean("complete", t.complete);
}

void append_transactions_text(std::string& out, const std::vector<TransactionStats>& list,
                              std::string_view title, const TimeZone& tz) {
  out.append(title);
  out.push_back('\n');
  TextTable tt({{"txn_id", true},
                {"gtid", false},
                {"log_name", false},
                {"pos", true},
                {"bytes", true},
                {"events", true},
                {"rows", true},
                {"duration_s", true},
                {"timestamp", false}});
  for (const TransactionStats& t : list)
    tt.row({num(t.txn_id), t.gtid.empty() ? "-" : name_text(t.gtid), name_text(t.log_name),
            num(t.pos), size_text(t.bytes), num(t.events), num(t.rows), fmt::format("{}", t.duration()),
            time_text(t.commit_time, tz) + (t.complete ? "" : " (incomplete)")});
  tt.append_to(out);
}

}  // namespace

void append_stats_json(const StatsReport& rep, std::string& b) {
  for (const TableStats& t : rep.tables)
    JsonLine(b, "table")
        .str("database", t.database)
        .str("table", t.table)
        .u64("inserts", t.inserts)
        .u64("updates", t.updates)
        .u64("deletes", t.deletes)
        .u64("rows", t.rows())
        .u64("bytes", t.bytes)
        .u64("events", t.events)
        .u64("transactions", t.transactions);
  for (const EventTypeStats& e : rep.event_types)
    JsonLine(b, "event_type").str("event_type", e.name).u64("type_code", e.type_code).u64("count", e.count).u64("bytes", e.bytes);
  for (const TransactionStats& t : rep.largest) append_transaction_json(b, t, "largest");
  for (const TransactionStats& t : rep.longest) append_transaction_json(b, t, "longest");
  for (const IntervalStats& iv : rep.intervals) {
    std::string start = "\"";
    append_utc_datetime(start, iv.start);
    start.push_back('"');
    JsonLine(b, "interval")
        .raw("start", start)
        .u64("seconds", rep.interval_seconds)
        .u64("transactions", iv.transactions)
        .u64("events", iv.events)
        .u64("bytes", iv.bytes)
        .u64("rows", iv.rows())
        .u64("inserts", iv.inserts)
        .u64("updates", iv.updates)
        .u64("deletes", iv.deletes);
  }
  const StatsSummary& s = rep.summary;
  JsonLine(b, "summary")
      .u64("files", s.files)
      .u64("events", s.events)
      .u64("inner_events", s.inner_events)
      .u64("bytes", s.bytes)
      .u64("transactions", s.transactions)
      .u64("tables", s.tables)
      .u64("rows", s.rows())
      .u64("inserts", s.inserts)
      .u64("updates", s.updates)
      .u64("deletes", s.deletes)
      .u64("uncounted_rows_events", s.uncounted_rows_events)
      .time("first_timestamp", s.first_time)
      .time("last_timestamp", s.last_time)
      .u64("errors", s.errors)
      .u64("warnings", s.warnings);
}

void append_stats_text(const StatsReport& rep, std::string& out, const TimeZone& tz) {
  out.append(fmt::format("Tables ({})\n", rep.tables.size()));
  TextTable tables({{"database", false},
                    {"table", false},
                    {"inserts", true},
                    {"updates", true},
                    {"deletes", true},
                    {"rows", true},
                    {"bytes", true},
                    {"events", true},
                    {"transactions", true}});
  for (const TableStats& t : rep.tables)
    tables.row({name_text(t.database), name_text(t.table), num(t.inserts), num(t.updates),
                num(t.deletes), num(t.rows()), size_text(t.bytes), num(t.events), num(t.transactions)});
  tables.append_to(out);

  out.append("\nEvent types\n");
  TextTable types({{"event_type", false}, {"type_code", true}, {"count", true}, {"bytes", true}});
  for (const EventTypeStats& e : rep.event_types)
    types.row({e.name, num(e.type_code), num(e.count), size_text(e.bytes)});
  types.append_to(out);

  out.push_back('\n');
  append_transactions_text(
      out, rep.largest, fmt::format("Largest transactions (top {} by bytes)", rep.largest.size()), tz);
  out.push_back('\n');
  // Durations are whole seconds: when every one is 0 the ranking would only repeat "Largest".
  const bool all_instant = !rep.longest.empty() &&
                           std::all_of(rep.longest.begin(), rep.longest.end(),
                                       [](const TransactionStats& t) { return t.duration() == 0; });
  if (all_instant)
    out.append("Longest transactions: every transaction took under a second (durations are whole seconds)\n");
  else
    append_transactions_text(out, rep.longest,
                             fmt::format("Longest transactions (top {} by duration)", rep.longest.size()), tz);

  out.append(rep.interval_seconds == 60      ? std::string("\nTimeline (per minute)\n")
             : rep.interval_seconds == 3600  ? std::string("\nTimeline (per hour)\n")
             : rep.interval_seconds == 86400 ? std::string("\nTimeline (per day)\n")
                                             : fmt::format("\nTimeline (per {} s)\n", rep.interval_seconds));
  TextTable timeline({{"start", false},
                      {"transactions", true},
                      {"events", true},
                      {"rows", true},
                      {"inserts", true},
                      {"updates", true},
                      {"deletes", true},
                      {"bytes", true}});
  for (const IntervalStats& iv : rep.intervals)
    timeline.row({time_text(iv.start, tz), num(iv.transactions), num(iv.events), num(iv.rows()),
                  num(iv.inserts), num(iv.updates), num(iv.deletes), size_text(iv.bytes)});
  timeline.append_to(out);

  const StatsSummary& s = rep.summary;
  out.append("\nSummary\n");
  TextTable sum({{"", false}, {"", true}});
  sum.row({"files", num(s.files)});
  sum.row({"events", num(s.events)});
  sum.row({"inner_events", num(s.inner_events)});
  sum.row({"bytes", size_text(s.bytes)});
  sum.row({"transactions", num(s.transactions)});
  sum.row({"tables", num(s.tables)});
  sum.row({"rows", num(s.rows())});
  sum.row({"inserts", num(s.inserts)});
  sum.row({"updates", num(s.updates)});
  sum.row({"deletes", num(s.deletes)});
  sum.row({"uncounted_rows_events", num(s.uncounted_rows_events)});
  sum.row({"first_timestamp", time_text(s.first_time.value_or(0), tz)});
  sum.row({"last_timestamp", time_text(s.last_time.value_or(0), tz)});
  sum.row({"errors", num(s.errors)});
  sum.row({"warnings", num(s.warnings)});
  std::string rows;
  sum.append_to(rows);
  out.append(rows.substr(rows.find('\n') + 1));  // no header line
}

}  // namespace binlogctl
