// framing/crc_ahead.h: the CRC32s a second thread sums ahead of verify's reader.
#include <binlogctl/bytes.h>
#include <binlogctl/fde.h>
#include <doctest/doctest.h>

#include "framing/crc_ahead.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace binlogctl;

namespace {

std::vector<std::uint8_t> fixture(const char* name) {
  std::ifstream in(std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The events of a file as its sizes frame it: (position, size).
std::vector<std::pair<std::uint64_t, std::uint64_t>> frame(const std::vector<std::uint8_t>& b) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::uint64_t pos = 4;
  while (pos + 19 <= b.size()) {
    const std::uint64_t size = load_le32(b.data() + pos + 9);
    REQUIRE(size >= 19);
    out.emplace_back(pos, size);
    pos += size;
  }
  REQUIRE(pos == b.size());
  return out;
}

// Waits (up to 20 s: a loaded sanitizer run) until the worker has published `n` sums.
void wait_published(const CrcAhead& a, std::uint64_t n) {
  for (int i = 0; i < 2000 && a.published() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

std::uint32_t crc_of(const std::vector<std::uint8_t>& b, std::uint64_t pos, std::uint64_t size) {
  return compute_event_crc(Bytes(b.data() + pos, static_cast<std::size_t>(size)));
}

}  // namespace

TEST_SUITE("crc_ahead") {
  TEST_CASE("every event of a real file: the sum handed over is compute_event_crc's, the FDE's too") {
    const auto b = fixture("mariadb-bin.000001");
    const auto ev = frame(b);
    REQUIRE(ev.size() > 20);
    CrcAhead a(Bytes(b.data(), b.size()), 4);
    wait_published(a, ev.size());
    REQUIRE(a.published() == ev.size());
    for (auto [pos, size] : ev) {
      auto c = a.take(pos, size);
      REQUIRE(c.has_value());
      CHECK(*c == crc_of(b, pos, size));
      CHECK(*c == load_le32(b.data() + pos + size - 4));  // the file is sound
    }
    CHECK(a.taken() == ev.size());
  }

  TEST_CASE("a damaged body: the sum handed over is the damaged bytes', not the stored one") {
    auto b = fixture("mariadb-bin.000003");
    const auto ev = frame(b);
    const auto [dpos, dsize] = ev[ev.size() / 2];
    b[dpos + 19 + 2] ^= 0x40;
    CrcAhead a(Bytes(b.data(), b.size()), 4);
    wait_published(a, ev.size());
    for (auto [pos, size] : ev) {
      auto c = a.take(pos, size);
      REQUIRE(c.has_value());
      CHECK(*c == crc_of(b, pos, size));
      if (pos == dpos) CHECK(*c != load_le32(b.data() + pos + size - 4));
    }
  }

  // A damaged size field: the worker frames the file its own way from there (or cannot). The
  // reader, walking the true events, is never handed a wrong sum, and once it has moved on the
  // worker sums ahead of it again.
  TEST_CASE("a damaged size field: no wrong sum, and the worker back on the reader's events after it") {
    for (std::uint32_t bad : {0xffffff00u, 0u, 7u}) {  // past the end, too small, a shorter event
      CAPTURE(bad);
      auto b = fixture("mariadb-bin.000001");
      const auto ev = frame(b);
      const std::size_t k = 5;
      const std::uint64_t dpos = ev[k].first;
      if (bad == 7u) bad = static_cast<std::uint32_t>(ev[k].second - 7);
      store_le32(b.data() + dpos + 9, bad);
      CrcAhead a(Bytes(b.data(), b.size()), 4);
      wait_published(a, k);
      std::uint64_t after = 0;
      bool missed = false;
      for (std::size_t i = 0; i < ev.size(); ++i) {
        auto [pos, size] = ev[i];
        // Past the damage, after a take the worker could not serve, give it time to move on from
        // where the reader is.
        if (i > k && missed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const std::optional<std::uint32_t> c = a.take(pos, size);
        missed = !c;
        if (c) {
          CHECK(*c == crc_of(b, pos, size));
          if (i > k) ++after;
        }
        if (i < k) CHECK(c.has_value());
      }
      CHECK(after > 0);
    }
  }

  TEST_CASE("the worker stays within its ring, and stops when dropped") {
    // A file of thousands of events: the reader takes none for a while; the worker sums at most
    // kRing of them and waits, and the destructor stops it.
    std::vector<std::uint8_t> b;
    for (const char* f : {"mariadb-bin.000001", "mariadb-bin.000003", "mariadb-bin.000004", "mariadb-bin.000006"}) {
      const auto one = fixture(f);
      b.insert(b.end(), one.begin(), one.end());  // concatenated files: each starts with its magic
    }
    std::vector<std::uint8_t> many;
    while (many.size() < 3 * CrcAhead::kRing * 200) many.insert(many.end(), b.begin(), b.end());
    CrcAhead a(Bytes(many.data(), many.size()), 4);
    wait_published(a, CrcAhead::kRing);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(a.published() <= CrcAhead::kRing);
    CHECK(a.published() > CrcAhead::kRing / 2);
  }
}
