#include <binlogctl/crc32.h>
#include <binlogctl/fde.h>
#include <doctest/doctest.h>
#include <zlib.h>

#include <vector>

#include "binlog_builder.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;

TEST_SUITE("fde") {
  TEST_CASE("server versions") {
    CHECK(parse_server_version("5.6.4-m7-debug-log") == 0x050604);
    CHECK(parse_server_version("10.11.19-MariaDB-0+deb12u1-log") == 0x0a0b13);
    CHECK(parse_server_version("8.0.32") == 0x080020);
    CHECK(parse_server_version("garbage") == 0);
  }

  TEST_CASE("decodes a MySQL 8 FDE with CRC32") {
    BinlogBuilder b;
    b.fde("8.0.32");
    auto ev = Bytes(b.bytes()).subspan(4);
    auto f = decode_fde(ev, 4);
    REQUIRE(f.ok());
    CHECK(f->server_version == "8.0.32");
    CHECK(f->flavor == Flavor::mysql);
    CHECK(f->crc32());
    CHECK(f->has_checksum_field);
    CHECK(f->post_header(EventType::query) == 13);
    CHECK(f->post_header(EventType::write_rows) == 10);
    CHECK(compute_event_crc(ev) == load_le32(ev.data() + ev.size() - 4));
  }

  TEST_CASE("MariaDB flavor and the 11.4 zero-position rule") {
    BinlogBuilder b;
    b.fde("11.8.5-MariaDB-log");
    auto f = decode_fde(Bytes(b.bytes()).subspan(4), 4);
    REQUIRE(f.ok());
    CHECK(f->flavor == Flavor::mariadb);
    CHECK(f->zero_log_pos_inside_transactions());
    BinlogBuilder c;
    c.fde("10.11.19-MariaDB-log");
    CHECK_FALSE(decode_fde(Bytes(c.bytes()).subspan(4), 4)->zero_log_pos_inside_transactions());
  }

  TEST_CASE("the FDE checksum is computed with IN_USE cleared") {
    BinlogBuilder b;
    b.fde("8.0.32", true, kFlagInUse);
    auto ev = Bytes(b.bytes()).subspan(4);
    CHECK((ev[17] & kFlagInUse) != 0);
    CHECK(compute_event_crc(ev) == load_le32(ev.data() + ev.size() - 4));
  }

  TEST_CASE("binlog v3 and short FDEs are refused with offsets") {
    BinlogBuilder b;
    b.fde("8.0.32");
    std::vector<std::uint8_t> ev(b.bytes().begin() + 4, b.bytes().end());
    ev[19] = 3;  // binlog_version
    auto f = decode_fde(ev, 4);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().code == Errc::unsupported_format);
    CHECK(f.error().offset == 23);
    std::vector<std::uint8_t> shortev(ev.begin(), ev.begin() + 40);
    auto g = decode_fde(shortev, 4);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().code == Errc::truncated);
  }
}

TEST_CASE("crc32_update agrees with zlib's crc32 at every length, alignment and split") {
  // Whichever implementation the build and the CPU select (ISA-L's 128-bit or AVX-512 folding,
  // or zlib itself), the checksum is zlib's.
  std::vector<std::uint8_t> buf(4096 + 64);
  std::uint32_t x = 0x12345678u;
  for (auto& b : buf) {
    x = x * 1103515245u + 12345u;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  INFO("implementation: " << crc32_implementation());
  for (std::size_t align = 0; align < 16; align += 3) {
    for (std::size_t len = 0; len <= 700; ++len) {
      const std::uint8_t* p = buf.data() + align;
      const auto want = static_cast<std::uint32_t>(::crc32(0, p, static_cast<uInt>(len)));
      CHECK(crc32_update(0, p, len) == want);
      const std::size_t cut = len / 3;
      CHECK(crc32_update(crc32_update(0, p, cut), p + cut, len - cut) == want);
    }
  }
  const auto whole = static_cast<std::uint32_t>(::crc32(0, buf.data(), static_cast<uInt>(buf.size())));
  CHECK(crc32_update(0, buf.data(), buf.size()) == whole);
}
