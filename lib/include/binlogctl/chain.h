// Reading a chain of binlogs for a consumer: inputs expanded (files, index, directory, stdin),
// each file framed, events selected by position and time, TRANSACTION_PAYLOAD expanded, progress
// shown. dump and convert are visitors over this; verify and replay have their own walks.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct ChainOptions {
  std::vector<std::string> inputs;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds
  std::optional<std::int64_t> stop_datetime;
  bool verify_checksums = true;
  bool expand_payloads = true;       // inner events follow their TRANSACTION_PAYLOAD
  bool pass_fde_before_start = false;  // format descriptions before the start point too
  ProgressMode progress = ProgressMode::auto_;
  // Mapped files are framed and checksummed on a second thread while the visitor runs on the
  // calling one; 1 keeps everything on one thread.
  unsigned threads = 2;
};

class ChainVisitor {
 public:
  virtual ~ChainVisitor() = default;
  virtual void begin_file(const InputFile&) {}
  // Every selected event, in file order; the views stay valid during the call.
  virtual void event(const Event& ev, const InputFile& file) = 0;
};

// Reads the chain into `v`. Findings go to `diag` (it must be thread-safe when threads > 1);
// inputs that cannot be read are reported on `errf`. Returns false when an input could not be
// read (missing file, unopenable file, unreadable index or directory).
bool read_chain(const ChainOptions& o, ChainVisitor& v, DiagnosticSink& diag, std::FILE* errf);

}  // namespace binlogctl
