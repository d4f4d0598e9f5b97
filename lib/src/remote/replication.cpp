// The replication client (remote.h): Connector/C for the connection, our own COM_BINLOG_DUMP and
// packet reading (BinlogFeed, in lib/src/framing/binlog_feed.cpp, makes the files' events of them).
#include <binlogctl/bytes.h>
#include <binlogctl/remote.h>

#include <fmt/format.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace binlogctl {

namespace {

std::once_flag library_once;
std::atomic<bool> g_remote_stop{false};
std::atomic<int> g_dump_socket{-1};  // the connection whose dump is being read (request_remote_stop)

}  // namespace

struct ReplicationClient::Impl {
  MYSQL* m = nullptr;
  std::string label;
  bool mariadb = false;
  bool crc = false;
  std::uint32_t server_id = 0;
  std::string start_gtid;  // MariaDB @slave_connect_state, validated
  GtidSet mysql_exclude;
  std::uint64_t received = 0;
  std::string dumping;  // the file the dump was asked for
  const std::string* at_file = nullptr;  // where the reader is (track())
  const std::uint64_t* at_pos = nullptr;

  // The file being read and the offset of its next event; before the first, what was asked.
  std::string where() const {
    if (at_file != nullptr && at_pos != nullptr && !at_file->empty()) return fmt::format("{} at {}", *at_file, *at_pos);
    return dumping;
  }

  ~Impl() {
    if (m != nullptr) mysql_close(m);
  }

  [[noreturn]] void fail(const std::string& doing) const {
    const unsigned e = mysql_errno(m);
    throw RemoteError(fmt::format("server {}: {}: {} (error {})", label, doing, mysql_error(m), e), e);
  }

  void query(const std::string& sql) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) fail(sql);
    if (MYSQL_RES* r = mysql_store_result(m)) mysql_free_result(r);
  }

  std::string scalar(const std::string& sql) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) fail(sql);
    MYSQL_RES* r = mysql_store_result(m);
    if (r == nullptr) fail(sql);
    std::string v;
    if (MYSQL_ROW row = mysql_fetch_row(r); row != nullptr && row[0] != nullptr) v = row[0];
    mysql_free_result(r);
    return v;
  }
};

ReplicationClient::ReplicationClient(const RemoteOptions& o) : impl_(std::make_unique<Impl>()) {
  std::call_once(library_once, [] { mysql_library_init(0, nullptr, nullptr); });
  Impl& s = *impl_;
  s.label = server_label(o);
  s.m = mysql_init(nullptr);
  if (s.m == nullptr) throw RemoteError(fmt::format("server {}: out of memory", s.label));
  const unsigned timeout = o.connect_timeout;
  mysql_options(s.m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  // The dump reads forever on --stop-never: the server's heartbeats keep the link busy, so a read
  // that waits three heartbeat periods means the link is gone.
  const unsigned read_timeout = o.heartbeat_seconds * 3 + 5;
  mysql_options(s.m, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
  const unsigned long max_packet = 1ul << 30;  // events up to 1 GiB (max_allowed_packet's cap)
  mysql_options(s.m, MYSQL_OPT_MAX_ALLOWED_PACKET, &max_packet);
  mysql_options(s.m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (!o.socket.empty()) {
    const unsigned proto = MYSQL_PROTOCOL_SOCKET;
    mysql_options(s.m, MYSQL_OPT_PROTOCOL, &proto);
  } else if (!o.host.empty() && o.host != "localhost") {
    const unsigned proto = MYSQL_PROTOCOL_TCP;
    mysql_options(s.m, MYSQL_OPT_PROTOCOL, &proto);
  }
  const std::string& mode = o.ssl_mode;
  if (mode != "DISABLED") {
    if (!o.ssl_key.empty()) mysql_options(s.m, MYSQL_OPT_SSL_KEY, o.ssl_key.c_str());
    if (!o.ssl_cert.empty()) mysql_options(s.m, MYSQL_OPT_SSL_CERT, o.ssl_cert.c_str());
    if (!o.ssl_ca.empty()) mysql_options(s.m, MYSQL_OPT_SSL_CA, o.ssl_ca.c_str());
    if (mode == "REQUIRED" || mode == "VERIFY_CA" || mode == "VERIFY_IDENTITY") {
      const my_bool on = 1;
      mysql_options(s.m, MYSQL_OPT_SSL_ENFORCE, &on);
      const my_bool verify = mode == "REQUIRED" ? 0 : 1;
      mysql_options(s.m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    }
  }
  const char* host = o.socket.empty() && !o.host.empty() ? o.host.c_str() : nullptr;
  const char* pw = o.password ? o.password->c_str() : nullptr;
  if (mysql_real_connect(s.m, host, o.user.empty() ? nullptr : o.user.c_str(), pw, nullptr, o.port,
                         o.socket.empty() ? nullptr : o.socket.c_str(), 0) == nullptr)
    s.fail("cannot connect");
  // Connector/C 3.3 falls back to plain text when the server has no TLS unless the certificate
  // is verified: REQUIRED is checked here.
  if ((mode == "REQUIRED" || mode == "VERIFY_CA" || mode == "VERIFY_IDENTITY") && mysql_get_ssl_cipher(s.m) == nullptr)
    throw RemoteError(fmt::format("server {}: --ssl-mode {}: the connection is not encrypted (the server offers no TLS)",
                                  s.label, mode));
  const char* info = mysql_get_server_info(s.m);
  s.mariadb = info != nullptr && std::strstr(info, "MariaDB") != nullptr;
  // Session variables the dump thread reads (see ../shared/design/remote-and-sql.md): without the
  // checksum one a server with checksums refuses to stream; below capability 4 MariaDB rewrites
  // GTID events for an old replica; the heartbeat period is in nanoseconds.
  s.query("SET @master_binlog_checksum = @@global.binlog_checksum");
  s.crc = s.scalar("SELECT @@global.binlog_checksum") != "NONE";
  if (s.mariadb) s.query("SET @mariadb_slave_capability = 4");
  s.query(fmt::format("SET @master_heartbeat_period = {}", std::uint64_t{o.heartbeat_seconds} * 1000000000ull));
  s.server_id = o.server_id != 0 ? o.server_id : 0x40000000u | (static_cast<std::uint32_t>(::getpid()) & 0x3fffffffu);
  if (!o.start_gtid.empty()) {
    if (!s.mariadb)
      throw RemoteError(fmt::format("server {}: --start-gtid takes a MariaDB GTID position, and this is a MySQL server "
                                    "(use --exclude-gtids with the executed GTID set)",
                                    s.label),
                        0, true);
    // Only digits, '-' and ',' reach the statement: the list is parsed and printed again.
    auto l = MariaGtidList::parse(o.start_gtid);
    if (!l || l->empty())
      throw RemoteError(fmt::format("server {}: --start-gtid '{}' is not a MariaDB GTID position (domain-server-seq, "
                                    "comma-separated, one per domain)",
                                    s.label, o.start_gtid),
                        0, true);
    s.start_gtid = l->to_string();
  }
  if (!s.mariadb) s.mysql_exclude = o.mysql_exclude;
}

ReplicationClient::~ReplicationClient() {
  int fd = socket_fd();
  g_dump_socket.compare_exchange_strong(fd, -1);
}

void request_remote_stop() noexcept {
  g_remote_stop = true;
  const int fd = g_dump_socket.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

bool remote_stop_requested() noexcept { return g_remote_stop.load(); }

void reconnect_wait(unsigned& backoff, const std::atomic<bool>* stop) {
  for (unsigned i = 0; i < backoff * 10 && (stop == nullptr || !*stop) && !g_remote_stop; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  backoff = std::min(backoff * 2, 30u);
}

const std::string& ReplicationClient::label() const noexcept { return impl_->label; }
bool ReplicationClient::is_mariadb() const noexcept { return impl_->mariadb; }
bool ReplicationClient::checksums() const noexcept { return impl_->crc; }
void ReplicationClient::track(const std::string* file, const std::uint64_t* pos) noexcept {
  impl_->at_file = file;
  impl_->at_pos = pos;
}

std::uint64_t ReplicationClient::bytes_received() const noexcept { return impl_->received; }
int ReplicationClient::socket_fd() const noexcept { return static_cast<int>(mysql_get_socket(impl_->m)); }

std::optional<std::vector<BinlogFileInfo>> ReplicationClient::binary_logs() {
  Impl& s = *impl_;
  static constexpr const char kSql[] = "SHOW BINARY LOGS";
  if (mysql_real_query(s.m, kSql, sizeof kSql - 1) != 0) {
    const unsigned e = mysql_errno(s.m);
    if (e == ER_NO_BINARY_LOGGING)
      throw RemoteError(fmt::format("server {}: binary logging is disabled (log_bin is OFF): there is nothing to read", s.label), e);
    if (e == ER_SPECIFIC_ACCESS_DENIED_ERROR || e == ER_DBACCESS_DENIED_ERROR || e == ER_ACCESS_DENIED_ERROR)
      return std::nullopt;
    s.fail(kSql);
  }
  MYSQL_RES* r = mysql_store_result(s.m);
  if (r == nullptr) s.fail(kSql);
  std::vector<BinlogFileInfo> out;
  while (MYSQL_ROW row = mysql_fetch_row(r)) {
    if (row[0] == nullptr) continue;
    BinlogFileInfo f;
    f.name = row[0];
    if (mysql_num_fields(r) > 1 && row[1] != nullptr) f.size = std::strtoull(row[1], nullptr, 10);
    out.push_back(std::move(f));
  }
  mysql_free_result(r);
  return out;
}

bool ReplicationClient::gtid_dump() const noexcept { return !impl_->start_gtid.empty() || !impl_->mysql_exclude.empty(); }

void ReplicationClient::start_dump(const std::string& file, std::uint64_t pos, bool non_blocking) {
  Impl& s = *impl_;
  s.dumping = file.empty() ? "the binlog holding GTID " + s.start_gtid : file;
  if (s.mariadb && !s.start_gtid.empty()) {
    // As MariaDB's own replica does (sql/slave.cc, get_master_version_and_clock and
    // request_dump): the position in @slave_connect_state, strict mode so that a GTID the
    // binlogs do not hold is an error rather than a silent start elsewhere, and the dump with
    // an empty file name (sql/sql_repl.cc ignores name and position when the state is set).
    s.query(fmt::format("SET @slave_connect_state='{}'", s.start_gtid));
    s.query("SET @slave_gtid_strict_mode=1");
    s.query("SET @slave_gtid_ignore_duplicates=0");
  }
  DumpRequest req;
  try {
    req = make_dump_request(s.mariadb, file, pos, non_blocking, s.server_id, !s.start_gtid.empty(), s.mysql_exclude);
  } catch (const std::invalid_argument& e) {
    throw RemoteError(fmt::format("server {}: {}: {}", s.label, file, e.what()), 0, true);
  }
  g_dump_socket = static_cast<int>(mysql_get_socket(s.m));
  if (g_remote_stop) ::shutdown(g_dump_socket.load(), SHUT_RDWR);
  const std::uint8_t command = req.command;
  const std::vector<std::uint8_t>& b = req.body;
  // The handle's own command call (as mariadb-binlog does): skip_check = 1, the answer is the
  // stream that next_packet() reads.
  if (s.m->methods->db_command(s.m, static_cast<enum_server_command>(command), reinterpret_cast<const char*>(b.data()),
                               b.size(), 1, nullptr) != 0)
    s.fail(fmt::format("{} {}", command == kComBinlogDump ? "COM_BINLOG_DUMP" : "COM_BINLOG_DUMP_GTID", s.dumping));
}

std::optional<Bytes> ReplicationClient::next_packet() {
  Impl& s = *impl_;
  const unsigned long len = mysql_net_read_packet(s.m);
  if (len == static_cast<unsigned long>(-1) || len == 0xffffffffu || len == 0) {  // packet_error is (unsigned int)-1
    const unsigned e = mysql_errno(s.m);
    if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)  // 1236: purged, missing, or unreadable binlog
      throw RemoteError(fmt::format("server {}: cannot read {}: {} (error {})", s.label, s.where(), mysql_error(s.m), e), e);
    if (e == 0)
      throw RemoteError(fmt::format("server {}: reading {}: the connection was lost", s.label, s.where()), CR_SERVER_LOST);
    s.fail("reading " + s.where());
  }
  const std::uint8_t* p = s.m->net.read_pos;
  s.received += len;
  if (p[0] == 0xfe && len < 9) return std::nullopt;  // EOF: the end of a non-blocking dump
  if (p[0] != 0x00)
    throw RemoteError(fmt::format("server {}: unexpected packet (first byte {:#04x}, {} bytes) in the binlog stream", s.label, p[0], len));
  return Bytes(p + 1, len - 1);
}

}  // namespace binlogctl
