#include <binlogctl/crc32.h>
#include <binlogctl/event_stream.h>

#include "events/events.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace binlogctl {

namespace {

// Events at least this large have their CRC32 summed in pieces, each piece's pages let go once
// summed (Source::drop): checking a 1 GiB QUERY event holds a piece of it in memory, not all.
constexpr std::size_t kPieceCrcAt = 8u << 20;
constexpr std::size_t kCrcPiece = 4u << 20;

// compute_event_crc for an event other than a format description (whose in-use flag is left
// out of the sum), in pieces.
std::uint32_t piecewise_crc(Source& src, std::uint64_t pos, Bytes raw) {
  const std::size_t n = raw.size() - kChecksumLen;
  std::uint32_t crc = 0;
  for (std::size_t at = 0; at < n; at += kCrcPiece) {
    const std::size_t k = std::min(kCrcPiece, n - at);
    crc = crc32_update(crc, raw.data() + at, k);
    src.drop(pos + at, k);
  }
  return crc;
}

}  // namespace

Bytes encode_event(const EventHeader& h, Bytes a, Bytes b, bool crc, std::vector<std::uint8_t>& out) {
  const std::size_t size = kCommonHeaderLen + a.size() + b.size() + (crc ? kChecksumLen : 0);
  out.assign(size, 0);
  std::uint8_t* p = out.data();
  store_le32(p, h.timestamp);
  p[4] = h.type_code;
  store_le32(p + 5, h.server_id);
  store_le32(p + 9, static_cast<std::uint32_t>(size));
  store_le32(p + 13, h.log_pos);
  store_le16(p + 17, h.flags);
  if (!a.empty()) std::memcpy(p + kCommonHeaderLen, a.data(), a.size());
  if (!b.empty()) std::memcpy(p + kCommonHeaderLen + a.size(), b.data(), b.size());
  if (crc) store_le32(p + size - kChecksumLen, compute_event_crc(Bytes(out.data(), size)));
  return {out.data(), out.size()};
}

Bytes encode_event_at(std::uint64_t start, EventHeader h, Bytes a, Bytes b, bool crc,
                      std::vector<std::uint8_t>& out) {
  h.log_pos = static_cast<std::uint32_t>(start + kCommonHeaderLen + a.size() + b.size() + (crc ? kChecksumLen : 0));
  return encode_event(h, a, b, crc, out);
}

EventStream::EventStream(Source& src, std::string log_name, DiagnosticSink& diag, StreamOptions opts)
    : src_(src), log_name_(std::move(log_name)), diag_(diag), opts_(opts) {
  if (opts_.parent_fde != nullptr) {
    fde_ = *opts_.parent_fde;
    fde_.checksum = ChecksumAlg::off;  // inner events carry no checksum
    seen_fde_ = true;
  } else {
    fde_ = default_fde();
  }
  fde_history_.push_back(fde_);
  auto sz = src_.size();
  resync_crc_budget_ = 4 * (sz ? *sz : 0) + (64u << 20);
}

void EventStream::report(Check c, Severity s, std::uint64_t pos, std::string msg) {
  if (opts_.payload_pos >= 0) {
    msg = fmt::format("in the transaction payload, inner offset {}: {}", pos, msg);
    pos = static_cast<std::uint64_t>(opts_.payload_pos);
  }
  diag_.report(Diagnostic{c, s, log_name_, pos, std::move(msg)});
}

// The input stopped short: an I/O or archive error, or an encrypted binlog that the keys given
// do not decrypt (the decrypting stream's message names the offset, key id and key files).
void EventStream::report_read_error(std::uint64_t pos) {
  const DecodeError& e = src_.read_error();
  if (e.code == Errc::decrypt_failed) {
    report(Check::decryption_failed, Severity::error, pos, e.what);
    aborted_ = true;
  } else {
    report(Check::read_error, Severity::error, pos, fmt::format("input cannot be read past here: {}", e.what));
  }
}

bool EventStream::read_magic() {
  Bytes m = src_.window(0, 4);
  if (m.size() < 4 && src_.read_error().code == Errc::decrypt_failed) {  // an encrypted file the keys do not open
    report_read_error(0);
    return false;
  }
  if (m.size() < 4) {
    report(Check::bad_magic, Severity::error, 0,
           m.empty() ? std::string("empty file: no binlog magic number")
                     : fmt::format("file is {} bytes long, too short for the binlog magic number", m.size()));
    aborted_ = true;
    return false;
  }
  if (std::memcmp(m.data(), kBinlogMagic, 4) == 0) {
    off_ = 4;
    return true;
  }
  if (m[0] == 0xfd && m[1] == 0x62 && m[2] == 0x69 && m[3] == 0x6e) {
    report(Check::unsupported_format, Severity::error, 0,
           "encrypted MySQL binlog (magic fd 62 69 6e: MySQL 8.0.14+ binlog_encryption): give the server's keyring "
           "file (keyring_file_data) with --keyring-file, or read it from the server with -R, which sends it decrypted");
  } else {
    report(Check::bad_magic, Severity::error, 0,
           fmt::format("not a binlog: first bytes {:02x} {:02x} {:02x} {:02x}, expected fe 62 69 6e",
                       m[0], m[1], m[2], m[3]));
  }
  aborted_ = true;
  return false;
}

// Does a plausible event start at p? Used to find our footing again after damage.
bool EventStream::plausible_at(std::uint64_t p, bool check_crc, std::uint64_t* size_out) {
  Bytes w = src_.window(p, kCommonHeaderLen);
  if (w.size() < kCommonHeaderLen) return false;
  EventHeader h = parse_event_header(w.data());
  const bool crc = seen_fde_ && fde_.crc32();
  const std::uint64_t min_size = kCommonHeaderLen + (crc ? kChecksumLen : 0);
  if (h.event_size < min_size || h.event_size > kMaxEventSize) return false;
  if (!is_known_event_type(h.type_code)) return false;
  const std::uint32_t end32 = static_cast<std::uint32_t>(p + h.event_size);
  if (!crc && h.log_pos != 0 && h.log_pos != end32) return false;
  if (check_crc && crc) {
    if (resync_crc_budget_ < h.event_size) return false;
    Bytes ev = src_.window(p, h.event_size);
    if (ev.size() < h.event_size) return false;
    resync_crc_budget_ -= h.event_size;
    if (compute_event_crc(ev) != load_le32(ev.data() + ev.size() - kChecksumLen)) return false;
  }
  if (size_out != nullptr) *size_out = h.event_size;
  return true;
}

// Does another binlog file start at p: its magic number, then a format description event that
// looks right (type, a size a FDE can have, binlog version 4)? That is what concatenated files
// (`cat a.000001 a.000002 | binlogctl verify -`) look like at the seam. An event of a file never
// begins this way by chance: its timestamp would have to be the magic and its type byte the low
// byte of the FDE's timestamp, with a FDE-shaped event after.
bool EventStream::file_starts_at(std::uint64_t p) {
  if (!opts_.expect_magic || !seen_fde_ || p <= 4) return false;
  Bytes w = src_.window(p, 4 + kCommonHeaderLen + 2);
  if (w.size() < 4 + kCommonHeaderLen + 2 || std::memcmp(w.data(), kBinlogMagic, 4) != 0) return false;
  const EventHeader h = parse_event_header(w.data() + 4);
  if (h.type_code != static_cast<std::uint8_t>(EventType::format_description)) return false;
  if (h.event_size < kCommonHeaderLen + 2 + 50 + 4 + 1 || h.event_size > 64 * 1024) return false;
  return load_le16(w.data() + 4 + kCommonHeaderLen) == 4;
}

void EventStream::resync_from(std::uint64_t from, Check check, Severity sev, std::uint64_t at,
                              std::string msg) {
  const bool crc = seen_fde_ && fde_.crc32();
  const std::uint64_t min_size = kCommonHeaderLen + (crc ? kChecksumLen : 0);
  // Scanned a window at a time, with a cheap look at each offset's size and type first; what is
  // behind the scan is released as it goes, so that skipping a long run of garbage on a stream
  // keeps only a window in memory. (A damaged event handed out after this scan was copied first.)
  constexpr std::size_t kScan = 64 * 1024;
  std::uint64_t p = from;
  for (;;) {
    if (opts_.release_behind) src_.release(p);
    Bytes w = src_.window(p, kScan + kCommonHeaderLen);
    if (w.size() < kCommonHeaderLen) break;
    const std::size_t last = w.size() - kCommonHeaderLen;
    std::size_t i = 0;
    for (; i <= last; ++i) {
      const std::uint8_t* h = w.data() + i;
      const std::uint32_t size = load_le32(h + 9);
      if (size >= min_size && size <= kMaxEventSize && is_known_event_type(h[4])) break;
      if (h[0] == kBinlogMagic[0] && opts_.expect_magic) break;  // the start of a next file?
    }
    if (i > last) {  // nothing here: on to the next window (its first candidate is last + 1)
      p += last + 1;
      continue;
    }
    p += i;  // a candidate; the checks below may move the stream's buffer (w is not used again)
    std::uint64_t size = 0;
    const bool next_file = file_starts_at(p);
    bool ok = next_file || plausible_at(p, true, &size);
    if (ok && !crc && !next_file) {
      // Without checksums, also ask the event after it to look right (or the file to end there),
      // and the candidate to fit in the input: a header read out of damaged bytes often declares
      // a size past the end.
      if (src_.window(p, size).size() < size) {
        ok = false;
      } else {
        Bytes next = src_.window(p + size, 1);
        std::uint64_t next_size = 0;
        if (!next.empty() && !plausible_at(p + size, false, &next_size)) ok = false;
      }
    }
    if (!ok) {
      ++p;
      continue;
    }
    skipped_ += p - at;
    pending_skip_ += p - at;
    pending_check_ = check;
    report(check, sev, at, fmt::format("{}; resynchronised at {} after skipping {} bytes", msg, p, p - at));
    off_ = p;
    return;
  }
  Bytes tail = src_.window(p, kCommonHeaderLen);
  const std::uint64_t end = p + tail.size();
  skipped_ += end - at;
  report(check, sev, at, fmt::format("{}; no valid event in the remaining {} bytes", msg, end - at));
  done_ = true;
}

// The first event boundary at or after `target`, found by walking the event headers from the
// current offset (never by parsing from the middle of an event). Where a header cannot be
// walked over (damage, or the input ends first), the walk stops and `target` is taken as given,
// so that what is there gets reported as it would be.
std::uint64_t EventStream::boundary_at_or_after(std::uint64_t target) {
  std::uint64_t p = off_;
  while (p < target) {
    if (opts_.release_behind) src_.release(p);
    Bytes w = src_.window(p, kCommonHeaderLen);
    if (w.size() < kCommonHeaderLen) return target;
    const EventHeader h = parse_event_header(w.data());
    if (h.event_size < kCommonHeaderLen || h.event_size > kMaxEventSize) return target;
    p += h.event_size;
  }
  return p;
}

bool EventStream::next(Event& ev) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    if (opts_.expect_magic && !read_magic()) {
      done_ = true;
      return false;
    }
  }
  for (;;) {
    if (!jumped_ && opts_.start_position > off_ && seen_fde_) {
      jumped_ = true;
      off_ = boundary_at_or_after(opts_.start_position);
    }
    if (opts_.release_behind) src_.release(off_);
    if (auto to = src_.gap_at(off_)) {  // left out on purpose: go on where the bytes do
      pending_omit_ += *to - off_;
      off_ = *to;
      continue;
    }
    Bytes w = src_.window(off_, kCommonHeaderLen);
    if (w.size() < kCommonHeaderLen) {
      if (src_.read_error().code != Errc::ok) {
        report_read_error(off_);
      } else if (!w.empty()) {
        report(Check::truncated_event, Severity::error, off_,
               fmt::format("file ends inside an event header ({} of 19 bytes)", w.size()));
      }
      done_ = true;
      return false;
    }
    // Parsed before the look below: it reads further, which can move a stream's buffer under w.
    const EventHeader h = parse_event_header(w.data());
    if (w[0] == kBinlogMagic[0] && file_starts_at(off_)) {  // the next file of a concatenation
      next_file_at_ = off_;
      done_ = true;
      return false;
    }
    const std::uint64_t pos = off_;
    const bool is_fde = h.type_code == static_cast<std::uint8_t>(EventType::format_description);
    if (events_ == 0 && opts_.expect_magic && h.type_code == static_cast<std::uint8_t>(EventType::start_v3)) {
      report(Check::unsupported_format, Severity::error, pos,
             "binlog v1/v3 (starts with a START_EVENT_V3): only binlog v4 (MySQL 5.0+) is supported");
      aborted_ = true;
      done_ = true;
      return false;
    }
    const bool crc_expected = !is_fde && seen_fde_ && fde_.crc32();
    const std::uint64_t min_size = kCommonHeaderLen + (crc_expected ? kChecksumLen : 0);
    const bool past_end = opts_.end_limit != 0 && h.event_size > opts_.end_limit - std::min(pos, opts_.end_limit);
    if (h.event_size < min_size || h.event_size > kMaxEventSize || past_end) {
      std::string msg = fmt::format("event size {} is {} (type {}, at offset {})", h.event_size,
                                    h.event_size < min_size ? fmt::format("below the minimum of {}", min_size)
                                    : past_end ? fmt::format("past the {} bytes its transaction payload declares", opts_.end_limit)
                                               : std::string("past any sane bound"),
                                    h.type_code, pos);
      if (!opts_.resync) {
        report(Check::bad_event_size, Severity::error, pos, std::move(msg));
        done_ = true;
        return false;
      }
      resync_from(pos + 1, Check::bad_event_size, Severity::error, pos, std::move(msg));
      if (done_) return false;
      continue;
    }
    Bytes raw = src_.window(pos, h.event_size);
    if (raw.size() < h.event_size) {
      if (src_.read_error().code != Errc::ok) {
        report_read_error(pos);
      } else {
        report(Check::truncated_event, Severity::error, pos,
               fmt::format("file ends inside an event: {} bytes declared, {} present (type {})",
                           h.event_size, raw.size(), event_type_constant(h.type_code)));
      }
      done_ = true;
      return false;
    }

    // Field by field: a whole-struct reset costs a memset per event on the hot path.
    ev.pos = pos;
    ev.header = h;
    ev.raw = raw;
    ev.body = {};
    ev.has_checksum = false;
    ev.checksum_ok = true;
    ev.stored_crc = ev.computed_crc = 0;
    ev.inner_index = -1;
    ev.payload_pos = opts_.payload_pos >= 0 ? static_cast<std::uint64_t>(opts_.payload_pos) : 0;
    ev.fde = nullptr;
    ev.damage.reset();
    ev.skipped_before = pending_skip_;
    ev.skip_check = pending_check_;
    ev.omitted_before = pending_omit_;

    if (is_fde) {
      auto f = decode_fde(raw, pos);
      if (!f) {
        const auto& e = f.error();
        report(e.code == Errc::unsupported_format ? Check::unsupported_format : Check::undecodable_event,
               Severity::error, e.offset, fmt::format("format description event: {}", e.what));
        aborted_ = e.code == Errc::unsupported_format;
        if (aborted_ || !seen_fde_) {
          aborted_ = true;
          done_ = true;
          return false;
        }
      } else {
        fde_ = std::move(f.value());
        seen_fde_ = true;
        fde_history_.push_back(fde_);
      }
      ev.has_checksum = fde_.has_checksum_field && fde_.crc32();
    } else if (seen_fde_) {
      ev.has_checksum = fde_.crc32();
    } else {
      // Before any FDE (relay logs, dump streams): the event carries a checksum if it checks out.
      ev.has_checksum = h.event_size >= kCommonHeaderLen + kChecksumLen &&
                        compute_event_crc(raw) == load_le32(raw.data() + raw.size() - kChecksumLen);
      if (events_ == 0 && opts_.expect_magic && h.type_code != static_cast<std::uint8_t>(EventType::rotate)) {
        report(Check::missing_format_description, Severity::error, pos,
               fmt::format("first event is {}, not a format description", event_type_constant(h.type_code)));
      }
    }
    const std::size_t chl = std::max<std::size_t>(fde_.common_header_len, kCommonHeaderLen);
    const std::size_t tail = ev.has_checksum ? kChecksumLen : 0;
    if (raw.size() < chl + tail) {
      resync_from(pos + 1, Check::bad_event_size, Severity::error, pos,
                  fmt::format("event size {} is below the common header length {}", h.event_size, chl + tail));
      if (done_) return false;
      continue;
    }
    ev.body = raw.subspan(chl, raw.size() - chl - tail);
    ev.fde = &fde_history_.back();
    off_ = pos + h.event_size;
    ++events_;
    pending_skip_ = 0;
    pending_omit_ = 0;

    if (ev.has_checksum && opts_.verify_checksums) {
      ev.stored_crc = load_le32(raw.data() + raw.size() - kChecksumLen);
      ev.computed_crc = raw.size() >= kPieceCrcAt && !is_fde ? piecewise_crc(src_, pos, raw) : compute_event_crc(raw);
      if (ev.stored_crc != ev.computed_crc) {
        ev.checksum_ok = false;
        ev.damage = Check::checksum_mismatch;
        std::string msg = fmt::format("stored 0x{:08x}, computed 0x{:08x}", ev.stored_crc, ev.computed_crc);
        // If the size field itself is what got damaged, the next event will not be where it
        // says: find our footing instead of trusting it.
        // The damaged event is still handed out, marked bad. Looking ahead moves a stream's
        // buffer and resynchronising releases what is behind it: the event's bytes are copied
        // first (damage is rare; the copy lives until the next damaged event, i.e. past the
        // next call, as views must). Not when another thread reads this file's events (a
        // mapped file, nothing released): its views stay valid, and a copy would be overwritten
        // while a batch still points into it.
        if (opts_.release_behind || !src_.size()) {
          damaged_copy_.assign(raw.begin(), raw.end());
          ev.raw = Bytes(damaged_copy_.data(), damaged_copy_.size());
          ev.body = ev.raw.subspan(chl, ev.raw.size() - chl - tail);
        }
        // A header read out of damaged bytes often declares a size past the end: a next event that
        // would run past the end of an input of known size is not taken as the next one either.
        Bytes after = src_.window(off_, 1);
        std::uint64_t ns = 0;
        const std::optional<std::uint64_t> end = src_.size();
        const bool next_ok = plausible_at(off_, false, &ns) && (!end || ns <= *end - std::min(off_, *end));
        if (opts_.resync && !after.empty() && !next_ok && !file_starts_at(off_)) {
          resync_from(pos + 1, Check::checksum_mismatch, Severity::error, pos, std::move(msg));
        } else {
          report(Check::checksum_mismatch, Severity::error, pos, std::move(msg));
        }
      }
    }
    if (!is_known_event_type(h.type_code)) {
      report(Check::unknown_event_type, Severity::warning, pos,
             fmt::format("unknown event type {} ({} bytes), skipped", h.type_code, h.event_size));
    }
    // MariaDB's encrypted binlogs: the events after START_ENCRYPTION are encrypted, unless it
    // carries LOG_EVENT_IGNORABLE_F, as a server sends it over the replication protocol with the
    // events decrypted (and as a decrypting input hands it out): then the file reads on.
    if (h.type_code == static_cast<std::uint8_t>(EventType::mariadb_start_encryption) && (h.flags & 0x80) == 0) {
      report(Check::unsupported_format, Severity::error, pos,
             "START_ENCRYPTION: the rest of this binlog is encrypted (MariaDB encrypt_binlog): read it with the "
             "server's key file (--key-file)");
      aborted_ = true;
      done_ = true;
    }
    return true;
  }
}

// ---- transaction payloads ------------------------------------------------------------------------


struct PayloadExpander::Impl {
  std::unique_ptr<Source> src;
  std::unique_ptr<EventStream> stream;
  DiagnosticSink& diag;
  std::string log_name;
  std::uint64_t declared = 0;
  std::uint64_t payload_pos = 0;
  std::int32_t index = 0;
  bool checked = false;
  explicit Impl(DiagnosticSink& d) : diag(d) {}
};

PayloadExpander::PayloadExpander(const Event& payload, const TransactionPayloadEvent& p,
                                 std::string log_name, DiagnosticSink& diag)
    : impl_(std::make_unique<Impl>(diag)) {
  impl_->log_name = std::move(log_name);
  impl_->declared = p.uncompressed_size;
  impl_->payload_pos = payload.pos;
  std::unique_ptr<ByteStream> in = memory_stream(p.payload);
  if (p.compression_type == 0) in = decompress_stream(std::move(in), Compression::zstd);
  impl_->src = stream_source(std::move(in));
  StreamOptions o;
  o.expect_magic = false;
  o.parent_fde = payload.fde;
  o.payload_pos = static_cast<std::int64_t>(payload.pos);
  o.end_limit = p.uncompressed_size;  // no inner event is buffered past what the payload declares
  impl_->stream = std::make_unique<EventStream>(*impl_->src, impl_->log_name, diag, o);
}

PayloadExpander::~PayloadExpander() = default;

std::uint64_t PayloadExpander::produced() const noexcept { return impl_->stream->offset(); }

bool PayloadExpander::next(Event& inner) {
  if (impl_->stream->next(inner)) {
    inner.inner_index = impl_->index++;
    inner.payload_pos = impl_->payload_pos;
    return true;
  }
  if (!impl_->checked) {
    impl_->checked = true;
    const std::uint64_t got = impl_->stream->offset();
    if (impl_->src->read_error().code == Errc::ok && got != impl_->declared) {
      impl_->diag.report(Diagnostic{Check::bad_event_size, Severity::error, impl_->log_name, impl_->payload_pos,
                                    fmt::format("transaction payload declares {} uncompressed bytes, its events take {}",
                                                impl_->declared, got)});
    }
  }
  return false;
}

}  // namespace binlogctl
