#include <binlogctl/inputs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace binlogctl {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The numbered binlog files of a directory ("name.NNNNNN", also .gz/.zst).
std::vector<fs::path> numbered_files(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::pair<std::pair<std::string, std::uint64_t>, fs::path>> numbered;
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string ln = log_name_of(e.path().filename().string());
    if (auto n = numeric_suffix(ln)) numbered.push_back({{base_name_of(ln), *n}, e.path()});
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<fs::path> out;
  for (auto& [key, p] : numbered) out.push_back(std::move(p));
  return out;
}

// The binlogs beside an index that it does not name (of the base names it names; every numbered
// file when `all`: the index of a directory given as an input): one warning.
void warn_unnamed(const fs::path& index, InputList& out, std::size_t first, bool all) {
  std::vector<std::string> bases, named;
  for (std::size_t i = first; i < out.files.size(); ++i) {
    bases.push_back(base_name_of(out.files[i].log_name));
    named.push_back(fs::path(out.files[i].path).lexically_normal().string());
  }
  std::vector<std::string> unnamed;
  for (const fs::path& p : numbered_files(index.parent_path())) {
    const std::string ln = log_name_of(p.filename().string());
    if (!all && std::find(bases.begin(), bases.end(), base_name_of(ln)) == bases.end()) continue;
    if (std::find(named.begin(), named.end(), p.lexically_normal().string()) == named.end())
      unnamed.push_back(p.filename().string());
  }
  if (unnamed.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < unnamed.size() && i < 5; ++i) list += (i ? ", " : "") + unnamed[i];
  if (unnamed.size() > 5) list += ", ... (" + std::to_string(unnamed.size()) + " files)";
  out.warnings.push_back(index.string() + ": does not name " + list + " beside it: not read");
}

// No such file: stat says ENOENT or ENOTDIR. A path that cannot be looked at (EACCES on a
// directory of it, ELOOP, ...) is not "not found": opening it reports the real reason.
bool absent(const fs::path& p) {
  std::error_code ec;
  return !fs::exists(p, ec) && !ec;
}

void read_index(const fs::path& index, InputList& out, bool of_directory = false) {
  std::ifstream in(index);
  if (!in) {
    out.errors.push_back(index.string() + ": cannot read the index file: " + std::strerror(errno));
    return;
  }
  const fs::path dir = index.parent_path();
  const std::size_t first = out.files.size();
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) continue;
    fs::path p(line);
    fs::path resolved = p.is_absolute() ? p : dir / p;
    std::error_code ec;
    if (!fs::exists(resolved, ec) && p.is_absolute()) {
      // Index files copied with their binlogs still name the server's paths: look beside the index.
      fs::path beside = dir / p.filename();
      if (fs::exists(beside, ec)) resolved = beside;
    }
    InputFile f;
    f.path = resolved.lexically_normal().string();
    f.log_name = log_name_of(line);
    f.missing = absent(resolved);
    f.origin = index.string();
    out.files.push_back(std::move(f));
  }
  if (out.files.size() == first) {
    out.errors.push_back(index.string() + ": the index file names no binlog file");
    return;
  }
  warn_unnamed(index, out, first, of_directory);
}

void read_directory(const fs::path& dir, InputList& out) {
  std::error_code ec;
  std::vector<fs::path> indexes;
  std::vector<std::pair<std::pair<std::string, std::uint64_t>, fs::path>> numbered;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (ends_with(name, ".index")) {
      indexes.push_back(e.path());
      continue;
    }
    const std::string ln = log_name_of(name);
    if (auto n = numeric_suffix(ln)) numbered.push_back({{base_name_of(ln), *n}, e.path()});
  }
  if (ec) {
    out.errors.push_back(dir.string() + ": " + ec.message());
    return;
  }
  if (indexes.size() == 1) {
    const std::size_t errors = out.errors.size(), first = out.files.size();
    read_index(indexes.front(), out, true);
    if (out.files.size() > first || numbered.empty()) return;
    // An index that names nothing (a stray empty file): the directory's binlogs by their numbers.
    out.errors.resize(errors);
    out.warnings.push_back(indexes.front().string() +
                           ": the index file names no binlog file: reading the directory's binlogs by their numbers");
  }
  std::sort(numbered.begin(), numbered.end());
  for (auto& [key, p] : numbered) {
    InputFile f;
    f.path = p.string();
    f.log_name = log_name_of(p.filename().string());
    f.origin = dir.string();
    out.files.push_back(std::move(f));
  }
  if (numbered.empty()) out.errors.push_back(dir.string() + ": no binlog files (name.NNNNNN) and no index file");
}

}  // namespace

std::string unavailable_message(const InputFile& f, const std::system_error* e) {
  if (e != nullptr) return f.path + ": offset 0: cannot open: " + e->code().message();
  return f.path + ": offset 0: file not found" + (f.origin.empty() ? std::string() : " (named by " + f.origin + ")");
}

std::string log_name_of(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  else if (ends_with(name, ".zst")) name.resize(name.size() - 4);
  return name;
}

std::optional<std::uint64_t> numeric_suffix(const std::string& log_name) {
  auto dot = log_name.rfind('.');
  if (dot == std::string::npos || dot + 1 >= log_name.size() || log_name.size() - dot - 1 > 18) return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = dot + 1; i < log_name.size(); ++i) {
    char c = log_name[i];
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

std::string base_name_of(const std::string& log_name) {
  auto dot = log_name.rfind('.');
  return dot == std::string::npos ? log_name : log_name.substr(0, dot);
}

InputList expand_inputs(const std::vector<std::string>& args) {
  InputList out;
  for (const std::string& a : args) {
    if (a == "-") {
      out.files.push_back(InputFile{"-", "-", false, ""});
      continue;
    }
    std::error_code ec;
    fs::path p(a);
    if (fs::is_directory(p, ec)) {
      read_directory(p, out);
    } else if (ends_with(a, ".index") && fs::is_regular_file(p, ec)) {
      read_index(p, out);
    } else {
      InputFile f;
      f.path = a;
      f.log_name = log_name_of(a);
      f.missing = absent(p);
      out.files.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace binlogctl
