#include <csignal>
#include <binlogctl/datetime.h>
#include <binlogctl/progress.h>
#include <binlogctl/selection.h>

#include <fmt/format.h>

#include <binlogctl/inputs.h>
#include <binlogctl/output.h>

#include <signal.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The date-time forms mysqlbinlog takes (the server's DATETIME literals) in binlogctl's one form:
// "YYYY/MM/DD HH:MM" (any punctuation between the parts, seconds optional), YYYYMMDD[HHMMSS].
std::string canonical_datetime(std::string v) {
  if (all_digits(v) && (v.size() == 8 || v.size() == 14)) {
    std::string c = v.substr(0, 4) + "-" + v.substr(4, 2) + "-" + v.substr(6, 2);
    if (v.size() == 14) c += " " + v.substr(8, 2) + ":" + v.substr(10, 2) + ":" + v.substr(12, 2);
    return c;
  }
  // Y-M-D with another punctuation character (2025/01/01, 2025.01.01).
  if (v.size() >= 10 && all_digits(v.substr(0, 4)) && v[4] == v[7] && std::ispunct(static_cast<unsigned char>(v[4])) &&
      v[4] != '-') {
    v[4] = v[7] = '-';
  }
  // HH:MM without seconds.
  const std::size_t space = v.find_first_of(" T");
  if (space != std::string::npos && v.size() - space == 6 && v[space + 3] == ':') v += ":00";
  return v;
}

}  // namespace

std::optional<std::int64_t> datetime_option(const std::string& value, const char* option, const std::string& timezone) {
  if (value.empty()) return std::nullopt;
  // Seconds since the epoch: @N, or a number of 9 to 11 digits (no DATETIME literal has as many).
  if (value.size() > 1 && value[0] == '@' && all_digits(std::string_view(value).substr(1)) && value.size() <= 13)
    return std::stoll(value.substr(1));
  if (all_digits(value) && value.size() >= 9 && value.size() <= 11) return std::stoll(value);
  auto t = parse_datetime_in_zone(canonical_datetime(value), timezone);
  if (!t)
    throw CLI::ValidationError(option, value + ": not a date and time that exists (expected YYYY-MM-DD HH:MM:SS, YYYY-MM-DD, or @SECONDS since the epoch)");
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
  sub.add_option("--exclude-server-ids,--ignore-server-ids", read.exclude_server_ids,
                 "Leave out events written by these servers (comma-separated ids; --ignore-server-ids: mariadb-binlog's name)")
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
    std::vector<std::string> warnings;
    if (!load_schema_file(path, *h, error, &warnings)) throw CLI::ValidationError("--schema", error);
    for (const std::string& w : warnings) fmt::print(stderr, "binlogctl: {}\n", w);
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

// The temporary files of -o (and replay's --timeline/--plot) not yet renamed into place: a
// SIGINT, SIGTERM or SIGHUP removes them before the signal ends the process as it would have
// (status 128+N), so an interrupted run leaves no hidden file beside its target.
constexpr int kTempSlots = 8;
std::atomic<const char*> temp_files[kTempSlots];

extern "C" void remove_temp_files_and_die(int sig) {
  for (auto& slot : temp_files)
    if (const char* p = slot.load()) ::unlink(p);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int register_temp_file(const char* path) {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      // A signal the caller ignores (nohup) stays ignored; a handler someone else set stays.
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temp_files_and_die;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
  for (int i = 0; i < kTempSlots; ++i) {
    const char* expected = nullptr;
    if (temp_files[i].compare_exchange_strong(expected, path)) return i;
  }
  return -1;  // more outputs than slots: this one is still removed on errors, not on signals
}

void unregister_temp_file(int& slot) {
  if (slot >= 0) temp_files[slot].store(nullptr);
  slot = -1;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty() || path == "-") return;
  if (all_digits(path))  // mysqlbinlog's -o N is --offset N (events to skip)
    throw CLI::ValidationError("-o", path + ": a bare number is taken for mysqlbinlog's -o (--offset, events to skip), "
                                            "not a file name: binlogctl selects with --start-position; to write a file "
                                            "named " + path + ", give --output=./" + path);
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
  slot_ = register_temp_file(tmp_.c_str());
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

void OutputFile::commit(int rc, OnProblems on_problems) {
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
  const bool keep = rc == 0 || (rc == 1 && (on_problems == OnProblems::replace ||
                                            (on_problems == OnProblems::keep_existing && !exists(target_))));
  if (!keep) {
    ::unlink(tmp_.c_str());
    unregister_temp_file(slot_);
    if (exists(target_))
      fmt::print(stderr, "binlogctl: {}: left as it was (the run ended with exit status {})\n", path_, rc);
    else if (rc == 1)
      fmt::print(stderr, "binlogctl: {}: not written (the run ended with exit status 1)\n", path_);
    return;
  }
  if (!flushed) {
    ::unlink(tmp_.c_str());
    unregister_temp_file(slot_);
    throw std::system_error(e, std::generic_category(), path_);
  }
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int re = errno;
    ::unlink(tmp_.c_str());
    unregister_temp_file(slot_);
    throw std::system_error(re, std::generic_category(), path_);
  }
  unregister_temp_file(slot_);
}

OutputFile::~OutputFile() {
  if (f_ == stdout) return;
  std::fclose(f_);
  if (!direct_) ::unlink(tmp_.c_str());  // not committed: the run was interrupted by an error
  unregister_temp_file(slot_);
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

// ---- mysqlbinlog's habits ----

namespace {

struct Habit {
  const char* names;  // space-separated spellings (short ones also as -vv, -vvv)
  const char* instead;
};

// mysqlbinlog's and mariadb-binlog's options that binlogctl has under no name, with what it does
// instead (the ones with the same meaning are aliases: --result-file, --ignore-server-ids, -H).
constexpr Habit kHabits[] = {
    {"-v -vv -vvv --verbose", "rows are decoded by `binlogctl convert` (JSON Lines; --format sql for SQL statements)"},
    {"--base64-output", "binlogctl writes no BINLOG base64 statements: `binlogctl convert --format sql` writes the rows as SQL"},
    {"--raw", "`binlogctl fetch --result-dir DIR` makes raw copies of a server's binlogs"},
    {"-t --to-last-log", "with -R and no BINLOG named binlogctl reads every file the server lists (--stop-never to go on waiting)"},
    {"--skip-gtids", "`binlogctl convert --format sql --skip-gtids` leaves the GTID statements out of the SQL; transactions are selected with --include-gtids/--exclude-gtids"},
    {"-s --short-form", "`binlogctl dump` lists the events; `binlogctl convert --format sql` writes the statements and rows"},
    {"-T --table", "tables are selected with --filter 'DB\\.TABLE' (comma-separated regexes), databases with -d"},
    {"--offset", "binlogctl selects by byte position: --start-position N (`binlogctl dump` shows every event's position)"},
    {"--start-gtid --stop-gtid", "on files, transactions are selected by GTID with --exclude-gtids ..GTID (start after it) and "
                                 "--include-gtids ..GTID (stop after it); -R --start-gtid starts a server's dump at a GTID position"},
    {"-f --force-read --force-if-open", "binlogctl always reads past damage and open files: what it cannot read is reported and skipped"},
    {"--print-table-metadata", "`binlogctl dump --decode` shows each TABLE_MAP's column metadata"},
    {"-B --flashback", "`binlogctl convert --flashback` writes the SQL that undoes the selected range"},
    {"-H --hexdump", "`binlogctl dump --hexdump` adds the raw bytes of each event"},
    {"-r --result-file", "the output goes to standard output or to -o FILE"},
    {"--ignore-server-ids", "events are left out by server with --exclude-server-ids"},
};

bool is_gtid_text(const std::string& v) {
  // MariaDB domain-server-seq (digits, two dashes), or MySQL uuid:N (36 characters before a colon)
  if (v.empty()) return false;
  const std::size_t colon = v.find(':');
  if (colon == 36) return true;
  int dashes = 0;
  for (char c : v) {
    if (c == '-') ++dashes;
    else if (c == ',') dashes = 0;
    else if (c < '0' || c > '9') return false;
    if (dashes > 2) return false;
  }
  return dashes == 2;
}

}  // namespace

std::string mysqlbinlog_habit(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands({}))
    if (s->get_name() == argv[1]) sub = s;
  if (sub == nullptr) return {};
  auto has = [&](const std::string& name) { return sub->get_option_no_throw(name) != nullptr; };
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string name = arg.substr(0, arg.find('='));
    // A GTID where a byte position is expected.
    if ((name == "--start-position" || name == "--stop-position" || name == "-j") && has("--start-position")) {
      const std::string value = name.size() < arg.size() ? arg.substr(name.size() + 1) : i + 1 < argc ? argv[i + 1] : "";
      if (is_gtid_text(value))
        return fmt::format("{} {}: a byte offset is expected, not a GTID; select transactions by GTID with {} ..{} "
                           "(on files), or start a server's dump at one with -R --start-gtid",
                           name, value, name == "--stop-position" ? "--include-gtids" : "--exclude-gtids", value);
      continue;
    }
    // A short option with its value glued on (-rout.txt, -vv) is looked up by its letter(s).
    const std::string key = arg.size() > 2 && arg[1] != '-' && arg.find_first_not_of('v', 1) != std::string::npos
                                ? arg.substr(0, 2)
                                : name;
    if (has(key)) continue;  // the subcommand has it (dump's --hexdump, -R's --start-gtid)
    for (const Habit& h : kHabits) {
      std::string_view names = h.names;
      for (std::size_t at = 0; at < names.size();) {
        const std::size_t sp = std::min(names.find(' ', at), names.size());
        if (names.substr(at, sp - at) == key)
          return fmt::format("{}: not a binlogctl {} option (mysqlbinlog's?): {}", key, sub->get_name(), h.instead);
        at = sp + 1;
      }
    }
  }
  return {};
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
  if (with_flag) {
    CLI::Option* flag = sub.add_flag("-R,--read-from-remote-server", r.enabled,
                                     "Read the binlogs from a running server over the replication protocol; FILE... are "
                                     "then its binlog names (default: every file SHOW BINARY LOGS lists)")
                            ->group(group);
    // The server sends the events decrypted: no key file with -R (add_key_options came first).
    if (CLI::Option* key = sub.get_option_no_throw("--key-file")) flag->excludes(key);
    if (CLI::Option* ring = sub.get_option_no_throw("--keyring-file")) flag->excludes(ring);
  } else {
    r.enabled = true;
  }
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
  if (with_flag)
    for (const char* name : {"--host", "--port", "--socket", "--user", "--password", "--ssl-mode", "--ssl-ca",
                             "--ssl-cert", "--ssl-key", "--connection-server-id", "--start-gtid", "--stop-never"})
      r.server_options.push_back(sub.get_option(name));
}

#ifdef BINLOGCTL_HAVE_REMOTE
namespace {
extern "C" void on_remote_stop_signal(int) { request_remote_stop(); }
}  // namespace
#endif

std::unique_ptr<InputSet> RemoteArgs::open(const std::vector<std::string>& names,
                                           const std::optional<GtidSelection>& exclude) {
  if (!enabled) {
    // An option for a live server, on files: a usage error that says what to use instead.
    for (const CLI::Option* opt : server_options) {
      if (opt->count() == 0) continue;
      const std::string name = opt->get_name();
      std::string instead;
      if (name == "--start-gtid") {
        std::string set;  // 0-1-100,1-2-5 -> ..0-1-100,..1-2-5
        for (std::size_t at = 0; at <= opts.start_gtid.size();) {
          const std::size_t comma = std::min(opts.start_gtid.find(',', at), opts.start_gtid.size());
          if (comma > at) set += (set.empty() ? ".." : ",..") + opts.start_gtid.substr(at, comma - at);
          at = comma + 1;
        }
        instead = fmt::format("; on files, leave out the transactions up to a GTID with --exclude-gtids {}",
                              set.empty() ? "..DOMAIN-SERVER-SEQ" : set);
      } else if (name == "--stop-never") {
        instead = "; files are read to their end (to follow a server's new events: -R --stop-never)";
      }
      throw CLI::ValidationError(name, "reads from a live server: it needs -R (--read-from-remote-server)" + instead);
    }
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
  if (opts.stop_never) {
    LineOutput::set_line_buffered_always(true);  // each record as it comes
    // SIGINT/SIGTERM, the way a --stop-never read ends: the read stops after the last complete
    // event, the output is finished (summaries too) and the exit status is that of what was read,
    // as fetch does. No SA_RESTART: the read waiting for the server must return.
    struct sigaction sa {};
    sa.sa_handler = on_remote_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  }
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

void add_key_options(CLI::App& sub, KeyArgs& k) {
  const char* group = "Encrypted binlogs";
  sub.add_option("--key-file", k.key_files,
                 "MariaDB encrypt_binlog: the server's file_key_management key file (id;hex-key lines), to "
                 "decrypt encrypted binlogs; repeat it for files written under older keys")
      ->allow_extra_args(false)
      ->group(group);
  sub.add_option("--keyring-file", k.keyring_files,
                 "MySQL 8.0.14+ binlog_encryption: the server's keyring_file plugin data file "
                 "(keyring_file_data), to decrypt encrypted binlogs; repeat it for several")
      ->allow_extra_args(false)
      ->group(group);
  sub.add_option("--key-file-key", k.file_key,
                 "The secret of an encrypted key file (file_key_management_filekey), or FILE:PATH to read it "
                 "from a file")
      ->group(group);
}

const KeyRing* KeyArgs::load() {
  if (key_files.empty() && !file_key.empty())
    throw CLI::ValidationError("--key-file-key", "is the secret of a --key-file: give the key file");
  if (!any()) return nullptr;
  if (!ring_) {
    ring_ = std::make_unique<KeyRing>();
    try {
      for (const std::string& f : key_files) ring_->load(f, file_key);
    } catch (const KeyFileError& e) {
      throw CLI::ValidationError("--key-file", e.what());
    }
    try {
      for (const std::string& f : keyring_files) ring_->load_mysql_keyring(f);
    } catch (const KeyFileError& e) {
      throw CLI::ValidationError("--keyring-file", e.what());
    }
  }
  return ring_.get();
}

InputSet* KeyArgs::wrap(const std::vector<std::string>& inputs, InputSet* remote) {
  if (key_files.empty() && !file_key.empty())
    throw CLI::ValidationError("--key-file-key", "is the secret of a --key-file: give the key file");
  if (!any()) return remote;
  if (remote != nullptr)
    throw CLI::ValidationError(key_files.empty() ? "--keyring-file" : "--key-file",
                               "with -R the server sends the events decrypted: no key file is needed");
  load();
  files_ = path_inputs(inputs);
  decrypting_ = decrypting_inputs(*files_, *ring_);
  return decrypting_.get();
}

}  // namespace binlogctl::cli
