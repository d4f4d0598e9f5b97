// binlogctl convert: options -> binlogctl::run_convert.
#include <binlogctl/convert.h>
#include <binlogctl/sql.h>
#ifdef BINLOGCTL_HAVE_CANAL
#include <binlogctl/canal.h>
#endif

#include <cstdio>
#include <memory>
#include <system_error>

#include <unistd.h>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct ConvertArgs {
  ConvertOptions opts;
  std::string format = "json";
  std::string binary_as = "base64";
  std::string output;
  RemoteArgs remote;
  KeyArgs keys;
  ReadArgs read;
  RowSelectionArgs selection;
  std::uint32_t batch_size = 50;
  bool canal_packets = false;
  std::string compression = "none";
  unsigned threads = 2;
  SqlOptions sql;
  std::string sql_set = "changed";
  bool skip_gtids = false;
  std::vector<std::string> rewrite_db;
  std::string sql_comments = "transaction";
  std::string sql_queries = "transaction";
  CLI::Option* format_option = nullptr;
};

int run(ConvertArgs& a) {
  ConvertOptions& o = a.opts;
  o.render.binary_as = a.binary_as == "hex" ? BinaryAs::hex : BinaryAs::base64;
  o.render_threads = a.threads;
  a.read.apply(o);
  a.selection.apply(o);
  if (a.sql.flashback && a.format_option->count() > 0 && a.format != "sql")
    throw CLI::ValidationError("--flashback", "writes SQL: only with --format sql (or without --format)");
  if (a.sql.flashback) a.format = "sql";
  const bool sql = a.format == "sql";
  if (!a.sql.flashback && (a.sql.skip_unsafe || !a.sql.tmpdir.empty()))
    throw CLI::ValidationError("--flashback-skip-unsafe/--tmpdir", "only with --flashback");
  a.sql.set = a.sql_set == "all" ? SqlSet::all : SqlSet::changed;
  if (a.skip_gtids && !sql) throw CLI::ValidationError("--skip-gtids", "only with --format sql");
  a.sql.gtids = !a.skip_gtids;
  for (const std::string& r : a.rewrite_db) {
    // mysqlbinlog's syntax: FROM->TO, spaces around the names ignored
    const std::size_t arrow = r.find("->");
    auto trim = [](std::string t) {
      const std::size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
    };
    const std::string from = arrow == std::string::npos ? "" : trim(r.substr(0, arrow));
    const std::string to = arrow == std::string::npos ? "" : trim(r.substr(arrow + 2));
    if (from.empty() || to.empty() || to.find("->") != std::string::npos)
      throw CLI::ValidationError("--rewrite-db", "'" + r + "': not FROM->TO");
    a.sql.rewrite_db.emplace_back(from, to);
  }
  a.sql.transaction_queries = a.sql_queries == "transaction";
  a.sql.comments = a.sql_comments == "none"  ? SqlComments::none
                   : a.sql_comments == "row" ? SqlComments::row
                                             : SqlComments::transaction;
  if (a.opts.with_statement && a.format != "json")
    throw CLI::ValidationError("--with-statement", "only with --format json");
  if (!sql && (!a.rewrite_db.empty() || a.sql.disable_log_bin))
    throw CLI::ValidationError("--rewrite-db/--disable-log-bin", "only with --format sql");
  const bool canal = a.format == "canal-proto" || a.format == "canal-json";
#ifndef BINLOGCTL_HAVE_CANAL
  if (canal) throw CLI::ValidationError("--format", a.format + ": this binlogctl was built without protobuf (no Canal support)");
#endif
  if (a.canal_packets && a.format != "canal-proto")
    throw CLI::ValidationError("--canal-packets", "only with --format canal-proto");
  if (a.compression != "none" && !a.canal_packets)
    throw CLI::ValidationError("--compression", "only with --canal-packets");
  if (a.batch_size == 0) throw CLI::ValidationError("--batch-size", "must be at least 1");
  if ((a.output.empty() || a.output == "-") && a.format == "canal-proto" && isatty(fileno(stdout)) != 0)
    throw CLI::ValidationError("--format", "canal-proto is binary: redirect stdout or use -o FILE");
  const auto remote = a.remote.open(o.inputs, o.exclude_gtids);
  o.input_set = a.keys.wrap(o.inputs, remote.get());
  OutputFile output(a.output, remote ? std::vector<std::string>{} : o.inputs);
  std::FILE* out = output.get();
  int rc = 0;
  if (sql) {
    rc = run_sql_convert(o, a.sql, out, stderr);
    output.commit(rc, a.sql.flashback ? OutputFile::OnProblems::discard : OutputFile::OnProblems::keep_existing);
    return rc;
  }
#ifdef BINLOGCTL_HAVE_CANAL
  if (canal) {
    CanalOptions co;
    co.format = a.format == "canal-json" ? CanalFormat::json : CanalFormat::proto;
    co.timezone = a.read.timezone;
    co.batch_size = a.batch_size;
    co.packets = a.canal_packets;
    co.compression = a.compression == "zlib"   ? CanalCompression::zlib
                     : a.compression == "gzip" ? CanalCompression::gzip
                                               : CanalCompression::none;
    rc = run_canal_convert(o, co, out, stderr);
  } else {
    rc = run_convert(o, out, stderr);
  }
#else
  (void)canal;
  rc = run_convert(o, out, stderr);
#endif
  output.commit(rc);
  return rc;
}
}  // namespace

void setup_convert(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand("convert", "Row changes, DDL and statements as JSON Lines, with transactions");
  if (!with_options) return;
  sub->add_option("files", a->opts.inputs, "Binlog or relay-log files, index files, directories, '-' for stdin (with -R: binlog names on the server)");
  a->format_option = sub->add_option("--format", a->format,
                  "Output format: json (one object per row change), canal-proto (Canal Entry messages, "
                  "varint-delimited), canal-json (Canal flat messages), sql (statements to apply)")
      ->check(CLI::IsMember({"json", "canal-proto", "canal-json", "sql"}))
      ->default_val("json");
  sub->add_flag("--flashback", a->sql.flashback,
                "sql: the statements that undo the selected range (last change first)");
  sub->add_option("--sql-set", a->sql_set, "sql: UPDATE sets the changed columns (default) or all columns")
      ->check(CLI::IsMember({"changed", "all"}))
      ->default_val("changed");
  sub->add_flag("--skip-gtids", a->skip_gtids,
                "sql: leave out each transaction's GTID (by default kept: MariaDB SET gtid_domain_id/server_id/"
                "gtid_seq_no, MySQL SET GTID_NEXT)");
  sub->add_option("--rewrite-db", a->rewrite_db,
                  "sql: write database FROM as TO ('FROM->TO', repeatable): USE and rows' table names (as mysqlbinlog)")
      ->allow_extra_args(false);
  sub->add_flag("-D,--disable-log-bin", a->sql.disable_log_bin,
                "sql: SET sql_log_bin=0 first (the target does not binlog the statements), set back at the end");
  sub->add_option("--sql-comments", a->sql_comments,
                  "sql: comment lines none, one per transaction (default), or also one per row statement")
      ->check(CLI::IsMember({"none", "transaction", "row"}))
      ->default_val("transaction");
  sub->add_option("--sql-queries", a->sql_queries,
                  "sql: a transaction's row statements between DELIMITER ;; lines, sent by the client as one query "
                  "(transaction, the default, up to --sql-batch-bytes), or each statement its own query (statement)")
      ->check(CLI::IsMember({"transaction", "statement"}))
      ->default_val("transaction");
  sub->add_option("--sql-batch-bytes", a->sql.batch_bytes,
                  "sql: the rows of one rows event in multi-row INSERTs, and UPDATEs and DELETEs by an integer "
                  "primary key, of at most BYTES (default 1048576, below max_allowed_packet; 0 = one statement per row)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 30))
      ->default_val(std::size_t{1024} * 1024);
  sub->add_flag("--flashback-skip-unsafe", a->sql.skip_unsafe,
                "--flashback: warn about and skip what cannot be undone instead of refusing");
  sub->add_option("--tmpdir", a->sql.tmpdir, "--flashback: directory for the spill files (default $TMPDIR or /tmp)");
  sub->add_option("--flashback-memory", a->sql.spill_bytes,
                  "--flashback: bytes of undo statements held in memory before they spill to --tmpdir (default 4194304)")
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30))
      ->default_val(std::size_t{4} * 1024 * 1024);
  sub->add_flag("--with-statement", a->opts.with_statement,
                "json: each row change with \"statement\" (the ANNOTATE_ROWS / ROWS_QUERY text that produced it) and "
                "\"thread_id\" (of the transaction's QUERY events), when the binlog has them");
  sub->add_option("--binary-as", a->binary_as, "Binary column values as base64 (default) or hex")
      ->check(CLI::IsMember({"base64", "hex"}))
      ->default_val("base64");
  add_read_options(*sub, a->read, " and, in the Canal formats, of TIMESTAMP values");
  add_gtid_options(*sub, a->selection, "transactions");
  sub->add_option("-d,--database", a->opts.database,
                  "Only row changes of this database's tables and statements whose default database it is (as mysqlbinlog -d)");
  sub->add_option("--filter", a->selection.filter, "Canal table filter: comma-separated schema\\.table regexes, e.g. 'shop\\..*,crm.users'");
  sub->add_option("--schema", a->selection.schema_files,
                  "SQL file of CREATE TABLE statements (e.g. mysqldump --no-data) seeding schema history; repeatable")
      ->allow_extra_args(false);
  sub->add_option("--batch-size", a->batch_size,
                  "Canal formats: entries per batch (flat message id, --canal-packets packet); default 50")
      ->default_val(50);
  sub->add_flag("--canal-packets", a->canal_packets,
                "canal-proto: write Canal server frames (4-byte length + Packet{MESSAGES}) per batch");
  sub->add_option("--compression", a->compression, "--canal-packets: body compression none (default), zlib or gzip")
      ->check(CLI::IsMember({"none", "zlib", "gzip"}))
      ->default_val("none");
  sub->add_option("--threads", a->threads,
                  "json, sql, canal-*: threads rendering row changes beside the decoding one (default 2; 0 = none)")
      ->check(CLI::Range(0u, 64u))
      ->default_val(2);
  sub->add_option("-o,--output,-r,--result-file", a->output, "Write the output to FILE instead of stdout (-r, --result-file: mysqlbinlog's names)");
  add_key_options(*sub, a->keys);
  add_remote_options(*sub, a->remote);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
