// A MySQL TRANSACTION_PAYLOAD body for tests: `plain` (inner events, built without magic or
// checksums) compressed with zstd, behind the TLV header (type, length, packed value):
// compression ZSTD, uncompressed size, payload size, end. Small payloads only (under 251 bytes
// both ways: one-byte packed lengths).
#pragma once

#include <doctest/doctest.h>
#include <zstd.h>

#include <cstdint>
#include <vector>

namespace binlogctl::testing {

inline std::vector<std::uint8_t> zstd_payload_body(const std::vector<std::uint8_t>& plain) {
  std::vector<std::uint8_t> z(ZSTD_compressBound(plain.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), plain.data(), plain.size(), 3));
  REQUIRE(plain.size() < 251);
  REQUIRE(z.size() < 251);
  std::vector<std::uint8_t> body{2, 1, 0, 3, 1, static_cast<std::uint8_t>(plain.size()), 1, 1,
                                 static_cast<std::uint8_t>(z.size()), 0};
  body.insert(body.end(), z.begin(), z.end());
  return body;
}

}  // namespace binlogctl::testing
