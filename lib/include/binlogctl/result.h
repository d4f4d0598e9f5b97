// Errors as values: every decode failure carries a stable code, the absolute byte offset it
// concerns and a static message, so reporting a failure allocates nothing.
#pragma once

#include <cstdint>
#include <utility>
#include <variant>

namespace binlogctl {

enum class Errc : std::uint8_t {
  ok = 0,
  truncated,           // input ends before a field the format requires
  bad_length,          // a length field is impossible (below a minimum, past a bound)
  bad_value,           // a field holds a value the format does not allow
  bad_magic,           // the file does not start with fe 62 69 6e
  unsupported_format,  // binlog v1/v3, encrypted binlog, unknown compression
  missing_format_description,
  checksum_mismatch,
  decompress_failed,
  io_error,
  decrypt_failed,      // an encrypted binlog that the keys given do not decrypt (crypto.h)
};

// Stable lower_case name of a code (also the verify check code where one applies).
const char* errc_name(Errc e) noexcept;

// 16 bytes, so that a Status comes back from a call in two registers (renderers return one per
// value): the code shares a word with the offset, which is below 2^56.
struct DecodeError {
  static constexpr std::uint64_t kMaxOffset = (std::uint64_t{1} << 56) - 1;
  constexpr DecodeError() noexcept = default;
  constexpr DecodeError(Errc c, std::uint64_t off, const char* w) noexcept
      : code(c), offset(off & kMaxOffset), what(w) {}

  Errc code : 8 = Errc::ok;
  std::uint64_t offset : 56 = 0;  // absolute offset in the file (or decompressed payload)
  const char* what = "";          // static string, never owned
};
static_assert(sizeof(DecodeError) == 16);

// A value or a DecodeError. [[nodiscard]] so callers cannot forget to look.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T v) : v_(std::move(v)) {}                // NOLINT(google-explicit-constructor)
  Result(DecodeError e) : v_(e) {}                 // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const DecodeError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, DecodeError> v_;
};

// Result<void>: success or an error.
struct Status {
  DecodeError err{};
  Status() = default;
  Status(DecodeError e) : err(e) {}  // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return err.code == Errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  const DecodeError& error() const { return err; }
};

}  // namespace binlogctl
