// libFuzzer target: framing, every Info/body decoder and payload expansion on arbitrary bytes.
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DBINLOGCTL_FUZZ=ON && cmake --build build-fuzz --target fuzz_event_stream
//   build-fuzz/tests/fuzz_event_stream testdata/mariadb-10.11/*/binlogs/
#include <cstddef>
#include <cstdint>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)binlogctl::testing::exercise(binlogctl::Bytes(data, size));
  return 0;
}
