// libFuzzer target: framing, every Info/body decoder and payload expansion on arbitrary bytes,
// read through the input seam from memory (alternately as a mapped file and as a stream).
//   cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DBINLOGCTL_FUZZ=ON && cmake --build build-fuzz --target fuzz_event_stream
//   build-fuzz/tests/fuzz_event_stream testdata/mariadb-10.11/*/binlogs/
#include <cstddef>
#include <cstdint>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool as_stream = size > 0 && (data[size - 1] & 1) != 0;
  (void)binlogctl::testing::exercise(binlogctl::Bytes(data, size), as_stream);
  return 0;
}
