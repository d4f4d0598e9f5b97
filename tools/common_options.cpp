#include <binlogctl/datetime.h>
#include <binlogctl/dump.h>

#include <fmt/format.h>

#include <cerrno>
#include <system_error>

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

std::optional<GtidSelection> gtid_selection_option(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  auto s = GtidSelection::parse(text);
  if (!s)
    throw CLI::ValidationError(option, fmt::format("{} at character {}: {}", text, s.error().offset, s.error().what));
  return std::move(*s);
}

TableFilter table_filter_option(const std::string& rules) {
  auto f = TableFilter::parse(rules);
  if (!f) throw CLI::ValidationError("--filter", fmt::format("rule at character {}: {}", f.error().offset, f.error().what));
  return std::move(*f);
}

std::shared_ptr<const SchemaHistory> schema_files_option(const std::vector<std::string>& files) {
  if (files.empty()) return nullptr;
  auto h = std::make_shared<SchemaHistory>();
  for (const std::string& path : files) {
    std::string error;
    if (!load_schema_file(path, *h, error)) throw CLI::ValidationError("--schema", error);
  }
  return h;
}

OutputFile::OutputFile(const std::string& path) {
  if (path.empty() || path == "-") return;
  f_ = std::fopen(path.c_str(), "wb");
  if (f_ == nullptr) throw std::system_error(errno, std::generic_category(), path);
}

OutputFile::~OutputFile() {
  if (f_ != stdout) std::fclose(f_);
}

}  // namespace binlogctl::cli
