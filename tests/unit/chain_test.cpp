// The input seam and the one chain walker (chain.h): the same chain read from files, from memory
// and from memory streams gives the same events, hooks come in chain order, selection and
// payload expansion happen in one place.
#include <binlogctl/chain.h>
#include <binlogctl/source.h>
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace binlogctl;

namespace {

const std::string kFix = std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mariadb-10.11";

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Quiet : DiagnosticSink {
  std::vector<std::string> seen;
  void report(const Diagnostic& d) override { seen.push_back(fmt::format("{}:{}:{}", d.log_name, d.pos, d.check)); }
};

// Everything a consumer is told, as one line per call.
struct Recorder : ChainHooks {
  std::vector<std::string> log;
  bool skip_second = false;
  void input_error(const std::string& e) override { log.push_back("input_error " + e); }
  void unavailable(const InputFile& f, const std::system_error* e) override {
    log.push_back(fmt::format("unavailable {} {}", f.log_name, e == nullptr ? "missing" : "open"));
  }
  bool begin_file(const InputFile& f) override {
    log.push_back("begin " + f.log_name);
    return !(skip_second && f.log_name == "mariadb-bin.000002");
  }
  void end_file(const InputFile& f, const EventStream& s) override {
    log.push_back(fmt::format("end {} at {}", f.log_name, s.offset()));
  }
};

std::vector<std::string> walk(ChainOptions o, Recorder& rec, Quiet& diag) {
  ChainReader r(o, rec, diag);
  Event ev;
  while (r.next(ev)) {
    rec.log.push_back(fmt::format("{} {}{} {}", r.log_name(), ev.pos,
                                  ev.is_inner() ? fmt::format(".{}", ev.inner_index) : std::string(),
                                  ev.type_code()));
  }
  return rec.log;
}

// `b` as the one input "b.000002" in memory (a stream when `stream`), read with `threads` (1:
// no framing thread), no progress.
struct MemoryChain {
  std::unique_ptr<InputSet> in;
  ChainOptions o;
  MemoryChain(const std::vector<std::uint8_t>& b, bool stream, unsigned threads)
      : in(memory_inputs({{"b.000002", Bytes(b.data(), b.size())}}, stream)) {
    o.input_set = in.get();
    o.progress = ProgressMode::never;
    o.threads = threads;
  }
};

// The outer events (not those inside a payload) of `b` read from memory on one thread.
std::vector<Event> outer_events(const std::vector<std::uint8_t>& b) {
  MemoryChain m(b, false, 1);
  Recorder rec;
  Quiet diag;
  ChainReader r(m.o, rec, diag);
  std::vector<Event> out;
  Event ev;
  while (r.next(ev))
    if (!ev.is_inner()) out.push_back(ev);
  return out;
}

}  // namespace

TEST_CASE("chain reader: files, memory and memory streams give the same chain, hooks in order") {
  const std::string dir = kFix + "/basic/binlogs/";
  const auto a = slurp(dir + "mariadb-bin.000001");
  const auto b = slurp(dir + "mariadb-bin.000002");
  REQUIRE(a.size() > 4);
  REQUIRE(b.size() > 4);
  std::vector<std::vector<std::string>> runs;
  for (int mode = 0; mode < 4; ++mode) {
    ChainOptions o;
    o.progress = ProgressMode::never;
    o.threads = mode == 3 ? 2 : 1;
    std::unique_ptr<InputSet> mem;
    if (mode == 0 || mode == 3) {
      o.inputs = {dir + "mariadb-bin.000001", dir + "mariadb-bin.000002"};
    } else {
      mem = memory_inputs({{"mariadb-bin.000001", Bytes(a.data(), a.size())},
                           {"mariadb-bin.000002", Bytes(b.data(), b.size())}},
                          mode == 2);
      o.input_set = mem.get();
    }
    Recorder rec;
    Quiet diag;
    runs.push_back(walk(o, rec, diag));
    CHECK(diag.seen.empty());
  }
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
  CHECK(runs[0] == runs[3]);
  const auto& log = runs[0];
  REQUIRE(log.size() > 6);
  CHECK(log.front() == "begin mariadb-bin.000001");
  CHECK(log[1] == "mariadb-bin.000001 4 15");  // the format description first
  CHECK(log.back() == fmt::format("end mariadb-bin.000002 at {}", b.size()));
  CHECK(std::find(log.begin(), log.end(), fmt::format("end mariadb-bin.000001 at {}", a.size())) != log.end());
}

TEST_CASE("chain reader: unavailable files, skipped files and input errors reach the hooks") {
  const std::string dir = kFix + "/basic/binlogs/";
  ChainOptions o;
  o.progress = ProgressMode::never;
  // kFix holds only folders: "no binlog files", an input that cannot be listed.
  o.inputs = {dir + "mariadb-bin.000001", "/nonexistent/x.000001", dir + "mariadb-bin.000002", dir, kFix};
  Recorder rec;
  rec.skip_second = true;
  Quiet diag;
  ChainReader r(o, rec, diag);
  Event ev;
  std::size_t events = 0, second = 0;
  while (r.next(ev)) {
    ++events;
    if (r.log_name() == "mariadb-bin.000002") ++second;
  }
  CHECK(events > 0);
  CHECK(second == 0);  // begin_file said no: no events, no end_file
  CHECK(std::count(rec.log.begin(), rec.log.end(), "unavailable x.000001 missing") == 1);
  CHECK(std::count(rec.log.begin(), rec.log.end(), "begin mariadb-bin.000002") == 2);
  CHECK(std::count_if(rec.log.begin(), rec.log.end(),
                      [](const std::string& l) { return l.rfind("end mariadb-bin.000002", 0) == 0; }) == 0);
  CHECK(std::count_if(rec.log.begin(), rec.log.end(),
                      [](const std::string& l) { return l.rfind("input_error", 0) == 0; }) == 1);
  CHECK(rec.log.front().rfind("input_error", 0) == 0);  // listing problems come first
}

TEST_CASE("chain reader: selection by position and time, payload contents after their payload") {
  const std::string file = kFix + "/basic/binlogs/mariadb-bin.000002";
  Recorder all_rec;
  Quiet diag;
  ChainOptions o;
  o.progress = ProgressMode::never;
  o.inputs = {file};
  walk(o, all_rec, diag);
  // Every event position; pick one in the middle and start there, then stop at a later one.
  std::vector<std::uint64_t> pos;
  for (const std::string& l : all_rec.log) {
    if (l.rfind("mariadb-bin.000002 ", 0) == 0) pos.push_back(std::stoull(l.substr(19)));
  }
  REQUIRE(pos.size() > 10);
  for (unsigned threads : {1u, 2u}) {
    ChainOptions s = o;
    s.threads = threads;
    s.start_position = pos[pos.size() / 3];
    s.stop_position = pos[2 * pos.size() / 3];
    Recorder rec;
    walk(s, rec, diag);
    std::vector<std::uint64_t> got;
    for (const std::string& l : rec.log)
      if (l.rfind("mariadb-bin.000002 ", 0) == 0) got.push_back(std::stoull(l.substr(19)));
    REQUIRE(!got.empty());
    CHECK(got.front() == *s.start_position);
    CHECK(got.back() < *s.stop_position);
    CHECK(got.size() == static_cast<std::size_t>(2 * pos.size() / 3 - pos.size() / 3));
  }
  // A stop time before every event: nothing but what precedes it, then the chain ends (stop_all).
  ChainOptions t = o;
  t.inputs = {file, file};
  t.stop_datetime = 1;
  Recorder rec;
  walk(t, rec, diag);
  CHECK(std::count_if(rec.log.begin(), rec.log.end(),
                      [](const std::string& l) { return l.rfind("begin", 0) == 0; }) == 1);
}

TEST_CASE("chain reader: MySQL TRANSACTION_PAYLOAD contents follow the payload event") {
  const std::string shared = std::string(BINLOGCTL_SHARED_DIR) + "/corpus/public";
  // Any corpus file with compressed transactions will do; skip cleanly without the corpus.
  const std::vector<std::string> candidates = {
      shared + "/blackbeam__rust_mysql_common/transaction_compression.000001",
      shared + "/osheroff__mysql-binlog-connector-java/mysql-bin.compressed",
  };
  std::string found;
  for (const auto& c : candidates)
    if (std::ifstream(c).good()) found = c;
  if (found.empty()) {
    MESSAGE("no compressed-transaction binlog in ../shared: skipped");
    return;
  }
  ChainOptions o;
  o.progress = ProgressMode::never;
  o.inputs = {found};
  Recorder rec;
  Quiet diag;
  ChainReader r(o, rec, diag);
  Event ev;
  std::uint64_t last_payload = 0;
  std::size_t inner = 0;
  bool ordered = true;
  while (r.next(ev)) {
    if (ev.type() == EventType::transaction_payload) last_payload = ev.pos;
    if (ev.is_inner()) {
      ++inner;
      if (ev.payload_pos != last_payload) ordered = false;
    }
  }
  CHECK(inner > 0);
  CHECK(ordered);
}

TEST_CASE("damage signal: a checksum failure marks its event, a resynchronisation the event after the hole") {
  const auto orig = slurp(kFix + "/basic/binlogs/mariadb-bin.000002");
  // The events of the healthy file, and one in the middle to damage.
  std::vector<std::uint64_t> pos, size;
  for (const Event& ev : outer_events(orig)) {
    CHECK(!ev.damage);
    CHECK(ev.skipped_before == 0);
    pos.push_back(ev.pos);
    size.push_back(ev.header.event_size);
  }
  REQUIRE(pos.size() > 8);
  const std::size_t k = pos.size() / 2;
  for (int what = 0; what < 2; ++what) {
    CAPTURE(what);
    auto b = orig;
    if (what == 0) b[pos[k] + size[k] / 2] ^= 0x5a;  // a body byte: the checksum fails
    else b[pos[k] + 9] ^= 0x01;                      // the event_size field: resynchronisation
    for (bool stream : {false, true}) {
      CAPTURE(stream);
      MemoryChain m(b, stream, 1);
      Recorder rec;
      Quiet diag;
      ChainReader r(m.o, rec, diag);
      Event ev;
      std::size_t damaged = 0, holes = 0;
      while (r.next(ev)) {
        if (ev.damage) {
          ++damaged;
          CHECK(*ev.damage == Check::checksum_mismatch);
          CHECK(ev.pos == pos[k]);
        }
        if (ev.skipped_before > 0) {
          ++holes;
          CHECK(ev.pos > pos[k]);
        }
      }
      CHECK(!diag.seen.empty());
      if (what == 0) {
        CHECK(damaged == 1);
        CHECK(holes == 0);
      } else {
        CHECK(holes == 1);
      }
    }
  }
}

namespace {

// Events and findings of reading `b` (as "b.000002") with `threads` (1: none), one line each in
// the order the sink and the loop see them. `slow`: with a framing thread, the consumer sleeps
// 2 ms every 512 events for its first 9,216 (the framer runs ahead, then waits for free batches).
std::vector<std::string> read_log(const std::vector<std::uint8_t>& b, unsigned threads, bool slow = false) {
  struct Log : DiagnosticSink {
    std::vector<std::string>* log = nullptr;
    void report(const Diagnostic& d) override { log->push_back(fmt::format("diag {} {} {}", d.pos, d.check, d.message)); }
  };
  MemoryChain m(b, false, threads);
  Recorder rec;
  Log diag;
  diag.log = &rec.log;
  ChainReader r(m.o, rec, diag);
  Event ev;
  std::size_t n = 0;
  while (r.next(ev)) {
    rec.log.push_back(fmt::format("event {} {}", ev.pos, ev.type_code()));
    if (slow && threads > 1 && ++n < 9 * 1024 && n % 512 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return rec.log;
}

}  // namespace

TEST_CASE("chain reader: with a framing thread, findings come in the order of a one-thread run") {
  // The framing thread reads ahead; what it finds (a checksum failure, a resynchronisation, a
  // torn tail) must still reach the sink between the same events as without it, and from the
  // consuming thread: verify's report is that order.
  const auto orig = slurp(kFix + "/basic/binlogs/mariadb-bin.000002");
  const std::size_t n = orig.size();
  for (int what = 0; what < 4; ++what) {
    CAPTURE(what);
    auto b = orig;
    if (what == 0) b[n / 2] ^= 0x5a;        // a checksum failure in the middle
    if (what == 1) b[n / 3] ^= 0xff;        // likely a header field: resynchronisation
    if (what == 2) b.resize(n - 7);         // a torn tail
    if (what == 3) {                        // all three
      b[n / 3] ^= 0xff;
      b[n / 2] ^= 0x5a;
      b.resize(n - 7);
    }
    const auto one = read_log(b, 1), two = read_log(b, 2);
    CHECK(std::count_if(one.begin(), one.end(), [](const std::string& l) { return l.rfind("diag", 0) == 0; }) > 0);
    CHECK(one == two);
  }
}

TEST_CASE("chain reader: a framing thread many batches ahead or behind hands over every event in order") {
  // The framing thread and the consumer each sleep until the other has handed over half the
  // pool of batches (chain_reader.cpp, EventPipe). Several thousand events, a consumer slow at
  // first (the framer fills the pool and waits for free batches) then fast (it waits for full
  // ones), with and without damage in the middle: the same events and findings, in the same
  // order, as on one thread. The input is a real file's transactions repeated after its header
  // events (positions repeat too; the reader checks neither).
  const auto file = slurp(kFix + "/basic/binlogs/mariadb-bin.000003");
  std::vector<std::pair<std::uint64_t, std::uint8_t>> evs;  // (pos, type) of the file's events
  for (const Event& ev : outer_events(file)) evs.emplace_back(ev.pos, ev.type_code());
  auto first_gtid = std::find_if(evs.begin(), evs.end(), [](const auto& e) { return e.second == 162; });
  REQUIRE(first_gtid != evs.end());
  auto last_xid = std::find_if(evs.rbegin(), evs.rend(), [](const auto& e) { return e.second == 16; });
  REQUIRE(last_xid != evs.rend());
  const std::size_t from = first_gtid->first;
  const std::size_t to = std::next(last_xid.base()) == evs.end() ? file.size() : std::next(last_xid.base())->first;
  const auto per_copy = static_cast<std::size_t>(std::count_if(
      evs.begin(), evs.end(), [&](const auto& e) { return e.first >= from && e.first < to; }));
  REQUIRE(per_copy > 10);
  std::vector<std::uint8_t> big(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(from));
  const std::size_t copies = 12 * 1024 / per_copy + 1;  // well over 8 batches of 1024 events
  for (std::size_t i = 0; i < copies; ++i)
    big.insert(big.end(), file.begin() + static_cast<std::ptrdiff_t>(from), file.begin() + static_cast<std::ptrdiff_t>(to));

  for (int what = 0; what < 2; ++what) {
    CAPTURE(what);
    auto b = big;
    if (what == 1) b[b.size() * 3 / 4] ^= 0x5a;  // damage in a late batch
    const auto one = read_log(b, 1), two = read_log(b, 2, true);
    CHECK(std::count_if(one.begin(), one.end(), [](const std::string& l) { return l.rfind("event", 0) == 0; }) >
          static_cast<std::ptrdiff_t>(12 * 1024));
    CHECK((std::count_if(one.begin(), one.end(), [](const std::string& l) { return l.rfind("diag", 0) == 0; }) > 0) ==
          (what == 1));
    CHECK(one == two);
  }
}
