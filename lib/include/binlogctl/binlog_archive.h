// What `binlogctl serve` serves: an archive of binlog files (DIR|INDEX|FILE..., as the command
// line gave them, read through the input seam, so .gz/.zst are served without unpacking) and a
// per-replica cursor that hands out verified events ready for the wire.
//
// This header is the seam between the two halves of serve: the protocol side
// (lib/src/serve/protocol*, server*, tools/cmd_serve.cpp) and the event side
// (lib/src/serve/archive*, cursor*). The protocol side knows nothing of files; the event side
// knows nothing of sockets.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/gtid.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct ArchiveFile {
  std::string log_name;     // as the server knew it (SHOW BINARY LOGS' Log_name)
  std::string path;         // what is opened
  std::uint64_t size = 0;   // bytes of binlog (after decompression where known, else 0)
  bool live = false;        // the growing end (fetch --stop-never's .partial, or a file without
                            // its closing ROTATE/STOP that may still grow)
};

// Values a replica's setup queries ask for, taken from the files (never invented).
struct ArchiveState {
  std::vector<ArchiveFile> files;     // SHOW BINARY LOGS, in chain order
  bool mariadb = false;               // written by MariaDB (FDE server version)
  std::string server_version;         // newest FDE's server version, e.g. "10.11.6-MariaDB-log"
  std::uint32_t server_id = 0;        // server id of the newest file's events (not FDE-only files)
  std::uint8_t checksum_alg = 0;      // newest FDE: 0 NONE, 1 CRC32 (@@global.binlog_checksum)
  std::string gtid_binlog_pos;        // MariaDB: GTID state at the end of the archive ("0-1-100,...")
  std::string gtid_executed;          // MySQL: the GTID set executed at the end ("uuid:1-5,...")
  std::string end_file;               // SHOW MASTER STATUS File / Position: where the next event goes
  std::uint64_t end_position = 0;
  std::int64_t newest_event_time = 0; // timestamp of the newest event (replica lag in the status)
  std::string binlog_row_metadata;    // what the newest TABLE_MAP shows: FULL (column names),
                                      // MINIMAL (other optional metadata), NO_LOG; "" = no TABLE_MAP
};

class BinlogArchive {
 public:
  virtual ~BinlogArchive() = default;
  // Re-lists the inputs and brings the state up to date (cheap when nothing changed). Thread-safe:
  // every connection calls it. An error is a message naming the input ("path: reason").
  virtual bool refresh(std::string& error) = 0;
  virtual ArchiveState state() const = 0;
};

class KeyRing;

// The archive of the command line's inputs; with `keys` (which must outlive it), MariaDB's
// encrypted binlogs are served decrypted, as a primary that encrypts its binlogs sends them: the
// same positions, START_ENCRYPTION flagged ignorable when a dump starts at the top of a file
// (read, not sent, when it starts further in).
std::unique_ptr<BinlogArchive> open_archive(const std::vector<std::string>& inputs, const KeyRing* keys = nullptr);

// What a replica asked for, from its COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID and the user
// variables it set before it.
//
// Named ServeDumpRequest: remote.h already has a binlogctl::DumpRequest (the client's packet), and
// binlogctl links both, so one name for two classes would break the one-definition rule (their
// inline constructors would silently be merged). The alias keeps `DumpRequest` for code that does
// not include remote.h; code that includes both uses ServeDumpRequest.
struct ServeDumpRequest {
  std::string file;                           // COM_BINLOG_DUMP's file name; "" = first file
  std::uint64_t position = 4;                 // COM_BINLOG_DUMP's position
  std::uint32_t replica_server_id = 0;
  bool non_blocking = false;                  // BINLOG_DUMP_NON_BLOCK: end at the end of the files
  bool replica_checksum = false;              // SET @master_binlog_checksum (not 'NONE'): the first
                                              // artificial ROTATE gets a CRC32 (events always go as
                                              // stored, later artificial ones as their file's FDE says)
  bool send_annotate_rows = true;             // COM_BINLOG_DUMP flag 2 (BINLOG_SEND_ANNOTATE_ROWS_EVENT):
                                              // false leaves ANNOTATE_ROWS out, as a primary does
  int mariadb_capability = 0;                 // @mariadb_slave_capability (4: GTID aware)
  std::optional<std::string> mariadb_connect_state;  // @slave_connect_state ("" = from the start)
  std::optional<std::string> mariadb_until_gtid;     // @slave_until_gtid
  bool mariadb_gtid_strict = false;           // @slave_gtid_strict_mode
  bool mariadb_ignore_duplicates = false;     // @slave_gtid_ignore_duplicates
  std::optional<GtidSet> mysql_gtids;         // COM_BINLOG_DUMP_GTID: GTIDs the replica has
};
using DumpRequest = ServeDumpRequest;

struct CursorStep {
  enum class Kind : std::uint8_t {
    event,  // `bytes` is one event as it goes on the wire after the 0x00 byte
    wait,   // at the live end with nothing new: wait (poll) and call next() again
    end,    // non-blocking dump at the end of the files (send EOF), or UNTIL reached
    error   // damage or an impossible request: `message` goes into an ERR packet (1236)
  };
  Kind kind = Kind::end;
  Bytes bytes;          // valid until the next call to next()
  std::string message;  // error: "FILE: offset N: what", the file as the user gave it
};

// One replica's position in the archive. Nothing unverified comes out of it: every event has
// passed the framing's checks (checksum, end_log_pos chain, rotation, file sequence, transaction
// grammar) before next() returns it; after an error nothing more is returned. Memory is bounded
// whatever the files' sizes: an event is a view into a mapped file where it can be, or into one
// buffer of at most one event (streamed archives, an event whose checksum had to be recomputed);
// the protocol side splits events of 16 MiB and more into several packets.
class DumpCursor {
 public:
  virtual ~DumpCursor() = default;
  // First the artificial ROTATE, the file's FDE (IN_USE cleared, log_pos 0 when the start is past
  // it), then the events; with a GTID start, a fake GTID_LIST after the skipped groups (as a
  // 10.11 primary sends it, testdata/serve captures).
  virtual CursorStep next() = 0;
  // Where the replica is: the file and end position of the last event handed out.
  virtual const std::string& file() const = 0;
  virtual std::uint64_t position() const = 0;
  virtual std::int64_t last_event_time() const = 0;
  // A HEARTBEAT_LOG_EVENT (type 27) for the current file and position, checksummed as the replica
  // asked; valid until the next call.
  virtual Bytes heartbeat() = 0;
  // serve --upstream: its replica id in the relay (relay.h), for the status.
  virtual std::optional<std::uint32_t> relay_replica() const { return std::nullopt; }
};

// SELECT binlog_gtid_pos('FILE', POS): the MariaDB GTID position at that point of the archive (the
// file's Gtid_list updated with the GTIDs before POS, one per domain, "" when none), or false with
// the message a primary gives (unknown file, a position that is not an event boundary).
bool binlog_gtid_pos(BinlogArchive& archive, const std::string& file, std::uint64_t pos, std::string& out,
                     std::string& error);

// Opens a cursor, or fails with the message a primary would send (unknown file, a position that
// is not an event boundary, a GTID not in the archive, ...), as `error`.
std::unique_ptr<DumpCursor> open_cursor(BinlogArchive& archive, const ServeDumpRequest& req,
                                        std::string& error);
// The same, for serve --upstream: the cursor is a replica of `relay` (relay.h), which hands it
// the events of the live end from memory while it is near it (the files otherwise).
class RelayTail;
std::unique_ptr<DumpCursor> open_cursor(BinlogArchive& archive, const ServeDumpRequest& req,
                                        std::string& error, RelayTail* relay);

}  // namespace binlogctl
