// libFuzzer target: convert --format json over arbitrary bytes (framing, table maps, row images,
// every column decoder, partial JSON, compressed rows and payloads), checksums off so damage
// reaches the decoders; then stats --format json (the row walk), convert --format sql and
// --flashback (the SQL renderers, decode_image_cells and the row cursor), convert --format
// canal-proto and canal-json (Canal's value renderers, DDL typing, flat JSON, protobuf; when
// built with Canal), verify --format json (checksums on: chain, transaction structure, GTID
// continuity), verify --cover-from (the bytes as two chains), schema --format json without and
// with --history (schema history following the DDL and TABLE_MAPs) and replay --format json (the
// chain as the flow-control engine's source, rows hashed by key, the simulation) on the same
// bytes (exercise.h's consumers). Every output line of the JSON ones (all but sql, flashback and
// canal-proto) must be valid JSON. The bytes are fed through the
// input seam from memory (memory_inputs), alternately as a mapped file and as a stream read a
// few bytes at a time (chunky_stream.h), with no thread and no temporary file: output goes to
// memory (open_memstream). See tests/fuzz/README.md.
#include <binlogctl/inputs.h>

#include <nlohmann/json.hpp>

#include "chunky_stream.h"
#include "exercise.h"  // fuzz_keys(), run_consumer()

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace {

void check_json_lines(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) __builtin_trap();  // a line left unfinished
    if (!nlohmann::json::accept(text.substr(at, nl - at))) __builtin_trap();
    at = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::FILE* devnull = std::fopen("/dev/null", "w");
  if (devnull == nullptr) return 0;
  const bool as_stream = size > 0 && (data[size - 1] & 1) != 0;
  // As a stream, read a few bytes at a time (chunky_stream.h): the stream's buffer moves under
  // the readers.
  std::unique_ptr<binlogctl::InputSet> inputs;
  if (as_stream)
    inputs = std::make_unique<binlogctl::testing::ChunkyInputs>("fuzz.000001", binlogctl::Bytes(data, size),
                                                                size * 0x9e3779b97f4a7c15ull, 1 + size % 61);
  else
    inputs = binlogctl::memory_inputs({{"fuzz.000001", binlogctl::Bytes(data, size)}}, false);
  auto decrypting = binlogctl::decrypting_inputs(*inputs, binlogctl::testing::fuzz_keys());
  for (const binlogctl::testing::Consumer consumer : binlogctl::testing::kConsumers) {
    char* buf = nullptr;
    std::size_t len = 0;
    std::FILE* out = open_memstream(&buf, &len);
    if (out == nullptr) return 0;
    (void)binlogctl::testing::run_consumer(consumer, *decrypting, out, devnull);
    std::fclose(out);
    if (binlogctl::testing::writes_json_lines(consumer)) check_json_lines(std::string_view(buf, len));
    std::free(buf);
  }
  return 0;
}
