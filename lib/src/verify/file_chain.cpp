// FileChain: positions and the file chain (file_chain.h).
#include "verify/file_chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "events/events.h"

namespace binlogctl::verify {

void FileChain::report_given_twice(const std::string& name) {
  ctx_.deliver(
      Diagnostic{Check::file_sequence_gap, Severity::error, name, 0,
                 fmt::format("{} is given twice (input #{}): the second copy is not verified", name,
                             input_index_)});
}

bool FileChain::start(const std::string& name) {
  seen_names_.push_back(name);
  cur_ = FileInfo{};
  cur_.valid = true;
  cur_.log_name = name;
  unrelated_ = false;
  out_of_order_ = false;
  return check_sequence(name);
}

void FileChain::open(const std::string& name) {
  in_file_ = true;
  header_seen_ = false;
  relay_.open(name);
}

void FileChain::unavailable(const InputFile& f) {
  FileInfo info;
  info.valid = true;
  info.log_name = f.log_name;
  info.missing = true;
  prev_ = std::move(info);
}

void FileChain::check_log_pos(const Event& ev, bool txn_active, std::uint64_t begin_end) {
  const auto expected = static_cast<std::uint32_t>(ev.pos + ev.header.event_size);
  const std::uint32_t lp = ev.header.log_pos;
  if (lp == expected) return;
  // In a relay log the primary's events carry the primary's positions.
  if (relay_.relay() && ev.header.server_id != relay_.own_server_id()) return;
  if (lp == 0) {
    if (relay_.relay() || (ev.header.flags & kFlagArtificial) != 0) return;
    // MariaDB 11.4+ (binlog_legacy_event_pos=OFF): 0 inside transactions.
    if (ev.fde->zero_log_pos_inside_transactions() && txn_active) return;
  }
  // MySQL before 5.0.48/5.1.20 (bug #22540): positions of the events of a transaction cache
  // were relative to the end of its BEGIN.
  if (ev.fde->mysql_before_5_5() && txn_active && begin_end != 0 &&
      ev.pos + ev.header.event_size > begin_end &&
      lp == static_cast<std::uint32_t>(ev.pos + ev.header.event_size - begin_end))
    return;
  ctx_.emit(
      Check::log_pos_mismatch, Severity::error, ev.pos,
      fmt::format("{} has end_log_pos {}, expected {} (position {} + event size {}{})",
                  event_type_constant(ev.type_code()), lp, expected, ev.pos, ev.header.event_size,
                  ev.pos + ev.header.event_size > 0xffffffffull ? ", modulo 2^32" : ""));
}

void FileChain::on_rotate(const Event& ev) {
  cur_.end = FileEnd::rotate;
  cur_.rotate_event_pos = ev.pos;
  auto r = decode_rotate(ev.body_reader(), *ev.fde);
  if (!r) {
    ctx_.decode_failed(ev, r.error());
    cur_.end = FileEnd::none;
  } else {
    cur_.rotate_name.assign(r->next_file);
    cur_.rotate_pos = r->position;
  }
}

bool FileChain::check_sequence(const std::string& name) {
  if (!prev_.valid) return false;
  const auto p = numeric_suffix(prev_.log_name);
  const auto n = numeric_suffix(name);
  unrelated_ = !p || !n;
  if (!p || !n) return false;
  const std::string pb = base_name_of(prev_.log_name), nb = base_name_of(name);
  unrelated_ = pb != nb;
  if (pb != nb) {
    ctx_.emit(Check::file_sequence_gap, Severity::error, 0,
              fmt::format("{} follows {}: not the same binlog sequence (base names differ)", name,
                          prev_.log_name));
    return true;
  }
  if (*n == *p + 1) return false;
  if (*n <= *p) {
    out_of_order_ = true;
    ctx_.emit(Check::file_sequence_gap, Severity::error, 0,
              fmt::format("files out of order: {} comes after {}", name, prev_.log_name));
    return true;
  }
  // The files in between: given elsewhere in the input (out of order: reported where the
  // sequence goes back), or absent (a gap, reported here).
  const std::size_t width = prev_.log_name.size() - pb.size() - 1;
  auto name_of = [&](std::uint64_t k) { return fmt::format("{}.{:0{}}", pb, k, width); };
  std::uint64_t absent = 0;
  std::uint64_t first_absent = 0, last_absent = 0;
  for (std::uint64_t k = *p + 1; k < *n; ++k) {
    if (k - *p > 100000) {  // an absurd jump: count the rest as absent without looking
      last_absent = *n - 1;
      absent += *n - k;
      break;
    }
    const std::string nm = name_of(k);
    if (std::find(plan_.begin(), plan_.end(), nm) != plan_.end()) continue;
    if (absent == 0) first_absent = k;
    last_absent = k;
    ++absent;
  }
  if (absent == 1) {
    ctx_.deliver(Diagnostic{Check::file_sequence_gap, Severity::error, name_of(first_absent), 0,
                            fmt::format("{} is missing: the chain goes from {} to {}",
                                        name_of(first_absent), prev_.log_name, name)});
  } else if (absent > 1) {
    ctx_.deliver(Diagnostic{
        Check::file_sequence_gap, Severity::error, name_of(first_absent), 0,
        fmt::format("{} files are missing ({} to {}): the chain goes from {} to {}", absent,
                    name_of(first_absent), name_of(last_absent), prev_.log_name, name)});
  }
  return true;
}

std::optional<Diagnostic> FileChain::check_rotate(const std::string& name, bool seq_problem,
                                                  bool after_unclosed) {
  if (!prev_.valid || prev_.missing || prev_.aborted) return std::nullopt;
  if (prev_.end == FileEnd::rotate) {
    const std::string_view target = prev_.rotate_name;
    if (!seq_problem && target != name) {
      ctx_.deliver(Diagnostic{
          Check::rotate_mismatch, Severity::error, prev_.log_name, prev_.rotate_event_pos,
          fmt::format("the closing ROTATE names {}, but the next file is {}", target, name)});
    }
    if (prev_.rotate_pos != 4) {
      ctx_.deliver(Diagnostic{
          Check::rotate_mismatch, Severity::error, prev_.log_name, prev_.rotate_event_pos,
          fmt::format("the closing ROTATE points to position {} of {}, expected 4",
                      prev_.rotate_pos, target)});
    }
  } else if (prev_.end == FileEnd::none && !prev_.damaged && !prev_.relay && !seq_problem &&
             (prev_.in_use || after_unclosed)) {
    // The server never closed the file (its FDE still flagged in use, or a live server went on
    // past its end without a closing event) and the next file follows: a server writes a new
    // file without closing the old one only when it starts again after a crash. The chain is
    // whole as the server has it; the crash itself is worth knowing.
    return Diagnostic{
        Check::server_crash, Severity::warning, prev_.log_name, prev_.end_offset,
        fmt::format(
            "the server never closed this file ({}) and began {} after it: it crashed or was "
            "killed "
            "while writing it, and the file ends at {} with the last event it wrote",
            prev_.in_use
                ? "its format description is still flagged in use and it ends without ROTATE or "
                  "STOP"
                : "the server went on to the next file from its end, with no ROTATE or STOP there",
            name, prev_.end_offset)};
  } else if (prev_.end == FileEnd::none && !prev_.damaged && !prev_.relay) {
    ctx_.deliver(Diagnostic{
        Check::rotate_mismatch, Severity::error, prev_.log_name, prev_.end_offset,
        fmt::format(
            "the file does not end with a ROTATE or STOP event{}, yet {} follows it: the server "
            "did not "
            "close it (crash?) or the copy stops short; events after position {} may be lost",
            prev_.in_use ? " and its format description is still flagged in use" : "", name,
            prev_.end_offset)});
  }
  return std::nullopt;
}

void FileChain::close(std::uint64_t end_offset, std::uint64_t skipped, bool aborted) {
  if (!aborted && !cur_.damaged && relay_.fde_count() == 0 && end_offset <= 4 && skipped == 0) {
    ctx_.emit(Check::missing_format_description, Severity::error, end_offset,
              "the file holds the binlog magic number alone: no format description, no events");
  }
  prev_ = cur_;
}

void FileChain::check_closed() {
  if (ctx_.cfg().closed && prev_.valid && !prev_.missing && !prev_.aborted &&
      prev_.end == FileEnd::none) {
    ctx_.deliver(Diagnostic{
        Check::rotate_mismatch, Severity::error, prev_.log_name, prev_.end_offset,
        fmt::format("the last file of the chain does not end with a ROTATE or STOP event "
                    "(--closed): the server was still writing it, or the copy stops short at {}",
                    prev_.end_offset)});
  }
}

}  // namespace binlogctl::verify
