// Replay output: summary (text, JSON), timeline (JSON Lines), SVG plot.
#include <binlogctl/replay.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

namespace binlogctl {

namespace {

using Json = nlohmann::ordered_json;

double ms(std::uint64_t us) noexcept { return static_cast<double>(us) / 1000.0; }

// Milliseconds rounded to the microsecond, so JSON stays short and stable.
double ms3(std::uint64_t us) noexcept { return std::round(static_cast<double>(us)) / 1000.0; }

// The event's identity as keys of a record (nothing when there is none).
void identity_keys(Json& j, const EventIdentity& id) {
  if (id.rdp_id == 0) return;
  j["rdp_id"] = id.rdp_id;
  if (id.gtid.empty()) {
    j["gtid"] = nullptr;
  } else {
    j["gtid"] = id.gtid;
  }
  j["log_name"] = id.log_name;
  j["pos"] = id.pos;
  if (id.inner_index != 0) j["inner_index"] = id.inner_index;
  if (id.row != 0) j["row"] = id.row;
}

// The pauses of an area or a path (AreaCounters, PathCounters), in the summary's key order.
template <class Counters>
void pause_keys(Json& j, const Counters& c) {
  j["pauses"] = c.pauses;
  j["resumes"] = c.resumes;
  j["flaps"] = c.flaps;
  j["paused_ms"] = ms3(c.paused_us);
}

// What the engine did to an area or a path to free memory (release rounds: areas only).
template <class Counters>
void release_keys(Json& j, const Counters& c) {
  j["circuit_breaks"] = c.circuit_breaks;
  j["releases"] = c.releases;
  if constexpr (requires { c.release_rounds; }) j["release_rounds"] = c.release_rounds;
  j["drop_markers"] = c.drop_markers;
  j["resets"] = c.resets;
}

Json latency_json(const LatencySummary& l) {
  Json j;
  j["p50"] = l.p50;
  j["p95"] = l.p95;
  j["p99"] = l.p99;
  j["max"] = l.max;
  return j;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", b);
  return fmt::format("{:.{}f} {}", b, b < 10 ? 2 : (b < 100 ? 1 : 0), units[u]);
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

// ---- summary ----

Json summary_json(const ReplayResult& r) {
  Json s;
  s["policy"] = std::string(to_string(r.policy));
  s["seed"] = r.seed;
  s["source_events"] = r.source_events;
  s["source_bytes"] = r.source_bytes;
  s["delivered"] = r.delivered;
  s["redelivered"] = r.redelivered;
  s["pauses"] = r.pauses;
  s["resumes"] = r.resumes;
  s["flaps"] = r.flaps;
  s["circuit_breaks"] = r.circuit_breaks;
  s["releases"] = r.releases;
  s["drop_markers"] = r.drop_markers;
  s["resets"] = r.resets;
  s["discarded"] = r.discarded;
  s["stale_discarded"] = r.stale_discarded;
  s["peak_memory"] = r.peak_memory;
  s["peak_resident"] = r.peak_resident;
  s["quota"] = r.quota;
  s["hard_limit"] = r.hard_limit;
  s["latency_ms"] = latency_json(r.latency_ms);
  s["source_end_ms"] = ms3(r.source_end_us);
  s["drain_ms"] = ms3(r.drain_us);
  s["end_ms"] = ms3(r.end_time_us);
  s["trace_hash"] = fmt::format("{:016x}", r.trace_hash);
  Json inv;
  inv["ok"] = r.ok;
  Json vs = Json::array();
  for (const auto& v : r.violations) {
    Json jv;
    jv["check"] = v.check;
    jv["time_ms"] = ms3(v.time_us);
    jv["message"] = v.message;
    if (!v.path.empty()) jv["path"] = v.path;
    if (!v.log_name.empty()) {
      jv["log_name"] = v.log_name;
      jv["pos"] = v.pos;
    }
    if (v.at.rdp_id != 0) {  // the event concerned
      Json at = Json::object();
      identity_keys(at, v.at);
      jv["event"] = std::move(at);
    }
    jv["trace"] = v.trace;
    vs.push_back(std::move(jv));
  }
  inv["violations"] = std::move(vs);
  s["invariants"] = std::move(inv);
  Json areas = Json::array();
  for (std::size_t a = 0; a < r.areas.size(); ++a) {
    const AreaStats& x = r.areas[a];
    Json j;
    j["area"] = a;
    j["source_events"] = x.source_events;
    j["delivered"] = x.delivered;
    j["peak_memory"] = x.peak_memory;
    j["peak_ms"] = ms3(x.peak_time_us);
    j["over_quota"] = x.over_quota;
    j["over_hard_limit"] = x.over_hard_limit;
    j["peak_cause"] = x.peak_cause;
    if (x.peak_transaction.rdp_id != 0) {  // whose bytes the peak above H was
      Json t = Json::object();
      identity_keys(t, x.peak_transaction);
      t["bytes"] = x.peak_transaction_bytes;
      j["peak_transaction"] = std::move(t);
    }
    j["oversized_admissions"] = x.counters.oversized_admissions;
    // (only when it happened: the summaries of the runs where it does not stay as they were)
    if (x.counters.retry_admissions != 0) j["retry_admissions"] = x.counters.retry_admissions;
    j["peak_resident"] = x.peak_resident;
    pause_keys(j, x.counters);
    j["time_above_pause_ms"] = ms3(x.time_above_pause_us);
    j["reader_blocked_ms"] = ms3(x.reader_blocked_us);
    release_keys(j, x.counters);
    areas.push_back(std::move(j));
  }
  s["areas"] = std::move(areas);
  Json open = Json::array();
  for (const auto& op : r.open_pauses) {
    Json j;
    j["area"] = op.area;
    if (!op.path.empty()) j["path"] = op.path;
    j["last_feedback_ms"] = ms3(op.last_feedback_us);
    j["pending"] = op.pending;
    j["resume_due_ms"] = ms3(op.resume_due_us);
    j["violation"] = op.violation;
    j["why"] = op.why;
    open.push_back(std::move(j));
  }
  s["open_pauses"] = std::move(open);
  Json paths = Json::array();
  for (const auto& p : r.paths) {
    Json j;
    j["path"] = p.name;
    j["area"] = p.area;
    j["source_events"] = p.source_events;
    j["delivered"] = p.delivered;
    j["redelivered"] = p.redelivered;
    j["bytes"] = p.bytes;
    j["peak_memory"] = p.counters.peak_pending;
    pause_keys(j, p.counters);
    release_keys(j, p.counters);
    j["latency_ms"] = latency_json(p.latency_ms);
    paths.push_back(std::move(j));
  }
  s["paths"] = std::move(paths);
  return s;
}

void write_summary_json(std::ostream& out, const ReplayResult& r) {
  Json j;
  j["summary"] = summary_json(r);
  out << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

void write_summary_text(std::ostream& out, const ReplayResult& r) {
  auto line = [&](std::string_view k, const std::string& v) {
    out << fmt::format("{:<16}{}\n", k, v);
  };
  line("policy", fmt::format("{} (seed {})", to_string(r.policy), r.seed));
  line("events", fmt::format("{} source, {} delivered, {} redelivered after a discard",
                             r.source_events, r.delivered, r.redelivered));
  const double q = static_cast<double>(std::max<std::uint64_t>(r.quota, 1));
  line("memory", fmt::format("peak {} ({:.0f}% of quota {}, hard limit {}), resident peak {}",
                             human_bytes(static_cast<double>(r.peak_memory)),
                             100.0 * static_cast<double>(r.peak_memory) / q,
                             human_bytes(static_cast<double>(r.quota)),
                             human_bytes(static_cast<double>(r.hard_limit)),
                             human_bytes(static_cast<double>(r.peak_resident))));
  for (std::size_t a = 0; a < r.areas.size(); ++a) {
    const AreaStats& x = r.areas[a];
    if (x.over_quota == 0 && x.over_hard_limit == 0) continue;
    line(r.areas.size() == 1 ? "overshoot" : fmt::format("overshoot {}", a),
         fmt::format("peak at {:.3f} s: {} above the quota{}; cause: {}{}{}{}",
                     ms(x.peak_time_us) / 1000, human_bytes(static_cast<double>(x.over_quota)),
                     x.over_hard_limit != 0
                         ? fmt::format(", {} above the hard limit",
                                       human_bytes(static_cast<double>(x.over_hard_limit)))
                         : std::string(),
                     x.peak_cause.empty() ? "-" : x.peak_cause,
                     x.peak_transaction.rdp_id != 0
                         ? fmt::format(" ({} of the peak's bytes are the transaction's let through: {})",
                                       human_bytes(static_cast<double>(x.peak_transaction_bytes)),
                                       describe(x.peak_transaction))
                         : std::string(),
                     x.counters.oversized_admissions != 0
                         ? fmt::format(" ({} transactions larger than the hard limit let through "
                                       "alone)",
                                       x.counters.oversized_admissions)
                         : std::string(),
                     x.counters.retry_admissions != 0
                         ? fmt::format(" ({} re-reads discarded twice from the same event let "
                                       "through alone)",
                                       x.counters.retry_admissions)
                         : std::string()));
  }
  line("flow control", fmt::format("{} pauses, {} resumes, {} flaps, {} circuit breaks, "
                                   "{} releases, {} drop markers, {} resets",
                                   r.pauses, r.resumes, r.flaps, r.circuit_breaks, r.releases,
                                   r.drop_markers, r.resets));
  line("discards", fmt::format("{} events discarded, {} stale-epoch", r.discarded, r.stale_discarded));
  line("latency",
       fmt::format("p50 {:.3f} ms, p95 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms", r.latency_ms.p50,
                   r.latency_ms.p95, r.latency_ms.p99, r.latency_ms.max));
  line("time",
       fmt::format("source ended at {:.3f} s, drained {:.3f} s later, run ended at {:.3f} s",
                   ms(r.source_end_us) / 1000, ms(r.drain_us) / 1000, ms(r.end_time_us) / 1000));
  line("trace hash", fmt::format("{:016x}", r.trace_hash));
  for (std::size_t a = 0; a < r.areas.size(); ++a) {
    const AreaStats& x = r.areas[a];
    line(fmt::format("area {}", a),
         fmt::format("peak {}, {} pauses / {} resumes, paused {:.1f} s, above pause {:.1f} s, "
                     "reader blocked {:.1f} s",
                     human_bytes(static_cast<double>(x.peak_memory)), x.counters.pauses,
                     x.counters.resumes, ms(x.counters.paused_us) / 1000,
                     ms(x.time_above_pause_us) / 1000, ms(x.reader_blocked_us) / 1000));
  }
  out << fmt::format("{:<24}{:>9}{:>11}{:>7}{:>7}{:>9}{:>7}{:>7}{:>11}{:>11}\n", "path", "events",
                     "peak", "pause", "flaps", "paused_s", "disc", "resets", "p99_ms", "max_ms");
  std::vector<const PathStats*> order;
  for (const auto& p : r.paths) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const PathStats* x, const PathStats* y) {
    return x->counters.peak_pending > y->counters.peak_pending;
  });
  const std::size_t shown = std::min<std::size_t>(order.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) {
    const PathStats& p = *order[i];
    out << fmt::format("{:<24}{:>9}{:>11}{:>7}{:>7}{:>9.1f}{:>7}{:>7}{:>11.3f}{:>11.3f}\n",
                       p.name.size() > 23 ? p.name.substr(0, 22) + "~" : p.name, p.delivered,
                       human_bytes(static_cast<double>(p.counters.peak_pending)), p.counters.pauses,
                       p.counters.flaps, ms(p.counters.paused_us) / 1000,
                       p.counters.circuit_breaks + p.counters.releases + p.counters.drop_markers,
                       p.counters.resets, p.latency_ms.p99, p.latency_ms.max);
  }
  if (order.size() > shown) out << fmt::format("({} more paths)\n", order.size() - shown);
  for (const auto& op : r.open_pauses) {
    line(
        "still paused",
        fmt::format("{}: {}", op.path.empty() ? fmt::format("area {}", op.area) : op.path, op.why));
  }
  if (r.ok) {
    out << "invariants      ok\n";
  } else {
    for (const auto& v : r.violations) {
      out << fmt::format("VIOLATION       {} at {:.3f} ms: {}\n", v.check, ms(v.time_us),
                         v.message);
      for (const auto& t : v.trace) out << "  " << t << '\n';
    }
  }
}

// ---- timeline ----

void JsonlTimelineWriter::action(const TimelineAction& a) {
  Json j;
  j["t_ms"] = ms3(a.time_us);
  j["kind"] = a.kind;
  j["area"] = a.area;
  if (!a.path.empty()) j["path"] = a.path;
  if (a.kind == "reset" || a.kind == "reset_applied") {
    j["epoch"] = a.epoch;
    j["from_seq"] = a.seq;
  } else if (a.count != 0 || a.kind == "release_path" || a.kind == "circuit_break") {
    j["first_seq"] = a.seq;
    j["events"] = a.count;
  }
  if (a.bytes != 0) j["bytes"] = a.bytes;
  if (a.kind == "release_path" || a.kind == "circuit_break") j["pending_before"] = a.pending_before;
  j["area_pending"] = a.area_pending;
  if (a.kind == "reset" && !a.detail.empty()) {
    j["detected"] = a.detail;
  } else if (a.kind == "drop_marker" && !a.detail.empty()) {
    j["cause"] = a.detail;  // injected, hard_limit (ticdc) or circuit_break (doc)
  } else if (!a.detail.empty()) {
    j["detail"] = a.detail;
  }
  identity_keys(j, a.at);
  out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

void JsonlTimelineWriter::sample(const TimelineSample& s) {
  Json j;
  j["t_ms"] = ms3(s.time_us);
  j["kind"] = "sample";
  j["area"] = s.area;
  j["pending"] = s.pending;
  j["resident"] = s.resident;
  j["delivered"] = s.delivered;
  j["area_paused"] = s.paused;
  Json paths = Json::object();
  Json paused = Json::array();
  for (const auto& p : s.paths) {
    if (p.pending != 0) paths[std::string(p.path)] = p.pending;
    if (p.paused) paused.push_back(p.path);
  }
  j["paths"] = std::move(paths);
  if (!paused.empty()) j["paused_paths"] = std::move(paused);
  if (s.reading.rdp_id != 0) {
    Json r = Json::object();
    identity_keys(r, s.reading);
    j["reading"] = std::move(r);
  }
  out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

// ---- plot ----

namespace {

double nice_step(double range, int target) {
  const double raw = range / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-12))));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

// Max-preserving downsample to at most `cap` points.
std::vector<std::pair<double, double>> downsample(const std::vector<std::uint64_t>& t,
                                                  const std::vector<std::uint64_t>& v,
                                                  std::size_t cap) {
  std::vector<std::pair<double, double>> out;
  const std::size_t n = std::min(t.size(), v.size());
  const std::size_t stride =
      std::max<std::size_t>(1, (n + cap - 1) / std::max<std::size_t>(cap, 1));
  for (std::size_t i = 0; i < n; i += stride) {
    std::uint64_t m = 0;
    for (std::size_t k = i; k < std::min(n, i + stride); ++k) m = std::max(m, v[k]);
    out.emplace_back(static_cast<double>(t[i]), static_cast<double>(m));
  }
  return out;
}

}  // namespace

namespace {

// Splits `text` into lines of at most `width` characters at spaces before " --" (an option and
// its value stay together), else at any space.
std::vector<std::string> wrap_title(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string rest = text;
  while (rest.size() > width) {
    std::size_t cut = rest.rfind(" --", width);
    if (cut == std::string::npos || cut == 0) cut = rest.rfind(' ', width);
    if (cut == std::string::npos || cut == 0) break;
    lines.push_back(rest.substr(0, cut));
    rest = rest.substr(cut + 1);
  }
  lines.push_back(rest);
  return lines;
}

// Paused intervals [pause, resume) per path (or the area: kNoPath) from the marks.
std::vector<std::pair<std::uint64_t, std::uint64_t>> paused_intervals(const ReplaySeries& s,
                                                                       std::uint32_t path,
                                                                       std::uint64_t end) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t since = kNone;
  const bool area = path == kNoPath;
  for (const auto& m : s.marks) {
    if (m.path != path) continue;
    const bool pause = m.kind == (area ? ActionKind::pause_area : ActionKind::pause_path);
    const bool resume = m.kind == (area ? ActionKind::resume_area : ActionKind::resume_path);
    if (pause && since == kNone) since = m.time_us;
    if (resume && since != kNone) {
      out.emplace_back(since, m.time_us);
      since = kNone;
    }
  }
  if (since != kNone) out.emplace_back(since, end);
  return out;
}

}  // namespace

void write_plot_svg(std::ostream& out, const ReplayResult& r, const PlotOptions& o) {
  const ReplaySeries& s = r.series;
  const double W = o.width;
  const double x0 = 150, x1 = W - 210;
  // Title: every option that shaped the run, wrapped to the width.
  std::string title =
      o.title.empty()
          ? fmt::format("binlogctl replay: policy {}, quota {}, seed {}", to_string(r.policy),
                        human_bytes(static_cast<double>(r.quota)), r.seed)
          : o.title;
  const auto title_lines = wrap_title(title, static_cast<std::size_t>((W - 20) / 8.4));
  const double title_h = 18.0 * static_cast<double>(title_lines.size());
  const double y0 = 38 + title_h;
  // The paths drawn (the top paths by peak, too small ones skipped).
  const std::size_t top = std::min<std::size_t>(o.top_paths, s.top_paths.size());
  std::vector<std::size_t> draw;
  if (top > 0) {  // skip paths too small to see next to the largest one (as sampled)
    auto sampled = [&](std::size_t i) {
      const auto& v = s.path_pending[i];
      return v.empty() ? std::uint64_t{0} : *std::max_element(v.begin(), v.end());
    };
    std::uint64_t biggest = 0;
    for (std::size_t i = 0; i < top; ++i) biggest = std::max(biggest, sampled(i));
    for (std::size_t i = 0; i < top; ++i) {
      if (sampled(i) > 0 && sampled(i) * 50 >= biggest) draw.push_back(i);
    }
  }
  const bool doc = r.policy == Policy::doc;
  // Strip under the plot: one row per action kind, then (doc) one row per drawn path with its
  // paused intervals.
  const double strip_row = 15;
  const std::size_t kind_rows = 5;
  const std::size_t path_rows = doc ? draw.size() : 0;
  const double strip_h = strip_row * static_cast<double>(kind_rows + path_rows);
  // Legend: items laid out left to right, wrapped at the plot's width.
  struct LegendItem {
    std::string text;
    int icon;  // 0 thick line, 1 thin line, 2 band, 3 envelope, 4 triangle, 5 diamond, 6 text
  };
  std::vector<LegendItem> legend = {{"area pending", 0},
                                    {"top paths by peak", 1},
                                    {"area paused", 2},
                                    {"max per 100 ms", 3},
                                    {"circuit break (pending just before)", 4},
                                    {"release (pending just before)", 7},
                                    {"went above the hard limit with this append", 5},
                                    {"path paused (rows under the axis)", 8},
                                    {"[n] peak of the line labelled [n]", 9}};
  legend.push_back({fmt::format("thick marks: area actions{}", s.truncated ? " (path samples truncated)" : ""), 6});
  std::vector<std::pair<double, double>> legend_at;  // x, row
  {
    double lx = x0, row = 0;
    for (const auto& it : legend) {
      const double w = (it.icon == 6 ? 0 : 30) + 6.3 * static_cast<double>(it.text.size()) + 18;
      if (lx + w > W - 10 && lx > x0) {
        lx = x0;
        row += 1;
      }
      legend_at.emplace_back(lx, row);
      lx += w;
    }
  }
  const double legend_rows = legend_at.empty() ? 0 : legend_at.back().second + 1;
  const double H = std::max<double>(o.height, y0 + 300) + title_h - 18 +
                   strip_row * static_cast<double>(path_rows) + 16 * (legend_rows - 1);
  const double y1 = H - 48 - 16 * (legend_rows - 1) - strip_h - 12;
  const double strip_top = y1 + 34;
  const double tmax = std::max<double>(
      1000.0,
      static_cast<double>(std::max(r.end_time_us, s.time_us.empty() ? 0 : s.time_us.back())));
  double vmax = static_cast<double>(std::max(r.hard_limit, r.quota));
  for (const auto& a : s.area_pending) {
    for (auto v : a) vmax = std::max(vmax, static_cast<double>(v));
  }
  for (const auto& a : s.area_max) {
    for (auto v : a) vmax = std::max(vmax, static_cast<double>(v));
  }
  for (const auto& x : r.areas) vmax = std::max(vmax, static_cast<double>(x.peak_memory));
  vmax *= 1.08;
  if (vmax <= 0) vmax = 1;
  auto X = [&](double t_us) { return x0 + (x1 - x0) * t_us / tmax; };
  auto Y = [&](double v) { return y1 - (y1 - y0) * v / vmax; };
  // Byte unit for the y axis.
  double unit = 1;
  const char* uname = "B";
  if (vmax >= 3.0 * 1024 * 1024 * 1024) {
    unit = 1024.0 * 1024 * 1024, uname = "GiB";
  } else if (vmax >= 3.0 * 1024 * 1024) {
    unit = 1024.0 * 1024, uname = "MiB";
  } else if (vmax >= 3.0 * 1024) {
    unit = 1024.0, uname = "KiB";
  }
  static constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                             "#bcbd22", "#7f7f7f", "#393b79", "#637939"};
  out << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      W, H);
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (std::size_t i = 0; i < title_lines.size(); ++i) {
    out << fmt::format(
        "<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        10, 20 + 18 * i, xml_escape(title_lines[i]));
  }
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" fill=\"#444\">pending memory over time: {} events, {} delivered "
      "({} redelivered), {} pauses, {} circuit breaks, {} releases, {} resets, seed {}{}</text>\n",
      x0, y0 - 19, r.source_events, r.delivered, r.redelivered, r.pauses, r.circuit_breaks,
      r.releases, r.resets, r.seed,
      r.ok ? "" : ", INVARIANT VIOLATED: " + xml_escape(r.violations.front().check));
  // Area paused intervals as shaded bands.
  for (const auto& [a, b] : paused_intervals(s, kNoPath, static_cast<std::uint64_t>(tmax))) {
    out << fmt::format(
        "<rect class=\"area_paused\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#fde9d0\"/>\n",
        X(static_cast<double>(a)), y0,
        std::max(0.5, X(static_cast<double>(b)) - X(static_cast<double>(a))), y1 - y0);
  }
  // Grid and axes.
  const double xstep = nice_step(tmax / 1e6, 10);
  for (double t = 0; t <= tmax / 1e6 + 1e-9; t += xstep) {
    const double x = X(t * 1e6);
    out << fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", x, y0, y1);
    out << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", x,
                       y1 + 14, t);
  }
  const double ystep = nice_step(vmax / unit, 6);
  for (double v = 0; v <= vmax / unit + 1e-9; v += ystep) {
    const double y = Y(v * unit);
    out << fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n",
                       x0, y, x1, y);
    out << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", x0 - 6,
                       y + 4, v);
  }
  out << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\"/>\n", x0,
                     y0, y1);
  out << fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#000\"/>\n", x0,
                     x1, y1);
  out << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (s)</text>\n",
                     (x0 + x1) / 2, y1 + 28);
  out << fmt::format(
      "<text transform=\"translate(20,{:.1f}) rotate(-90)\" text-anchor=\"middle\">pending "
      "({})</text>\n",
      (y0 + y1) / 2, uname);
  // Every right-margin label (quota, hard limit, thresholds, each line's peak) goes into one
  // stack, so that none overlaps another; a line's peak is tagged on the line (see below).
  struct Label {
    double y, px, py;
    std::string text;
    std::string color;
  };
  std::vector<Label> labels;
  auto hline = [&](std::uint64_t v, const char* color, const char* dash, const char* cls,
                   const std::string& label) {
    if (v == 0) return;
    const double y = Y(static_cast<double>(v));
    out << fmt::format(
        "<line class=\"{}\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-dasharray=\"{}\"/>\n",
        cls, x0, y, x1, y, color, dash);
    labels.push_back(Label{y, -1, y, label, color});
  };
  hline(r.quota, "#555", "6,4", "limit", "quota " + human_bytes(static_cast<double>(r.quota)));
  if (r.hard_limit != r.quota) {
    hline(r.hard_limit, "#c00", "6,4", "limit",
          "hard limit " + human_bytes(static_cast<double>(r.hard_limit)));
  }
  if (doc) {  // the seed's thresholds, as fractions of the quota
    const FlowThresholds& t = r.thresholds;
    auto thr = [&](double ratio, const char* color, const char* what) {
      hline(ratio_bytes(ratio, r.quota), color, "2,3", "threshold",
            fmt::format("{} {:g}% ({})", what, ratio * 100,
                        human_bytes(static_cast<double>(ratio_bytes(ratio, r.quota)))));
    };
    thr(t.area_pause, "#b35900", "area pause");
    thr(t.area_resume, "#2e7d32", "area resume");
    thr(t.path_pause, "#e6850e", "path pause");
    thr(t.path_resume, "#66bb6a", "path resume");
  }
  // The sample (every 100 ms) as the main line, the maximum since the previous sample (the
  // envelope) as a light band under it: the envelope is where a circuit breaker shows, the
  // sample alone usually misses it. The label gives the true peak.
  auto polyline = [&](const std::vector<std::uint64_t>& v, const std::vector<std::uint64_t>* env,
                      const std::string& color, double width, const std::string& label,
                      std::uint64_t true_peak, std::uint64_t peak_time) {
    if (env != nullptr && !env->empty()) {
      const auto pts = downsample(s.time_us, *env, 1500);
      std::string d;
      for (const auto& [t, val] : pts) d += fmt::format("{:.1f},{:.1f} ", X(t), Y(val));
      out << fmt::format(
          "<polyline class=\"envelope\" fill=\"none\" stroke=\"{}\" stroke-opacity=\"0.35\" "
          "stroke-width=\"{}\" stroke-linejoin=\"round\" points=\"{}\"><title>{}: maximum per "
          "interval</title></polyline>\n",
          color, width + 1, d, xml_escape(label));
    }
    const auto pts = downsample(s.time_us, v, 1500);
    if (pts.empty()) return;
    std::string d;
    for (const auto& [t, val] : pts) d += fmt::format("{:.1f},{:.1f} ", X(t), Y(val));
    out << fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\" "
        "points=\"{}\"><title>{}</title></polyline>\n",
        color, width, d, xml_escape(label));
    const std::vector<std::uint64_t>& src = env != nullptr && !env->empty() ? *env : v;
    std::size_t at = 0;
    for (std::size_t i = 0; i < src.size() && i < s.time_us.size(); ++i) {
      if (src[i] > src[at]) at = i;
    }
    double peak = static_cast<double>(src[at]);
    double px = X(static_cast<double>(s.time_us[at]));
    if (true_peak != 0) {
      peak = static_cast<double>(true_peak);
      px = X(static_cast<double>(peak_time));
    }
    labels.push_back(
        Label{Y(peak), px, Y(peak), fmt::format("{} (peak {})", label, human_bytes(peak)), color});
  };
  for (std::size_t k = draw.size(); k-- > 0;) {
    const std::size_t i = draw[k];
    const PathStats& ps = r.paths[s.top_paths[i]];
    polyline(s.path_pending[i], i < s.path_max.size() ? &s.path_max[i] : nullptr, kPalette[k % 12],
             1.3, ps.name, 0, 0);
  }
  for (std::size_t a = 0; a < s.area_pending.size(); ++a) {
    const bool known = a < r.areas.size();
    polyline(s.area_pending[a], a < s.area_max.size() ? &s.area_max[a] : nullptr, "#111", 2.4,
             s.area_pending.size() == 1 ? "area" : fmt::format("area {}", a),
             known ? r.areas[a].peak_memory : 0, known ? r.areas[a].peak_time_us : 0);
  }
  // Each circuit breaker / release where it happened: a triangle at the area's pending bytes
  // just before the discard (at the hard-limit line for a circuit breaker).
  for (const auto& m : s.marks) {
    if (m.kind != ActionKind::circuit_break && m.kind != ActionKind::release_path) continue;
    const double x = X(static_cast<double>(m.time_us));
    const double y = Y(static_cast<double>(m.area_pending));
    out << fmt::format(
        "<path class=\"{}\" d=\"M{:.1f},{:.1f} l-4,-7 h8 z\" fill=\"{}\"><title>{} at {:.3f} s: "
        "{} pending just before</title></path>\n",
        to_string(m.kind), x, y, m.kind == ActionKind::circuit_break ? "#d62728" : "#9467bd",
        to_string(m.kind), static_cast<double>(m.time_us) / 1e6,
        human_bytes(static_cast<double>(m.area_pending)));
  }
  // Each append that took the area above the hard limit: an orange diamond at what it then held.
  for (const auto& ad : s.admissions) {
    const double x = X(static_cast<double>(ad.time_us));
    const double y = Y(static_cast<double>(ad.held));
    out << fmt::format(
        "<path class=\"admission\" d=\"M{:.1f},{:.1f} l4,5 l-4,5 l-4,-5 z\" fill=\"#ff9800\" "
        "stroke=\"#7a4a00\" stroke-width=\"0.6\"><title>above the hard limit at {:.3f} s: {} held "
        "after an append of transaction RDP id {}</title></path>\n",
        x, y - 5, static_cast<double>(ad.time_us) / 1e6, human_bytes(static_cast<double>(ad.held)),
        ad.rdp_id);
  }
  std::sort(labels.begin(), labels.end(), [](const Label& a, const Label& b) { return a.y < b.y; });
  double last = -1e9;
  for (auto& l : labels) {
    l.y = std::max(l.y, last + 13);
    last = l.y;
  }
  if (!labels.empty() && labels.back().y > y1) {  // push the stack back up into the plot
    double shift = labels.back().y - y1;
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
      it->y -= shift;
      auto next = it + 1;
      if (next != labels.rend() && next->y > it->y - 13) {
        shift = next->y - (it->y - 13);
      } else {
        break;
      }
    }
  }
  // A line's peak is a ring on the line tagged [n], its label in the margin starts with [n]:
  // no leader crosses the plot (a leader looked like one more line).
  int tag = 0;
  for (const auto& l : labels) {
    std::string text = l.text;
    if (l.px >= 0) {
      ++tag;
      out << fmt::format(
          "<circle class=\"peak\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"white\" stroke=\"{}\" "
          "stroke-width=\"1.5\"/><text class=\"peak_tag\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" "
          "fill=\"{}\">[{}]</text>\n",
          l.px, l.py, l.color, l.px + 4, std::max(y0 + 8, l.py - 4), l.color, tag);
      text = fmt::format("[{}] {}", tag, text);
    }
    out << fmt::format("<text class=\"label\" x=\"{}\" y=\"{:.1f}\" fill=\"{}\">{}</text>\n",
                       x1 + 6, l.y + 4, l.color, xml_escape(text));
  }
  // Mark strip: one labelled row per kind (the labels are the legend), then per drawn path the
  // intervals it was paused.
  struct Row {
    const char* name;
    const char* color;
  };
  const Row rows[] = {{"pause", "#e6850e"},
                      {"resume", "#2ca02c"},
                      {"release", "#9467bd"},
                      {"drop/break", "#d62728"},
                      {"reset", "#1f77b4"}};
  auto row_of = [](ActionKind k) {
    switch (k) {
      case ActionKind::pause_path:
      case ActionKind::pause_area:
        return 0;
      case ActionKind::resume_path:
      case ActionKind::resume_area:
        return 1;
      case ActionKind::release_path:
        return 2;
      case ActionKind::circuit_break:
      case ActionKind::drop_marker:
      case ActionKind::gap_discard:
        return 3;
      case ActionKind::reset:
        return 4;
    }
    return 4;
  };
  std::size_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto& m : s.marks) ++counts[row_of(m.kind)];
  for (std::size_t i = 0; i < kind_rows; ++i) {
    const double y = strip_top + static_cast<double>(i) * strip_row;
    out << fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{} ({})</text>\n", x0 - 6,
        y + 10, rows[i].color, rows[i].name, counts[i]);
    out << fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#f2f2f2\"/>\n", x0, y + 6,
        x1, y + 6);
  }
  std::size_t drawn = 0;
  for (const auto& m : s.marks) {
    if (drawn++ > 20000) break;
    const int row = row_of(m.kind);
    const double y = strip_top + row * strip_row;
    const double x = X(static_cast<double>(m.time_us));
    const bool area = m.path == kNoPath;
    out << fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"{4}\"/>\n",
        x, y + 1, y + 12, rows[row].color, area ? 2.5 : 1);
  }
  for (std::size_t k = 0; k < path_rows; ++k) {
    const std::size_t i = draw[k];
    const std::uint32_t p = s.top_paths[i];
    const std::string& name = r.paths[p].name;
    const double y = strip_top + static_cast<double>(kind_rows + k) * strip_row;
    const auto spans = paused_intervals(s, p, static_cast<std::uint64_t>(tmax));
    out << fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{} ({})</text>\n", x0 - 6,
        y + 10, kPalette[k % 12], xml_escape(name.size() > 18 ? name.substr(0, 17) + "~" : name),
        spans.size());
    for (const auto& [a, b] : spans) {
      out << fmt::format(
          "<rect class=\"path_paused\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"10\" "
          "fill=\"{}\" fill-opacity=\"0.55\"><title>{} paused {:.3f} s to {:.3f} s</title></rect>\n",
          X(static_cast<double>(a)), y + 1,
          std::max(0.8, X(static_cast<double>(b)) - X(static_cast<double>(a))), kPalette[k % 12],
          xml_escape(name), static_cast<double>(a) / 1e6, static_cast<double>(b) / 1e6);
    }
  }
  // Legend, in rows that never overlap.
  const double ly0 = H - 14 - 16 * (legend_rows - 1);
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const double lx = legend_at[i].first, ly = ly0 + 16 * legend_at[i].second;
    const std::string text = xml_escape(legend[i].text);
    switch (legend[i].icon) {
      case 0:
        out << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#111\" "
                           "stroke-width=\"2.4\"/>",
                           lx, ly - 4, lx + 24);
        break;
      case 1:
        out << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#1f77b4\" "
                           "stroke-width=\"1.3\"/>",
                           lx, ly - 4, lx + 24);
        break;
      case 2:
        out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"9\" fill=\"#fde9d0\"/>",
                           lx, ly - 9);
        break;
      case 3:
        out << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#111\" "
                           "stroke-opacity=\"0.35\" stroke-width=\"3.4\"/>",
                           lx, ly - 4, lx + 24);
        break;
      case 4:
        out << fmt::format("<path d=\"M{},{} l-4,-7 h8 z\" fill=\"#d62728\"/>", lx + 12, ly);
        break;
      case 7:
        out << fmt::format("<path d=\"M{},{} l-4,-7 h8 z\" fill=\"#9467bd\"/>", lx + 12, ly);
        break;
      case 5:
        out << fmt::format("<path d=\"M{},{} l4,5 l-4,5 l-4,-5 z\" fill=\"#ff9800\"/>", lx + 12,
                           ly - 10);
        break;
      case 8:
        out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"9\" fill=\"#1f77b4\" "
                           "fill-opacity=\"0.55\"/>",
                           lx, ly - 9);
        break;
      case 9:
        out << fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"white\" stroke=\"#111\" "
                           "stroke-width=\"1.5\"/>",
                           lx + 12, ly - 4);
        break;
      default:
        break;
    }
    out << fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\"{}>{}</text>\n",
                       legend[i].icon == 6 ? lx : lx + 30, ly,
                       legend[i].icon == 6 ? " fill=\"#444\"" : "", text);
  }
  out << "</svg>\n";
}

}  // namespace binlogctl
