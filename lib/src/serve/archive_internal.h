// The event side of serve, inside: what the archive knows of each file (archive.cpp) and what
// the cursor (cursor.cpp) reads it through. Not a public header.
#pragma once

#include <binlogctl/binlog_archive.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl::serve {

// Where a reader may find bytes of a file before the file has them (serve --upstream's tail,
// relay.h): one replica's view of it.
class TailFeed {
 public:
  virtual ~TailFeed() = default;
  // Bytes [off, off + n) of `log_name`, or empty (read the file); valid until the next call.
  virtual Bytes window(const std::string& log_name, std::uint64_t off, std::size_t n) = 0;
  // How far the tail holds `log_name` for this reader (0: nothing).
  virtual std::uint64_t end_of(const std::string& log_name) = 0;
};

// A plain file read with pread() into one buffer (no mapping: a file that `fetch` truncates
// when it resumes cannot fault the reader, and the resident memory is the buffer). The file may
// grow while it is read: a window reaches as far as the file has bytes now. Optionally a gap:
// the stream goes on at `to` when it reaches `from` (a start in the middle of a file, or the
// point where a grown file is read again).
class PreadSource final : public Source {
 public:
  explicit PreadSource(const std::string& path);  // throws std::system_error
  ~PreadSource() override;
  PreadSource(const PreadSource&) = delete;
  PreadSource& operator=(const PreadSource&) = delete;

  // Bytes the tail has for this file come from it (they equal the file's, which may not have
  // them yet); `feed` must outlive the source.
  void set_tail(TailFeed* feed, std::string log_name) {
    tail_ = feed;
    tail_name_ = std::move(log_name);
  }
  void set_gap(std::uint64_t from, std::uint64_t to) {
    gap_from_ = from;
    gap_to_ = to;
  }
  Bytes window(std::uint64_t off, std::size_t n) override;
  void release(std::uint64_t) override {}
  std::optional<std::uint64_t> size() const override { return std::nullopt; }
  std::uint64_t raw_position() const override { return pos_; }
  std::uint64_t raw_size() const override { return 0; }
  std::optional<std::uint64_t> gap_at(std::uint64_t off) override {
    if (off == gap_from_ && gap_to_ > gap_from_) return gap_to_;
    return std::nullopt;
  }
  // Bytes the file has now (fstat), for the cursor's "has it grown" look.
  std::uint64_t current_size() const;

 private:
  int fd_ = -1;
  std::vector<std::uint8_t> buf_;
  std::uint64_t buf_off_ = 0;
  std::size_t buf_len_ = 0;
  std::uint64_t pos_ = 0;
  std::uint64_t gap_from_ = ~0ull;
  std::uint64_t gap_to_ = 0;
  TailFeed* tail_ = nullptr;
  std::string tail_name_;
};

bool is_compressed_path(const std::string& path);

// Opens a file of the archive: a plain file read with pread() (*pread set to it), a compressed
// one streamed; with `keys`, an encrypted file decrypted (crypto.h: a view read at any event
// boundary for a plain file, a decrypting stream for a compressed one). Throws std::system_error.
std::unique_ptr<Source> open_archive_file(const std::string& path, const KeyRing* keys, PreadSource** pread = nullptr);

// What one scan of a file found (the archive keeps one per file, redone when the file's size or
// mtime changes; a grown plain file is scanned on from where the last scan stopped).
struct FileScan {
  // identity of what was scanned
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  std::uint64_t raw_size = 0;
  std::int64_t mtime_ns = 0;
  bool compressed = false;

  bool readable = false;   // opened and had the magic number
  std::string problem;     // why the scan stopped short ("" = at the end of the bytes)
  std::uint64_t end = 0;   // end of the last complete event
  bool torn = false;       // bytes after `end` that are not a whole event (yet)

  bool has_fde = false;
  std::uint64_t fde_end = 0;
  std::string server_version;
  bool mariadb = false;
  std::uint32_t server_id = 0;
  std::uint8_t checksum_alg = 0;

  bool closed = false;     // the last event is a ROTATE or a STOP
  std::string rotate_next; // the file the closing ROTATE names

  bool has_gtid_list = false;          // MariaDB: the file's Gtid_list (binlog state at its start)
  std::vector<MariaGtid> gtid_list;    // in the event's order (the last of a domain is its newest)
  MariaGtidList state_end;             // that list updated with the file's GTIDs
  std::vector<MariaGtid> domain_last;  // per domain, the newest GTID logged (list order, then file)
  bool has_previous_gtids = false;     // MySQL
  GtidSet previous_gtids;
  GtidSet executed_end;
  std::int64_t newest_time = 0;
  const char* row_metadata = nullptr;  // the newest TABLE_MAP's: "FULL", "MINIMAL", "NO_LOG"

  // the GTID of the group being read (counted when the group ends)
  int pending = 0;  // 0 none, 1 MariaDB transaction, 2 MariaDB standalone, 3 MySQL
  MariaGtid pending_maria{};
  Uuid pending_uuid{};
  std::string pending_tag;
  std::uint64_t pending_gno = 0;
};

struct ArchiveEntry {
  InputFile input;           // path as listed (as the user gave it), log name
  bool partial = false;      // fetch's NAME.partial
  std::shared_ptr<const FileScan> scan;  // null when missing or unreadable
};

struct Snapshot {
  std::vector<ArchiveEntry> files;  // chain order, missing ones included
  ArchiveState state;
  MariaGtidList binlog_state;             // MariaDB @@gtid_binlog_state at the end
  std::vector<MariaGtid> domain_last;     // per domain, the newest GTID logged
};

// MariaDB's Log_event::is_part_of_group: the events that go with the statement after them (its
// GTID, INTVAR, RAND, USER_VAR, TABLE_MAP, ANNOTATE_ROWS), so that a standalone statement's
// group ends at the first event that is not one of them (the archive's scan, the cursor's
// skipping and UNTIL).
bool is_part_of_group(std::uint8_t t) noexcept;

class Archive final : public BinlogArchive {
 public:
  Archive(std::vector<std::string> inputs, const KeyRing* keys);
  const KeyRing* keys() const { return keys_; }
  bool refresh(std::string& error) override;
  ArchiveState state() const override;
  std::shared_ptr<const Snapshot> snapshot() const;

 private:
  std::vector<std::string> inputs_;
  const KeyRing* keys_;
  std::mutex refresh_mu_;  // one refresh at a time
  mutable std::mutex snap_mu_;
  std::shared_ptr<const Snapshot> snap_;
};

}  // namespace binlogctl::serve
