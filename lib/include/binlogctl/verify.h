// binlogctl verify: the integrity of one binlog file or a whole chain.
//
// Two layers:
// * ChainVerifier is the pure logic. Feed it the files of a chain in order (begin_file, every
//   framed event, end_file) and it emits the chain-level findings (log positions, transaction
//   structure, GTID continuity, file sequence, ROTATE targets, timestamps) through a
//   DiagnosticSink, and builds the summary. It is itself the DiagnosticSink the framing layer
//   (EventStream, PayloadExpander) reports into, so it sees the damage the framing layer found
//   (and counts it, and applies --strict). It never opens a file: tests drive it from memory.
// * verify_inputs() / run_verify() are the drivers: inputs -> sources -> EventStream ->
//   ChainVerifier, and the output in text or JSON Lines.
//
// The check codes, severities and the JSON keys are a contract (SPEC.md, verify table;
// man/binlogctl-verify.1.scd documents every decision taken here).
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/progress.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace binlogctl {

struct VerifyConfig {
  // timestamp_regression: warn when an event's timestamp is more than this many seconds before
  // the one it is compared with (see the man page for which events are compared).
  std::uint32_t timestamp_threshold = 60;
  bool strict = false;  // report warnings as errors
  // The chain is complete (a backup): its last file, too, must end with ROTATE or STOP.
  bool closed = false;
};

// One count per check, the last included (it was sized up to read_error, and decryption_failed,
// added after it, was counted one slot past the array, into the summary's GTID set).
constexpr std::size_t kCheckCount = static_cast<std::size_t>(kLastCheck) + 1;

struct VerifySummary {
  std::uint64_t files = 0;          // files read (missing and skipped ones excluded)
  std::uint64_t missing_files = 0;  // named by an index but absent, or unreadable
  std::uint64_t events = 0;         // top-level events
  std::uint64_t inner_events = 0;   // events inside TRANSACTION_PAYLOAD events
  std::uint64_t transactions = 0;
  std::uint64_t first_transaction_id = 0;  // 0 when there is no transaction
  std::uint64_t last_transaction_id = 0;
  std::uint64_t errors = 0;
  std::uint64_t warnings = 0;
  std::uint64_t skipped_bytes = 0;  // bytes skipped while resynchronising after damage
  std::array<std::uint64_t, kCheckCount> per_check{};
  // GTIDs executed by the transactions of the chain's files (MySQL set; MariaDB binlog state:
  // the last seq_no per domain and server_id).
  GtidSet gtid_executed;
  MariaGtidList mariadb_gtid_executed;
  // The same, plus what the files' own headers (Previous_gtids / Gtid_list) say was executed
  // before: the server's @@gtid_executed / @@gtid_binlog_state after the chain's last file.
  GtidSet gtid_state;
  MariaGtidList mariadb_gtid_state;
};

class ChainVerifier final : public DiagnosticSink {
 public:
  explicit ChainVerifier(DiagnosticSink& out, VerifyConfig cfg = {});
  ~ChainVerifier() override;
  ChainVerifier(const ChainVerifier&) = delete;
  ChainVerifier& operator=(const ChainVerifier&) = delete;

  // Optional: the whole input list, before the first file. With it a file that comes later in
  // the list is reported as out of order rather than missing.
  void plan(const std::vector<InputFile>& files);

  // Starts the next file of the chain. Missing files (named by an index, absent) are reported
  // here as file_sequence_gap. Returns false when the file must not be read: it is missing, or
  // it was already given (reported once as file_sequence_gap, its events are not verified twice).
  bool begin_file(const InputFile& f);
  // A file that could not be opened (the driver reports why): breaks the chain without a finding.
  void file_unavailable(const InputFile& f);
  // Every event EventStream hands out, in order; the inner events of a TRANSACTION_PAYLOAD
  // right after the payload event (Event::is_inner()).
  void event(const Event& ev);
  // The file ends: `end_offset` where reading stopped, `skipped` bytes skipped by resync,
  // `aborted` when the framing layer gave up on the file (bad magic, unsupported format).
  void end_file(std::uint64_t end_offset, std::uint64_t skipped, bool aborted);
  // After the last file: pending GTID gaps are resolved and reported.
  void finish();

  // DiagnosticSink: findings of the framing layer pass through here.
  void report(const Diagnostic& d) override;
  void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) override;

  const VerifySummary& summary() const noexcept;
  // Id of the transaction being read (0 between transactions).
  std::uint64_t current_transaction_id() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Collects findings in memory (tests, library users).
class DiagnosticCollector final : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override { items.push_back(d); }
  std::vector<Diagnostic> items;
};

struct VerifyRun {
  VerifySummary summary;
  bool unreadable = false;            // an input could not be read at all (exit status 2)
  std::vector<std::string> problems;  // why: "path: reason"
};

// Expands the inputs (files, index files, directories, "-") and verifies them as one chain.
// Findings go to `out` as they are found. `input_set`, when given, is read instead of `inputs`.
VerifyRun verify_inputs(const std::vector<std::string>& inputs, const VerifyConfig& cfg,
                        DiagnosticSink& out, ProgressMode progress = ProgressMode::never,
                        InputSet* input_set = nullptr);

struct VerifyOptions {
  std::vector<std::string> inputs;
  InputSet* input_set = nullptr;  // read instead of `inputs` when set (tests, fuzzers)
  OutputFormat format = OutputFormat::text;
  VerifyConfig config;
  ProgressMode progress = ProgressMode::auto_;
};

// Text: one compiler-style line per finding, then `summary:` lines.
// JSON Lines: one object per finding, then {"summary": {...}}.
// Returns the exit status: 0 no error (warnings allowed unless strict), 1 errors, 2 unreadable
// input. Problems with the inputs themselves go to `err`.
int run_verify(const VerifyOptions& opts, std::FILE* out, std::FILE* err);

// verify's output, for other drivers of a ChainVerifier (fetch): a sink that prints each finding
// as verify does (text or one JSON object per line), and the summary lines / object.
std::unique_ptr<DiagnosticSink> verify_printer(LineOutput& out, OutputFormat format);
void print_verify_summary(LineOutput& out, OutputFormat format, const VerifySummary& s);

// The JSON summary object (without the {"summary": ...} wrapper), for tests and other tools.
std::string summary_json(const VerifySummary& s);

}  // namespace binlogctl
