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
// --include-gtids / --exclude-gtids: "" -> nullopt; else the parsed selection, or a
// ValidationError naming the option and where the text stops parsing.
std::optional<GtidSelection> gtid_selection_option(const std::string& text, const char* option);
// --filter: the parsed rules (empty text: match everything), or a ValidationError.
TableFilter table_filter_option(const std::string& rules);
// --schema FILE...: schema history seeded from the files, null when none; ValidationError when a
// file cannot be read.
std::shared_ptr<const SchemaHistory> schema_files_option(const std::vector<std::string>& files);

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
  }
};

// The row-change selection of convert and stats: GTID sets, the table filter, schema files.
struct RowSelectionArgs {
  std::string include_gtids, exclude_gtids, filter;
  std::vector<std::string> schema_files;
  template <class Opts>
  void apply(Opts& o) const {
    o.include_gtids = gtid_selection_option(include_gtids, "--include-gtids");
    o.exclude_gtids = gtid_selection_option(exclude_gtids, "--exclude-gtids");
    o.filter = table_filter_option(filter);
    o.schema = schema_files_option(schema_files);
  }
};

// -o FILE: where a subcommand's output goes ("" or "-": stdout). Throws std::system_error when
// the file cannot be opened; closed when the object goes.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* get() const noexcept { return f_; }

 private:
  std::FILE* f_ = stdout;
};

}  // namespace binlogctl::cli
