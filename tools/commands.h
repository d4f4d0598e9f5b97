// One setup function per subcommand (CLI11 "subcommands in files" pattern): each adds its
// options to the app and a callback that runs the library and stores the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <binlogctl/convert.h>
#include <binlogctl/progress.h>
#include <binlogctl/schema.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl::cli {

void setup_dump(CLI::App& app, int& exit_code);
void setup_convert(CLI::App& app, int& exit_code);
void setup_verify(CLI::App& app, int& exit_code);
void setup_replay(CLI::App& app, int& exit_code);
void setup_stats(CLI::App& app, int& exit_code);

// Shared option helpers (common_options.cpp).
void add_progress_option(CLI::App& sub, std::string& mode);
ProgressMode progress_mode(const std::string& mode);
// "" -> nullopt; else the parsed time, or a ValidationError naming the option.
std::optional<std::int64_t> datetime_option(const std::string& value, const char* option);
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
  std::uint64_t start_position = 0, stop_position = 0;
  bool no_checksum = false;
  template <class Opts>
  void apply(Opts& o) const {
    o.progress = progress_mode(progress);
    o.verify_checksums = !no_checksum;
    if (start_position != 0) o.start_position = start_position;
    if (stop_position != 0) o.stop_position = stop_position;
    o.start_datetime = datetime_option(start_datetime, "--start-datetime");
    o.stop_datetime = datetime_option(stop_datetime, "--stop-datetime");
    check_selection(o.inputs, o.start_position, o.stop_position, o.start_datetime, o.stop_datetime);
  }
};

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
    o.include_gtids = gtid_selection_option(include_gtids, "--include-gtids", given(include_option));
    o.exclude_gtids = gtid_selection_option(exclude_gtids, "--exclude-gtids", given(exclude_option));
    o.filter = table_filter_option(filter);
    o.schema = schema_files_option(schema_files);
  }
  static bool given(const CLI::Option* opt) { return opt != nullptr && opt->count() > 0; }
};

// -o FILE: where a subcommand's output goes ("" or "-": stdout). A FILE that is one of the
// inputs (the same file by device and inode, through any path, or an index file or directory
// named as an input) is refused with a ValidationError before anything is touched. The output is
// written to a temporary file beside FILE and renamed over it by commit(), so that an
// interrupted or failed run never leaves a truncated file under FILE's name; without commit()
// the temporary file is removed. Throws std::system_error when a file cannot be made.
class OutputFile {
 public:
  OutputFile(const std::string& path, const std::vector<std::string>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* get() const noexcept { return f_; }
  // Flushes, closes and renames the temporary file into place (nothing for stdout).
  void commit();

 private:
  std::FILE* f_ = stdout;
  std::string tmp_, path_;
};

}  // namespace binlogctl::cli
