// FileChain: the positions and the file chain of binlogctl verify. Per event: end_log_pos
// (log_pos_mismatch), relay-log detection and the file's closing event; per file: the name
// sequence (file_sequence_gap), the previous file's ROTATE against this one (rotate_mismatch,
// server_crash), a file holding the magic alone (missing_format_description), --closed.
#pragma once

#include <binlogctl/event_type.h>
#include <binlogctl/inputs.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framing/relay_log.h"
#include "verify/verify_context.h"

namespace binlogctl::verify {

enum class FileEnd { none, rotate, stop };

struct FileInfo {
  bool valid = false;
  std::string log_name;
  bool missing = false;  // named by an index but absent, or unreadable
  bool aborted = false;  // framing gave up (bad magic, unsupported format)
  bool damaged = false;  // any framing error
  bool relay = false;
  bool in_use = false;  // FDE still flagged LOG_EVENT_BINLOG_IN_USE_F
  FileEnd end = FileEnd::none;
  std::string rotate_name;
  std::uint64_t rotate_pos = 0;        // the position the ROTATE names
  std::uint64_t rotate_event_pos = 0;  // where the ROTATE event is
  std::uint64_t end_offset = 0;
  std::uint64_t last_event_pos = 0;
  std::uint64_t events = 0;
};

class FileChain {
 public:
  explicit FileChain(VerifyContext& ctx) : ctx_(ctx) {}

  // The log names of all inputs, in order (ChainVerifier::plan).
  void plan(std::vector<std::string> names) { plan_ = std::move(names); }

  const FileInfo& cur() const noexcept { return cur_; }
  const FileInfo& prev() const noexcept { return prev_; }
  bool in_file() const noexcept { return in_file_; }
  // This file does not continue the previous one's sequence (another base name, no number).
  bool unrelated() const noexcept { return unrelated_; }
  // This file comes after a later one of its sequence.
  bool out_of_order() const noexcept { return out_of_order_; }
  // No usable predecessor for the header continuity checks.
  bool chain_break() const noexcept { return chain_break_; }
  // The current file is a relay log, as far as its name and events so far tell.
  bool in_relay_log() const noexcept { return relay_.relay(); }
  // The previous file's GTID header is comparable with this one's.
  bool header_check_applies() const {
    return !chain_break_ && !prev_damaged_for_header_ && !relay_.relay() && !prev_.relay;
  }

  // ---- begin_file, in this order -----------------------------------------------------------
  // The next input (named or unavailable).
  void count_input() { ++input_index_; }
  // The previous file ends in a way a crash of its server may explain (no closing event, still
  // in use or a live server went on from its end): its open transaction waits for
  // check_rotate.
  bool crash_may_explain(const InputFile& f) const {
    return prev_.valid && !prev_.missing && !prev_.aborted && prev_.end == FileEnd::none &&
           !prev_.damaged && !prev_.relay && (prev_.in_use || f.after_unclosed);
  }
  // The file was given before (stdin aside): it is not read again, and reported
  // (file_sequence_gap) once any transaction held from the previous file is.
  bool seen_before(const std::string& name) const {
    return name != "-" &&
           std::find(seen_names_.begin(), seen_names_.end(), name) != seen_names_.end();
  }
  void report_given_twice(const std::string& name);
  // The file becomes the current one; its name against the sequence. True when the sequence is
  // broken (reported as file_sequence_gap).
  bool start(const std::string& name);
  // The previous file's closing event against this file. A server_crash finding is returned
  // rather than delivered: the driver adds what the crash did to the open transaction.
  std::optional<Diagnostic> check_rotate(const std::string& name, bool seq_problem,
                                         bool after_unclosed);
  // Whether the chain breaks before this file. Returns chain_break().
  bool settle_break(bool seq_problem) {
    chain_break_ = !prev_.valid || seq_problem || prev_.missing || prev_.aborted;
    prev_damaged_for_header_ = prev_.valid && prev_.damaged;
    return chain_break_;
  }
  // The file is missing (reported by the driver): it becomes the previous one.
  void mark_missing() {
    cur_.missing = true;
    prev_ = cur_;
  }
  // The file is read.
  void open(const std::string& name);
  // A file that could not be opened: the previous one, missing.
  void unavailable(const InputFile& f);

  // ---- per event ---------------------------------------------------------------------------
  // Every top-level event whose file is open. `txn_active`, `begin_end`: the transaction being
  // read (end_log_pos rules inside transactions), read only when end_log_pos is not the usual.
  void top_event(const Event& ev, const bool& txn_active, const std::uint64_t& begin_end) {
    ++cur_.events;
    cur_.last_event_pos = ev.pos;
    if (relay_.event(ev)) cur_.in_use = (ev.header.flags & kFlagInUse) != 0;
    if (ev.checksum_ok &&
        ev.header.log_pos != static_cast<std::uint32_t>(ev.pos + ev.header.event_size))
      check_log_pos(ev, txn_active, begin_end);
    const std::uint8_t t = ev.type_code();
    if (t == static_cast<std::uint8_t>(EventType::rotate) && ev.checksum_ok) {
      on_rotate(ev);
    } else if (t == static_cast<std::uint8_t>(EventType::stop) && ev.checksum_ok) {
      cur_.end = FileEnd::stop;
    } else {
      cur_.end = FileEnd::none;
    }
  }
  // A file's GTID header (Previous_gtids or Gtid_list): only its first top-level one counts.
  bool first_gtid_header(const Event& ev) {
    if (ev.is_inner() || header_seen_) return false;
    header_seen_ = true;
    return true;
  }
  void mark_damage() { cur_.damaged = true; }

  // ---- end_file, finish --------------------------------------------------------------------
  // False when no file is open.
  bool end(std::uint64_t end_offset, bool aborted) {
    if (!in_file_) return false;
    in_file_ = false;
    cur_.relay = relay_.relay();
    cur_.end_offset = end_offset;
    cur_.aborted = aborted;
    return true;
  }
  // After end() and the transaction's judgement: the file becomes the previous one.
  void close(std::uint64_t end_offset, std::uint64_t skipped, bool aborted);
  // --closed: the last file must have been closed by its server.
  void check_closed();

 private:
  void check_log_pos(const Event& ev, bool txn_active, std::uint64_t begin_end);
  void on_rotate(const Event& ev);
  // file_sequence_gap between the previous input and this one; true when the sequence is broken.
  bool check_sequence(const std::string& name);

  VerifyContext& ctx_;
  std::vector<std::string> plan_;  // log names of all inputs, in order
  std::size_t input_index_ = 0;    // inputs met so far (begin_file / file_unavailable)
  std::vector<std::string> seen_names_;

  FileInfo prev_;
  FileInfo cur_;
  bool in_file_ = false;
  bool chain_break_ = true;  // no usable predecessor for the header continuity checks
  bool prev_damaged_for_header_ = false;
  bool unrelated_ = false;     // this file's name does not continue the previous one's sequence
  bool out_of_order_ = false;  // this file comes after a later one of its sequence

  // per-file framing state
  RelayLogSigns relay_;  // the current file's (cur_.relay: from end())
  bool header_seen_ = false;
};

}  // namespace binlogctl::verify
