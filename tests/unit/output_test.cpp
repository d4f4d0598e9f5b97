// LineOutput and the subcommands that print through it, on streams that have no file descriptor
// (open_memstream, as the fuzz targets give them).
#include <binlogctl/convert.h>
#include <binlogctl/output.h>
#include <binlogctl/stats.h>
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// What `run` printed to a memory stream, and its exit status.
template <class Run>
std::string to_memstream(Run run, int& rc) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  REQUIRE(out != nullptr);
  rc = run(out);
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

const std::string kFixture = BINLOGCTL_SOURCE_DIR "/testdata/mariadb-10.11/basic/binlogs/mariadb-bin.000001";

}  // namespace

TEST_CASE("LineOutput writes through stdio when the stream has no file descriptor") {
  int rc = 0;
  const std::string text = to_memstream(
      [](std::FILE* out) {
        binlogctl::LineOutput o(out);
        o.buf() += "first";
        o.end_line();
        o.write("second\nthird\n");
        o.buf() += "last";
        o.end_line();
        o.flush();
        return 0;
      },
      rc);
  CHECK(text == "first\nsecond\nthird\nlast\n");
}

TEST_CASE("stats and convert json print to a stream without a file descriptor (the fuzz targets' output)") {
  std::FILE* err = std::tmpfile();
  REQUIRE(err != nullptr);
  int rc = -1;
  binlogctl::StatsOptions so;
  so.inputs = {kFixture};
  so.format = binlogctl::OutputFormat::json;
  so.progress = binlogctl::ProgressMode::never;
  const std::string stats = to_memstream([&](std::FILE* out) { return binlogctl::run_stats(so, out, err); }, rc);
  CHECK(rc == 0);
  CHECK(stats.find("\"events\"") != std::string::npos);
  binlogctl::ConvertOptions co;
  co.inputs = {kFixture};
  co.progress = binlogctl::ProgressMode::never;
  co.render_threads = 0;
  const std::string rows = to_memstream([&](std::FILE* out) { return binlogctl::run_convert(co, out, err); }, rc);
  CHECK(rc == 0);
  CHECK(rows.find("\"type\":\"INSERT\"") != std::string::npos);
  std::fclose(err);
}
