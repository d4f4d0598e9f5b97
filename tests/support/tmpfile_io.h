// Reading back what a run wrote into a std::tmpfile() (tests of run_convert, run_canal_convert ...).
#pragma once

#include <cstdio>
#include <string>

namespace binlogctl::testing {

inline std::string read_all(std::FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

}  // namespace binlogctl::testing
