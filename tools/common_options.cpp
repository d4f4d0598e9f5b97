#include <binlogctl/datetime.h>
#include <binlogctl/dump.h>

#include <fmt/format.h>

#include <binlogctl/inputs.h>
#include <binlogctl/output.h>

#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "commands.h"

namespace binlogctl::cli {

void add_progress_option(CLI::App& sub, std::string& mode) {
  sub.add_option("--progress", mode, "Progress bar on stderr: auto (when stderr is a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_val("auto");
}

ProgressMode progress_mode(const std::string& mode) {
  return mode == "always" ? ProgressMode::always : mode == "never" ? ProgressMode::never : ProgressMode::auto_;
}

void ReadArgs::check_timezone(const std::string& tz) {
  if (!fixed_timezone_offset(tz) && !timezone_name_exists(tz))
    throw CLI::ValidationError("--timezone", tz + ": expected UTC, +HH:MM/-HH:MM or a zone name such as Asia/Shanghai");
}

std::optional<std::int64_t> datetime_option(const std::string& value, const char* option, const std::string& timezone) {
  if (value.empty()) return std::nullopt;
  auto t = parse_datetime_in_zone(value, timezone);
  if (!t)
    throw CLI::ValidationError(option, value + ": not a date and time that exists (expected YYYY-MM-DD HH:MM:SS or YYYY-MM-DD)");
  return t;
}

void add_read_options(CLI::App& sub, ReadArgs& read, const std::string& timezone_help) {
  sub.add_option("--start-position", read.start_position, "Start at the first event at or after this offset (first file)");
  sub.add_option("--stop-position", read.stop_position, "Stop before the first event at or after this offset (last file)");
  sub.add_option("--start-datetime", read.start_datetime,
                 "Skip events before this time (YYYY-MM-DD HH:MM:SS, in --timezone)");
  sub.add_option("--stop-datetime", read.stop_datetime, "Stop at the first event at or after this time (in --timezone)");
  sub.add_option("--timezone", read.timezone,
                 "Zone of --start/--stop-datetime" + timezone_help + ": UTC, +08:00, Asia/Shanghai; default UTC")
      ->default_val("UTC");
  sub.add_option("--server-id", read.server_id, "Only events written by the server with this id (as mysqlbinlog)");
  sub.add_option("--exclude-server-ids", read.exclude_server_ids,
                 "Leave out events written by these servers (comma-separated ids)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub.add_flag("--no-verify-checksum", read.no_checksum, "Do not verify CRC32 checksums");
  add_progress_option(sub, read.progress);
}

void add_gtid_options(CLI::App& sub, RowSelectionArgs& s, const std::string& what) {
  s.include_option = sub.add_option("--include-gtids", s.include_gtids,
                                    "Only " + what + " in this GTID set (MySQL uuid:1-5 or MariaDB 0-1-100)");
  s.exclude_option = sub.add_option("--exclude-gtids", s.exclude_gtids, "Leave out " + what + " in this GTID set");
}

std::optional<GtidSelection> gtid_selection_option(const std::string& text, const char* option, bool given) {
  if (!given) return std::nullopt;
  auto s = GtidSelection::parse(text);
  if (!s)
    throw CLI::ValidationError(option, fmt::format("{} at character {}: {}", text, s.error().offset, s.error().what));
  if (s->empty()) throw CLI::ValidationError(option, "an empty GTID set selects nothing; leave the option out to select every transaction");
  return std::move(*s);
}

TableFilter table_filter_option(const std::string& rules) {
  auto f = TableFilter::parse(rules);
  if (!f) {
    // Quote the rule itself (up to the next comma) and why it does not compile.
    const std::size_t at = std::min<std::size_t>(f.error().offset, rules.size());
    const std::string rule = rules.substr(at, rules.find(',', at) == std::string::npos ? std::string::npos : rules.find(',', at) - at);
    throw CLI::ValidationError("--filter", fmt::format("rule '{}' (at character {}): {}", rule, at, f.error().what));
  }
  return std::move(*f);
}

std::shared_ptr<const SchemaHistory> schema_files_option(const std::vector<std::string>& files) {
  if (files.empty()) return nullptr;
  auto h = std::make_shared<SchemaHistory>();
  for (const std::string& path : files) {
    std::string error;
    if (!load_schema_file(path, *h, error)) throw CLI::ValidationError("--schema", error);
  }
  return h;
}

namespace {

// The -o target is one of the inputs (the same file by device and inode), or the index file or
// directory an input came from.
bool names_an_input(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(path.c_str(), &out) != 0) return false;  // does not exist yet: cannot be an input
  auto same = [&](const std::string& p) {
    struct stat in {};
    return ::stat(p.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
  };
  for (const std::string& a : inputs)
    if (a != "-" && same(a)) return true;
  for (const InputFile& f : expand_inputs(inputs).files)
    if (f.path != "-" && !f.missing && same(f.path)) return true;
  return false;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty() || path == "-") return;
  if (names_an_input(path, inputs))
    throw CLI::ValidationError("-o", path + ": is one of the inputs; refusing to write over it");
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw CLI::ValidationError("-o", path + ": is a directory");
  const bool device_path = path.starts_with("/dev/") || path.starts_with("/proc/");
  if (exists && (!S_ISREG(st.st_mode) || device_path)) {
    // A device, FIFO or socket (/dev/null, /dev/stdout on a pipe, a named pipe), or a path
    // under /dev or /proc (/dev/stdout onto a file opened by the shell, perhaps for appending):
    // written to as it is. A temporary file renamed over it would replace the device or pipe
    // itself, or cut the file loose from the descriptor the shell holds.
    // Appending: a file behind /dev/stdout has been truncated by the shell already when it
    // should be (>), and must not be when it should not (>>); devices and pipes ignore it.
    f_ = std::fopen(path.c_str(), "ab");
    if (f_ == nullptr) {
      f_ = stdout;
      throw std::system_error(errno, std::generic_category(), path);
    }
    path_ = path;
    direct_ = true;
    return;
  }
  std::filesystem::path target(path);
  {
    // A symbolic link: the file it names gets the output (beside it, then renamed over it),
    // the link stays a link.
    std::error_code ec;
    if (std::filesystem::is_symlink(target, ec)) {
      std::filesystem::path real = std::filesystem::weakly_canonical(target, ec);
      if (!ec) target = real;
    }
  }
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl = (dir / ("." + target.filename().string() + ".binlogctl-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::system_error(errno, std::generic_category(), path);
  // mkstemp makes the file 0600: give it what fopen would have (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  f_ = ::fdopen(fd, "wb");
  if (f_ == nullptr) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw std::system_error(e, std::generic_category(), path);
  }
  tmp_ = tmpl;
  path_ = path;
  target_ = target.string();
}

OutputFile::FileBuf::int_type OutputFile::FileBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  return std::fputc(c, f) == EOF ? traits_type::eof() : c;
}

std::streamsize OutputFile::FileBuf::xsputn(const char* s, std::streamsize n) {
  return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<std::size_t>(n), f));
}

std::ostream& OutputFile::stream() {
  if (!os_) {
    buf_.f = f_;
    os_ = std::make_unique<std::ostream>(&buf_);
  }
  return *os_;
}

void OutputFile::commit() {
  if (os_) os_->flush();
  if (f_ == stdout) return;
  const bool flushed = std::fflush(f_) == 0;
  const int e = errno;
  const bool closed = std::fclose(f_) == 0;
  const int close_errno = errno;
  f_ = stdout;
  if (direct_) {
    if (!flushed || !closed) throw std::system_error(flushed ? close_errno : e, std::generic_category(), path_);
    return;
  }
  if (!flushed) {
    ::unlink(tmp_.c_str());
    throw std::system_error(e, std::generic_category(), path_);
  }
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int re = errno;
    ::unlink(tmp_.c_str());
    throw std::system_error(re, std::generic_category(), path_);
  }
}

OutputFile::~OutputFile() {
  if (f_ == stdout) return;
  std::fclose(f_);
  if (!direct_) ::unlink(tmp_.c_str());  // not committed: the run was interrupted by an error
}

void check_selection(const std::vector<std::string>& inputs, const std::optional<std::uint64_t>& start_pos,
                     const std::optional<std::uint64_t>& stop_pos, const std::optional<std::int64_t>& start_time,
                     const std::optional<std::int64_t>& stop_time) {
  if (start_time && stop_time && *start_time >= *stop_time)
    throw CLI::ValidationError("--start-datetime", "is not before --stop-datetime: the selection is empty");
  if (start_pos && stop_pos && *start_pos >= *stop_pos && expand_inputs(inputs).files.size() == 1)
    throw CLI::ValidationError("--start-position",
                               fmt::format("{} is not before --stop-position {} in a one-file chain: the selection is empty",
                                           *start_pos, *stop_pos));
}

// ---- -R and the connection options ----

namespace {
constexpr char kPromptMarker[] = "ASK";  // --password given without a value (shown in --help as --password{ASK})
}  // namespace

const char* password_prompt_marker() { return kPromptMarker; }

std::optional<std::string> prompt_password(const std::string& label) {
  std::FILE* tty = std::fopen("/dev/tty", "r+");
  if (tty == nullptr) return std::nullopt;
  const int fd = fileno(tty);
  termios old {};
  const bool have = ::tcgetattr(fd, &old) == 0;
  if (have) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  fmt::print(tty, "Enter password for {}: ", label);
  std::fflush(tty);
  std::string pw;
  for (int c; (c = std::fgetc(tty)) != EOF && c != '\n';) pw.push_back(static_cast<char>(c));
  if (have) ::tcsetattr(fd, TCSAFLUSH, &old);
  fmt::print(tty, "\n");
  std::fclose(tty);
  return pw;
}

void add_remote_options(CLI::App& sub, RemoteArgs& r, bool with_flag) {
  const char* group = "Reading from a live server";
  if (with_flag)
    sub.add_flag("-R,--read-from-remote-server", r.enabled,
                 "Read the binlogs from a running server over the replication protocol; FILE... are then "
                 "its binlog names (default: every file SHOW BINARY LOGS lists)")
        ->group(group);
  else
    r.enabled = true;
  sub.add_option("--host", r.opts.host, "The server's host name or address (default localhost)")->group(group);
  sub.add_option("--port", r.opts.port, "The server's TCP port (default 3306)")->group(group);
  sub.add_option("--socket", r.opts.socket, "The server's unix socket (instead of --host/--port)")->group(group);
  sub.add_option("--user", r.opts.user, "The user (needs REPLICATION SLAVE; listing files, BINLOG MONITOR)")
      ->group(group);
  r.password_option = sub.add_flag(std::string("--password{") + kPromptMarker + "}", r.password,
                                   "--password=PASSWORD, or --password alone to be asked on the terminal "
                                   "(default: the MYSQL_PWD environment variable)")
                          ->group(group);
  sub.add_option("--ssl-mode", r.opts.ssl_mode,
                 "DISABLED, PREFERRED (TLS when --ssl-ca/--ssl-cert/--ssl-key are given), REQUIRED, "
                 "VERIFY_CA, VERIFY_IDENTITY")
      ->check(CLI::IsMember({"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"}, CLI::ignore_case))
      ->default_val("PREFERRED")
      ->group(group);
  sub.add_option("--ssl-ca", r.opts.ssl_ca, "File of the certificate authorities to trust")->group(group);
  sub.add_option("--ssl-cert", r.opts.ssl_cert, "The client's certificate file")->group(group);
  sub.add_option("--ssl-key", r.opts.ssl_key, "The client's private key file")->group(group);
  sub.add_option("--connection-server-id", r.opts.server_id,
                 "The replica server id to read under (default: one made from the process id)")
      ->group(group);
  sub.add_option("--start-gtid", r.opts.start_gtid,
                 "MariaDB: start after this GTID position (domain-server-seq, one per domain, comma-separated), "
                 "as a replica with that @@gtid_slave_pos would; the server picks the first file")
      ->group(group);
  sub.add_flag("--stop-never", r.opts.stop_never,
               "Keep reading: wait for new events and follow rotations (default: stop at the server's current end)")
      ->group(group);
}

std::unique_ptr<InputSet> RemoteArgs::open(const std::vector<std::string>& names,
                                           const std::optional<GtidSelection>& exclude) {
  if (!enabled) {
    if (names.empty()) throw CLI::RequiredError("files");
    return nullptr;
  }
#ifndef BINLOGCTL_HAVE_REMOTE
  (void)names;
  (void)exclude;
  throw CLI::ValidationError("-R", "this binlogctl was built without libmariadb (MariaDB Connector/C): it cannot read from a server");
#else
  resolve();
  for (const std::string& n : names)
    if (n == "-" || n.find('/') != std::string::npos)
      throw CLI::ValidationError("-R", n + ": with -R the arguments are binlog names on the server, not paths");
  if (!opts.start_gtid.empty() && !names.empty())
    throw CLI::ValidationError("--start-gtid", "the server picks the first file from the GTID position: name no binlog");
  if (exclude && exclude->is_mysql()) opts.mysql_exclude = exclude->mysql_set();
  opts.notices = stderr;  // reconnects under --stop-never
  if (opts.stop_never) LineOutput::set_line_buffered_always(true);  // each record as it comes
  return remote_inputs(opts, names);
#endif
}

void RemoteArgs::resolve() {
  for (char& c : opts.ssl_mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (password_option != nullptr && password_option->count() > 0) {
    if (password == kPromptMarker) {
      auto pw = isatty(STDIN_FILENO) != 0 ? prompt_password(server_label(opts)) : std::nullopt;
      if (!pw)
        throw CLI::ValidationError("--password", "given without a value and there is no terminal to ask on: use --password=PASSWORD or MYSQL_PWD");
      opts.password = std::move(*pw);
    } else {
      opts.password = password;
    }
  } else if (const char* env = std::getenv("MYSQL_PWD")) {
    opts.password = env;
  }
}

}  // namespace binlogctl::cli
