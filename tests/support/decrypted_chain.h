// The crypto tests' reader: binlog files held in memory, read through the decrypting input seam
// (decrypting_inputs) and the chain walker, one thread, no progress; what it saw of each event and
// every diagnostic. Shared by crypto_test (MariaDB) and crypto_mysql_test (MySQL 8.0).
#pragma once

#include <binlogctl/chain.h>
#include <binlogctl/crypto.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/inputs.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace test_support {

inline std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CollectDiagnostics : binlogctl::DiagnosticSink {
  std::vector<binlogctl::Diagnostic> all;
  void report(const binlogctl::Diagnostic& d) override { all.push_back(d); }
};

struct DecryptedRead {
  std::vector<std::uint64_t> pos;   // each event's offset
  std::vector<std::uint64_t> next;  // each event's end_log_pos
  std::vector<std::uint8_t> types;  // each event's type code
  CollectDiagnostics diag;
};

// `files` (name, bytes) as one chain; `as_streams`: as pipes (no size known) rather than files.
inline DecryptedRead read_decrypted(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& files,
                                    const binlogctl::KeyRing& keys, bool as_streams) {
  using namespace binlogctl;
  std::vector<std::pair<std::string, Bytes>> mem;
  for (const auto& [n, b] : files) mem.emplace_back(n, Bytes(b.data(), b.size()));
  auto inner = memory_inputs(mem, as_streams);
  auto set = decrypting_inputs(*inner, keys);
  DecryptedRead r;
  ChainOptions co;
  co.input_set = set.get();
  co.progress = ProgressMode::never;
  co.threads = 1;
  struct Hooks : ChainHooks {} hooks;
  ChainReader reader(co, hooks, r.diag);
  Event ev;
  while (reader.next(ev)) {
    r.pos.push_back(ev.pos);
    r.next.push_back(ev.header.log_pos);
    r.types.push_back(ev.type_code());
  }
  return r;
}

}  // namespace test_support
