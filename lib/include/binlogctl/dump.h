// binlogctl dump: one record per event, with the fields of SHOW BINLOG EVENTS.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/progress.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

enum class OutputFormat { text, json };

struct DumpOptions {
  std::vector<std::string> inputs;
  OutputFormat format = OutputFormat::text;
  bool decode = false;     // JSON: add "body" with the decoded fields
  bool hexdump = false;    // add the raw bytes
  bool verify_checksums = true;
  bool expand_payloads = true;  // list the inner events of TRANSACTION_PAYLOAD
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds
  std::optional<std::int64_t> stop_datetime;
  ProgressMode progress = ProgressMode::auto_;
  // Mapped files are read (framing, checksums) on a second thread while this one formats;
  // 1 keeps everything on one thread.
  unsigned threads = 2;
};

// Prints diagnostics as "binlogctl: FILE:POS: severity: check: message" and counts them.
// Thread-safe: reader and formatter threads may both report.
class StderrDiagnostics : public DiagnosticSink {
 public:
  explicit StderrDiagnostics(std::FILE* f) : f_(f) {}
  void report(const Diagnostic& d) override;
  std::uint64_t errors() const { return errors_.load(); }
  std::uint64_t warnings() const { return warnings_.load(); }

 private:
  std::FILE* f_;
  std::mutex m_;
  std::atomic<std::uint64_t> errors_{0}, warnings_{0};
};

// Runs the dump; returns the exit status (0 ok, 1 damaged or undecodable data, 2 unreadable
// input). Diagnostics go to `err`, records to `out`.
int run_dump(const DumpOptions& opts, std::FILE* out, std::FILE* err);

// "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DD") as seconds since the epoch, taking the text as
// UTC + tz_offset_seconds. nullopt if it does not parse.
std::optional<std::int64_t> parse_datetime(std::string_view text, std::int32_t tz_offset_seconds = 0);

}  // namespace binlogctl
