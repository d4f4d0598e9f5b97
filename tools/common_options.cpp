#include <binlogctl/dump.h>

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

std::optional<std::int64_t> datetime_option(const std::string& value, const char* option) {
  if (value.empty()) return std::nullopt;
  auto t = parse_datetime(value);
  if (!t) throw CLI::ValidationError(option, "expected YYYY-MM-DD HH:MM:SS or YYYY-MM-DD");
  return t;
}

}  // namespace binlogctl::cli
