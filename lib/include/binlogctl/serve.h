// `binlogctl serve`: the server side of the MySQL/MariaDB client/server and replication
// protocols, serving an archive of binlogs (binlog_archive.h) to real replicas and CDC clients.
// This header is what the tool needs (users, options, run_serve); the layers below it (packet
// codecs, setup queries, sessions), which tests and the fuzzer drive from memory, are in
// serve_protocol.h.
//
// Untrusted peers: a command packet is at most 1 MiB (larger: ERR 1153 and the connection is
// closed), a client that does not complete authentication within the connect timeout is
// dropped, a client that does not read blocks only its own thread for at most the write timeout,
// and a password is never logged.
#pragma once

#include <binlogctl/relay.h>

#include <array>
#include <chrono>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

class KeyRing;

// ---------------------------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------------------------

// A user that may connect: the password is kept only as mysql_native_password's stored hash,
// SHA1(SHA1(password)) (what PASSWORD('pw') prints after its '*').
struct ServeUser {
  std::string name;
  std::array<std::uint8_t, 20> stage2{};
};

ServeUser serve_user(std::string name, std::string_view password);

// The users file: one `user:password` or `user:*SHA1HEX` (41 characters, mysql_native_password's
// hash as PASSWORD() and mysql.user print it) per line; blank lines and lines starting with '#'
// are skipped; a trailing '\r' is dropped. The password itself may hold ':' (the first ':' ends
// the name). Errors name the file and the line ("FILE:LINE: what"); a bad line never echoes its
// password.
bool read_users_file(const std::string& path, std::vector<ServeUser>& users, std::string& error);

// What every session of one server is configured with.
struct ServeSettings {
  std::vector<ServeUser> users;
  std::optional<std::uint32_t> server_id;  // --server-id; default: the archive's
  std::optional<double> heartbeat;         // --heartbeat seconds; default: the replica's period
  bool require_tls = false;
  std::chrono::milliseconds connect_timeout{10000};  // handshake + authentication
  std::chrono::milliseconds idle_timeout{8 * 3600 * 1000};  // between commands (wait_timeout)
  std::chrono::milliseconds poll_interval{200};  // how often a waiting dump looks for new events
};

// ---------------------------------------------------------------------------------------------
// The server (server.cpp)
// ---------------------------------------------------------------------------------------------

struct ServeOptions {
  std::vector<std::string> inputs;  // DIR|INDEX|FILE...
  const KeyRing* keys = nullptr;     // encrypted binlogs served decrypted (open_archive)
  std::string bind = "127.0.0.1";
  std::optional<int> port;          // default 3307 unless only --socket is given; 0 = any free
  std::string socket_path;
  std::string ssl_cert, ssl_key;
  ServeSettings settings;
  double status_interval = 0;      // seconds; 0 = no status lines
  std::string status_file;
  unsigned max_connections = 64;
  std::chrono::milliseconds write_timeout{60000};  // net_write_timeout
  // serve --upstream (the relay, relay.h): `upstream` runs fetch --stop-never into inputs[0] (a
  // directory) with the observer it is given, on a thread of its own, and returns fetch's exit
  // status; `upstream_stop` asks it to stop (request_fetch_stop). Empty: serve the files only.
  std::function<int(FetchObserver&)> upstream;
  std::function<void()> upstream_stop;
  RelaySettings relay;
  std::string timeline;  // --timeline: the relay's actions and samples, replay's JSON Lines
  std::string plot;      // --plot FILE.svg: replay's plot of the tail, written when serve stops
};

// Listens, prints `binlogctl serve: listening on ADDR:PORT` (and/or `... on SOCKET`) on `err`,
// serves until request_serve_stop() (SIGTERM/SIGINT in the tool). Returns the exit status: 0
// after a stop, 2 when it cannot start (message on `err`).
int run_serve(const ServeOptions& opts, std::FILE* err);
// Async-signal-safe.
void request_serve_stop() noexcept;

}  // namespace binlogctl
