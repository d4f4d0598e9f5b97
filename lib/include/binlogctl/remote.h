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
#include <binlogctl/inputs.h>

#include <cstdint>
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
  unsigned connect_timeout = 10;   // seconds
  unsigned heartbeat_seconds = 15; // server heartbeats while idle (so a dead link is noticed)
};

// A connection problem, named by server and reason (wrong password, unknown host, missing
// privilege, purged file, binlog disabled, connection lost).
class RemoteError : public std::runtime_error {
 public:
  RemoteError(const std::string& what, unsigned server_errno = 0)
      : std::runtime_error(what), server_errno_(server_errno) {}
  unsigned server_errno() const noexcept { return server_errno_; }

 private:
  unsigned server_errno_;
};

// How messages name the server: "host:port" or the socket path.
inline std::string server_label(const RemoteOptions& o) {
  if (!o.socket.empty()) return o.socket;
  return (o.host.empty() ? std::string("localhost") : o.host) + ":" + std::to_string(o.port == 0 ? 3306u : o.port);
}

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
  // Sends COM_BINLOG_DUMP for `file` from `pos`. Non-blocking: the server ends the stream at its
  // current end instead of waiting for more.
  void start_dump(const std::string& file, std::uint64_t pos, bool non_blocking) override;
  // The next event packet of the dump (its bytes, the OK byte removed); nullopt at the end of a
  // non-blocking dump. The bytes stay valid until the next call.
  std::optional<Bytes> next_packet() override;
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
  };
  struct Item {
    Kind kind = Kind::end;
    std::string file;  // the current file
    std::uint64_t pos = 0;
    Bytes raw;  // Kind::event: the whole event
  };
  // Starts a dump of `file` at `pos` on `client` (which must outlive the feed).
  BinlogFeed(PacketSource& client, const std::string& file, std::uint64_t pos, bool non_blocking);
  // The next item; throws RemoteError when the connection fails or the server reports an error.
  Item& next();

 private:
  PacketSource& c_;
  Item item_;
  std::string cur_file_;
  std::uint64_t next_pos_ = 0;
  std::string rotate_to_;    // named by the last real ROTATE: the next file
  bool file_crc_ = false;    // the current file's events end with a CRC32 (its FDE says)
  bool skip_fde_ = false;    // the FDE copy the server sends when a dump starts past 4
  bool started_ = false;
  std::string pending_file_;  // a file that begins with the event held in `held_`
  std::uint64_t pending_pos_ = 0;
  bool held_ = false;
  Bytes held_raw_;
};

// The input seam over a live server: the server's binlogs named in `names` (or, when empty, every
// file SHOW BINARY LOGS lists), each read from position 4 (ChainOptions::start_position applies as
// for files). Without stop_never each file ends where the server's copy ends now; with it the last
// file goes on through every rotation (as concatenated files do) until the server goes away.
// Throws RemoteError when the server cannot be reached or a named file is not on it.
std::unique_ptr<InputSet> remote_inputs(const RemoteOptions& o, const std::vector<std::string>& names);

}  // namespace binlogctl
