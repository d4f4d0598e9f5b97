// BinlogFeed: a replication stream's packets back into the server's files (remote.h). The packets
// here are laid out as MariaDB 10.11 sends them (cli.remote checks the same rules against a real
// server, byte for byte): an artificial ROTATE (timestamp 0, LOG_EVENT_ARTIFICIAL_F) naming the
// file and position, the FDE (a copy with log_pos 0 when the dump starts past 4), the events,
// heartbeats while idle, the file's own ROTATE, then the next file.
#include <binlogctl/remote.h>

#include <doctest/doctest.h>

#include <deque>

#include "binlog_builder.h"

namespace binlogctl {
namespace {

using testing::BinlogBuilder;
using Buf = std::vector<std::uint8_t>;

class ListSource final : public PacketSource {
 public:
  const std::string& label() const noexcept override { return label_; }
  void start_dump(const std::string& file, std::uint64_t pos, bool non_blocking) override {
    asked = file + "@" + std::to_string(pos) + (non_blocking ? " nb" : "");
  }
  std::optional<Bytes> next_packet() override {
    if (packets.empty()) return std::nullopt;
    cur_ = std::move(packets.front());
    packets.pop_front();
    return Bytes(cur_.data(), cur_.size());
  }
  std::deque<Buf> packets;
  std::string asked;

 private:
  std::string label_ = "test:3306";
  Buf cur_;
};

// The events of a builder's file, one packet each (the magic number left out).
std::deque<Buf> events_of(const BinlogBuilder& b, std::size_t n) {
  std::deque<Buf> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = b.event_offset(i), to = i + 1 < n ? b.event_offset(i + 1) : b.size();
    out.emplace_back(b.bytes().begin() + static_cast<std::ptrdiff_t>(from), b.bytes().begin() + static_cast<std::ptrdiff_t>(to));
  }
  return out;
}

// An artificial ROTATE as the server makes it: timestamp 0, flag 0x20, CRC32 when `crc`.
Buf fake_rotate(const std::string& name, std::uint64_t pos, bool crc) {
  BinlogBuilder b(false);
  b.timestamp(0);
  if (crc) b.fde("10.11.19-MariaDB-log", true);  // only to switch the builder's CRC on
  Buf body;
  BinlogBuilder::le(body, pos, 8);
  body.insert(body.end(), name.begin(), name.end());
  b.raw(4, body, 0x20);
  const std::size_t at = crc ? b.event_offset(1) : 0;
  return Buf(b.bytes().begin() + static_cast<std::ptrdiff_t>(at), b.bytes().end());
}

Buf heartbeat(const std::string& name) {
  BinlogBuilder b(false);
  b.timestamp(0);
  Buf body(name.begin(), name.end());
  b.raw(27, body, 0x20);
  return b.bytes();
}

struct Seen {
  BinlogFeed::Kind kind;
  std::string file;
  std::uint64_t pos;
  std::size_t size;
  std::uint64_t gap = 0;
};

std::vector<Seen> drain(BinlogFeed& f) {
  std::vector<Seen> out;
  for (;;) {
    auto& it = f.next();
    out.push_back(Seen{it.kind, it.file, it.pos, it.raw.size(), it.gap});
    if (it.kind == BinlogFeed::Kind::end) return out;
  }
}

TEST_CASE("binlog feed: a dump from 4 gives the files' own events, rotations as new files, no artificial ones") {
  BinlogBuilder f1;
  f1.fde("10.11.19-MariaDB-log").query("db", "CREATE TABLE t (a INT)").rotate("bin.000002");
  BinlogBuilder f2;
  f2.fde("10.11.19-MariaDB-log").query("db", "DROP TABLE t");
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000001", 4, true));
  for (auto& p : events_of(f1, 3)) src.packets.push_back(p);
  src.packets.push_back(fake_rotate("bin.000002", 4, true));
  auto e2 = events_of(f2, 2);
  src.packets.push_back(e2[0]);
  src.packets.push_back(heartbeat("bin.000002"));
  src.packets.push_back(e2[1]);
  BinlogFeed feed(src, "bin.000001", 4, true);
  CHECK(src.asked == "bin.000001@4 nb");
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 8);
  CHECK((seen[0].kind == BinlogFeed::Kind::file && seen[0].file == "bin.000001" && seen[0].pos == 4));
  CHECK((seen[1].kind == BinlogFeed::Kind::event && seen[1].pos == 4));
  CHECK(seen[2].pos == f1.event_offset(1));
  CHECK((seen[3].pos == f1.event_offset(2) && seen[3].size == f1.size() - f1.event_offset(2)));
  CHECK((seen[4].kind == BinlogFeed::Kind::file && seen[4].file == "bin.000002" && seen[4].pos == 4));
  CHECK((seen[5].file == "bin.000002" && seen[5].pos == 4));
  CHECK((seen[6].kind == BinlogFeed::Kind::event && seen[6].pos == f2.event_offset(1)));  // the heartbeat is gone
  CHECK(seen[7].kind == BinlogFeed::Kind::end);
}

TEST_CASE("binlog feed: started past 4, the copy of the FDE the server sends is not the file's") {
  BinlogBuilder f;
  f.fde("10.11.19-MariaDB-log").query("db", "CREATE TABLE t (a INT)").query("db", "DROP TABLE t");
  ListSource src;
  const std::uint64_t start = f.event_offset(2);
  src.packets.push_back(fake_rotate("bin.000001", start, true));
  auto ev = events_of(f, 3);
  src.packets.push_back(ev[0]);  // the FDE copy (log_pos would be 0: its bytes do not matter here)
  src.packets.push_back(ev[2]);
  BinlogFeed feed(src, "bin.000001", start, false);
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 3);
  CHECK((seen[0].kind == BinlogFeed::Kind::file && seen[0].pos == start));
  CHECK((seen[1].kind == BinlogFeed::Kind::event && seen[1].pos == start && seen[1].size == ev[2].size()));
}

// A MariaDB GTID event body (seq, domain, flags2; padded as the server pads it).
Buf maria_gtid_body(std::uint64_t seq) {
  Buf b;
  BinlogBuilder::le(b, seq, 8);
  BinlogBuilder::le(b, 0, 4);
  b.resize(19, 0);
  return b;
}

// A file of three transactions (GTID, INSERT, XID each) after FDE and Gtid_list, as MariaDB
// writes it; events: 0 FDE, 1 Gtid_list, then 2 + 3k .. 4 + 3k for transaction k.
BinlogBuilder three_transactions() {
  BinlogBuilder f;
  f.fde("10.11.19-MariaDB-log").raw(163, Buf(4, 0));
  for (std::uint64_t k = 0; k < 3; ++k)
    f.raw(162, maria_gtid_body(100 + k)).query("db", "INSERT INTO t VALUES (1)").xid(k);
  return f;
}

TEST_CASE("binlog feed: a GTID dump's left-out transactions are a gap before the next GTID event") {
  const BinlogBuilder f = three_transactions();
  auto ev = events_of(f, 11);
  for (const bool gtid_dump : {true, false}) {
    CAPTURE(gtid_dump);
    ListSource src;
    src.packets.push_back(fake_rotate("bin.000001", 4, true));
    src.packets.push_back(ev[0]);
    src.packets.push_back(ev[1]);
    for (std::size_t i = 5; i < 11; ++i) src.packets.push_back(ev[i]);  // transaction 0 left out
    BinlogFeed feed(src, "", 4, true, gtid_dump);
    const auto seen = drain(feed);
    REQUIRE(seen.size() == 10);
    CHECK(seen[3].pos == (gtid_dump ? f.event_offset(5) : f.event_offset(2)));
    CHECK(seen[3].gap == (gtid_dump ? f.event_offset(5) - f.event_offset(2) : 0));
    CHECK(seen[4].gap == 0);
    CHECK(seen[8].pos == (gtid_dump ? f.event_offset(10) : f.event_offset(7)));  // transaction 2's XID
  }
}

TEST_CASE("binlog feed: in a GTID dump a jump before an event that cannot begin a transaction is not a gap") {
  // Transaction 1's INSERT is missing: the XID after it lands where the INSERT was, so the
  // readers' end_log_pos check reports it, as for a position dump.
  const BinlogBuilder f = three_transactions();
  auto ev = events_of(f, 11);
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000001", 4, true));
  for (std::size_t i = 0; i < 11; ++i)
    if (i != 6) src.packets.push_back(ev[i]);
  BinlogFeed feed(src, "", 4, true, true);
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 12);
  CHECK((seen[7].pos == f.event_offset(6) && seen[7].gap == 0));  // the XID, contiguous
  // The next GTID event is placed by its end_log_pos again: a gap of the missing INSERT's size.
  CHECK((seen[8].pos == f.event_offset(8) && seen[8].gap == f.event_offset(7) - f.event_offset(6)));
}

TEST_CASE("binlog feed: a GTID dump starting inside a file past 4 GiB (8-byte ROTATE position)") {
  const BinlogBuilder f = three_transactions();
  auto ev = events_of(f, 11);
  const std::uint64_t start = 0x100000000ull + 100;
  // The GTID event as it would be at `start`: its end_log_pos holds the low 32 bits.
  Buf gtid = ev[2];
  const std::uint64_t end = start + gtid.size();
  for (int i = 0; i < 4; ++i) gtid[13 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(end >> (8 * i));
  Buf again = ev[5];  // the next transaction's GTID, one transaction (of gtid's size + 2 events) further
  const std::uint64_t skip = f.event_offset(5) - f.event_offset(3);
  const std::uint64_t end2 = end + skip + again.size();
  for (int i = 0; i < 4; ++i) again[13 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(end2 >> (8 * i));
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000009", start, true));
  src.packets.push_back(ev[0]);  // the FDE copy: the only one this read gets, kept at 4
  src.packets.push_back(gtid);   // no CRC check here: the feed does not verify
  src.packets.push_back(again);
  BinlogFeed feed(src, "", 4, true, true);
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 5);
  CHECK((seen[0].kind == BinlogFeed::Kind::file && seen[0].file == "bin.000009" && seen[0].pos == 4));
  CHECK((seen[1].pos == 4 && seen[1].gap == 0));
  CHECK((seen[2].pos == start && seen[2].gap == start - 4 - ev[0].size()));
  CHECK((seen[3].pos == end + skip && seen[3].gap == skip));
}

TEST_CASE("binlog feed: an artificial ROTATE without a CRC (after a file without checksums) keeps its whole name") {
  BinlogBuilder f1;
  f1.fde("10.11.19-MariaDB-log", false).rotate("bin.000002");
  BinlogBuilder f2;
  f2.fde("10.11.19-MariaDB-log", true);
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000001", 4, false));
  for (auto& p : events_of(f1, 2)) src.packets.push_back(p);
  src.packets.push_back(fake_rotate("bin.000002", 4, false));
  src.packets.push_back(events_of(f2, 1)[0]);
  BinlogFeed feed(src, "bin.000001", 4, true);
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 6);
  CHECK(seen[0].file == "bin.000001");
  CHECK((seen[3].kind == BinlogFeed::Kind::file && seen[3].file == "bin.000002"));
}

TEST_CASE("binlog feed: a ROTATE then the next file's FDE, with no artificial ROTATE between, still starts a file") {
  BinlogBuilder f1;
  f1.fde("10.11.19-MariaDB-log").rotate("bin.000009");
  BinlogBuilder f2;
  f2.fde("10.11.19-MariaDB-log");
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000008", 4, true));
  for (auto& p : events_of(f1, 2)) src.packets.push_back(p);
  src.packets.push_back(events_of(f2, 1)[0]);
  BinlogFeed feed(src, "bin.000008", 4, true);
  const auto seen = drain(feed);
  REQUIRE(seen.size() == 6);
  CHECK((seen[3].kind == BinlogFeed::Kind::file && seen[3].file == "bin.000009" && seen[3].pos == 4));
  CHECK((seen[4].kind == BinlogFeed::Kind::event && seen[4].file == "bin.000009" && seen[4].pos == 4));
}

TEST_CASE("binlog feed: packets that are not events are connection errors, not data") {
  BinlogBuilder f;
  f.fde("10.11.19-MariaDB-log");
  ListSource src;
  src.packets.push_back(fake_rotate("bin.000001", 4, true));
  Buf fde = events_of(f, 1)[0];
  src.packets.push_back(Buf(fde.begin(), fde.begin() + 10));  // shorter than a header
  BinlogFeed feed(src, "bin.000001", 4, true);
  CHECK(feed.next().kind == BinlogFeed::Kind::file);
  CHECK_THROWS_AS(feed.next(), RemoteError);

  ListSource src2;
  src2.packets.push_back(fake_rotate("bin.000001", 4, true));
  fde.push_back(0);  // one byte more than its header declares
  src2.packets.push_back(fde);
  BinlogFeed feed2(src2, "bin.000001", 4, true);
  CHECK(feed2.next().kind == BinlogFeed::Kind::file);
  CHECK_THROWS_AS(feed2.next(), RemoteError);
}

}  // namespace
}  // namespace binlogctl
