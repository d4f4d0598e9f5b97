// CRC-32 (the zlib/gzip polynomial MySQL uses for binlog checksums).
#pragma once

#include <cstdint>
#include <cstddef>

namespace binlogctl {

// crc32(prev, data): continues a running CRC like zlib's crc32(). ISA-L's folded PCLMULQDQ
// implementation (runtime CPU dispatch) when the build found it, zlib otherwise.
std::uint32_t crc32_update(std::uint32_t prev, const std::uint8_t* data, std::size_t len) noexcept;
// Name of the implementation in use ("isa-l" or "zlib"), for benchmarks and --version.
const char* crc32_implementation() noexcept;

}  // namespace binlogctl
