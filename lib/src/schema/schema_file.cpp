// load_schema_file: a --schema file into schema history.
#include <binlogctl/schema.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace binlogctl {

bool load_schema_file(const std::string& path, SchemaHistory& h, std::string& error) {
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
  h.apply_script(text);
  return true;
}

}  // namespace binlogctl
