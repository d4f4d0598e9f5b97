// serve's event side: the archive (state from the files) and the cursor (verified events with
// the artificial ones a primary sends), on real binlogs: testdata/mariadb-10.11 and the MySQL
// files of ../shared/corpus/public.
#include <binlogctl/binlog_archive.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/fde.h>
#include <binlogctl/gtid.h>
#include <binlogctl/source.h>

#include "events/events.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

const std::string kBasic = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/basic/binlogs";
const std::string kNoChecksum = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11/nochecksum/binlogs";
const std::string kPublic = std::string(BINLOGCTL_SHARED_DIR) + "/corpus/public";

struct FileEvent {
  std::uint64_t pos = 0;
  std::vector<std::uint8_t> raw;
};

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& path, const std::vector<std::uint8_t>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The events of one file as the framing reads them (the reference the cursor is held to).
std::vector<FileEvent> file_events(const std::string& path) {
  auto src = open_source(path);
  struct Null : DiagnosticSink {
    void report(const Diagnostic&) override {}
  } sink;
  EventStream s(*src, fs::path(path).filename().string(), sink);
  std::vector<FileEvent> out;
  Event ev;
  while (s.next(ev)) out.push_back(FileEvent{ev.pos, std::vector<std::uint8_t>(ev.raw.begin(), ev.raw.end())});
  return out;
}

std::vector<std::string> basic_files() {
  std::vector<std::string> v;
  for (int i = 1; i <= 8; ++i) v.push_back(kBasic + "/mariadb-bin.00000" + std::to_string(i));
  return v;
}

struct Step {
  CursorStep::Kind kind;
  std::vector<std::uint8_t> bytes;
  std::string message;
  std::string file;
  std::uint64_t position = 0;
};

// Steps until end, error or wait (at most `max`).
std::vector<Step> drain(DumpCursor& c, std::size_t max = 100000) {
  std::vector<Step> out;
  for (std::size_t i = 0; i < max; ++i) {
    CursorStep s = c.next();
    out.push_back(Step{s.kind, std::vector<std::uint8_t>(s.bytes.begin(), s.bytes.end()), s.message, c.file(),
                       c.position()});
    if (s.kind != CursorStep::Kind::event) break;
  }
  return out;
}

EventHeader header(const Step& s) { return parse_event_header(s.bytes.data()); }
std::uint8_t type_of(const Step& s) { return s.bytes[4]; }

std::unique_ptr<BinlogArchive> archive_of(const std::vector<std::string>& in) {
  auto a = open_archive(in);
  std::string err;
  REQUIRE_MESSAGE(a->refresh(err), err);
  return a;
}

std::unique_ptr<DumpCursor> cursor_of(BinlogArchive& a, const DumpRequest& r) {
  std::string err;
  auto c = open_cursor(a, r, err);
  REQUIRE_MESSAGE(c != nullptr, err);
  return c;
}

DumpRequest blocking_request() {
  DumpRequest r;
  r.replica_checksum = true;
  r.mariadb_capability = 4;
  return r;
}
DumpRequest request() {
  DumpRequest r = blocking_request();
  r.non_blocking = true;
  return r;
}

bool crc_ok(const std::vector<std::uint8_t>& ev) {
  return compute_event_crc(Bytes(ev.data(), ev.size())) == load_le32(ev.data() + ev.size() - 4);
}

// The MariaDB GTID of a GTID event's bytes.
MariaGtid gtid_of(const std::vector<std::uint8_t>& ev) {
  const EventHeader h = parse_event_header(ev.data());
  ByteReader r(Bytes(ev.data() + 19, ev.size() - 19 - 4));
  auto g = decode_mariadb_gtid(r, h.server_id);
  REQUIRE(g);
  return g->gtid(h.server_id);
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("serve_cursor_test." + std::to_string(::getpid()) + "." +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& n) const { return (path / n).string(); }
};

// Checks the artificial ROTATE a primary sends first.
void check_fake_rotate(const Step& s, const std::string& name, std::uint64_t pos, std::uint32_t server_id) {
  REQUIRE(s.kind == CursorStep::Kind::event);
  const EventHeader h = header(s);
  CHECK(h.timestamp == 0);
  CHECK(h.type_code == 4);
  CHECK(h.log_pos == 0);
  CHECK(h.flags == kFlagArtificial);
  CHECK(h.server_id == server_id);
  CHECK(h.event_size == s.bytes.size());
  CHECK(load_le(s.bytes.data() + 19, 8) == pos);
  CHECK(std::string(s.bytes.begin() + 27, s.bytes.end() - 4) == name);
  CHECK(crc_ok(s.bytes));
}

}  // namespace

TEST_SUITE("serve") {

TEST_CASE("archive: the state a replica's setup queries read, from the files") {
  auto a = archive_of({kBasic});
  const ArchiveState st = a->state();
  REQUIRE(st.files.size() == 8);
  CHECK(st.files[0].log_name == "mariadb-bin.000001");
  CHECK(st.files[0].size == 23354);
  CHECK(st.files[7].size == 444);
  CHECK(st.mariadb);
  CHECK(st.server_version == "10.11.19-MariaDB-0+deb12u1-log");
  CHECK(st.server_id == 1011);
  CHECK(st.checksum_alg == 1);
  CHECK(st.gtid_binlog_pos == "1-1011-1011,11-2022-100");  // expected/gtids.txt
  CHECK(st.end_file == "mariadb-bin.000008");
  CHECK(st.end_position == 444);
  CHECK(st.newest_event_time > 1600000000);
  CHECK_FALSE(st.files[7].live);  // the server was stopped: the file ends with its STOP
  CHECK_FALSE(st.files[6].live);

  auto nc = archive_of({kNoChecksum});
  CHECK(nc->state().checksum_alg == 0);
}

TEST_CASE("archive: refresh follows a growing directory, its .partial file included, and rescans only what changed") {
  TempDir d;
  const auto f1 = slurp(kBasic + "/mariadb-bin.000001");
  const auto f2 = slurp(kBasic + "/mariadb-bin.000002");
  spit(d / "mariadb-bin.000001", f1);
  std::vector<std::uint8_t> half(f2.begin(), f2.begin() + 5000);
  spit(d / "mariadb-bin.000002.partial", half);
  auto a = archive_of({d.path.string()});
  ArchiveState st = a->state();
  REQUIRE(st.files.size() == 2);
  CHECK(st.files[1].log_name == "mariadb-bin.000002");
  CHECK(st.files[1].live);
  CHECK(st.gtid_binlog_pos == "1-1011-23");
  CHECK(st.end_file == "mariadb-bin.000002");
  CHECK(st.end_position < 5000);
  // fetch finishes the file and renames it
  spit(d / "mariadb-bin.000002.partial", f2);
  fs::rename(d / "mariadb-bin.000002.partial", d / "mariadb-bin.000002");
  std::string err;
  REQUIRE(a->refresh(err));
  st = a->state();
  REQUIRE(st.files.size() == 2);
  CHECK(st.files[1].size == f2.size());
  CHECK(st.end_position == f2.size());
  CHECK(st.gtid_binlog_pos == "1-1011-24");
  CHECK_FALSE(st.files[1].live);  // ends with its ROTATE
}

TEST_CASE("archive: standard input cannot be served, an unreadable input is named") {
  auto a = open_archive({"-"});
  std::string err;
  CHECK_FALSE(a->refresh(err));
  CHECK(err.find("standard input") != std::string::npos);
  auto b = open_archive({"/nonexistent-serve-dir/"});
  CHECK(b->refresh(err));  // a file that does not exist yet: listed as missing, not served
  CHECK(b->state().files.empty());
}

TEST_CASE("cursor: a whole chain comes out once, in order, byte for byte, after the artificial ROTATE and FDE") {
  auto a = archive_of({kBasic + "/mariadb-bin.index"});
  auto c = cursor_of(*a, request());
  auto steps = drain(*c);
  REQUIRE(steps.back().kind == CursorStep::Kind::end);
  std::size_t i = 0;
  for (const std::string& path : basic_files()) {
    const std::string name = fs::path(path).filename().string();
    const auto evs = file_events(path);
    check_fake_rotate(steps.at(i++), name, 4, 1011);
    // The FDE: the file's, with LOG_EVENT_BINLOG_IN_USE_F cleared (its CRC is computed so).
    const Step& fde = steps.at(i++);
    REQUIRE(fde.bytes.size() == evs[0].raw.size());
    std::vector<std::uint8_t> want = evs[0].raw;
    want[17] = static_cast<std::uint8_t>(want[17] & ~kFlagInUse);
    CHECK(fde.bytes == want);
    CHECK(crc_ok(fde.bytes));
    for (std::size_t k = 1; k < evs.size(); ++k) {
      const Step& s = steps.at(i++);
      REQUIRE(s.kind == CursorStep::Kind::event);
      CHECK_MESSAGE(s.bytes == evs[k].raw, name << " event at " << evs[k].pos);
      CHECK(s.file == name);
      CHECK(s.position == evs[k].pos + evs[k].raw.size());
    }
  }
  CHECK(i + 1 == steps.size());
}

TEST_CASE("cursor: a start by position sends the FDE with log_pos 0, then the events from there") {
  const std::string path = kBasic + "/mariadb-bin.000003";
  const auto evs = file_events(path);
  REQUIRE(evs.size() > 12);
  auto a = archive_of({kBasic});
  DumpRequest r = request();
  r.file = "mariadb-bin.000003";
  r.position = evs[10].pos;
  auto c = cursor_of(*a, r);
  auto steps = drain(*c);
  check_fake_rotate(steps[0], "mariadb-bin.000003", evs[10].pos, 1011);
  const EventHeader fh = header(steps[1]);
  CHECK(fh.type_code == 15);
  CHECK(fh.log_pos == 0);
  CHECK((fh.flags & kFlagInUse) == 0);
  CHECK(load_le32(steps[1].bytes.data() + 19 + 2 + 50) == 0);  // created
  CHECK(crc_ok(steps[1].bytes));
  for (std::size_t k = 10; k < evs.size(); ++k) CHECK(steps.at(2 + k - 10).bytes == evs[k].raw);
  // then the next file, from its start
  check_fake_rotate(steps.at(2 + evs.size() - 10), "mariadb-bin.000004", 4, 1011);
  CHECK(header(steps.at(3 + evs.size() - 10)).log_pos != 0);
}

TEST_CASE("cursor: positions that are not an event boundary are refused as a primary refuses them") {
  const auto evs = file_events(kBasic + "/mariadb-bin.000003");
  auto a = archive_of({kBasic});
  DumpRequest r = request();
  r.file = "mariadb-bin.000003";
  std::string err;
  r.position = evs[10].pos + 3;
  CHECK(open_cursor(*a, r, err) == nullptr);
  CHECK(err.find("does not correspond to the location of any binlog event") != std::string::npos);
  r.position = 100;  // inside the FDE
  CHECK(open_cursor(*a, r, err) == nullptr);
  CHECK(err.find("incorrect position") != std::string::npos);
  r.position = 1u << 30;
  CHECK(open_cursor(*a, r, err) == nullptr);
  CHECK(err.find("impossible position") != std::string::npos);
  r.position = 4;
  r.file = "mariadb-bin.000099";
  CHECK(open_cursor(*a, r, err) == nullptr);
  CHECK(err.find("Could not find first log file name") != std::string::npos);
}

TEST_CASE("cursor: a flipped byte stops the stream with the file and offset, and nothing after it") {
  TempDir d;
  for (const std::string& p : basic_files()) fs::copy_file(p, d / fs::path(p).filename().string());
  const auto evs = file_events(kBasic + "/mariadb-bin.000004");
  const FileEvent& bad = evs[20];
  auto bytes = slurp(d / "mariadb-bin.000004");
  bytes[bad.pos + 25] ^= 0x40;
  spit(d / "mariadb-bin.000004", bytes);
  auto a = archive_of({d.path.string()});
  auto c = cursor_of(*a, request());
  auto steps = drain(*c);
  REQUIRE(steps.back().kind == CursorStep::Kind::error);
  const std::string& msg = steps.back().message;
  CHECK(msg.find(d / "mariadb-bin.000004") == 0);
  CHECK(msg.find("offset " + std::to_string(bad.pos)) != std::string::npos);
  CHECK(msg.find("checksum_mismatch") != std::string::npos);
  // the last event handed out is the one before the damaged one
  REQUIRE(steps.size() >= 2);
  const Step& last = steps[steps.size() - 2];
  CHECK(last.bytes == evs[19].raw);
  // and the cursor stays stopped
  CHECK(c->next().kind == CursorStep::Kind::error);
  CHECK(c->next().message == msg);
}

TEST_CASE("cursor: a broken end_log_pos chain, a torn file with a successor, a missing file: each an error") {
  TempDir d;
  for (const std::string& p : basic_files()) fs::copy_file(p, d / fs::path(p).filename().string());
  SUBCASE("end_log_pos") {
    const auto evs = file_events(kBasic + "/mariadb-bin.000002");
    auto bytes = slurp(d / "mariadb-bin.000002");
    const std::uint64_t at = evs[7].pos;
    const std::uint32_t lp = load_le32(bytes.data() + at + 13) + 1;
    for (int k = 0; k < 4; ++k) bytes[at + 13 + k] = static_cast<std::uint8_t>(lp >> (8 * k));
    std::vector<std::uint8_t> ev(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                 bytes.begin() + static_cast<std::ptrdiff_t>(at + evs[7].raw.size()));
    const std::uint32_t crc = compute_event_crc(Bytes(ev.data(), ev.size()));
    for (int k = 0; k < 4; ++k) bytes[at + ev.size() - 4 + k] = static_cast<std::uint8_t>(crc >> (8 * k));
    spit(d / "mariadb-bin.000002", bytes);
    auto a = archive_of({d.path.string()});
    auto steps = drain(*cursor_of(*a, request()));
    REQUIRE(steps.back().kind == CursorStep::Kind::error);
    CHECK(steps.back().message.find("log_pos_mismatch") != std::string::npos);
    CHECK(steps.back().message.find("offset " + std::to_string(at)) != std::string::npos);
  }
  SUBCASE("torn with a successor") {
    auto bytes = slurp(d / "mariadb-bin.000002");
    bytes.resize(bytes.size() - 10);
    spit(d / "mariadb-bin.000002", bytes);
    auto a = archive_of({d.path.string()});
    auto steps = drain(*cursor_of(*a, request()));
    REQUIRE(steps.back().kind == CursorStep::Kind::error);
    CHECK(steps.back().message.find("truncated_event") != std::string::npos);
    CHECK(steps.back().message.find("mariadb-bin.000002") != std::string::npos);
  }
  SUBCASE("missing") {
    fs::remove(d / "mariadb-bin.000005");
    auto a = archive_of({d.path.string()});
    auto steps = drain(*cursor_of(*a, request()));
    REQUIRE(steps.back().kind == CursorStep::Kind::error);
    CHECK(steps.back().message.find("file_sequence_gap") != std::string::npos);
    CHECK(steps.back().message.find("mariadb-bin.000005") != std::string::npos);
  }
}

TEST_CASE("cursor: at the live end a blocking cursor waits, then sends what the writer appends and the next file") {
  TempDir d;
  const auto f1 = slurp(kBasic + "/mariadb-bin.000001");
  spit(d / "mariadb-bin.000002", slurp(kBasic + "/mariadb-bin.000002"));
  const auto f2 = slurp(kBasic + "/mariadb-bin.000003");
  const auto evs2 = file_events(kBasic + "/mariadb-bin.000003");
  spit(d / "mariadb-bin.000001", f1);
  const std::size_t cut = static_cast<std::size_t>(evs2[15].pos + 7);  // inside an event
  std::vector<std::uint8_t> head(f2.begin(), f2.begin() + static_cast<std::ptrdiff_t>(cut));
  head[4 + 17] |= kFlagInUse;  // as the server leaves it in the file it writes (the CRC does not cover it)
  spit(d / "mariadb-bin.000003.partial", head);
  auto a = archive_of({d.path.string()});
  auto c = cursor_of(*a, blocking_request());
  auto steps = drain(*c);
  REQUIRE(steps.back().kind == CursorStep::Kind::wait);
  CHECK(steps[steps.size() - 2].bytes == evs2[14].raw);
  // the FDE goes out with LOG_EVENT_BINLOG_IN_USE_F cleared, its CRC still right
  const Step* fde = nullptr;
  for (const Step& s : steps)
    if (s.kind == CursorStep::Kind::event && type_of(s) == 15 && s.file == "mariadb-bin.000003") fde = &s;
  REQUIRE(fde != nullptr);
  CHECK(fde->bytes == evs2[0].raw);
  CHECK((header(*fde).flags & kFlagInUse) == 0);
  CHECK(c->next().kind == CursorStep::Kind::wait);
  // the heartbeat names the current file and position
  Bytes hb = c->heartbeat();
  const EventHeader hh = parse_event_header(hb.data());
  CHECK(hh.type_code == 27);
  CHECK(hh.log_pos == evs2[15].pos);
  CHECK(hh.timestamp == 0);
  CHECK(std::string(hb.begin() + 19, hb.end() - 4) == "mariadb-bin.000003");
  CHECK(compute_event_crc(hb) == load_le32(hb.data() + hb.size() - 4));
  // the writer goes on
  {
    std::ofstream out(d / "mariadb-bin.000003.partial", std::ios::binary | std::ios::app);
    out.write(reinterpret_cast<const char*>(f2.data() + cut), static_cast<std::streamsize>(f2.size() - cut));
  }
  steps = drain(*c);
  REQUIRE(steps.back().kind == CursorStep::Kind::wait);
  REQUIRE(steps.size() == evs2.size() - 15 + 1);
  for (std::size_t k = 15; k < evs2.size(); ++k) CHECK(steps[k - 15].bytes == evs2[k].raw);
  // fetch renames the finished file and starts the next one
  fs::rename(d / "mariadb-bin.000003.partial", d / "mariadb-bin.000003");
  fs::copy_file(kBasic + "/mariadb-bin.000004", d / "mariadb-bin.000004.partial");
  std::vector<Step> more;
  for (int tries = 0; tries < 50 && more.empty(); ++tries) {
    more = drain(*c);
    if (more.size() == 1 && more[0].kind == CursorStep::Kind::wait) {
      more.clear();
      ::usleep(30000);
    }
  }
  REQUIRE(more.size() > 2);
  check_fake_rotate(more[0], "mariadb-bin.000004", 4, 1011);
  const auto evs3 = file_events(kBasic + "/mariadb-bin.000004");
  CHECK(more.back().kind == CursorStep::Kind::wait);
  CHECK(more.size() == evs3.size() + 2);
  CHECK(more[more.size() - 2].bytes == evs3.back().raw);
}

TEST_CASE("cursor: non-blocking ends at the end; .gz archives are served as the plain files") {
  TempDir d;
  for (const std::string& p : basic_files()) {
    const auto b = slurp(p);
    gzFile g = gzopen((d / (fs::path(p).filename().string() + ".gz")).c_str(), "wb");
    REQUIRE(g != nullptr);
    gzwrite(g, b.data(), static_cast<unsigned>(b.size()));
    gzclose(g);
  }
  auto plain = archive_of({kBasic});
  auto gz = archive_of({d.path.string()});
  CHECK(gz->state().files.size() == 8);
  CHECK(gz->state().files[2].size == plain->state().files[2].size);
  CHECK(gz->state().gtid_binlog_pos == plain->state().gtid_binlog_pos);
  auto sp = drain(*cursor_of(*plain, request()));
  auto sg = drain(*cursor_of(*gz, request()));
  REQUIRE(sp.size() == sg.size());
  for (std::size_t i = 0; i < sp.size(); ++i) CHECK(sp[i].bytes == sg[i].bytes);
  CHECK(sg.back().kind == CursorStep::Kind::end);
  // a start by position inside a .gz file
  const auto evs = file_events(kBasic + "/mariadb-bin.000003");
  DumpRequest r = request();
  r.file = "mariadb-bin.000003";
  r.position = evs[9].pos;
  auto s = drain(*cursor_of(*gz, r));
  CHECK(s.at(2).bytes == evs[9].raw);
  r.position = evs[9].pos + 1;
  auto bad = drain(*cursor_of(*gz, r));
  CHECK(bad.back().kind == CursorStep::Kind::error);
}

TEST_CASE("cursor: @master_binlog_checksum='NONE' (mariadb-binlog): events as stored, only the first ROTATE without CRC") {
  auto a = archive_of({kBasic + "/mariadb-bin.000002", kBasic + "/mariadb-bin.000003"});
  DumpRequest r = request();
  r.replica_checksum = false;
  auto steps = drain(*cursor_of(*a, r));
  const auto evs = file_events(kBasic + "/mariadb-bin.000002");
  CHECK(header(steps[0]).event_size == steps[0].bytes.size());
  CHECK(steps[0].bytes.size() == 19 + 8 + std::string("mariadb-bin.000002").size());  // 45 bytes: no CRC
  for (std::size_t k = 1; k < evs.size(); ++k) CHECK(steps.at(k + 1).bytes == evs[k].raw);
  // the next file's artificial ROTATE has the CRC of the files
  check_fake_rotate(steps.at(evs.size() + 1), "mariadb-bin.000003", 4, 1011);
}

TEST_CASE("cursor: ANNOTATE_ROWS only for a dump that asks for them (flag 2)") {
  auto a = archive_of({kBasic + "/mariadb-bin.000003"});
  DumpRequest r = request();
  auto count = [](const std::vector<Step>& steps) {
    std::size_t n = 0;
    for (const Step& s : steps) n += s.kind == CursorStep::Kind::event && type_of(s) == 160;
    return n;
  };
  const std::size_t all = count(drain(*cursor_of(*a, r)));
  CHECK(all > 10);
  r.send_annotate_rows = false;
  CHECK(count(drain(*cursor_of(*a, r))) == 0);
  r.mariadb_capability = 1;  // understands them, cannot take a hole: sent
  CHECK(count(drain(*cursor_of(*a, r))) == all);
}

TEST_CASE("archive: binlog_gtid_pos(file, pos) as a primary answers it") {
  auto a = archive_of({kBasic});
  std::string out, err;
  REQUIRE(binlog_gtid_pos(*a, "mariadb-bin.000001", 4, out, err));
  CHECK(out == "");
  REQUIRE(binlog_gtid_pos(*a, "mariadb-bin.000003", 4, out, err));
  CHECK(out == "1-1011-24");  // expected/binary-logs.tsv: BINLOG_GTID_POS(file, 4)
  REQUIRE(binlog_gtid_pos(*a, "mariadb-bin.000006", 4, out, err));
  CHECK(out == "1-1011-1001,11-2022-100");
  REQUIRE(binlog_gtid_pos(*a, "mariadb-bin.000003", 4846, out, err));  // the GTID event of 1-1011-31
  CHECK(out == "1-1011-30");
  CHECK_FALSE(binlog_gtid_pos(*a, "mariadb-bin.000003", 4847, out, err));
  CHECK(err.find("does not correspond") != std::string::npos);
  CHECK_FALSE(binlog_gtid_pos(*a, "mariadb-bin.000042", 4, out, err));
}

TEST_CASE("cursor: MariaDB GTID starts (@slave_connect_state) skip what the replica has") {
  auto a = archive_of({kBasic});
  auto first_gtid_after = [](const std::vector<Step>& steps, std::size_t from) -> std::size_t {
    for (std::size_t i = from; i < steps.size(); ++i)
      if (steps[i].kind == CursorStep::Kind::event && type_of(steps[i]) == 162) return i;
    return steps.size();
  };
  SUBCASE("in the middle of a file: the groups up to it skipped, a fake Gtid_list, then the next GTID") {
    DumpRequest r = request();
    r.mariadb_connect_state = "1-1011-30";
    auto steps = drain(*cursor_of(*a, r));
    REQUIRE(steps.back().kind == CursorStep::Kind::end);
    check_fake_rotate(steps[0], "mariadb-bin.000003", 4, 1011);  // its Gtid_list is 1-1011-24
    CHECK(load_le32(steps[1].bytes.data() + 19 + 2 + 50) == 0);  // created cleared: start not reached
    CHECK(crc_ok(steps[1].bytes));
    const std::size_t g = first_gtid_after(steps, 2);
    REQUIRE(g < steps.size());
    CHECK(gtid_of(steps[g].bytes) == MariaGtid{1, 1011, 31});
    const Step& list = steps[g - 1];  // the fake Gtid_list right before it
    CHECK(type_of(list) == 163);
    CHECK(header(list).flags == kFlagArtificial);
    CHECK(header(list).log_pos == header(steps[g]).log_pos - steps[g].bytes.size());
    ByteReader br(Bytes(list.bytes.data() + 19, list.bytes.size() - 23));
    auto l = decode_gtid_list(br);
    REQUIRE(l);
    CHECK(l->contains(MariaGtid{1, 1011, 30}));
    CHECK_FALSE(l->contains(MariaGtid{1, 1011, 31}));
    CHECK(crc_ok(list.bytes));
  }
  SUBCASE("at a file boundary: the file whose Gtid_list ends with it, nothing skipped") {
    DumpRequest r = request();
    r.mariadb_connect_state = "1-1011-24";
    auto steps = drain(*cursor_of(*a, r));
    check_fake_rotate(steps[0], "mariadb-bin.000003", 4, 1011);
    const auto evs = file_events(kBasic + "/mariadb-bin.000003");
    for (std::size_t k = 1; k < evs.size(); ++k) CHECK(steps.at(k + 1).bytes == evs[k].raw);
  }
  SUBCASE("the empty state starts at the first file") {
    DumpRequest r = request();
    r.mariadb_connect_state = "";
    auto steps = drain(*cursor_of(*a, r));
    check_fake_rotate(steps[0], "mariadb-bin.000001", 4, 1011);
    CHECK(steps.back().kind == CursorStep::Kind::end);
  }
  SUBCASE("UNTIL: stops after that transaction with a Gtid_list flagged UNTIL_REACHED") {
    DumpRequest r = request();
    r.mariadb_connect_state = "1-1011-30";
    r.mariadb_until_gtid = "1-1011-33";
    auto steps = drain(*cursor_of(*a, r));
    REQUIRE(steps.back().kind == CursorStep::Kind::end);
    std::vector<MariaGtid> sent;
    for (const Step& s : steps)
      if (s.kind == CursorStep::Kind::event && type_of(s) == 162) sent.push_back(gtid_of(s.bytes));
    REQUIRE(sent.size() == 3);
    CHECK(sent.back() == MariaGtid{1, 1011, 33});
    const Step& last = steps[steps.size() - 2];
    CHECK(type_of(last) == 163);
    CHECK((load_le32(last.bytes.data() + 19) >> 28) == 1);
    CHECK(type_of(steps[steps.size() - 3]) == 16);  // after the XID of 1-1011-33
  }
  SUBCASE("errors a primary gives") {
    std::string err;
    DumpRequest r = request();
    r.mariadb_connect_state = "1-1011-5000";
    CHECK(open_cursor(*a, r, err) == nullptr);
    CHECK(err.find("which is not in the master's binlog") != std::string::npos);
    r.mariadb_connect_state = "1-1011-3";  // in 000001, whose Gtid_list is empty
    CHECK(open_cursor(*a, r, err) != nullptr);
    r.mariadb_connect_state = "1-1011-3,1-1011-4";
    CHECK(open_cursor(*a, r, err) == nullptr);
    CHECK(err.find("malformed") != std::string::npos);
    auto tail = archive_of({kBasic + "/mariadb-bin.000005", kBasic + "/mariadb-bin.000006"});
    r.mariadb_connect_state = "1-1011-30";
    CHECK(open_cursor(*tail, r, err) == nullptr);
    CHECK(err.find("Could not find GTID state requested by slave in any binlog files") != std::string::npos);
  }
}

TEST_CASE("cursor: MySQL COM_BINLOG_DUMP_GTID skips the GTIDs the replica has") {
  const std::string path = kPublic + "/blackbeam__rust_mysql_common/binlog_transaction_with_GTID.000001";
  if (!fs::exists(path)) {
    MESSAGE("skipped: ../shared/corpus is absent");
    return;
  }
  const auto evs = file_events(path);
  std::vector<GtidLog> gtids;
  for (const FileEvent& e : evs)
    if (e.raw[4] == 33) {
      ByteReader r(Bytes(e.raw.data() + 19, e.raw.size() - 23));
      auto g = decode_gtid_log(r);
      REQUIRE(g);
      gtids.push_back(g.value());
    }
  REQUIRE(gtids.size() >= 2);
  auto a = archive_of({path});
  CHECK_FALSE(a->state().mariadb);
  CHECK_FALSE(a->state().gtid_executed.empty());
  DumpRequest r = request();
  GtidSet have;
  REQUIRE(have.add(gtids[0].uuid, "", gtids[0].gno));
  r.mysql_gtids = have;
  auto steps = drain(*cursor_of(*a, r));
  REQUIRE(steps.back().kind == CursorStep::Kind::end);
  std::size_t sent_gtids = 0;
  bool first_skipped = true;
  for (const Step& s : steps) {
    if (s.kind != CursorStep::Kind::event || type_of(s) != 33) continue;
    ++sent_gtids;
    ByteReader br(Bytes(s.bytes.data() + 19, s.bytes.size() - 23));
    auto g = decode_gtid_log(br);
    REQUIRE(g);
    if (g->gno == gtids[0].gno) first_skipped = false;
  }
  CHECK(first_skipped);
  CHECK(sent_gtids == gtids.size() - 1);
  // The whole set: no transaction left to send.
  GtidSet all;
  for (const GtidLog& g : gtids) REQUIRE(all.add(g.uuid, "", g.gno));
  r.mysql_gtids = all;
  auto none = drain(*cursor_of(*a, r));
  for (const Step& s : none)
    if (s.kind == CursorStep::Kind::event) CHECK(type_of(s) != 33);
  // The state: the file's Previous_gtids and its GTIDs.
  GtidSet prev;
  for (const FileEvent& e : evs)
    if (e.raw[4] == 35) {
      ByteReader br(Bytes(e.raw.data() + 19, e.raw.size() - 23));
      auto p = decode_previous_gtids(br);
      REQUIRE(p);
      prev = p.value();
    }
  GtidSet executed = prev;
  executed.union_with(all);
  CHECK(a->state().gtid_executed == executed.to_string());
  // A replica without the GTIDs of the file's Previous_gtids: they were purged.
  GtidSet empty;
  r.mysql_gtids = empty;
  std::string err;
  auto c = open_cursor(*a, r, err);
  if (prev.empty()) {
    CHECK(c != nullptr);
  } else {
    CHECK(c == nullptr);
    CHECK(err.find("purged required binary logs") != std::string::npos);
  }
}

}  // TEST_SUITE
