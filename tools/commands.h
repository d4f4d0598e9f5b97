// One setup function per subcommand (CLI11 "subcommands in files" pattern): each adds its
// options to the app and a callback that runs the library and stores the exit status. With
// `with_options` false it adds only the subcommand's name and description (main() sets up the
// options of the subcommand named on the command line only: those of all eight took about 7 M
// instructions, a few milliseconds, at every start).
#pragma once

#include <CLI/CLI.hpp>
#include <binlogctl/convert.h>
#include <binlogctl/crypto.h>
#include <binlogctl/inputs.h>
#include <binlogctl/progress.h>
#include <binlogctl/remote.h>
#include <binlogctl/schema.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace binlogctl::cli {

void setup_dump(CLI::App& app, int& exit_code, bool with_options);
void setup_convert(CLI::App& app, int& exit_code, bool with_options);
void setup_verify(CLI::App& app, int& exit_code, bool with_options);
void setup_replay(CLI::App& app, int& exit_code, bool with_options);
void setup_stats(CLI::App& app, int& exit_code, bool with_options);
void setup_fetch(CLI::App& app, int& exit_code, bool with_options);
void setup_schema(CLI::App& app, int& exit_code, bool with_options);
void setup_serve(CLI::App& app, int& exit_code, bool with_options);

// Shared option helpers (common_options.cpp).
// mysqlbinlog's and mariadb-binlog's options that binlogctl does not take under that name: a
// usage message that says what binlogctl does instead ("" when argv holds none of them).
std::string mysqlbinlog_habit(const CLI::App& app, int argc, char** argv);
// Reads a password from the terminal with echo off; nullopt when there is no terminal.
std::optional<std::string> prompt_password(const std::string& label);
// The value a `--password{MARKER}` flag takes when given without `=PASSWORD`.
const char* password_prompt_marker();
void add_progress_option(CLI::App& sub, std::string& mode);
ProgressMode progress_mode(const std::string& mode);
// "" -> nullopt; else the time read in `timezone`, or a ValidationError naming the option.
std::optional<std::int64_t> datetime_option(const std::string& value, const char* option, const std::string& timezone);
// --include-gtids / --exclude-gtids: not given -> nullopt; else the parsed selection, or a
// ValidationError naming the option and where the text stops parsing (an empty text included).
std::optional<GtidSelection> gtid_selection_option(const std::string& text, const char* option, bool given);
// --filter: the parsed rules (empty text: match everything), or a ValidationError.
TableFilter table_filter_option(const std::string& rules);
// --schema FILE...: schema history seeded from the files, null when none; ValidationError when a
// file cannot be read.
std::shared_ptr<const SchemaHistory> schema_files_option(const std::vector<std::string>& files);

// Selections that cannot select anything are usage errors: a start at or after the stop
// (positions: when the chain is one file, since they apply to the first and the last file).
void check_selection(const std::vector<std::string>& inputs, const std::optional<std::uint64_t>& start_pos,
                     const std::optional<std::uint64_t>& stop_pos, const std::optional<std::int64_t>& start_time,
                     const std::optional<std::int64_t>& stop_time);

// The reading options of every subcommand that reads a chain: what the command line gave,
// applied to a library options struct (DumpOptions, ConvertOptions, StatsOptions) in one place.
struct ReadArgs {
  std::string progress = "auto";
  std::string start_datetime, stop_datetime;
  std::string timezone = "UTC";
  std::uint64_t start_position = 0, stop_position = 0;
  std::optional<std::uint32_t> server_id;
  std::vector<std::uint32_t> exclude_server_ids;
  bool no_checksum = false;
  template <class Opts>
  void apply(Opts& o) const {
    check_timezone(timezone);
    o.progress = progress_mode(progress);
    o.verify_checksums = !no_checksum;
    if (start_position != 0) o.start_position = start_position;
    if (stop_position != 0) o.stop_position = stop_position;
    o.start_datetime = datetime_option(start_datetime, "--start-datetime", timezone);
    o.stop_datetime = datetime_option(stop_datetime, "--stop-datetime", timezone);
    o.server_id = server_id;
    o.exclude_server_ids = exclude_server_ids;
    check_selection(o.inputs, o.start_position, o.stop_position, o.start_datetime, o.stop_datetime);
  }
  // ValidationError unless `tz` is UTC, +HH:MM/-HH:MM or a zone name the system knows.
  static void check_timezone(const std::string& tz);
};

// The options of ReadArgs, with the same names and words in every subcommand that reads a chain
// (dump, convert, stats): positions, datetimes, --timezone (`timezone_help`: what else the zone
// is used for in this subcommand, may be empty), server ids, checksums, progress.
void add_read_options(CLI::App& sub, ReadArgs& read, const std::string& timezone_help);

struct RowSelectionArgs;
// --include-gtids / --exclude-gtids, with the same words in every subcommand: "Only `what` in this
// GTID set ...", "Leave out `what` in this GTID set".
void add_gtid_options(CLI::App& sub, RowSelectionArgs& s, const std::string& what);

// The row-change selection of convert and stats: GTID sets, the table filter, schema files.
struct RowSelectionArgs {
  std::string include_gtids, exclude_gtids, filter;
  std::vector<std::string> schema_files;
  // The options themselves, to tell "not given" from "given empty" (an empty set selects
  // nothing: a usage error, not "everything").
  const CLI::Option* include_option = nullptr;
  const CLI::Option* exclude_option = nullptr;
  template <class Opts>
  void apply(Opts& o) const {
    apply_gtids(o);
    o.filter = table_filter_option(filter);
    o.schema = schema_files_option(schema_files);
  }
  // The GTID sets alone (dump, which has no table filter or schema).
  template <class Opts>
  void apply_gtids(Opts& o) const {
    o.include_gtids = gtid_selection_option(include_gtids, "--include-gtids", given(include_option));
    o.exclude_gtids = gtid_selection_option(exclude_gtids, "--exclude-gtids", given(exclude_option));
  }
  static bool given(const CLI::Option* opt) { return opt != nullptr && opt->count() > 0; }
};

// -o FILE: where a subcommand's output goes ("" or "-": stdout). A FILE that is one of the
// inputs (the same file by device and inode, through any path, or an index file or directory
// named as an input) is refused with a ValidationError before anything is touched. The output is
// written to a temporary file beside FILE and renamed over it by commit(), so that an
// interrupted or failed run never leaves a truncated file under FILE's name; without commit()
// the temporary file is removed. A FILE that is a symbolic link: the file it names is replaced
// so, the link stays. A FILE that exists and is not a regular file (/dev/null, a FIFO, a
// socket) is opened and written as it is: renaming over it would replace the device itself.
// A directory is refused. Throws std::system_error when a file cannot be made.
class OutputFile {
 public:
  OutputFile(const std::string& path, const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* get() const noexcept { return f_; }
  // The same file as a std::ostream, for writers that take one (replay's summary, timeline, plot).
  std::ostream& stream();
  // What a run that ends with exit status 1 (problems in the data) does with FILE.
  enum class OnProblems {
    replace,        // the output is the report of the problems (verify, replay): FILE is replaced
    keep_existing,  // a FILE that exists stays as it was; a new FILE is written (damage is marked in it)
    discard,        // FILE stays as it was and no new FILE is made (flashback: a partial undo is no undo)
  };
  // Flushes, closes and renames the temporary file into place (nothing for stdout) when the run's
  // exit status `rc` allows it: 0 always, 1 as `on_problems` says, 2 (nothing could be read) never.
  // Otherwise the temporary file is removed and FILE left as it was, with a note on stderr.
  void commit(int rc = 0, OnProblems on_problems = OnProblems::keep_existing);

 private:
  // Writes through to f_ (std::ostream over a FILE*).
  struct FileBuf final : std::streambuf {
    std::FILE* f = nullptr;
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
  };
  std::FILE* f_ = stdout;
  std::string tmp_, path_;  // path_: FILE as the user gave it, for messages
  std::string target_;       // what the temporary file is renamed to (a link's file)
  bool direct_ = false;  // FILE is a device, FIFO or socket: written to as it is, not renamed over
  int slot_ = -1;        // tmp_'s entry in the list a SIGINT/SIGTERM/SIGHUP handler removes
  FileBuf buf_;
  std::unique_ptr<std::ostream> os_;
};

// -R/--read-from-remote-server and the connection options (mysqlbinlog's names), shared by the
// subcommands that read a chain: with -R the positional arguments are binlog names on the server.
struct RemoteArgs {
  bool enabled = false;
  RemoteOptions opts;
  std::string password;
  const CLI::Option* password_option = nullptr;
  std::vector<const CLI::Option*> server_options;  // meaningful with -R only: a usage error without
  // Without -R: nullptr, and `names` (the positional arguments) must not be empty. With -R: the
  // server's files as an input set (RemoteError when the server cannot be read). A MySQL
  // --exclude-gtids set (`exclude`) is also sent to a MySQL server (COM_BINLOG_DUMP_GTID), which
  // then leaves those transactions out; they are selected out here either way.
  std::unique_ptr<InputSet> open(const std::vector<std::string>& names, const std::optional<GtidSelection>& exclude = {});
  // Fills opts.password: --password=PW, asked on the terminal for --password alone, or MYSQL_PWD.
  void resolve();
};
// `with_flag`: the subcommand reads files unless -R is given (fetch always reads a server).
void add_remote_options(CLI::App& sub, RemoteArgs& r, bool with_flag = true);

// --key-file/--key-file-key: encrypted MariaDB binlogs read with the server's key file(s);
// --keyring-file: encrypted MySQL binlogs read with the server's keyring_file data file(s).
struct KeyArgs {
  std::vector<std::string> key_files;
  std::vector<std::string> keyring_files;
  std::string file_key;
  bool any() const { return !key_files.empty() || !keyring_files.empty(); }
  // The input set to read: `remote` (a server decrypts what it sends: --key-file is refused
  // there) or, with key files, the files named by `inputs` through a decrypting input set (owned
  // here); nullptr (read `inputs` as they are) without key files. Throws CLI::ValidationError for
  // a key file that cannot be used.
  InputSet* wrap(const std::vector<std::string>& inputs, InputSet* remote);
  // The keys alone (serve opens its files itself): nullptr without key files. Throws
  // CLI::ValidationError as wrap() does.
  const KeyRing* load();

 private:
  std::unique_ptr<KeyRing> ring_;
  std::unique_ptr<InputSet> files_, decrypting_;
};
void add_key_options(CLI::App& sub, KeyArgs& k);

}  // namespace binlogctl::cli
