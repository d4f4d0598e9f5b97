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

void append_time_json(std::string& out, const std::optional<std::int64_t>& t) {
  append_time_json(out, t.value_or(0));
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

void append_transaction_json(std::string& b, const TransactionStats& t, std::string_view rank) {
  b.append(R"({"kind":"transaction","rank":")");
  b.append(rank);
  b.append(R"(","txn_id":)");
  append_u64(b, t.txn_id);
  b.append(R"(,"gtid":)");
  if (t.gtid.empty())
    b.append("null");
  else
    append_json_quoted(b, t.gtid);
  b.append(R"(,"log_name":)");
  append_json_quoted(b, t.log_name);
  b.append(R"(,"pos":)");
  append_u64(b, t.pos);
  b.append(R"(,"bytes":)");
  append_u64(b, t.bytes);
  b.append(R"(,"events":)");
  append_u64(b, t.events);
  b.append(R"(,"rows":)");
  append_u64(b, t.rows);
  b.append(R"(,"duration_s":)");
  append_i64(b, t.duration());
  b.append(R"(,"first_timestamp":)");
  append_time_json(b, t.first_time);
  b.append(R"(,"last_timestamp":)");
  append_time_json(b, t.last_time);
  b.append(R"(,"timestamp":)");
  append_time_json(b, t.commit_time);
  b.append(R"(,"complete":)");
  b.append(t.complete ? "true" : "false");
  b.append("}\n");
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
  for (const TableStats& t : rep.tables) {
    b.append(R"({"kind":"table","database":)");
    append_json_quoted(b, t.database);
    b.append(R"(,"table":)");
    append_json_quoted(b, t.table);
    b.append(R"(,"inserts":)");
    append_u64(b, t.inserts);
    b.append(R"(,"updates":)");
    append_u64(b, t.updates);
    b.append(R"(,"deletes":)");
    append_u64(b, t.deletes);
    b.append(R"(,"rows":)");
    append_u64(b, t.rows());
    b.append(R"(,"bytes":)");
    append_u64(b, t.bytes);
    b.append(R"(,"events":)");
    append_u64(b, t.events);
    b.append(R"(,"transactions":)");
    append_u64(b, t.transactions);
    b.append("}\n");
  }
  for (const EventTypeStats& e : rep.event_types) {
    b.append(R"({"kind":"event_type","event_type":)");
    append_json_quoted(b, e.name);
    b.append(R"(,"type_code":)");
    append_u64(b, e.type_code);
    b.append(R"(,"count":)");
    append_u64(b, e.count);
    b.append(R"(,"bytes":)");
    append_u64(b, e.bytes);
    b.append("}\n");
  }
  for (const TransactionStats& t : rep.largest) append_transaction_json(b, t, "largest");
  for (const TransactionStats& t : rep.longest) append_transaction_json(b, t, "longest");
  for (const IntervalStats& iv : rep.intervals) {
    b.append(R"({"kind":"interval","start":)");
    b.push_back('"');
    append_utc_datetime(b, iv.start);
    b.append(R"(","seconds":)");
    append_u64(b, rep.interval_seconds);
    b.append(R"(,"transactions":)");
    append_u64(b, iv.transactions);
    b.append(R"(,"events":)");
    append_u64(b, iv.events);
    b.append(R"(,"bytes":)");
    append_u64(b, iv.bytes);
    b.append(R"(,"rows":)");
    append_u64(b, iv.rows());
    b.append(R"(,"inserts":)");
    append_u64(b, iv.inserts);
    b.append(R"(,"updates":)");
    append_u64(b, iv.updates);
    b.append(R"(,"deletes":)");
    append_u64(b, iv.deletes);
    b.append("}\n");
  }
  const StatsSummary& s = rep.summary;
  b.append(R"({"kind":"summary","files":)");
  append_u64(b, s.files);
  b.append(R"(,"events":)");
  append_u64(b, s.events);
  b.append(R"(,"inner_events":)");
  append_u64(b, s.inner_events);
  b.append(R"(,"bytes":)");
  append_u64(b, s.bytes);
  b.append(R"(,"transactions":)");
  append_u64(b, s.transactions);
  b.append(R"(,"tables":)");
  append_u64(b, s.tables);
  b.append(R"(,"rows":)");
  append_u64(b, s.rows());
  b.append(R"(,"inserts":)");
  append_u64(b, s.inserts);
  b.append(R"(,"updates":)");
  append_u64(b, s.updates);
  b.append(R"(,"deletes":)");
  append_u64(b, s.deletes);
  b.append(R"(,"uncounted_rows_events":)");
  append_u64(b, s.uncounted_rows_events);
  b.append(R"(,"first_timestamp":)");
  append_time_json(b, s.first_time);
  b.append(R"(,"last_timestamp":)");
  append_time_json(b, s.last_time);
  b.append(R"(,"errors":)");
  append_u64(b, s.errors);
  b.append(R"(,"warnings":)");
  append_u64(b, s.warnings);
  b.append("}\n");
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
