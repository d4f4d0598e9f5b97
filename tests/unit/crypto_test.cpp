// Encrypted MariaDB binlogs (crypto.h): key files, and the decrypting input seam on the real
// encrypted fixture set (testdata/mariadb-10.11/encrypted: AES_CBC, its public test key).
#include <binlogctl/chain.h>
#include <binlogctl/crypto.h>
#include <binlogctl/source.h>
#include <doctest/doctest.h>

#include "decrypted_chain.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <unistd.h>
#include <iterator>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

const std::string kEnc = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/encrypted";

using test_support::slurp;
using Read = test_support::DecryptedRead;
const auto read_files = test_support::read_decrypted;

// The events SHOW BINLOG EVENTS listed on the server that wrote the fixture: (pos, type name).
std::vector<std::uint64_t> listed_positions(const std::string& name) {
  std::ifstream in(kEnc + "/expected/show-binlog-events/" + name + ".tsv");
  std::string line;
  std::getline(in, line);
  std::vector<std::uint64_t> r;
  while (std::getline(in, line)) {
    const auto a = line.find('\t');
    if (a == std::string::npos) continue;
    r.push_back(std::stoull(line.substr(a + 1, line.find('\t', a + 1) - a - 1)));
  }
  return r;
}

// Every byte a source hands out, window by window (released as it goes, as the chain reader does).
std::vector<std::uint8_t> drain(Source& s) {
  std::vector<std::uint8_t> r;
  for (;;) {
    Bytes w = s.window(r.size(), 64 * 1024);
    if (w.empty()) break;
    r.insert(r.end(), w.begin(), w.end());
    s.release(r.size());
  }
  return r;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::vector<std::uint8_t>& b) {
    char tmpl[] = "/tmp/binlogctl-crypto-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = tmpl;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

}  // namespace

TEST_SUITE("crypto") {
  TEST_CASE("a file decrypted in place (read with pread, or from memory) equals the stream's copy, byte for byte") {
    KeyRing keys;
    keys.load(kEnc + "/keys.txt");
    for (const char* n : {"mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"}) {
      CAPTURE(n);
      const auto bytes = slurp(kEnc + "/binlogs/" + n);
      const Bytes b(bytes.data(), bytes.size());
      // The stream decrypts each event from the input into a buffer of its own (a copy).
      auto streamed = decrypting_source(stream_source(memory_stream(b)), keys);
      const auto want = drain(*streamed);
      CHECK(streamed->read_error().code == Errc::ok);
      REQUIRE(want.size() == bytes.size());
      CHECK(want != bytes);
      auto in_memory = decrypting_source(memory_source(b), keys);
      CHECK(drain(*in_memory) == want);
      CHECK(in_memory->read_error().code == Errc::ok);
      TempFile f(bytes);
      auto from_file = decrypting_source(open_source(f.path), keys);
      CHECK(drain(*from_file) == want);
      CHECK(from_file->read_error().code == Errc::ok);
    }
  }

  TEST_CASE("an encrypted file cut short after it was opened: its bytes end there, no crash (it is read, not mapped)") {
    KeyRing keys;
    keys.load(kEnc + "/keys.txt");
    const auto bytes = slurp(kEnc + "/binlogs/mariadb-bin.000002");
    auto whole = decrypting_source(stream_source(memory_stream(Bytes(bytes.data(), bytes.size()))), keys);
    const auto want = drain(*whole);
    TempFile f(bytes);
    auto opened = open_source(f.path);  // its size is taken here
    const std::uint64_t cut = bytes.size() / 2;
    REQUIRE(::truncate(f.path.c_str(), static_cast<off_t>(cut)) == 0);
    auto s = decrypting_source(std::move(opened), keys);
    const auto got = drain(*s);
    CHECK(got.size() == cut);
    CHECK(s->read_error().code == Errc::ok);
    // Every whole event before the cut is decrypted as in the whole file.
    std::uint64_t at = 4;
    while (at + 13 <= want.size()) {
      const std::uint64_t next = at + (want[at + 9] | want[at + 10] << 8 | want[at + 11] << 16 | std::uint64_t{want[at + 12]} << 24);
      if (next > cut) break;
      at = next;
    }
    CHECK(at > cut / 2);
    CHECK(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(at), want.begin()));
  }


  TEST_CASE("key files: ids, 128/192/256-bit keys, comments, blanks; later lines replace earlier ones") {
    KeyRing k;
    k.parse("# comment\n\n  1;00112233445566778899aabbccddeeff rest ignored\n"
            "2;000102030405060708090a0b0c0d0e0f1011121314151617\r\n"
            "4294967295;000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F\n"
            "1;ffeeddccbbaa99887766554433221100",
            "k.txt");
    REQUIRE(k.with_id(1).size() == 1);
    CHECK(k.with_id(1)[0]->bytes.front() == 0xff);
    CHECK(k.with_id(2)[0]->bytes.size() == 24);
    CHECK(k.with_id(4294967295u)[0]->bytes.size() == 32);
    CHECK(k.with_id(3).empty());
    CHECK(k.files() == std::vector<std::string>{"k.txt"});
  }

  TEST_CASE("key files: errors name the file and line, never the key") {
    for (const char* bad : {"1;0011", "0;00112233445566778899aabbccddeeff", "x;00", "1:00112233445566778899aabbccddeeff",
                            "4294967296;00112233445566778899aabbccddeeff",
                            "1;00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00"}) {
      KeyRing k;
      std::string text = std::string("# fine\n") + bad + "\n";
      try {
        k.parse(text, "bad.txt");
        FAIL("accepted: " << bad);
      } catch (const KeyFileError& e) {
        const std::string m = e.what();
        CHECK(m.rfind("bad.txt:2: ", 0) == 0);
        CHECK(m.find("00112233") == std::string::npos);
      }
    }
  }

  TEST_CASE("an encrypted key file that does not decrypt is refused") {
    const std::string junk = std::string("Salted__12345678") + std::string(32, 'x');
    CHECK_THROWS_AS(decrypt_key_file(junk, "secret", "k.enc"), KeyFileError);
    CHECK_THROWS_AS(decrypt_key_file("1;00112233445566778899aabbccddeeff\n", "secret", "k.txt"), KeyFileError);
  }

  TEST_CASE("the fixture decrypts: every event where SHOW BINLOG EVENTS put it, no finding, mapped and streamed") {
    KeyRing keys;
    keys.load(kEnc + "/keys.txt");
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files;
    for (const char* n : {"mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"})
      files.emplace_back(n, slurp(kEnc + "/binlogs/" + n));
    for (bool streams : {false, true}) {
      CAPTURE(streams);
      Read r = read_files(files, keys, streams);
      for (const auto& d : r.diag.all) MESSAGE(d.log_name << ":" << d.pos << " " << d.message);
      CHECK(r.diag.all.empty());
      // The files' events in order; each file's listing is a prefix (the Stop written at
      // shutdown comes after the listing was taken).
      std::vector<std::uint64_t> want;
      for (const auto& f : files) {
        auto l = listed_positions(f.first);
        want.insert(want.end(), l.begin(), l.end());
      }
      CHECK(r.pos.size() >= want.size());
      CHECK(std::count(r.types.begin(), r.types.end(), std::uint8_t{23}) + std::count(r.types.begin(), r.types.end(), std::uint8_t{30}) > 0);
      std::vector<std::uint64_t> got_listed;
      std::size_t i = 0;
      for (const auto& f : files) {
        const auto l = listed_positions(f.first);
        for (std::size_t j = 0; j < l.size() && i < r.pos.size(); ++j, ++i) got_listed.push_back(r.pos[i]);
        while (i < r.pos.size() && r.pos[i] != 4) ++i;  // the Stop event, if any
      }
      CHECK(got_listed == want);
    }
  }

  TEST_CASE("a wrong key, or no key id 1: decryption_failed at the first encrypted event, nothing invented") {
    const auto bytes = slurp(kEnc + "/binlogs/mariadb-bin.000001");
    for (const char* text : {"1;00112233445566778899aabbccddeeff\n", "2;00112233445566778899aabbccddeeff\n"}) {
      KeyRing keys;
      keys.parse(text, "wrong.txt");
      Read r = read_files({{"mariadb-bin.000001", bytes}}, keys, false);
      CHECK(r.types == std::vector<std::uint8_t>{15, 164});
      REQUIRE(r.diag.all.size() == 1);
      CHECK(r.diag.all[0].check == Check::decryption_failed);
      CHECK(r.diag.all[0].pos == 296);
      CHECK(r.diag.all[0].message.find("key id 1") != std::string::npos);
      CHECK(r.diag.all[0].message.find("wrong.txt") != std::string::npos);
    }
  }

  TEST_CASE("every truncation and flipped bytes of an encrypted file: findings, never a crash") {
    KeyRing keys;
    keys.load(kEnc + "/keys.txt");
    const auto bytes = slurp(kEnc + "/binlogs/mariadb-bin.000002");
    for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
      std::vector<std::uint8_t> b(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      (void)read_files({{"mariadb-bin.000002", b}}, keys, cut % 2 == 0);
    }
    for (std::size_t at = 300; at < bytes.size(); at += 13) {
      std::vector<std::uint8_t> b = bytes;
      b[at] ^= 0x41;
      Read r = read_files({{"mariadb-bin.000002", b}}, keys, at % 2 == 0);
      CHECK(!r.diag.all.empty());
    }
  }
}
