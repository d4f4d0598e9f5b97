// A ByteStream that hands out pieces of bytes with gaps between them (Source::gap_at), a few
// bytes per read, as the remote stream of a server's GTID dump does.
#pragma once

#include <binlogctl/source.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace binlogctl::testing {

class GappyStream final : public ByteStream {
 public:
  struct Piece {
    std::vector<std::uint8_t> bytes;
    std::uint64_t gap_after = 0;
  };
  explicit GappyStream(std::vector<Piece> p) : pieces_(std::move(p)) {}
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError&) override {
    if (i_ >= pieces_.size()) return 0;
    const Piece& p = pieces_[i_];
    const std::size_t n = std::min({cap, p.bytes.size() - at_, std::size_t{3}});
    std::copy_n(p.bytes.begin() + static_cast<std::ptrdiff_t>(at_), n, dst);
    at_ += n;
    if (at_ == p.bytes.size()) {
      gap_ = p.gap_after;
      ++i_;
      at_ = 0;
    }
    return n;
  }
  std::uint64_t raw_position() const override { return 0; }
  std::uint64_t take_gap() override {
    const std::uint64_t g = gap_;
    gap_ = 0;
    return g;
  }

 private:
  std::vector<Piece> pieces_;
  std::size_t i_ = 0, at_ = 0;
  std::uint64_t gap_ = 0;
};

// The bytes of `all` from `from` to `to` as a piece followed by a gap of `gap` bytes.
inline GappyStream::Piece piece(const std::vector<std::uint8_t>& all, std::size_t from, std::size_t to, std::uint64_t gap) {
  return {std::vector<std::uint8_t>(all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(to)), gap};
}

}  // namespace binlogctl::testing
