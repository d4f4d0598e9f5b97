// Replay inputs: in-memory and synthetic sources, the compact ReplayInput loader, and the parsers
// for the option values (durations, sizes, rates, sink specs).
#include <binlogctl/replay.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "base/hash.h"
#include "base/std_regex.h"

namespace binlogctl {

namespace {

std::uint32_t below(std::uint64_t& s, std::uint32_t n) noexcept {
  return n == 0 ? 0 : static_cast<std::uint32_t>(splitmix64(s) % n);
}

double uniform01(std::uint64_t& s) noexcept {
  return static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-53;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Leading decimal number (digits, optional fraction); the rest goes to `unit`.
std::optional<double> leading_number(std::string_view s, std::string_view& unit) noexcept {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double v = 0;
  const std::string num(s.substr(0, i));
  char* end = nullptr;
  v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  unit = trim(s.substr(i));
  return v;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (std::tolower(x) != std::tolower(y)) return false;
  }
  return true;
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return static_cast<std::size_t>(fnv1a(s));
  }
};

}  // namespace

// ---- sources ----

void VectorEventSource::add(std::string_view path_key, std::uint32_t size, bool txn_end,
                            std::uint64_t source_ts_us, std::uint32_t file_index, std::uint64_t pos,
                            std::uint32_t inner_index) {
  if (keys_.empty() || keys_.back() != path_key) keys_.emplace_back(path_key);
  ReplayEvent ev;
  ev.file_index = file_index;
  ev.pos = pos;
  ev.inner_index = inner_index;
  ev.path_key = keys_.back();
  ev.size = size;
  ev.txn_end = txn_end;
  ev.source_ts_us = source_ts_us;
  events_.push_back(ev);
}

void VectorEventSource::add_rows(std::string_view path_key, std::vector<ReplayRow> rows,
                                 bool txn_end, std::uint64_t source_ts_us,
                                 std::uint32_t file_index, std::uint64_t pos,
                                 std::uint32_t inner_index) {
  std::uint64_t size = 0;
  for (const ReplayRow& r : rows) size += r.size;
  add(path_key, static_cast<std::uint32_t>(std::min<std::uint64_t>(size, UINT32_MAX)), txn_end,
      source_ts_us, file_index, pos, inner_index);
  rows_.push_back(std::move(rows));
  events_.back().rows = rows_.back();
}

bool VectorEventSource::next(ReplayEvent& ev) {
  if (next_ >= events_.size()) return false;
  ev = events_[next_++];
  return true;
}

SyntheticEventSource::SyntheticEventSource(SyntheticSourceOptions o)
    : o_(std::move(o)), rng_(o_.seed ^ 0x5eed5eed5eedull) {
  if (o_.tables == 0) o_.tables = 1;
  static constexpr const char* kNames[] = {"orders",   "order_items", "customers", "payments",
                                           "products", "inventory",   "shipments", "carts",
                                           "reviews",  "coupons",     "addresses", "sessions"};
  for (std::uint32_t t = 0; t < o_.tables; ++t) {
    std::string n = o_.schema + ".";
    if (t < 12) {
      n += kNames[t];
    } else {
      n += "t" + std::to_string(t);
    }
    names_.push_back(std::move(n));
  }
  double sum = 0;
  for (std::uint32_t t = 0; t < o_.tables; ++t) {
    sum += t < o_.table_weights.size() ? o_.table_weights[t] : 1.0;
    cumulative_.push_back(sum);
  }
  for (auto& c : cumulative_) c /= sum;
  if (o_.max_rows < o_.min_rows) o_.max_rows = o_.min_rows;
  if (o_.max_row_bytes < o_.min_row_bytes) o_.max_row_bytes = o_.min_row_bytes;
}

void SyntheticEventSource::start_txn() {
  const bool large = o_.large_txn_every != 0 && txn_ % o_.large_txn_every == o_.large_txn_every - 1;
  rows_left_ = large ? o_.large_txn_rows : o_.min_rows + below(rng_, o_.max_rows - o_.min_rows + 1);
  if (rows_left_ == 0) rows_left_ = 1;
  txn_tables_.clear();
  const std::uint32_t want = large ? 1 : std::max<std::uint32_t>(1, o_.tables_per_txn);
  for (std::uint32_t k = 0; k < want * 4 && txn_tables_.size() < want; ++k) {
    const double u = uniform01(rng_);
    auto t = static_cast<std::uint32_t>(
        std::lower_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
    t = std::min(t, o_.tables - 1);
    if (std::find(txn_tables_.begin(), txn_tables_.end(), t) == txn_tables_.end()) {
      txn_tables_.push_back(t);
    }
  }
  ts_ += o_.txn_interval_us;
  inner_ = 0;
  pos_ += 77;  // GTID + BEGIN + TABLE_MAP, roughly
}

bool SyntheticEventSource::next(ReplayEvent& ev) {
  if (rows_left_ == 0) {
    if (txn_ >= o_.transactions) return false;
    start_txn();
  }
  const std::uint32_t t = txn_tables_[below(rng_, static_cast<std::uint32_t>(txn_tables_.size()))];
  const std::uint32_t size =
      o_.min_row_bytes + below(rng_, o_.max_row_bytes - o_.min_row_bytes + 1);
  pos_ += size / 2 + 19;  // encoded row image is smaller than the decoded one
  if (pos_ > o_.file_size) {
    ++file_index_;
    pos_ = 4 + 120;
  }
  --rows_left_;
  ev.file_index = file_index_;
  ev.pos = pos_;
  ev.inner_index = inner_++;
  ev.path_key = names_[t];
  ev.size = size;
  ev.txn_end = rows_left_ == 0;
  ev.source_ts_us = ts_;
  ev.txn_id = txn_ + 1;
  if (ev.txn_end) {
    ++txn_;
    pos_ += 31;  // XID
  }
  return true;
}

// ---- loading ----

namespace {

// Rows grouped by the bucket of their key: one group per bucket, in the order of the group's
// first row. The buffers are kept from one event to the next (no allocation once warm).
struct RowSplitter {
  struct Group {
    std::uint32_t bucket = 0, first_row = 0;
    std::uint64_t size = 0;
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;  // (bucket, row)
  std::vector<Group> groups;

  void split(std::span<const ReplayRow> rows, std::uint32_t buckets) {
    keyed.clear();
    groups.clear();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      keyed.emplace_back(static_cast<std::uint32_t>(rows[i].key_hash % buckets),
                         static_cast<std::uint32_t>(i));
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < keyed.size(); ++i) {
      if (i == 0 || keyed[i].first != keyed[i - 1].first) {
        groups.push_back(Group{keyed[i].first, keyed[i].second, 0});
      }
      groups.back().size += rows[keyed[i].second].size;
    }
    std::sort(groups.begin(), groups.end(),
              [](const Group& a, const Group& b) { return a.first_row < b.first_row; });
  }
};

}  // namespace

ReplayInput load_replay_input(std::span<EventSource* const> sources, PathBy by,
                              std::uint32_t hash_buckets) {
  ReplayInput in;
  if (by == PathBy::hash && hash_buckets == 0) hash_buckets = 16;
  std::vector<std::uint32_t> txn_last;  // per path: last event index in the open transaction
  std::vector<std::uint32_t> touched;
  RowSplitter splitter;
  for (std::uint32_t a = 0; a < sources.size(); ++a) {
    ReplayInput::Area area;
    area.first_event = static_cast<std::uint32_t>(in.events.size());
    std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> ids;
    std::unordered_map<std::uint32_t, std::uint32_t> bucket_ids;  // hash: bucket -> path
    std::string last_key = "\x01";
    std::uint32_t last_id = 0;
    std::uint32_t txn = 0;
    auto close_txn = [&] {
      for (std::uint32_t p : touched) in.events[txn_last[p]].flags |= kPathTxnEnd;
      touched.clear();
    };
    auto new_path = [&](std::string_view name) {
      const auto id = static_cast<std::uint32_t>(in.path_names.size());
      in.path_names.emplace_back(name);
      in.path_area.push_back(a);
      in.path_events.emplace_back();
      txn_last.push_back(0);
      area.paths.push_back(id);
      return id;
    };
    std::string name_buf;
    auto bucket_path = [&](std::uint32_t bucket) {
      auto it = bucket_ids.find(bucket);
      if (it != bucket_ids.end()) return it->second;
      name_buf = "#" + std::to_string(bucket);
      const std::uint32_t id = new_path(name_buf);
      bucket_ids.emplace(bucket, id);
      return id;
    };
    std::uint64_t last_rdp = 0;
    std::uint32_t named_file = UINT32_MAX;  // file_names[named_file] is set: no look per event
    auto push = [&](const ReplayEvent& ev, std::uint32_t id, std::uint32_t size, bool txn_end,
                    std::uint32_t row) {
      const auto g = static_cast<std::uint32_t>(in.events.size());
      if (area.txns.size() <= txn) {  // the transaction's first event: its identity
        ReplayTxn t;
        t.rdp_id = ev.txn_id != 0 ? ev.txn_id : last_rdp + 1;
        last_rdp = t.rdp_id;
        t.gtid_begin = static_cast<std::uint32_t>(in.gtid_text.size());
        t.gtid_len = static_cast<std::uint32_t>(ev.gtid.size());
        in.gtid_text.append(ev.gtid);
        area.txns.push_back(t);
      }
      if (ev.file_index != named_file && !ev.log_name.empty()) {  // a file's first name wins
        if (area.file_names.size() <= ev.file_index) area.file_names.resize(ev.file_index + 1);
        if (area.file_names[ev.file_index].empty()) area.file_names[ev.file_index] = ev.log_name;
        named_file = ev.file_index;
      }
      auto& list = in.path_events[id];
      ReplayInputEvent e;
      e.path = id;
      e.path_seq = static_cast<std::uint32_t>(list.size());
      e.size = size;
      e.txn = txn;
      e.flags = txn_end ? kTxnEnd : 0;
      in.events.push_back(e);
      list.push_back(g);
      in.source_ts_us.push_back(ev.source_ts_us);
      in.positions.push_back(ReplayPosition{ev.file_index, ev.inner_index, ev.pos, row});
      in.max_event_size = std::max(in.max_event_size, size);
      in.total_bytes += size;
      if (std::find(touched.begin(), touched.end(), id) == touched.end()) touched.push_back(id);
      txn_last[id] = g;
    };
    // Breaks of the source's context found while reading an event come before it.
    // (One size compare per event: the copy is made out of the loop's way, when breaks came.)
    std::size_t breaks_seen = 0;
    auto take_breaks = [&](std::span<const SourceBreak> br) {
      for (; breaks_seen < br.size(); ++breaks_seen) {
        SourceBreak b = br[breaks_seen];
        b.area = a;
        b.event = static_cast<std::uint32_t>(in.events.size());
        in.source_breaks.push_back(std::move(b));
      }
    };
    ReplayEvent ev;
    while (sources[a]->next(ev)) {
      if (const auto br = sources[a]->source_breaks(); br.size() != breaks_seen) [[unlikely]] {
        take_breaks(br);
      }
      if (by == PathBy::hash && !ev.path_key.empty() && !ev.rows.empty()) {
        // A dispatcher per key: each row goes to the bucket of its key.
        splitter.split(ev.rows, hash_buckets);
        for (std::size_t k = 0; k < splitter.groups.size(); ++k) {
          const RowSplitter::Group& gr = splitter.groups[k];
          const bool last = k + 1 == splitter.groups.size();
          push(ev, bucket_path(gr.bucket),
               static_cast<std::uint32_t>(std::min<std::uint64_t>(gr.size, UINT32_MAX)),
               ev.txn_end && last, gr.first_row);
        }
      } else {
        std::uint32_t id;
        if (ev.path_key == last_key) {
          id = last_id;
        } else {
          last_key.assign(ev.path_key);
          std::string_view name = ev.path_key;
          if (name.empty()) {
            name = "(control)";
          } else if (by == PathBy::schema) {
            name = name.substr(0, name.find('.'));
          }
          if (by == PathBy::hash && !ev.path_key.empty()) {
            id = bucket_path(static_cast<std::uint32_t>(fnv1a(name) % hash_buckets));
          } else if (auto it = ids.find(name); it == ids.end()) {
            id = new_path(name);
            ids.emplace(std::string(name), id);
          } else {
            id = it->second;
          }
          last_id = id;
        }
        push(ev, id, ev.size, ev.txn_end, 0);
      }
      if (ev.txn_end) {
        close_txn();
        ++txn;
      }
    }
    take_breaks(sources[a]->source_breaks());
    if (!touched.empty()) {
      close_txn();
      ++txn;
    }
    area.end_event = static_cast<std::uint32_t>(in.events.size());
    area.transactions = txn;
    in.areas.push_back(std::move(area));
  }
  return in;
}

ReplayInput load_replay_input(EventSource& source, PathBy by, std::uint32_t hash_buckets) {
  EventSource* one[] = {&source};
  return load_replay_input(std::span<EventSource* const>(one), by, hash_buckets);
}

EventIdentity identity_of(const ReplayInput& in, std::uint32_t g) {
  EventIdentity id;
  if (g >= in.events.size()) return id;
  const ReplayInput::Area& area = in.areas[in.path_area[in.events[g].path]];
  const std::uint32_t t = in.events[g].txn;
  if (t < area.txns.size()) {
    id.rdp_id = area.txns[t].rdp_id;
    id.gtid = in.gtid_text.substr(area.txns[t].gtid_begin, area.txns[t].gtid_len);
  }
  const ReplayPosition& pos = in.positions[g];
  if (pos.file_index < area.file_names.size()) id.log_name = area.file_names[pos.file_index];
  if (id.log_name.empty()) id.log_name = fmt::format("file {}", pos.file_index);
  id.pos = pos.pos;
  id.inner_index = pos.inner_index;
  id.row = pos.row;
  return id;
}

std::string describe(const EventIdentity& id) {
  std::string s = fmt::format("RDP id {}", id.rdp_id);
  if (!id.gtid.empty()) s += fmt::format(", GTID {}", id.gtid);
  s += fmt::format(", {} pos {}", id.log_name, id.pos);
  if (id.inner_index != 0) s += fmt::format(" inner {}", id.inner_index);
  if (id.row != 0) s += fmt::format(" row {}", id.row);
  return s;
}

// ---- parsers ----

std::optional<std::uint64_t> parse_duration_us(std::string_view text) {
  std::string_view unit;
  const auto v = leading_number(text, unit);
  if (!v) return std::nullopt;
  double mul;
  if (unit.empty() || unit == "ms") {
    mul = 1e3;
  } else if (unit == "us" || unit == "µs") {
    mul = 1;
  } else if (unit == "s") {
    mul = 1e6;
  } else if (unit == "m" || unit == "min") {
    mul = 60e6;
  } else if (unit == "h") {
    mul = 3600e6;
  } else {
    return std::nullopt;
  }
  const double us = *v * mul;
  if (!(us <= static_cast<double>(kMaxDurationUs))) return std::nullopt;  // never wrapped
  return static_cast<std::uint64_t>(std::llround(us));
}

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  std::string_view unit;
  const auto v = leading_number(text, unit);
  if (!v) return std::nullopt;
  double mul = 1;
  if (unit.empty() || iequals(unit, "B")) {
    mul = 1;
  } else if (iequals(unit, "K") || iequals(unit, "KB") || iequals(unit, "KiB")) {
    mul = 1024.0;
  } else if (iequals(unit, "M") || iequals(unit, "MB") || iequals(unit, "MiB")) {
    mul = 1024.0 * 1024;
  } else if (iequals(unit, "G") || iequals(unit, "GB") || iequals(unit, "GiB")) {
    mul = 1024.0 * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  const double bytes = *v * mul;
  if (!(bytes <= static_cast<double>(kMaxBytes))) return std::nullopt;  // never wrapped
  return static_cast<std::uint64_t>(std::llround(bytes));
}

bool parse_path_by(std::string_view text, PathBy& by, std::uint32_t& buckets) {
  if (text == "table") {
    by = PathBy::table;
    buckets = 0;
    return true;
  }
  if (text == "schema") {
    by = PathBy::schema;
    buckets = 0;
    return true;
  }
  if (text.substr(0, 5) == "hash:") {
    std::uint32_t n = 0;
    const auto num = text.substr(5);
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
    if (ec != std::errc() || p != num.data() + num.size() || n == 0) return false;
    by = PathBy::hash;
    buckets = n;
    return true;
  }
  return false;
}

std::optional<SourceRate> parse_source_rate(std::string_view text) {
  text = trim(text);
  SourceRate r;
  if (text == "max") return r;
  if (text == "ts") {
    r.kind = SourceRate::Kind::timestamps;
    r.per_second = 1;
    return r;
  }
  if (text.size() < 3 || text.substr(text.size() - 2) != "/s") return std::nullopt;
  std::string_view amount = trim(text.substr(0, text.size() - 2));
  if (amount.size() > 2 && amount.substr(amount.size() - 2) == "ev") {
    amount = trim(amount.substr(0, amount.size() - 2));
    std::string_view unit;
    const auto v = leading_number(amount, unit);
    if (!v || !unit.empty() || *v <= 0 || *v > kMaxEventRate) return std::nullopt;
    r.kind = SourceRate::Kind::events;
    r.per_second = *v;
    return r;
  }
  std::string_view unit;
  const auto v = leading_number(amount, unit);
  if (!v || *v <= 0) return std::nullopt;
  if (unit.empty()) {
    if (*v > kMaxEventRate) return std::nullopt;
    r.kind = SourceRate::Kind::events;
    r.per_second = *v;
    return r;
  }
  const auto b = parse_bytes(amount);
  if (!b || *b == 0) return std::nullopt;
  r.kind = SourceRate::Kind::bytes;
  r.per_second = static_cast<double>(*b);
  return r;
}

std::optional<SinkSpec> parse_sink_spec(std::string_view text, std::string& error) {
  SinkSpec spec;
  std::string_view body = text;
  const auto eq = text.rfind('=');
  if (eq == std::string_view::npos) {
    spec.pattern = ".*";
  } else {
    spec.pattern = std::string(text.substr(0, eq));
    body = text.substr(eq + 1);
    if (spec.pattern.empty()) spec.pattern = ".*";
  }
  try {
    std::regex re(spec.pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    error = "bad sink pattern '" + spec.pattern + "': " + e.what();
    return std::nullopt;
  }
  auto fail = [&](std::string_view item, std::string_view why) {
    error = "bad sink spec item '" + std::string(item) + "': " + std::string(why);
    return std::nullopt;
  };
  SinkModel& m = spec.model;
  while (!body.empty()) {
    const auto comma = body.find(',');
    const std::string_view item = trim(body.substr(0, comma));
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    if (item.empty()) continue;
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) return fail(item, "expected KEY:VALUE");
    const std::string_view key = item.substr(0, colon), value = trim(item.substr(colon + 1));
    if (key == "latency" || key == "fixed") {
      const auto d = parse_duration_us(value);
      if (!d) return fail(item, "expected a duration like 5ms (at most 720h)");
      m.latency_us = *d;
    } else if (key == "jitter") {
      const auto d = parse_duration_us(value);
      if (!d) return fail(item, "expected a duration like 2ms (at most 720h)");
      m.jitter_us = *d;
    } else if (key == "cap") {
      if (value.size() < 3 || value.substr(value.size() - 2) != "/s") {
        return fail(item, "expected a byte rate like 2MB/s");
      }
      const auto b = parse_bytes(value.substr(0, value.size() - 2));
      if (!b || *b == 0) return fail(item, "expected a byte rate like 2MB/s (at most 1048576G/s)");
      m.cap_bytes_per_s = *b;
    } else if (key == "stall") {
      const auto slash = value.find('/');
      if (slash == std::string_view::npos)
        return fail(item, "expected PERIOD/DURATION like 30s/5s");
      const auto p = parse_duration_us(value.substr(0, slash));
      const auto d = parse_duration_us(value.substr(slash + 1));
      // D = P would stall for ever (every completion lands on the next period's start: no
      // stall at all in effect), D = 0 never: both refused.
      if (!p || !d || *p == 0 || *d == 0 || *d >= *p) {
        return fail(item, "expected PERIOD/DURATION with 0 < DURATION < PERIOD, each at most 720h");
      }
      m.stall_period_us = *p;
      m.stall_us = *d;
    } else if (key == "hang") {
      const auto dash = value.find('-');
      if (dash == std::string_view::npos) return fail(item, "expected FROM-TO like 10s-70s");
      const auto f = parse_duration_us(value.substr(0, dash));
      const auto t = parse_duration_us(value.substr(dash + 1));
      if (!f || !t || *t < *f) return fail(item, "expected FROM-TO with FROM <= TO, each at most 720h");
      m.hang_from_us = *f;
      m.hang_to_us = *t;
    } else if (key == "barrier") {
      std::uint32_t k = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), k);
      if (ec != std::errc() || p != value.data() + value.size() || k == 0) {
        return fail(item, "expected a transaction count K > 0");
      }
      m.barrier_every_txns = k;
    } else {
      return fail(item, "unknown key (latency, cap, stall, jitter, hang, barrier)");
    }
  }
  return spec;
}

}  // namespace binlogctl

namespace binlogctl {

std::string validate_replay_options(const ReplayOptions& o) {
  const FlowThresholds& t = o.thresholds;
  auto bad_fraction = [](double v) { return !std::isfinite(v) || v <= 0; };
  if (t.quota == 0) return "--quota 0: the quota must be at least one byte";
  if (t.quota > kMaxBytes) {
    return fmt::format("--quota {}: must be at most {} bytes (1048576G)", t.quota, kMaxBytes);
  }
  if (!std::isfinite(t.hard_limit_ratio) || t.hard_limit_ratio <= 0) {
    return fmt::format(
        "--hard-limit-ratio {}: must be > 0 (the hard limit is this times the "
        "quota; at 0 or below every append passes it and the breaker never stops)",
        t.hard_limit_ratio);
  }
  if (t.hard_limit_ratio > 1000) {
    return fmt::format("--hard-limit-ratio {}: must be at most 1000 (the hard limit is this times the quota)",
                       t.hard_limit_ratio);
  }
  if (t.hard_limit() == 0) {
    return fmt::format("--hard-limit-ratio {}: gives a hard limit of 0 bytes with --quota {}; it must be at "
                       "least one byte",
                       t.hard_limit_ratio, t.quota);
  }
  // Fractions of the quota: a pause above the whole quota is a pause that the area's own
  // pause (and the breaker) would always beat.
  for (const auto& [name, v] : {std::pair<const char*, double>{"--path-pause", t.path_pause},
                                {"--path-resume", t.path_resume},
                                {"--area-pause", t.area_pause},
                                {"--area-resume", t.area_resume}}) {
    if (std::isfinite(v) && v > 1) {
      return fmt::format("{} {}: must be at most 1 (a fraction of the quota)", name, v);
    }
  }
  // A pause/resume pair of fractions of the quota (--path-*, --area-*), for `who`.
  auto pause_pair = [&](std::string_view level, std::string_view who, double pause, double resume) -> std::string {
    if (bad_fraction(pause))
      return fmt::format("--{}-pause {}: must be > 0 ({} would pause with nothing pending and never resume)", level,
                         pause, who);
    if (bad_fraction(resume))
      return fmt::format(
          "--{}-resume {}: must be > 0 ({} resumes when its pending bytes fall below this fraction of the quota, "
          "and they never fall below 0)",
          level, resume, who);
    if (resume > pause)
      return fmt::format("--{}-resume {} is above --{}-pause {}: {} must resume below the level at which it pauses",
                         level, resume, level, pause, who);
    return {};
  };
  if (std::string e = pause_pair("path", "a path", t.path_pause, t.path_resume); !e.empty()) return e;
  if (std::string e = pause_pair("area", "the area", t.area_pause, t.area_resume); !e.empty()) return e;
  if (!std::isfinite(o.drop_rate) || o.drop_rate < 0 || o.drop_rate >= 1) {
    return fmt::format(
        "--drop-rate {}: must be in [0, 1) (a fraction of the arriving events; at "
        "1 every event, re-reads included, becomes a drop marker and nothing is "
        "ever delivered)",
        o.drop_rate);
  }
  if (o.watchdog_us == 0) {
    return "--watchdog 0: must be a positive duration (with 0 every instant without a delivery "
           "would be reported as a deadlock)";
  }
  if (o.drain_timeout_us == 0) {
    return "--drain-timeout 0: must be a positive duration (with 0 any event still in flight when "
           "the source ends would be reported)";
  }
  for (const auto& [name, v] :
       {std::pair<const char*, std::uint64_t>{"--watchdog", o.watchdog_us},
        {"--drain-timeout", o.drain_timeout_us},
        {"--data-delay", o.data_delay_us},
        {"--control-delay", o.control_delay_us}}) {
    if (v > kMaxDurationUs) {
      return fmt::format("{} {} us: must be at most 720h", name, v);
    }
  }
  return {};
}

}  // namespace binlogctl
