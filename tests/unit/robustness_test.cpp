// Damaged input never crashes, hangs or over-allocates: real binlogs mutated many ways (seeded,
// so a failure reproduces) go through framing, every Info and body decoder and payload
// expansion, convert --format json, canal-proto and canal-json, verify, schema and replay. Run
// under ASan+UBSan in CI, this is the fuzzing that always runs.
#if defined(BINLOGCTL_HAVE_CANAL)
#include <binlogctl/canal.h>
#endif
#include <binlogctl/convert.h>
#include <binlogctl/event_stream.h>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "dump/describe.h"
#include "dump/info.h"
#include "events/events.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "binlog_builder.h"
#include "exercise.h"
#include "tmpfile_io.h"

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> seed_files() {
  std::vector<fs::path> files;
  const fs::path own = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata/mariadb-10.11";
  for (const char* set : {"basic", "nochecksum", "compressed"})
    for (const char* f : {"mariadb-bin.000001", "mariadb-bin.000002"})
      if (fs::exists(own / set / "binlogs" / f)) files.push_back(own / set / "binlogs" / f);
  const fs::path pub = fs::path(BINLOGCTL_SHARED_DIR) / "corpus/public/blackbeam__rust_mysql_common";
  for (const char* f : {"transaction_compression.000001", "json.binlog.000001", "binlog_transaction_with_GTID_TAG.000001",
                        "vector.binlog", "ver_5_1_23.001", "mariadb-bin.000001"})
    if (fs::exists(pub / f)) files.push_back(pub / f);
  // MySQL 8.0 binlog_encryption: decrypted with the keyring fuzz_keys() holds (exercise.h).
  files.push_back(fs::path(BINLOGCTL_SOURCE_DIR) / "testdata/mysql-8-encrypted/binlog.encrypted");
  return files;
}

// One of six kinds of damage, chosen and placed by `rng`.
void mutate(std::vector<std::uint8_t>& b, std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:  // bit flips anywhere
      for (int k = 0; k < 1 + static_cast<int>(rng() % 8); ++k) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      break;
    case 1:  // truncation
      b.resize(rng() % b.size());
      break;
    case 2:  // a random run of bytes
    {
      std::size_t at = rng() % b.size(), len = std::min<std::size_t>(b.size() - at, 1 + rng() % 64);
      for (std::size_t i = 0; i < len; ++i) b[at + i] = static_cast<std::uint8_t>(rng());
      break;
    }
    case 3:  // a huge or tiny length field somewhere in the first events
    {
      std::size_t at = 4 + rng() % std::min<std::size_t>(b.size() - 4, 4096);
      std::uint32_t v = (rng() & 1) ? 0xfffffff0u : static_cast<std::uint32_t>(rng() % 32);
      for (int i = 0; i < 4 && at + static_cast<std::size_t>(i) < b.size(); ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
      break;
    }
    case 4:  // zeroed block
    {
      std::size_t at = rng() % b.size(), len = std::min<std::size_t>(b.size() - at, 1 + rng() % 512);
      std::fill(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + len), 0);
      break;
    }
    default:  // duplicated slice (events out of place)
    {
      std::size_t at = rng() % b.size(), len = std::min<std::size_t>(b.size() - at, 1 + rng() % 300);
      std::vector<std::uint8_t> slice(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + len));
      b.insert(b.begin() + static_cast<long>(rng() % b.size()), slice.begin(), slice.end());
      break;
    }
  }
}

// Real binlogs with row changes of every column type (DDL, compressed rows, payloads, JSON,
// VECTOR, a MySQL 5.1 file, one without checksums): the row consumers' seeds.
std::vector<fs::path> row_files() {
  std::vector<fs::path> files;
  const fs::path own = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata/mariadb-10.11";
  for (const char* f : {"basic/binlogs/mariadb-bin.000003", "basic/binlogs/mariadb-bin.000004",
                        "basic/binlogs/mariadb-bin.000005", "compressed/binlogs/mariadb-bin.000001",
                        "schema/binlogs/mariadb-bin.000001", "nochecksum/binlogs/mariadb-bin.000001"})
    if (fs::exists(own / f)) files.push_back(own / f);
  const fs::path pub = fs::path(BINLOGCTL_SHARED_DIR) / "corpus/public/blackbeam__rust_mysql_common";
  for (const char* f : {"transaction_compression.000001", "json.binlog.000001", "vector.binlog", "ver_5_1_23.001"})
    if (fs::exists(pub / f)) files.push_back(pub / f);
  return files;
}

// canal-json's text with every FlatMessage's "ts" (the time it was written, in ms) set to 0.
std::string without_write_times(std::string text) {
  const std::string key = "\"ts\":";  // inside a JSON string a quote is escaped: no false match
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
    at += key.size();
    std::size_t end = at;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    text.replace(at, end - at, "0");
  }
  return text;
}

// Checks that `text` is JSON Lines (every line ended and valid JSON, valid UTF-8 included);
// returns the number of lines.
std::size_t check_json_lines(const std::string& text) {
  std::size_t at = 0, lines = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    REQUIRE(nl != std::string::npos);  // every line ends
    const std::string line = text.substr(at, nl - at);
    CAPTURE(line);
    CHECK(nlohmann::json::accept(line));
    ++lines;
    at = nl + 1;
  }
  return lines;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr int kRounds = 500;
#else
constexpr int kRounds = 2000;
#endif

}  // namespace

TEST_SUITE("robustness") {
  TEST_CASE("mutated real binlogs") {
    auto files = seed_files();
    REQUIRE(!files.empty());
    std::mt19937_64 rng(20261129);
    for (const auto& f : files) {
      const auto orig = read_file(f);
      CAPTURE(f.string());
      CHECK(binlogctl::testing::exercise(orig) > 0);
      for (int round = 0; round < kRounds; ++round) {
        auto b = orig;
        CAPTURE(round);
        mutate(b, rng);
        (void)binlogctl::testing::exercise(b, (round & 1) != 0);  // mapped, then streamed
      }
    }
  }

  TEST_CASE("mutated real binlogs through convert --format json: valid JSON Lines, same with threads") {
    // The row decoders (table maps, row images, every column type, partial JSON, compressed
    // rows) on damaged input, with checksums off so the damage reaches them; half the rounds
    // with rendering threads. Every line must parse as JSON (valid UTF-8 included) and the
    // threaded run must write exactly what the one-thread run writes.
    const std::vector<fs::path> files = row_files();
    REQUIRE(files.size() >= 6);
#if defined(__SANITIZE_ADDRESS__)
    constexpr int kConvertRounds = 25;
#else
    constexpr int kConvertRounds = 60;
#endif
    const fs::path tmp = fs::temp_directory_path() / "binlogctl-robustness-convert.bin";
    std::mt19937_64 rng(20261130);
    std::size_t lines = 0;
    for (const auto& f : files) {
      const auto orig = read_file(f);
      CAPTURE(f.string());
      for (int round = 0; round < kConvertRounds; ++round) {
        auto b = orig;
        CAPTURE(round);
        mutate(b, rng);
        {
          std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
          o.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        }
        std::string first_out;
        for (unsigned threads : {0u, 2u}) {
          ConvertOptions o;
          o.inputs = {tmp.string()};
          o.progress = ProgressMode::never;
          o.verify_checksums = round % 4 == 0;
          o.render_threads = threads;
          o.render_batch_bytes = 512;  // many batches even on small files
          std::FILE* out = std::tmpfile();
          std::FILE* err = std::tmpfile();
          REQUIRE(out != nullptr);
          REQUIRE(err != nullptr);
          const int rc = run_convert(o, out, err);
          CHECK(rc >= 0);
          CHECK(rc <= 2);
          const std::string text = binlogctl::testing::read_all(out);
          std::fclose(out);
          std::fclose(err);
          if (threads == 0) {
            first_out = text;
            lines += check_json_lines(text);
          } else {
            CHECK(text == first_out);
          }
        }
      }
    }
    CHECK(lines > 1000);
    fs::remove(tmp);
  }

  TEST_CASE("mutated real binlogs through canal-proto, canal-json, verify, --cover-from, schema and replay: exit 0-2, JSON Lines") {
    // Canal's value renderers, DDL typing, flat JSON and protobuf encoding on damaged input,
    // checksums off so that the damage reaches them, on the converting thread and then with
    // rendering threads (the same bytes); verify --format json, checksums on (damage is what it
    // reports), over the same mutations: chain, transaction structure, GTID continuity, and
    // --cover-from with the input as two chains; schema --format json without and with --history
    // (schema history following damaged DDL and TABLE_MAPs) and replay --format json (the chain
    // as the flow-control engine's source, rows hashed by key, then the simulation: exercise.h's
    // run_replay_consumer), checksums off.
    // Half the rounds read the input as a stream.
    const std::vector<fs::path> files = row_files();
    REQUIRE(files.size() >= 6);
#if defined(__SANITIZE_ADDRESS__)
    constexpr int kCanalRounds = 12;
#else
    constexpr int kCanalRounds = 30;
#endif
    using binlogctl::testing::Consumer;
    std::vector<Consumer> consumers = {Consumer::verify, Consumer::cover, Consumer::schema, Consumer::schema_history,
                                       Consumer::replay};
#if defined(BINLOGCTL_HAVE_CANAL)
    consumers.insert(consumers.begin(), {Consumer::canal_proto, Consumer::canal_json});
#endif
    // Only the Canal consumers render on threads of their own; the others run once.
    const auto renders = [](Consumer c) { return c == Consumer::canal_proto || c == Consumer::canal_json; };
    std::mt19937_64 rng(20261207);
    std::size_t lines = 0, proto_bytes = 0, schema_lines = 0, schema_failed = 0;
    std::size_t replay_runs = 0, replay_pauses = 0, replay_violated = 0, replay_failed = 0;
    for (const auto& f : files) {
      const auto orig = read_file(f);
      CAPTURE(f.string());
      for (int round = 0; round < kCanalRounds; ++round) {
        auto b = orig;
        CAPTURE(round);
        if (round > 0) mutate(b, rng);  // round 0: the file as it is
        const auto inputs = memory_inputs({{"mariadb-bin.000001", Bytes(b.data(), b.size())}}, (round & 1) != 0);
        for (const Consumer c : consumers) {
          const std::string consumer = binlogctl::testing::consumer_name(c);
          CAPTURE(consumer);
          std::string first_out;
          for (unsigned threads : {0u, 2u}) {
            if (threads > 0 && !renders(c)) continue;
            std::FILE* out = std::tmpfile();
            std::FILE* err = std::tmpfile();
            REQUIRE(out != nullptr);
            REQUIRE(err != nullptr);
            const int rc = binlogctl::testing::run_consumer(c, *inputs, out, err, threads);
            CHECK(rc >= 0);
            CHECK(rc <= 2);
            std::string text = binlogctl::testing::read_all(out);
            const std::string diag = binlogctl::testing::read_all(err);
            std::fclose(out);
            std::fclose(err);
            if (c == Consumer::canal_json) text = without_write_times(std::move(text));
            if (threads > 0) {
              CHECK(text == first_out);
              continue;
            }
            first_out = text;
            const bool json_lines = binlogctl::testing::writes_json_lines(c);
            const std::size_t n = json_lines ? check_json_lines(text) : 0;
            if (!json_lines) proto_bytes += text.size();
            if (c == Consumer::schema || c == Consumer::schema_history) {
              // The real files as they are decode cleanly. An exit status 1 says why on stderr
              // (the output itself has no record of damage), and the output stays in proportion to
              // the input: a line per table, version or lost definition, each a definition that
              // the input's bytes declared (a loose bound: it catches output without end).
              if (round == 0) CHECK(rc == 0);
              if (rc == 1) CHECK(!diag.empty());
              if (rc == 1) ++schema_failed;
              CHECK(text.size() <= 64 * b.size() + 65536);
              schema_lines += n;
            } else if (c == Consumer::replay) {
              // One summary line whatever the input (2 only for input that cannot be opened,
              // which memory never is). The engine's invariants hold on any input: the only
              // violation damage can cause is a break of the source's own context (positions,
              // file sequence, GTIDs). Exit status 0 only when the invariants hold and nothing
              // was reported; 1 always has a reason, a violation or a finding on stderr. The
              // summary's size does not grow with the input: 4 buckets and the control path, at
              // most one violation (stop_on_violation) with its trace.
              CHECK(rc != 2);
              REQUIRE(n == 1);
              const auto doc = nlohmann::json::parse(text);
              REQUIRE(doc.is_object());
              const auto& summary = doc.at("summary");  // at(): a key missing throws (fails)
              const auto& invariants = summary.at("invariants");
              const bool ok = invariants.at("ok").get<bool>();
              CHECK(ok == invariants.at("violations").empty());
              for (const auto& v : invariants.at("violations")) CHECK(v.at("check") == "source_context");
              if (round == 0) CHECK(rc == 0);
              if (rc == 0) CHECK(ok);
              if (!ok) CHECK(rc == 1);
              if (rc == 1 && ok) CHECK(!diag.empty());
              CHECK(text.size() < 65536);
              ++replay_runs;
              replay_pauses += summary.at("pauses").get<std::size_t>();
              if (!ok) ++replay_violated;
              if (rc == 1) ++replay_failed;
            } else {
              lines += n;
            }
          }
        }
      }
    }
    CHECK(lines > 1000);
    const std::size_t runs = files.size() * static_cast<std::size_t>(kCanalRounds);
    CHECK(schema_lines > runs);  // more than a table a run, on average
    CHECK(replay_runs == runs);  // every run wrote its summary
    CHECK(replay_pauses > 0);    // the quota is small enough for flow control to act
    // The exit status checks above act: damage makes both commands fail, and breaks the replay
    // source's context (a violation) in some runs and not in others.
    CHECK(schema_failed > 0);
    CHECK(replay_violated > 0);
    CHECK(replay_failed > replay_violated);
#if defined(BINLOGCTL_HAVE_CANAL)
    CHECK(proto_bytes > 100000);
#endif
  }

  TEST_CASE("a row image of no bytes ends its rows event with an error and never loops") {
    // WRITE_ROWS whose column bitmap selects no column: each image is an empty null bitmap and
    // no value, so it takes no bytes, and the bytes after it could never be consumed (found by
    // fuzz_convert: convert looped, writing {} rows without end).
    binlogctl::testing::BinlogBuilder b;
    using Buf = binlogctl::testing::BinlogBuilder::Buf;
    using binlogctl::testing::BinlogBuilder;
    b.fde("8.0.32", false);
    b.query("t", "BEGIN");
    Buf tm;
    BinlogBuilder::le(tm, 42, 6);  // table id
    BinlogBuilder::le(tm, 1, 2);   // flags
    const Buf names = {1, 't', 0, 5, 'i', 't', 'e', 'm', 's', 0};  // db "t", table "items"
    const Buf columns = {2, 3, 15, 2, 80, 0, 0x02};  // LONG, VARCHAR(20) (meta 80); 2nd nullable
    tm.insert(tm.end(), names.begin(), names.end());
    tm.insert(tm.end(), columns.begin(), columns.end());
    b.raw(19, tm);
    Buf w;
    BinlogBuilder::le(w, 42, 6);
    BinlogBuilder::le(w, 1, 2);  // STMT_END
    BinlogBuilder::le(w, 2, 2);  // extra info length (itself)
    w.push_back(2);              // width
    w.push_back(0x00);           // no column present
    const Buf rest = {0x00, 7, 0, 0, 0};  // bytes no empty image can consume
    w.insert(w.end(), rest.begin(), rest.end());
    b.raw(30, w);
    b.xid(9);
    const fs::path tmp = fs::temp_directory_path() / "binlogctl-empty-image.bin";
    {
      const auto bytes = b.bytes();
      std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
      o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    for (unsigned threads : {0u, 2u}) {
      CAPTURE(threads);
      ConvertOptions o;
      o.inputs = {tmp.string()};
      o.progress = ProgressMode::never;
      o.render_threads = threads;
      std::FILE* out = std::tmpfile();
      std::FILE* err = std::tmpfile();
      REQUIRE(out != nullptr);
      REQUIRE(err != nullptr);
      CHECK(run_convert(o, out, err) == 1);
      const std::string text = binlogctl::testing::read_all(out);
      const std::string diag = binlogctl::testing::read_all(err);
      CHECK(text.size() < 1000);
      CHECK(diag.find("undecodable_event: WRITE_ROWS_EVENT event does not decode: row image without any byte") !=
            std::string::npos);
      std::fclose(out);
      std::fclose(err);
    }
#if defined(BINLOGCTL_HAVE_CANAL)
    for (CanalFormat f : {CanalFormat::proto, CanalFormat::json}) {
      ConvertOptions o;
      o.inputs = {tmp.string()};
      o.progress = ProgressMode::never;
      CanalOptions co;
      co.format = f;
      std::FILE* out = std::tmpfile();
      std::FILE* err = std::tmpfile();
      REQUIRE(out != nullptr);
      REQUIRE(err != nullptr);
      CHECK(run_canal_convert(o, co, out, err) == 1);
      CHECK(binlogctl::testing::read_all(err).find("row image without any byte") != std::string::npos);
      std::fclose(out);
      std::fclose(err);
    }
#endif
    fs::remove(tmp);
  }

  TEST_CASE("pure noise after a valid header") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
      binlogctl::testing::BinlogBuilder b;
      b.fde(round % 2 ? "8.0.32" : "10.11.19-MariaDB-log", round % 3 != 0);
      std::vector<std::uint8_t> bytes = b.bytes();
      std::size_t extra = rng() % 4000;
      for (std::size_t i = 0; i < extra; ++i) bytes.push_back(static_cast<std::uint8_t>(rng()));
      (void)binlogctl::testing::exercise(bytes);
    }
  }
}
