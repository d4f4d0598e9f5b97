// Runs every decoder a consumer could reach over arbitrary bytes (robustness test, fuzzer).
#pragma once

#include "chunky_stream.h"

#if defined(BINLOGCTL_HAVE_CANAL)
#  include <binlogctl/canal.h>
#endif
#include <binlogctl/chain.h>
#include <binlogctl/convert.h>
#include <binlogctl/coverage.h>
#include <binlogctl/crypto.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/schema_report.h>
#include <binlogctl/sql.h>
#include <binlogctl/stats.h>
#include <binlogctl/verify.h>

#include "dump/describe.h"
#include "dump/info.h"
#include "events/events.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace binlogctl::testing {

struct Count : DiagnosticSink {
  std::size_t n = 0;
  void report(const Diagnostic&) override { ++n; }
};

// The public test key of the encrypted fixture set (testdata/mariadb-10.11/encrypted/keys.txt),
// so that its files and their mutations are decrypted, after a key id 1 that is wrong for them
// (tried first on each file, as with key files of two rotations).
inline const KeyRing& fuzz_keys() {
  static const KeyRing* keys = [] {
    auto* k = new KeyRing;
    k->parse("# another rotation\n1;00112233445566778899aabbccddeeff\n", "other-keys.txt");
    k->parse("1;8187c282dcf7a37478562c3d9659b8a79553bbc191d15203fcac3ff4702719bd\n", "fixture-keys.txt");
#ifdef BINLOGCTL_SOURCE_DIR
    // The keyring of the MySQL 8.0 encrypted file (testdata/mysql-8-encrypted), so that it and
    // its mutations are decrypted.
    try {
      k->load_mysql_keyring(std::string(BINLOGCTL_SOURCE_DIR) + "/testdata/mysql-8-encrypted/keyring");
    } catch (const KeyFileError&) {
    }
#endif
    return k;
  }();
  return *keys;
}

// Walks everything a consumer could ask for, reading through the (decrypting) input seam and the
// chain reader (as a mapped file, or as a stream when `as_stream`: read a few bytes at a time, in
// sizes drawn from the input's length, so that the stream's buffer is refilled and moved under
// the framing and resynchronisation works on a window that moves); returns the number of
// top-level events seen.
inline std::size_t exercise(Bytes bytes, bool as_stream = false) {
  std::unique_ptr<InputSet> inputs;
  if (as_stream)
    inputs = std::make_unique<ChunkyInputs>("fuzz", bytes, bytes.size() * 0x9e3779b97f4a7c15ull, 1 + bytes.size() % 61);
  else
    inputs = memory_inputs({{"fuzz", bytes}}, false);
  // Through the decrypting seam: encrypted inputs are decrypted, streams always go through it.
  auto decrypting = decrypting_inputs(*inputs, fuzz_keys());
  Count diag;
  ChainHooks hooks;
  ChainOptions o;
  o.input_set = decrypting.get();
  o.progress = ProgressMode::never;
  o.threads = 1;
  ChainReader reader(o, hooks, diag);
  Event ev;
  std::string out, body;
  InfoScratch scratch;
  std::size_t n = 0;
  while (reader.next(ev)) {
    if (ev.raw.size() != ev.header.event_size || ev.body.size() > ev.raw.size()) __builtin_trap();
    out.clear();
    (void)append_info(out, ev, scratch);
    if (ev.is_inner()) continue;
    ++n;
    body.clear();
    JsonWriter w(body);
    w.begin_object();
    (void)describe_body(w, ev, scratch);
    if (ev.fde != nullptr) (void)comparable_event(ev.raw, *ev.fde);  // serve --upstream's failover compare
  }
  return n;
}

// The row consumers run over the same input (fuzz_convert): convert --format json, stats
// --format json, convert --format sql and --flashback, convert --format canal-proto and
// canal-json (when built with Canal: the Canal value renderers, DDL typing, flat JSON, protobuf),
// verify --format json and verify --cover-from (the input as two chains, so that their copies of
// each transaction are compared), schema --format json, without and with --history (schema
// history following the DDL, the versions and removals of each table, definitions from
// TABLE_MAPs), and replay --format json (the chain as the flow-control engine's source: context
// checks, rows hashed by key into paths, then the simulation; see run_consumer). All on the
// calling thread (no reading or rendering thread), checksums off where the option exists so that
// damage reaches the row-image walkers and every column decoder (verify always checks them:
// damage is what it is for), and no file written (flashback never spills: a fuzz input is far
// below spill_bytes).
enum class Consumer {
  convert_json,
  stats_json,
  sql,
  flashback,
  canal_proto,
  canal_json,
  verify,
  cover,
  schema,
  schema_history,
  replay
};
inline constexpr Consumer kConsumers[] = {Consumer::convert_json, Consumer::stats_json, Consumer::sql,
                                          Consumer::flashback,
#if defined(BINLOGCTL_HAVE_CANAL)
                                          Consumer::canal_proto,  Consumer::canal_json,
#endif
                                          Consumer::verify,       Consumer::cover,
                                          Consumer::schema,       Consumer::schema_history,
                                          Consumer::replay};
// The command line `c` stands for, for a failing test's report.
inline const char* consumer_name(Consumer c) {
  switch (c) {
    case Consumer::convert_json: return "convert --format json";
    case Consumer::stats_json: return "stats --format json";
    case Consumer::sql: return "convert --format sql";
    case Consumer::flashback: return "convert --flashback";
    case Consumer::canal_proto: return "convert --format canal-proto";
    case Consumer::canal_json: return "convert --format canal-json";
    case Consumer::verify: return "verify --format json";
    case Consumer::cover: return "verify --cover-from";
    case Consumer::schema: return "schema --format json";
    case Consumer::schema_history: return "schema --format json --history";
    case Consumer::replay: return "replay --format json";
  }
  return "?";
}

// Whether `c`'s output is JSON Lines (every line one JSON value, each line ended).
inline bool writes_json_lines(Consumer c) {
  switch (c) {
    case Consumer::sql:          // SQL statements
    case Consumer::flashback:    // SQL statements
    case Consumer::canal_proto:  // protobuf messages
      return false;
    case Consumer::convert_json:
    case Consumer::stats_json:
    case Consumer::canal_json:
    case Consumer::verify:
    case Consumer::cover:
    case Consumer::schema:
    case Consumer::schema_history:
    case Consumer::replay:  // one line: {"summary": {...}}
      return true;
  }
  return true;
}

// replay --format json --path-by hash:4 --quota 4K --sink latency:1ms,cap:2MB/s
// --no-verify-checksum --progress never, run as tools/cmd_replay.cpp runs it: the chain loaded as
// the engine's source (with its context checks), simulated on the virtual clock, the summary
// written; exit status 2 when the input is unreadable, 1 for a violation or a finding reported on
// `err`. The default policy (doc). The quota is small so that paths and the area pause, and the
// circuit breaker fires, on a fuzz input's few KiB; the sink drains them in at most about a
// second of virtual time (a few thousand simulation steps, milliseconds). hash:4 makes the
// source decode every row image and hash its key (primary keys from TABLE_MAP metadata or from
// the schema history that its DDL builds), which --path-by table never looks at.
inline int run_replay_consumer(InputSet& inputs, std::FILE* out, std::FILE* err) {
  ReplayOptions o;
  o.thresholds.quota = 4u << 10;
  o.path_by = PathBy::hash;
  o.path_hash_buckets = 4;
  std::string bad;
  o.sinks.push_back(*parse_sink_spec("latency:1ms,cap:2MB/s", bad));
  BinlogSourceOptions so;
  so.chain.input_set = &inputs;
  so.chain.progress = ProgressMode::never;
  so.chain.verify_checksums = false;
  so.row_keys = true;
  StderrDiagnostics diag(err);
  BinlogEventSource source(so, diag);
  const ReplayInput input = load_replay_input(source, o.path_by, o.path_hash_buckets);
  if (source.unreadable()) return 2;
  const ReplayResult r = run_replay(o, input);
  std::ostringstream summary;
  write_summary_json(summary, r);
  const std::string text = summary.str();
  std::fwrite(text.data(), 1, text.size(), out);
  const int rc = replay_exit_code(r);
  return rc != 0 ? rc : (diag.errors() > 0 ? 1 : 0);
}

// Runs `c` over `inputs` (read from the start each time), writing to `out` and `err`; returns its
// exit status (2 for a Canal consumer in a build without Canal). `render_threads` (json, sql,
// Canal; tests) renders beside the decoding thread, in batches made small so that there are many
// (the others have no rendering thread and ignore it).
inline int run_consumer(Consumer c, InputSet& inputs, std::FILE* out, std::FILE* err, unsigned render_threads = 0) {
  if (c == Consumer::stats_json) {
    StatsOptions so;
    so.input_set = &inputs;
    so.format = OutputFormat::json;
    so.progress = ProgressMode::never;
    so.verify_checksums = false;
    so.threads = 1;
    return run_stats(so, out, err);
  }
  if (c == Consumer::verify) {
    VerifyOptions vo;
    vo.input_set = &inputs;
    vo.format = OutputFormat::json;
    vo.progress = ProgressMode::never;
    vo.config.closed = true;  // the last file's end is checked too
    return run_verify(vo, out, err);
  }
  if (c == Consumer::cover) {
    CoverOptions co;
    co.archives = {"chain-a", "chain-b"};
    co.archive_sets = {&inputs, &inputs};
    co.format = OutputFormat::json;
    co.progress = ProgressMode::never;
    return run_cover(co, out, err);
  }
  if (c == Consumer::schema || c == Consumer::schema_history) {
    SchemaReportOptions so;  // schema --format json [--history] --no-checksum --progress never
    so.input_set = &inputs;
    so.format = OutputFormat::json;
    so.history = c == Consumer::schema_history;
    so.progress = ProgressMode::never;
    so.verify_checksums = false;
    so.threads = 1;
    return run_schema_report(so, out, err);
  }
  if (c == Consumer::replay) return run_replay_consumer(inputs, out, err);
  ConvertOptions o;
  o.input_set = &inputs;
  o.progress = ProgressMode::never;
  o.verify_checksums = false;
  o.render_threads = render_threads;
  o.read_threads = 1;
  const std::size_t batch_bytes = 512;  // with render_threads
  if (render_threads > 0) o.render_batch_bytes = batch_bytes;
  if (c == Consumer::convert_json) return run_convert(o, out, err);
  if (c == Consumer::canal_proto || c == Consumer::canal_json) {
#if defined(BINLOGCTL_HAVE_CANAL)
    CanalOptions co;
    co.format = c == Consumer::canal_json ? CanalFormat::json : CanalFormat::proto;
    co.timezone = "+08:00";  // TIMESTAMP values moved off UTC
    co.batch_size = 3;       // many batches (flat message ids) even on small inputs
    co.render_batch_bytes = batch_bytes;
    return run_canal_convert(o, co, out, err);
#else
    return 2;
#endif
  }
  SqlOptions sql;
  sql.flashback = c == Consumer::flashback;
  sql.spill_bytes = std::numeric_limits<std::size_t>::max() / 2;
  sql.render_batch_bytes = batch_bytes;
  return run_sql_convert(o, sql, out, err);
}

}  // namespace binlogctl::testing
