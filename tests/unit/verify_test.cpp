// Tests for binlogctl verify (lib/include/binlogctl/verify.h): a corruption matrix built by
// mutating copies of real binlogs (the project's MariaDB fixtures, ../shared/corpus), the clean
// inputs (no errors, the right GTID state), the public corpus as MANIFEST.md describes it, and a
// few chains built in memory (tests/support/binlog_builder.h) for what no real file shows.
#include <binlogctl/crc32.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/fde.h>
#include <binlogctl/verify.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "binlog_builder.h"
#include "gappy_stream.h"

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

#ifdef BINLOGCTL_SHARED_DIR
const fs::path kShared = BINLOGCTL_SHARED_DIR;
#else
const fs::path kShared = "/work/shared";
#endif
const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";
const fs::path kPublic = kShared / "corpus" / "public";

using Buf = std::vector<std::uint8_t>;

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("binlogctl-verify-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

Buf read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  return Buf(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, const Buf& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  REQUIRE(out.good());
}

std::uint32_t get32(const Buf& b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void put32(Buf& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

struct Ev {
  std::size_t pos;
  std::uint8_t type;
  std::uint32_t size;
};

// The events of a clean file, walked by their sizes.
std::vector<Ev> events_of(const Buf& b) {
  std::vector<Ev> out;
  std::size_t p = 4;
  while (p + 19 <= b.size()) {
    const std::uint32_t size = get32(b, p + 9);
    REQUIRE(size >= 19);
    out.push_back(Ev{p, b[p + 4], size});
    p += size;
  }
  return out;
}

const Ev& nth_of_type(const std::vector<Ev>& evs, std::uint8_t type, int n = 0) {
  for (const Ev& e : evs)
    if (e.type == type && n-- == 0) return e;
  FAIL("no such event");
  return evs.front();
}

// Recomputes the CRC32 footer of the event at pos (the mutation keeps the checksum valid).
void fix_crc(Buf& b, std::size_t pos) {
  const std::uint32_t size = get32(b, pos + 9);
  const std::uint32_t crc = compute_event_crc(Bytes(b.data() + pos, size));
  put32(b, pos + size - 4, crc);
}

// Copies a set's binlogs (and index) into a fresh directory; returns it.
fs::path copy_chain(const fs::path& from, const TempDir& tmp) {
  const fs::path dir = tmp.path / "binlogs";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(from)) {
    fs::copy_file(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
    fs::permissions(dir / e.path().filename(), fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
  }
  return dir;
}

struct Outcome {
  std::vector<Diagnostic> findings;
  VerifySummary summary;
  int exit_code = -1;

  std::vector<Diagnostic> of(Severity s) const {
    std::vector<Diagnostic> r;
    for (const Diagnostic& d : findings)
      if (d.severity == s) r.push_back(d);
    return r;
  }
  std::string dump() const {
    std::string s;
    for (const Diagnostic& d : findings) s += format_diagnostic(d) + "\n";
    return s;
  }
};

// Runs the library twice: verify_inputs for the findings and the summary, run_verify (JSON to a
// scratch file) for the exit status.
Outcome verify(const std::vector<std::string>& inputs, VerifyConfig cfg = {}) {
  Outcome o;
  DiagnosticCollector c;
  VerifyRun run = verify_inputs(inputs, cfg, c);
  o.findings = c.items;
  o.summary = run.summary;
  VerifyOptions opts;
  opts.inputs = inputs;
  opts.config = cfg;
  opts.format = OutputFormat::json;
  opts.progress = ProgressMode::never;
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  o.exit_code = run_verify(opts, out, err);
  std::fclose(out);
  std::fclose(err);
  return o;
}

// Exactly one error, with this check, file and position.
void expect_one_error(const Outcome& o, Check c, const std::string& log_name, std::uint64_t pos) {
  INFO(o.dump());
  const auto errors = o.of(Severity::error);
  REQUIRE(errors.size() == 1);
  CHECK(check_name(errors[0].check) == check_name(c));
  CHECK(errors[0].log_name == log_name);
  CHECK(errors[0].pos == pos);
  CHECK(o.exit_code == 1);
}

bool have(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The line `key=value` of an expected/gtids.txt.
std::string gtids_line(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "<none>";
}

const fs::path kBasic = kFixtures / "basic" / "binlogs";

// The warnings the clean `basic` chain has (its workload jumps gtid_seq_no on purpose).
std::vector<std::string> warnings_of(const Outcome& o) {
  std::vector<std::string> r;
  for (const Diagnostic& d : o.of(Severity::warning))
    r.push_back(fmt::format("{}:{}:{}", check_name(d.check), d.log_name, d.pos));
  return r;
}

}  // namespace

TEST_SUITE("verify") {

TEST_CASE("clean project fixtures: no errors, GTID state as the server reports it") {
  for (const char* set : {"basic", "compressed", "nochecksum"}) {
    const fs::path dir = kFixtures / set / "binlogs";
    if (!have(dir)) continue;
    CAPTURE(set);
    Outcome o = verify({(dir / "mariadb-bin.index").string()});
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    CHECK(o.summary.files == std::distance(fs::directory_iterator(dir), fs::directory_iterator()) - 1);
    CHECK(o.summary.transactions > 0);
    CHECK(o.summary.first_transaction_id == 1);
    CHECK(o.summary.last_transaction_id == o.summary.transactions);
    const fs::path gt = kFixtures / set / "expected" / "gtids.txt";
    CHECK(o.summary.mariadb_gtid_state.to_string() == gtids_line(gt, "gtid_binlog_state"));
    // Every file starts at the chain's first: nothing was executed before it.
    CHECK(o.summary.mariadb_gtid_executed == o.summary.mariadb_gtid_state);
    CHECK(o.summary.gtid_executed.empty());
    // The only warnings are the deliberate gtid_seq_no jumps.
    for (const Diagnostic& d : o.of(Severity::warning)) CHECK(check_name(d.check) == "gtid_gap");
    // --strict turns them into errors.
    if (!o.of(Severity::warning).empty()) {
      VerifyConfig strict;
      strict.strict = true;
      Outcome s = verify({(dir / "mariadb-bin.index").string()}, strict);
      CHECK(s.exit_code == 1);
      CHECK(s.summary.errors == o.summary.warnings);
    }
  }
}

TEST_CASE("clean shared MariaDB chains: executed GTIDs equal @@gtid_binlog_state") {
  for (const char* set : {"txn", "types"}) {
    const fs::path base = kShared / "corpus" / "mariadb" / set;
    if (!have(base / "binlogs")) continue;
    CAPTURE(set);
    Outcome o = verify({(base / "binlogs").string()});  // a directory: its index file
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    CHECK(o.summary.mariadb_gtid_state.to_string() == gtids_line(base / "expected" / "gtids.txt", "gtid_binlog_state"));
    CHECK(o.summary.mariadb_gtid_executed.to_string() ==
          gtids_line(base / "expected" / "gtids.txt", "gtid_binlog_state"));
    if (std::string(set) == "txn") {
      // gtid_seq_no jumps of the workload: domain 20 -> 1000, home domain -> 5000.
      CHECK(warnings_of(o) == std::vector<std::string>{"gtid_gap:mariadb-bin.000007:12310",
                                                       "gtid_gap:mariadb-bin.000007:12970"});
      CHECK(o.summary.transactions == 2178);  // one per Gtid event (SHOW BINLOG EVENTS)
    } else {
      CHECK(o.findings.empty());
    }
  }
}

TEST_CASE("corruption matrix on the project's MariaDB fixtures (CRC32)") {
  if (!have(kBasic / "mariadb-bin.000002")) return;
  const Outcome clean = verify({(kBasic / "mariadb-bin.index").string()});
  REQUIRE(clean.of(Severity::error).empty());
  const auto clean_warnings = warnings_of(clean);

  TempDir tmp;
  const fs::path dir = copy_chain(kBasic, tmp);
  const std::string index = (dir / "mariadb-bin.index").string();
  const fs::path f2 = dir / "mariadb-bin.000002";
  const Buf orig2 = read_bytes(f2);
  const auto evs = events_of(orig2);
  const Ev& rows = nth_of_type(evs, 25);   // Delete_rows_v1 inside a transaction
  const Ev& tmap = nth_of_type(evs, 19);   // its Table_map
  const Ev& xid = nth_of_type(evs, 16);
  const Ev& gtid = nth_of_type(evs, 162);
  const Ev& rot = evs.back();
  REQUIRE(rot.type == 4);
  auto restore = [&] { write_bytes(f2, orig2); };

  SUBCASE("bit flip in an event body") {
    Buf b = orig2;
    b[rows.pos + 19 + 40] ^= 0x10;
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::checksum_mismatch, "mariadb-bin.000002", rows.pos);
  }
  SUBCASE("bit flip in a header field (server_id)") {
    Buf b = orig2;
    b[rows.pos + 5] ^= 0x01;
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::checksum_mismatch, "mariadb-bin.000002", rows.pos);
  }
  SUBCASE("bit flip in the stored CRC") {
    Buf b = orig2;
    b[rows.pos + rows.size - 1] ^= 0x80;
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::checksum_mismatch, "mariadb-bin.000002", rows.pos);
  }
  SUBCASE("wrong end_log_pos, CRC recomputed") {
    Buf b = orig2;
    put32(b, rows.pos + 13, get32(b, rows.pos + 13) + 8);
    fix_crc(b, rows.pos);
    write_bytes(f2, b);
    Outcome o = verify({index});
    expect_one_error(o, Check::log_pos_mismatch, "mariadb-bin.000002", rows.pos);
    CHECK(o.findings[0].message.find("expected " + std::to_string(rows.pos + rows.size)) != std::string::npos);
  }
  SUBCASE("truncation inside the body (file verified alone)") {
    Buf b(orig2.begin(), orig2.begin() + static_cast<std::ptrdiff_t>(rows.pos + 100));
    write_bytes(f2, b);
    Outcome o = verify({f2.string()});
    expect_one_error(o, Check::truncated_event, "mariadb-bin.000002", rows.pos);
    CHECK(o.findings.size() == 1);  // the open transaction is the tear's, not a second finding
  }
  SUBCASE("truncation inside an event header of the last file") {
    const fs::path f8 = dir / "mariadb-bin.000008";
    const Buf o8 = read_bytes(f8);
    const Ev last = events_of(o8).back();
    write_bytes(f8, Buf(o8.begin(), o8.begin() + static_cast<std::ptrdiff_t>(last.pos + 10)));
    Outcome o = verify({index});
    expect_one_error(o, Check::truncated_event, "mariadb-bin.000008", last.pos);
    write_bytes(f8, o8);
  }
  SUBCASE("a middle file cut after its last transaction (no closing ROTATE)") {
    write_bytes(f2, Buf(orig2.begin(), orig2.begin() + static_cast<std::ptrdiff_t>(rot.pos)));
    expect_one_error(verify({index}), Check::rotate_mismatch, "mariadb-bin.000002", rot.pos);
  }
  SUBCASE("closing ROTATE names another file") {
    Buf b = orig2;
    const std::size_t name_end = rot.pos + rot.size - 4;  // the name ends before the CRC
    REQUIRE(b[name_end - 1] == '3');
    b[name_end - 1] = '9';
    fix_crc(b, rot.pos);
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::rotate_mismatch, "mariadb-bin.000002", rot.pos);
  }
  SUBCASE("closing ROTATE names a position other than 4") {
    Buf b = orig2;
    b[rot.pos + 19] = 120;
    fix_crc(b, rot.pos);
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::rotate_mismatch, "mariadb-bin.000002", rot.pos);
  }
  SUBCASE("rows event without its table map") {
    Buf b = orig2;
    b[tmap.pos + 4] = 29;  // the Table_map becomes a Rows_query: same size, no mapping
    fix_crc(b, tmap.pos);
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::transaction_structure, "mariadb-bin.000002", rows.pos);
  }
  SUBCASE("transaction left open at a file boundary") {
    Buf b = orig2;
    b[xid.pos + 4] = 29;  // its XID becomes a Rows_query
    fix_crc(b, xid.pos);
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::transaction_structure, "mariadb-bin.000002", gtid.pos);
  }
  SUBCASE("duplicate GTID") {
    Buf b = orig2;
    std::uint64_t seq = 0;
    std::memcpy(&seq, b.data() + gtid.pos + 19, 8);
    seq -= 1;  // the last GTID of the previous file again
    std::memcpy(b.data() + gtid.pos + 19, &seq, 8);
    fix_crc(b, gtid.pos);
    write_bytes(f2, b);
    Outcome o = verify({index});
    INFO(o.dump());
    const auto errors = o.of(Severity::error);
    REQUIRE(errors.size() == 2);
    CHECK(check_name(errors[0].check) == "gtid_duplicate");
    CHECK(errors[0].pos == gtid.pos);
    CHECK(errors[0].log_name == "mariadb-bin.000002");
    // the next file's Gtid_list says the GTID that was replaced was executed
    CHECK(check_name(errors[1].check) == "gtid_list_mismatch");
    CHECK(errors[1].log_name == "mariadb-bin.000003");
    CHECK(o.exit_code == 1);
  }
  SUBCASE("Gtid_list that does not continue the previous file") {
    const fs::path f3 = dir / "mariadb-bin.000003";
    const Buf o3 = read_bytes(f3);
    Buf b = o3;
    const auto evs3 = events_of(b);
    const Ev gl = nth_of_type(evs3, 163);
    std::uint64_t seq = 0;
    std::memcpy(&seq, b.data() + gl.pos + 19 + 4 + 8, 8);
    seq -= 1;
    std::memcpy(b.data() + gl.pos + 19 + 4 + 8, &seq, 8);
    fix_crc(b, gl.pos);
    write_bytes(f3, b);
    expect_one_error(verify({index}), Check::gtid_list_mismatch, "mariadb-bin.000003", gl.pos);
    write_bytes(f3, o3);
  }
  SUBCASE("timestamp going back two hours: a warning, an error with --strict") {
    Buf b = orig2;
    put32(b, rows.pos, get32(b, rows.pos) - 7200);
    fix_crc(b, rows.pos);
    write_bytes(f2, b);
    Outcome o = verify({index});
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    auto w = warnings_of(o);
    CHECK(std::count(w.begin(), w.end(), "timestamp_regression:mariadb-bin.000002:" + std::to_string(rows.pos)) == 1);
    CHECK(w.size() == clean_warnings.size() + 1);
    VerifyConfig strict;
    strict.strict = true;
    CHECK(verify({index}, strict).exit_code == 1);
    VerifyConfig lax;
    lax.timestamp_threshold = 8000;
    CHECK(warnings_of(verify({index}, lax)) == clean_warnings);
  }
  SUBCASE("unknown event type: a warning, skipped by size") {
    Buf b = orig2;
    const Ev& annotate = nth_of_type(evs, 160);
    b[annotate.pos + 4] = 250;
    fix_crc(b, annotate.pos);
    write_bytes(f2, b);
    Outcome o = verify({index});
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    auto w = warnings_of(o);
    CHECK(std::count(w.begin(), w.end(), "unknown_event_type:mariadb-bin.000002:" + std::to_string(annotate.pos)) == 1);
  }
  SUBCASE("resynchronisation: two damages in one file, both reported") {
    Buf b = orig2;
    const Ev& annotate = nth_of_type(evs, 160);
    put32(b, annotate.pos + 9, 0xfffffff0u);  // absurd size: the framing must find its footing again
    const Ev& rows2 = nth_of_type(evs, 25, 1);
    b[rows2.pos + 19 + 30] ^= 0x01;
    write_bytes(f2, b);
    Outcome o = verify({index});
    INFO(o.dump());
    const auto errors = o.of(Severity::error);
    REQUIRE(errors.size() == 2);
    CHECK(check_name(errors[0].check) == "bad_event_size");
    CHECK(errors[0].pos == annotate.pos);
    CHECK(errors[0].message.find("after skipping " + std::to_string(annotate.size) + " bytes") != std::string::npos);
    CHECK(check_name(errors[1].check) == "checksum_mismatch");
    CHECK(errors[1].pos == rows2.pos);
    CHECK(o.summary.skipped_bytes == annotate.size);
    CHECK(o.exit_code == 1);
  }
  SUBCASE("zeroed magic") {
    const fs::path f3 = dir / "mariadb-bin.000003";
    const Buf o3 = read_bytes(f3);
    Buf b = o3;
    std::fill(b.begin(), b.begin() + 4, 0);
    write_bytes(f3, b);
    expect_one_error(verify({index}), Check::bad_magic, "mariadb-bin.000003", 0);
    write_bytes(f3, o3);
  }
  SUBCASE("a file removed from the middle (index names it)") {
    const fs::path f3 = dir / "mariadb-bin.000003";
    const Buf o3 = read_bytes(f3);
    fs::remove(f3);
    Outcome o = verify({index});
    expect_one_error(o, Check::file_sequence_gap, "mariadb-bin.000003", 0);
    CHECK(warnings_of(o) == clean_warnings);
    CHECK(o.summary.missing_files == 1);
    // the same chain as a directory without its index: the numeric suffix jumps
    const fs::path idx = dir / "mariadb-bin.index";
    const Buf oi = read_bytes(idx);
    fs::remove(idx);
    Outcome d = verify({dir.string()});
    expect_one_error(d, Check::file_sequence_gap, "mariadb-bin.000003", 0);
    write_bytes(idx, oi);
    write_bytes(f3, o3);
  }
  SUBCASE("files given out of order") {
    std::vector<std::string> in;
    for (int k : {1, 3, 2, 4, 5, 6, 7, 8}) in.push_back((dir / fmt::format("mariadb-bin.{:06}", k)).string());
    Outcome o = verify(in);
    expect_one_error(o, Check::file_sequence_gap, "mariadb-bin.000002", 0);
    CHECK(warnings_of(o) == clean_warnings);
  }
  SUBCASE("a file given twice") {
    std::vector<std::string> in;
    for (int k : {1, 2, 2, 3, 4, 5, 6, 7, 8}) in.push_back((dir / fmt::format("mariadb-bin.{:06}", k)).string());
    Outcome o = verify(in);
    expect_one_error(o, Check::file_sequence_gap, "mariadb-bin.000002", 0);
    CHECK(o.findings.size() == 1 + clean_warnings.size());
    CHECK(o.summary.transactions == clean.summary.transactions);
  }
  SUBCASE("a chain that starts after the server's first file") {
    std::vector<std::string> in;
    for (int k : {3, 4, 5, 6, 7, 8}) in.push_back((dir / fmt::format("mariadb-bin.{:06}", k)).string());
    Outcome o = verify(in);
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    CHECK(o.summary.mariadb_gtid_state == clean.summary.mariadb_gtid_state);
    // MariaDB's state form keeps the last GTID per domain and server: the same either way.
    CHECK(o.summary.mariadb_gtid_executed == o.summary.mariadb_gtid_state);
    CHECK(o.summary.transactions < clean.summary.transactions);
    CHECK(o.summary.last_transaction_id == o.summary.transactions);
  }
  restore();
}

TEST_CASE("corruption matrix without checksums: damage in header fields") {
  const fs::path src = kFixtures / "nochecksum" / "binlogs";
  if (!have(src / "mariadb-bin.000001")) return;
  TempDir tmp;
  const fs::path dir = copy_chain(src, tmp);
  const std::string index = (dir / "mariadb-bin.index").string();
  const fs::path f2 = dir / "mariadb-bin.000002";
  Buf b = read_bytes(f2);
  const auto evs = events_of(b);
  const Ev& q = evs[evs.size() / 2];
  SUBCASE("bit flip in end_log_pos") {
    b[q.pos + 14] ^= 0x04;
    write_bytes(f2, b);
    expect_one_error(verify({index}), Check::log_pos_mismatch, "mariadb-bin.000002", q.pos);
  }
  SUBCASE("event size field damaged: bad size, resynchronised") {
    put32(b, q.pos + 9, 7);
    write_bytes(f2, b);
    Outcome o = verify({index});
    INFO(o.dump());
    REQUIRE(!o.of(Severity::error).empty());
    CHECK(check_name(o.of(Severity::error)[0].check) == "bad_event_size");
    CHECK(o.of(Severity::error)[0].pos == q.pos);
    CHECK(o.summary.skipped_bytes == q.size);
    CHECK(o.exit_code == 1);
  }
}

TEST_CASE("MySQL chain built in memory: Previous_gtids continuity, tags, transaction ids") {
  using binlogctl::testing::BinlogBuilder;
  const std::string uuid_hex = "80549eccd2f211eab7900242ac130002";
  Buf uuid;
  for (std::size_t i = 0; i < 32; i += 2) uuid.push_back(static_cast<std::uint8_t>(std::stoul(uuid_hex.substr(i, 2), nullptr, 16)));
  auto le = [](Buf& b, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  auto prev_gtids = [&](std::uint64_t end_exclusive) {
    Buf b;
    if (end_exclusive <= 1) {
      le(b, 0, 8);
      return b;
    }
    le(b, 1, 8);
    b.insert(b.end(), uuid.begin(), uuid.end());
    le(b, 1, 8);
    le(b, 1, 8);
    le(b, end_exclusive, 8);
    return b;
  };
  auto gtid = [&](std::uint64_t gno) {
    Buf b;
    b.push_back(1);
    b.insert(b.end(), uuid.begin(), uuid.end());
    le(b, gno, 8);
    return b;
  };
  auto file1 = [&] {
    BinlogBuilder f;
    f.fde("5.7.30-log").raw(35, prev_gtids(1));
    f.raw(33, gtid(1)).query("db", "CREATE TABLE t (a INT)");
    f.raw(33, gtid(2)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").xid(5);
    f.raw(33, gtid(3)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (2)").query("db", "COMMIT");
    return f.rotate("binlog.000002").bytes();
  };
  auto file2 = [&](std::uint64_t prev_end, std::uint64_t first_gno) {
    BinlogBuilder f;
    f.fde("5.7.30-log").raw(35, prev_gtids(prev_end));
    f.raw(33, gtid(first_gno)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (3)").xid(6);
    return f.stop().bytes();
  };
  TempDir tmp;
  write_bytes(tmp / "binlog.000001", file1());

  SUBCASE("a consistent chain is clean") {
    write_bytes(tmp / "binlog.000002", file2(4, 4));
    Outcome o = verify({tmp / "binlog.000001", tmp / "binlog.000002"});
    INFO(o.dump());
    CHECK(o.findings.empty());
    CHECK(o.exit_code == 0);
    CHECK(o.summary.transactions == 4);
    CHECK(o.summary.first_transaction_id == 1);
    CHECK(o.summary.last_transaction_id == 4);
    CHECK(o.summary.gtid_executed.to_string() == "80549ecc-d2f2-11ea-b790-0242ac130002:1-4");
  }
  SUBCASE("Previous_gtids missing a GTID executed in the previous file") {
    write_bytes(tmp / "binlog.000002", file2(3, 4));
    Outcome o = verify({tmp / "binlog.000001", tmp / "binlog.000002"});
    expect_one_error(o, Check::previous_gtids_mismatch, "binlog.000002", 4 + get32(read_bytes(tmp / "binlog.000002"), 4 + 9));
    CHECK(o.findings[0].message.find("missing here: 80549ecc-d2f2-11ea-b790-0242ac130002:3") != std::string::npos);
  }
  SUBCASE("GTID jump: a gap warning that names the missing GTIDs") {
    write_bytes(tmp / "binlog.000002", file2(4, 9));
    Outcome o = verify({tmp / "binlog.000001", tmp / "binlog.000002"});
    INFO(o.dump());
    CHECK(o.of(Severity::error).empty());
    CHECK(o.exit_code == 0);
    REQUIRE(o.findings.size() == 1);
    CHECK(check_name(o.findings[0].check) == "gtid_gap");
    CHECK(o.findings[0].message.find(":4-8 (5 GTIDs)") != std::string::npos);
  }
  SUBCASE("GTID executed twice") {
    write_bytes(tmp / "binlog.000002", file2(4, 2));
    Outcome o = verify({tmp / "binlog.000001", tmp / "binlog.000002"});
    expect_one_error(o, Check::gtid_duplicate, "binlog.000002", o.findings.empty() ? 0 : o.findings[0].pos);
  }
  SUBCASE("COMMIT without BEGIN, GTID without its transaction") {
    BinlogBuilder f;
    f.fde("5.7.30-log").raw(35, prev_gtids(4));
    f.query("db", "COMMIT");
    f.raw(33, gtid(4)).raw(33, gtid(5)).query("db", "CREATE TABLE u (a INT)");
    write_bytes(tmp / "binlog.000002", f.stop().bytes());
    Outcome o = verify({tmp / "binlog.000001", tmp / "binlog.000002"});
    INFO(o.dump());
    const auto errors = o.of(Severity::error);
    REQUIRE(errors.size() == 2);
    CHECK(check_name(errors[0].check) == "transaction_structure");
    CHECK(errors[0].message.find("COMMIT without BEGIN") != std::string::npos);
    CHECK(check_name(errors[1].check) == "transaction_structure");
    CHECK(errors[1].message.find("not followed by its transaction") != std::string::npos);
  }
}

TEST_CASE("log_pos is compared modulo 2^32 (files over 4 GiB)") {
  // Pure logic: events fed to the verifier at positions past 4 GiB.
  DiagnosticCollector c;
  ChainVerifier v(c);
  Fde fde = default_fde();
  fde.server_version = "8.0.36";
  fde.version_product = parse_server_version(fde.server_version);
  InputFile f;
  f.path = f.log_name = "binlog.000042";
  REQUIRE(v.begin_file(f));
  Buf raw(19 + 9, 0);
  raw[4] = static_cast<std::uint8_t>(EventType::intvar);
  put32(raw, 9, static_cast<std::uint32_t>(raw.size()));
  Event ev;
  ev.header = parse_event_header(raw.data());
  ev.raw = Bytes(raw.data(), raw.size());
  ev.body = ev.raw.subspan(19);
  ev.fde = &fde;
  ev.pos = (1ull << 32) + 1000;
  ev.header.log_pos = 1000 + 28;  // (pos + size) mod 2^32
  v.event(ev);
  CHECK(c.items.empty());
  ev.pos += 28;
  ev.header.log_pos = static_cast<std::uint32_t>(ev.pos + 28);  // still right
  v.event(ev);
  CHECK(c.items.empty());
  ev.pos += 28;
  ev.header.log_pos = static_cast<std::uint32_t>(ev.pos);  // wrong: the event's own start
  v.event(ev);
  REQUIRE(c.items.size() == 1);
  CHECK(check_name(c.items[0].check) == "log_pos_mismatch");
  CHECK(c.items[0].pos == ev.pos);
  CHECK(c.items[0].message.find("modulo 2^32") != std::string::npos);
  v.end_file(ev.pos + 28, 0, false);
  v.finish();
}

TEST_CASE("transaction payloads: inner events verified, declared size checked") {
  const fs::path file = kPublic / "blackbeam__rust_mysql_common" / "transaction_compression.000001";
  if (!have(file)) return;
  Outcome clean = verify({file.string()});
  INFO(clean.dump());
  CHECK(clean.findings.empty());
  CHECK(clean.summary.inner_events == 4);  // QUERY, TABLE_MAP, WRITE_ROWS, XID
  CHECK(clean.summary.transactions == 1);
  TempDir tmp;
  Buf b = read_bytes(file);
  const auto pevs = events_of(b);
  const Ev p = nth_of_type(pevs, 40);
  // TLV field 3 (uncompressed_size): type 3, length 1, value
  std::size_t at = 0;
  for (std::size_t i = p.pos + 19; i + 2 < p.pos + p.size; ++i) {
    if (b[i] == 3 && b[i + 1] == 1) {
      at = i + 2;
      break;
    }
  }
  REQUIRE(at != 0);
  b[at] = static_cast<std::uint8_t>(b[at] + 8);
  fix_crc(b, p.pos);
  write_bytes(tmp / "transaction_compression.000001", b);
  Outcome o = verify({tmp / "transaction_compression.000001"});
  expect_one_error(o, Check::bad_event_size, "transaction_compression.000001", p.pos);
  CHECK(o.findings[0].message.find("uncompressed") != std::string::npos);
}

TEST_CASE("public corpus: findings as MANIFEST.md leads one to expect") {
  if (!have(kPublic / "MANIFEST.md")) return;
  // Per file: the check codes expected (errors and warnings); every other file must be clean.
  const std::map<std::string, std::set<std::string>> expected = {
      {"alibaba__canal/tsdb/mysql-bin.000001", {"bad_magic"}},  // committed through a UTF-8 conversion
      {"blackbeam__rust_mysql_common/binlog_truncated_event.000001", {"truncated_event"}},
      {"blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001", {"truncated_event"}},
      // "a broken QUERY event of size 171"
      {"blackbeam__rust_mysql_common/corrupt-relay-bin.000624", {"bad_event_size"}},
      // "a broken XID event": XID without BEGIN, then a table map left open at STOP
      {"blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001", {"transaction_structure"}},
      // a BEGIN never committed before STOP (a server test file)
      {"blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001", {"transaction_structure"}},
      // "one event whose timestamp is out of order"
      {"Yelp__ybinlogp/mysql-bin.delayed-event", {"timestamp_regression"}},
  };
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kPublic)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".md" || ext == ".json") continue;
    const std::string rel = fs::relative(e.path(), kPublic).generic_string();
    CAPTURE(rel);
    Outcome o = verify({e.path().string()});
    INFO(o.dump());
    std::set<std::string> got;
    for (const Diagnostic& d : o.findings) got.insert(std::string(check_name(d.check)));
    auto it = expected.find(rel);
    CHECK(got == (it == expected.end() ? std::set<std::string>{} : it->second));
    const bool has_errors = !o.of(Severity::error).empty();
    CHECK(o.exit_code == (has_errors ? 1 : 0));
    ++files;
  }
  CHECK(files >= 80);
  // mariadb-operator's domain_id_0 chain misses 000003 and 000008
  Outcome chain = verify({(kPublic / "mariadb-operator__mariadb-poc" / "domain_id_0").string()});
  INFO(chain.dump());
  REQUIRE(chain.findings.size() == 2);
  CHECK(check_name(chain.findings[0].check) == "file_sequence_gap");
  CHECK(chain.findings[0].log_name == "mariadb-repl-bin.000003");
  CHECK(check_name(chain.findings[1].check) == "file_sequence_gap");
  CHECK(chain.findings[1].log_name == "mariadb-repl-bin.000008");
  CHECK(chain.exit_code == 1);
  CHECK(chain.summary.mariadb_gtid_state.to_string() == "0-10-292206");
  // the relay logs and MySQL 5.0/5.1 files with unchained positions are clean of log_pos_mismatch
  for (const char* f : {"blackbeam__rust_mysql_common/binlog_savepoint.000001",
                        "blackbeam__rust_mysql_common/rpl_unfiltered_hidden_gcol.000001",
                        "blackbeam__rust_mysql_common/bug33029-slave-relay-bin.000001",
                        "ikarishinjieva__mysql_binlog_utils/mysql-relay-bin.unfinished"}) {
    CAPTURE(f);
    CHECK(verify({(kPublic / f).string()}).findings.empty());
  }
  // canal's pair 000002 (ends with STOP) -> 000003 continues normally
  Outcome pair = verify({(kPublic / "alibaba__canal/tsdb/mysql-bin.000002").string(),
                         (kPublic / "alibaba__canal/tsdb/mysql-bin.000003").string()});
  CHECK(pair.findings.empty());
}

TEST_CASE("usage problems: an input that does not exist is exit status 2") {
  TempDir tmp;
  Outcome o = verify({tmp / "nope.000001"});
  CHECK(o.exit_code == 2);
  CHECK(o.findings.empty());
}

}  // TEST_SUITE

// A server's GTID dump leaves out whole transactions (Event::omitted_before): not damage, and no
// GTID gap either (the left-out GTIDs were executed, just not sent). Damage still shows: a gap
// that cuts a transaction leaves it open.
TEST_CASE("gaps a GTID dump makes: not findings; a transaction cut by one still is") {
  using binlogctl::testing::BinlogBuilder;
  using binlogctl::testing::GappyStream;
  auto maria_gtid = [](std::uint64_t seq) {
    Buf b;
    BinlogBuilder::le(b, seq, 8);
    BinlogBuilder::le(b, 0, 4);
    b.resize(19, 0);
    return b;
  };
  Buf list;  // Gtid_list [0-1-10]
  BinlogBuilder::le(list, 1, 4);
  BinlogBuilder::le(list, 0, 4);
  BinlogBuilder::le(list, 1, 4);
  BinlogBuilder::le(list, 10, 8);
  BinlogBuilder f;
  f.fde("10.11.19-MariaDB-log").raw(163, list);  // events 0, 1
  for (std::uint64_t seq = 11; seq <= 13; ++seq)   // events 2 + 4k: GTID, BEGIN, INSERT, XID
    f.raw(162, maria_gtid(seq)).query("db", "BEGIN", 0x8).query("db", "INSERT INTO t VALUES (1)").xid(seq);
  f.rotate("bin.000002");
  const Buf& all = f.bytes();
  auto run = [&](std::size_t cut, std::size_t resume) {
    std::vector<GappyStream::Piece> pieces = {binlogctl::testing::piece(all, 0, cut, resume - cut),
                                             binlogctl::testing::piece(all, resume, all.size(), 0)};
    auto src = stream_source(std::make_unique<GappyStream>(pieces));
    DiagnosticCollector out;
    ChainVerifier v(out);
    const InputFile file{"bin.000001", "bin.000001", false, ""};
    REQUIRE(v.begin_file(file));
    EventStream s(*src, "bin.000001", v);
    Event ev;
    while (s.next(ev)) v.event(ev);
    v.end_file(s.offset(), s.skipped_bytes(), s.aborted());
    v.finish();
    return out.items;
  };
  SUBCASE("transactions 11 and 12 left out: nothing to report") {
    const auto found = run(f.event_offset(2), f.event_offset(10));
    std::string messages;
    for (const auto& d : found) messages += d.message + "\n";
    INFO(messages);
    CHECK(found.empty());
  }
  SUBCASE("the gap starts inside transaction 11: it is still open when 13 begins") {
    const auto found = run(f.event_offset(4), f.event_offset(10));
    REQUIRE(found.size() == 1);
    CHECK(found[0].check == Check::transaction_structure);
  }
}

TEST_CASE("every named check has its own count in the verify summary") {
  // decryption_failed came after read_error, which sized the counts: it was counted one slot
  // past the array (inside the summary, so no sanitizer saw it)
  for (int i = 0; i < 256; ++i) {
    const auto c = static_cast<binlogctl::Check>(i);
    if (binlogctl::check_name(c) == "unknown") continue;
    CHECK_MESSAGE(static_cast<std::size_t>(i) < binlogctl::kCheckCount, binlogctl::check_name(c));
  }
  CHECK(binlogctl::check_name(binlogctl::kLastCheck) != "unknown");
  CHECK(binlogctl::check_name(static_cast<binlogctl::Check>(binlogctl::kCheckCount)) == "unknown");
}
