// The dump commands' bodies (remote.h). MySQL cannot be run here, so COM_BINLOG_DUMP_GTID and its
// GTID set are checked against byte layouts written out by hand from MySQL's source (read through
// the search tool):
// - sql/rpl_source.cc, com_binlog_dump_gtid(): READ_INT(flags, 2), READ_INT(server_id, 4),
//   READ_INT(name_size, 4), READ_STRING(name), READ_INT(pos, 8), READ_INT(data_size, 4), then
//   Gtid_set::add_gtid_encoding(data, data_size);
// - sql/rpl_gtid_set.cc, Gtid_set::encode() and encode_nsids_format(): 8-byte n_sids (tagged:
//   format 1 in the top byte and the low byte, n_sids << 8), per tsid 16 uuid bytes + the tag
//   (Tag::encode_tag: mysql::serialization string, varint length = length << 1 in one byte),
//   8-byte n_intervals, intervals as 8-byte start and 8-byte end exclusive;
// - libs/mysql/serialization/variable_length_integers.h, write_varlen_bytes_unsigned: a value
//   below 128 is one byte, value << 1.
// The flag BINLOG_THROUGH_GTID (4) is set as canal, python-mysql-replication and MySQL's own
// replica do; the server reads the set whatever the flags say.
#include <binlogctl/remote.h>

#include <doctest/doctest.h>

#include <stdexcept>

namespace binlogctl {
namespace {

using Buf = std::vector<std::uint8_t>;

void le(Buf& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

const Buf kUuid = {0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62};
const Buf kUuid2 = {0x5a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};

GtidSet set_of(const char* text) {
  auto s = GtidSet::parse(text);
  REQUIRE(s);
  return s.value();
}

TEST_CASE("dump request: COM_BINLOG_DUMP takes positions up to 4 GiB - 1 and refuses 4 GiB") {
  Buf want;
  le(want, 0xffffffffu, 4);
  le(want, kDumpNonBlock | kDumpAnnotateRows, 2);
  le(want, 0x40000007u, 4);
  for (char c : std::string("mariadb-bin.000001")) want.push_back(static_cast<std::uint8_t>(c));
  CHECK(encode_binlog_dump("mariadb-bin.000001", 0xffffffffu, kDumpNonBlock | kDumpAnnotateRows, 0x40000007u) == want);
  CHECK_THROWS_AS(encode_binlog_dump("mariadb-bin.000001", 0x100000000ull, 0, 1), std::invalid_argument);
  // The empty file name of a GTID start: the body ends after the server id.
  CHECK(encode_binlog_dump("", 4, 0, 9).size() == 10);
}

TEST_CASE("dump request: a classic GTID set, byte for byte") {
  const GtidSet s = set_of("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11,5a000000-0000-0000-0000-000000000001:7");
  Buf want;
  le(want, 2, 8);  // n_sids, classic format
  want.insert(want.end(), kUuid.begin(), kUuid.end());
  le(want, 2, 8);  // n_intervals
  le(want, 1, 8);
  le(want, 6, 8);  // 1-5: end exclusive
  le(want, 11, 8);
  le(want, 12, 8);
  want.insert(want.end(), kUuid2.begin(), kUuid2.end());
  le(want, 1, 8);
  le(want, 7, 8);
  le(want, 8, 8);
  const Buf got = encode_gtid_set(s);
  CHECK(got == want);
  // The reader written from add_gtid_encoding gives the set back.
  ByteReader r(Bytes(got.data(), got.size()), 0);
  auto back = decode_previous_gtids(r);
  REQUIRE(back);
  CHECK(back.value() == s);
}

TEST_CASE("dump request: a set with a tag uses the tagged format for every entry") {
  const GtidSet s = set_of("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3:Abc:5");
  Buf want;
  le(want, (1ull << 56) | (2ull << 8) | 1u, 8);
  // untagged first (the empty tag sorts first), tag length 0
  want.insert(want.end(), kUuid.begin(), kUuid.end());
  want.push_back(0x00);
  le(want, 1, 8);
  le(want, 1, 8);
  le(want, 4, 8);
  // then "abc" (stored lower-cased): varint 3 << 1
  want.insert(want.end(), kUuid.begin(), kUuid.end());
  want.push_back(0x06);
  want.push_back('a');
  want.push_back('b');
  want.push_back('c');
  le(want, 1, 8);
  le(want, 5, 8);
  le(want, 6, 8);
  const Buf got = encode_gtid_set(s);
  CHECK(got == want);
  ByteReader r(Bytes(got.data(), got.size()), 0);
  auto back = decode_previous_gtids(r);
  REQUIRE(back);
  CHECK(back.value() == s);
}

TEST_CASE("dump request: the empty set is the 8-byte count 0 (add_gtid_encoding refuses fewer bytes)") {
  CHECK(encode_gtid_set(GtidSet{}) == Buf(8, 0));
}

TEST_CASE("dump request: COM_BINLOG_DUMP_GTID with an 8-byte position past 4 GiB") {
  const std::uint64_t pos = 5000000000ull;  // 0x12A05F200
  const Buf got = encode_binlog_dump_gtid("binlog.000042", pos, kDumpNonBlock, 0x01020304u,
                                          set_of("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100"));
  Buf want = {0x05, 0x00,               // flags: NON_BLOCK | THROUGH_GTID
              0x04, 0x03, 0x02, 0x01,   // server id
              13, 0, 0, 0};             // name length
  for (char c : std::string("binlog.000042")) want.push_back(static_cast<std::uint8_t>(c));
  const Buf pos_bytes = {0x00, 0xf2, 0x05, 0x2a, 0x01, 0x00, 0x00, 0x00};
  want.insert(want.end(), pos_bytes.begin(), pos_bytes.end());
  le(want, 8 + 16 + 8 + 16, 4);  // data size
  le(want, 1, 8);
  want.insert(want.end(), kUuid.begin(), kUuid.end());
  le(want, 1, 8);
  le(want, 1, 8);
  le(want, 101, 8);
  CHECK(got == want);
}

TEST_CASE("dump request: the command by flavor and position, at the 4 GiB boundary") {
  const GtidSet none;
  const std::uint64_t last4 = 0xffffffffull, past = 0x100000000ull;
  // MariaDB: COM_BINLOG_DUMP up to 4 GiB - 1 (with ANNOTATE_ROWS), refused past it.
  DumpRequest r = make_dump_request(true, "mariadb-bin.000001", last4, true, 7, false, none);
  CHECK(r.command == kComBinlogDump);
  CHECK(r.body == encode_binlog_dump("mariadb-bin.000001", last4, kDumpNonBlock | kDumpAnnotateRows, 7));
  CHECK_THROWS_AS(make_dump_request(true, "mariadb-bin.000001", past, true, 7, false, none), std::invalid_argument);
  // MariaDB GTID start: no file name, position 4 (the server ignores both).
  r = make_dump_request(true, "ignored", 4, false, 7, true, none);
  CHECK(r.body == encode_binlog_dump("", 4, kDumpAnnotateRows, 7));
  // MySQL: COM_BINLOG_DUMP (no flag 2: it would ask for HEARTBEAT_V2) up to 4 GiB - 1 ...
  r = make_dump_request(false, "binlog.000001", last4, true, 7, false, none);
  CHECK(r.command == kComBinlogDump);
  CHECK(r.body == encode_binlog_dump("binlog.000001", last4, kDumpNonBlock, 7));
  // ... past it COM_BINLOG_DUMP_GTID with the 8-byte position and the empty set.
  r = make_dump_request(false, "binlog.000001", past, true, 7, false, none);
  CHECK(r.command == kComBinlogDumpGtid);
  REQUIRE(r.body.size() == 2 + 4 + 4 + 13 + 8 + 4 + 8);
  CHECK(Buf(r.body.begin() + 23, r.body.begin() + 31) == Buf{0, 0, 0, 0, 1, 0, 0, 0});
  CHECK(Buf(r.body.begin() + 31, r.body.end()) == Buf{8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  // An exclude set: COM_BINLOG_DUMP_GTID at any position.
  r = make_dump_request(false, "binlog.000001", 4, false, 7, false, set_of("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3"));
  CHECK(r.command == kComBinlogDumpGtid);
  CHECK(r.body == encode_binlog_dump_gtid("binlog.000001", 4, 0, 7, set_of("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3")));
}

}  // namespace
}  // namespace binlogctl
