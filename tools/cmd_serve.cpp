// binlogctl serve: options -> binlogctl::run_serve (the archive served to replicas and CDC
// clients over the replication protocol; needs OpenSSL).
#ifdef BINLOGCTL_HAVE_SERVE
#include <binlogctl/replay.h>
#include <binlogctl/serve.h>
#endif
#ifdef BINLOGCTL_HAVE_REMOTE
#include <binlogctl/fetch.h>
#endif

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.h"

namespace binlogctl::cli {

namespace {
struct ServeArgs {
  std::vector<std::string> inputs;
  std::string bind = "127.0.0.1";
  int port = 3307;
  const CLI::Option* port_option = nullptr;
  const CLI::Option* bind_option = nullptr;
  std::string socket, user, password, users_file, ssl_cert, ssl_key;
  const CLI::Option* password_option = nullptr;
  bool require_ssl = false;
  std::optional<std::uint32_t> server_id;
  std::optional<double> heartbeat;
  double status_interval = 0, connect_timeout = 10, write_timeout = 60;
  std::string status_file;
  unsigned max_connections = 64;
  KeyArgs keys;
  // --upstream: the relay
  std::string upstream, result_dir, policy = "doc", quota = "16M", timeline, plot;
  std::optional<double> failover_wait;
  RemoteArgs up;  // --upstream-user, --upstream-password, --upstream-socket, --upstream-ssl-*
  double hard_limit_ratio = 1.5, path_pause = 0.20, path_resume = 0.10, area_pause = 0.80, area_resume = 0.50;
};

#ifdef BINLOGCTL_HAVE_SERVE
extern "C" void on_serve_stop_signal(int) { request_serve_stop(); }

std::chrono::milliseconds seconds_option(double s, const char* name) {
  if (!(s > 0) || s > 86400 * 365) throw CLI::ValidationError(name, "must be a number of seconds above 0");
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
}
#endif

#ifdef BINLOGCTL_HAVE_SERVE
// --upstream HOST[:PORT] --result-dir DIR: fetch --stop-never into DIR on a thread, the relay's
// engine configured as replay's options name it.
void setup_relay(ServeArgs& a, ServeOptions& o) {
  if (a.upstream.empty()) {
    if (!a.result_dir.empty()) throw CLI::ValidationError("--result-dir", "goes with --upstream");
    if (!a.timeline.empty()) throw CLI::ValidationError("--timeline", "needs --upstream");
    if (!a.plot.empty()) throw CLI::ValidationError("--plot", "needs --upstream");
    if (a.inputs.empty()) throw CLI::RequiredError("files");
    return;
  }
  if (!a.inputs.empty())
    throw CLI::ValidationError("--upstream", "serves the directory --result-dir that it fetches into: give no FILES");
  if (a.result_dir.empty()) throw CLI::ValidationError("--upstream", "needs --result-dir DIR");
  if (a.keys.any())
    throw CLI::ValidationError(a.keys.key_files.empty() ? "--keyring-file" : "--key-file",
                               "the upstream sends its events decrypted: no key file with --upstream");
#ifndef BINLOGCTL_HAVE_REMOTE
  throw CLI::ValidationError("--upstream", "this binlogctl was built without libmariadb (MariaDB Connector/C): it cannot read from a server");
#else
  a.up.opts.stop_never = true;
  a.up.opts.notices = stderr;
  a.up.resolve();
  // HOST[:PORT][,HOST[:PORT]...]: the first is read, the others are the failover servers.
  std::vector<RemoteOptions> servers;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = a.upstream.find(',', from);
    const std::string one = a.upstream.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    RemoteOptions r = a.up.opts;
    const std::size_t colon = one.rfind(':');
    r.host = one;
    if (colon != std::string::npos && one.find(':') == colon) {  // HOST:PORT (not an IPv6 address)
      const std::string port = one.substr(colon + 1);
      char* end = nullptr;
      const unsigned long v = std::strtoul(port.c_str(), &end, 10);
      if (port.empty() || *end != '\0' || v == 0 || v > 65535)
        throw CLI::ValidationError("--upstream", one + ": the port must be 1 to 65535");
      r.host = one.substr(0, colon);
      r.port = static_cast<unsigned>(v);
    }
    if (r.host.empty() && (servers.empty() ? r.socket.empty() : true))
      throw CLI::ValidationError("--upstream", "names no host" + (one.empty() ? std::string() : " in '" + one + "'"));
    servers.push_back(std::move(r));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (servers.size() > 1 && !a.up.opts.socket.empty())
    throw CLI::ValidationError("--upstream-socket", "names one server: give the failover servers as HOST[:PORT]");
  RemoteOptions& r = servers.front();
  FetchOptions f;
  f.remote = r;
  f.failover.assign(servers.begin() + 1, servers.end());
  if (a.failover_wait) {
    if (servers.size() < 2) throw CLI::ValidationError("--failover-wait", "goes with several servers in --upstream");
    if (!(*a.failover_wait >= 1) || *a.failover_wait > 86400)
      throw CLI::ValidationError("--failover-wait", "must be 1 to 86400 seconds");
    f.failover_wait_seconds = static_cast<unsigned>(*a.failover_wait);
  }
  f.result_dir = a.result_dir;
  o.inputs = {a.result_dir};
  o.upstream = [f](FetchObserver& obs) {
    FetchOptions mine = f;
    mine.observer = &obs;
    return run_fetch(mine, stdout, stderr);
  };
  o.upstream_stop = [] { request_fetch_stop(); };
  // The engine's options, checked as replay checks them.
  ReplayOptions ro;
  if (!parse_policy(a.policy, ro.policy)) throw CLI::ValidationError("--policy", "doc|ticdc|none|blocking");
  auto q = parse_bytes(a.quota);
  if (!q || *q == 0) throw CLI::ValidationError("--quota", "expected BYTES with an optional K/M/G suffix, from 1 to 1048576G");
  ro.thresholds.quota = *q;
  ro.thresholds.hard_limit_ratio = a.hard_limit_ratio;
  ro.thresholds.path_pause = a.path_pause;
  ro.thresholds.path_resume = a.path_resume;
  ro.thresholds.area_pause = a.area_pause;
  ro.thresholds.area_resume = a.area_resume;
  if (std::string bad = validate_replay_options(ro); !bad.empty()) throw CLI::ValidationError(bad);
  o.relay.policy = ro.policy;
  o.relay.thresholds = ro.thresholds;
  o.timeline = a.timeline;
  o.plot = a.plot;
  for (const std::string* p : {&a.timeline, &a.plot})
    if (*p == "-") throw CLI::ValidationError(p == &a.timeline ? "--timeline" : "--plot", "needs a file name");
#endif
}
#endif

int run(ServeArgs& a) {
#ifndef BINLOGCTL_HAVE_SERVE
  (void)a;
  throw CLI::ValidationError("serve", "this binlogctl was built without OpenSSL (libssl-dev): it cannot serve");
#else
  ServeOptions o;
  o.inputs = a.inputs;
  setup_relay(a, o);
  o.keys = a.keys.load();
  o.bind = a.bind;
  if (a.port_option->count() > 0 || a.bind_option->count() > 0 || a.socket.empty()) o.port = a.port;
  if (a.port < 0 || a.port > 65535) throw CLI::ValidationError("--port", "must be 0 (any free port) to 65535");
  o.socket_path = a.socket;
  // Users: --user with its password, and/or --users-file. Nobody connects without a password.
  std::string password;
  bool have_password = false;
  if (a.password_option->count() > 0) {
    if (a.password == password_prompt_marker()) {
      auto pw = isatty(STDIN_FILENO) != 0 ? prompt_password("serve user '" + a.user + "'") : std::nullopt;
      if (!pw)
        throw CLI::ValidationError("--password", "given without a value and there is no terminal to ask on: use --password=PASSWORD or MYSQL_PWD");
      password = std::move(*pw);
    } else {
      password = a.password;
    }
    have_password = true;
  } else if (const char* env = std::getenv("MYSQL_PWD"); env != nullptr && !a.user.empty()) {
    password = env;
    have_password = true;
  }
  if (have_password && a.user.empty()) throw CLI::ValidationError("--password", "needs --user");
  if (!a.user.empty()) {
    if (!have_password) throw CLI::ValidationError("--user", "needs a password: --password=PASSWORD, --password, or MYSQL_PWD");
    if (password.empty()) throw CLI::ValidationError("--password", "is empty: serve accepts no empty password");
    o.settings.users.push_back(serve_user(a.user, password));
  }
  if (!a.users_file.empty()) {
    std::string error;
    if (!read_users_file(a.users_file, o.settings.users, error)) throw CLI::ValidationError("--users-file", error);
  }
  if (o.settings.users.empty())
    throw CLI::ValidationError("--user", "serve needs --user and a password, or --users-file: it allows no anonymous access");
  if (a.ssl_cert.empty() != a.ssl_key.empty())
    throw CLI::ValidationError(a.ssl_cert.empty() ? "--ssl-key" : "--ssl-cert", "--ssl-cert and --ssl-key go together");
  if (a.require_ssl && a.ssl_cert.empty()) throw CLI::ValidationError("--require-ssl", "needs --ssl-cert and --ssl-key");
  o.ssl_cert = a.ssl_cert;
  o.ssl_key = a.ssl_key;
  o.settings.require_tls = a.require_ssl;
  o.settings.server_id = a.server_id;
  if (a.heartbeat && (*a.heartbeat < 0 || *a.heartbeat > 4294967))
    throw CLI::ValidationError("--heartbeat", "must be 0 (none) to 4294967 seconds");
  o.settings.heartbeat = a.heartbeat;
  o.settings.connect_timeout = seconds_option(a.connect_timeout, "--connect-timeout");
  o.write_timeout = seconds_option(a.write_timeout, "--write-timeout");
  if (a.status_interval < 0) throw CLI::ValidationError("--status-interval", "must be 0 (none) or more seconds");
  o.status_interval = a.status_interval;
  o.status_file = a.status_file;
  if (a.max_connections == 0) throw CLI::ValidationError("--max-connections", "must be 1 or more");
  o.max_connections = a.max_connections;
  struct sigaction sa {};
  sa.sa_handler = on_serve_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return run_serve(o, stderr);
#endif
}
}  // namespace

void setup_serve(CLI::App& app, int& exit_code, bool with_options) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve", "Serve binlog files to replicas and CDC clients over the replication protocol, every event verified");
  if (!with_options) return;
  sub->add_option("files", a->inputs, "Binlog files, index files or directories to serve (.gz/.zst too)");
  const char* net = "Listening";
  a->bind_option = sub->add_option("--bind", a->bind, "The address to listen on (default 127.0.0.1)")->group(net);
  a->port_option = sub->add_option("--port", a->port,
                                   "The TCP port (default 3307; 0: any free port, printed on stderr)")->group(net);
  sub->add_option("--socket", a->socket, "Also (or, without --port/--bind, only) listen on this unix socket")
      ->group(net);
  sub->add_option("--max-connections", a->max_connections, "Connections served at once; more get ERR 1040 (default 64)")
      ->group(net);
  sub->add_option("--connect-timeout", a->connect_timeout,
                  "Seconds a client has to complete the handshake and authentication (default 10)")
      ->group(net);
  sub->add_option("--write-timeout", a->write_timeout,
                  "Seconds a client may leave its socket full before it is dropped (default 60)")
      ->group(net);
  const char* auth = "Authentication and TLS";
  sub->add_option("--user", a->user, "The user replicas connect as")->group(auth);
  a->password_option = sub->add_flag(std::string("--password{") + password_prompt_marker() + "}", a->password,
                                     "--password=PASSWORD, or --password alone to be asked on the terminal "
                                     "(default: the MYSQL_PWD environment variable)")
                           ->group(auth);
  sub->add_option("--users-file", a->users_file,
                  "File of `user:password` or `user:*SHA1HEX` lines (mysql_native_password hashes)")
      ->group(auth);
  sub->add_option("--ssl-cert", a->ssl_cert, "PEM certificate (chain): offer TLS")->group(auth);
  sub->add_option("--ssl-key", a->ssl_key, "PEM private key of --ssl-cert")->group(auth);
  sub->add_flag("--require-ssl", a->require_ssl, "Refuse clients that do not switch to TLS")->group(auth);
  const char* repl = "Replication";
  sub->add_option("--server-id", a->server_id,
                  "The server id serve answers with (default: the files' server id; give another when the "
                  "replica is the server that wrote the files)")
      ->group(repl);
  sub->add_option("--heartbeat", a->heartbeat,
                  "Seconds between heartbeats while a replica waits for events (default: the period the "
                  "replica asks for; 0: none)")
      ->group(repl);
  sub->add_option("--status-interval", a->status_interval,
                  "Every SECS seconds, one line per replica on stderr (server id, host, file, position, lag)")
      ->group(repl);
  sub->add_option("--status-file", a->status_file,
                  "Keep the replicas' status in this JSON file (rewritten every --status-interval, else every second)")
      ->group(repl);
  add_key_options(*sub, a->keys);
  const char* relay = "Relay (--upstream)";
  sub->add_option("--upstream", a->upstream,
                  "HOST[:PORT] of a live primary: fetch --stop-never copies its binlogs into --result-dir and serve "
                  "serves that directory, the replicas near the live end from one shared in-memory tail; "
                  "HOST[:PORT],HOST[:PORT],...: failover servers after the first (MariaDB GTID)")
      ->group(relay);
  sub->add_option("--failover-wait", a->failover_wait,
                  "Seconds a failover server may take to begin sending the directory's newest transaction "
                  "before the next one is asked (default 10)")
      ->group(relay);
  sub->add_option("--result-dir", a->result_dir, "The directory the upstream's binlogs are fetched into (made if missing)")
      ->group(relay);
  sub->add_option("--upstream-user", a->up.opts.user, "The user on the upstream (REPLICATION SLAVE, BINLOG MONITOR)")
      ->group(relay);
  a->up.password_option = sub->add_flag(std::string("--upstream-password{") + password_prompt_marker() + "}",
                                        a->up.password,
                                        "--upstream-password=PASSWORD, or alone to be asked on the terminal "
                                        "(default: MYSQL_PWD)")
                              ->group(relay);
  sub->add_option("--upstream-socket", a->up.opts.socket, "The upstream's unix socket (instead of HOST[:PORT])")
      ->group(relay);
  sub->add_option("--upstream-ssl-mode", a->up.opts.ssl_mode,
                  "DISABLED, PREFERRED (default), REQUIRED, VERIFY_CA, VERIFY_IDENTITY")
      ->check(CLI::IsMember({"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"}, CLI::ignore_case))
      ->group(relay);
  sub->add_option("--upstream-ssl-ca", a->up.opts.ssl_ca, "Certificate authorities to trust for the upstream")
      ->group(relay);
  sub->add_option("--upstream-ssl-cert", a->up.opts.ssl_cert, "Client certificate for the upstream")->group(relay);
  sub->add_option("--upstream-ssl-key", a->up.opts.ssl_key, "Client private key for the upstream")->group(relay);
  sub->add_option("--connection-server-id", a->up.opts.server_id,
                  "The replica server id fetch reads the upstream under (default: one made from the process id)")
      ->group(relay);
  sub->add_option("--policy", a->policy, "Flow-control policy of the tail: doc (default), ticdc, none, blocking")
      ->check(CLI::IsMember({"doc", "ticdc", "none", "blocking"}))
      ->group(relay);
  sub->add_option("--quota", a->quota, "Memory quota of the tail (BYTES, K/M/G suffixes; default 16M)")->group(relay);
  sub->add_option("--hard-limit-ratio", a->hard_limit_ratio, "Circuit breaker at this multiple of the quota (default 1.5)")
      ->group(relay);
  sub->add_option("--path-pause", a->path_pause, "Stop feeding a replica's queue at this fraction of the quota (default 0.20)")
      ->group(relay);
  sub->add_option("--path-resume", a->path_resume, "Feed it again below this fraction (default 0.10)")->group(relay);
  sub->add_option("--area-pause", a->area_pause, "Stop reading the upstream at this fraction of the quota (default 0.80)")
      ->group(relay);
  sub->add_option("--area-resume", a->area_resume, "Read it again below this fraction (default 0.50)")->group(relay);
  sub->add_option("--timeline", a->timeline, "JSON Lines of the tail's flow-control actions and samples (replay's format)")
      ->group(relay);
  sub->add_option("--plot", a->plot, "SVG of the tail's memory against its thresholds, written when serve stops "
                                     "(replay's plot)")
      ->group(relay);
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
