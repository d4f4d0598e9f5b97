// One connection's conversation (serve.h, run_session): handshake, TLS upgrade, authentication,
// the command loop and the dump loop. Memory per connection: one command packet (at most
// kMaxCommandPacket), one output buffer (kOutBuffer), the cursor's one event; nothing grows with
// what the client does or how slowly it reads.
#include "serve/serve_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <ctime>

namespace binlogctl {

namespace {

namespace sp = serve_proto;
using Clock = std::chrono::steady_clock;
using Io = ServeTransport::Io;

constexpr std::size_t kOutBuffer = 64 * 1024;

// The capabilities serve offers (CLIENT_SSL added when TLS is configured).
constexpr std::uint32_t kServerCaps = sp::kClientLongPassword | sp::kClientFoundRows | sp::kClientLongFlag |
                                      sp::kClientConnectWithDb | sp::kClientProtocol41 | sp::kClientTransactions |
                                      sp::kClientSecureConnection | sp::kClientMultiResults | sp::kClientPluginAuth |
                                      sp::kClientConnectAttrs | sp::kClientPluginAuthLenencData |
                                      sp::kClientDeprecateEof;

// Printable text of untrusted bytes for messages (user names, file names).
std::string printable(std::string_view s) {
  std::string r;
  for (char c : s.substr(0, 128)) r += (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) ? c : '?';
  return r;
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::uint64_t> to_u64(const std::optional<std::string>& v) {
  if (!v) return std::nullopt;
  std::uint64_t n = 0;
  const char* b = v->data();
  const char* e = b + v->size();
  while (b < e && std::isspace(static_cast<unsigned char>(*b))) ++b;
  auto [p, ec] = std::from_chars(b, e, n);
  if (ec != std::errc() || p == b) return std::nullopt;
  return n;
}

class Session {
 public:
  Session(ServeContext& ctx, ServeTransport& t, ReplicaInfo& info) : ctx_(ctx), t_(t), info_(info) {
    out_.reserve(kOutBuffer);
  }

  void run() {
    conn_id_ = ctx_.next_connection_id.fetch_add(1);
    {
      std::lock_guard lock(ctx_.status_mutex);
      info_.connection_id = conn_id_;
    }
    if (!authenticate()) return;
    set_state("authenticated");
    command_loop();
  }

 private:
  // ---- packets ----

  // Reads one packet (a command is never split: larger than kMaxCommandPacket is refused).
  // false: the connection is to be closed (an error already sent where one is due).
  bool read_packet(Clock::time_point deadline) {
    std::uint8_t h[4];
    if (t_.read(h, 4, deadline) != Io::ok) return false;
    const std::size_t len = h[0] | (std::size_t{h[1]} << 8) | (std::size_t{h[2]} << 16);
    if (h[3] != seq_) {
      send_err(sp::kErrHandshake, "Got packets out of order");
      return false;
    }
    seq_ = static_cast<std::uint8_t>(h[3] + 1);
    if (len > sp::kMaxCommandPacket) {
      send_err(sp::kErrNetPacketTooLarge, "Got a packet bigger than 'max_allowed_packet' bytes");
      return false;
    }
    in_.resize(len);
    if (len > 0 && t_.read(in_.data(), len, deadline) != Io::ok) return false;
    return true;
  }

  bool flush() {
    if (out_.empty()) return true;
    const bool ok = t_.write(out_.data(), out_.size()) == Io::ok;
    out_.clear();
    if (!ok) broken_ = true;
    return ok;
  }

  // Queues one payload (split as the protocol requires); big payloads are written through.
  bool send(Bytes payload, std::optional<std::uint8_t> prefix = std::nullopt) {
    const std::size_t total = payload.size() + (prefix ? 1 : 0);
    if (total + 8 > kOutBuffer - out_.size()) {
      if (!flush()) return false;
    }
    if (total + 8 <= kOutBuffer) {
      std::size_t at = out_.size();
      out_.resize(at + 4);
      out_[at] = static_cast<std::uint8_t>(total);
      out_[at + 1] = static_cast<std::uint8_t>(total >> 8);
      out_[at + 2] = static_cast<std::uint8_t>(total >> 16);
      out_[at + 3] = seq_++;
      if (prefix) out_.push_back(*prefix);
      out_.insert(out_.end(), payload.begin(), payload.end());
      return true;
    }
    // Large: a header per 16 MiB chunk, the payload written from where it lies (no copy).
    const std::size_t lead = prefix ? 1 : 0;
    std::size_t done = 0;  // bytes of the logical payload (prefix included) sent
    for (;;) {
      const std::size_t n = std::min(sp::kMaxPayload, total - done);
      const std::uint8_t h[5] = {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
                                 static_cast<std::uint8_t>(n >> 16), seq_++, prefix.value_or(0)};
      const bool first = done == 0;
      const std::size_t hl = first && prefix ? 5 : 4;
      const std::size_t body_from = first ? 0 : done - lead;
      const std::size_t body_n = first ? n - lead : n;
      if (t_.write(h, hl) != Io::ok || (body_n > 0 && t_.write(payload.data() + body_from, body_n) != Io::ok)) {
        broken_ = true;
        return false;
      }
      done += n;
      if (n < sp::kMaxPayload) return true;
    }
  }
  bool send(const std::vector<std::uint8_t>& p) { return send(Bytes(p)); }

  void send_err(sp::ServerError e, std::string_view msg) {
    std::vector<std::uint8_t> p;
    sp::encode_err(p, e, msg);
    send(p);
    flush();
  }
  bool send_ok() {
    std::vector<std::uint8_t> p;
    sp::encode_ok(p);
    return send(p) && flush();
  }
  bool send_eof_end() {  // the end of a result set or of a dump
    std::vector<std::uint8_t> p;
    if (caps_ & sp::kClientDeprecateEof)
      sp::encode_ok(p, 0, 0xfe);
    else
      sp::encode_eof(p);
    return send(p) && flush();
  }

  void set_state(const char* s) {
    std::lock_guard lock(ctx_.status_mutex);
    info_.state = s;
  }

  // ---- authentication ----

  bool authenticate() {
    const Clock::time_point deadline = Clock::now() + ctx_.settings.connect_timeout;
    const std::string refresh_error = refresh();
    const ArchiveState st = ctx_.archive->state();
    sp::Handshake hs;
    hs.server_version = sp::handshake_version(st.server_version, st.mariadb);
    hs.connection_id = conn_id_;
    hs.scramble = sp::make_scramble();
    hs.capabilities = kServerCaps | (t_.tls_offered() ? sp::kClientSsl : 0);
    std::vector<std::uint8_t> p;
    sp::encode_handshake(hs, p);
    seq_ = 0;
    if (!send(p) || !flush()) return false;
    if (!read_packet(deadline)) return false;
    auto resp = sp::decode_handshake_response(in_);
    if (!resp) {
      send_err(sp::kErrHandshake, std::string("Bad handshake: ") + resp.error().what);
      return false;
    }
    if (resp->ssl_request) {
      std::string why;
      if (!t_.tls_offered() || !t_.start_tls(why)) return false;  // no ERR: the stream is not plain text
      if (!read_packet(deadline)) return false;
      resp = sp::decode_handshake_response(in_);
      if (!resp || resp->ssl_request) {
        send_err(sp::kErrHandshake, "Bad handshake");
        return false;
      }
    }
    caps_ = resp->capabilities & (hs.capabilities);
    user_ = std::string(resp->user);
    std::string auth(as_string_view(resp->auth_response));
    const std::string plugin(resp->plugin);
    const std::string who = fmt::format("'{}'@'{}'", printable(user_), printable(peer_host()));
    if (ctx_.settings.require_tls && !t_.tls_active()) {
      send_err(sp::kErrAccessDenied,
               fmt::format("Access denied for user {} (this server requires TLS: connect with --ssl)", who));
      return false;
    }
    if ((resp->capabilities & sp::kClientPluginAuth) && !plugin.empty() && plugin != sp::kNativePlugin) {
      // The client asked for another plugin: switch it to mysql_native_password.
      p.clear();
      sp::encode_auth_switch(sp::kNativePlugin, hs.scramble, p);
      if (!send(p) || !flush()) return false;
      if (!read_packet(deadline)) return false;
      auth.assign(in_.begin(), in_.end());
    }
    // Always one check (against a dummy hash for unknown users): no timing difference.
    const ServeUser* found = nullptr;
    for (const ServeUser& u : ctx_.settings.users)
      if (u.name == user_) found = &u;
    static const std::array<std::uint8_t, 20> kDummy{};
    const Bytes response(reinterpret_cast<const std::uint8_t*>(auth.data()), auth.size());
    const bool good = sp::check_native_password(hs.scramble, response, found != nullptr ? found->stage2 : kDummy);
    if (found == nullptr || !good || user_.empty()) {
      send_err(sp::kErrAccessDenied,
               fmt::format("Access denied for user {} (using password: {})", who, auth.empty() ? "NO" : "YES"));
      return false;
    }
    (void)refresh_error;
    {
      std::lock_guard lock(ctx_.status_mutex);
      info_.user = user_;
    }
    return send_ok();
  }

  std::string peer_host() const {
    const std::string& p = info_.peer;
    if (!p.empty() && p[0] == '[') {
      const auto e = p.find(']');
      return p.substr(1, e == std::string::npos ? std::string::npos : e - 1);
    }
    const auto c = p.rfind(':');
    return c == std::string::npos ? p : p.substr(0, c);
  }

  // Brings the archive up to date (each connection sees the files as they are when it comes).
  std::string refresh() {
    std::string err;
    if (!ctx_.archive->refresh(err)) return err;
    return {};
  }

  std::uint32_t served_server_id(const ArchiveState& st) const {
    return ctx_.settings.server_id ? *ctx_.settings.server_id : st.server_id;
  }

  // ---- commands ----

  void command_loop() {
    for (;;) {
      seq_ = 0;
      if (!read_packet(Clock::now() + ctx_.settings.idle_timeout)) return;
      if (in_.empty()) {
        send_err(sp::kErrUnknownCommand, "Unknown command");
        return;
      }
      const auto cmd = static_cast<sp::Command>(in_[0]);
      const Bytes body = Bytes(in_).subspan(1);
      switch (cmd) {
        case sp::Command::quit:
          return;
        case sp::Command::ping:
        case sp::Command::init_db:
        case sp::Command::reset_connection:
          if (cmd == sp::Command::reset_connection) vars_.clear();
          if (!send_ok()) return;
          break;
        case sp::Command::query:
          if (!query(as_string_view(body))) return;
          break;
        case sp::Command::register_slave: {
          auto r = sp::decode_register_slave(body);
          if (!r) {
            send_err(sp::kErrUnknownCommand, std::string("Malformed COM_REGISTER_SLAVE: ") + r.error().what);
            return;
          }
          {
            std::lock_guard lock(ctx_.status_mutex);
            info_.server_id = r->server_id;
            info_.host = printable(r->host);
            info_.port = r->port;
          }
          registered_ = true;
          if (!send_ok()) return;
          break;
        }
        case sp::Command::binlog_dump:
        case sp::Command::binlog_dump_gtid: {
          ServeDumpRequest req;
          Status s = cmd == sp::Command::binlog_dump ? sp::decode_binlog_dump(body, req)
                                                      : sp::decode_binlog_dump_gtid(body, req);
          if (!s) {
            send_err(sp::kErrMasterFatalReadingBinlog,
                     fmt::format("Malformed {}: {} (offset {})",
                                 cmd == sp::Command::binlog_dump ? "COM_BINLOG_DUMP" : "COM_BINLOG_DUMP_GTID",
                                 s.error().what, s.error().offset + 1));
            return;
          }
          dump(req);
          return;  // as a primary does: the connection ends with the dump
        }
        default:
          send_err(sp::kErrUnknownCommand, "Unknown command");
          break;
      }
      if (broken_) return;
    }
  }

  bool query(std::string_view sql) {
    const std::string refresh_error = refresh();
    const ArchiveState st = ctx_.archive->state();
    QueryEnv env;
    env.state = &st;
    env.server_id = served_server_id(st);
    env.now = static_cast<std::int64_t>(std::time(nullptr));
    env.connection_id = conn_id_;
    env.user = user_ + "@" + peer_host();
    env.archive = ctx_.archive;
    QueryAnswer a = answer_query(sql, vars_, env);
    switch (a.kind) {
      case QueryAnswer::Kind::ok:
        return send_ok();
      case QueryAnswer::Kind::error:
        send_err(a.error, a.message);
        return !broken_;
      case QueryAnswer::Kind::rows:
        for (const auto& p : sp::encode_result_set(a.rows, (caps_ & sp::kClientDeprecateEof) != 0))
          if (!send(p)) return false;
        return flush();
    }
    return false;
  }

  // ---- the dump ----

  std::optional<std::string> var(const char* name) const {
    const auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }

  void fill_request(ServeDumpRequest& req) const {
    // The checksum algorithm the replica announced (@master_binlog_checksum, MySQL 8.0.26+ also
    // @source_binlog_checksum): anything but NONE gives the first artificial ROTATE a CRC32, as
    // sql_repl.cc does (mariadb-binlog announces NONE; the events go as stored either way).
    std::optional<std::string> announced = var("master_binlog_checksum");
    if (!announced) announced = var("source_binlog_checksum");
    req.replica_checksum = announced.has_value() && lower_ascii(*announced) != "none";
    req.mariadb_capability = static_cast<int>(std::min<std::uint64_t>(to_u64(var("mariadb_slave_capability")).value_or(0), 1000));
    if (vars_.count("slave_connect_state") != 0) req.mariadb_connect_state = var("slave_connect_state").value_or("");
    if (auto u = var("slave_until_gtid")) req.mariadb_until_gtid = *u;
    req.mariadb_gtid_strict = to_u64(var("slave_gtid_strict_mode")).value_or(0) != 0;
    req.mariadb_ignore_duplicates = to_u64(var("slave_gtid_ignore_duplicates")).value_or(0) != 0;
  }

  std::chrono::milliseconds heartbeat_period() const {
    if (ctx_.settings.heartbeat) {
      if (*ctx_.settings.heartbeat <= 0) return std::chrono::milliseconds(0);
      return std::max(std::chrono::milliseconds(1),
                      std::chrono::milliseconds(static_cast<std::int64_t>(*ctx_.settings.heartbeat * 1000)));
    }
    // @master_heartbeat_period / @source_heartbeat_period: nanoseconds.
    auto ns = to_u64(var("master_heartbeat_period"));
    if (!ns) ns = to_u64(var("source_heartbeat_period"));
    if (!ns) return std::chrono::milliseconds(0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::min<std::uint64_t>(*ns / 1000000, 86400000)));
  }

  void publish(const DumpCursor& c, const char* state) {
    std::lock_guard lock(ctx_.status_mutex);
    const bool over = std::string_view(state) == "done" || std::string_view(state) == "failed";
    info_.relay_id = over ? std::nullopt : c.relay_replica();
    info_.file = c.file();
    info_.position = c.position();
    info_.last_event_time = c.last_event_time();
    info_.state = state;
  }

  void dump(ServeDumpRequest& req) {
    fill_request(req);
    {
      std::lock_guard lock(ctx_.status_mutex);
      if (!registered_) info_.server_id = req.replica_server_id;
      info_.file = req.file;
      info_.position = req.position;
      info_.state = "streaming";
    }
    std::string error = refresh();
    std::unique_ptr<DumpCursor> cursor;
    if (error.empty()) cursor = ctx_.open_cursor(*ctx_.archive, req, error);
    if (!cursor) {
      send_err(sp::kErrMasterFatalReadingBinlog, error.empty() ? "cannot open the binlog archive" : error);
      set_state("done");
      return;
    }
    const std::chrono::milliseconds hb = heartbeat_period();
    Clock::time_point last_sent = Clock::now();
    std::size_t since_publish = 0;
    for (;;) {
      if (ctx_.stop.load(std::memory_order_relaxed)) break;
      CursorStep step = cursor->next();
      switch (step.kind) {
        case CursorStep::Kind::event:
          if (!send(step.bytes, std::uint8_t{0})) return;
          last_sent = Clock::now();
          if (++since_publish >= 256 || out_.size() >= kOutBuffer / 2) {
            since_publish = 0;
            publish(*cursor, "streaming");
          }
          break;
        case CursorStep::Kind::wait: {
          if (!flush()) return;
          publish(*cursor, "waiting");
          auto timeout = ctx_.settings.poll_interval;
          if (hb.count() > 0) {
            const auto due = last_sent + hb;
            const auto now = Clock::now();
            if (now >= due) {
              const Bytes h = cursor->heartbeat();
              if (!send(h, std::uint8_t{0}) || !flush()) return;
              last_sent = now;
              break;
            }
            timeout = std::min(timeout, std::chrono::duration_cast<std::chrono::milliseconds>(due - now) +
                                            std::chrono::milliseconds(1));
          }
          const Io w = t_.wait_readable(timeout);
          if (w == Io::ok) {
            // A replica sends nothing during a dump but COM_QUIT or a close: either ends it.
            set_state("done");
            return;
          }
          if (w != Io::timeout) return;
          break;
        }
        case CursorStep::Kind::end:
          publish(*cursor, "done");
          send_eof_end();
          return;
        case CursorStep::Kind::error:
          publish(*cursor, "failed");
          if (!flush()) return;
          send_err(sp::kErrMasterFatalReadingBinlog, step.message);
          return;
      }
    }
    flush();
  }

  ServeContext& ctx_;
  ServeTransport& t_;
  ReplicaInfo& info_;
  std::vector<std::uint8_t> in_, out_;
  std::uint8_t seq_ = 0;
  std::uint32_t caps_ = 0;
  std::uint32_t conn_id_ = 0;
  std::string user_;
  UserVars vars_;
  bool registered_ = false;
  bool broken_ = false;
};

}  // namespace

void run_session(ServeContext& ctx, ServeTransport& transport, const std::string& peer) {
  ReplicaInfo info;
  info.peer = peer;
  {
    std::lock_guard lock(ctx.status_mutex);
    ctx.status_list.push_back(&info);
  }
  try {
    Session(ctx, transport, info).run();
  } catch (const std::bad_alloc&) {
    // one connection's failure; the server goes on
  }
  std::lock_guard lock(ctx.status_mutex);
  ctx.status_list.erase(std::remove(ctx.status_list.begin(), ctx.status_list.end(), &info), ctx.status_list.end());
}

}  // namespace binlogctl
