#include <binlogctl/bytes.h>
#include <doctest/doctest.h>

#include <vector>

using namespace binlogctl;

TEST_SUITE("bytes") {
  TEST_CASE("little-endian reads report absolute offsets") {
    std::vector<std::uint8_t> b{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09};
    ByteReader r(b, 1000);
    CHECK(r.u8() == 0x01);
    CHECK(r.u16() == 0x0302);
    CHECK(r.offset() == 1003);
    CHECK(r.le_n(3) == 0x060504);
    CHECK(r.be_n(2) == 0x0708);
    CHECK(r.remaining() == 1);
    CHECK(r.ok());
  }

  TEST_CASE("a failed read is sticky and records where it happened") {
    std::vector<std::uint8_t> b{1, 2, 3};
    ByteReader r(b, 50);
    r.u16();
    CHECK(r.u32() == 0);  // only one byte left
    CHECK_FALSE(r.ok());
    CHECK(r.error().code == Errc::truncated);
    CHECK(r.error().offset == 52);
    CHECK(r.u8() == 0);  // later reads return nothing and keep the first error
    CHECK(r.error().offset == 52);
    CHECK(r.remaining() == 0);
  }

  TEST_CASE("drop_tail hides the checksum footer") {
    std::vector<std::uint8_t> b{1, 2, 3, 4, 5, 6};
    ByteReader r(b, 0);
    r.drop_tail(4);
    CHECK(r.remaining() == 2);
    CHECK(r.u16() == 0x0201);
    r.u8();
    CHECK_FALSE(r.ok());
  }

  TEST_CASE("packed integers of every width") {
    std::vector<std::uint8_t> b{250, 252, 0x34, 0x12, 253, 1, 2, 3, 254, 1, 0, 0, 0, 0, 0, 0, 0x80};
    ByteReader r(b, 0);
    CHECK(r.packed_int() == 250);
    CHECK(r.packed_int() == 0x1234);
    CHECK(r.packed_int() == 0x030201);
    CHECK(r.packed_int() == 0x8000000000000001ull);
    CHECK(r.ok());
    std::vector<std::uint8_t> bad{251};
    ByteReader rb(bad, 7);
    rb.packed_int();
    CHECK(rb.error().code == Errc::bad_value);
    CHECK(rb.error().offset == 7);
  }

  TEST_CASE("a packed length larger than the input fails without reading") {
    std::vector<std::uint8_t> b{254, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2};
    ByteReader r(b, 0);
    CHECK(r.packed_len() == 0);
    CHECK(r.error().code == Errc::truncated);
  }

  TEST_CASE("sub-readers keep absolute offsets") {
    std::vector<std::uint8_t> b{9, 8, 7, 6, 5};
    ByteReader r(b, 100);
    r.u8();
    ByteReader s = r.sub(3);
    CHECK(s.offset() == 101);
    CHECK(s.remaining() == 3);
    CHECK(r.offset() == 104);
    s.skip(4);
    CHECK(s.error().offset == 101);
  }
}

TEST_CASE("load_le / load_be of every size 0..8 at every alignment") {
  std::uint8_t buf[24];
  for (int i = 0; i < 24; ++i) buf[i] = static_cast<std::uint8_t>(0x9d * i + 0x31);
  for (std::size_t at = 0; at < 8; ++at) {
    for (std::size_t n = 0; n <= 8; ++n) {
      std::uint64_t le = 0, be = 0;
      for (std::size_t i = 0; i < n; ++i) {
        le |= std::uint64_t{buf[at + i]} << (8 * i);
        be = (be << 8) | buf[at + i];
      }
      CHECK(binlogctl::load_le(buf + at, n) == le);
      CHECK(binlogctl::load_be(buf + at, n) == be);
    }
  }
}
