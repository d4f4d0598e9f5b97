// binlogctl serve: options -> binlogctl::run_serve (the archive served to replicas and CDC
// clients over the replication protocol; needs OpenSSL).
#ifdef BINLOGCTL_HAVE_SERVE
#include <binlogctl/serve.h>
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
};

#ifdef BINLOGCTL_HAVE_SERVE
extern "C" void on_serve_stop_signal(int) { request_serve_stop(); }

std::chrono::milliseconds seconds_option(double s, const char* name) {
  if (!(s > 0) || s > 86400 * 365) throw CLI::ValidationError(name, "must be a number of seconds above 0");
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
}
#endif

int run(ServeArgs& a) {
#ifndef BINLOGCTL_HAVE_SERVE
  (void)a;
  throw CLI::ValidationError("serve", "this binlogctl was built without OpenSSL (libssl-dev): it cannot serve");
#else
  ServeOptions o;
  o.inputs = a.inputs;
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

void setup_serve(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve", "Serve binlog files to replicas and CDC clients over the replication protocol, every event verified");
  sub->add_option("files", a->inputs, "Binlog files, index files or directories to serve (.gz/.zst too)")->required();
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
  sub->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace binlogctl::cli
