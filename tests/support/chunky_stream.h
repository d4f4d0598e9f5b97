// A stream over bytes in memory that hands them out in reads of pseudo-random sizes (1 to
// `max_read` bytes, from `seed`), as a pipe or a slow archive does: every read refills the
// stream source's buffer, so views that do not survive a refill show up as wrong bytes (or, under
// ASan, as a use after free when the buffer grows).
#pragma once

#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace binlogctl::testing {

class ChunkyStream final : public ByteStream {
 public:
  ChunkyStream(Bytes data, std::uint64_t seed, std::size_t max_read)
      : in_(memory_stream(data)), state_(seed | 1), max_read_(std::max<std::size_t>(max_read, 1)) {}
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    state_ ^= state_ << 13;  // xorshift64
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    const std::size_t want = 1 + static_cast<std::size_t>(state_ % max_read_);
    return in_->read(dst, std::min(cap, want), err);
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  std::unique_ptr<ByteStream> in_;  // the bytes, a read at a time
  std::uint64_t state_;
  std::size_t max_read_;
};

// One input named `name` whose bytes come through a ChunkyStream.
class ChunkyInputs final : public InputSet {
 public:
  ChunkyInputs(std::string name, Bytes data, std::uint64_t seed, std::size_t max_read)
      : data_(data), seed_(seed), max_read_(max_read) {
    list_.files.push_back(InputFile{name, name, false, ""});
  }
  const InputList& list() const override { return list_; }
  std::uint64_t total_size() const override { return 0; }
  std::unique_ptr<Source> open(const InputFile&) override {
    return stream_source(std::make_unique<ChunkyStream>(data_, seed_, max_read_));
  }

 private:
  InputList list_;
  Bytes data_;
  std::uint64_t seed_;
  std::size_t max_read_;
};

}  // namespace binlogctl::testing
