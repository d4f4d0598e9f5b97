// binlogctl: a thin driver. Parses the command line and hands over to the library.
#include "commands.h"

#include <binlogctl/crc32.h>
#include <binlogctl/remote.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

// Levenshtein distance, for "did you mean" on a mistyped subcommand (names are short).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Usage and the subcommands, on stderr: what a bare `binlogctl` or a mistyped subcommand gets.
void print_usage(const CLI::App& app, std::string_view problem, std::string_view typo) {
  fmt::print(stderr, "binlogctl: {}\n", problem);
  std::string best;
  std::size_t best_d = 3;  // suggest only near misses (at most 2 edits)
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::size_t d = edit_distance(typo, sub->get_name());
    if (!typo.empty() && d < best_d) best_d = d, best = sub->get_name();
  }
  if (!best.empty()) fmt::print(stderr, "Did you mean '{}'?\n", best);
  fmt::print(stderr, "\nUsage: binlogctl SUBCOMMAND [OPTIONS] FILE...\n\nSubcommands:\n");
  for (const CLI::App* sub : app.get_subcommands({}))
    fmt::print(stderr, "  {:<9} {}\n", sub->get_name(), sub->get_description());
  fmt::print(stderr, "\nbinlogctl SUBCOMMAND --help describes its options; man binlogctl the whole tool.\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"binlogctl: read, verify and convert MySQL and MariaDB binary logs", "binlogctl"};
  app.set_version_flag("--version", std::string("binlogctl ") + BINLOGCTL_VERSION + " (CRC32: " +
                                        binlogctl::crc32_implementation() + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  // Every subcommand exists for the usage and --help; only the one named first gets its options
  // (all of them when the first word names none, so that CLI11 words any error as before).
  struct Subcommand {
    std::string_view name;
    void (*setup)(CLI::App&, int&, bool);
  };
  static constexpr Subcommand kSubcommands[] = {
      {"dump", binlogctl::cli::setup_dump},     {"convert", binlogctl::cli::setup_convert},
      {"verify", binlogctl::cli::setup_verify}, {"replay", binlogctl::cli::setup_replay},
      {"stats", binlogctl::cli::setup_stats},   {"schema", binlogctl::cli::setup_schema},
      {"fetch", binlogctl::cli::setup_fetch},   {"serve", binlogctl::cli::setup_serve},
  };
  const std::string_view named = argc >= 2 ? argv[1] : "";
  const bool names_one =
      std::any_of(std::begin(kSubcommands), std::end(kSubcommands), [&](const Subcommand& s) { return s.name == named; });
  for (const Subcommand& s : kSubcommands) s.setup(app, exit_code, !names_one || s.name == named);
  // A bare call or a first word that is no subcommand: the usage, not CLI11's one-liner.
  if (argc < 2) {
    print_usage(app, "a subcommand is required", "");
    return 2;
  }
  const std::string_view first = argv[1];
  if (!first.empty() && first[0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->get_name() == first;
    if (!known) {
      print_usage(app, fmt::format("'{}' is not a subcommand", first), first);
      return 2;
    }
  }
  if (const std::string habit = binlogctl::cli::mysqlbinlog_habit(app, argc, argv); !habit.empty()) {
    fmt::print(stderr, "binlogctl: {}\n", habit);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105, 106, ...) become our usage status 2; --help/--version stay 0.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::system_error& e) {
    fmt::print(stderr, "binlogctl: {}\n", e.what());
    return 2;
  } catch (const binlogctl::RemoteError& e) {  // -R: the server cannot be read (names it and why)
    fmt::print(stderr, "binlogctl: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "binlogctl: out of memory\n");
    return 2;
  }
  return exit_code;
}
