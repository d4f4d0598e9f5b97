// Event framing: magic number, the 19-byte common header, the format description event in
// force, checksums, torn tails and resynchronisation after damage.
//
// Common header (binlog v4), little-endian:
//   0  4  timestamp      seconds since the epoch
//   4  1  type_code      EventType
//   5  4  server_id
//   9  4  event_size     header + body + checksum
//  13  4  log_pos        end_log_pos: offset of the next event (0 in some relay/artificial
//                        events and inside MariaDB >= 11.4 transactions)
//  17  2  flags          LOG_EVENT_*_F
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/event_type.h>
#include <binlogctl/fde.h>
#include <binlogctl/source.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

// Largest event we accept: MySQL caps events at max_allowed_packet (1 GiB) plus headers.
constexpr std::uint64_t kMaxEventSize = (1ull << 30) + (1ull << 16);

struct EventHeader {
  std::uint32_t timestamp = 0;
  std::uint8_t type_code = 0;
  std::uint32_t server_id = 0;
  std::uint32_t event_size = 0;
  std::uint32_t log_pos = 0;
  std::uint16_t flags = 0;
};

// p has >= 19 bytes. Inline: every reader calls it once an event.
inline EventHeader parse_event_header(const std::uint8_t* p) noexcept {
  EventHeader h;
  h.timestamp = load_le32(p);
  h.type_code = p[4];
  h.server_id = load_le32(p + 5);
  h.event_size = load_le32(p + 9);
  h.log_pos = load_le32(p + 13);
  h.flags = load_le16(p + 17);
  return h;
}
// An event binlogctl writes, into `out` (replacing what it held): h's header (its event_size is
// not read: the size is the event's), the body `a` then `b`, and the CRC32 of it all when `crc`.
// Returns the bytes of `out`.
Bytes encode_event(const EventHeader& h, Bytes a, Bytes b, bool crc, std::vector<std::uint8_t>& out);
// The same for an event written at `start` of its file: its end_log_pos (h.log_pos is not read)
// is start + its size.
Bytes encode_event_at(std::uint64_t start, EventHeader h, Bytes a, Bytes b, bool crc,
                      std::vector<std::uint8_t>& out);

// One framed event. Every view borrows from the source (or the payload buffer) and stays
// valid until the next call to next() on the stream that produced it.
struct Event {
  std::uint64_t pos = 0;  // absolute offset of the event (inner events: offset in the payload)
  EventHeader header{};
  Bytes raw;              // the whole event
  Bytes body;             // after the common header, checksum excluded
  bool has_checksum = false;
  bool checksum_ok = true;
  std::uint32_t stored_crc = 0;
  std::uint32_t computed_crc = 0;
  std::int32_t inner_index = -1;  // >= 0 for events inside a TRANSACTION_PAYLOAD
  std::uint64_t payload_pos = 0;  // pos of that payload event
  const Fde* fde = nullptr;       // the format description in force (never null from next());
                                  // stays valid for the stream's life, even after later FDEs
  // The damage signal, the same for every consumer. `damage`: this event failed a check of the
  // framing (checksum_mismatch) and its bytes are not to be trusted as data. `skipped_before` /
  // `skip_check`: the reader resynchronised right before this event, over that many bytes,
  // after the check named (bad_event_size, checksum_mismatch, ...): a hole in the data.
  std::optional<Check> damage;
  std::uint64_t skipped_before = 0;
  Check skip_check = Check::bad_event_size;
  // Not damage: the input's producer left out this many bytes right before this event on
  // purpose (Source::gap_at; a server's GTID dump skips the transactions before its start).
  // What they held is unknown, so continuity checks (GTID sequences, the next file's GTID
  // header) cannot span them.
  std::uint64_t omitted_before = 0;

  std::uint8_t type_code() const noexcept { return header.type_code; }
  EventType type() const noexcept { return static_cast<EventType>(header.type_code); }
  bool is_inner() const noexcept { return inner_index >= 0; }
  std::uint64_t body_offset() const noexcept { return pos + (raw.size() - body.size() - (has_checksum ? kChecksumLen : 0)); }
  ByteReader body_reader() const noexcept { return ByteReader(body, body_offset()); }
};

struct StreamOptions {
  bool verify_checksums = true;
  bool resync = true;            // after damage, look for the next valid event
  bool expect_magic = true;      // false for the inner events of a payload
  // Start at the first event at or after this offset, once the first FDE has been read (the
  // events between are walked over by their headers, not read).
  std::uint64_t start_position = 0;
  // For inner streams: the FDE of the enclosing file and the payload event's position.
  const Fde* parent_fde = nullptr;
  std::int64_t payload_pos = -1;
  // Where the input says it ends (a payload's declared uncompressed size), 0 = not said: an
  // event whose size runs past it is bad_event_size, found without reading (or buffering) it.
  std::uint64_t end_limit = 0;
  // Let the source drop what is behind the current event (flat RSS). Off when another thread
  // still reads earlier events' bytes and releases them itself.
  bool release_behind = true;
};

class EventStream {
 public:
  EventStream(Source& src, std::string log_name, DiagnosticSink& diag, StreamOptions opts = {});

  // The next event, or false at the end of the input (or where the rest cannot be read).
  bool next(Event& ev);

  const std::string& log_name() const noexcept { return log_name_; }
  const Fde& fde() const noexcept { return fde_; }
  bool seen_fde() const noexcept { return seen_fde_; }
  std::uint64_t offset() const noexcept { return off_; }   // where the next event starts
  std::uint64_t skipped_bytes() const noexcept { return skipped_; }
  std::uint64_t events() const noexcept { return events_; }
  // True when the file stopped being readable (bad magic, encryption without the key, a key that
  // does not decrypt it, unsupported format).
  bool aborted() const noexcept { return aborted_; }
  // Set when the input goes on with another binlog file (magic number and format description
  // at an event boundary: files concatenated into one stream): the offset of its magic number.
  std::optional<std::uint64_t> next_file_at() const noexcept { return next_file_at_; }
  Source& source() noexcept { return src_; }
  std::uint64_t source_raw_size() const { return src_.raw_size(); }

 private:
  bool read_magic();
  std::uint64_t boundary_at_or_after(std::uint64_t target);
  bool plausible_at(std::uint64_t p, bool check_crc, std::uint64_t* size_out);
  bool file_starts_at(std::uint64_t p);
  void resync_from(std::uint64_t from, Check check, Severity sev, std::uint64_t at, std::string msg);
  void report(Check c, Severity s, std::uint64_t pos, std::string msg);
  void report_read_error(std::uint64_t pos);

  Source& src_;
  std::string log_name_;
  DiagnosticSink& diag_;
  StreamOptions opts_;
  Fde fde_;                      // the one in force
  std::deque<Fde> fde_history_;  // every FDE met, so that events keep a valid pointer to theirs
  bool seen_fde_ = false;
  bool started_ = false;
  bool done_ = false;
  bool aborted_ = false;
  bool jumped_ = false;
  std::uint64_t off_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t resync_crc_budget_ = 0;
  std::uint64_t pending_skip_ = 0;  // skipped since the last event handed out
  std::uint64_t pending_omit_ = 0;  // left out by the producer since the last event handed out
  Check pending_check_ = Check::bad_event_size;
  std::vector<std::uint8_t> damaged_copy_;
  std::optional<std::uint64_t> next_file_at_;  // the bytes of the damaged event last handed out
};

struct TransactionPayloadEvent;

// Expands a TRANSACTION_PAYLOAD event (MySQL 8.0.20+, zstd) into its inner events, streaming:
// memory is bounded by the largest inner event, not by the payload's size.
class PayloadExpander {
 public:
  PayloadExpander(const Event& payload, const TransactionPayloadEvent& p, std::string log_name,
                  DiagnosticSink& diag);
  ~PayloadExpander();
  PayloadExpander(const PayloadExpander&) = delete;
  PayloadExpander& operator=(const PayloadExpander&) = delete;
  bool next(Event& inner);
  std::uint64_t produced() const noexcept;  // uncompressed bytes so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace binlogctl
