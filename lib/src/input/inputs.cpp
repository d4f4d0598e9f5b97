#include <binlogctl/inputs.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace binlogctl {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void read_index(const fs::path& index, InputList& out) {
  std::ifstream in(index);
  if (!in) {
    out.errors.push_back(index.string() + ": cannot read the index file");
    return;
  }
  const fs::path dir = index.parent_path();
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
    f.missing = !fs::exists(resolved, ec);
    f.origin = index.string();
    out.files.push_back(std::move(f));
  }
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
    read_index(indexes.front(), out);
    return;
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
      f.missing = !fs::exists(p, ec);
      out.files.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace binlogctl
