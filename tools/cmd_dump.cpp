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
  RemoteArgs remote;
  KeyArgs keys;
  ReadArgs read;
  RowSelectionArgs selection;  // the GTID sets
};

int run(DumpArgs& a) {
  DumpOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  a.read.apply(o);
  a.selection.apply_gtids(o);
  o.filter = table_filter_option(a.selection.filter);
  const auto remote = a.remote.open(o.inputs, o.exclude_gtids);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  OutputFile output(a.output, remote ? std::vector<std::string>{} : o.inputs);
  const int rc = run_dump(o, output.get(), stderr);
  output.commit(rc);
  return rc;
}
}  // namespace

void setup_dump(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<DumpArgs>();
  CLI::App* sub = app.add_subcommand("dump", "Print every event's header and summary, like SHOW BINLOG EVENTS");
  if (!with_options) return;
  sub->add_option("files", a->opts.inputs, "Binlog or relay-log files, index files, directories, '-' for stdin (with -R: binlog names on the server)");
  sub->add_option("--format", a->format, "Output format: text (aligned table) or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_flag("--decode", a->opts.decode, "Add each event's decoded body (JSON: as \"body\"; text: a 'body:' line under the event)");
  sub->add_flag("-H,--hexdump", a->opts.hexdump, "Add the raw bytes of each event");
  add_read_options(*sub, a->read, "");
  add_gtid_options(*sub, a->selection, "the events of transactions");
  sub->add_option("-d,--database", a->opts.database,
                  "Only the statements, table maps and rows events of this database (as mysqlbinlog -d); transaction keywords and other events always");
  sub->add_option("--filter", a->selection.filter,
                  "Only the TABLE_MAP and rows events of these tables: comma-separated schema\\.table regexes, e.g. 'shop\\..*,crm.users'");
  sub->add_flag("!--no-payload-events", a->opts.expand_payloads,
                "Do not list the events inside TRANSACTION_PAYLOAD events");
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the output to FILE instead of stdout (-r, --result-file: mysqlbinlog's names)");
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
