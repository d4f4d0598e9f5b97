// binlogctl fetch: options -> binlogctl::run_fetch (a verified, resumable raw backup of a server's
// binlogs; needs libmariadb).
#ifdef BINLOGCTL_HAVE_REMOTE
#include <binlogctl/fetch.h>
#endif

#include <csignal>
#include <cstdio>
#include <memory>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct FetchArgs {
  RemoteArgs remote;
  std::string start_file;
  std::string result_dir;
  double fsync_interval = 1.0;
  std::string format = "text";
  bool strict = false;
};

#ifdef BINLOGCTL_HAVE_REMOTE
extern "C" void on_stop_signal(int) { request_fetch_stop(); }
#endif

int run(FetchArgs& a) {
#ifndef BINLOGCTL_HAVE_REMOTE
  (void)a;
  throw CLI::ValidationError("fetch", "this binlogctl was built without libmariadb (MariaDB Connector/C): it cannot read from a server");
#else
  if (a.fsync_interval < 0) throw CLI::ValidationError("--fsync-interval", "must be 0 (every transaction) or more seconds");
  if (a.start_file.find('/') != std::string::npos)
    throw CLI::ValidationError("BINLOG", a.start_file + ": a binlog name on the server, not a path");
  if (!a.remote.opts.start_gtid.empty())
    throw CLI::ValidationError("--start-gtid",
                               "fetch copies whole files byte for byte, and a GTID start leaves out the transactions "
                               "before the position: name the first file instead (the BINLOG argument)");
  a.remote.resolve();
  FetchOptions o;
  o.remote = a.remote.opts;
  o.result_dir = a.result_dir;
  o.start_file = a.start_file;
  o.fsync_interval = a.fsync_interval;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  o.verify.strict = a.strict;
  if (o.remote.stop_never) LineOutput::set_line_buffered_always(true);  // findings as they are found
  // SIGINT/SIGTERM: a clean stop (complete events synced), not a kill mid-write. No SA_RESTART:
  // the read waiting for the server must return.
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return run_fetch(o, stdout, stderr);
#endif
}
}  // namespace

void setup_fetch(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<FetchArgs>();
  CLI::App* sub = app.add_subcommand(
      "fetch", "Back up a server's binlogs into a directory, byte for byte, verified while streaming, resumable");
  if (!with_options) return;
  sub->add_option("binlog", a->start_file,
                  "The first server binlog to fetch when the directory holds none yet (default: the first SHOW "
                  "BINARY LOGS lists)");
  sub->add_option("--result-dir", a->result_dir, "Directory the server's files are written into (made if missing)")
      ->required();
  sub->add_option("--fsync-interval", a->fsync_interval,
                  "Seconds between fsyncs, at transaction boundaries (default 1; 0: after every transaction)")
      ->default_val(1.0);
  sub->add_option("--format", a->format, "Findings and summary as verify prints them: text or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_flag("--strict", a->strict, "Report warnings as errors (exit status 1)");
  add_remote_options(*sub, a->remote, false);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
