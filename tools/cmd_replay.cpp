// binlogctl replay: options -> ReplayOptions -> run_replay over the binlog chain.
#include <binlogctl/diagnostic.h>
#include <binlogctl/replay.h>
#include <binlogctl/replay_binlog.h>

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <system_error>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct ReplayArgs {
  std::vector<std::string> inputs;
  ReadArgs read;
  RowSelectionArgs selection;  // GTID sets and --filter (no --schema: replay needs no columns)
  std::string policy = "doc", quota = "64M", path_by = "table", source_rate = "max";
  std::string data_delay = "1ms", control_delay = "10ms", watchdog = "30s", drain_timeout = "1h";
  std::string clock = "virtual";
  std::vector<std::string> sinks;
  double hard_limit_ratio = 1.5, path_pause = 0.20, path_resume = 0.10, area_pause = 0.80, area_resume = 0.50;
  double drop_rate = 0;
  std::uint64_t seed = 1;
  std::string timeline, plot, format = "text", output;
  RemoteArgs remote;
  KeyArgs keys;
};

std::uint64_t duration_or_throw(const std::string& opt, const std::string& v) {
  auto d = parse_duration_us(v);
  if (!d) throw CLI::ValidationError(opt, "expected a duration like 5ms, 2s, 1m (at most 720h)");
  return *d;
}

int run(ReplayArgs& a) {
  ReplayOptions o;
  if (!parse_policy(a.policy, o.policy)) throw CLI::ValidationError("--policy", "doc|ticdc|none|blocking");
  auto q = parse_bytes(a.quota);
  if (!q || *q == 0)
    throw CLI::ValidationError("--quota", "expected BYTES with an optional K/M/G suffix, from 1 to 1048576G");
  o.thresholds.quota = *q;
  o.thresholds.hard_limit_ratio = a.hard_limit_ratio;
  o.thresholds.path_pause = a.path_pause;
  o.thresholds.path_resume = a.path_resume;
  o.thresholds.area_pause = a.area_pause;
  o.thresholds.area_resume = a.area_resume;
  if (!parse_path_by(a.path_by, o.path_by, o.path_hash_buckets))
    throw CLI::ValidationError("--path-by", "table|schema|hash:N");
  for (const std::string& s : a.sinks) {
    std::string err;
    auto spec = parse_sink_spec(s, err);
    if (!spec) throw CLI::ValidationError("--sink", err);
    o.sinks.push_back(std::move(*spec));
  }
  auto rate = parse_source_rate(a.source_rate);
  if (!rate)
    throw CLI::ValidationError("--source-rate",
                               "N/s (up to 10^12), SIZE/s (up to 1048576G/s), ts or max; a rate must be > 0 "
                               "(max is the unlimited rate)");
  o.source_rate = *rate;
  o.data_delay_us = duration_or_throw("--data-delay", a.data_delay);
  o.control_delay_us = duration_or_throw("--control-delay", a.control_delay);
  o.watchdog_us = duration_or_throw("--watchdog", a.watchdog);
  o.drain_timeout_us = duration_or_throw("--drain-timeout", a.drain_timeout);
  o.clock = a.clock == "real" ? ClockMode::real_time : ClockMode::virtual_time;
  o.seed = a.seed;
  o.drop_rate = a.drop_rate;
  o.record_series = !a.plot.empty();
  if (std::string bad = validate_replay_options(o); !bad.empty()) {
    throw CLI::ValidationError(bad);
  }

  if (a.remote.opts.stop_never)
    throw CLI::ValidationError("--stop-never", "replay reads the whole chain before it simulates: it needs an end");
  BinlogSourceOptions so;
  a.selection.apply_gtids(so);
  const auto remote = a.remote.open(a.inputs, so.exclude_gtids);
  const std::vector<std::string> local_inputs = remote ? std::vector<std::string>{} : a.inputs;
  so.chain.inputs = a.inputs;
  so.chain.input_set = a.keys.wrap(a.inputs, remote.get());
  a.read.apply(so.chain);
  so.filter = table_filter_option(a.selection.filter);
  so.row_keys = o.path_by == PathBy::hash;  // a path per key bucket: rows hashed by their key
  // Every file it writes refuses an input and appears whole or not at all (OutputFile).
  for (const std::string* p : {&a.timeline, &a.plot}) {
    if (*p == "-") throw CLI::ValidationError(p == &a.timeline ? "--timeline" : "--plot", "needs a file name");
  }
  std::unique_ptr<OutputFile> timeline_file, svg_file;
  if (!a.timeline.empty()) timeline_file = std::make_unique<OutputFile>(a.timeline, local_inputs);
  if (!a.plot.empty()) svg_file = std::make_unique<OutputFile>(a.plot, local_inputs);
  OutputFile out_file(a.output, local_inputs);

  StderrDiagnostics diag(stderr);
  BinlogEventSource source(so, diag);
  ReplayInput input = load_replay_input(source, o.path_by, o.path_hash_buckets);
  if (source.unreadable()) return 2;
  warn_unmatched_filter_rules(so.filter, stderr);

  std::unique_ptr<JsonlTimelineWriter> timeline;
  if (timeline_file) timeline = std::make_unique<JsonlTimelineWriter>(timeline_file->stream());
  ReplayResult r = run_replay(o, input, timeline.get());
  if (timeline_file) {
    timeline.reset();
    timeline_file->commit();
  }
  if (svg_file) {
    std::ostream& svg = svg_file->stream();
    PlotOptions po;
    std::string sinks;
    for (const std::string& sk : a.sinks) sinks += fmt::format(" --sink '{}'", sk);
    // Every option that shaped the run (the pause fractions only where a policy uses them).
    po.title = fmt::format("replay --policy {} --quota {} --hard-limit-ratio {}", a.policy, a.quota,
                           a.hard_limit_ratio);
    if (o.policy == Policy::doc)
      po.title += fmt::format(" --path-pause {} --path-resume {} --area-pause {} --area-resume {}",
                              a.path_pause, a.path_resume, a.area_pause, a.area_resume);
    po.title += fmt::format(" --path-by {} --source-rate {} --control-delay {} --data-delay {}{} --seed {}",
                            a.path_by, a.source_rate, a.control_delay, a.data_delay, sinks, a.seed);
    if (a.drop_rate > 0) po.title += fmt::format(" --drop-rate {}", a.drop_rate);
    if (!a.selection.filter.empty()) po.title += fmt::format(" --filter '{}'", a.selection.filter);
    write_plot_svg(svg, r, po);
    svg_file->commit();
  }
  std::ostream& out = out_file.stream();
  if (a.format == "json") write_summary_json(out, r);
  else write_summary_text(out, r);
  out_file.commit();
  const int rc = replay_exit_code(r);
  return rc != 0 ? rc : (diag.errors() > 0 ? 1 : 0);
}
}  // namespace

void setup_replay(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* sub = app.add_subcommand("replay", "Stream the events through the flow-control engine into simulated sinks");
  if (!with_options) return;
  sub->add_option("files", a->inputs, "Binlog files, index files, directories (one chain = one area; with -R: binlog names on the server)");
  sub->add_option("--policy", a->policy, "Flow-control policy: doc, ticdc, none, blocking")
      ->check(CLI::IsMember({"doc", "ticdc", "none", "blocking"}))
      ->default_val("doc");
  sub->add_option("--quota", a->quota, "Memory quota per area (BYTES, K/M/G suffixes)")->default_val("64M");
  sub->add_option("--hard-limit-ratio", a->hard_limit_ratio, "Hard limit as a multiple of the quota")->default_val(1.5);
  sub->add_option("--path-pause", a->path_pause, "Pause a path at this fraction of the quota")->default_val(0.20);
  sub->add_option("--path-resume", a->path_resume, "Resume a path below this fraction")->default_val(0.10);
  sub->add_option("--area-pause", a->area_pause, "Pause the area at this fraction of the quota")->default_val(0.80);
  sub->add_option("--area-resume", a->area_resume, "Resume the area below this fraction")->default_val(0.50);
  sub->add_option("--path-by", a->path_by, "One path per table, per schema, or per key hash: table|schema|hash:N")
      ->default_val("table");
  sub->add_option("--sink", a->sinks, "PATTERN=SPEC, e.g. 'shop\\..*=latency:5ms,cap:2MB/s' (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--source-rate", a->source_rate, "Upstream read rate: N/s, SIZE/s, ts (source timestamps) or max")
      ->default_val("max");
  sub->add_option("--data-delay", a->data_delay, "Delay of the data link")->default_val("1ms");
  sub->add_option("--control-delay", a->control_delay, "Delay of the control link (pause-to-stop delay)")
      ->default_val("10ms");
  sub->add_option("--seed", a->seed, "Seed of every random stream")->check(CLI::NonNegativeNumber)->default_val(1);
  sub->add_option("--clock", a->clock, "virtual (deterministic, fast) or real")
      ->check(CLI::IsMember({"virtual", "real"}))
      ->default_val("virtual");
  sub->add_option("--timeline", a->timeline, "Write every action and memory sample as JSON Lines to FILE");
  sub->add_option("--plot", a->plot, "Draw memory per area and top paths over time with the actions, as SVG");
  sub->add_option("--format", a->format, "Summary format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_option("--watchdog", a->watchdog, "Report a deadlock when nothing moves for this long")->default_val("30s");
  sub->add_option("--drain-timeout", a->drain_timeout, "Report drain_timeout when not drained this long after the source ends")
      ->default_val("1h");
  sub->add_option("--drop-rate", a->drop_rate, "Fault injection: fraction of events turned into drop markers")
      ->default_val(0.0);
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the summary to FILE (-r, --result-file: mysqlbinlog's names)");
  add_read_options(*sub, a->read, "");
  add_gtid_options(*sub, a->selection, "the transactions");
  sub->add_option("--filter", a->selection.filter,
                  "Canal table filter: only the rows events of these tables (commits are kept), e.g. 'shop\\..*'");
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
