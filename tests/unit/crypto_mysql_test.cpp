// MySQL 8.0.14+ encrypted binlogs (crypto.h): the keyring_file parser, the encryption header
// and the decrypted stream, on the one real file there is (testdata/mysql-8-encrypted: written
// by MySQL 8.0.22, with its keyring, from LianjiaTech/lightning's test suite), and damage to it.
#include <binlogctl/chain.h>
#include <binlogctl/crypto.h>
#include <binlogctl/source.h>
#include <doctest/doctest.h>

#include "decrypted_chain.h"

#include <openssl/evp.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

const std::string kDir = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mysql-8-encrypted";
const std::string kMasterKeyId = "MySQLReplicationKey_cfe557b7-766c-11eb-afbf-3cfdfed34198_2";

using test_support::slurp;

Bytes as_bytes(const std::vector<std::uint8_t>& v) { return {v.data(), v.size()}; }

std::vector<std::uint8_t> drain(Source& s) {
  std::vector<std::uint8_t> r;
  for (;;) {
    Bytes w = s.window(r.size(), 100);  // windows that cut across the decrypted chunks' blocks
    if (w.empty()) break;
    r.insert(r.end(), w.begin(), w.end());
    s.release(r.size());
  }
  return r;
}

std::string parse_error(const std::vector<std::uint8_t>& bytes) {
  KeyRing k;
  try {
    k.parse_mysql_keyring(as_bytes(bytes), "kr");
  } catch (const KeyFileError& e) {
    return e.what();
  }
  return {};
}

// The keyring as version 1.0 (no digest), so that its keys can be changed.
std::vector<std::uint8_t> as_version_1(std::vector<std::uint8_t> kr) {
  kr.resize(kr.size() - 32);
  kr[21] = '1';
  return kr;
}

using Read = test_support::DecryptedRead;

Read read_chain(const std::vector<std::uint8_t>& file, const KeyRing& keys, bool as_stream) {
  return test_support::read_decrypted({{"binlog.000221", file}}, keys, as_stream);
}

}  // namespace

TEST_SUITE("crypto_mysql") {
  TEST_CASE("keyring_file: the real keyring's three keys, de-obfuscated, digest checked") {
    KeyRing k;
    k.load_mysql_keyring(kDir + "/keyring");
    REQUIRE(k.keyring_files().size() == 1);
    const MysqlKeyringKey* master = k.mysql_key(kMasterKeyId);
    REQUIRE(master != nullptr);
    CHECK(master->type == "AES");
    CHECK(master->file == kDir + "/keyring");
    REQUIRE(master->bytes.size() == 32);
    // The master key seqno key holds 2 (the seqno of the key above) once de-obfuscated.
    const MysqlKeyringKey* seqno = k.mysql_key("MySQLReplicationKey_cfe557b7-766c-11eb-afbf-3cfdfed34198");
    REQUIRE(seqno != nullptr);
    REQUIRE(seqno->bytes.size() == 16);
    CHECK(seqno->bytes[0] == 2);
    for (std::size_t i = 1; i < 16; ++i) CHECK(seqno->bytes[i] == 0);
    CHECK(k.mysql_key("MySQLReplicationKey_cfe557b7-766c-11eb-afbf-3cfdfed34198_last_purged") != nullptr);
    CHECK(k.mysql_key("MySQLReplicationKey_cfe557b7-766c-11eb-afbf-3cfdfed34198_3") == nullptr);
  }

  TEST_CASE("keyring_file: damage, truncation, another format: errors that name the file and offset, never a crash") {
    const auto kr = slurp(kDir + "/keyring");
    REQUIRE(kr.size() == 443);
    CHECK(parse_error(kr).empty());
    {
      auto v = kr;
      v[0x100] ^= 1;  // inside the master key: the digest no longer matches
      const std::string e = parse_error(v);
      CHECK(e.find("kr: offset 411: the SHA-256 digest does not match") != std::string::npos);
    }
    CHECK(parse_error(std::vector<std::uint8_t>(kr.begin(), kr.begin() + 200)).find("EOF") != std::string::npos);
    CHECK(parse_error({'{', '"', 'v'}).find("not a MySQL keyring_file data file") != std::string::npos);
    // Version 1.0 (no digest) reads the same keys.
    const auto v1 = as_version_1(kr);
    CHECK(parse_error(v1).empty());
    {
      auto v = v1;
      v[24] = 0xff;  // the first entry's size: past the file
      CHECK(parse_error(v).find("offset 24: a key entry of") != std::string::npos);
      v = v1;
      v[24 + 8] = 0x70;  // its key id's length: more than its entry
      CHECK(parse_error(v).find("offset 24: a key entry's lengths") != std::string::npos);
      v = v1;
      v[24 + 39] = 0x80;  // its key's length, in the top byte: no overflow when summed
      CHECK(parse_error(v).find("offset 24: a key entry's lengths") != std::string::npos);
    }
    // Every truncation and every byte flipped: an error or a parse, no crash, no sanitizer report.
    for (std::size_t n = 0; n < v1.size(); ++n) {
      (void)parse_error(std::vector<std::uint8_t>(v1.begin(), v1.begin() + static_cast<std::ptrdiff_t>(n)));
      auto v = v1;
      v[n] ^= 0xa5;
      (void)parse_error(v);
    }
    CHECK(parse_error({}).empty());  // the plugin's empty keyring
  }

  TEST_CASE("the encryption header of the real file: key id, wrapped password, IV; damage is refused") {
    const auto f = slurp(kDir + "/binlog.encrypted");
    REQUIRE(f.size() == 1168);
    MysqlEncryptionHeader h;
    std::string err;
    std::uint64_t at = 99;
    REQUIRE(parse_mysql_encryption_header(as_bytes(f), h, err, at));
    CHECK(h.key_id == kMasterKeyId);
    CHECK(h.encrypted_password[0] == 0xce);
    CHECK(h.iv[0] == 0x67);
    CHECK(h.iv[15] == 0xb3);
    CHECK_FALSE(parse_mysql_encryption_header(Bytes(f.data(), 300), h, err, at));
    CHECK(at == 300);
    CHECK(err.find("inside its 512-byte encryption header") != std::string::npos);
    auto v = f;
    v[4] = 2;
    CHECK_FALSE(parse_mysql_encryption_header(as_bytes(v), h, err, at));
    CHECK(err.find("version 2 is not supported") != std::string::npos);
    v = f;
    v[5] = 9;
    CHECK_FALSE(parse_mysql_encryption_header(as_bytes(v), h, err, at));
    CHECK(at == 5);
    v = f;
    for (std::size_t i = 0x73; i < 512; ++i) v[i] = 3;  // IV fields instead of the end, until one runs past it
    CHECK_FALSE(parse_mysql_encryption_header(as_bytes(v), h, err, at));
    CHECK(at == 0x73 + 23 * 17);
    CHECK(err.find("the IV runs past the header's end") != std::string::npos);
    v = f;
    v[0x41] = 0;  // the fields end before the password
    CHECK_FALSE(parse_mysql_encryption_header(as_bytes(v), h, err, at));
    CHECK(err.find("lacks the encrypted file password") != std::string::npos);
  }

  TEST_CASE("the real file decrypts to the clear file byte for byte, at the stream's offsets, mapped and streamed") {
    KeyRing k;
    k.load_mysql_keyring(kDir + "/keyring");
    const auto enc = slurp(kDir + "/binlog.encrypted");
    const auto clear = slurp(kDir + "/binlog.decrypted");
    REQUIRE(clear.size() == enc.size() - 512);
    auto mapped = decrypting_source(memory_source(as_bytes(enc)), k);
    REQUIRE(mapped->size());
    CHECK(*mapped->size() == clear.size());
    CHECK(drain(*mapped) == clear);
    CHECK(mapped->read_error().code == Errc::ok);
    // Random access (serve): any offset, any order.
    auto view = decrypting_view(memory_source(as_bytes(enc)), k);
    for (std::uint64_t off : {609u, 4u, 313u, 0u, 655u, 17u}) {
      Bytes w = view->window(off, 40);
      REQUIRE(!w.empty());
      CHECK(std::memcmp(w.data(), clear.data() + off, w.size()) == 0);
    }
    auto streamed = decrypting_source(stream_source(memory_stream(as_bytes(enc))), k);
    CHECK(drain(*streamed) == clear);
    CHECK(streamed->read_error().code == Errc::ok);
    // Through the chain reader: the events where the server put them (log_pos of the clear file).
    for (bool stream : {false, true}) {
      CAPTURE(stream);
      Read r = read_chain(enc, k, stream);
      for (const auto& d : r.diag.all) MESSAGE(d.message);
      CHECK(r.diag.all.empty());
      CHECK(r.pos == std::vector<std::uint64_t>{4, 125, 236, 313, 421, 498, 609});
      CHECK(r.next.back() == 656);
    }
  }

  TEST_CASE("no keyring, a key id not in it, a wrong key: decryption_failed naming the key id, nothing read") {
    const auto enc = slurp(kDir + "/binlog.encrypted");
    const auto kr1 = as_version_1(slurp(kDir + "/keyring"));
    KeyRing none;  // --key-file alone (MariaDB keys), no --keyring-file
    none.parse("1;00112233445566778899aabbccddeeff\n", "keys.txt");
    KeyRing other;
    {
      auto v = kr1;
      v[0xb8 + 57] = '7';  // the master key's id ends in _7
      other.parse_mysql_keyring(as_bytes(v), "other-keyring");
    }
    KeyRing wrong;
    {
      auto v = kr1;
      v[0xf5] ^= 0x01;  // one bit of the master key
      wrong.parse_mysql_keyring(as_bytes(v), "wrong-keyring");
    }
    struct Case {
      const KeyRing* keys;
      const char* says;
    } cases[] = {{&none, "give the server's keyring file (keyring_file_data) with --keyring-file"},
                 {&other, "is not in the keyring (other-keyring)"},
                 {&wrong, "does not decrypt the binlog magic number at encrypted-file offset 512"}};
    for (const Case& c : cases) {
      CAPTURE(c.says);
      for (bool stream : {false, true}) {
        auto s = stream ? decrypting_source(stream_source(memory_stream(as_bytes(enc))), *c.keys)
                        : decrypting_source(memory_source(as_bytes(enc)), *c.keys);
        CHECK(drain(*s).empty());
        CHECK(s->read_error().code == Errc::decrypt_failed);
        const std::string what = s->read_error().what;
        CHECK(what.find(c.says) != std::string::npos);
        CHECK(what.find(kMasterKeyId) != std::string::npos);
        Read r = read_chain(enc, *c.keys, stream);
        CHECK(r.pos.empty());
        REQUIRE(r.diag.all.size() == 1);
        CHECK(r.diag.all[0].check == Check::decryption_failed);
        CHECK(r.diag.all[0].pos == 0);
      }
    }
  }

  TEST_CASE("every truncation and flipped byte of the real file: findings, never a crash, no invented event") {
    KeyRing k;
    k.load_mysql_keyring(kDir + "/keyring");
    const auto enc = slurp(kDir + "/binlog.encrypted");
    for (std::size_t n = 0; n < enc.size(); n += 7) {
      CAPTURE(n);
      const std::vector<std::uint8_t> cut(enc.begin(), enc.begin() + static_cast<std::ptrdiff_t>(n));
      Read r = read_chain(cut, k, n % 2 == 0);
      const bool at_event_end = n == 512 + 125;  // a file cut at an event's end reads clean up to there
      if (!at_event_end) CHECK(!r.diag.all.empty());
      auto v = enc;
      v[n] ^= 0x10;
      Read f = read_chain(v, k, n % 2 == 1);
      // A flip in the header's unused bytes changes nothing; anywhere else it is found.
      if (n < 0x74 || n >= 512) CHECK(!f.diag.all.empty());
    }
    // A bit flipped in an event of the stream: the CRC32 finds it at the clear file's offset.
    auto v = enc;
    v[512 + 330] ^= 0x01;
    Read f = read_chain(v, k, false);
    REQUIRE(!f.diag.all.empty());
    CHECK(f.diag.all[0].check == Check::checksum_mismatch);
    CHECK(f.diag.all[0].pos == 313);
  }
}
