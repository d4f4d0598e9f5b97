// binlogctl verify: options -> binlogctl::run_verify.
#include <binlogctl/coverage.h>
#include <binlogctl/datetime.h>
#include <binlogctl/verify.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct VerifyArgs {
  VerifyOptions opts;
  std::string format = "text";
  std::string output;
  RemoteArgs remote;
  KeyArgs keys;
  std::string progress = "auto";
  CLI::Option* cover_from = nullptr;
  std::string from, to;
};

// --cover-from: each input is one chain (coverage.h).
int run_cover_mode(VerifyArgs& a) {
  if (a.remote.enabled) throw CLI::ValidationError("--cover-from", "reads archives of files, not a server (-R)");
  if (a.opts.inputs.empty()) throw CLI::ValidationError("--cover-from", "needs the archives to check");
  CoverOptions c;
  c.archives = a.opts.inputs;
  c.from = a.from;
  if (!a.to.empty()) {
    // A time is written YYYY-MM-DD[ HH:MM:SS]; anything else is a GTID (MariaDB 0-1-9, MySQL uuid:n)
    const bool date = a.to.size() >= 10 && a.to[4] == '-' && a.to[7] == '-' &&
                      std::all_of(a.to.begin(), a.to.begin() + 4, [](char ch) { return ch >= '0' && ch <= '9'; });
    if (date) {
      auto t = parse_datetime(a.to);
      if (!t) throw CLI::ValidationError("--cover-to", "'" + a.to + "': not a time (YYYY-MM-DD HH:MM:SS)");
      c.to_time = *t;
    } else {
      c.to_gtid = a.to;
    }
  }
  c.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  c.progress = progress_mode(a.progress);
  OutputFile output(a.output, a.opts.inputs);
  const int rc = run_cover(c, output.get(), stderr);
  output.commit(rc, OutputFile::OnProblems::replace);
  return rc;
}

int run(VerifyArgs& a) {
  if (a.cover_from->count() > 0) return run_cover_mode(a);
  if (!a.to.empty()) throw CLI::ValidationError("--cover-to", "only with --cover-from");
  VerifyOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  o.progress = progress_mode(a.progress);
  const auto remote = a.remote.open(o.inputs);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  OutputFile output(a.output, remote ? std::vector<std::string>{} : o.inputs);
  const int rc = run_verify(o, output.get(), stderr);
  output.commit(rc, OutputFile::OnProblems::replace);
  return rc;
}
}  // namespace

void setup_verify(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check the integrity of binlog files or a whole chain (sizes, positions, checksums, GTIDs, sequence)");
  if (!with_options) return;
  sub->add_option("files", a->opts.inputs, "Binlog or relay-log files, index files, directories, '-' for stdin (with -R: binlog names on the server)");
  sub->add_option("--format", a->format, "Output format: text (compiler-style lines) or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_flag("--strict", a->opts.config.strict, "Report warnings as errors (exit status 1)");
  sub->add_flag("--closed", a->opts.config.closed,
                "The chain is complete (a backup): its last file must end with ROTATE or STOP too");
  sub->add_option("--timestamp-threshold", a->opts.config.timestamp_threshold,
                  "timestamp_regression: seconds an event may go back in time before it is reported")
      ->default_val(60);
  a->cover_from = sub->add_option(
      "--cover-from", a->from,
      "Point-in-time recovery: exit 0 only when the inputs (each one chain: archives of servers of one topology) hold "
      "every transaction after this GTID position (MariaDB domain-server-seq list, MySQL GTID set), in order, once");
  sub->add_option("--cover-to", a->to,
                  "--cover-from: up to this time (YYYY-MM-DD HH:MM:SS UTC, transactions before it) or GTID (included); "
                  "default the end of the archives");
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the findings and the summary to FILE instead of stdout (-r, --result-file: mysqlbinlog's names)");
  add_progress_option(*sub, a->progress);
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
