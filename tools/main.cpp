// binlogctl: a thin driver. Parses the command line and hands over to the library.
#include "commands.h"

#include <binlogctl/crc32.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <system_error>

int main(int argc, char** argv) {
  CLI::App app{"binlogctl: read, verify and convert MySQL and MariaDB binary logs", "binlogctl"};
  app.set_version_flag("--version", std::string("binlogctl ") + BINLOGCTL_VERSION + " (CRC32: " +
                                        binlogctl::crc32_implementation() + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  binlogctl::cli::setup_dump(app, exit_code);
  binlogctl::cli::setup_convert(app, exit_code);
  binlogctl::cli::setup_verify(app, exit_code);
  binlogctl::cli::setup_replay(app, exit_code);
  binlogctl::cli::setup_stats(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105, 106, ...) become our usage status 2; --help/--version stay 0.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::system_error& e) {
    fmt::print(stderr, "binlogctl: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "binlogctl: out of memory\n");
    return 2;
  }
  return exit_code;
}
