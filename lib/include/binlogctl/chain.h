// Reading a chain of binlogs: the one chain walker. Inputs come from an InputSet (files, index
// files, directories, stdin, archives, or memory); each file is framed by an EventStream, events
// are selected by position and time, TRANSACTION_PAYLOAD events are followed by their inner
// events, progress is shown. Every subcommand reads through ChainReader: dump, convert and stats
// by way of read_chain(), verify and replay directly.
#pragma once

#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>
#include <binlogctl/result.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace binlogctl {

struct ChainOptions {
  std::vector<std::string> inputs;
  // When set, read from here instead of `inputs` (tests, fuzzers, later a live server).
  InputSet* input_set = nullptr;
  std::optional<std::uint64_t> start_position;  // first file
  std::optional<std::uint64_t> stop_position;   // last file
  std::optional<std::int64_t> start_datetime;   // unix seconds
  std::optional<std::int64_t> stop_datetime;
  // mysqlbinlog's --server-id / --exclude-server-ids: only events written by this server, none
  // written by these. Events that describe the file rather than a change (Format_desc, Rotate,
  // Stop, Previous_gtids, Gtid_list, Binlog_checkpoint, Start_encryption) are always kept.
  std::optional<std::uint32_t> server_id;
  std::vector<std::uint32_t> exclude_server_ids;
  bool verify_checksums = true;
  bool expand_payloads = true;       // inner events follow their TRANSACTION_PAYLOAD
  bool expand_damaged_payloads = true;  // ... even when the payload event failed its checksum
  bool pass_fde_before_start = false;  // format descriptions before the start point too
  ProgressMode progress = ProgressMode::auto_;
  // Mapped files are framed and checksummed on a second thread while the consumer runs on the
  // calling one; 1 keeps everything on one thread.
  unsigned threads = 2;
};

// The reading fields that every subcommand's options struct has under the same names (inputs,
// input_set, positions, datetimes, server ids, verify_checksums, progress), copied in one place;
// the caller sets the rest (threads, payload expansion, FDEs before the start).
template <class Opts>
ChainOptions chain_options_of(const Opts& o) {
  ChainOptions co;
  co.inputs = o.inputs;
  co.input_set = o.input_set;
  co.start_position = o.start_position;
  co.stop_position = o.stop_position;
  co.start_datetime = o.start_datetime;
  co.stop_datetime = o.stop_datetime;
  co.server_id = o.server_id;
  co.exclude_server_ids = o.exclude_server_ids;
  co.verify_checksums = o.verify_checksums;
  co.progress = o.progress;
  return co;
}

// What a consumer is told besides the events, in chain order. Every call is made from the
// thread that calls ChainReader::next().
class ChainHooks {
 public:
  virtual ~ChainHooks() = default;
  // An input that could not be listed (unreadable index file or directory): "path: reason".
  virtual void input_error(const std::string&) {}
  // An input read, but not wholly as given (inputs.h, InputList::warnings): printed on stderr.
  virtual void input_warning(const std::string& w);
  // A file that cannot be read: missing (`open_error` null) or failing to open.
  virtual void unavailable(const InputFile&, const std::system_error*) {}
  // A file about to be read; false skips it (no events, no end_file).
  virtual bool begin_file(const InputFile&) { return true; }
  // After the last event of a file that begin_file accepted.
  virtual void end_file(const InputFile&, const EventStream&) {}
  // A TRANSACTION_PAYLOAD event whose body does not decode (its inner events are not read).
  virtual void payload_undecodable(const Event&, const InputFile&, const DecodeError&) {}
};

// Pulls the selected events of a chain, one at a time. The views of the event handed out stay
// valid until the next call to next().
class ChainReader {
 public:
  ChainReader(const ChainOptions& o, ChainHooks& hooks, DiagnosticSink& diag);
  ~ChainReader();
  ChainReader(const ChainReader&) = delete;
  ChainReader& operator=(const ChainReader&) = delete;

  // The next event (top-level, or inner after its payload), or false at the end of the chain.
  bool next(Event& ev);
  // The file of the last event handed out, and its index in the input list.
  const InputFile& file() const;
  std::size_t file_index() const;
  const std::string& log_name() const { return file().log_name; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
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
