// Findings about the input: a stable check code, a severity, where, and a message.
// The framing layer reports the checks it can see (magic, sizes, checksums, truncation);
// verify adds the chain-level ones. The codes are a contract (SPEC.md, verify table).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <fmt/format.h>

namespace binlogctl {

enum class Check : std::uint8_t {
  bad_magic,
  unsupported_format,
  missing_format_description,
  bad_event_size,
  truncated_event,
  log_pos_mismatch,
  checksum_mismatch,
  rotate_mismatch,
  file_sequence_gap,
  previous_gtids_mismatch,
  gtid_list_mismatch,
  gtid_duplicate,
  gtid_gap,
  transaction_structure,
  unknown_event_type,
  timestamp_regression,
  server_crash,       // a file its server never closed (crash), followed by the file it began on restart
  undecodable_event,  // a body decoder failed (dump/convert); not a verify-table code
  read_error,         // I/O or archive error
  decryption_failed,  // an encrypted binlog that the keys given do not decrypt (crypto.h)
  // a new check goes above this line: kLastCheck names the last one
};
constexpr Check kLastCheck = Check::decryption_failed;

enum class Severity : std::uint8_t { warning, error };

std::string_view check_name(Check c) noexcept;
std::string_view severity_name(Severity s) noexcept;

struct Diagnostic {
  Check check;
  Severity severity;
  std::string log_name;
  std::uint64_t pos;  // absolute byte offset in the file
  std::string message;
  // The file as the user gave it (or as its index file or directory named it), for messages:
  // two directories of a chain may hold the same log_name. Empty: the message uses log_name.
  std::string path = {};
  // Where the file starts in `path`: 0, except for the second and later files of concatenated
  // input (binlogctl(1), INPUTS), whose positions are their own. Messages name the byte offset
  // in the file as given, base + pos (format_diagnostic).
  std::uint64_t base = 0;
};

// Where findings go. The framing layer never prints.
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(const Diagnostic& d) = 0;
  // The file that later reports name by `log_name` is `path` as the user gave it ("" = its log
  // name). The chain reader says it as each file opens, so that every message names the path
  // (issue 18: two directories of a chain may hold the same log name) while records keep
  // log_name. Sinks that print keep it (FileNames); sinks that forward pass it on.
  // `base`: where the file starts in `path` (Diagnostic::base).
  virtual void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) {
    (void)log_name;
    (void)path;
    (void)base;
  }
};

// What name_file() said, for printing sinks: thread-safe (render threads report too). When two
// files of a chain share a log name, the later one is named from its opening on.
class FileNames {
 public:
  void set(const std::string& log_name, const std::string& path, std::uint64_t base);
  // d with its path (and base) for messages: d.path when the reporter set one, else the path
  // named for d.log_name, else d.log_name.
  Diagnostic named(const Diagnostic& d) const;

 private:
  struct Named {
    std::string log_name, path;
    std::uint64_t base = 0;
  };
  mutable std::mutex m_;
  std::vector<Named> names_;
};

// "binlog.000002:12345: error: checksum_mismatch: stored 0x1a2b3c4d, computed 0x5e6f7a8b"; in a
// later file of concatenated input, the offset in the input (base + pos), and the message ends
// with the file's own name and position: "big.bin:51286: error: ...: MESSAGE (hx-relay.000002,
// position 4)".
std::string format_diagnostic(const Diagnostic& d);

// Prints diagnostics as "binlogctl: FILE:POS: severity: check: message" and counts them.
// Thread-safe: reader and formatter threads may both report.
class StderrDiagnostics : public DiagnosticSink {
 public:
  explicit StderrDiagnostics(std::FILE* f) : f_(f) {}
  void report(const Diagnostic& d) override;
  void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) override { names_.set(log_name, path, base); }
  std::uint64_t errors() const { return errors_.load(); }
  std::uint64_t warnings() const { return warnings_.load(); }

 private:
  std::FILE* f_;
  FileNames names_;
  std::mutex m_;
  std::atomic<std::uint64_t> errors_{0}, warnings_{0};
};

}  // namespace binlogctl

template <>
struct fmt::formatter<binlogctl::Check> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(binlogctl::Check c, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(binlogctl::check_name(c), ctx);
  }
};
