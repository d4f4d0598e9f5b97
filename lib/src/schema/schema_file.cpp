// load_schema_file: a --schema file into schema history.
#include <binlogctl/schema.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace binlogctl {

bool load_schema_file(const std::string& path, SchemaHistory& h, std::string& error,
                      std::vector<std::string>* warnings) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
    text.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  std::vector<SchemaHistory::IgnoredStatement> ignored;
  h.apply_script(text, {}, warnings != nullptr ? &ignored : nullptr);
  for (const auto& s : ignored) {
    // The statement's first line (at most 60 bytes), to find it by.
    const std::size_t eol = std::min(text.find('\n', s.offset), s.offset + 60);
    const std::string head = text.substr(s.offset, eol == std::string::npos ? 60 : eol - s.offset);
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(s.offset), '\n');
    warnings->push_back(fmt::format("{}: line {}, offset {}: warning: --schema: statement ignored: {}: {}", path, line,
                                    s.offset, s.why, head));
  }
  return true;
}

}  // namespace binlogctl
