// BinlogFeed (remote.h): what a replication stream sends, turned back into the events of the
// server's files. In the core library (no libmariadb): it reads packets from any PacketSource, so
// that its rules are unit-tested on packet lists.
#include <binlogctl/bytes.h>
#include <binlogctl/event_type.h>
#include <binlogctl/fde.h>
#include <binlogctl/remote.h>

#include <fmt/format.h>

namespace binlogctl {

namespace {
constexpr std::uint16_t kArtificialFlag = 0x20;  // LOG_EVENT_ARTIFICIAL_F
constexpr std::size_t kHeader = 19;

// ---- BinlogFeed ----

// In a GTID dump, an event the server may send right after transactions it left out: the next
// transaction's first event, or the file-level events between transactions.
bool may_follow_gap(EventType t) {
  switch (t) {
    case EventType::mariadb_gtid:
    case EventType::gtid:
    case EventType::anonymous_gtid:
    case EventType::gtid_tagged_log:
    case EventType::rotate:
    case EventType::stop:
    case EventType::mariadb_binlog_checkpoint:
      return true;
    default:
      return false;
  }
}

}  // namespace

BinlogFeed::BinlogFeed(PacketSource& client, const std::string& file, std::uint64_t pos, bool non_blocking,
                       bool gtid_dump)
    : c_(client), gtid_dump_(gtid_dump) {
  c_.start_dump(file, pos, non_blocking);
  item_.file = file;
  c_.track(&cur_file_, &next_pos_);  // failures name the file being read, not the one asked for
}

BinlogFeed::~BinlogFeed() { c_.track(nullptr, nullptr); }

BinlogFeed::Item& BinlogFeed::next() {
  for (;;) {
    if (!pending_file_.empty()) {
      // A file begins (its first event may be held): announce it, then hand out its events.
      item_.kind = Kind::file;
      item_.file = cur_file_ = std::move(pending_file_);
      item_.pos = next_pos_ = pending_pos_;
      pending_file_.clear();
      started_ = true;
      return item_;
    }
    Bytes raw;
    if (held_) {
      held_ = false;
      raw = held_raw_;
    } else {
      auto p = c_.next_packet();
      if (!p) {
        item_.kind = Kind::end;
        item_.raw = {};
        return item_;
      }
      raw = *p;
    }
    if (raw.size() < kHeader)
      throw RemoteError(fmt::format("server {}: a {}-byte packet in the binlog stream is shorter than an event header",
                                    c_.label(), raw.size()));
    const std::uint32_t ts = load_le32(raw.data());
    const std::uint8_t type = raw[4];
    const std::uint32_t size = load_le32(raw.data() + 9);
    const std::uint16_t flags = load_le16(raw.data() + 17);
    if (size != raw.size())
      throw RemoteError(fmt::format("server {}: event of {} bytes in a {}-byte packet", c_.label(), size, raw.size()));
    const auto t = static_cast<EventType>(type);
    if (t == EventType::heartbeat || t == EventType::heartbeat_v2) {
      if (!report_idle_) continue;
      item_.kind = Kind::idle;
      item_.raw = {};
      return item_;
    }
    if (t == EventType::rotate && (ts == 0 || (flags & kArtificialFlag) != 0)) {
      // Artificial: where the stream is (8-byte position, then the name, then a CRC32). Whether it
      // has a CRC follows the checksum of the file the server was reading (MariaDB: after a file
      // without checksums the next file's ROTATE has none), not only the negotiated one: the CRC
      // itself tells (a name whose last 4 bytes are its own CRC32 is a 1 in 2^32 chance).
      const bool has_crc = raw.size() >= kHeader + 8 + 4 &&
                           compute_event_crc(raw) == load_le32(raw.data() + raw.size() - 4);
      const std::size_t crc = has_crc ? 4 : 0;
      if (raw.size() < kHeader + 8 + crc) continue;
      const std::uint64_t pos = load_le(raw.data() + kHeader, 8);
      std::string name(reinterpret_cast<const char*>(raw.data()) + kHeader + 8, raw.size() - kHeader - 8 - crc);
      rotate_to_.clear();
      if (started_ && name == cur_file_) continue;
      pending_file_ = std::move(name);
      pending_pos_ = pos;
      skip_fde_ = pos > 4;
      if (gtid_dump_ && pos > 4) {
        // A GTID dump that starts inside the file (a server with a GTID index): the FDE copy is
        // the only format description the reader gets, so it stands at 4, and the gap up to the
        // position the ROTATE names (8 bytes: past 4 GiB too) comes before the next event.
        skip_fde_ = false;
        pending_pos_ = 4;
        resume_at_ = pos;
      }
      continue;
    }
    if ((flags & kArtificialFlag) != 0) continue;  // other artificial events (a GTID_LIST in GTID mode)
    if (t == EventType::format_description) {
      if (auto f = decode_fde(raw, next_pos_)) file_crc_ = f->crc32();
      if (skip_fde_) {  // the copy sent when a dump starts mid-file, not the file's own
        skip_fde_ = false;
        continue;
      }
      if (!rotate_to_.empty()) {
        // The next file's own FDE, after the last file's ROTATE, with no artificial ROTATE first.
        pending_file_ = std::move(rotate_to_);
        pending_pos_ = 4;
        rotate_to_.clear();
        held_ = true;
        held_raw_ = raw;
        continue;
      }
    }
    if (!started_) {
      started_ = true;
      cur_file_ = item_.file;
    }
    item_.kind = Kind::event;
    item_.file = cur_file_;
    item_.gap = 0;
    const std::uint32_t log_pos = load_le32(raw.data() + 13);
    if (resume_at_ != 0 && t != EventType::format_description) {
      if (resume_at_ > next_pos_) {
        item_.gap = resume_at_ - next_pos_;
        next_pos_ = resume_at_;
      }
      resume_at_ = 0;
    } else if (gtid_dump_ && log_pos != 0 && may_follow_gap(t)) {
      // end_log_pos holds the low 32 bits of the event's end: the nearest end at or after
      // next_pos_ + size with those bits.
      const std::uint64_t min_end = next_pos_ + size;
      std::uint64_t end = (min_end & ~0xffffffffull) | log_pos;
      if (end < min_end) end += 1ull << 32;
      if (end > min_end) {
        item_.gap = end - min_end;
        next_pos_ = end - size;
      }
    }
    item_.pos = next_pos_;
    item_.raw = raw;
    next_pos_ += size;
    if (t == EventType::rotate) {
      // The file's last event: the next file's name (after the 8-byte position; the CRC excluded).
      const std::size_t crc = file_crc_ ? 4 : 0;
      if (raw.size() >= kHeader + 8 + crc)
        rotate_to_.assign(reinterpret_cast<const char*>(raw.data()) + kHeader + 8, raw.size() - kHeader - 8 - crc);
    }
    return item_;
  }
}

}  // namespace binlogctl
