#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>
#include <doctest/doctest.h>

#include "dump/info.h"
#include "events/events.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <memory>
#include <vector>

#include "binlog_builder.h"
#include "chunky_stream.h"
#include "payload_body.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;
using binlogctl::testing::zstd_payload_body;

namespace {

struct Collect : DiagnosticSink {
  std::vector<Diagnostic> all;
  void report(const Diagnostic& d) override { all.push_back(d); }
  bool has(Check c, std::uint64_t pos) const {
    for (const auto& d : all)
      if (d.check == c && d.pos == pos) return true;
    return false;
  }
};

struct Walk {
  std::vector<std::uint64_t> pos;
  std::vector<std::uint8_t> types;
  std::vector<bool> crc_ok;
  Collect diag;
};

Walk walk(const std::vector<std::uint8_t>& bytes, StreamOptions o = {}) {
  Walk w;
  auto src = memory_source(bytes);
  EventStream s(*src, "f.000001", w.diag, o);
  Event ev;
  while (s.next(ev)) {
    w.pos.push_back(ev.pos);
    w.types.push_back(ev.type_code());
    w.crc_ok.push_back(ev.checksum_ok);
  }
  return w;
}

// A stream that hands out its bytes in the pieces given, each read ending at a piece's end
// (reads from a pipe end where the writer's writes did).
class PieceStream final : public ByteStream {
 public:
  explicit PieceStream(std::vector<std::vector<std::uint8_t>> pieces) : pieces_(std::move(pieces)) {}
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError&) override {
    if (i_ >= pieces_.size()) return 0;
    const auto& p = pieces_[i_];
    const std::size_t n = std::min(cap, p.size() - at_);
    std::copy_n(p.begin() + static_cast<std::ptrdiff_t>(at_), n, dst);
    at_ += n;
    pos_ += n;
    if (at_ == p.size()) {
      ++i_;
      at_ = 0;
    }
    return n;
  }
  std::uint64_t raw_position() const override { return pos_; }

 private:
  std::vector<std::vector<std::uint8_t>> pieces_;
  std::size_t i_ = 0, at_ = 0;
  std::uint64_t pos_ = 0;
};

// What a walk of a source gives: each event (position, size, type, checksum verdict, a hash of
// its bytes taken while its view is valid) and each finding.
struct Trace {
  std::vector<std::string> lines;
};

Trace trace(Source& src) {
  Trace t;
  struct Sink : DiagnosticSink {
    Trace& t;
    explicit Sink(Trace& tt) : t(tt) {}
    void report(const Diagnostic& d) override {
      t.lines.push_back("finding " + std::to_string(static_cast<int>(d.check)) + " at " + std::to_string(d.pos) + ": " + d.message);
    }
  } diag(t);
  EventStream s(src, "f.000001", diag);
  Event ev;
  while (s.next(ev)) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (std::uint8_t b : ev.raw) h = (h ^ b) * 1099511628211ull;
    t.lines.push_back(std::to_string(ev.pos) + " " + std::to_string(ev.raw.size()) + " " +
                      std::to_string(ev.type_code()) + " " + (ev.checksum_ok ? "ok " : "bad ") + std::to_string(h));
  }
  return t;
}

BinlogBuilder sample(bool crc = true) {
  BinlogBuilder b;
  b.fde("8.0.32", crc).query("db", "BEGIN", 0x8).query("db", "INSERT INTO t VALUES (1)").xid(42).rotate("f.000002");
  return b;
}

}  // namespace

TEST_SUITE("event_stream") {
  TEST_CASE("comparable_event: what each server numbers its own way is left out, what the event does is kept") {
    // A real MariaDB 10.11 file (CRC32): each kind of event changed where servers differ
    // (table id, XID, thread id and exec_time, CRC32) compares equal; changed in what it does,
    // not.
    std::ifstream in(std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs/mariadb-bin.000001",
                     std::ios::binary);
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    REQUIRE(bytes.size() > 4);
    auto src = memory_source(bytes);
    Collect diag;
    EventStream s(*src, "f", diag);
    Event ev;
    std::size_t seen[256] = {};
    std::vector<std::string> gtids;
    while (s.next(ev)) {
      std::vector<std::uint8_t> e(ev.raw.begin(), ev.raw.end());
      const ComparableEvent a = comparable_event(Bytes(e.data(), e.size()), *ev.fde);
      REQUIRE(a.type == ev.type_code());
      auto with = [&](std::size_t at, std::uint8_t x) {  // byte `at` of the body xor x, CRC32 fixed
        std::vector<std::uint8_t> c = e;
        c[19 + at] ^= x;
        store_le32(c.data() + c.size() - 4, compute_event_crc(Bytes(c.data(), c.size())));
        return comparable_event(Bytes(c.data(), c.size()), *ev.fde);
      };
      const std::size_t body = e.size() - 19 - 4;
      const std::uint8_t t = ev.type_code();
      ++seen[t];
      if (t == 19 || t == 23 || t == 24) {  // TABLE_MAP, WRITE_ROWS, UPDATE_ROWS: table id 6 bytes
        CHECK(with(0, 0x5a).text == a.text);
        CHECK(with(5, 0x01).text == a.text);
        CHECK(with(body - 1, 0x01).text != a.text);
      } else if (t == 16) {  // XID
        CHECK(with(0, 0xff).text == a.text);
      } else if (t == 2) {  // QUERY: thread id (4), exec_time (4) are the server's; the statement is not
        CHECK(with(0, 0x33).text == a.text);
        CHECK(with(4, 0x07).text == a.text);
        CHECK(with(body - 1, 0x20).text != a.text);
      } else if (t == 162) {  // GTID: the triple
        gtids.push_back(a.text);
        CHECK(with(0, 0x01).text != a.text);  // the seq_no's low byte
      }
      // a torn copy never reads past its bytes (ASan) and names the type when it has a header
      for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{19}, std::size_t{22}, e.size() - 1})
        if (n <= e.size()) CHECK(comparable_event(Bytes(e.data(), n), *ev.fde).type == (n >= 19 ? t : 0));
    }
    CHECK(seen[19] >= 5);
    CHECK(seen[2] >= 5);
    CHECK(seen[16] >= 5);
    REQUIRE(gtids.size() >= 20);
    CHECK(gtids[0] == "1-1011-1");
    std::sort(gtids.begin(), gtids.end());
    CHECK(std::unique(gtids.begin(), gtids.end()) == gtids.end());
  }

  TEST_CASE("encode_event writes what parse_event_header reads, the size its own, the CRC32 over it all") {
    const std::uint8_t a[] = {4, 0, 0, 0, 0, 0, 0, 0};
    const std::string name = "x-bin.000002";
    std::vector<std::uint8_t> out(3, 0xee);  // replaced, not appended to
    const Bytes ev = encode_event(EventHeader{1700000000, 4, 77, 999, 1234, 0x0020}, Bytes(a, sizeof a),
                                  Bytes(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()), true, out);
    REQUIRE(ev.size() == 19 + 8 + name.size() + 4);
    CHECK(ev.data() == out.data());
    const EventHeader h = parse_event_header(ev.data());
    CHECK(h.timestamp == 1700000000);
    CHECK(h.type_code == 4);
    CHECK(h.server_id == 77);
    CHECK(h.event_size == ev.size());  // not the 999 given
    CHECK(h.log_pos == 1234);
    CHECK(h.flags == 0x0020);
    CHECK(std::equal(a, a + sizeof a, ev.data() + 19));
    CHECK(std::string(reinterpret_cast<const char*>(ev.data()) + 27, name.size()) == name);
    CHECK(compute_event_crc(ev) == load_le32(ev.data() + ev.size() - 4));
    CHECK(encode_event(EventHeader{}, {}, {}, false, out).size() == 19);
  }

  TEST_CASE("encode_event_at: the end position is the start plus the event's own size") {
    const std::uint8_t a[] = {1, 2, 3};
    std::vector<std::uint8_t> out;
    for (bool crc : {false, true}) {
      const Bytes ev = encode_event_at(1000, EventHeader{5, 4, 1, 0, 77, 0}, Bytes(a, sizeof a), {}, crc, out);
      const EventHeader h = parse_event_header(ev.data());
      CHECK(h.log_pos == 1000 + ev.size());  // not the 77 given
      CHECK(h.log_pos == (crc ? 1026u : 1022u));
      if (crc) CHECK(compute_event_crc(ev) == load_le32(ev.data() + ev.size() - 4));
    }
  }

  TEST_CASE("walks a clean file, with and without checksums") {
    for (bool crc : {true, false}) {
      auto b = sample(crc);
      Walk w = walk(b.bytes());
      CHECK(w.diag.all.empty());
      REQUIRE(w.pos.size() == 5);
      CHECK(w.pos[0] == 4);
      CHECK(w.pos[1] == b.event_offset(1));
      CHECK(w.types == std::vector<std::uint8_t>{15, 2, 2, 16, 4});
    }
  }

  TEST_CASE("an event whose timestamp begins with the magic's 0xfe, its header at the end of a stream's buffer") {
    // The header's first byte matches the magic, so the framing asks whether another file
    // starts there, which reads further and moves the stream's buffer; the header must not be
    // read from where it was before. (Seen as a bad_event_size on `verify - < FILE` at one
    // event of a 1 GiB binlog.)
    BinlogBuilder b;
    b.fde("10.11.19-MariaDB-log").query("db", "BEGIN", 0x8).timestamp(0x6553f1feu);
    b.query("db", "INSERT INTO t VALUES (1)").timestamp(1700000000).xid(1);
    for (int i = 0; i < 40; ++i) b.query("db", "BEGIN", 0x8).query("db", "INSERT INTO t VALUES (2)").xid(2);
    const auto& all = b.bytes();
    const std::size_t at = b.event_offset(2);
    REQUIRE(all[at] == 0xfe);
    // The first read ends 20 bytes into that event: one more than its header, fewer than the
    // magic check looks at (25).
    const auto cut = static_cast<std::ptrdiff_t>(at + 20);
    std::vector<std::vector<std::uint8_t>> pieces = {std::vector<std::uint8_t>(all.begin(), all.begin() + cut),
                                                     std::vector<std::uint8_t>(all.begin() + cut, all.end())};
    auto src = stream_source(std::make_unique<PieceStream>(pieces));
    Collect diag;
    EventStream s(*src, "f.000001", diag);
    Event ev;
    std::vector<std::uint64_t> pos;
    while (s.next(ev)) pos.push_back(ev.pos);
    CHECK(diag.all.empty());
    for (const auto& d : diag.all) MESSAGE(d.message);
    REQUIRE(pos.size() == 1 + 3 + 40 * 3);
    CHECK(pos[2] == at);
    CHECK(pos.back() == b.event_offset(pos.size() - 1));
  }

  TEST_CASE("a stream read in pieces of any size gives the mapped file's events and findings") {
    // Every fixture binlog, whole and with damage (a byte flipped at six places, a torn tail),
    // read as a mapping and as streams whose reads are 1-7, 1-64 and 1-4096 bytes long.
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(BINLOGCTL_SOURCE_DIR) / "testdata"))
      if (e.is_regular_file() && e.path().filename().string().rfind("mariadb-bin.0", 0) == 0) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 10);
    std::size_t compared = 0;
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<std::uint8_t> whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::vector<std::vector<std::uint8_t>> variants{whole};
      for (std::size_t k = 1; k <= 6 && whole.size() > 8; ++k) {
        auto v = whole;
        v[v.size() * k / 7] ^= 0x5a;
        variants.push_back(std::move(v));
      }
      variants.emplace_back(whole.begin(), whole.end() - static_cast<std::ptrdiff_t>(whole.size() / 3));
      // Every event's timestamp starting with the magic's 0xfe (the framing then looks for a
      // next file there, reading past the header; the checksums no longer match).
      {
        auto v = whole;
        for (std::size_t p = 4; p + 19 <= v.size();) {
          const std::uint32_t size = load_le32(v.data() + p + 9);
          if (size < 19) break;
          if (p > 4) v[p] = 0xfe;
          p += size;
        }
        variants.push_back(std::move(v));
      }
      for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        const auto& bytes = variants[vi];
        auto mapped = memory_source(Bytes(bytes.data(), bytes.size()));
        const Trace want = trace(*mapped);
        for (std::size_t max_read : {std::size_t{7}, std::size_t{64}, std::size_t{4096}}) {
          auto src = stream_source(std::make_unique<testing::ChunkyStream>(Bytes(bytes.data(), bytes.size()), vi * 131 + max_read, max_read));
          const Trace got = trace(*src);
          INFO(f.string() << " variant " << vi << " reads up to " << max_read);
          CHECK(got.lines == want.lines);
          ++compared;
        }
      }
    }
    CHECK(compared >= 10 * 9 * 3);
  }

  TEST_CASE("info text of built events") {
    auto b = sample();
    auto src = memory_source(b.bytes());
    Collect d;
    EventStream s(*src, "f", d);
    Event ev;
    std::vector<std::string> infos;
    InfoScratch scratch;
    while (s.next(ev)) {
      std::string out;
      REQUIRE(append_info(out, ev, scratch).ok());
      infos.push_back(out);
    }
    CHECK(infos == std::vector<std::string>{"Server ver: 8.0.32, Binlog ver: 4", "BEGIN",
                                            "use `db`; INSERT INTO t VALUES (1)", "COMMIT /* xid=42 */",
                                            "f.000002;pos=4"});
  }

  TEST_CASE("bad magic, encrypted magic and empty files stop with a finding at 0") {
    std::vector<std::uint8_t> bad{0xef, 0xbf, 0xbd, 0x62, 0, 0};
    Walk w = walk(bad);
    CHECK(w.pos.empty());
    CHECK(w.diag.has(Check::bad_magic, 0));
    std::vector<std::uint8_t> enc{0xfd, 0x62, 0x69, 0x6e, 1, 2, 3};
    CHECK(walk(enc).diag.has(Check::unsupported_format, 0));
    CHECK(walk({}).diag.has(Check::bad_magic, 0));
  }

  TEST_CASE("a torn tail inside a header or a body is truncated_event at the event start") {
    auto b = sample();
    std::vector<std::uint8_t> head(b.bytes().begin(), b.bytes().begin() + static_cast<long>(b.event_offset(3) + 10));
    Walk w = walk(head);
    CHECK(w.pos.size() == 3);
    CHECK(w.diag.has(Check::truncated_event, b.event_offset(3)));
    std::vector<std::uint8_t> body(b.bytes().begin(), b.bytes().begin() + static_cast<long>(b.event_offset(3) + 22));
    Walk w2 = walk(body);
    CHECK(w2.diag.has(Check::truncated_event, b.event_offset(3)));
    CHECK(w2.diag.all.size() == 1);
  }

  TEST_CASE("a flipped body bit is a checksum mismatch and the walk goes on") {
    auto b = sample();
    auto bytes = b.bytes();
    bytes[b.event_offset(2) + 30] ^= 0x10;
    Walk w = walk(bytes);
    CHECK(w.pos.size() == 5);
    CHECK(w.diag.has(Check::checksum_mismatch, b.event_offset(2)));
    CHECK_FALSE(w.crc_ok[2]);
    CHECK(w.diag.all.size() == 1);
  }

  TEST_CASE("a flipped checksum byte is reported with both values") {
    auto b = sample();
    auto bytes = b.bytes();
    bytes[b.event_offset(4) - 1] ^= 0xff;
    Walk w = walk(bytes);
    REQUIRE(w.diag.all.size() == 1);
    CHECK(w.diag.all[0].check == Check::checksum_mismatch);
    CHECK(w.diag.all[0].message.find("stored 0x") == 0);
  }

  TEST_CASE("a damaged size field resynchronises at the next valid event") {
    auto b = sample();
    for (std::uint32_t bad_size : {3u, 0x7fffffffu}) {
      auto bytes = b.bytes();
      const std::size_t at = b.event_offset(2);
      bytes[at + 9] = static_cast<std::uint8_t>(bad_size);
      bytes[at + 10] = static_cast<std::uint8_t>(bad_size >> 8);
      bytes[at + 11] = static_cast<std::uint8_t>(bad_size >> 16);
      bytes[at + 12] = static_cast<std::uint8_t>(bad_size >> 24);
      Walk w = walk(bytes);
      CHECK(w.diag.has(Check::bad_event_size, at));
      CHECK(w.pos == std::vector<std::uint64_t>{4, b.event_offset(1), b.event_offset(3), b.event_offset(4)});
      CHECK(w.diag.all[0].message.find("skipping") != std::string::npos);
    }
  }

  TEST_CASE("a size field bit flip caught by the checksum still resynchronises") {
    auto b = sample();
    auto bytes = b.bytes();
    const std::size_t at = b.event_offset(1);
    bytes[at + 9] = static_cast<std::uint8_t>(bytes[at + 9] + 8);  // 8 bytes too long
    Walk w = walk(bytes);
    CHECK(w.diag.has(Check::checksum_mismatch, at));
    CHECK(w.pos.back() == b.event_offset(4));
    CHECK(w.pos.size() == 5);
  }

  TEST_CASE("an unknown type code is a warning and is skipped by its size") {
    BinlogBuilder b;
    b.fde("8.0.32").raw(99, {1, 2, 3}).xid(1);
    Walk w = walk(b.bytes());
    CHECK(w.types == std::vector<std::uint8_t>{15, 99, 16});
    REQUIRE(w.diag.all.size() == 1);
    CHECK(w.diag.all[0].check == Check::unknown_event_type);
    CHECK(w.diag.all[0].severity == Severity::warning);
  }

  TEST_CASE("a first event other than FDE or ROTATE is missing_format_description") {
    BinlogBuilder b;
    b.query("db", "BEGIN").xid(1);
    Walk w = walk(b.bytes());
    CHECK(w.diag.has(Check::missing_format_description, 4));
    CHECK(w.pos.size() == 2);
    BinlogBuilder r;  // a relay log / dump stream may start with ROTATE
    r.rotate("master-bin.000007", 1234).fde("5.7.25-log");
    CHECK(walk(r.bytes()).diag.all.empty());
  }

  TEST_CASE("binlog v3 is refused") {
    BinlogBuilder b;
    b.raw(1, std::vector<std::uint8_t>(56, 0));
    Walk w = walk(b.bytes());
    CHECK(w.pos.empty());
    CHECK(w.diag.has(Check::unsupported_format, 4));
  }

  TEST_CASE("START_ENCRYPTION stops the file with unsupported_format") {
    BinlogBuilder b;
    b.fde("10.11.19-MariaDB-log").raw(164, std::vector<std::uint8_t>(17, 0)).xid(1);
    Walk w = walk(b.bytes());
    CHECK(w.types == std::vector<std::uint8_t>{15, 164});
    CHECK(w.diag.has(Check::unsupported_format, b.event_offset(1)));
  }

  TEST_CASE("START_ENCRYPTION flagged ignorable (a server's dump, decrypted) reads on") {
    BinlogBuilder b;
    b.fde("10.11.19-MariaDB-log").raw(164, std::vector<std::uint8_t>(17, 0), 0x80).xid(1);
    Walk w = walk(b.bytes());
    CHECK(w.types == std::vector<std::uint8_t>{15, 164, 16});
    CHECK(w.diag.all.empty());
  }

  TEST_CASE("start position jumps after the FDE") {
    auto b = sample();
    StreamOptions o;
    o.start_position = b.event_offset(3);
    Walk w = walk(b.bytes(), o);
    CHECK(w.pos == std::vector<std::uint64_t>{4, b.event_offset(3), b.event_offset(4)});
  }

  TEST_CASE("transaction payloads expand into their inner events") {
    BinlogBuilder ib(false);  // inner events: no magic, no checksums
    ib.query("db", "BEGIN", 0x8).xid(5);
    const auto& plain = ib.bytes();
    BinlogBuilder b;
    b.fde("8.0.32").raw(40, zstd_payload_body(plain)).rotate("x.000002");
    auto src = memory_source(b.bytes());
    Collect d;
    EventStream s(*src, "f", d);
    Event ev;
    REQUIRE(s.next(ev));
    REQUIRE(s.next(ev));
    REQUIRE(ev.type() == EventType::transaction_payload);
    auto p = decode_transaction_payload(ev.body_reader(), *ev.fde);
    REQUIRE(p.ok());
    CHECK(p->uncompressed_size == plain.size());
    PayloadExpander x(ev, *p, "f", d);
    Event iev;
    std::vector<std::uint8_t> types;
    while (x.next(iev)) {
      types.push_back(iev.type_code());
      CHECK(iev.payload_pos == b.event_offset(1));
    }
    CHECK(types == std::vector<std::uint8_t>{2, 16});
    CHECK(d.all.empty());
  }

  TEST_CASE("an inner event that claims more than its payload declares is damage, not a buffer") {
    // Issue 14: a size field claiming hundreds of MiB made the payload's stream read (and keep)
    // everything the decompressor would give. Now the claim is checked against the payload's
    // declared uncompressed size before anything is read.
    BinlogBuilder ib(false);
    ib.query("db", "BEGIN", 0x8).xid(5);
    std::vector<std::uint8_t> plain = ib.bytes();
    const std::size_t xid_at = ib.event_offset(1);
    const std::uint32_t claim = 300u << 20;
    for (int i = 0; i < 4; ++i) plain[xid_at + 9 + i] = static_cast<std::uint8_t>(claim >> (8 * i));
    BinlogBuilder b;
    b.fde("8.0.32").raw(40, zstd_payload_body(plain)).rotate("x.000002");
    auto src = memory_source(b.bytes());
    Collect d;
    EventStream s(*src, "f", d);
    Event ev;
    REQUIRE(s.next(ev));
    REQUIRE(s.next(ev));
    auto p = decode_transaction_payload(ev.body_reader(), *ev.fde);
    REQUIRE(p.ok());
    PayloadExpander x(ev, *p, "f", d);
    Event iev;
    std::vector<std::uint8_t> types;
    while (x.next(iev)) types.push_back(iev.type_code());
    CHECK(types == std::vector<std::uint8_t>{2});
    REQUIRE_FALSE(d.all.empty());
    CHECK(d.all[0].check == Check::bad_event_size);
    CHECK(d.all[0].message.find("past the " + std::to_string(plain.size()) + " bytes its transaction payload declares") !=
          std::string::npos);
  }

  TEST_CASE("a size field made shorter: the bytes after the short event are not taken for an event running past the end") {
    // A real MariaDB 10.11 file: its TABLE_MAP at 3376 (138 bytes) says 130. The 8 bytes left
    // over start no event; read as a header they declare a size past the end of the file. The
    // stream reports the checksum, finds its footing at the next event and reads on to the end
    // (it used to take them for an event and stop there: truncated_event, the rest unread).
    std::ifstream in(std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs/mariadb-bin.000001",
                     std::ios::binary);
    std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    const Walk sound = walk(bytes);
    REQUIRE(sound.pos.size() > 20);
    REQUIRE(std::find(sound.pos.begin(), sound.pos.end(), 3376u) != sound.pos.end());
    REQUIRE(load_le32(bytes.data() + 3376 + 9) == 138);
    store_le32(bytes.data() + 3376 + 9, 130);
    const Walk w = walk(bytes);
    CHECK(w.diag.has(Check::checksum_mismatch, 3376));
    CHECK_FALSE(w.diag.has(Check::truncated_event, 3376 + 130));
    CHECK(w.diag.all.size() == 1);
    CHECK(w.pos.size() == sound.pos.size());
    CHECK(w.pos.back() == sound.pos.back());
  }
}
