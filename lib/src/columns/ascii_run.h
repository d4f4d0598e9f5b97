// The end of a run of ASCII bytes, eight bytes at a time: the text converters' (charset.cpp) and
// Canal's ISO-8859-1 rendering's fast path over the bytes that need no conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace binlogctl::columns_detail {

// Index past the run of ASCII bytes at p[i..n).
inline std::size_t ascii_end(const unsigned char* p, std::size_t i, std::size_t n) noexcept {
  while (i + 8 <= n) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((w & 0x8080808080808080ull) != 0) break;
    i += 8;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

}  // namespace binlogctl::columns_detail
