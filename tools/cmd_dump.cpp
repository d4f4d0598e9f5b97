// binlogctl dump: options -> binlogctl::run_dump.
#include <binlogctl/dump.h>

#include <cstdio>
#include <memory>
#include <system_error>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct DumpArgs {
  DumpOptions opts;
  std::string format = "text";
  std::string output;
  std::string progress = "auto";
  std::string start_datetime, stop_datetime;
  std::uint64_t start_position = 0, stop_position = 0;
  bool no_checksum = false;
};

int run(DumpArgs& a) {
  DumpOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  o.progress = progress_mode(a.progress);
  o.verify_checksums = !a.no_checksum;
  if (a.start_position != 0) o.start_position = a.start_position;
  if (a.stop_position != 0) o.stop_position = a.stop_position;
  o.start_datetime = datetime_option(a.start_datetime, "--start-datetime");
  o.stop_datetime = datetime_option(a.stop_datetime, "--stop-datetime");
  std::FILE* out = stdout;
  if (!a.output.empty() && a.output != "-") {
    out = std::fopen(a.output.c_str(), "wb");
    if (out == nullptr) throw std::system_error(errno, std::generic_category(), a.output);
  }
  int rc = run_dump(o, out, stderr);
  if (out != stdout) std::fclose(out);
  return rc;
}
}  // namespace

void setup_dump(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<DumpArgs>();
  CLI::App* sub = app.add_subcommand("dump", "Print every event's header and summary, like SHOW BINLOG EVENTS");
  sub->add_option("files", a->opts.inputs, "Binlog or relay-log files, index files, directories, '-' for stdin")
      ->required();
  sub->add_option("--format", a->format, "Output format: text (aligned table) or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_flag("--decode", a->opts.decode, "JSON: add each event's decoded body as \"body\"");
  sub->add_flag("--hexdump", a->opts.hexdump, "Add the raw bytes of each event");
  sub->add_option("--start-position", a->start_position, "Start at the first event at or after this offset (first file)");
  sub->add_option("--stop-position", a->stop_position, "Stop before the first event at or after this offset (last file)");
  sub->add_option("--start-datetime", a->start_datetime, "Skip events before this time (YYYY-MM-DD HH:MM:SS, UTC)");
  sub->add_option("--stop-datetime", a->stop_datetime, "Stop at the first event at or after this time (UTC)");
  sub->add_flag("--no-verify-checksum", a->no_checksum, "Do not verify CRC32 checksums");
  sub->add_flag("!--no-payload-events", a->opts.expand_payloads,
                "Do not list the events inside TRANSACTION_PAYLOAD events");
  sub->add_option("-o,--output", a->output, "Write the output to FILE instead of stdout");
  add_progress_option(*sub, a->progress);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
