// binlogctl schema: options -> binlogctl::run_schema_report.
#include <binlogctl/schema_report.h>

#include <cstdio>
#include <memory>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct SchemaArgs {
  SchemaReportOptions opts;
  std::string format = "text";
  std::string output;
  RemoteArgs remote;
  KeyArgs keys;
  ReadArgs read;
  RowSelectionArgs selection;  // --filter and --schema
};

int run(SchemaArgs& a) {
  SchemaReportOptions& o = a.opts;
  o.format = a.format == "json" ? OutputFormat::json : OutputFormat::text;
  a.read.apply(o);
  o.timezone = a.read.timezone;
  o.filter = table_filter_option(a.selection.filter);
  o.schema = schema_files_option(a.selection.schema_files);
  const auto remote = a.remote.open(o.inputs);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  std::vector<std::string> inputs = remote ? std::vector<std::string>{} : o.inputs;
  // The output is often given back as --schema: it must not overwrite the seed either.
  inputs.insert(inputs.end(), a.selection.schema_files.begin(), a.selection.schema_files.end());
  OutputFile output(a.output, inputs);
  const int rc = run_schema_report(o, output.get(), stderr);
  output.commit(rc);
  return rc;
}
}  // namespace

void setup_schema(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<SchemaArgs>();
  CLI::App* sub = app.add_subcommand(
      "schema", "Print the table definitions that schema history rebuilds, as CREATE TABLE statements or JSON");
  if (!with_options) return;
  sub->add_option("files", a->opts.inputs,
                  "Binlog or relay-log files, index files, directories, '-' for stdin (with -R: binlog names on the server)");
  sub->add_option("--format", a->format,
                  "Output format: text (an SQL script, usable as --schema) or json (JSON Lines, one object per table)")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  sub->add_flag("--history", a->opts.history,
                "Every version of every table, in chain order, with the position of each change");
  add_read_options(*sub, a->read, " and of the text output's times");
  sub->add_option("--filter", a->selection.filter, "Canal table filter: only these tables, e.g. 'shop\\..*,crm.users'");
  sub->add_option("--schema", a->selection.schema_files,
                  "SQL file of CREATE TABLE statements seeding schema history (e.g. an earlier schema output); "
                  "repeatable")
      ->allow_extra_args(false);
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the output to FILE instead of stdout (-r, --result-file: mysqlbinlog's names)");
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
