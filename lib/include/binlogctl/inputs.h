// Turning command-line inputs into an ordered list of binlog files: plain files in the order
// given, index files (one path per line, order taken from it), directories (their index file if
// there is exactly one, else files sorted by numeric suffix), and "-" for standard input.
#pragma once

#include <binlogctl/bytes.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace binlogctl {

struct InputFile {
  std::string path;      // what to open ("-" for stdin)
  std::string log_name;  // the file's name as the server knows it (basename, .gz/.zst removed)
  bool missing = false;  // absent (ENOENT/ENOTDIR); not when it cannot be looked at (EACCES: open says why)
  std::string origin;    // the index file or directory it came from, "" if given directly
  // Read from a live server (-R, fetch), which went on to this file from the one before it
  // although that one ended without ROTATE or STOP: the server had no more of it, so its server
  // never closed it (a crash). The server clears the in-use flag of a file when it sends it; this
  // says what the flag would have said.
  bool after_unclosed = false;
};

struct InputList {
  std::vector<InputFile> files;
  std::vector<std::string> errors;  // unreadable index/directory: "path: reason"
  // Read, but not as one may think: an index that names no file (its directory's numbered files
  // are read instead), binlogs beside an index that it does not name (not read).
  std::vector<std::string> warnings;
};

InputList expand_inputs(const std::vector<std::string>& args);

// Why a file of the list was not read, for messages on standard error: "PATH: offset 0: file not
// found" (+ " (named by INDEX)") when it is missing (e == nullptr), else "PATH: offset 0: cannot
// open: REASON" with the error's own text ("Permission denied", "Is a directory", ...).
std::string unavailable_message(const InputFile& f, const std::system_error* e);

// The file as messages name it (Diagnostic::path): the path as the user gave it, or "" when that
// is its log name or standard input (messages then use the log name).
inline std::string message_path(const InputFile& f) {
  return f.path == "-" || f.path == f.log_name ? std::string() : f.path;
}

// "mariadb-bin.000012" -> 12; nullopt without a numeric suffix.
std::optional<std::uint64_t> numeric_suffix(const std::string& log_name);
// "mariadb-bin.000012" -> "mariadb-bin"
std::string base_name_of(const std::string& log_name);
// Last path component, with .gz/.zst removed.
std::string log_name_of(const std::string& path);

class Source;

// The input seam: where a chain's files come from and how each is opened. Every subcommand
// reads through one (by way of ChainReader); tests and fuzzers feed one from memory.
class InputSet {
 public:
  virtual ~InputSet() = default;
  // The files in chain order, and the inputs that could not even be listed ("path: reason").
  virtual const InputList& list() const = 0;
  // The sum of the files' sizes where known up front (progress); 0 when unknown.
  virtual std::uint64_t total_size() const = 0;
  // Opens one of list()'s files (not a missing one). Throws std::system_error when it cannot.
  virtual std::unique_ptr<Source> open(const InputFile& f) = 0;
};

// Files, index files, directories and "-" as given on the command line (expand_inputs).
std::unique_ptr<InputSet> path_inputs(const std::vector<std::string>& args);

// Files held in memory, named by their log names; the bytes must outlive the set. Each is read
// as a stream when `as_streams` is set (as stdin and archives are), else as a mapped file is.
std::unique_ptr<InputSet> memory_inputs(std::vector<std::pair<std::string, Bytes>> files,
                                        bool as_streams = false);

}  // namespace binlogctl
