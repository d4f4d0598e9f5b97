// Tests for lib/include/binlogctl/gtid.h: MySQL GTID sets and events, MariaDB GTIDs and lists.
#include <binlogctl/gtid.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

#ifdef BINLOGCTL_SHARED_DIR
const std::filesystem::path kShared = BINLOGCTL_SHARED_DIR;
#else
const std::filesystem::path kShared = "/work/shared";
#endif

const char* const kU1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const char* const kU2 = "55778904-0299-11f1-b1b8-4ef0c4956feb";

Uuid uuid(std::string_view s) {
  auto r = Uuid::parse(s);
  REQUIRE(r.ok());
  return *r;
}

GtidSet set_of(std::string_view s) {
  auto r = GtidSet::parse(s);
  INFO("parsing: " << s);
  REQUIRE(r.ok());
  return *r;
}

// Byte builder for synthetic bodies.
struct Buf {
  std::vector<std::uint8_t> b;
  Buf& le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Buf& u8(std::uint64_t v) { return le(v, 1); }
  Buf& u32(std::uint64_t v) { return le(v, 4); }
  Buf& u64(std::uint64_t v) { return le(v, 8); }
  Buf& raw(std::string_view s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Buf& uuid(const Uuid& u) {
    b.insert(b.end(), u.bytes.begin(), u.bytes.end());
    return *this;
  }
  Buf& hex(std::string_view h) {
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
      b.push_back(static_cast<std::uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
    }
    return *this;
  }
  // mysql::serialization unsigned varint (encoder written from the format description).
  Buf& varint(std::uint64_t v) {
    int bits = 0;
    for (std::uint64_t t = v; t != 0; t >>= 1) ++bits;
    int n = bits == 64 ? 9 : (bits <= 7 ? 1 : 1 + (bits - 1) / 7);
    if (n == 1) return u8(v << 1);
    if (n == 9) return u8(0xff).le(v, 8);
    std::uint64_t first = ((1ULL << (n - 1)) - 1) | (v << n);
    u8(first & 0xff);
    return le(v >> (8 - n), n - 1);
  }
  Buf& svarint(std::int64_t v) {
    auto u = static_cast<std::uint64_t>(v);
    return varint(v < 0 ? ((~u) << 1) | 1 : u << 1);
  }
  ByteReader reader(std::uint64_t base = 1000) const { return ByteReader(Bytes(b), base); }
};

void check_error(const DecodeError& e, Errc code, std::uint64_t offset) {
  CHECK(e.code == code);
  CHECK(e.offset == offset);
}

// A binlog file walked by hand: magic, then events (19-byte header, size at 9, type at 4).
struct RawEvent {
  std::uint64_t pos = 0;
  std::uint8_t type = 0;
  std::uint32_t server_id = 0;
  std::vector<std::uint8_t> body;  // CRC32 footer removed when the FDE says so
};

bool read_events(const std::filesystem::path& file, std::vector<RawEvent>& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::vector<std::uint8_t> d((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  REQUIRE(d.size() >= 4);
  REQUIRE(d[0] == 0xfe);
  REQUIRE(d[1] == 'b');
  bool crc = false;
  std::size_t p = 4;
  while (p + 19 <= d.size()) {
    const std::uint32_t size = load_le32(d.data() + p + 9);
    REQUIRE(size >= 19);
    REQUIRE(p + size <= d.size());
    RawEvent ev;
    ev.pos = p;
    ev.type = d[p + 4];
    ev.server_id = load_le32(d.data() + p + 5);
    if (ev.type == 15) crc = d[p + size - 5] == 1;  // checksum algorithm byte of the FDE
    std::size_t body_end = p + size - (crc ? 4 : 0);
    ev.body.assign(d.begin() + static_cast<std::ptrdiff_t>(p + 19),
                   d.begin() + static_cast<std::ptrdiff_t>(body_end));
    out.push_back(std::move(ev));
    p += size;
  }
  return true;
}

bool have_shared() {
  if (std::filesystem::exists(kShared / "corpus")) return true;
  MESSAGE("skipped: " << kShared.string() << "/corpus is missing");
  return false;
}

const RawEvent* first_of(const std::vector<RawEvent>& evs, std::uint8_t type) {
  for (const RawEvent& e : evs) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_SUITE("gtid") {
  // ---------------------------------------------------------------------------------------------
  // Uuid
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("uuid parses both forms in any case and prints lower case 8-4-4-4-12") {
    CHECK(uuid("3E11FA47-71CA-11E1-9E33-C80AA9429562").to_string() == kU1);
    CHECK(uuid("3e11fa4771ca11e19e33c80aa9429562").to_string() == kU1);
    CHECK(uuid("3E11fa4771CA11e19E33c80aa9429562") == uuid(kU1));
    CHECK(uuid("00000000-0000-0000-0000-000000000000").is_nil());
    CHECK_FALSE(uuid(kU1).is_nil());
    CHECK(uuid(kU1) < uuid(kU2));
    CHECK(uuid("ffffffff-0000-0000-0000-000000000000") > uuid(kU2));
  }

  TEST_CASE("uuid errors carry the offset of the bad character") {
    auto r = Uuid::parse("3e11fa47-71ca-11e1-9e33-c80aa942956g");
    REQUIRE_FALSE(r.ok());
    check_error(r.error(), Errc::bad_value, 35);
    r = Uuid::parse("3e11fa47-71ca");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_value);
    r = Uuid::parse(std::string(kU1) + "x");
    REQUIRE_FALSE(r.ok());
    check_error(r.error(), Errc::bad_value, 36);
    r = Uuid::parse("");
    REQUIRE_FALSE(r.ok());
    check_error(r.error(), Errc::bad_value, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // GtidSet text
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("gtid set round trips the server format") {
    CHECK(set_of("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7").to_string() ==
          std::string(kU1) + ":1-5:7");
    CHECK(set_of(std::string(kU1) + ":7-7").to_string() == std::string(kU1) + ":7");
    const std::string s = std::string(kU1) + ":1-5:7:a:1-3:b:5," + kU2 + ":1-13:mytag:1-2";
    CHECK(set_of(s).to_string() == s);
    CHECK(set_of(set_of(s).to_string()) == set_of(s));
  }

  TEST_CASE("gtid set merges adjacent and overlapping intervals and sorts them") {
    const std::string u = kU1;
    CHECK(set_of(u + ":1-3:4-5").to_string() == u + ":1-5");
    CHECK(set_of(u + ":1-5:3-8").to_string() == u + ":1-8");
    CHECK(set_of(u + ":7:1-3:5").to_string() == u + ":1-3:5:7");
    CHECK(set_of(u + ":5:3:4").to_string() == u + ":3-5");
    CHECK(set_of(u + ":10-20:1-100").to_string() == u + ":1-100");
    CHECK(set_of(u + ":1-2,\n" + u + ":3").to_string() == u + ":1-3");
  }

  TEST_CASE("gtid set orders uuids by bytes and untagged intervals before tags") {
    const std::string a = kU1;
    const std::string b = kU2;
    CHECK(set_of(b + ":1," + a + ":2").to_string() == a + ":2," + b + ":1");
    CHECK(set_of(a + ":zz:1:aa:2," + a + ":3").to_string() == a + ":3:aa:2:zz:1");
    CHECK(set_of(a + ":TaG_1:1-2").to_string() == a + ":tag_1:1-2");
    CHECK(set_of(a + ":_x9:4").to_string() == a + ":_x9:4");
    // A tag applies until the next tag, across items; a lone uuid or tag adds nothing.
    CHECK(set_of(a + ":t:1:3").to_string() == a + ":t:1:3");
    CHECK(set_of(a).empty());
    CHECK(set_of(a + ":t").empty());
    CHECK(set_of(a + ":1-2").to_string(", ") == a + ":1-2");
    CHECK(set_of(a + ":1," + b + ":2").to_string(", ") == a + ":1, " + b + ":2");
    CHECK(set_of(a + ":1," + b + ":2").to_info() == a + ":1,\n" + b + ":2");
  }

  TEST_CASE("gtid set tolerates whitespace and empty elements") {
    const std::string a = kU1;
    CHECK(set_of("").empty());
    CHECK(set_of("  \n\t").empty());
    CHECK(set_of(",, ,").empty());
    CHECK(set_of(" " + a + " : 1 - 3 : 7 ,\n " + std::string(kU2) + ":\tt : 2 \n").to_string() ==
          a + ":1-3:7," + kU2 + ":t:2");
    CHECK(set_of(",," + a + ":1,,").to_string() == a + ":1");
    CHECK(set_of("").to_string().empty());
  }

  TEST_CASE("gtid set parse errors: code and offset") {
    const std::string a = kU1;  // 36 characters
    struct Case {
      std::string text;
      std::uint64_t offset;
    };
    const Case cases[] = {
        {"xyz", 0},
        {a + ":0", 37},                               // gno must be positive
        {a + ":1-", 39},                              // missing end
        {a + ":5-3", 39},                             // end below start
        {a + ":1:", 39},                              // nothing after ':'
        {a + ";1", 36},                               // bad separator
        {a + ":1 x", 39},                             // garbage after an interval
        {a + ":99999999999999999999", 37},            // overflow
        {a + ":9223372036854775807", 37},             // GNO_END itself
        {a + ":" + std::string(33, 'a') + ":1", 37},  // tag too long
        {a + ":-1", 37},
        {a + ":1," + a.substr(0, 30), 39 + 30},  // truncated second uuid
        {a.substr(0, 8) + "+" + a.substr(9) + ":1", 8},
    };
    for (const Case& c : cases) {
      INFO("text: " << c.text);
      auto r = GtidSet::parse(c.text);
      REQUIRE_FALSE(r.ok());
      check_error(r.error(), Errc::bad_value, c.offset);
    }
    CHECK(GtidSet::parse(a + ":9223372036854775806").ok());  // kMaxGno
    CHECK(GtidSet::parse(a + ":" + std::string(32, 'a') + ":1").ok());
  }

  // ---------------------------------------------------------------------------------------------
  // GtidSet operations
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("gtid set add, add_interval and their errors") {
    GtidSet s;
    CHECK(s.add(uuid(kU1), "", 3).ok());
    CHECK(s.add(uuid(kU1), "", 1).ok());
    CHECK(s.add(uuid(kU1), "", 2).ok());
    CHECK(s.add_interval(uuid(kU1), "Tag", 10, 12).ok());
    CHECK(s.to_string() == std::string(kU1) + ":1-3:tag:10-12");
    CHECK(s.size() == 2);
    CHECK(s.count() == 6);

    GtidSet before = s;
    CHECK(s.add(uuid(kU1), "", 0).error().code == Errc::bad_value);
    CHECK(s.add(uuid(kU1), "9bad", 1).error().code == Errc::bad_value);
    CHECK(s.add(uuid(kU1), std::string(33, 'x'), 1).error().code == Errc::bad_value);
    CHECK(s.add(uuid(kU1), "", kMaxGno + 1).error().code == Errc::bad_value);
    CHECK(s.add_interval(uuid(kU1), "", 5, 4).error().code == Errc::bad_value);
    CHECK(s == before);
    CHECK(s.add(uuid(kU1), "", kMaxGno).ok());
  }

  TEST_CASE("gtid set contains, find and iteration") {
    GtidSet s = set_of(std::string(kU1) + ":1-5:9:t:2-3," + kU2 + ":100");
    CHECK(s.contains(uuid(kU1), "", 1));
    CHECK(s.contains(uuid(kU1), "", 5));
    CHECK_FALSE(s.contains(uuid(kU1), "", 6));
    CHECK(s.contains(uuid(kU1), "", 9));
    CHECK_FALSE(s.contains(uuid(kU1), "", 10));
    CHECK_FALSE(s.contains(uuid(kU1), "", 0));
    CHECK(s.contains(uuid(kU1), "T", 3));
    CHECK_FALSE(s.contains(uuid(kU1), "t", 1));
    CHECK_FALSE(s.contains(uuid(kU2), "t", 100));
    CHECK(s.contains(uuid(kU2), "", 100));

    const auto* iv = s.find(uuid(kU1), "");
    REQUIRE(iv != nullptr);
    CHECK(*iv == GtidSet::Intervals{{1, 5}, {9, 9}});
    CHECK(s.find(uuid(kU2), "nope") == nullptr);

    std::vector<std::string> seen;
    for (const auto& [key, intervals] : s) {
      seen.push_back(key.uuid.to_string() + "/" + key.tag + "/" + std::to_string(intervals.size()));
    }
    CHECK(seen == std::vector<std::string>{std::string(kU1) + "//2", std::string(kU1) + "/t/1",
                                           std::string(kU2) + "//1"});
  }

  TEST_CASE("gtid set union, subtract and subset") {
    const std::string a = kU1;
    const std::string b = kU2;
    GtidSet x = set_of(a + ":1-5:10-20");
    GtidSet y = set_of(a + ":6-9:30," + b + ":t:1");
    GtidSet u = x;
    u.union_with(y);
    CHECK(u.to_string() == a + ":1-20:30," + b + ":t:1");
    CHECK(u.contains(x));
    CHECK(u.contains(y));
    CHECK_FALSE(x.contains(u));
    CHECK(x.contains(GtidSet{}));
    CHECK(GtidSet{}.contains(GtidSet{}));
    CHECK_FALSE(x.contains(set_of(a + ":5-6")));
    CHECK(x.contains(set_of(a + ":2-4:12")));
    CHECK_FALSE(x.contains(set_of(a + ":t:2")));

    GtidSet d = u;
    d.subtract(set_of(a + ":3-4:15:25-40," + b + ":t:1"));
    CHECK(d.to_string() == a + ":1-2:5-14:16-20");
    d.subtract(set_of(a + ":1-100"));
    CHECK(d.empty());
    CHECK(d == GtidSet{});
    CHECK(d.to_string().empty());

    GtidSet e = set_of(a + ":1-10");
    e.subtract(set_of(b + ":1-10"));
    CHECK(e == set_of(a + ":1-10"));
    e.subtract(set_of(a + ":1:10"));
    CHECK(e.to_string() == a + ":2-9");

    // A union that makes intervals adjacent merges them.
    GtidSet m = set_of(a + ":1-3:7-9");
    m.union_with(set_of(a + ":4-6"));
    CHECK(m.to_string() == a + ":1-9");
    CHECK(set_of(a + ":1-3:4") == set_of(a + ":1-4"));
    CHECK_FALSE(set_of(a + ":1-3") == set_of(a + ":t:1-3"));
  }

  // ---------------------------------------------------------------------------------------------
  // PREVIOUS_GTIDS
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("previous gtids: classic and tagged bodies") {
    Buf classic;
    classic.u64(2).uuid(uuid(kU2)).u64(2).u64(1).u64(6).u64(8).u64(9);
    classic.uuid(uuid(kU1)).u64(1).u64(1).u64(2);
    ByteReader r = classic.reader();
    auto s = decode_previous_gtids(r);
    REQUIRE(s.ok());
    CHECK(s->to_string() == std::string(kU1) + ":1," + kU2 + ":1-5:8");

    Buf empty;
    empty.u64(0);
    r = empty.reader();
    s = decode_previous_gtids(r);
    REQUIRE(s.ok());
    CHECK(s->empty());

    Buf tagged;
    tagged.u64(0x0100000000000201ULL).uuid(uuid(kU1)).varint(0).u64(1).u64(1).u64(4);
    tagged.uuid(uuid(kU1)).varint(3).raw("abc").u64(1).u64(7).u64(8);
    r = tagged.reader();
    s = decode_previous_gtids(r);
    REQUIRE(s.ok());
    CHECK(s->to_string() == std::string(kU1) + ":1-3:abc:7");
  }

  TEST_CASE("previous gtids: malformed bodies fail fast with code and offset") {
    const std::uint64_t base = 1000;
    SUBCASE("shorter than the count") {
      Buf b;
      b.le(1, 7);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::truncated, base);
    }
    SUBCASE("huge n_sids") {
      Buf b;
      b.u64(1ULL << 60).uuid(uuid(kU1)).u64(0);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base);
    }
    SUBCASE("huge tagged n_sids") {
      Buf b;
      b.u64(0x01ffffffffffff01ULL);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base);
    }
    SUBCASE("unknown format byte reads as a huge count") {
      Buf b;
      b.u64(0x0200000000000000ULL).uuid(uuid(kU1)).u64(0);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base);
    }
    SUBCASE("huge n_intervals") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(1ULL << 62).u64(1).u64(2);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base + 24);
    }
    SUBCASE("zero-length interval") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(1).u64(3).u64(3);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 32);
    }
    SUBCASE("gno 0") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(1).u64(0).u64(3);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 32);
    }
    SUBCASE("intervals not increasing") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(2).u64(5).u64(7).u64(1).u64(3);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 48);
    }
    SUBCASE("touching intervals are not canonical") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(2).u64(1).u64(3).u64(3).u64(5);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 48);
    }
    SUBCASE("end above INT64_MAX") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(1).u64(1).u64(0x8000000000000000ULL);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 32);
    }
    SUBCASE("truncated interval list") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(2).u64(1).u64(2).u64(5);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base + 24);
    }
    SUBCASE("trailing bytes") {
      Buf b;
      b.u64(1).uuid(uuid(kU1)).u64(1).u64(1).u64(2).u8(0);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_length, base + 48);
    }
    SUBCASE("tagged: invalid tag characters") {
      Buf b;
      b.u64(0x0100000000000101ULL).uuid(uuid(kU1)).varint(3).raw("a-b").u64(1).u64(1).u64(2);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 24);
    }
    SUBCASE("tagged: tag longer than 32") {
      Buf b;
      b.u64(0x0100000000000101ULL).uuid(uuid(kU1)).varint(33).raw(std::string(33, 'a'));
      b.u64(0).u64(0).u64(0);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::bad_value, base + 24);
    }
    SUBCASE("tagged: tag runs past the end") {
      Buf b;
      b.u64(0x0100000000000101ULL).uuid(uuid(kU1)).varint(20).raw("abc").u64(0);
      ByteReader r = b.reader(base);
      check_error(decode_previous_gtids(r).error(), Errc::truncated, base + 25);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // GTID / ANONYMOUS_GTID / GTID_TAGGED
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("gtid log: 5.6, 5.7 and 8.0 layouts") {
    Buf v56;
    v56.u8(1).uuid(uuid(kU1)).u64(42);
    ByteReader r = v56.reader();
    auto g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK(g->flags == 1);
    CHECK(g->uuid == uuid(kU1));
    CHECK(g->gno == 42);
    CHECK_FALSE(g->has_logical_clock);
    CHECK_FALSE(g->has_timestamps);
    CHECK(g->tag.empty());

    Buf v57 = v56;
    v57.u8(2).u64(7).u64(8);
    r = v57.reader();
    g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK(g->has_logical_clock);
    CHECK(g->last_committed == 7);
    CHECK(g->sequence_number == 8);
    CHECK_FALSE(g->has_timestamps);

    Buf v80 = v57;
    v80.le(1700000000000001ULL, 7).u8(252).le(300, 2).u32(80036);
    r = v80.reader();
    g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK(g->has_timestamps);
    CHECK(g->immediate_commit_timestamp == 1700000000000001ULL);
    CHECK(g->original_commit_timestamp == 1700000000000001ULL);
    CHECK(g->has_length);
    CHECK(g->transaction_length == 300);
    CHECK(g->has_server_versions);
    CHECK(g->immediate_server_version == 80036);
    CHECK(g->original_server_version == 80036);
    CHECK(g->commit_group_ticket == 0);

    Buf relayed = v57;
    relayed.le(1700000000000009ULL | (1ULL << 55), 7).le(1700000000000001ULL, 7).u8(200);
    relayed.u32(80400U | (1U << 31)).u32(80036).u64(77);
    r = relayed.reader();
    g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK(g->immediate_commit_timestamp == 1700000000000009ULL);
    CHECK(g->original_commit_timestamp == 1700000000000001ULL);
    CHECK(g->transaction_length == 200);
    CHECK(g->immediate_server_version == 80400);
    CHECK(g->original_server_version == 80036);
    CHECK(g->commit_group_ticket == 77);

    Buf other_clock = v56;
    other_clock.u8(9).u64(7).u64(8);
    r = other_clock.reader();
    g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK_FALSE(g->has_logical_clock);
  }

  TEST_CASE("gtid log: truncated bodies") {
    Buf short_body;
    short_body.u8(1).uuid(uuid(kU1)).le(1, 7);
    ByteReader r = short_body.reader(500);
    check_error(decode_gtid_log(r).error(), Errc::truncated, 517);

    Buf no_original;
    no_original.u8(1).uuid(uuid(kU1)).u64(1).u8(2).u64(0).u64(1).le(5 | (1ULL << 55), 7).le(1, 3);
    r = no_original.reader(0);
    check_error(decode_gtid_log(r).error(), Errc::truncated, 49);

    Buf bad_packed;
    bad_packed.u8(1).uuid(uuid(kU1)).u64(1).u8(2).u64(0).u64(1).le(5, 7).u8(251);
    r = bad_packed.reader(0);
    check_error(decode_gtid_log(r).error(), Errc::bad_value, 49);
  }

  TEST_CASE("gtid tagged log: synthetic messages") {
    auto message = [](const Buf& fields, std::uint64_t last_non_ignorable = 0) {
      // version, size (counted from the version byte), last non-ignorable id, fields
      Buf m;
      m.varint(1);
      std::size_t size = 1 + 1 + 1 + fields.b.size();
      if (size >= 128) ++size;
      m.varint(size).varint(last_non_ignorable);
      m.b.insert(m.b.end(), fields.b.begin(), fields.b.end());
      return m;
    };
    Buf f;
    f.varint(0).varint(1);
    f.varint(1);
    for (std::uint8_t byte : uuid(kU1).bytes) f.varint(byte);
    f.varint(2).svarint(123456789);
    f.varint(3).varint(4).raw("tag9");
    f.varint(4).svarint(10).varint(5).svarint(11);
    f.varint(6).varint(1700000000000001ULL);
    f.varint(7).varint(1600000000000001ULL);
    f.varint(8).varint(70000);
    f.varint(9).varint(90001).varint(10).varint(80040).varint(11).varint(5);
    Buf m = message(f);
    ByteReader r = m.reader();
    auto g = decode_gtid_tagged_log(r);
    REQUIRE(g.ok());
    CHECK(g->flags == 1);
    CHECK(g->uuid == uuid(kU1));
    CHECK(g->gno == 123456789);
    CHECK(g->tag == "tag9");
    CHECK(g->last_committed == 10);
    CHECK(g->sequence_number == 11);
    CHECK(g->immediate_commit_timestamp == 1700000000000001ULL);
    CHECK(g->original_commit_timestamp == 1600000000000001ULL);
    CHECK(g->transaction_length == 70000);
    CHECK(g->immediate_server_version == 90001);
    CHECK(g->original_server_version == 80040);
    CHECK(g->commit_group_ticket == 5);
    CHECK(gtid_next_info(*g, false) ==
          "SET @@SESSION.GTID_NEXT= '" + std::string(kU1) + ":tag9:123456789'");

    // Optional fields missing: the originals default to the immediates; an unknown ignorable
    // field at the end is skipped.
    Buf f2;
    f2.varint(2).svarint(1).varint(6).varint(99).varint(9).varint(90600).varint(12).varint(7);
    m = message(f2);
    r = m.reader();
    g = decode_gtid_tagged_log(r);
    REQUIRE(g.ok());
    CHECK(g->gno == 1);
    CHECK(g->original_commit_timestamp == 99);
    CHECK(g->original_server_version == 90600);
    CHECK(g->tag.empty());

    SUBCASE("version other than 1") {
      Buf b;
      b.varint(2).varint(3).varint(0);
      r = b.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::unsupported_format, 10);
    }
    SUBCASE("size past the end") {
      Buf b;
      b.varint(1).varint(50).varint(0).varint(2).svarint(1);
      r = b.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::bad_length, 11);
    }
    SUBCASE("unknown non-ignorable field") {
      m = message(f2, 13);
      r = m.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::unsupported_format, 12);
    }
    SUBCASE("varint cut by the message end") {
      Buf b;
      b.varint(2).varint(0x123456);  // 3-byte varint, message ends after its first byte
      Buf mm = message(Buf{});
      mm.b[1] = static_cast<std::uint8_t>((3 + 2) << 1);
      mm.b.insert(mm.b.end(), b.b.begin(), b.b.end());
      r = mm.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::truncated, 14);
    }
    SUBCASE("fields out of order") {
      Buf b;
      b.varint(2).svarint(1).varint(1).varint(0);
      m = message(b);
      r = m.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::bad_value, 15);
    }
    SUBCASE("uuid byte out of range") {
      Buf b;
      b.varint(1).varint(300);
      m = message(b);
      r = m.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::bad_value, 14);
    }
    SUBCASE("tag too long") {
      Buf b;
      b.varint(3).varint(40).raw(std::string(40, 'a'));
      m = message(b);
      r = m.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::bad_value, 14);
    }
    SUBCASE("empty body") {
      Buf b;
      r = b.reader(10);
      check_error(decode_gtid_tagged_log(r).error(), Errc::truncated, 10);
    }
  }

  TEST_CASE("gtid_next_info spellings") {
    GtidLog g;
    g.uuid = uuid(kU1);
    g.gno = 6;
    CHECK(gtid_next_info(g, false) == "SET @@SESSION.GTID_NEXT= '" + std::string(kU1) + ":6'");
    CHECK(gtid_next_info(g, true) == "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'");
    g.tag = "mytag";
    CHECK(gtid_next_info(g, false) ==
          "SET @@SESSION.GTID_NEXT= '" + std::string(kU1) + ":mytag:6'");
  }

  // ---------------------------------------------------------------------------------------------
  // Real MySQL files
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("real file: MySQL 9.6 tagged GTIDs") {
    if (!have_shared()) return;
    std::vector<RawEvent> evs;
    REQUIRE(read_events(kShared / "corpus/public/blackbeam__rust_mysql_common/"
                                  "binlog_transaction_with_GTID_TAG.000001",
                        evs));
    const RawEvent* prev = first_of(evs, 35);
    REQUIRE(prev != nullptr);
    ByteReader r(Bytes(prev->body), prev->pos + 19);
    auto set = decode_previous_gtids(r);
    REQUIRE(set.ok());
    CHECK(set->to_string() == "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2");
    const auto* untagged = set->find(uuid(kU2), "");
    REQUIRE(untagged != nullptr);
    CHECK(*untagged == GtidSet::Intervals{{1, 13}});

    const RawEvent* tagged = first_of(evs, 42);
    REQUIRE(tagged != nullptr);
    r = ByteReader(Bytes(tagged->body), tagged->pos + 19);
    auto g = decode_gtid_tagged_log(r);
    REQUIRE(g.ok());
    CHECK(g->uuid == uuid(kU2));
    CHECK(g->tag == "mytag");
    CHECK(g->gno == 3);
    CHECK(g->flags == 0);
    CHECK(g->last_committed == 0);
    CHECK(g->sequence_number == 1);
    CHECK(g->immediate_commit_timestamp == 0x064a2414b8f31cULL);
    CHECK(g->original_commit_timestamp == g->immediate_commit_timestamp);
    CHECK(g->transaction_length == 296);
    CHECK(g->immediate_server_version == 90600);
    CHECK(g->original_server_version == 90600);
    CHECK(gtid_next_info(*g, false) ==
          "SET @@SESSION.GTID_NEXT= '55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3'");

    // The new GTID is not in the previous set; after adding it the set grows by one.
    CHECK_FALSE(set->contains(g->uuid, g->tag, g->gno));
    GtidSet next = *set;
    CHECK(next.add(g->uuid, g->tag, g->gno).ok());
    CHECK(next.to_string() == "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-3");
  }

  TEST_CASE("real file: MySQL 8.0 previous gtids without tag") {
    if (!have_shared()) return;
    std::vector<RawEvent> evs;
    REQUIRE(read_events(kShared / "corpus/public/blackbeam__rust_mysql_common/"
                                  "binlog_transaction_previous_GTID_no_tag.000001",
                        evs));
    const RawEvent* prev = first_of(evs, 35);
    REQUIRE(prev != nullptr);
    ByteReader r(Bytes(prev->body), prev->pos + 19);
    auto set = decode_previous_gtids(r);
    REQUIRE(set.ok());
    CHECK(set->to_string() == "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2");
    CHECK(set->to_info() == "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2");
  }

  TEST_CASE("real file: MySQL 5.6 previous gtids with four uuids") {
    if (!have_shared()) return;
    std::vector<RawEvent> evs;
    REQUIRE(read_events(
        kShared / "corpus/public/ikarishinjieva__mysql_binlog_utils/mysql-bin56.000002", evs));
    const RawEvent* prev = first_of(evs, 35);
    REQUIRE(prev != nullptr);
    ByteReader r(Bytes(prev->body), prev->pos + 19);
    auto set = decode_previous_gtids(r);
    REQUIRE(set.ok());
    const GtidSet expected = set_of(
        "7E23401AC60311E38E135E10E6A05CFB:1-5,8186FC1EC5FF11E38DF9E66CCF50DB66:1-11,"
        "A6CE328CC60211E38E0DE66CCF50DB66:1-6,B7009920C60111E38E075E10E6A05CFB:1-6");
    CHECK(*set == expected);
    CHECK(set->to_info() ==
          "7e23401a-c603-11e3-8e13-5e10e6a05cfb:1-5,\n"
          "8186fc1e-c5ff-11e3-8df9-e66ccf50db66:1-11,\n"
          "a6ce328c-c602-11e3-8e0d-e66ccf50db66:1-6,\n"
          "b7009920-c601-11e3-8e07-5e10e6a05cfb:1-6");

    const RawEvent* gev = first_of(evs, 33);
    REQUIRE(gev != nullptr);
    r = ByteReader(Bytes(gev->body), gev->pos + 19);
    auto g = decode_gtid_log(r);
    REQUIRE(g.ok());
    CHECK_FALSE(g->has_logical_clock);
    CHECK(gtid_next_info(*g, false) ==
          "SET @@SESSION.GTID_NEXT= '7e23401a-c603-11e3-8e13-5e10e6a05cfb:6'");
    CHECK_FALSE(set->contains(g->uuid, "", g->gno));
  }

  TEST_CASE("real files: MySQL 5.6 GTIDs and 5.7 anonymous GTIDs") {
    if (!have_shared()) return;
    std::vector<RawEvent> evs;
    REQUIRE(read_events(kShared / "corpus/public/blackbeam__rust_mysql_common/"
                                  "binlog_transaction_with_GTID.000001",
                        evs));
    GtidSet executed;
    for (const RawEvent& e : evs) {
      ByteReader r(Bytes(e.body), e.pos + 19);
      if (e.type == 35) {
        auto s = decode_previous_gtids(r);
        REQUIRE(s.ok());
        CHECK(s->empty());
      } else if (e.type == 33) {
        auto g = decode_gtid_log(r);
        REQUIRE(g.ok());
        CHECK(executed.add(g->uuid, g->tag, g->gno).ok());
      }
    }
    CHECK(executed.to_string() == "006c2cf2-b1ea-11e4-9057-8c705a3d3e78:1-3");

    evs.clear();
    REQUIRE(read_events(kShared / "corpus/public/blackbeam__rust_mysql_common/"
                                  "binlog_transaction_with_anonymous_GTID.000001",
                        evs));
    int anonymous = 0;
    for (const RawEvent& e : evs) {
      if (e.type != 34) continue;
      ByteReader r(Bytes(e.body), e.pos + 19);
      auto g = decode_gtid_log(r);
      REQUIRE(g.ok());
      CHECK(g->gno == 0);
      CHECK(g->uuid.is_nil());
      CHECK(g->has_logical_clock);
      CHECK(g->sequence_number == anonymous + 1);
      CHECK(gtid_next_info(*g, true) == "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'");
      ++anonymous;
    }
    CHECK(anonymous == 2);
  }

  // ---------------------------------------------------------------------------------------------
  // MariaDB
  // ---------------------------------------------------------------------------------------------

  TEST_CASE("maria gtid parse and print") {
    auto g = MariaGtid::parse("0-1-100");
    REQUIRE(g.ok());
    CHECK(*g == MariaGtid{0, 1, 100});
    CHECK(g->to_string() == "0-1-100");
    g = MariaGtid::parse("4294967295-4294967295-18446744073709551615");
    REQUIRE(g.ok());
    CHECK(g->to_string() == "4294967295-4294967295-18446744073709551615");
    struct Case {
      const char* text;
      std::uint64_t offset;
    };
    const Case bad[] = {{"", 0},
                        {"1", 1},
                        {"1-2", 3},
                        {"1-2-", 4},
                        {"a-2-3", 0},
                        {"1-2-3x", 5},
                        {"1--3", 2},
                        {"4294967296-1-1", 0},
                        {"1-2-18446744073709551616", 4},
                        {" 1-2-3", 0}};
    for (const Case& c : bad) {
      INFO("text: " << c.text);
      auto r = MariaGtid::parse(c.text);
      REQUIRE_FALSE(r.ok());
      check_error(r.error(), Errc::bad_value, c.offset);
    }
  }

  TEST_CASE("maria gtid list parse, print and info order") {
    auto l = MariaGtidList::parse("20-2020-1000, 2-102-49,\n20-102-3");
    REQUIRE(l.ok());
    CHECK(l->size() == 3);
    CHECK(l->to_string() == "2-102-49,20-102-3,20-2020-1000");
    CHECK(l->to_info() == "[2-102-49,20-102-3,20-2020-1000]");
    CHECK(l->entries()[0] == MariaGtid{20, 2020, 1000});  // input order kept
    auto e = MariaGtidList::parse("  ");
    REQUIRE(e.ok());
    CHECK(e->empty());
    CHECK(e->to_info() == "[]");
    CHECK(e->to_string().empty());

    auto bad = MariaGtidList::parse("1-2-3,1-2-4");
    REQUIRE_FALSE(bad.ok());
    check_error(bad.error(), Errc::bad_value, 6);
    bad = MariaGtidList::parse("1-2-3;4-5-6");
    REQUIRE_FALSE(bad.ok());
    check_error(bad.error(), Errc::bad_value, 5);
    bad = MariaGtidList::parse("1-2-3,");
    REQUIRE_FALSE(bad.ok());
    check_error(bad.error(), Errc::bad_value, 6);
  }

  TEST_CASE("maria gtid list state operations") {
    MariaGtidList s;
    s.update({0, 1, 5});
    s.update({0, 2, 7});
    s.update({0, 1, 9});
    s.update({1, 1, 3});
    CHECK(s.size() == 3);
    CHECK(s.to_string() == "0-2-7,0-1-9,1-1-3");
    CHECK(s.contains({0, 1, 9}));
    CHECK(s.contains({0, 1, 2}));
    CHECK_FALSE(s.contains({0, 1, 10}));
    CHECK_FALSE(s.contains({0, 3, 1}));
    CHECK_FALSE(s.contains({2, 1, 1}));
    REQUIRE(s.find(0, 2) != nullptr);
    CHECK(s.find(0, 2)->seq == 7);
    CHECK(s.find(5, 5) == nullptr);

    CHECK(s.position().to_string() == "0-1-9,1-1-3");
    CHECK(s.position().size() == 2);

    MariaGtidList other = *MariaGtidList::parse("0-1-4,0-2-8,2-9-1");
    MariaGtidList u = s;
    u.union_with(other);
    CHECK(u == *MariaGtidList::parse("0-1-9,0-2-8,1-1-3,2-9-1"));

    MariaGtidList d = u;
    d.subtract(*MariaGtidList::parse("0-1-9,0-2-7,2-9-5"));
    CHECK(d == *MariaGtidList::parse("0-2-8,1-1-3"));

    MariaGtidList e = u;  // erase: one (domain, server_id) entry, the others kept
    e.erase(0, 2);
    CHECK(e == *MariaGtidList::parse("0-1-9,1-1-3,2-9-1"));
    e.erase(7, 7);
    CHECK(e.size() == 3);

    CHECK(*MariaGtidList::parse("1-1-1,2-2-2") == *MariaGtidList::parse("2-2-2,1-1-1"));
    CHECK_FALSE(*MariaGtidList::parse("1-1-1") == *MariaGtidList::parse("1-1-2"));
    CHECK_FALSE(*MariaGtidList::parse("1-1-1") == *MariaGtidList::parse("1-1-1,2-2-2"));
  }

  TEST_CASE("maria gtid list event body") {
    Buf b;
    b.u32(3u | (1u << 28))
        .u32(20)
        .u32(2020)
        .u64(1001)
        .u32(2)
        .u32(102)
        .u64(5147)
        .u32(20)
        .u32(102)
        .u64(3);
    ByteReader r = b.reader();
    auto l = decode_gtid_list(r);
    REQUIRE(l.ok());
    CHECK(l->flags() == 1);
    CHECK(l->entries()[0] == MariaGtid{20, 2020, 1001});
    CHECK(l->to_info() == "[2-102-5147,20-102-3,20-2020-1001]");

    // encode_gtid_list writes the same bytes back (entries in their order, flags on top)
    std::vector<std::uint8_t> again;
    encode_gtid_list(l->entries(), 1, again);
    CHECK(again == b.b);
    encode_gtid_list({}, 0, again);
    CHECK(again == std::vector<std::uint8_t>{0, 0, 0, 0});

    Buf empty;
    empty.u32(0).le(0, 2);  // the server pads an empty list
    r = empty.reader();
    l = decode_gtid_list(r);
    REQUIRE(l.ok());
    CHECK(l->to_info() == "[]");

    Buf huge;
    huge.u32(0x0fffffff).u32(1).u32(1).u64(1);
    r = huge.reader(77);
    check_error(decode_gtid_list(r).error(), Errc::bad_length, 77);

    Buf short_count;
    short_count.le(1, 3);
    r = short_count.reader(77);
    check_error(decode_gtid_list(r).error(), Errc::truncated, 77);

    Buf short_entry;
    short_entry.u32(1).u32(1).u32(1).le(1, 7);
    r = short_entry.reader(77);
    check_error(decode_gtid_list(r).error(), Errc::bad_length, 77);
  }

  TEST_CASE("maria gtid event bodies and info") {
    // Plain transaction from the txn corpus: seq 0xcb, domain 2, flags 0x08, 6 bytes padding.
    Buf plain;
    plain.hex("cb00000000000000020000000800000000000000");
    plain.b.pop_back();
    ByteReader r = plain.reader();
    auto g = decode_mariadb_gtid(r, 102);
    REQUIRE(g.ok());
    CHECK(g->seq == 203);
    CHECK(g->domain == 2);
    CHECK(g->flags2 == 0x08);
    CHECK(g->flags_extra == 0);
    CHECK(mariadb_gtid_info(*g, 102) == "BEGIN GTID 2-102-203");
    CHECK(g->gtid(102) == MariaGtid{2, 102, 203});

    Buf standalone;
    standalone.u64(7).u32(2).u8(0x29).le(0, 6);
    r = standalone.reader();
    g = decode_mariadb_gtid(r, 102);
    REQUIRE(g.ok());
    CHECK(g->standalone());
    CHECK(mariadb_gtid_info(*g, 102) == "GTID 2-102-7");

    // XA PREPARE with extra engines (corpus bytes, CRC removed).
    Buf xa;
    xa.hex("c400000000000000020000004c2a000000070767747269642d34627175616c2d3401ff");
    r = xa.reader();
    g = decode_mariadb_gtid(r, 102);
    REQUIRE(g.ok());
    CHECK(g->is_xa());
    CHECK(g->xa_format_id == 42);
    CHECK(g->xa_gtrid == "gtrid-4");
    CHECK(g->xa_bqual == "bqual-4");
    CHECK(g->flags_extra == MariaGtidEvent::kFlExtraMultiEngine);
    CHECK(g->extra_engines == 0xff);
    CHECK(mariadb_gtid_info(*g, 102) ==
          "XA START X'67747269642d34',X'627175616c2d34',42 GTID 2-102-196");

    // XA COMMIT (completed, standalone).
    Buf xac;
    xac.hex("c200000000000000020000008d01000000070078612d72622d32");
    r = xac.reader();
    g = decode_mariadb_gtid(r, 102);
    REQUIRE(g.ok());
    CHECK(g->xa_gtrid == "xa-rb-2");
    CHECK(g->xa_bqual.empty());
    CHECK(mariadb_gtid_info(*g, 102) == "GTID 2-102-194");

    Buf cid;
    cid.u64(9).u32(0).u8(MariaGtidEvent::kFlGroupCommitId).u64(1234);
    r = cid.reader();
    g = decode_mariadb_gtid(r, 1);
    REQUIRE(g.ok());
    CHECK(g->commit_id == 1234);
    CHECK(mariadb_gtid_info(*g, 1) == "BEGIN GTID 0-1-9 cid=1234");

    Buf alter;
    alter.u64(12).u32(0).u8(0x21).u8(MariaGtidEvent::kFlCommitAlter).u64(10).le(0, 2);
    r = alter.reader();
    g = decode_mariadb_gtid(r, 1);
    REQUIRE(g.ok());
    CHECK(g->sa_seq_no == 10);
    CHECK(mariadb_gtid_info(*g, 1) == "GTID 0-1-12 COMMIT ALTER id=10");

    Buf start_alter;
    start_alter.u64(11).u32(0).u8(0x21).u8(MariaGtidEvent::kFlStartAlter).le(0, 5);
    r = start_alter.reader();
    g = decode_mariadb_gtid(r, 1);
    REQUIRE(g.ok());
    CHECK(mariadb_gtid_info(*g, 1) == "GTID 0-1-11 START ALTER");
  }

  TEST_CASE("maria gtid event: malformed bodies") {
    Buf short_body;
    short_body.u64(1).le(0, 3);
    ByteReader r = short_body.reader(300);
    check_error(decode_mariadb_gtid(r, 1).error(), Errc::truncated, 308);

    Buf short_cid;
    short_cid.u64(1).u32(0).u8(MariaGtidEvent::kFlGroupCommitId).le(0, 6);
    r = short_cid.reader(300);
    check_error(decode_mariadb_gtid(r, 1).error(), Errc::truncated, 313);

    Buf bad_xid;
    bad_xid.u64(1)
        .u32(0)
        .u8(MariaGtidEvent::kFlPreparedXa)
        .u32(1)
        .u8(65)
        .u8(0)
        .raw(std::string(65, 'x'));
    r = bad_xid.reader(300);
    check_error(decode_mariadb_gtid(r, 1).error(), Errc::bad_value, 317);

    Buf short_xid;
    short_xid.u64(1).u32(0).u8(MariaGtidEvent::kFlPreparedXa).u32(1).u8(10).u8(2).raw("abc");
    r = short_xid.reader(300);
    check_error(decode_mariadb_gtid(r, 1).error(), Errc::truncated, 319);

    Buf short_alter;
    short_alter.u64(1).u32(0).u8(0x21).u8(MariaGtidEvent::kFlRollbackAlter).le(0, 3);
    r = short_alter.reader(300);
    check_error(decode_mariadb_gtid(r, 1).error(), Errc::truncated, 314);
  }

  TEST_CASE("real files: MariaDB Gtid and Gtid_list info matches SHOW BINLOG EVENTS") {
    if (!have_shared()) return;
    int compared = 0;
    for (const char* workload : {"txn", "types"}) {
      const auto dir = kShared / "corpus/mariadb" / workload;
      const auto tsv_dir = dir / "expected/show-binlog-events";
      if (!std::filesystem::exists(tsv_dir)) continue;
      for (const auto& entry : std::filesystem::directory_iterator(tsv_dir)) {
        const std::string name = entry.path().stem().string();  // mariadb-bin.00000N
        std::vector<RawEvent> evs;
        if (!read_events(dir / "binlogs" / name, evs)) continue;
        std::ifstream tsv(entry.path());
        std::string line;
        std::getline(tsv, line);  // header
        while (std::getline(tsv, line)) {
          std::vector<std::string> cols;
          std::stringstream ss(line);
          std::string col;
          while (std::getline(ss, col, '\t')) cols.push_back(col);
          if (cols.size() < 6 || (cols[2] != "Gtid" && cols[2] != "Gtid_list")) continue;
          const std::uint64_t pos = std::stoull(cols[1]);
          const RawEvent* ev = nullptr;
          for (const RawEvent& e : evs) {
            if (e.pos == pos) ev = &e;
          }
          INFO(name << " at " << pos);
          REQUIRE(ev != nullptr);
          ByteReader r(Bytes(ev->body), pos + 19);
          if (cols[2] == "Gtid") {
            REQUIRE(ev->type == 162);
            auto g = decode_mariadb_gtid(r, ev->server_id);
            REQUIRE(g.ok());
            CHECK(mariadb_gtid_info(*g, ev->server_id) == cols[5]);
          } else {
            REQUIRE(ev->type == 163);
            auto l = decode_gtid_list(r);
            REQUIRE(l.ok());
            CHECK(l->to_info() == cols[5]);
          }
          ++compared;
        }
      }
    }
    MESSAGE("compared " << compared << " MariaDB Gtid/Gtid_list Info values");
    CHECK(compared > 100);
  }

}  // TEST_SUITE("gtid")
