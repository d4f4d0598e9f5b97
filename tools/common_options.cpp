#include <binlogctl/datetime.h>
#include <binlogctl/dump.h>

#include <fmt/format.h>

#include <binlogctl/inputs.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  const std::filesystem::path target(path);
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
  std::fclose(f_);
  f_ = stdout;
  if (!flushed) {
    ::unlink(tmp_.c_str());
    throw std::system_error(e, std::generic_category(), path_);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int re = errno;
    ::unlink(tmp_.c_str());
    throw std::system_error(re, std::generic_category(), path_);
  }
}

OutputFile::~OutputFile() {
  if (f_ == stdout) return;
  std::fclose(f_);
  ::unlink(tmp_.c_str());  // not committed: the run was interrupted by an error
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

}  // namespace binlogctl::cli
