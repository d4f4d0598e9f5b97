// Bounds-checked little-endian reading over borrowed bytes.
//
// ByteReader is a sticky cursor (after LLVM's DataExtractor::Cursor): once a read fails, every
// later read returns zero / an empty view and the cursor stops moving, so a decoder reads a whole
// record in a straight line and checks ok() once. Offsets reported are absolute: the reader is
// built with the file offset of its first byte.
#pragma once

#include <binlogctl/result.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

namespace binlogctl {

using Bytes = std::span<const std::uint8_t>;

inline std::string_view as_string_view(Bytes b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Unchecked little-endian load of N (1..8) bytes; callers guarantee the bounds. N is often known
// only at run time (column sizes); a memcpy of that size would be a library call, so this reads
// two overlapping fixed-size words instead.
inline std::uint64_t load_le(const std::uint8_t* p, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    if (n >= 4) {
      std::uint32_t lo = 0, hi = 0;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      return lo | (static_cast<std::uint64_t>(hi) << (8 * (n - 4)));
    }
    if (n == 0) return 0;
    return std::uint64_t{p[0]} | std::uint64_t{p[n / 2]} << (8 * (n / 2)) | std::uint64_t{p[n - 1]} << (8 * (n - 1));
  } else {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    return v;
  }
}
inline std::uint64_t load_be(const std::uint8_t* p, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    if (n == 0) return 0;
    return __builtin_bswap64(load_le(p, n)) >> (64 - 8 * n);
  } else {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
    return v;
  }
}
inline std::uint16_t load_le16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>(load_le(p, 2));
}
inline std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(load_le(p, 4));
}
// The writers of the same: `n` bytes of v, least significant first, at p.
inline void store_le(std::uint8_t* p, std::uint64_t v, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void store_le16(std::uint8_t* p, std::uint16_t v) noexcept { store_le(p, v, 2); }
inline void store_le32(std::uint8_t* p, std::uint32_t v) noexcept { store_le(p, v, 4); }
inline void store_le64(std::uint8_t* p, std::uint64_t v) noexcept { store_le(p, v, 8); }

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(Bytes data, std::uint64_t base_offset = 0) noexcept
      : data_(data), base_(base_offset) {}

  bool ok() const noexcept { return err_.code == Errc::ok; }
  std::size_t remaining() const noexcept { return ok() ? data_.size() - pos_ : 0; }
  bool empty() const noexcept { return remaining() == 0; }
  std::size_t position() const noexcept { return pos_; }          // relative to the start
  std::uint64_t offset() const noexcept { return base_ + pos_; }  // absolute
  std::uint64_t base_offset() const noexcept { return base_; }
  const DecodeError& error() const noexcept { return err_; }
  Bytes data() const noexcept { return data_; }

  // Records the first failure; later failures are ignored.
  void fail(Errc code, const char* what) noexcept {
    if (ok()) err_ = DecodeError{code, base_ + pos_, what};
  }

  // Unsigned little-endian integer of sizeof(T) bytes, or of n bytes (1..8).
  template <class T>
  T le() noexcept {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
    return static_cast<T>(le_n(sizeof(T)));
  }
  [[gnu::always_inline]] std::uint64_t le_n(std::size_t n) noexcept {
    if (!need(n)) return 0;
    std::uint64_t v = load_le(data_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  [[gnu::always_inline]] std::uint64_t be_n(std::size_t n) noexcept {
    if (!need(n)) return 0;
    std::uint64_t v = load_be(data_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  std::uint8_t u8() noexcept { return static_cast<std::uint8_t>(le_n(1)); }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(le_n(2)); }
  std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(le_n(4)); }
  std::uint64_t u64() noexcept { return le_n(8); }

  Bytes bytes(std::size_t n) noexcept {
    if (!need(n)) return {};
    Bytes b = data_.subspan(pos_, n);
    pos_ += n;
    return b;
  }
  std::string_view str(std::size_t n) noexcept { return as_string_view(bytes(n)); }
  // Everything left.
  Bytes rest() noexcept { return bytes(remaining()); }
  // A sub-reader over the next n bytes (absolute offsets preserved); the cursor moves past them.
  ByteReader sub(std::size_t n) noexcept {
    std::uint64_t at = offset();
    Bytes b = bytes(n);
    ByteReader r(b, at);
    if (!ok()) r.err_ = err_;
    return r;
  }
  void skip(std::size_t n) noexcept { (void)bytes(n); }
  // Hides the last n bytes (the CRC32 footer) from every later read.
  void drop_tail(std::size_t n) noexcept {
    if (!need(n)) return;
    data_ = data_.first(data_.size() - n);
  }

  // MySQL length-encoded integer (net_field_length): < 251 one byte, 252 + 2, 253 + 3, 254 + 8.
  // 251 (NULL) and 255 are invalid here.
  std::uint64_t packed_int() noexcept {
    std::uint8_t b = u8();
    if (b < 251) return b;
    if (b == 252) return le_n(2);
    if (b == 253) return le_n(3);
    if (b == 254) return le_n(8);
    if (ok()) {
      --pos_;
      fail(Errc::bad_value, "invalid length-encoded integer");
    }
    return 0;
  }
  // A packed length, checked against what remains so that it can drive a read or an allocation.
  std::size_t packed_len() noexcept {
    std::uint64_t n = packed_int();
    if (n > remaining()) {
      fail(Errc::truncated, "length-encoded length runs past the end of the event");
      return 0;
    }
    return static_cast<std::size_t>(n);
  }

 private:
  bool need(std::size_t n) noexcept {
    if (!ok()) return false;
    if (n > data_.size() - pos_) {
      fail(Errc::truncated, "read past the end of the event");
      return false;
    }
    return true;
  }

  Bytes data_{};
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;
  DecodeError err_{};
};

}  // namespace binlogctl
