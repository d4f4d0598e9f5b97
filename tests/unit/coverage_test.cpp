// verify --cover-from (coverage.h) on the project's real MariaDB fixtures and, when the shared
// corpus is there, a MySQL 9.6 file with tagged GTIDs. The replication cases (a primary's and a
// replica's archives, relay logs split inside a transaction) are tests/cli/cover.py's.
#include <binlogctl/coverage.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "thread_runs.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using binlogctl::CoverOptions;
using binlogctl::OutputFormat;
using binlogctl::testing::capture;

namespace {

const fs::path kSchema = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11" / "schema" / "binlogs";

binlogctl::testing::Run cover(const std::vector<std::string>& archives, const std::string& from,
                              const std::string& to_gtid = {}, OutputFormat format = OutputFormat::json) {
  CoverOptions o;
  o.archives = archives;
  o.from = from;
  o.to_gtid = to_gtid;
  o.format = format;
  o.progress = binlogctl::ProgressMode::never;
  return capture([&](std::FILE* out, std::FILE* err) { return binlogctl::run_cover(o, out, err); });
}

nlohmann::json summary(const std::string& out) {
  const std::size_t end = out.find_last_not_of('\n');
  const std::size_t start = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1))["coverage"];
}

struct TempDir {  // a fresh directory, removed with what it holds
  TempDir() {
    std::string t = (fs::temp_directory_path() / "binlogctl-coverage-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()) != nullptr);
    dir = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  const fs::path& path() const { return dir; }
  fs::path dir;
};

std::vector<fs::path> binlog_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() != ".index") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("coverage: a whole chain covers its transactions; without its first file the gap is named") {
  auto whole = cover({kSchema.string()}, "");
  REQUIRE(whole.rc == 0);
  const auto s = summary(whole.out);
  CHECK(s["covered"] == true);
  CHECK(s["missing"] == 0);
  CHECK(s["present"].get<int>() > 10);

  // The first file that holds transactions, and its first GTID (the fixtures' chains hold
  // transactions in two files: tests/cli/cover.py removes a middle one).
  std::vector<fs::path> with_txn;
  for (const auto& f : binlog_files(kSchema)) {
    auto r = cover({f.string()}, "");
    if (summary(r.out)["present"].get<int>() > 0) with_txn.push_back(f);
  }
  REQUIRE(with_txn.size() >= 2);
  const fs::path middle = with_txn.front();
  const std::string lost = summary(cover({middle.string()}, "").out)["first_gtid"];

  TempDir tmp;
  for (const auto& f : binlog_files(kSchema))
    if (f != middle) fs::copy_file(f, tmp.path() / f.filename());
  auto holed = cover({tmp.path().string()}, "", {}, OutputFormat::text);
  CHECK(holed.rc == 1);
  CHECK(holed.out.find("error: coverage_gap: ") != std::string::npos);
  CHECK(holed.out.find(lost) != std::string::npos);
  CHECK(holed.out.find("coverage: INCOMPLETE") != std::string::npos);

  // The same archive twice (two chains with equal copies of every GTID): covered.
  auto twice = cover({kSchema.string(), kSchema.string()}, "");
  CHECK(twice.rc == 0);
  // The holed one merged with the whole one: covered.
  CHECK(cover({tmp.path().string(), kSchema.string()}, "").rc == 0);
  // Up to the last GTID the archive holds: covered; up to one after it: not.
  const std::string last = s["last_gtid"];
  CHECK(cover({kSchema.string()}, "", last).rc == 0);
  const std::size_t dash = last.rfind('-');
  const std::string beyond = last.substr(0, dash + 1) + std::to_string(std::stoull(last.substr(dash + 1)) + 1);
  auto after = cover({kSchema.string()}, "", beyond, OutputFormat::text);
  CHECK(after.rc == 1);
  CHECK(after.out.find("coverage_end") != std::string::npos);
  // From the last GTID: nothing is needed.
  auto from_last = cover({kSchema.string()}, last);
  CHECK(from_last.rc == 0);
  CHECK(summary(from_last.out)["present"] == 0);
}

TEST_CASE("coverage: a position that does not parse, or of the other server kind, is exit status 2") {
  CHECK(cover({kSchema.string()}, "not-a-gtid").rc == 2);
  CHECK(cover({kSchema.string()}, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5").rc == 2);
}

TEST_CASE("coverage: MySQL tagged GTIDs (public corpus, MySQL 9.6)") {
  const fs::path f = fs::path(BINLOGCTL_SOURCE_DIR) / ".." / "shared" / "corpus" / "public" /
                     "blackbeam__rust_mysql_common" / "binlog_transaction_with_GTID_TAG.000001";
  if (!fs::exists(f)) return;  // the shared corpus is not here
  // Its Previous_gtids: ...:1-13:mytag:1-2; its one transaction ...:mytag:3.
  auto r = cover({f.string()}, "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2");
  CHECK(r.rc == 0);
  CHECK(summary(r.out)["last_gtid"] == "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3");
  auto gap = cover({f.string()}, "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1", {}, OutputFormat::text);
  CHECK(gap.rc == 1);
  CHECK(gap.out.find("missing: 55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:2 ") != std::string::npos);
}
