// libFuzzer target: convert --format json over arbitrary bytes (framing, table maps, row images,
// every column decoder, partial JSON, compressed rows and payloads), checksums off so damage
// reaches the decoders, rendered on two threads; then stats --format json (the row walk) on the
// same bytes. Every output line of both must be valid JSON.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DBINLOGCTL_FUZZ=ON -DBINLOGCTL_SANITIZE=ON \
//         -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link  # coverage feedback from the library too
//   cmake --build build-fuzz --target fuzz_convert
//   build-fuzz/tests/fuzz_convert -max_len=65536 testdata/mariadb-10.11/*/binlogs/
#include <binlogctl/convert.h>
#include <binlogctl/stats.h>

#include <nlohmann/json.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tmpfile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The input as a file without touching the disk.
  const int fd = memfd_create("fuzz-binlog", 0);
  if (fd < 0) return 0;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<std::size_t>(w);
  }
  binlogctl::ConvertOptions o;
  o.inputs = {"/proc/self/fd/" + std::to_string(fd)};
  o.progress = binlogctl::ProgressMode::never;
  o.verify_checksums = false;
  o.render_threads = 2;
  o.render_batch_bytes = 256;
  binlogctl::StatsOptions so;
  so.inputs = o.inputs;
  so.format = binlogctl::OutputFormat::json;
  so.progress = binlogctl::ProgressMode::never;
  so.verify_checksums = false;
  for (int consumer = 0; consumer < 2; ++consumer) {
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::fopen("/dev/null", "w");
    if (out != nullptr && err != nullptr) {
      if (consumer == 0)
        (void)binlogctl::run_convert(o, out, err);
      else
        (void)binlogctl::run_stats(so, out, err);
      const std::string text = binlogctl::testing::read_all(out);
      std::size_t at = 0;
      while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        if (nl == std::string::npos) __builtin_trap();  // a line left unfinished
        if (!nlohmann::json::accept(text.substr(at, nl - at))) __builtin_trap();
        at = nl + 1;
      }
    }
    if (out != nullptr) std::fclose(out);
    if (err != nullptr) std::fclose(err);
  }
  ::close(fd);
  return 0;
}
