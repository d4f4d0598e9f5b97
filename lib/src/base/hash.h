// Small deterministic hashes, written once: FNV-1a 64 (digests, hash buckets, seeds from names)
// and splitmix64 (seeded generators, and its finalizer to spread every input bit over the hash).
// Their values are part of what users see (replay's --path-by hash:N buckets, the simulator's
// seeded runs): never change them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace binlogctl {

inline constexpr std::uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;
inline constexpr std::uint64_t kFnv1aPrime = 0x100000001b3ull;

// FNV-1a 64 of n bytes at p, continuing from h (kFnv1aOffset to start).
inline std::uint64_t fnv1a(std::uint64_t h, const void* p, std::size_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= kFnv1aPrime;
  }
  return h;
}
inline std::uint64_t fnv1a(std::uint64_t h, std::string_view s) noexcept { return fnv1a(h, s.data(), s.size()); }
inline std::uint64_t fnv1a(std::string_view s) noexcept { return fnv1a(kFnv1aOffset, s); }

// splitmix64's finalizer (mix64 of Steele, Lea and Flood).
inline std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline constexpr std::uint64_t kSplitmix64Step = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio

// The next value of the splitmix64 generator whose state is s.
inline std::uint64_t splitmix64(std::uint64_t& s) noexcept { return mix64(s += kSplitmix64Step); }

}  // namespace binlogctl
