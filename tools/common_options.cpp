#include "commands.h"

namespace binlogctl::cli {

void add_progress_option(CLI::App& sub, std::string& mode) {
  sub.add_option("--progress", mode, "Progress bar on stderr: auto (when stderr is a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_val("auto");
}

}  // namespace binlogctl::cli
