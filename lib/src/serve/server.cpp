// The listener and the connections of `binlogctl serve` (serve.h, run_serve): TCP and unix
// socket listeners, one thread per connection (at most --max-connections; each bounded in memory
// and in time by its transport), TLS through OpenSSL, the status lines and file, and the stop
// on a signal (an eventfd every wait polls).
#include <binlogctl/replay.h>

#include "serve/serve_protocol.h"

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
#include <filesystem>
#include <fstream>
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
    return transfer(n, deadline, true, [&](std::size_t at, std::size_t want) -> ssize_t {
      return ssl_ != nullptr ? SSL_read(ssl_, p + at, static_cast<int>(want)) : ::recv(fd_, p + at, want, 0);
    });
  }

  Io write(const std::uint8_t* p, std::size_t n) override {
    return transfer(n, Clock::now() + write_timeout_, false, [&](std::size_t at, std::size_t want) -> ssize_t {
      return ssl_ != nullptr ? SSL_write(ssl_, p + at, static_cast<int>(want))
                             : ::send(fd_, p + at, want, MSG_NOSIGNAL);
    });
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
  // Moves n bytes in pieces of at most 1 MiB: `op(done, want)` is SSL_read/SSL_write with TLS,
  // else recv/send, and returns what they return. When a try moves nothing, waits (until
  // `deadline`) for what it asks for. `reading`: the peer's close (TLS close_notify, a plain 0)
  // ends the transfer as Io::closed.
  template <class Op>
  Io transfer(std::size_t n, Clock::time_point deadline, bool reading, Op op) {
    std::size_t done = 0;
    while (done < n) {
      const std::size_t want = std::min<std::size_t>(n - done, 1 << 20);
      const ssize_t r = op(done, want);
      if (r > 0) {
        done += static_cast<std::size_t>(r);
        continue;
      }
      short events = reading ? POLLIN : POLLOUT;
      if (ssl_ != nullptr) {
        const int e = SSL_get_error(ssl_, static_cast<int>(r));
        if (reading && e == SSL_ERROR_ZERO_RETURN) return Io::closed;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return Io::error;
        events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      } else {
        if (r == 0 && reading) return Io::closed;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Io::error;
      }
      const Io w = wait(events, deadline);
      if (w != Io::ok) return w;
    }
    return Io::ok;
  }

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
  StatusReporter(ServeContext& ctx, const ServeOptions& o, std::FILE* err, RelayTail* relay)
      : ctx_(ctx), o_(o), err_(err), relay_(relay) {}

  void report(bool lines) {
    const ArchiveState st = ctx_.archive->state();
    std::vector<ReplicaInfo> copy;
    {
      std::lock_guard lock(ctx_.status_mutex);
      for (const ReplicaInfo* r : ctx_.status_list) copy.push_back(*r);
    }
    std::optional<RelayStatus> rs;
    if (relay_ != nullptr) rs = relay_->status();
    auto relay_of = [&](const ReplicaInfo& r) -> const RelayReplicaStatus* {
      if (!rs || !r.relay_id) return nullptr;
      for (const RelayReplicaStatus& x : rs->replicas)
        if (x.id == *r.relay_id) return &x;
      return nullptr;
    };
    auto lag = [&](const ReplicaInfo& r) -> std::int64_t {
      if (r.last_event_time == 0 || st.newest_event_time == 0) return 0;
      return std::max<std::int64_t>(0, st.newest_event_time - r.last_event_time);
    };
    if (lines) {
      for (const ReplicaInfo& r : copy) {
        if (r.state == "connecting") continue;
        std::string relay;
        if (const RelayReplicaStatus* x = relay_of(r))
          relay = fmt::format(" queue={} fed={} paused={} pauses={} resumes={} breaks={} releases={} resets={}",
                              x->queue_bytes, x->fed ? 1 : 0, x->paused ? 1 : 0, x->counters.pauses,
                              x->counters.resumes, x->counters.circuit_breaks, x->counters.releases,
                              x->counters.resets);
        fmt::print(err_, "binlogctl serve: replica server_id={} host={} peer={} user={} file={} position={} lag={}s state={}{}\n",
                   r.server_id, r.host.empty() ? "-" : fmt::format("{}:{}", r.host, r.port), r.peer,
                   r.user.empty() ? "-" : r.user, r.file.empty() ? "-" : r.file, r.position, lag(r), r.state, relay);
      }
      if (rs)
        fmt::print(err_, "binlogctl serve: relay upstream={}:{} tail={} held={} paused={} pauses={} resumes={} breaks={} releases={} resets={}\n",
                   rs->file.empty() ? "-" : rs->file, rs->position, rs->pending, rs->held_bytes, rs->paused ? 1 : 0,
                   rs->counters.pauses, rs->counters.resumes, rs->counters.circuit_breaks, rs->counters.releases,
                   rs->counters.resets);
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
      if (const RelayReplicaStatus* y = relay_of(r)) {
        nlohmann::ordered_json q;
        q["fed"] = y->fed;
        q["paused"] = y->paused;
        q["lag_bytes"] = y->lag_bytes;
        q["queue_bytes"] = y->queue_bytes;
        q["queue_events"] = y->queue_events;
        q["peak_queue_bytes"] = y->peak_queue_bytes;
        q["tail_events"] = y->tail_events;
        q["attaches"] = y->attaches;
        q["pauses"] = y->counters.pauses;
        q["resumes"] = y->counters.resumes;
        q["paused_ms"] = y->counters.paused_us / 1000;
        q["circuit_breaks"] = y->counters.circuit_breaks;
        q["releases"] = y->counters.releases;
        q["discarded_events"] = y->counters.discarded;
        q["resets"] = y->counters.resets;
        x["relay"] = std::move(q);
      }
      j["replicas"].push_back(std::move(x));
    }
    if (rs) {
      nlohmann::ordered_json a;
      a["upstream"] = rs->upstream;
      a["failovers"] = rs->failovers;
      a["upstream_file"] = rs->file;
      a["upstream_position"] = rs->position;
      a["events"] = rs->events;
      a["bytes"] = rs->bytes;
      a["pending"] = rs->pending;
      a["peak_pending"] = rs->counters.peak_pending;
      a["held_bytes"] = rs->held_bytes;
      a["peak_held_bytes"] = rs->peak_held_bytes;
      a["quota"] = rs->quota;
      a["path_pause_bytes"] = rs->path_pause_bytes;
      a["path_resume_bytes"] = rs->path_resume_bytes;
      a["area_pause_bytes"] = rs->area_pause_bytes;
      a["area_resume_bytes"] = rs->area_resume_bytes;
      a["hard_limit_bytes"] = rs->hard_limit_bytes;
      a["paused"] = rs->paused;
      a["pauses"] = rs->counters.pauses;
      a["resumes"] = rs->counters.resumes;
      a["paused_ms"] = rs->counters.paused_us / 1000;
      a["upstream_waits"] = rs->upstream_waits;
      a["circuit_breaks"] = rs->counters.circuit_breaks;
      a["releases"] = rs->counters.releases;
      a["resets"] = rs->counters.resets;
      j["relay"] = std::move(a);
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
  RelayTail* relay_;
  bool warned_ = false;
};

// --timeline and --plot: the relay's engine actions and a sample per tick, in replay's JSON Lines
// (JsonlTimelineWriter) and through replay's plot (write_plot_svg), the same code.
class RelayRecorder {
 public:
  RelayRecorder(RelayTail& relay, const ServeOptions& o, std::ostream* timeline)
      : relay_(relay), o_(o), plot_(!o.plot.empty()) {
    if (timeline != nullptr) w_ = std::make_unique<JsonlTimelineWriter>(*timeline);
  }

  void flush() {
    const std::vector<RelayRecord> recs = relay_.take_records();
    const RelayStatus s = relay_.status();
    const std::uint64_t now = relay_.now_us();
    std::uint64_t interval_max = s.pending;
    for (const RelayRecord& rec : recs) {
      const FlowAction& a = rec.action;
      interval_max = std::max({interval_max, rec.area_pending, a.area_pending});
      std::string path;
      if (rec.replica != kNoPath) path = fmt::format("replica{}", rec.replica);
      if (w_) {
        TimelineAction t;
        t.time_us = rec.time_us;
        t.kind = to_string(a.kind);
        t.area = 0;
        t.path = path;
        t.epoch = a.epoch;
        t.seq = a.seq;
        t.count = a.count;
        t.bytes = a.bytes;
        t.area_pending = rec.area_pending;
        t.pending_before = a.area_pending;
        if (a.kind == ActionKind::reset || a.kind == ActionKind::drop_marker) t.detail = to_string(a.cause);
        w_->action(t);
      }
      if (plot_ && a.kind != ActionKind::reset && marks_.size() < 100000)
        marks_.push_back(ReplayMark{rec.time_us, a.kind, 0, rec.replica == kNoPath ? kNoPath : rec.replica, a.area_pending});
    }
    if (w_) {
      std::vector<std::string> names;
      std::vector<TimelinePathSample> paths;
      names.reserve(s.replicas.size());
      for (const RelayReplicaStatus& r : s.replicas) names.push_back(fmt::format("replica{}", r.id));
      for (std::size_t i = 0; i < s.replicas.size(); ++i)
        paths.push_back(TimelinePathSample{names[i], s.replicas[i].queue_bytes, s.replicas[i].paused});
      TimelineSample t;
      t.time_us = now;
      t.pending = s.pending;
      t.resident = s.held_bytes;
      t.delivered = s.bytes;
      t.paused = s.paused;
      t.paths = paths;
      w_->sample(t);
    }
    if (!plot_) return;
    last_ = s;
    if (s.counters.peak_pending > peak_) {
      peak_ = s.counters.peak_pending;
      peak_time_ = now;
    }
    time_.push_back(now);
    area_.push_back(s.pending);
    area_max_.push_back(interval_max);
    for (const RelayReplicaStatus& r : s.replicas) {
      if (r.id >= path_.size()) {
        path_.resize(r.id + 1);
        path_max_.resize(r.id + 1);
      }
    }
    for (std::size_t p = 0; p < path_.size(); ++p) {
      std::uint64_t v = 0, m = 0;
      for (const RelayReplicaStatus& r : s.replicas)
        if (r.id == p) v = r.queue_bytes, m = r.peak_queue_bytes;
      path_[p].resize(time_.size() - 1, 0);
      path_max_[p].resize(time_.size() - 1, 0);
      path_[p].push_back(v);
      path_max_[p].push_back(std::max(v, m > peak_path_seen_(p) ? m : v));
      peak_path_[p] = std::max(peak_path_[p], m);
    }
    if (time_.size() >= 20000) halve();  // at most 20000 samples: pairs merged by their maximum
  }

  // The SVG, beside its target then renamed; false (with the reason) when it cannot be written.
  bool write_plot(std::string& error) {
    if (!plot_) return true;
    ReplayResult r;
    r.policy = o_.relay.policy;
    r.thresholds = o_.relay.thresholds;
    r.quota = last_.quota;
    r.hard_limit = last_.hard_limit_bytes;
    r.end_time_us = time_.empty() ? 0 : time_.back();
    r.source_events = last_.events;
    r.source_bytes = last_.bytes;
    r.pauses = last_.counters.pauses;
    r.resumes = last_.counters.resumes;
    for (const RelayReplicaStatus& x : last_.replicas) {
      r.pauses += x.counters.pauses;
      r.resumes += x.counters.resumes;
      r.delivered += x.tail_events;
    }
    r.circuit_breaks = last_.counters.circuit_breaks;
    r.releases = last_.counters.releases;
    r.resets = last_.counters.resets;
    AreaStats a;
    a.peak_memory = peak_;
    a.peak_time_us = peak_time_;
    r.areas.push_back(a);
    r.peak_memory = peak_;
    for (std::size_t p = 0; p < path_.size(); ++p) {
      PathStats ps;
      ps.name = fmt::format("replica{}", p);
      r.paths.push_back(ps);
    }
    ReplaySeries& sr = r.series;
    sr.time_us = time_;
    sr.area_pending = {area_};
    sr.area_max = {area_max_};
    std::vector<std::uint32_t> order;
    for (std::size_t p = 0; p < path_.size(); ++p) order.push_back(static_cast<std::uint32_t>(p));
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return peak_path_[x] > peak_path_[y]; });
    if (order.size() > 6) order.resize(6);
    for (std::uint32_t p : order) {
      sr.top_paths.push_back(p);
      std::vector<std::uint64_t> v = path_[p], m = path_max_[p];
      v.resize(time_.size(), 0);
      m.resize(time_.size(), 0);
      sr.path_pending.push_back(std::move(v));
      sr.path_max.push_back(std::move(m));
    }
    for (const ReplayMark& mk : marks_) {
      ReplayMark x = mk;
      if (x.path != kNoPath && x.path >= r.paths.size()) x.path = kNoPath;
      sr.marks.push_back(x);
    }
    PlotOptions po;
    po.title = fmt::format("serve --upstream --policy {} --quota {} --hard-limit-ratio {} --path-pause {} --path-resume {} "
                           "--area-pause {} --area-resume {}",
                           to_string(r.policy), r.quota, r.thresholds.hard_limit_ratio, r.thresholds.path_pause,
                           r.thresholds.path_resume, r.thresholds.area_pause, r.thresholds.area_resume);
    const std::string tmp = o_.plot + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) {
        error = fmt::format("--plot {}: {}", tmp, std::strerror(errno));
        return false;
      }
      write_plot_svg(out, r, po);
      out.flush();
      if (!out) {
        error = fmt::format("--plot {}: cannot write", tmp);
        std::remove(tmp.c_str());
        return false;
      }
    }
    if (std::rename(tmp.c_str(), o_.plot.c_str()) != 0) {
      error = fmt::format("--plot {}: {}", o_.plot, std::strerror(errno));
      std::remove(tmp.c_str());
      return false;
    }
    return true;
  }

 private:
  std::uint64_t peak_path_seen_(std::size_t p) {
    if (p >= peak_path_.size()) peak_path_.resize(p + 1, 0);
    return peak_path_[p];
  }
  template <class V>
  static void halve_vec(V& v) {
    V out;
    for (std::size_t i = 0; i < v.size(); i += 2) out.push_back(i + 1 < v.size() ? std::max(v[i], v[i + 1]) : v[i]);
    v.swap(out);
  }
  void halve() {
    halve_vec(time_);
    halve_vec(area_);
    halve_vec(area_max_);
    for (auto& v : path_) halve_vec(v);
    for (auto& v : path_max_) halve_vec(v);
  }

  RelayTail& relay_;
  const ServeOptions& o_;
  bool plot_;
  std::unique_ptr<JsonlTimelineWriter> w_;
  RelayStatus last_;
  std::uint64_t peak_ = 0, peak_time_ = 0;
  std::vector<std::uint64_t> time_, area_, area_max_;
  std::vector<std::vector<std::uint64_t>> path_, path_max_;
  std::vector<std::uint64_t> peak_path_;
  std::vector<ReplayMark> marks_;
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
  // serve --upstream: fetch writes the directory on a thread of its own, the relay keeps its
  // newest events for the replicas near the live end.
  std::unique_ptr<RelayTail> relay;
  std::thread producer;
  std::atomic<bool> producer_done{false};
  std::atomic<int> producer_rc{0};
  struct ProducerStop {
    const ServeOptions& o;
    RelayTail* relay = nullptr;
    std::thread* t = nullptr;
    ~ProducerStop() {
      if (t == nullptr || !t->joinable()) return;
      if (relay != nullptr) relay->stop();
      if (o.upstream_stop) o.upstream_stop();
      t->join();
    }
  } producer_stop{o};
  if (o.upstream) {
    std::error_code ec;
    std::filesystem::create_directories(o.inputs.at(0), ec);
    if (ec) {
      fmt::print(err, "binlogctl serve: {}: cannot make the result directory: {}\n", o.inputs[0], ec.message());
      return 2;
    }
    relay = std::make_unique<RelayTail>(o.relay);
    producer = std::thread([&] {
      producer_rc = o.upstream(*relay);
      producer_done = true;
    });
    producer_stop.relay = relay.get();
    producer_stop.t = &producer;
  }
  std::unique_ptr<BinlogArchive> archive = open_archive(o.inputs, o.keys);
  std::string error;
  if (relay) {
    // The directory may hold nothing yet: wait for fetch's first file (or for fetch to fail).
    for (;;) {
      error.clear();
      if (archive && archive->refresh(error) && !archive->state().files.empty()) break;
      if (producer_done) {
        fmt::print(err, "binlogctl serve: the upstream ended (fetch status {}) and {} holds no binlog to serve\n",
                   producer_rc.load(), o.inputs[0]);
        return 2;
      }
      pollfd pf{g_stop_fd, POLLIN, 0};
      if (::poll(&pf, 1, 50) > 0) return 0;
    }
  }
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
  if (relay) {
    RelayTail* t = relay.get();
    ctx.open_cursor = [t](BinlogArchive& a, const ServeDumpRequest& r, std::string& e) { return open_cursor(a, r, e, t); };
    // The tail is in memory: a waiting replica looks at it more often than at a file.
    ctx.settings.poll_interval = std::min(ctx.settings.poll_interval, std::chrono::milliseconds(20));
  }
  std::ofstream timeline_out;
  std::unique_ptr<RelayRecorder> timeline;
  if (relay && !o.timeline.empty()) {
    timeline_out.open(o.timeline, std::ios::binary | std::ios::trunc);
    if (!timeline_out) {
      fmt::print(err, "binlogctl serve: --timeline {}: {}\n", o.timeline, std::strerror(errno));
      return 2;
    }
  }
  if (relay && (!o.timeline.empty() || !o.plot.empty()))
    timeline = std::make_unique<RelayRecorder>(*relay, o, o.timeline.empty() ? nullptr : &timeline_out);

  fmt::print(err, "binlogctl serve: listening on {}\n", fmt::join(where, " and "));
  std::fflush(err);

  std::list<Connection> conns;
  StatusReporter status(ctx, o, err, relay.get());
  const auto status_period = std::chrono::milliseconds(
      static_cast<std::int64_t>((o.status_interval > 0 ? o.status_interval : 1.0) * 1000));
  auto next_status = Clock::now() + status_period;
  const bool want_status = o.status_interval > 0 || !o.status_file.empty() || timeline != nullptr;
  bool told_producer_end = false;
  for (;;) {
    std::vector<pollfd> fds;
    for (int l : listeners) fds.push_back({l, POLLIN, 0});
    fds.push_back({g_stop_fd, POLLIN, 0});
    int timeout = relay ? 200 : 1000;
    if (want_status)
      timeout = static_cast<int>(std::clamp<std::int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_status - Clock::now()).count(), 0, timeout));
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
    if (relay) {
      relay->tick();
      if (producer_done && !told_producer_end) {
        told_producer_end = true;
        fmt::print(err, "binlogctl serve: the upstream ended (fetch status {}); serving what {} holds\n",
                   producer_rc.load(), o.inputs[0]);
        std::fflush(err);
      }
    }
    if (want_status && Clock::now() >= next_status) {
      status.report(o.status_interval > 0);
      if (timeline) {
        timeline->flush();
        timeline_out.flush();
      }
      next_status = Clock::now() + status_period;
    }
  }
  // Stop: close the listeners, every connection sees the stop in its next wait.
  ctx.stop.store(true);
  for (int l : listeners) ::close(l);
  if (!o.socket_path.empty()) ::unlink(o.socket_path.c_str());
  for (Connection& c : conns) c.thread.join();
  int rc = 0;
  if (timeline) {
    timeline->flush();
    timeline_out.flush();
    std::string perr;
    if (!timeline->write_plot(perr)) {
      fmt::print(err, "binlogctl serve: {}\n", perr);
      rc = 2;
    }
  }
  if (want_status) status.report(false);
  return rc;
}

}  // namespace binlogctl
