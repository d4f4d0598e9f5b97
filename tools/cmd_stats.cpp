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
  RemoteArgs remote;
  KeyArgs keys;
  ReadArgs read;
  RowSelectionArgs selection;
  const CLI::Option* interval_option = nullptr;
};

int run(StatsArgs& a) {
  StatsOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  a.read.apply(o);
  o.timezone = a.read.timezone;
  a.selection.apply(o);
  if (a.interval_option->count() == 0) o.interval_seconds = 0;  // from the span (StatsOptions)
  else if (o.interval_seconds == 0)
    throw CLI::ValidationError("--interval", "must be at least 1 second");
  const auto remote = a.remote.open(o.inputs, o.exclude_gtids);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  OutputFile output(a.output, remote ? std::vector<std::string>{} : o.inputs);
  const int rc = run_stats(o, output.get(), stderr);
  output.commit(rc);
  return rc;
}
}  // namespace

void setup_stats(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("stats",
                                     "Rows and bytes per table, events per type, the largest and "
                                     "longest transactions, a timeline");
  if (!with_options) return;
  sub->add_option("files", a->opts.inputs,
                  "Binlog or relay-log files, index files, directories, '-' for stdin (with -R: binlog names on the server)");
  sub->add_option("--format", a->format,
                  "Output format: text (aligned tables) or json (JSON Lines, one object per line "
                  "with a \"kind\")")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_option("--top", a->opts.top,
                  "Transactions listed in each ranking (largest, longest); default 10")
      ->default_val(10);
  a->interval_option = sub->add_option("--interval", a->opts.interval_seconds,
                                       "Timeline bucket in seconds; default from the time span: a minute up to "
                                       "6 hours, an hour up to 14 days, else a day");
  add_read_options(*sub, a->read, " and of the text report's times");
  add_gtid_options(*sub, a->selection, "transactions");
  sub->add_option("--filter", a->selection.filter,
                  "Canal table filter: only these tables' rows, e.g. 'shop\\..*,crm.users'");
  sub->add_option("--schema", a->selection.schema_files,
                  "SQL file of CREATE TABLE statements seeding schema history (MariaDB pre-10.0 "
                  "temporals); repeatable")
      ->allow_extra_args(false);
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the statistics to FILE instead of stdout (-r, --result-file: mysqlbinlog's names)");
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
