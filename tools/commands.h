// One setup function per subcommand (CLI11 "subcommands in files" pattern): each adds its
// options to the app and a callback that runs the library and stores the exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <binlogctl/progress.h>

#include <cstdint>
#include <optional>
#include <string>

namespace binlogctl::cli {

void setup_dump(CLI::App& app, int& exit_code);
void setup_convert(CLI::App& app, int& exit_code);
void setup_verify(CLI::App& app, int& exit_code);
void setup_replay(CLI::App& app, int& exit_code);

// Shared option helpers (common_options.cpp).
void add_progress_option(CLI::App& sub, std::string& mode);
ProgressMode progress_mode(const std::string& mode);
// "" -> nullopt; else the parsed time, or a ValidationError naming the option.
std::optional<std::int64_t> datetime_option(const std::string& value, const char* option);
}  // namespace binlogctl::cli
