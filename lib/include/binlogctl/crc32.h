// CRC-32 (the zlib/gzip polynomial MySQL uses for binlog checksums).
#pragma once

#include <cstdint>
#include <cstddef>

namespace binlogctl {

// crc32(prev, data): continues a running CRC like zlib's crc32(). ISA-L's folded PCLMULQDQ
// implementation when the build found it (its 128-bit variant where the CPU allows, see
// crc32.cpp), zlib otherwise.
std::uint32_t crc32_update(std::uint32_t prev, const std::uint8_t* data, std::size_t len) noexcept;
// The implementation in use, as `binlogctl --version` names it: "ISA-L, 128-bit PCLMULQDQ",
// "ISA-L" (its own dispatch) or "zlib".
const char* crc32_implementation() noexcept;

}  // namespace binlogctl
