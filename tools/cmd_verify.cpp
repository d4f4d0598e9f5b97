// binlogctl verify: options -> binlogctl::run_verify.
#include <binlogctl/verify.h>

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
};

int run(VerifyArgs& a) {
  VerifyOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  o.progress = progress_mode(a.progress);
  const auto remote = a.remote.open(o.inputs);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  OutputFile output(a.output, remote ? std::vector<std::string>{} : o.inputs);
  const int rc = run_verify(o, output.get(), stderr);
  output.commit();
  return rc;
}
}  // namespace

void setup_verify(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check the integrity of binlog files or a whole chain (sizes, positions, checksums, GTIDs, sequence)");
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
  sub->add_option("-o,--output", a->output, "Write the findings and the summary to FILE instead of stdout");
  add_progress_option(*sub, a->progress);
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
