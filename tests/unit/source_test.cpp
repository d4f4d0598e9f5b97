#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>
#include <doctest/doctest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "binlog_builder.h"
#include "gappy_stream.h"

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("binlogctl-test-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& name, const std::vector<std::uint8_t>& b) const {
    fs::path p = path / name;
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }
};

struct Quiet : DiagnosticSink {
  int n = 0;
  void report(const Diagnostic&) override { ++n; }
};

std::vector<std::uint8_t> big_binlog() {
  binlogctl::testing::BinlogBuilder b;
  b.fde("8.0.32");
  for (int i = 0; i < 3000; ++i) b.query("db", "INSERT INTO t VALUES (" + std::to_string(i) + ", 'padding padding padding')").xid(static_cast<std::uint64_t>(i));
  b.rotate("f.000002");
  return b.bytes();
}

std::size_t count_events(const fs::path& p, int* diags = nullptr) {
  auto src = open_source(p.string());
  Quiet q;
  EventStream s(*src, "f", q);
  Event ev;
  std::size_t n = 0;
  while (s.next(ev)) ++n;
  if (diags) *diags = q.n;
  return n;
}

}  // namespace

TEST_SUITE("source") {
  TEST_CASE("mapped, gzip and zstd inputs give the same events") {
    TempDir t;
    auto bytes = big_binlog();
    auto plain = t.write("f.000001", bytes);

    std::vector<std::uint8_t> gz(compressBound(static_cast<uLong>(bytes.size())) + 64);
    {  // gzip via zlib's deflate with a gzip wrapper
      z_stream z{};
      REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
      z.next_in = const_cast<Bytef*>(bytes.data());
      z.avail_in = static_cast<uInt>(bytes.size());
      z.next_out = gz.data();
      z.avail_out = static_cast<uInt>(gz.size());
      REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
      gz.resize(z.total_out);
      deflateEnd(&z);
    }
    auto gzp = t.write("f.000001.gz", gz);
    std::vector<std::uint8_t> zs(ZSTD_compressBound(bytes.size()));
    zs.resize(ZSTD_compress(zs.data(), zs.size(), bytes.data(), bytes.size(), 3));
    auto zsp = t.write("f.000001.zst", zs);

    const std::size_t expected = 1 + 2 * 3000 + 1;
    int d = -1;
    CHECK(count_events(plain, &d) == expected);
    CHECK(d == 0);
    CHECK(count_events(gzp, &d) == expected);
    CHECK(d == 0);
    CHECK(count_events(zsp, &d) == expected);
    CHECK(d == 0);
    CHECK(log_name_of(gzp.string()) == "f.000001");
  }

  TEST_CASE("a corrupt archive is a read error, not a crash") {
    TempDir t;
    auto bytes = big_binlog();
    std::vector<std::uint8_t> zs(ZSTD_compressBound(bytes.size()));
    zs.resize(ZSTD_compress(zs.data(), zs.size(), bytes.data(), bytes.size(), 3));
    zs.resize(zs.size() / 2);
    auto p = t.write("cut.zst", zs);
    int d = 0;
    std::size_t n = count_events(p, &d);
    CHECK(n < 6002);
    CHECK(d >= 1);
  }

  TEST_CASE("stream windows survive compaction and report offsets") {
    auto bytes = big_binlog();
    struct Chunky : ByteStream {  // hands out 7 bytes at a time
      const std::vector<std::uint8_t>& b;
      std::size_t pos = 0;
      explicit Chunky(const std::vector<std::uint8_t>& x) : b(x) {}
      std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError&) override {
        std::size_t n = std::min(std::min<std::size_t>(cap, 7), b.size() - pos);
        std::memcpy(dst, b.data() + pos, n);
        pos += n;
        return n;
      }
      std::uint64_t raw_position() const override { return pos; }
    };
    auto src = stream_source(std::make_unique<Chunky>(bytes));
    Quiet q;
    EventStream s(*src, "f", q);
    Event ev;
    std::size_t n = 0;
    while (s.next(ev)) {
      CHECK(ev.raw.size() == ev.header.event_size);
      CHECK(std::equal(ev.raw.begin(), ev.raw.end(), bytes.begin() + static_cast<long>(ev.pos)));
      ++n;
    }
    CHECK(n == 6002);
    CHECK(q.n == 0);
  }

  TEST_CASE("read_at: a mapped file's bytes by pread, at any offset, to the size it was opened at") {
    TempDir d;
    std::vector<std::uint8_t> b(300000);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7 + (i >> 9));
    const fs::path p = d.write("f.bin", b);
    auto s = open_source(p.string());
    std::vector<std::uint8_t> got(b.size() + 100, 0xee);
    CHECK(s->read_at(0, got.data(), b.size() + 100) == b.size());
    CHECK(std::equal(b.begin(), b.end(), got.begin()));
    CHECK(s->read_at(123457, got.data(), 1000) == 1000);
    CHECK(std::equal(got.begin(), got.begin() + 1000, b.begin() + 123457));
    CHECK(s->read_at(b.size() - 3, got.data(), 10) == 3);
    CHECK(s->read_at(b.size(), got.data(), 10) == 0);
    // Grown since it was opened: still the size it had then. Cut short: what is left, no error.
    { std::ofstream(p, std::ios::binary | std::ios::app).write("more", 4); }
    CHECK(s->read_at(b.size() - 2, got.data(), 10) == 2);
    fs::resize_file(p, 1000);
    CHECK(s->read_at(900, got.data(), 500) == 100);
    CHECK(s->read_error().code == Errc::ok);
    // Any other source copies from its windows.
    auto m = memory_source(Bytes(b.data(), b.size()));
    CHECK(m->read_at(299990, got.data(), 50) == 10);
    CHECK(std::equal(got.begin(), got.begin() + 10, b.begin() + 299990));
  }

  TEST_CASE("opening a missing file throws system_error") {
    CHECK_THROWS_AS(open_source("/nonexistent/binlog.000001"), std::system_error);
  }
}

TEST_SUITE("inputs") {
  TEST_CASE("index files, directories and numeric suffixes") {
    TempDir t;
    std::vector<std::uint8_t> x{0xfe, 0x62, 0x69, 0x6e};
    t.write("bin.000010", x);
    t.write("bin.000002", x);
    t.write("bin.000001", x);
    t.write("notes.txt", x);
    auto dir = expand_inputs({t.path.string()});
    REQUIRE(dir.files.size() == 3);
    CHECK(dir.files[0].log_name == "bin.000001");
    CHECK(dir.files[1].log_name == "bin.000002");
    CHECK(dir.files[2].log_name == "bin.000010");

    std::ofstream(t.path / "bin.index") << "./bin.000002\n/var/lib/mysql/bin.000010\n./bin.000003\n";
    auto idx = expand_inputs({(t.path / "bin.index").string()});
    REQUIRE(idx.files.size() == 3);
    CHECK(idx.files[0].log_name == "bin.000002");
    CHECK_FALSE(idx.files[1].missing);  // found beside the index
    CHECK(idx.files[2].missing);
    auto viadir = expand_inputs({t.path.string()});  // the directory now has one index
    CHECK(viadir.files.size() == 3);
    CHECK(numeric_suffix("mysql-bin.000042") == 42u);
    CHECK_FALSE(numeric_suffix("mysql-bin.index").has_value());
    CHECK(base_name_of("mysql-bin.000042") == "mysql-bin");
  }

  // Issue 36 (item 8): only a path that does not exist is "file not found"; one that cannot be
  // looked at is opened, and the error says why (EACCES: "Permission denied"). A symbolic link
  // loop (ELOOP) stands in for EACCES here: tests may run as root, whom no permission stops.
  TEST_CASE("a file that cannot be looked at is not called missing") {
    TempDir t;
    std::filesystem::create_symlink("loop", t.path / "loop");
    auto l = expand_inputs({(t.path / "loop").string()});
    REQUIRE(l.files.size() == 1);
    CHECK_FALSE(l.files[0].missing);
    CHECK_THROWS_AS(open_source(l.files[0].path), std::system_error);
    std::ofstream(t.path / "bin.index") << "./loop\n./bin.000002\n";
    auto idx = expand_inputs({(t.path / "bin.index").string()});
    REQUIRE(idx.files.size() == 2);
    CHECK_FALSE(idx.files[0].missing);
    CHECK(idx.files[1].missing);  // ENOENT: missing indeed

    InputFile f{"/srv/binlogs/bin.000007", "bin.000007", false, "/srv/binlogs/bin.index"};
    const std::system_error denied(EACCES, std::generic_category(), f.path);
    CHECK(unavailable_message(f, &denied) == "/srv/binlogs/bin.000007: offset 0: cannot open: Permission denied");
    const std::system_error dir(EISDIR, std::generic_category(), f.path);
    CHECK(unavailable_message(f, &dir) == "/srv/binlogs/bin.000007: offset 0: cannot open: Is a directory");
    CHECK(unavailable_message(f, nullptr) ==
          "/srv/binlogs/bin.000007: offset 0: file not found (named by /srv/binlogs/bin.index)");
  }
}

// Gaps a stream's producer makes on purpose (Source::gap_at): a server's GTID dump leaves out the
// transactions before its start, so the file's offsets jump.
TEST_SUITE("source") {
  TEST_CASE("a stream with gaps: offsets jump over them, windows never cross one") {
    using binlogctl::Bytes;
    std::vector<binlogctl::testing::GappyStream::Piece> pieces = {{{1, 2, 3, 4, 5}, 100}, {{6, 7}, 0x100000000ull}, {{8, 9, 10}, 0}};
    auto src = binlogctl::stream_source(std::make_unique<binlogctl::testing::GappyStream>(pieces));
    CHECK_FALSE(src->gap_at(0));
    Bytes w = src->window(0, 50);
    CHECK(w.size() == 5);  // stops at the gap
    CHECK(*src->gap_at(5) == 105);
    CHECK(src->window(5, 1).empty());   // inside the gap
    CHECK(src->window(104, 1).empty());
    CHECK_FALSE(src->gap_at(104));
    w = src->window(105, 10);
    REQUIRE(w.size() == 2);
    CHECK((w[0] == 6 && w[1] == 7));
    src->release(105);
    CHECK(*src->gap_at(107) == 107 + 0x100000000ull);
    const std::uint64_t last = 107 + 0x100000000ull;
    src->release(last);
    w = src->window(last + 1, 10);
    REQUIRE(w.size() == 2);
    CHECK((w[0] == 9 && w[1] == 10));
    CHECK(src->window(last + 3, 1).empty());  // the end
    CHECK_FALSE(src->gap_at(last + 3));
  }

  TEST_CASE("an event stream over a gap: the events keep their positions, nothing is reported") {
    binlogctl::testing::BinlogBuilder b;
    b.fde("10.11.19-MariaDB-log").query("db", "BEGIN", 0x8).query("db", "INSERT INTO t VALUES (1)").xid(1);
    b.query("db", "BEGIN", 0x8).query("db", "INSERT INTO t VALUES (2)").xid(2);
    const auto& all = b.bytes();
    const std::size_t cut = b.event_offset(1), resume = b.event_offset(4);
    std::vector<binlogctl::testing::GappyStream::Piece> pieces = {{std::vector<std::uint8_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cut)), resume - cut},
                                             {std::vector<std::uint8_t>(all.begin() + static_cast<std::ptrdiff_t>(resume), all.end()), 0}};
    auto src = binlogctl::stream_source(std::make_unique<binlogctl::testing::GappyStream>(pieces));
    struct Sink : binlogctl::DiagnosticSink {
      int n = 0;
      void report(const binlogctl::Diagnostic&) override { ++n; }
    } diag;
    binlogctl::EventStream s(*src, "bin.000001", diag);
    binlogctl::Event ev;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;  // pos, omitted_before
    while (s.next(ev)) seen.emplace_back(ev.pos, ev.omitted_before);
    CHECK(diag.n == 0);
    REQUIRE(seen.size() == 4);
    CHECK(seen[0] == std::pair<std::uint64_t, std::uint64_t>{4, 0});
    CHECK(seen[1] == std::pair<std::uint64_t, std::uint64_t>{resume, resume - cut});
    CHECK(seen[2].first == b.event_offset(5));
    CHECK(seen[2].second == 0);
  }
}
