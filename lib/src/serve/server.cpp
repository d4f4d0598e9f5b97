// The listener and the connections of `binlogctl serve` (serve.h, run_serve): TCP and unix
// socket listeners, one thread per connection (at most --max-connections; each bounded in memory
// and in time by its transport), TLS through OpenSSL, the status lines and file, and the stop
// on a signal (an eventfd every wait polls).
#include <binlogctl/serve_protocol.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <list>
#include <thread>

namespace binlogctl {

namespace {

using Clock = std::chrono::steady_clock;
using Io = ServeTransport::Io;

int g_stop_fd = -1;  // eventfd: readable once a stop is requested (never read back)

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

class SocketTransport final : public ServeTransport {
 public:
  SocketTransport(int fd, SSL_CTX* tls, std::chrono::milliseconds write_timeout,
                  std::chrono::milliseconds tls_timeout)
      : fd_(fd), tls_(tls), write_timeout_(write_timeout), tls_timeout_(tls_timeout) {}
  ~SocketTransport() override {
    if (ssl_ != nullptr) {
      SSL_shutdown(ssl_);  // best effort, non-blocking
      SSL_free(ssl_);
    }
  }

  Io read(std::uint8_t* p, std::size_t n, Clock::time_point deadline) override {
    std::size_t got = 0;
    while (got < n) {
      const std::size_t want = std::min<std::size_t>(n - got, 1 << 20);
      if (ssl_ != nullptr) {
        const int r = SSL_read(ssl_, p + got, static_cast<int>(want));
        if (r > 0) {
          got += static_cast<std::size_t>(r);
          continue;
        }
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_ZERO_RETURN) return Io::closed;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return Io::error;
        const Io w = wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
        if (w != Io::ok) return w;
      } else {
        const ssize_t r = ::recv(fd_, p + got, want, 0);
        if (r > 0) {
          got += static_cast<std::size_t>(r);
          continue;
        }
        if (r == 0) return Io::closed;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return Io::error;
        const Io w = wait(POLLIN, deadline);
        if (w != Io::ok) return w;
      }
    }
    return Io::ok;
  }

  Io write(const std::uint8_t* p, std::size_t n) override {
    const Clock::time_point deadline = Clock::now() + write_timeout_;
    std::size_t done = 0;
    while (done < n) {
      const std::size_t want = std::min<std::size_t>(n - done, 1 << 20);
      if (ssl_ != nullptr) {
        const int r = SSL_write(ssl_, p + done, static_cast<int>(want));
        if (r > 0) {
          done += static_cast<std::size_t>(r);
          continue;
        }
        const int e = SSL_get_error(ssl_, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return Io::error;
        const Io w = wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
        if (w != Io::ok) return w;
      } else {
        const ssize_t r = ::send(fd_, p + done, want, MSG_NOSIGNAL);
        if (r > 0) {
          done += static_cast<std::size_t>(r);
          continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Io::error;
        const Io w = wait(POLLOUT, deadline);
        if (w != Io::ok) return w;
      }
    }
    return Io::ok;
  }

  Io wait_readable(std::chrono::milliseconds timeout) override {
    if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return Io::ok;
    return wait(POLLIN, Clock::now() + timeout);
  }

  bool start_tls(std::string& error) override {
    if (tls_ == nullptr) {
      error = "TLS is not configured";
      return false;
    }
    ssl_ = SSL_new(tls_);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
      error = openssl_error();
      return false;
    }
    SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const Clock::time_point deadline = Clock::now() + tls_timeout_;
    for (;;) {
      const int r = SSL_accept(ssl_);
      if (r == 1) break;
      const int e = SSL_get_error(ssl_, r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        error = openssl_error();
        return false;
      }
      if (wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline) != Io::ok) {
        error = "TLS handshake timed out";
        return false;
      }
    }
    tls_active_ = true;
    return true;
  }
  bool tls_offered() const override { return tls_ != nullptr; }
  bool tls_active() const override { return tls_active_; }

 private:
  Io wait(short events, Clock::time_point deadline) {
    for (;;) {
      const auto now = Clock::now();
      if (now >= deadline) return Io::timeout;
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      pollfd fds[2] = {{fd_, events, 0}, {g_stop_fd, POLLIN, 0}};
      const int r = ::poll(fds, 2, static_cast<int>(std::min<std::int64_t>(ms, 60000)));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Io::error;
      }
      if (fds[1].revents != 0) return Io::stopped;
      if (fds[0].revents & (POLLERR | POLLNVAL)) return Io::error;
      if (fds[0].revents != 0) return Io::ok;  // ready, or POLLHUP: the next call tells closed
    }
  }

  int fd_;
  SSL_CTX* tls_;
  SSL* ssl_ = nullptr;
  bool tls_active_ = false;
  std::chrono::milliseconds write_timeout_, tls_timeout_;
};

std::string sockaddr_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    return fmt::format("{}:{}", host, ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return fmt::format("[{}]:{}", host, ntohs(a->sin6_port));
  }
  return "localhost";  // a unix socket
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// TCP listener on bind:port; the address it got in `where`.
int listen_tcp(const std::string& bind, int port, std::string& where, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(bind.c_str(), service.c_str(), &hints, &res); rc != 0) {
    error = fmt::format("--bind {}: {}", bind, gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      error = fmt::format("{}:{}: {}", bind, port, std::strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  where = sockaddr_text(ss);
  set_nonblocking(fd);
  return fd;
}

// Unix socket listener. An existing path is replaced only when it is a socket nobody listens on.
int listen_unix(const std::string& path, std::string& error) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) {
    error = path + ": socket path too long";
    return -1;
  }
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      error = path + ": exists and is not a socket (not replaced)";
      return -1;
    }
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = ::connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    ::close(probe);
    if (live) {
      error = path + ": another server listens on this socket";
      return -1;
    }
    ::unlink(path.c_str());
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 128) != 0) {
    error = path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  set_nonblocking(fd);
  return fd;
}

SSL_CTX* make_tls(const std::string& cert, const std::string& key, std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    error = openssl_error();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
    error = "--ssl-cert " + cert + ": " + openssl_error();
  } else if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = "--ssl-key " + key + ": " + openssl_error();  // never the key's contents
  } else if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "--ssl-key " + key + ": does not match --ssl-cert " + cert;
  } else {
    return ctx;
  }
  SSL_CTX_free(ctx);
  return nullptr;
}

struct Connection {
  std::thread thread;
  std::atomic<bool> done{false};
};

// ERR 1040 to a client over the limit, best effort (the socket is non-blocking: never waits).
void refuse_too_many(int fd) {
  std::vector<std::uint8_t> p;
  serve_proto::encode_err(p, serve_proto::kErrConCount, "Too many connections");
  std::vector<std::uint8_t> framed;
  std::uint8_t seq = 0;
  serve_proto::frame_packets(p, seq, framed);
  (void)!::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL);
}

class StatusReporter {
 public:
  StatusReporter(ServeContext& ctx, const ServeOptions& o, std::FILE* err) : ctx_(ctx), o_(o), err_(err) {}

  void report(bool lines) {
    const ArchiveState st = ctx_.archive->state();
    std::vector<ReplicaInfo> copy;
    {
      std::lock_guard lock(ctx_.status_mutex);
      for (const ReplicaInfo* r : ctx_.status_list) copy.push_back(*r);
    }
    auto lag = [&](const ReplicaInfo& r) -> std::int64_t {
      if (r.last_event_time == 0 || st.newest_event_time == 0) return 0;
      return std::max<std::int64_t>(0, st.newest_event_time - r.last_event_time);
    };
    if (lines) {
      for (const ReplicaInfo& r : copy) {
        if (r.state == "connecting") continue;
        fmt::print(err_, "binlogctl serve: replica server_id={} host={} peer={} user={} file={} position={} lag={}s state={}\n",
                   r.server_id, r.host.empty() ? "-" : fmt::format("{}:{}", r.host, r.port), r.peer,
                   r.user.empty() ? "-" : r.user, r.file.empty() ? "-" : r.file, r.position, lag(r), r.state);
      }
      std::fflush(err_);
    }
    if (o_.status_file.empty()) return;
    nlohmann::ordered_json j;
    j["time"] = static_cast<std::int64_t>(std::time(nullptr));
    j["end_file"] = st.end_file;
    j["end_position"] = st.end_position;
    j["replicas"] = nlohmann::ordered_json::array();
    for (const ReplicaInfo& r : copy) {
      nlohmann::ordered_json x;
      x["connection_id"] = r.connection_id;
      x["peer"] = r.peer;
      x["user"] = r.user;
      x["server_id"] = r.server_id;
      x["host"] = r.host;
      x["port"] = r.port;
      x["state"] = r.state;
      x["file"] = r.file;
      x["position"] = r.position;
      x["lag"] = lag(r);
      j["replicas"].push_back(std::move(x));
    }
    const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const std::string tmp = o_.status_file + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
      if (!warned_) fmt::print(err_, "binlogctl serve: --status-file {}: {}\n", tmp, std::strerror(errno));
      warned_ = true;
      return;
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), o_.status_file.c_str()) != 0) {
      if (!warned_) fmt::print(err_, "binlogctl serve: --status-file {}: {}\n", o_.status_file, std::strerror(errno));
      warned_ = true;
      std::remove(tmp.c_str());
    }
  }

 private:
  ServeContext& ctx_;
  const ServeOptions& o_;
  std::FILE* err_;
  bool warned_ = false;
};

}  // namespace

void request_serve_stop() noexcept {
  if (g_stop_fd >= 0) {
    const std::uint64_t one = 1;
    (void)!::write(g_stop_fd, &one, sizeof one);
  }
}

int run_serve(const ServeOptions& o, std::FILE* err) {
  std::signal(SIGPIPE, SIG_IGN);
  if (g_stop_fd < 0) g_stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (g_stop_fd < 0) {
    fmt::print(err, "binlogctl serve: eventfd: {}\n", std::strerror(errno));
    return 2;
  }
  std::unique_ptr<BinlogArchive> archive = open_archive(o.inputs, o.keys);
  std::string error;
  if (!archive || !archive->refresh(error)) {
    fmt::print(err, "binlogctl serve: {}\n", error.empty() ? "cannot open the binlogs" : error);
    return 2;
  }
  SSL_CTX* tls = nullptr;
  if (!o.ssl_cert.empty()) {
    tls = make_tls(o.ssl_cert, o.ssl_key, error);
    if (tls == nullptr) {
      fmt::print(err, "binlogctl serve: {}\n", error);
      return 2;
    }
  }
  struct TlsFree {
    SSL_CTX* c;
    ~TlsFree() {
      if (c != nullptr) SSL_CTX_free(c);
    }
  } tls_free{tls};

  std::vector<int> listeners;
  std::vector<std::string> where;
  const bool tcp = o.port.has_value() || o.socket_path.empty();
  if (tcp) {
    std::string w;
    const int fd = listen_tcp(o.bind, o.port.value_or(3307), w, error);
    if (fd < 0) {
      fmt::print(err, "binlogctl serve: {}\n", error);
      return 2;
    }
    listeners.push_back(fd);
    where.push_back(w);
  }
  if (!o.socket_path.empty()) {
    const int fd = listen_unix(o.socket_path, error);
    if (fd < 0) {
      fmt::print(err, "binlogctl serve: {}\n", error);
      for (int l : listeners) ::close(l);
      return 2;
    }
    listeners.push_back(fd);
    where.push_back(o.socket_path);
  }

  ServeContext ctx;
  ctx.archive = archive.get();
  ctx.settings = o.settings;
  ctx.open_cursor = [](BinlogArchive& a, const ServeDumpRequest& r, std::string& e) { return open_cursor(a, r, e); };

  fmt::print(err, "binlogctl serve: listening on {}\n", fmt::join(where, " and "));
  std::fflush(err);

  std::list<Connection> conns;
  StatusReporter status(ctx, o, err);
  const auto status_period = std::chrono::milliseconds(
      static_cast<std::int64_t>((o.status_interval > 0 ? o.status_interval : 1.0) * 1000));
  auto next_status = Clock::now() + status_period;
  const bool want_status = o.status_interval > 0 || !o.status_file.empty();
  for (;;) {
    std::vector<pollfd> fds;
    for (int l : listeners) fds.push_back({l, POLLIN, 0});
    fds.push_back({g_stop_fd, POLLIN, 0});
    int timeout = 1000;
    if (want_status)
      timeout = static_cast<int>(std::clamp<std::int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_status - Clock::now()).count(), 0, 1000));
    const int r = ::poll(fds.data(), fds.size(), timeout);
    if (r < 0 && errno != EINTR) break;
    if (fds.back().revents != 0) break;
    // Reap finished connections.
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->done.load()) {
        it->thread.join();
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
    for (std::size_t i = 0; r > 0 && i < listeners.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      const int fd = ::accept4(listeners[i], reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      if (conns.size() >= o.max_connections) {
        refuse_too_many(fd);
        ::close(fd);
        continue;
      }
      if (ss.ss_family != AF_UNIX) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      const std::string peer = sockaddr_text(ss);
      Connection& c = conns.emplace_back();
      c.thread = std::thread([&ctx, &c, fd, peer, tls, &o] {
        {
          SocketTransport t(fd, tls, o.write_timeout, o.settings.connect_timeout);
          run_session(ctx, t, peer);
        }
        ::close(fd);
        c.done.store(true);
      });
    }
    if (want_status && Clock::now() >= next_status) {
      status.report(o.status_interval > 0);
      next_status = Clock::now() + status_period;
    }
  }
  // Stop: close the listeners, every connection sees the stop in its next wait.
  ctx.stop.store(true);
  for (int l : listeners) ::close(l);
  if (!o.socket_path.empty()) ::unlink(o.socket_path.c_str());
  for (Connection& c : conns) c.thread.join();
  return 0;
}

}  // namespace binlogctl
