// Turning command-line inputs into an ordered list of binlog files: plain files in the order
// given, index files (one path per line, order taken from it), directories (their index file if
// there is exactly one, else files sorted by numeric suffix), and "-" for standard input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

struct InputFile {
  std::string path;      // what to open ("-" for stdin)
  std::string log_name;  // the file's name as the server knows it (basename, .gz/.zst removed)
  bool missing = false;  // named by an index but absent
  std::string origin;    // the index file or directory it came from, "" if given directly
};

struct InputList {
  std::vector<InputFile> files;
  std::vector<std::string> errors;  // unreadable index/directory: "path: reason"
};

InputList expand_inputs(const std::vector<std::string>& args);

// "mariadb-bin.000012" -> 12; nullopt without a numeric suffix.
std::optional<std::uint64_t> numeric_suffix(const std::string& log_name);
// "mariadb-bin.000012" -> "mariadb-bin"
std::string base_name_of(const std::string& log_name);
// Last path component, with .gz/.zst removed.
std::string log_name_of(const std::string& path);

}  // namespace binlogctl
