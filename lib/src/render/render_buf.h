// RenderBuf: the output buffer of the value renderers (convert's hot path: JSON, SQL and Canal
// all write through it; the JSON-specific appenders are json_out.h's and column_json.h's).
//
// std::string::append of a few bytes costs a capacity check and a call to memcpy for every key,
// number and string run; rendering a row does dozens of them. RenderBuf keeps its storage at full
// size and a write pointer into it, so an append is one comparison and, for up to 32 bytes, a
// pair of overlapping fixed-size copies the compiler emits inline.
//
// It offers the subset of std::string's interface the renderers use (size, resize, push_back,
// append, data, clear), so a renderer reads the same whichever it writes to. Storage is a
// std::string, either its own or one it borrows: RenderBuf(s) appends to `s`, which gets its final
// contents when the RenderBuf is destroyed (the std::string overloads of the renderers use this).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace binlogctl {

#define BINLOGCTL_INLINE [[gnu::always_inline]] inline

// memcpy(d, s, n) for n <= 32 with two overlapping fixed-size moves: memcpy of a length known
// only at run time is a library call, and most runs are short. (Callers copying from or into
// small arrays use this one: the compiler sees that nothing past 32 bytes is touched.)
BINLOGCTL_INLINE void copy_short(char* d, const char* s, std::size_t n) noexcept {
  if (n <= 16) {
    if (n >= 8) {
      std::uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(d, &a, 8);
      std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
      std::uint32_t a, b;
      std::memcpy(&a, s, 4);
      std::memcpy(&b, s + n - 4, 4);
      std::memcpy(d, &a, 4);
      std::memcpy(d + n - 4, &b, 4);
    } else if (n > 0) {
      d[0] = s[0];
      d[n / 2] = s[n / 2];
      d[n - 1] = s[n - 1];
    }
  } else {
    char a[16], b[16];
    std::memcpy(a, s, 16);
    std::memcpy(b, s + n - 16, 16);
    std::memcpy(d, a, 16);
    std::memcpy(d + n - 16, b, 16);
  }
}

// memcpy(d, s, n) for any n: copy_short up to 32 bytes; up to 256 (a record's shared prefix, most
// string values), a loop of 32-byte moves, the last overlapping; beyond, memcpy.
BINLOGCTL_INLINE void copy_bytes(char* d, const char* s, std::size_t n) noexcept {
  if (n <= 32) {
    copy_short(d, s, n);
  } else if (n <= 256) {
    char a[32];
    std::size_t i = 0;
    for (; i + 32 < n; i += 32) {
      std::memcpy(a, s + i, 32);
      std::memcpy(d + i, a, 32);
    }
    std::memcpy(a, s + n - 32, 32);
    std::memcpy(d + n - 32, a, 32);
  } else {
    std::memcpy(d, s, n);
  }
}

class RenderBuf {
 public:
  using value_type = char;  // for std::back_inserter

  RenderBuf() { attach(); }
  // Appends to `s` (after its current contents); `s` must outlive this and not be touched
  // until this is destroyed.
  explicit RenderBuf(std::string& s) : s_(&s) { attach(); }
  ~RenderBuf() {
    if (s_ != &own_) s_->resize(size());
  }
  RenderBuf(const RenderBuf&) = delete;
  RenderBuf& operator=(const RenderBuf&) = delete;

  std::size_t size() const noexcept { return static_cast<std::size_t>(p_ - b_); }
  bool empty() const noexcept { return p_ == b_; }
  const char* data() const noexcept { return b_; }
  char* data() noexcept { return b_; }
  std::string_view view() const noexcept { return {b_, size()}; }

  void clear() noexcept { p_ = b_; }
  // Shrinking keeps the storage; growing fills with `c`.
  void resize(std::size_t n, char c = '\0') {
    if (n > size()) {
      const std::size_t more = n - size();
      room(more);
      std::memset(p_, c, more);
    }
    p_ = b_ + n;
  }

  BINLOGCTL_INLINE void push_back(char c) {
    if (p_ == e_) grow(1);
    *p_++ = c;
  }
  BINLOGCTL_INLINE void append(const char* s, std::size_t n) {
    if (static_cast<std::size_t>(e_ - p_) < n) return append_growing(s, n);
    copy_bytes(p_, s, n);
    p_ += n;
  }
  BINLOGCTL_INLINE void append(std::string_view s) { append(s.data(), s.size()); }
  BINLOGCTL_INLINE void append(const char* s) { append(std::string_view(s)); }

  // Raw writing: room for `n` more bytes at the returned pointer, then advance(k) for k <= n.
  BINLOGCTL_INLINE char* tail(std::size_t n) {
    room(n);
    return p_;
  }
  BINLOGCTL_INLINE void advance(std::size_t n) noexcept { p_ += n; }

 private:
  void attach() {
    const std::size_t used = s_->size();
    s_->resize(std::max<std::size_t>(s_->capacity(), used + kMinRoom));
    set(used);
  }
  void set(std::size_t used) noexcept {
    b_ = s_->data();
    p_ = b_ + used;
    e_ = b_ + s_->size();
  }
  BINLOGCTL_INLINE void room(std::size_t n) {
    if (static_cast<std::size_t>(e_ - p_) < n) grow(n);
  }
  [[gnu::noinline]] void grow(std::size_t n) {
    const std::size_t used = size();
    s_->resize(std::max(s_->size() * 2, used + n + kMinRoom));
    set(used);
  }
  // `s` may lie in this buffer (appending a part of what is written): growing moves it.
  [[gnu::noinline]] void append_growing(const char* s, std::size_t n) {
    const bool inside = s >= b_ && s < e_;
    const std::size_t at = inside ? static_cast<std::size_t>(s - b_) : 0;
    grow(n);
    std::memcpy(p_, inside ? b_ + at : s, n);
    p_ += n;
  }
  static constexpr std::size_t kMinRoom = 256;
  std::string own_;
  std::string* s_ = &own_;
  char* b_ = nullptr;
  char* p_ = nullptr;
  char* e_ = nullptr;
};

}  // namespace binlogctl
