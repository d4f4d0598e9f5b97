// Reading a live server over the replication protocol (COM_BINLOG_DUMP), as mysqlbinlog -R does.
//
// MariaDB Connector/C (libmariadb) connects, negotiates TLS and authenticates; the dump command and
// the packets are binlogctl's own, so that every byte the server sends reaches the reader as it is
// (Connector/C's mariadb_rpl_fetch drops event types it does not know and rewrites ROTATE names).
// Built only when libmariadb is found (BINLOGCTL_HAVE_REMOTE, target binlogctl_remote); the types
// here are declared either way so that front ends can name them.
//
// What the server sends is not quite what its files hold: an artificial ROTATE (timestamp 0, flag
// LOG_EVENT_ARTIFICIAL_F) naming the file and position at the start and after each rotation,
// heartbeats, and, when a dump starts past position 4, a copy of the format description (log_pos
// 0). BinlogFeed drops those and tags every real event with its file and position; the readers
// built on it hand the chain reader exactly the bytes of the server's files.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace binlogctl {

struct RemoteOptions {
  std::string host;    // "" with no socket: localhost
  unsigned port = 0;   // 0: 3306
  std::string socket;  // a unix socket path (instead of host and port)
  std::string user;
  std::optional<std::string> password;
  // DISABLED, PREFERRED (default: TLS when the server offers it), REQUIRED, VERIFY_CA,
  // VERIFY_IDENTITY (Connector/C checks the chain and the host name for both VERIFY modes).
  std::string ssl_mode = "PREFERRED";
  std::string ssl_ca, ssl_cert, ssl_key;
  // The replica server id the dump is made under; 0 picks one from the process id. Two dumps under
  // the same id make the server drop the older one.
  std::uint32_t server_id = 0;
  // Follow the live end (wait for new events) instead of stopping at the server's current end.
  bool stop_never = false;
  // MariaDB: start where a replica with this GTID position would (a list of domain-server-seq,
  // at most one per domain: @slave_connect_state). The server picks the file and leaves out the
  // transactions up to the position; the read follows the files after it.
  std::string start_gtid;
  // MySQL: the GTID set COM_BINLOG_DUMP_GTID sends (the server leaves its transactions out).
  // Empty: position dumps (COM_BINLOG_DUMP), except from past 4 GiB.
  GtidSet mysql_exclude;
  // Where a -R read under stop_never reports its reconnects (the CLI: stderr); nullptr: silent.
  std::FILE* notices = nullptr;
  unsigned connect_timeout = 10;   // seconds
  unsigned heartbeat_seconds = 15; // server heartbeats while idle (so a dead link is noticed)
};

// A connection problem, named by server and reason (wrong password, unknown host, missing
// privilege, purged file, binlog disabled, connection lost).
class RemoteError : public std::runtime_error {
 public:
  RemoteError(const std::string& what, unsigned server_errno = 0, bool permanent = false)
      : std::runtime_error(what), server_errno_(server_errno), permanent_(permanent) {}
  unsigned server_errno() const noexcept { return server_errno_; }
  // A request that cannot work however often it is made (a position the dump command cannot
  // carry, a GTID start on the wrong server): --stop-never does not reconnect for it.
  bool permanent() const noexcept { return permanent_; }

 private:
  unsigned server_errno_;
  bool permanent_;
};

// ER_MASTER_FATAL_ERROR_READING_BINLOG: the server cannot send the file (purged, missing,
// unreadable); reconnecting does not bring it back.
inline constexpr unsigned kErrReadingBinlog = 1236;

// The wait between reconnects under --stop-never (fetch and the -R readers): `backoff` seconds
// in 100 ms steps, cut short when *stop becomes true (stop may be null) or request_remote_stop()
// is called, then `backoff` doubles,
// up to 30 s.
void reconnect_wait(unsigned& backoff, const std::atomic<bool>* stop);

// Ends the -R reads of this process (remote_inputs) cleanly: each stops after the last complete
// event it handed out, as at the end of its input (the connection being read is shut down to
// wake the read). Async-signal-safe: for the SIGINT/SIGTERM handlers of --stop-never reads.
void request_remote_stop() noexcept;
bool remote_stop_requested() noexcept;

// How messages name the server: "host:port" or the socket path.
inline std::string server_label(const RemoteOptions& o) {
  if (!o.socket.empty()) return o.socket;
  return (o.host.empty() ? std::string("localhost") : o.host) + ":" + std::to_string(o.port == 0 ? 3306u : o.port);
}

// ---- the dump commands (their bodies, after the command byte) ----
//
// COM_BINLOG_DUMP (0x12), both servers: 4 position | 2 flags | 4 server id | file name (to the end
// of the packet). The position has 4 bytes: a dump cannot start at or past 4 GiB.
// COM_BINLOG_DUMP_GTID (0x1e), MySQL 5.6+ (sql/rpl_source.cc, com_binlog_dump_gtid; client side
// libmysql mysql_binlog_open and client/mysqlbinlog.cc): 2 flags | 4 server id | 4 name length |
// name | 8 position | 4 data size | data = the GTID set the replica has (encode_gtid_set), whose
// transactions the server leaves out. MySQL reads the data size and the set whatever the flags
// say (an empty set is the 8-byte count 0, never 0 bytes: add_gtid_encoding refuses fewer than 8),
// and refuses the command unless GTID_MODE = ON (Binlog_sender::init).
inline constexpr std::uint8_t kComBinlogDump = 0x12;
inline constexpr std::uint8_t kComBinlogDumpGtid = 0x1e;
inline constexpr std::uint16_t kDumpNonBlock = 1;         // BINLOG_DUMP_NON_BLOCK
inline constexpr std::uint16_t kDumpAnnotateRows = 2;     // MariaDB BINLOG_SEND_ANNOTATE_ROWS_EVENT
inline constexpr std::uint16_t kDumpThroughGtid = 4;      // MySQL BINLOG_THROUGH_GTID
inline constexpr std::uint64_t kMaxDumpPosition = 0xffffffffu;  // COM_BINLOG_DUMP's 4 bytes

// Throws std::invalid_argument for a position above kMaxDumpPosition.
std::vector<std::uint8_t> encode_binlog_dump(const std::string& file, std::uint64_t pos, std::uint16_t flags,
                                             std::uint32_t server_id);
std::vector<std::uint8_t> encode_binlog_dump_gtid(const std::string& file, std::uint64_t pos, std::uint16_t flags,
                                                  std::uint32_t server_id, const GtidSet& exclude);
// A MySQL GTID set as Gtid_set::encode writes it (sql/rpl_gtid_set.cc), the inverse of
// decode_previous_gtids: 8 n_sids | per (uuid, tag): 16 uuid [| tag] | 8 n_intervals | per
// interval 8 start, 8 end + 1 (half-open). Untagged sets use the classic format (n_sids alone);
// a set with any tag uses the 8.3+ tagged format (encode_nsids_format: format 1 in the top byte
// and the low byte, n_sids in bits 8..55; every entry carries its tag as a varint length, one
// byte `length << 1` for the at most 32 characters, then the characters; 0x00 when untagged).
// Entries in the order of Tsid_map::get_sorted_sidno: uuid bytes, then tag.
std::vector<std::uint8_t> encode_gtid_set(const GtidSet& set);

// The dump command for a server flavor. MariaDB: COM_BINLOG_DUMP (flag 2 added: send
// ANNOTATE_ROWS); with `gtid_start` (@slave_connect_state set beforehand) an empty file name
// and position 4; a position past 4 GiB throws std::invalid_argument (MariaDB has no other dump
// command). MySQL: COM_BINLOG_DUMP_GTID when `exclude` is not empty or the position is past
// 4 GiB, else COM_BINLOG_DUMP.
struct DumpRequest {
  std::uint8_t command = kComBinlogDump;
  std::vector<std::uint8_t> body;
};
DumpRequest make_dump_request(bool mariadb, const std::string& file, std::uint64_t pos, bool non_blocking,
                              std::uint32_t server_id, bool gtid_start, const GtidSet& exclude);

struct BinlogFileInfo {
  std::string name;
  std::uint64_t size = 0;
};

// Where BinlogFeed gets the dump's packets: a replication connection (ReplicationClient), or a
// test's list of packets.
class PacketSource {
 public:
  virtual ~PacketSource() = default;
  virtual const std::string& label() const noexcept = 0;  // the server, for messages
  // Asks for `file` from `pos`. Non-blocking: the stream ends at the server's current end.
  virtual void start_dump(const std::string& file, std::uint64_t pos, bool non_blocking) = 0;
  // The next event packet (the OK byte removed), valid until the next call; nullopt at the end
  // of a non-blocking dump. Throws RemoteError.
  virtual std::optional<Bytes> next_packet() = 0;
  // Where the reader of the dump is (the file being read and the offset of its next event), for
  // the messages of a failure: BinlogFeed points here at its own position while it lives.
  virtual void track(const std::string* file, const std::uint64_t* pos) noexcept {
    (void)file;
    (void)pos;
  }
};

// One connection that lists the binary logs and streams them (COM_BINLOG_DUMP). Every failure
// throws RemoteError.
class ReplicationClient final : public PacketSource {
 public:
  explicit ReplicationClient(const RemoteOptions& o);  // connects and prepares the session
  ~ReplicationClient();
  ReplicationClient(const ReplicationClient&) = delete;
  ReplicationClient& operator=(const ReplicationClient&) = delete;

  const std::string& label() const noexcept override;
  bool is_mariadb() const noexcept;
  // The negotiated checksum (@@global.binlog_checksum): artificial events carry a CRC32 when set.
  bool checksums() const noexcept;
  // SHOW BINARY LOGS; nullopt when the user lacks the privilege to list them.
  std::optional<std::vector<BinlogFileInfo>> binary_logs();
  // True when dumps are asked by GTID (start_gtid, or a MySQL exclude set): the server leaves
  // transactions out (BinlogFeed's gtid_dump).
  bool gtid_dump() const noexcept;
  // Sends the dump command for `file` from `pos`. Non-blocking: the server ends the stream at its
  // current end instead of waiting for more. With start_gtid (MariaDB) `file` and `pos` are not
  // sent: the server starts in the file that holds the position. MySQL: COM_BINLOG_DUMP_GTID
  // with the exclude set, or when `pos` is past 4 GiB; else COM_BINLOG_DUMP. A position past
  // 4 GiB on MariaDB is refused (RemoteError).
  void start_dump(const std::string& file, std::uint64_t pos, bool non_blocking) override;
  // The next event packet of the dump (its bytes, the OK byte removed); nullopt at the end of a
  // non-blocking dump. The bytes stay valid until the next call.
  std::optional<Bytes> next_packet() override;
  void track(const std::string* file, const std::uint64_t* pos) noexcept override;
  std::uint64_t bytes_received() const noexcept;
  // The connection's socket (to shut it down from a signal handler); -1 when there is none.
  int socket_fd() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The server's events as its files hold them (see the top of this file).
class BinlogFeed {
 public:
  enum class Kind {
    file,   // a file begins (at `pos`: 4, or where the dump started in it)
    event,  // a real event of the current file at `pos`
    end,    // the server's current end (non-blocking dumps)
    idle,   // a heartbeat: the server has nothing new (only after report_idle(true))
  };
  struct Item {
    Kind kind = Kind::end;
    std::string file;  // the current file
    std::uint64_t pos = 0;
    Bytes raw;  // Kind::event: the whole event
    // Kind::event of a GTID dump: the server left out this many bytes of the file right before
    // the event (the transactions before the start GTID, or in the excluded set).
    std::uint64_t gap = 0;
  };
  // Starts a dump of `file` at `pos` on `client` (which must outlive the feed). `gtid_dump`: the
  // server was asked by GTID (MariaDB @slave_connect_state, MySQL COM_BINLOG_DUMP_GTID) and
  // leaves out whole transactions; events are then placed by their end_log_pos, and a jump
  // forward to an event that can begin a transaction (a GTID event, or ROTATE, STOP,
  // BINLOG_CHECKPOINT) is a gap the server made (Item::gap). Any other jump, or a position
  // going back, keeps the events contiguous so that the readers' log_pos check reports it as
  // damage, as it is in a position dump, which never has gaps.
  BinlogFeed(PacketSource& client, const std::string& file, std::uint64_t pos, bool non_blocking,
             bool gtid_dump = false);
  ~BinlogFeed();
  BinlogFeed(const BinlogFeed&) = delete;
  BinlogFeed& operator=(const BinlogFeed&) = delete;
  // The next item; throws RemoteError when the connection fails or the server reports an error.
  Item& next();
  // Heartbeats come out as Kind::idle items (else they are skipped): a reader waiting for a
  // given event can give up after a while, which a blocking next() would not let it do.
  void report_idle(bool on) { report_idle_ = on; }

 private:
  PacketSource& c_;
  Item item_;
  std::string cur_file_;
  std::uint64_t next_pos_ = 0;
  std::string rotate_to_;    // named by the last real ROTATE: the next file
  bool file_crc_ = false;    // the current file's events end with a CRC32 (its FDE says)
  bool skip_fde_ = false;    // the FDE copy the server sends when a dump starts past 4
  bool started_ = false;
  bool report_idle_ = false;
  std::string pending_file_;  // a file that begins with the event held in `held_`
  std::uint64_t pending_pos_ = 0;
  bool held_ = false;
  Bytes held_raw_;
  bool gtid_dump_ = false;
  std::uint64_t resume_at_ = 0;  // a GTID dump starting inside a file: where its events begin
};

// The input seam over a live server: the server's binlogs named in `names` (or, when empty, every
// file SHOW BINARY LOGS lists), each read from position 4 (ChainOptions::start_position applies as
// for files). Without stop_never each file ends where the server's copy ends now; with it the last
// file goes on through every rotation (as concatenated files do) until the server goes away.
// Throws RemoteError when the server cannot be reached or a named file is not on it.
std::unique_ptr<InputSet> remote_inputs(const RemoteOptions& o, const std::vector<std::string>& names);

}  // namespace binlogctl
