// MariaDB compressed events (QUERY_COMPRESSED, *_ROWS_COMPRESSED): the declared length is a
// claim, not an allocation size.
#include "events/events.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

// A MariaDB compressed body: header byte 0x80 | 4 (4-byte big-endian length), length, zlib.
std::vector<std::uint8_t> mariadb_compressed(const std::string& text, std::uint32_t declared) {
  uLongf n = compressBound(static_cast<uLong>(text.size()));
  std::vector<std::uint8_t> z(n);
  REQUIRE(compress(z.data(), &n, reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size())) == Z_OK);
  z.resize(n);
  std::vector<std::uint8_t> out(5 + z.size());
  out[0] = 0x84;
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<std::uint8_t>(declared >> (24 - 8 * i));
  for (std::size_t i = 0; i < z.size(); ++i) out[5 + i] = z[i];
  return out;
}

std::string noise(std::size_t n) {  // incompressible: the compressed size allows a large claim
  std::string s(n, '\0');
  std::uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

}  // namespace

TEST_CASE("decompress_mariadb: the declared length is checked against what zlib produces, not allocated") {
  const std::string text = noise(100000);
  std::string out;
  SUBCASE("exact") {
    auto c = mariadb_compressed(text, static_cast<std::uint32_t>(text.size()));
    REQUIRE(decompress_mariadb(Bytes(c.data(), c.size()), 0, out).ok());
    CHECK(out == text);
  }
  SUBCASE("a claim of 100 MB for 100 kB of data: damage, and no 100 MB buffer") {
    auto c = mariadb_compressed(text, 100u << 20);
    Status st = decompress_mariadb(Bytes(c.data(), c.size()), 7, out);
    CHECK_FALSE(st.ok());
    CHECK(out.empty());
    CHECK(out.capacity() < (4u << 20));  // grew with the data, not with the claim
  }
  SUBCASE("a claim shorter than the data: damage") {
    auto c = mariadb_compressed(text, static_cast<std::uint32_t>(text.size() - 1));
    CHECK_FALSE(decompress_mariadb(Bytes(c.data(), c.size()), 0, out).ok());
  }
  SUBCASE("a claim past the largest event a server writes") {
    std::vector<std::uint8_t> c{0x84, 0x7f, 0xff, 0xff, 0xff};
    c.resize(c.size() + 3000000, 0);
    Status st = decompress_mariadb(Bytes(c.data(), c.size()), 0, out);
    CHECK_FALSE(st.ok());
    CHECK(out.capacity() < (4u << 20));
  }
}
