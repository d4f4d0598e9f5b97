// binlogctl stats: options -> binlogctl::run_stats.
#include <binlogctl/stats.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct StatsArgs {
  StatsOptions opts;
  std::string format = "text";
  std::string output;
  std::string progress = "auto";
  std::string start_datetime, stop_datetime;
  std::string include_gtids, exclude_gtids, filter;
  std::vector<std::string> schema_files;
  std::uint64_t start_position = 0, stop_position = 0;
  bool no_checksum = false;
};

int run(StatsArgs& a) {
  StatsOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  o.progress = progress_mode(a.progress);
  o.verify_checksums = !a.no_checksum;
  if (a.start_position != 0) o.start_position = a.start_position;
  if (a.stop_position != 0) o.stop_position = a.stop_position;
  o.start_datetime = datetime_option(a.start_datetime, "--start-datetime");
  o.stop_datetime = datetime_option(a.stop_datetime, "--stop-datetime");
  o.include_gtids = gtid_selection_option(a.include_gtids, "--include-gtids");
  o.exclude_gtids = gtid_selection_option(a.exclude_gtids, "--exclude-gtids");
  o.filter = table_filter_option(a.filter);
  o.schema = schema_files_option(a.schema_files);
  if (o.interval_seconds == 0)
    throw CLI::ValidationError("--interval", "must be at least 1 second");
  std::FILE* out = stdout;
  if (!a.output.empty() && a.output != "-") {
    out = std::fopen(a.output.c_str(), "wb");
    if (out == nullptr) throw std::system_error(errno, std::generic_category(), a.output);
  }
  const int rc = run_stats(o, out, stderr);
  if (out != stdout) std::fclose(out);
  return rc;
}
}  // namespace

void setup_stats(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("stats",
                                     "Rows and bytes per table, events per type, the largest and "
                                     "longest transactions, a timeline");
  sub->add_option("files", a->opts.inputs,
                  "Binlog or relay-log files, index files, directories, '-' for stdin")
      ->required();
  sub->add_option("--format", a->format,
                  "Output format: text (aligned tables) or json (JSON Lines, one object per line "
                  "with a \"kind\")")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_option("--top", a->opts.top,
                  "Transactions listed in each ranking (largest, longest); default 10")
      ->default_val(10);
  sub->add_option("--interval", a->opts.interval_seconds,
                  "Timeline bucket in seconds; default 60 (per minute)")
      ->default_val(60);
  sub->add_option("--start-position", a->start_position,
                  "Start at the first event at or after this offset (first file)");
  sub->add_option("--stop-position", a->stop_position,
                  "Stop before the first event at or after this offset (last file)");
  sub->add_option("--start-datetime", a->start_datetime,
                  "Skip events before this time (YYYY-MM-DD HH:MM:SS, UTC)");
  sub->add_option("--stop-datetime", a->stop_datetime,
                  "Stop at the first event at or after this time (UTC)");
  sub->add_option("--include-gtids", a->include_gtids,
                  "Only transactions in this GTID set (MySQL uuid:1-5 or MariaDB 0-1-100)");
  sub->add_option("--exclude-gtids", a->exclude_gtids, "Leave out transactions in this GTID set");
  sub->add_option("--filter", a->filter,
                  "Canal table filter: only these tables' rows, e.g. 'shop\\..*,crm.users'");
  sub->add_option("--schema", a->schema_files,
                  "SQL file of CREATE TABLE statements seeding schema history (MariaDB pre-10.0 "
                  "temporals); repeatable")
      ->allow_extra_args(false);
  sub->add_flag("--no-verify-checksum", a->no_checksum, "Do not verify CRC32 checksums");
  sub->add_option("-o,--output", a->output, "Write the statistics to FILE instead of stdout");
  add_progress_option(*sub, a->progress);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
