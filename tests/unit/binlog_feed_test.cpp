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
};

std::vector<Seen> drain(BinlogFeed& f) {
  std::vector<Seen> out;
  for (;;) {
    auto& it = f.next();
    out.push_back(Seen{it.kind, it.file, it.pos, it.raw.size()});
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
