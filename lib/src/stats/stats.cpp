// collect_stats / run_stats: the chain -> transactions -> counts per table, event type,
// transaction (bounded top-N) and interval.
#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/stats.h>
#include <binlogctl/transaction.h>

#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "stats/row_walk.h"
#include "txn/row_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace binlogctl {

namespace {

// The best `n` transactions by a ranking, in a heap whose front is the worst kept one: memory
// is bounded by n whatever the number of transactions.
template <class Better>
class TopN {
 public:
  TopN(std::size_t n, Better better) : n_(n), better_(better) {}
  void offer(const TransactionStats& t) {
    if (n_ == 0) return;
    if (heap_.size() < n_) {
      heap_.push_back(t);
      std::push_heap(heap_.begin(), heap_.end(), better_);
    } else if (better_(t, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), better_);
      heap_.back() = t;
      std::push_heap(heap_.begin(), heap_.end(), better_);
    }
  }
  // Best first.
  std::vector<TransactionStats> take() {
    std::sort_heap(heap_.begin(), heap_.end(), better_);
    return std::move(heap_);
  }

 private:
  std::size_t n_;
  Better better_;
  std::vector<TransactionStats> heap_;
};

struct LargerTxn {
  bool operator()(const TransactionStats& a, const TransactionStats& b) const {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.txn_id < b.txn_id;
  }
};
struct LongerTxn {
  bool operator()(const TransactionStats& a, const TransactionStats& b) const {
    if (a.duration() != b.duration()) return a.duration() > b.duration();
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.txn_id < b.txn_id;
  }
};

struct TableEntry {
  TableStats s;
  bool selected = true;        // --filter
  std::uint64_t last_txn = 0;  // for the transaction count
};

struct TypeEntry {
  std::string_view name;  // event_type_name's static text
  std::uint64_t count = 0, bytes = 0;
};

// The counting sink of the row-change stream: RowStream decides what is a transaction, a
// selected table and a row change; the collector counts.
class StatsCollector final : public RowSink {
 public:
  StatsCollector(const StatsOptions& opts, DiagnosticSink& diag)
      : opts_(opts), diag_(diag), largest_(opts.top, LargerTxn{}), longest_(opts.top, LongerTxn{}) {
    interval_ = opts.interval_seconds == 0 ? 60 : opts.interval_seconds;
  }

  // RowSink
  void undecodable(const Event& ev, std::string_view, const DecodeError& e) override {
    if (classify_rows_event(ev.type_code())) {
      if (!counted_) return;  // rows of unselected transactions are not looked at
      ++summary_.uncounted_rows_events;
    }
    undecodable(ev, e);
  }
  void report(const Diagnostic& d) override { diag_.report(d); }

  // The end of a file left a transaction without its COMMIT (binlogctl(1), CUT-OFF TRANSACTIONS):
  // counted as incomplete, and said on stderr.
  void end_file(const TransactionFront::CutOff* c, bool) override {
    if (c != nullptr) diag_.report(c->diagnostic(file_));
  }

  void begin_file(const InputFile& f) override {
    log_name_ = f.log_name;
    file_ = f;
    first_file_ = summary_.files == 0;
    ++summary_.files;
    by_id_.clear();
  }

  void transaction_begin(const Event& ev, const TransactionState& ts, bool selected) override {
    cur_open_ = true;
    cur_.txn_id = ts.txn_id;
    cur_.gtid = ts.gtid_text;
    cur_.log_name = log_name_;
    cur_.pos = top_pos(ev);
    cur_.bytes = cur_.events = cur_.rows = 0;
    cur_.first_time = cur_.last_time = 0;  // set by count_event
    cur_.commit_time = ts.timestamp;
    cur_.complete = true;
    txn_selected_ = selected;  // kept for the transaction until it closes
  }
  void transaction_end(const Event*, bool complete) override { close_txn(complete); }

  void event(const Event& ev, const TransactionFront::Step&) override {
    const bool selected = !cur_open_ || txn_selected_;
    counted_ = selected && !before_start(ev);
    if (counted_) count_event(ev);
  }

  void tables_cleared() override { by_id_.clear(); }

  // TABLE_MAP (loaded by the stream, completed from schema history): its counting entry and how
  // to skip each value of its columns.
  void table_map(const Event&, const TableMapLoader::Loaded& l) override {
    const TableMap* tm = l.map;
    IdSlot& slot = by_id_[tm->table_id];
    if (slot.entry == nullptr || slot.entry->s.database != tm->db || slot.entry->s.table != tm->table)
      slot.entry = &table_entry(*tm);
    if (l.fresh || slot.rules.size() != tm->columns.size()) {
      slot.rules.resize(tm->columns.size());
      for (std::size_t i = 0; i < tm->columns.size(); ++i)
        slot.rules[i] = value_size_rule(tm->columns[i].type, tm->columns[i].meta);
      slot.steps = row_skip_steps(slot.rules);
    }
  }

  void missing_table_map(const Event& ev, const RowsEventHeader& h) override {
    if (!counted_) return;
    ++summary_.uncounted_rows_events;
    Diagnostic d = RowStream::missing_table_map_finding(ev, h, log_name_, stream().mid_stream());
    d.message += ": its rows are not counted";
    diag_.report(d);
  }

  void rows(const RowsView& v) override {
    if (!counted_) return;
    const Event& ev = *v.ev;
    auto id = by_id_.find(v.header->table_id);
    if (id == by_id_.end()) return;  // (not expected: every map the stream has went through table_map)
    TableEntry& e = *id->second.entry;
    if (!e.selected) return;
    ++e.s.events;
    e.s.bytes += ev.header.event_size;
    if (cur_open_ && e.last_txn != cur_.txn_id) {
      e.last_txn = cur_.txn_id;
      ++e.s.transactions;
    }
    auto n = count_row_changes(*v.map, *v.header, v.kind, v.rows, v.rows_offset, id->second.rules,
                               id->second.steps);
    if (!n) {
      undecodable(ev, n.error());
      ++summary_.uncounted_rows_events;
      return;
    }
    std::uint64_t StatsSummary::*total = &StatsSummary::inserts;
    std::uint64_t TableStats::*per_table = &TableStats::inserts;
    std::uint64_t IntervalStats::*per_interval = &IntervalStats::inserts;
    if (v.kind.kind == RowsKind::update) {
      total = &StatsSummary::updates;
      per_table = &TableStats::updates;
      per_interval = &IntervalStats::updates;
    } else if (v.kind.kind == RowsKind::delete_) {
      total = &StatsSummary::deletes;
      per_table = &TableStats::deletes;
      per_interval = &IntervalStats::deletes;
    }
    summary_.*total += *n;
    e.s.*per_table += *n;
    if (ev.header.timestamp != 0) interval_at(ev.header.timestamp).*per_interval += *n;
    if (cur_open_) cur_.rows += *n;
  }

  void finish(StatsReport& rep) {
    close_txn(false);
    if (pending_events_ != 0) {  // no transaction at all: file events at their own time
      IntervalStats& iv = interval_at(pending_time_);
      iv.events += pending_events_;
      iv.bytes += pending_bytes_;
      pending_events_ = pending_bytes_ = 0;
    }
    rep.interval_seconds = static_cast<std::uint32_t>(interval_);
    rep.tables.clear();
    for (auto& [key, e] : tables_by_name_)  // mapped only by unselected transactions: left out
      if (e.selected && e.s.events > 0) rep.tables.push_back(e.s);
    std::sort(rep.tables.begin(), rep.tables.end(), [](const TableStats& a, const TableStats& b) {
      return std::tie(b.bytes, a.database, a.table) < std::tie(a.bytes, b.database, b.table);
    });
    rep.event_types.clear();
    for (std::size_t code = 0; code < types_.size(); ++code)
      for (const TypeEntry& te : types_[code])
        rep.event_types.push_back(EventTypeStats{static_cast<std::uint8_t>(code),
                                                 std::string(te.name), te.count, te.bytes});
    std::stable_sort(
        rep.event_types.begin(), rep.event_types.end(),
        [](const EventTypeStats& a, const EventTypeStats& b) { return a.bytes > b.bytes; });
    rep.largest = largest_.take();
    rep.longest = longest_.take();
    rep.intervals.clear();
    rep.intervals.reserve(intervals_.size());
    // interval_seconds 0: the bucket from the span, so that the timeline stays readable: a minute
    // up to 6 hours, an hour up to 14 days, else a day (minute buckets merged; both divide).
    std::int64_t merge = 0;
    if (opts_.interval_seconds == 0 && !intervals_.empty()) {
      const std::int64_t span = intervals_.rbegin()->first - intervals_.begin()->first;
      merge = span > 14 * 86400 ? 86400 : span > 6 * 3600 ? 3600 : 0;
    }
    for (const auto& [start, iv] : intervals_) {
      if (merge == 0) {
        rep.intervals.push_back(iv);
        continue;
      }
      const std::int64_t bucket = start - ((start % merge) + merge) % merge;
      if (rep.intervals.empty() || rep.intervals.back().start != bucket) {
        rep.intervals.push_back(IntervalStats{});
        rep.intervals.back().start = bucket;
      }
      IntervalStats& m = rep.intervals.back();
      m.transactions += iv.transactions;
      m.events += iv.events;
      m.bytes += iv.bytes;
      m.inserts += iv.inserts;
      m.updates += iv.updates;
      m.deletes += iv.deletes;
    }
    if (merge != 0) rep.interval_seconds = static_cast<std::uint32_t>(merge);
    summary_.tables = rep.tables.size();
    rep.summary = summary_;
  }

 private:
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }

  void undecodable(const Event& ev, const DecodeError& e) {
    diag_.report(Diagnostic{
        Check::undecodable_event, Severity::error, log_name_, top_pos(ev),
        fmt::format("{} event does not decode: {} at offset {}{}",
                    event_type_constant(ev.type_code()), e.what, e.offset,
                    ev.is_inner() ? fmt::format(" (inner event {} of the payload)", ev.inner_index)
                                  : std::string())});
  }

  // Format descriptions before the start point are read (rows need them) but not counted, so
  // that the counts are those of the events dump lists.
  bool before_start(const Event& ev) const {
    if (ev.type() != EventType::format_description || ev.is_inner()) return false;
    if (first_file_ && opts_.start_position && ev.pos < *opts_.start_position) return true;
    return opts_.start_datetime &&
           static_cast<std::int64_t>(ev.header.timestamp) < *opts_.start_datetime;
  }

  IntervalStats& interval_at(std::int64_t t) {
    // Events come in time order nearly always: the last interval is the one asked for.
    if (last_interval_ != nullptr && t >= last_interval_->start && t - last_interval_->start < interval_)
      return *last_interval_;
    const std::int64_t w = interval_;
    std::int64_t start = t - t % w;
    if (t % w < 0) start -= w;
    auto it = intervals_.try_emplace(start).first;
    it->second.start = start;
    last_interval_ = &it->second;  // std::map: stays valid while the map grows
    return it->second;
  }

  void count_event(const Event& ev) {
    const std::uint64_t size = ev.header.event_size;
    const auto when = static_cast<std::int64_t>(ev.header.timestamp);
    ++summary_.events;
    if (ev.is_inner())
      ++summary_.inner_events;
    else
      summary_.bytes += size;
    // The time span and the timeline are those of transactions: a file's own events
    // (Format_desc, Rotate, ...) carry the time the file was opened or rotated, not a change's.
    // They still count in the timeline (its intervals add up to the summary), in the interval
    // of the last transaction event before them (before any: of the first one after them; in
    // a chain without transactions: of their own time).
    if (when != 0 && cur_open_) {
      if (!summary_.first_time || when < *summary_.first_time) summary_.first_time = when;
      if (!summary_.last_time || when > *summary_.last_time) summary_.last_time = when;
      IntervalStats& iv = interval_at(when);
      ++iv.events;
      if (!ev.is_inner()) iv.bytes += size;
      last_txn_time_ = when;
      iv.events += pending_events_;
      iv.bytes += pending_bytes_;
      pending_events_ = pending_bytes_ = 0;
    } else if (when != 0) {
      if (last_txn_time_ != 0) {
        IntervalStats& iv = interval_at(last_txn_time_);
        ++iv.events;
        if (!ev.is_inner()) iv.bytes += size;
      } else {
        if (pending_events_ == 0) pending_time_ = when;
        ++pending_events_;
        if (!ev.is_inner()) pending_bytes_ += size;
      }
    }
    const std::string_view name =
        event_type_name(ev.type_code(), ev.fde->flavor, ev.fde->version_product);
    std::vector<TypeEntry>& slot = types_[ev.type_code()];
    auto it =
        std::find_if(slot.begin(), slot.end(), [&](const TypeEntry& e) { return e.name == name; });
    if (it == slot.end()) it = slot.insert(slot.end(), TypeEntry{name});
    ++it->count;
    it->bytes += size;
    if (cur_open_) {
      ++cur_.events;
      if (!ev.is_inner()) cur_.bytes += size;
      if (when != 0) {
        cur_.first_time = cur_.first_time == 0 ? when : std::min(cur_.first_time, when);
        cur_.last_time = std::max(cur_.last_time, when);
      }
    }
  }

  void close_txn(bool complete) {
    if (!cur_open_) return;
    cur_open_ = false;
    if (!txn_selected_ || cur_.events == 0) return;  // unselected, or only uncounted events
    cur_.complete = complete;
    ++summary_.transactions;
    if (cur_.commit_time != 0) ++interval_at(cur_.commit_time).transactions;
    largest_.offer(cur_);
    longest_.offer(cur_);
  }

  TableEntry& table_entry(const TableMap& tm) {
    key_.assign(tm.db);
    key_.push_back('\0');
    key_.append(tm.table);
    auto it = tables_by_name_.find(key_);
    if (it == tables_by_name_.end()) {
      it = tables_by_name_.emplace(key_, TableEntry{}).first;
      it->second.s.database = tm.db;
      it->second.s.table = tm.table;
      it->second.selected = opts_.filter.matches(tm.db, tm.table);
    }
    return it->second;
  }

  const StatsOptions& opts_;
  DiagnosticSink& diag_;
  std::int64_t interval_ = 60;
  bool first_file_ = true;
  bool counted_ = false;  // the current event counts (selected, not before the start)
  std::string log_name_;
  InputFile file_;
  // Per table id of this file: its entry, and how to skip each value of its current TABLE_MAP's
  // columns (value_size_rule; refreshed whenever the map is parsed anew) for the row walk.
  struct IdSlot {
    TableEntry* entry = nullptr;
    std::vector<ValueSizeRule> rules;
    std::vector<RowSkipStep> steps;  // row_skip_steps(rules)
  };
  std::unordered_map<std::uint64_t, IdSlot> by_id_;
  std::map<std::string, TableEntry> tables_by_name_;      // db NUL table
  std::string key_;
  std::array<std::vector<TypeEntry>, 256> types_;
  std::map<std::int64_t, IntervalStats> intervals_;
  IntervalStats* last_interval_ = nullptr;  // interval_at's last answer
  // File events' place in the timeline (count_event).
  std::int64_t last_txn_time_ = 0, pending_time_ = 0;
  std::uint64_t pending_events_ = 0, pending_bytes_ = 0;
  StatsSummary summary_;
  TransactionStats cur_;
  bool cur_open_ = false;
  bool txn_selected_ = true;
  TopN<LargerTxn> largest_;
  TopN<LongerTxn> longest_;
};

}  // namespace

bool collect_stats(const StatsOptions& opts, StatsReport& report, DiagnosticSink& diag,
                   std::FILE* err) {
  StatsCollector c(opts, diag);
  RowStream::Options so = RowStream::options_of(opts);
  so.loader_notes = false;  // its notes are about column names, which stats does not print
  so.err = err;
  RowStream stream(std::move(so), c);
  ChainOptions co = chain_options_of(opts);
  co.pass_fde_before_start = true;  // row walking needs the format description in force
  co.threads = opts.threads;
  const bool readable = read_chain(co, stream, diag, err);
  stream.finish();
  c.finish(report);
  return readable;
}

int run_stats(const StatsOptions& opts, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  StatsReport report;
  const bool readable = collect_stats(opts, report, diag, errf);
  report.summary.errors = diag.errors();
  report.summary.warnings = diag.warnings();
  std::string text;
  // No input could be opened: nothing on stdout (the reasons are on stderr, exit 2).
  if (!readable && report.summary.files == 0) return 2;
  if (readable) warn_unmatched_filter_rules(opts.filter, errf);
  if (opts.format == OutputFormat::json)
    append_stats_json(report, text);
  else
    append_stats_text(report, text, TimeZone(opts.timezone));
  // The text report's times carry no zone each: say once which it is when it is not UTC.
  if (opts.format != OutputFormat::json && opts.timezone != "UTC")
    text.insert(0, "Times in " + opts.timezone + " (--timezone)\n\n");
  LineOutput out(outf);  // line by line, so that a terminal or a pipe gets whole lines
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    out.buf().append(line);
    out.end_line();
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  out.flush();
  if (!readable) return 2;
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
