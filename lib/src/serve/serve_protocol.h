// `binlogctl serve`, below the tool's interface (serve.h): the server side of the MySQL/MariaDB
// client/server and replication protocols over an archive (binlog_archive.h).
//
// Three layers, each usable alone (tests and the fuzzer drive the lower two from memory):
//   1. packet codecs (lib/src/serve/protocol.cpp): HandshakeV10, HandshakeResponse41 / SSLRequest,
//      mysql_native_password, OK / ERR / EOF, text result sets, COM_REGISTER_SLAVE,
//      COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID. Pure functions over bytes; every read bounded.
//   2. a session (lib/src/serve/session.cpp): one connection's conversation over a ServeTransport
//      (handshake, authentication, TLS upgrade, the setup queries, the dump loop).
//   3. the server (lib/src/serve/server.cpp): listeners, one bounded thread per connection, TLS
//      contexts, signals, the replica status.
//
// Untrusted peers: a command packet is at most kMaxCommandPacket bytes (larger: ERR 1153 and the
// connection is closed), a client that does not complete authentication within the connect
// timeout is dropped, a client that does not read blocks only its own thread for at most the
// write timeout, and a password is never logged.
#pragma once

#include <binlogctl/binlog_archive.h>
#include <binlogctl/bytes.h>
#include <binlogctl/result.h>
#include <binlogctl/serve.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

// ---------------------------------------------------------------------------------------------
// Packet codecs (protocol.cpp)
// ---------------------------------------------------------------------------------------------

namespace serve_proto {

// Capability flags (include/mysql_com.h).
inline constexpr std::uint32_t kClientLongPassword = 0x1;
inline constexpr std::uint32_t kClientFoundRows = 0x2;
inline constexpr std::uint32_t kClientLongFlag = 0x4;
inline constexpr std::uint32_t kClientConnectWithDb = 0x8;
inline constexpr std::uint32_t kClientProtocol41 = 0x200;
inline constexpr std::uint32_t kClientSsl = 0x800;
inline constexpr std::uint32_t kClientTransactions = 0x2000;
inline constexpr std::uint32_t kClientSecureConnection = 0x8000;
inline constexpr std::uint32_t kClientMultiResults = 0x20000;
inline constexpr std::uint32_t kClientPluginAuth = 0x80000;
inline constexpr std::uint32_t kClientConnectAttrs = 0x100000;
inline constexpr std::uint32_t kClientPluginAuthLenencData = 0x200000;
inline constexpr std::uint32_t kClientDeprecateEof = 0x1000000;

// Command bytes (enum_server_command).
enum class Command : std::uint8_t {
  quit = 1,
  init_db = 2,
  query = 3,
  ping = 14,
  binlog_dump = 18,
  register_slave = 21,
  binlog_dump_gtid = 30,
  reset_connection = 31,
};

inline constexpr std::size_t kMaxPayload = 0xffffff;               // one packet's payload
inline constexpr std::size_t kMaxCommandPacket = 1024 * 1024;      // what a client may send us
inline constexpr std::uint16_t kStatusAutocommit = 0x0002;         // SERVER_STATUS_AUTOCOMMIT
inline constexpr std::uint8_t kCharsetUtf8mb4 = 45;                // utf8mb4_general_ci
inline constexpr std::uint8_t kCharsetBinary = 63;
inline constexpr char kNativePlugin[] = "mysql_native_password";

// Error codes and their SQLSTATE (include/mysqld_error.h, sql/share/errmsg-utf8.txt).
struct ServerError {
  std::uint16_t code;
  const char* sqlstate;
};
inline constexpr ServerError kErrConCount{1040, "08004"};         // ER_CON_COUNT_ERROR
inline constexpr ServerError kErrHandshake{1043, "08S01"};        // ER_HANDSHAKE_ERROR
inline constexpr ServerError kErrAccessDenied{1045, "28000"};     // ER_ACCESS_DENIED_ERROR
inline constexpr ServerError kErrUnknownCommand{1047, "08S01"};   // ER_UNKNOWN_COM_ERROR
inline constexpr ServerError kErrParse{1064, "42000"};            // ER_PARSE_ERROR
inline constexpr ServerError kErrNetPacketTooLarge{1153, "08S01"};  // ER_NET_PACKET_TOO_LARGE
inline constexpr ServerError kErrUnknownSystemVariable{1193, "HY000"};
inline constexpr ServerError kErrMasterFatalReadingBinlog{1236, "HY000"};  // ER_MASTER_FATAL_ERROR_READING_BINLOG
inline constexpr ServerError kErrNotSupportedYet{1235, "42000"};  // ER_NOT_SUPPORTED_YET
inline constexpr ServerError kErrSpDoesNotExist{1305, "42000"};   // ER_SP_DOES_NOT_EXIST (FUNCTION x does not exist)
inline constexpr ServerError kErrSecureTransport{3159, "HY000"};  // ER_SECURE_TRANSPORT_REQUIRED (MySQL)

// The server version string a client sees in the handshake: MariaDB 10 and later prefix it with
// "5.5.5-" (RPL_VERSION_HACK: clients and replicas that parse the major version strip it).
std::string handshake_version(std::string_view server_version, bool mariadb);

// A 20-byte scramble of printable characters (33..126) from OpenSSL's RAND_bytes, as servers
// make them (some clients read the second part as a C string).
std::array<std::uint8_t, 20> make_scramble();

struct Handshake {
  std::string server_version;  // as sent (handshake_version())
  std::uint32_t connection_id = 0;
  std::array<std::uint8_t, 20> scramble{};
  std::uint32_t capabilities = 0;
  std::uint8_t charset = kCharsetUtf8mb4;
  std::uint16_t status = kStatusAutocommit;
};
// HandshakeV10 payload:
//   1 protocol (10) | server version NUL | 4 connection id | 8 scramble part 1 | 1 filler (0)
//   | 2 capabilities low | 1 charset | 2 status | 2 capabilities high | 1 scramble length (21)
//   | 10 reserved (0) | 12 scramble part 2 + NUL | auth plugin name NUL
void encode_handshake(const Handshake& h, std::vector<std::uint8_t>& out);

// HandshakeResponse41 (or the 32-byte SSLRequest, `ssl_request`):
//   4 capabilities | 4 max packet | 1 charset | 23 filler | user NUL
//   | auth response (lenenc with PLUGIN_AUTH_LENENC_CLIENT_DATA, else 1-byte length with
//     SECURE_CONNECTION, else NUL-terminated) | database NUL (CONNECT_WITH_DB)
//   | plugin NUL (PLUGIN_AUTH) | attributes (CONNECT_ATTRS, skipped)
// Clients without CLIENT_PROTOCOL_41 are refused (Errc::unsupported_format). Views borrow the
// packet.
struct HandshakeResponse {
  std::uint32_t capabilities = 0;
  std::uint32_t max_packet = 0;
  std::uint8_t charset = 0;
  bool ssl_request = false;  // the 32-byte SSLRequest: TLS comes next, then the full response
  std::string_view user;
  Bytes auth_response;
  std::string_view database;
  std::string_view plugin;
};
Result<HandshakeResponse> decode_handshake_response(Bytes payload);

// AuthSwitchRequest: 0xfe | plugin NUL | scramble (20) NUL.
void encode_auth_switch(std::string_view plugin, const std::array<std::uint8_t, 20>& scramble,
                        std::vector<std::uint8_t>& out);

// mysql_native_password: the client sends SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))); true
// when it matches `stage2` = SHA1(SHA1(pw)). Compared in constant time; a response that is not
// 20 bytes is false.
bool check_native_password(const std::array<std::uint8_t, 20>& scramble, Bytes response,
                           const std::array<std::uint8_t, 20>& stage2);
// What a client computes (tests, and the fuzzer's client).
std::array<std::uint8_t, 20> native_password_response(const std::array<std::uint8_t, 20>& scramble,
                                                      std::string_view password);
std::array<std::uint8_t, 20> sha1(Bytes data);

void put_lenenc_int(std::vector<std::uint8_t>& out, std::uint64_t v);
void put_lenenc_str(std::vector<std::uint8_t>& out, std::string_view s);

// OK: 0x00 | lenenc affected rows | lenenc insert id | 2 status | 2 warnings. `header` 0xfe is the
// OK that ends a result set (or a dump) under CLIENT_DEPRECATE_EOF.
void encode_ok(std::vector<std::uint8_t>& out, std::uint64_t affected = 0, std::uint8_t header = 0x00,
               std::uint16_t status = kStatusAutocommit);
// EOF: 0xfe | 2 warnings | 2 status.
void encode_eof(std::vector<std::uint8_t>& out, std::uint16_t status = kStatusAutocommit);
// ERR: 0xff | 2 code | '#' | 5 SQLSTATE | message (cut at 512 bytes, as MYSQL_ERRMSG_SIZE).
void encode_err(std::vector<std::uint8_t>& out, ServerError e, std::string_view message);

// A text result set, built whole in memory (the answers to setup queries are a few rows).
struct Column {
  std::string name;
  bool numeric = false;  // MYSQL_TYPE_LONGLONG, binary charset; else VAR_STRING utf8mb4
};
struct ResultSet {
  std::vector<Column> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;  // nullopt = NULL
};
// The packets' payloads in order: column count, definitions, [EOF], rows, EOF or OK(0xfe).
std::vector<std::vector<std::uint8_t>> encode_result_set(const ResultSet& rs, bool deprecate_eof);

// COM_REGISTER_SLAVE (after the command byte):
//   4 server id | 1 len + host | 1 len + user | 1 len + password | 2 port | 4 rank | 4 master id
// The password is skipped, never kept. A short packet after the server id is accepted with the
// rest empty (as MariaDB does for the optional tail).
struct RegisterSlave {
  std::uint32_t server_id = 0;
  std::string host;
  std::string user;
  std::uint16_t port = 0;
};
Result<RegisterSlave> decode_register_slave(Bytes body);

// COM_BINLOG_DUMP (after the command byte), MariaDB and MySQL alike:
//   4 position | 2 flags (1: BINLOG_DUMP_NON_BLOCK, 2: BINLOG_SEND_ANNOTATE_ROWS_EVENT) | 4 server id
//   | file name (the rest)
// Fills req.file, position, non_blocking, send_annotate_rows, replica_server_id.
Status decode_binlog_dump(Bytes body, ServeDumpRequest& req);

// COM_BINLOG_DUMP_GTID (MySQL 5.6+, sql/rpl_source.cc com_binlog_dump_gtid):
//   2 flags (1: NON_BLOCK, 4: BINLOG_THROUGH_GTID) | 4 server id | 4 name length | name
//   | 8 position | 4 data size | the GTID set in Gtid_set::encode's layout (as PREVIOUS_GTIDS'
//   body, tagged format included). The server reads the data size whatever the flags; here a
//   packet that ends after the position is a dump by file and position (unless THROUGH_GTID),
//   and the data size must be exactly what remains.
// Fills req.file, position, non_blocking, replica_server_id and mysql_gtids.
Status decode_binlog_dump_gtid(Bytes body, ServeDumpRequest& req);

inline constexpr std::uint16_t kDumpNonBlock = 1;      // BINLOG_DUMP_NON_BLOCK
inline constexpr std::uint16_t kDumpAnnotateRows = 2;  // BINLOG_SEND_ANNOTATE_ROWS_EVENT (MariaDB)
inline constexpr std::uint16_t kDumpThroughGtid = 4;   // BINLOG_THROUGH_GTID

// Frames `payload` as packets (3-byte length, 1-byte sequence id) into `out`, splitting payloads
// of 0xffffff bytes and more (a payload of exactly a multiple of 0xffffff ends with an empty
// packet). `seq` is advanced per packet.
void frame_packets(Bytes payload, std::uint8_t& seq, std::vector<std::uint8_t>& out);

}  // namespace serve_proto

// ---------------------------------------------------------------------------------------------
// The queries a replica or CDC client sends before it dumps (query.cpp)
// ---------------------------------------------------------------------------------------------

// What the answers are taken from.
struct QueryEnv {
  const ArchiveState* state = nullptr;
  std::uint32_t server_id = 0;      // --server-id, else the archive's
  std::int64_t now = 0;             // UNIX_TIMESTAMP()
  std::uint32_t connection_id = 0;  // CONNECTION_ID()
  std::string user;                 // USER(): `user@peer-host`
  BinlogArchive* archive = nullptr; // binlog_gtid_pos(); null: NULL
};

// User variables of one connection (`SET @x=...`), by lower-case name; nullopt = NULL.
using UserVars = std::map<std::string, std::optional<std::string>>;

struct QueryAnswer {
  enum class Kind : std::uint8_t { ok, rows, error };
  Kind kind = Kind::ok;
  serve_proto::ResultSet rows;
  serve_proto::ServerError error{0, "HY000"};
  std::string message;
};

// Answers one COM_QUERY. Understood (keywords in any case, a trailing ';' and leading /* */
// comments allowed):
//   SET @v = expr [, ...]  and session settings (SET NAMES, SET autocommit=1, SET [SESSION] v=...)
//   SELECT expr [[AS] alias] [, ...] [LIMIT n]; expr: a number, 'string', NULL, @v, @@[GLOBAL.|
//     SESSION.]var, UNIX_TIMESTAMP(), VERSION(), DATABASE(), USER(), CURRENT_USER(),
//     CONNECTION_ID(), binlog_gtid_pos(file, pos) (the archive's answer; NULL for a file or
//     position it does not have, as MariaDB answers)
//   SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pattern'], SHOW BINARY LOGS / MASTER LOGS,
//   SHOW MASTER STATUS / BINLOG STATUS, SHOW WARNINGS, USE db
// Anything else is an ERR packet (1064 syntax, 1193 unknown system variable, 1305 unknown
// function), never a guess.
QueryAnswer answer_query(std::string_view sql, UserVars& vars, const QueryEnv& env);

// A global variable's value as serve answers it, or nullopt when it has none (ERR 1193).
std::optional<std::string> serve_system_variable(std::string_view name, const QueryEnv& env);

// ---------------------------------------------------------------------------------------------
// The session (session.cpp): one connection, over a transport
// ---------------------------------------------------------------------------------------------

// How a session reads and writes. Every call is bounded in time: reads by the deadline given,
// writes by the transport's write timeout; the server's stop request ends any wait.
class ServeTransport {
 public:
  enum class Io : std::uint8_t { ok, closed, timeout, stopped, error };
  virtual ~ServeTransport() = default;
  // Exactly n bytes, or not ok.
  virtual Io read(std::uint8_t* p, std::size_t n, std::chrono::steady_clock::time_point deadline) = 0;
  virtual Io write(const std::uint8_t* p, std::size_t n) = 0;
  // Waits up to `timeout` for the client to send something (or close): ok = readable, timeout =
  // nothing came.
  virtual Io wait_readable(std::chrono::milliseconds timeout) = 0;
  // SSL_accept on the connection; false (with a reason) when TLS is not offered or fails.
  virtual bool start_tls(std::string& error) = 0;
  virtual bool tls_offered() const = 0;
  virtual bool tls_active() const = 0;
};

// What a session reports for the status lines / file (guarded by ServeContext's mutex).
struct ReplicaInfo {
  std::uint64_t connection_id = 0;
  std::string peer;                // client address ("127.0.0.1:50312", "socket")
  std::string user;
  std::uint32_t server_id = 0;     // COM_REGISTER_SLAVE's, else the dump's
  std::string host;                // COM_REGISTER_SLAVE's report host
  std::uint16_t port = 0;
  std::string state = "connecting";  // connecting, authenticated, streaming, waiting, done
  std::string file;
  std::uint64_t position = 0;
  std::int64_t last_event_time = 0;
  std::optional<std::uint32_t> relay_id;  // serve --upstream: its replica in the relay
};

// Shared by every connection of one server.
struct ServeContext {
  BinlogArchive* archive = nullptr;
  ServeSettings settings;
  // The cursor factory (open_cursor unless a test gives another).
  std::function<std::unique_ptr<DumpCursor>(BinlogArchive&, const ServeDumpRequest&, std::string&)> open_cursor;
  std::atomic<std::uint32_t> next_connection_id{1};
  std::atomic<bool> stop{false};
  // Status registry: sessions publish their ReplicaInfo here, under the mutex.
  std::mutex status_mutex;
  std::vector<ReplicaInfo*> status_list;
};

// Runs one connection to its end (quit, close, error, timeout or stop). `peer` names the client
// in ReplicaInfo and in messages.
void run_session(ServeContext& ctx, ServeTransport& transport, const std::string& peer);

}  // namespace binlogctl
