// convert --format sql and --flashback on damaged input: real binlogs mutated (seeded, so that a
// failure reproduces), checksums off so that the damage reaches the table maps, row images and
// every column decoder of the typed path. Under ASan+UBSan in CI this is the SQL path's fuzzing.
#include <binlogctl/sql.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tmpfile_io.h"

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void damage(std::vector<std::uint8_t>& b, std::mt19937_64& rng) {
  if (b.size() < 8) return;
  switch (rng() % 4) {
    case 0:  // bit flips
      for (int k = 0; k < 1 + static_cast<int>(rng() % 8); ++k)
        b[4 + rng() % (b.size() - 4)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    case 1:  // cut
      b.resize(4 + rng() % (b.size() - 4));
      break;
    case 2: {  // a run of random bytes
      const std::size_t at = 4 + rng() % (b.size() - 4), len = std::min<std::size_t>(b.size() - at, 1 + rng() % 64);
      for (std::size_t i = 0; i < len; ++i) b[at + i] = static_cast<std::uint8_t>(rng());
      break;
    }
    default: {  // a large length somewhere
      const std::size_t at = 4 + rng() % (b.size() - 8);
      const std::uint32_t v = (rng() & 1) ? 0xfffffff0u : static_cast<std::uint32_t>(rng() % 300);
      for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
      break;
    }
  }
}

}  // namespace

TEST_SUITE("sql robustness") {
  TEST_CASE("mutated real binlogs through --format sql and --flashback: no crash, exit 0-2, spill files gone") {
    std::vector<fs::path> files;
    const fs::path own = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata/mariadb-10.11";
    for (const char* f : {"basic/binlogs/mariadb-bin.000003", "basic/binlogs/mariadb-bin.000004",
                          "compressed/binlogs/mariadb-bin.000001", "metadata/binlogs/mariadb-bin.000001",
                          "schema/binlogs/mariadb-bin.000001"})
      if (fs::exists(own / f)) files.push_back(own / f);
    const fs::path pub = fs::path(BINLOGCTL_SHARED_DIR) / "corpus/public/blackbeam__rust_mysql_common";
    for (const char* f : {"json.binlog.000001", "vector.binlog", "transaction_compression.000001"})
      if (fs::exists(pub / f)) files.push_back(pub / f);
    REQUIRE(files.size() >= 4);
#if defined(__SANITIZE_ADDRESS__)
    constexpr int kRounds = 20;
#else
    constexpr int kRounds = 60;
#endif
    const fs::path dir = fs::temp_directory_path() / "binlogctl-sql-robustness";
    fs::remove_all(dir);
    fs::create_directories(dir / "spill");
    const fs::path tmp = dir / "input.bin";
    std::mt19937_64 rng(20261202);
    std::size_t bytes_out = 0;
    for (const auto& f : files) {
      const auto orig = read_bytes(f);
      CAPTURE(f.string());
      for (int round = 0; round < kRounds; ++round) {
        auto b = orig;
        CAPTURE(round);
        if (round > 0) damage(b, rng);  // round 0: the file as it is
        {
          std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
          o.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        }
        for (bool flashback : {false, true}) {
          ConvertOptions o;
          o.inputs = {tmp.string()};
          o.progress = ProgressMode::never;
          o.verify_checksums = round % 4 == 0;
          o.read_threads = 1;
          SqlOptions so;
          so.flashback = flashback;
          so.skip_unsafe = true;
          so.tmpdir = (dir / "spill").string();
          so.spill_bytes = 4096;  // spill even small transactions
          so.set = round % 2 == 0 ? SqlSet::changed : SqlSet::all;
          std::FILE* out = std::tmpfile();
          std::FILE* err = std::tmpfile();
          REQUIRE(out != nullptr);
          REQUIRE(err != nullptr);
          const int rc = run_sql_convert(o, so, out, err);
          CHECK(rc >= 0);
          CHECK(rc <= 2);
          // the project's own fixtures convert cleanly (public files may lack column names)
          if (round == 0 && !flashback && f.string().rfind(own.string(), 0) == 0) CHECK(rc == 0);
          bytes_out += binlogctl::testing::read_all(out).size();
          std::fclose(out);
          std::fclose(err);
          CHECK(fs::is_empty(dir / "spill"));
        }
      }
    }
    CHECK(bytes_out > 100000);
    fs::remove_all(dir);
  }
}
