// One setup function per subcommand (CLI11 "subcommands in files" pattern): each adds its
// options to the app and a callback that runs the library and stores the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <binlogctl/convert.h>
#include <binlogctl/progress.h>
#include <binlogctl/schema.h>

#include <cstdint>
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
}  // namespace binlogctl::cli
