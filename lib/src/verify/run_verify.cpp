// binlogctl verify drivers: inputs -> sources -> EventStream -> ChainVerifier, and the output.
#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/source.h>
#include <binlogctl/verify.h>

#include "events/events.h"
#include "render/json_out.h"

#include <fmt/format.h>

#include <system_error>

namespace binlogctl {

namespace {

// Prints every finding as it comes: compiler-style text or one JSON object per line.
class PrintSink final : public DiagnosticSink {
 public:
  PrintSink(LineOutput& out, OutputFormat f) : out_(out), format_(f) {}
  void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) override { names_.set(log_name, path, base); }
  void report(const Diagnostic& d) override {
    std::string& b = out_.buf();
    const Diagnostic named = names_.named(d);
    if (format_ == OutputFormat::json) {
      JsonWriter w(b);
      w.begin_object();
      w.key("check").str(check_name(d.check));
      w.key("severity").str(severity_name(d.severity));
      w.key("log_name").str(d.log_name);
      w.key("pos").u64(d.pos);
      if (named.base != 0) {
        // A later file of concatenated input: where it is in the file as given, as the text says.
        w.key("file").str(named.path);
        w.key("offset").u64(named.base + named.pos);
      }
      w.key("message").str(d.message);
      w.end_object();
    } else {
      b.append(format_diagnostic(named));
    }
    out_.end_line();
  }

 private:
  LineOutput& out_;
  OutputFormat format_;
  FileNames names_;
};

std::string mysql_text(const GtidSet& s) { return s.to_string(","); }

}  // namespace

std::unique_ptr<DiagnosticSink> verify_printer(LineOutput& out, OutputFormat format) {
  return std::make_unique<PrintSink>(out, format);
}

namespace {

// The chain reader's hooks for verify: read problems collected for the end, the verifier told
// about every file and gap.
class VerifyHooks final : public ChainHooks {
 public:
  VerifyHooks(ChainVerifier& v, VerifyRun& run) : v_(v), run_(run) {}
  void input_error(const std::string& e) override {
    run_.problems.push_back(e);
    run_.unreadable = true;
  }
  void unavailable(const InputFile& f, const std::system_error* e) override {
    if (e == nullptr && !f.origin.empty()) {
      (void)v_.begin_file(f);  // named by an index and absent: a gap in the chain, reported there
      return;
    }
    // Given on the command line and absent, or unopenable: a usage problem, not a gap in the data.
    run_.problems.push_back(unavailable_message(f, e));
    run_.unreadable = true;
    v_.file_unavailable(f);
  }
  bool begin_file(const InputFile& f) override { return v_.begin_file(f); }
  void end_file(const InputFile&, const EventStream& s) override {
    v_.end_file(s.offset(), s.skipped_bytes(), s.aborted());
  }
  void payload_undecodable(const Event& ev, const InputFile& f, const DecodeError& e) override {
    const Check c = e.code == Errc::truncated || e.code == Errc::bad_length ? Check::bad_event_size
                                                                            : Check::undecodable_event;
    v_.report(Diagnostic{c, Severity::error, f.log_name, ev.pos,
                         fmt::format("TRANSACTION_PAYLOAD body does not decode: {} (at offset {})", e.what,
                                     e.offset)});
  }

 private:
  ChainVerifier& v_;
  VerifyRun& run_;
};

}  // namespace

VerifyRun verify_inputs(const std::vector<std::string>& args, const VerifyConfig& cfg, DiagnosticSink& out,
                        ProgressMode progress_mode, InputSet* input_set) {
  VerifyRun run;
  std::unique_ptr<InputSet> owned;
  if (input_set == nullptr) {
    owned = path_inputs(args);
    input_set = owned.get();
  }
  ChainVerifier v(out, cfg);
  v.plan(input_set->list().files);
  VerifyHooks hooks(v, run);
  ChainOptions co;
  co.input_set = input_set;
  co.verify_checksums = true;
  co.expand_damaged_payloads = false;
  co.progress = progress_mode;
  // One thread: framing and CRC32 on a second one (threads = 2) cost verify 30-45% more CPU (the
  // hand-over of every event) and gained no wall time on this machine, interleaved on the three
  // 1 GiB bench files (bench/HISTORY.md, "verify on one thread again").
  co.threads = 1;
  ChainReader reader(co, hooks, v);
  Event ev;
  while (reader.next(ev)) v.event(ev);
  v.finish();
  run.summary = v.summary();
  return run;
}

std::string summary_json(const VerifySummary& s) {
  std::string b;
  JsonWriter w(b);
  w.begin_object();
  w.key("files").u64(s.files);
  w.key("missing_files").u64(s.missing_files);
  w.key("events").u64(s.events);
  w.key("inner_events").u64(s.inner_events);
  w.key("transactions").u64(s.transactions);
  w.key("first_transaction_id");
  if (s.transactions > 0) w.u64(s.first_transaction_id);
  else w.null();
  w.key("last_transaction_id");
  if (s.transactions > 0) w.u64(s.last_transaction_id);
  else w.null();
  w.key("errors").u64(s.errors);
  w.key("warnings").u64(s.warnings);
  w.key("skipped_bytes").u64(s.skipped_bytes);
  w.key("checks").begin_object();
  for (std::size_t i = 0; i < kCheckCount; ++i) {
    if (s.per_check[i] != 0) w.key(check_name(static_cast<Check>(i))).u64(s.per_check[i]);
  }
  w.end_object();
  // gtid_executed / gtid_state hold whichever set the chain has (MySQL's when it has one, else
  // MariaDB's), so that `jq .summary.gtid_executed` works on both; the mariadb_* keys stay.
  const std::string mysql_executed = mysql_text(s.gtid_executed), mysql_state = mysql_text(s.gtid_state);
  w.key("gtid_executed").str(!mysql_executed.empty() ? mysql_executed : s.mariadb_gtid_executed.to_string());
  w.key("gtid_state").str(!mysql_state.empty() ? mysql_state : s.mariadb_gtid_state.to_string());
  w.key("mariadb_gtid_executed").str(s.mariadb_gtid_executed.to_string());
  w.key("mariadb_gtid_state").str(s.mariadb_gtid_state.to_string());
  w.end_object();
  return b;
}

void print_verify_summary(LineOutput& out, OutputFormat format, const VerifySummary& s) {
  if (format == OutputFormat::json) {
    std::string& b = out.buf();
    b.append("{\"summary\":");
    b.append(summary_json(s));
    b.push_back('}');
    out.end_line();
  } else {
    std::string& b = out.buf();
    b.append(fmt::format("summary: {} file{}, {} events", s.files, s.files == 1 ? "" : "s", s.events));
    if (s.inner_events > 0) b.append(fmt::format(" (+{} inside transaction payloads)", s.inner_events));
    b.append(fmt::format(", {} transaction{}", s.transactions, s.transactions == 1 ? "" : "s"));
    if (s.transactions > 0) b.append(fmt::format(" (ids {}-{})", s.first_transaction_id, s.last_transaction_id));
    b.append(fmt::format(": {} error{}, {} warning{}", s.errors, s.errors == 1 ? "" : "s", s.warnings,
                         s.warnings == 1 ? "" : "s"));
    if (s.missing_files > 0) b.append(fmt::format(", {} missing file{}", s.missing_files, s.missing_files == 1 ? "" : "s"));
    if (s.skipped_bytes > 0) b.append(fmt::format(", {} bytes skipped", s.skipped_bytes));
    out.end_line();
    auto line = [&](std::string_view key, const std::string& v) {
      if (v.empty()) return;
      out.buf().append(fmt::format("summary: {}: {}", key, v));
      out.end_line();
    };
    line("gtid_executed", mysql_text(s.gtid_executed));
    line("gtid_state", mysql_text(s.gtid_state));
    line("mariadb_gtid_executed", s.mariadb_gtid_executed.to_string());
    line("mariadb_gtid_state", s.mariadb_gtid_state.to_string());
  }
}

int run_verify(const VerifyOptions& opts, std::FILE* outf, std::FILE* errf) {
  LineOutput out(outf);
  PrintSink sink(out, opts.format);
  VerifyRun run = verify_inputs(opts.inputs, opts.config, sink, opts.progress, opts.input_set);
  if (!run.unreadable && run.summary.files == 0 && run.summary.missing_files == 0) {
    // Nothing read is no clean verdict (an index that names nothing is reported as such above).
    run.problems.push_back("no binlog file was read");
    run.unreadable = true;
  }
  for (const std::string& p : run.problems) fmt::print(errf, "binlogctl: {}\n", p);
  // No input opened: no summary either (binlogctl(1), EXIT STATUS).
  if (!run.unreadable || run.summary.files > 0) print_verify_summary(out, opts.format, run.summary);
  out.flush();
  if (run.unreadable) return 2;
  return run.summary.errors > 0 ? 1 : 0;
}

}  // namespace binlogctl
