// `binlogctl replay`: a deterministic discrete-event simulator around the flow-control engine.
//
// An upstream (TiCDC's EventService) reads each input chain (one area) at a rate, per-path cursors
// stopping at transaction boundaries; a data link and a control link with their own delays carry
// events and feedback; the engine (flow_control.h) queues and accounts events; simulated sinks
// (latency, throughput cap, periodic stalls, jitter, hang windows, barriers) acknowledge batches.
// Virtual clock in integer microseconds, one priority queue keyed by (time, insertion order), no
// threads; every random choice comes from a splitmix64 stream seeded by (seed, component, name), so
// the same options and seed give the same trace hash and summary.
//
// Command line → ReplayOptions (the CLI front end, tools/cmd_replay.cpp, maps them 1:1):
//   --policy doc|ticdc|none|blocking    policy                      (parse_policy)
//   --quota BYTES (K/M/G suffixes)      thresholds.quota            (parse_bytes)
//   --hard-limit-ratio R                thresholds.hard_limit_ratio
//   --path-pause F / --path-resume F    thresholds.path_pause / path_resume  (fractions of Q)
//   --area-pause F / --area-resume F    thresholds.area_pause / area_resume
//   --path-by table|schema|hash:N       path_by, path_hash_buckets  (parse_path_by)
//   --sink PATTERN=SPEC (repeatable)    sinks                       (parse_sink_spec)
//   --source-rate N/s|SIZE/s|ts|max     source_rate                 (parse_source_rate)
//   --data-delay DURATION               data_delay_us               (parse_duration_us)
//   --control-delay DURATION            control_delay_us
//   --seed N                            seed
//   --clock virtual|real                clock
//   --timeline FILE                     (CLI: a JsonlTimelineWriter passed to run_replay)
//   --plot FILE.svg                     record_series = true, then write_plot_svg()
//   --format text|json                  (CLI: write_summary_text / write_summary_json)
//   --watchdog DURATION                 watchdog_us
//   --drop-rate FRACTION                drop_rate
// Exit status for the CLI: replay_exit_code(result): 0 invariants hold, 1 a violation.
#pragma once

#include <binlogctl/flow_control.h>

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

// ---- input ----

// Who an event is, in terms that do not move with the run: the transaction's RDP id (assigned
// at the source when it read the transaction, monotonic: binlogctl convert's txn_id for a
// binlog), its GTID ("" for anonymous transactions), the file and the event's start position
// (of its TRANSACTION_PAYLOAD for an inner event).
struct EventIdentity {
  std::uint64_t rdp_id = 0;  // 0: no event concerned
  std::string gtid;
  std::string log_name;
  std::uint64_t pos = 0;
  std::uint32_t inner_index = 0;
  std::uint32_t row = 0;  // --path-by hash:N: first row of a sub-event
};


// One row of a rows event, for --path-by hash:N: the hash of the row's key (what a dispatcher
// per key hashes; BinlogSourceOptions::row_keys says which bytes) and its share of the event's
// size (the bytes of its images).
struct ReplayRow {
  std::uint64_t key_hash = 0;
  std::uint32_t size = 0;
};

// One decoded event as the engine sees it. path_key is "schema.table" for row events and "" for
// the rest (they go to the control path "(control)"); it only has to stay valid until the next
// call of EventSource::next. size is the decoded size in bytes (what TiCDC accounts).
struct ReplayEvent {
  std::uint32_t file_index = 0;   // index of the binlog file in the chain
  std::uint64_t pos = 0;          // start position of the event (or of its TRANSACTION_PAYLOAD)
  std::uint32_t inner_index = 0;  // index inside a TRANSACTION_PAYLOAD (0 for top-level events)
  std::string_view path_key;
  std::uint32_t size = 0;
  bool txn_end = false;            // last event of its transaction
  std::uint64_t source_ts_us = 0;  // commit time at the source
  // The transaction's RDP id, assigned by the source as it reads transactions, monotonic (0:
  // the loader numbers the transactions 1, 2, ...), its GTID ("" when anonymous) and the
  // file's name (""), all valid until the next call of next().
  std::uint64_t txn_id = 0;
  std::string_view gtid;
  std::string_view log_name;
  // The rows of a rows event, in event order, when the source hashes keys (valid until the
  // next call of next()); their sizes add up to `size`. Only --path-by hash:N looks at them:
  // the event is split into one sub-event per bucket its rows hash to. Empty: the event is
  // one unit, hashed by its path_key.
  std::span<const ReplayRow> rows;
};

// A break in the source's own context (RDP: each item carries what verifies the next one): a
// finding of verify's chain checks (lib/src/verify) on the binlog read (check: log_pos_mismatch,
// file_sequence_gap, rotate_mismatch, previous_gtids_mismatch, gtid_list_mismatch,
// gtid_duplicate), where it is (file, offset) and what it says. The upstream meets it when it
// reads past it: a source_context violation.
struct SourceBreak {
  std::uint32_t area = 0;   // ReplayInput: the area (source) it belongs to
  std::uint32_t event = 0;  // the source: events next() had returned when it was found;
                            // ReplayInput: global index of the first event after it (or the
                            // area's end_event)
  std::string check;
  std::string log_name;
  std::uint64_t pos = 0;
  std::string message;
};

// A pull source. The simulator reads it once, at load time, into a compact ReplayInput, and
// re-delivers from there after resets (the analog of TiCDC's event store), so no seek is needed.
class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual bool next(ReplayEvent& ev) = 0;
  // The breaks of the source's context found so far, in the order found (none for sources
  // that carry no context to check).
  virtual std::span<const SourceBreak> source_breaks() const { return {}; }
};

// Events held in memory (tests, small tools).
class VectorEventSource : public EventSource {
 public:
  void add(std::string_view path_key, std::uint32_t size, bool txn_end, std::uint64_t source_ts_us,
           std::uint32_t file_index = 0, std::uint64_t pos = 0, std::uint32_t inner_index = 0);
  // A rows event with its rows (their sizes make the event's size).
  void add_rows(std::string_view path_key, std::vector<ReplayRow> rows, bool txn_end,
                std::uint64_t source_ts_us, std::uint32_t file_index = 0, std::uint64_t pos = 0,
                std::uint32_t inner_index = 0);
  bool next(ReplayEvent& ev) override;
  void rewind() noexcept { next_ = 0; }
  std::size_t size() const noexcept { return events_.size(); }

 private:
  std::deque<std::string> keys_;
  std::deque<std::vector<ReplayRow>> rows_;
  std::vector<ReplayEvent> events_;
  std::size_t next_ = 0;
};

// A seeded synthetic binlog: many small transactions over `tables` tables of one schema, a few
// large ones, positions laid out like a real file (end_log_pos grows by the event size).
struct SyntheticSourceOptions {
  std::uint64_t seed = 1;
  std::string schema = "shop";
  std::uint32_t tables = 12;
  std::uint32_t transactions = 1000;
  std::uint32_t min_rows = 1, max_rows = 6;  // rows (events) per small transaction
  std::uint32_t min_row_bytes = 80, max_row_bytes = 600;
  std::uint32_t large_txn_every = 250;  // every Nth transaction is large (0: never)
  std::uint32_t large_txn_rows = 400;
  std::uint32_t tables_per_txn = 2;      // distinct tables touched by a small txn
  std::uint64_t txn_interval_us = 1000;  // commit timestamps advance by this
  std::vector<double> table_weights;     // optional skew (index = table), default uniform
  std::uint32_t file_size = 64u << 20;   // rotate to the next file index past this
};

class SyntheticEventSource : public EventSource {
 public:
  explicit SyntheticEventSource(SyntheticSourceOptions o);
  bool next(ReplayEvent& ev) override;
  const std::string& table_name(std::uint32_t t) const { return names_[t]; }

 private:
  void start_txn();
  SyntheticSourceOptions o_;
  std::vector<std::string> names_;
  std::vector<double> cumulative_;
  std::uint64_t rng_;
  std::uint32_t txn_ = 0;
  std::uint32_t rows_left_ = 0;
  std::vector<std::uint32_t> txn_tables_;
  std::uint32_t file_index_ = 1;
  std::uint64_t pos_ = 4;
  std::uint32_t inner_ = 0;
  std::uint64_t ts_ = 0;
};

enum class PathBy : std::uint8_t { table, schema, hash };

// Compact, immutable, reusable input: load once, run many times (property sweeps, benchmarks).
struct ReplayPosition {
  std::uint32_t file_index = 0;
  std::uint32_t inner_index = 0;
  std::uint64_t pos = 0;
  // hash:N, a sub-event of a rows event split by key: the index of its first row in the event
  // (its sub-events share file, pos and inner index); 0 otherwise.
  std::uint32_t row = 0;
};
struct ReplayInputEvent {
  std::uint32_t path = 0;      // path index
  std::uint32_t path_seq = 0;  // index among the events of its path
  std::uint32_t size = 0;
  std::uint32_t txn = 0;   // transaction ordinal within its area
  std::uint8_t flags = 0;  // kTxnEnd | kPathTxnEnd
};
inline constexpr std::uint8_t kTxnEnd = 1;      // last event of its transaction
inline constexpr std::uint8_t kPathTxnEnd = 2;  // last event of its transaction on its path

// A transaction's identity: its RDP id and its GTID (gtid_text[gtid_begin, +gtid_len)).
struct ReplayTxn {
  std::uint64_t rdp_id = 0;
  std::uint32_t gtid_begin = 0, gtid_len = 0;
};

struct ReplayInput {
  struct Area {
    std::uint32_t first_event = 0, end_event = 0;  // global event indexes [first, end)
    std::uint32_t transactions = 0;
    std::vector<std::uint32_t> paths;
    std::vector<ReplayTxn> txns;          // per transaction ordinal
    std::vector<std::string> file_names;  // per ReplayPosition::file_index ("" unknown)
  };
  std::vector<ReplayInputEvent> events;  // all areas, area by area, source order
  std::vector<std::uint64_t> source_ts_us;
  std::vector<ReplayPosition> positions;
  std::vector<std::string> path_names;
  std::vector<std::uint32_t> path_area;
  std::vector<std::vector<std::uint32_t>> path_events;  // per path: global event indexes
  std::vector<Area> areas;
  std::vector<SourceBreak> source_breaks;  // all areas, in area and event order
  std::string gtid_text;                   // the GTIDs of ReplayTxn
  std::uint32_t max_event_size = 0;
  std::uint64_t total_bytes = 0;
};

// One area per source. path_by / buckets group events into paths (names "schema.table", "schema",
// or "#k" for hash bucket k; events with an empty key go to "(control)"). With hash, an event
// that carries rows is split: its rows go to bucket key_hash % buckets, and each bucket they
// reach gets one sub-event (in the order of its first row) with the sum of its rows' sizes, the
// event's position plus the index of that first row, and the event's transaction (the last
// sub-event ends it when the event did). An event without rows goes whole to the bucket of a
// hash of its path_key.
ReplayInput load_replay_input(std::span<EventSource* const> sources, PathBy by = PathBy::table,
                              std::uint32_t hash_buckets = 0);
ReplayInput load_replay_input(EventSource& source, PathBy by = PathBy::table,
                              std::uint32_t hash_buckets = 0);

// The identity of event g (global index) of `in`.
EventIdentity identity_of(const ReplayInput& in, std::uint32_t g);
// "RDP id 17, GTID 0-1-17, mariadb-bin.000003 pos 1234" (inner, row when not 0).
std::string describe(const EventIdentity& id);

// ---- sinks ----

struct SinkModel {
  std::uint64_t latency_us = 0;       // latency:5ms   fixed completion latency per batch
  std::uint64_t cap_bytes_per_s = 0;  // cap:2MB/s     throughput cap (0: none), serial per path
  std::uint64_t stall_period_us = 0;  // stall:30s/5s  no completion in the last 5 s of every 30 s
  std::uint64_t stall_us = 0;
  std::uint64_t jitter_us = 0;     // jitter:2ms    uniform [0, 2ms] added per batch (seeded)
  std::uint64_t hang_from_us = 0;  // hang:10s-70s  completions withheld in [10 s, 70 s)
  std::uint64_t hang_to_us = 0;
  std::uint32_t barrier_every_txns = 0;  // barrier:K     every K txns of the area, all paths meet
};

struct SinkSpec {
  std::string pattern;  // ECMAScript regex, must match the whole path name
  SinkModel model;
};

// "shop\..*=latency:5ms,cap:2MB/s,stall:30s/5s,jitter:2ms,hang:10s-70s,barrier:50".
// A spec without '=' applies to every path (pattern ".*"). On error returns nullopt and sets error.
std::optional<SinkSpec> parse_sink_spec(std::string_view text, std::string& error);
// The largest values the parsers accept (larger ones are refused, never wrapped): 720 hours,
// 2^50 bytes (1048576G), 10^12 events per second.
inline constexpr std::uint64_t kMaxDurationUs = 720ull * 3600 * 1'000'000;
inline constexpr std::uint64_t kMaxBytes = 1ull << 50;
inline constexpr double kMaxEventRate = 1e12;
// "250us", "5ms", "2s", "1.5m", "1h"; a bare number is milliseconds. At most kMaxDurationUs.
std::optional<std::uint64_t> parse_duration_us(std::string_view text);
// "1048576", "512K", "64M", "1G" (also KB/KiB/MB/MiB/GB/GiB; all binary). At most kMaxBytes.
std::optional<std::uint64_t> parse_bytes(std::string_view text);
// "table", "schema", "hash:N".
bool parse_path_by(std::string_view text, PathBy& by, std::uint32_t& buckets);

struct SourceRate {
  enum class Kind : std::uint8_t { unlimited, events, bytes, timestamps } kind = Kind::unlimited;
  double per_second = 0;
};
// "max" (as fast as credit allows), "20000/s" or "20000ev/s" (events), "2MB/s" / "512K/s"
// (bytes), "ts" (at the source commit timestamps). A rate must be > 0 ("0" is refused: "max" is
// the unlimited rate).
std::optional<SourceRate> parse_source_rate(std::string_view text);

// ---- options and results ----

enum class ClockMode : std::uint8_t { virtual_time, real_time };

struct ReplayOptions {
  Policy policy = Policy::doc;
  FlowThresholds thresholds;
  PathBy path_by = PathBy::table;  // used by the loaders, not by run_replay on a loaded input
  std::uint32_t path_hash_buckets = 0;
  std::vector<SinkSpec> sinks;  // first match wins; unmatched paths use default_sink
  SinkModel default_sink;       // instant sink
  SourceRate source_rate;
  std::uint64_t data_delay_us = 1000, data_jitter_us = 0;
  std::uint64_t control_delay_us = 10'000, control_jitter_us = 0;
  std::uint64_t seed = 1;
  ClockMode clock = ClockMode::virtual_time;
  std::uint64_t watchdog_us = 30'000'000;
  double drop_rate = 0;  // fraction of arriving events dropped (S9)
  // The engine's markers (FlowController::set_drop_markers). Off: a discard leaves nothing
  // behind and an injected drop is lost on the data link; the dispatcher finds each gap in the
  // sequence (the upstream's resolved signal every report interval carries the sequence it
  // has sent, for a gap at the end of a path).
  bool drop_markers = true;
  // Model constants (TiCDC values where they exist).
  std::uint64_t report_interval_us = 1'000'000;    // ticdc congestion report period
  std::uint64_t tick_us = 100'000;                 // engine timers, watchdog, stuck-paused check
  std::uint64_t sample_interval_us = 100'000;      // timeline / plot memory samples
  std::uint64_t upstream_tick_us = 1000;           // upstream step period
  std::uint64_t upstream_step_bytes = 256u << 10;  // live reading cap per step (256 MiB/s)
  // Catch-up scans of lagging paths (after a pause, a credit stall or a reset) per step, all
  // paths together, and per path (then up to the end of the transaction). 0 = scaled to the
  // quota like TiCDC's defaults: Q/4096 (>= 8 KiB; 256 KiB per ms, i.e. its 256 MiB/s scan
  // limiter, for the 1 GiB default quota) and Q/16384 (>= 2 KiB).
  std::uint64_t scan_step_bytes = 0;
  std::uint64_t scan_quantum_bytes = 0;
  std::uint32_t batch_max_events = 4096;
  std::uint64_t batch_max_bytes = 1u << 20;
  std::uint64_t drain_timeout_us = 3'600'000'000ull;  // after the source ends
  // Tests only: a deliberate engine defect (flow_control.h) that the invariant checks must catch.
  EngineFault engine_fault = EngineFault::none;
  std::uint32_t engine_fault_at = 1;
  bool record_series = false;  // keep samples and marks in the result (for the plot)
  bool stop_on_violation = true;
  std::size_t trace_lines = 40;  // trace kept for a violation report
};

struct LatencySummary {
  double p50 = 0, p95 = 0, p99 = 0, max = 0;  // milliseconds
};

struct PathStats {
  std::string name;
  std::uint32_t area = 0;
  std::uint64_t source_events = 0, delivered = 0, redelivered = 0, bytes = 0;
  PathCounters counters;
  LatencySummary latency_ms;
};

// A pause still open when the run ended, and why it is (not) a violation.
struct OpenPause {
  std::uint32_t area = 0;
  std::string path;  // empty: the area itself
  std::uint64_t since_us = 0, last_feedback_us = 0, pending = 0;
  std::uint64_t resume_due_us = 0;  // when the lazy resume would have been sent
  bool violation = false;           // below its resume threshold past the feedback interval
  std::string why;
};

struct AreaStats {
  std::uint64_t source_events = 0, delivered = 0;
  std::uint64_t peak_memory = 0;  // peak pending bytes (what the quota bounds)
  std::uint64_t peak_time_us = 0;
  // The peak against the quota and the hard limit, and what let the event that made the peak
  // in: "control delay" (sent before a pause or a credit report reached the upstream),
  // "unsplittable transaction" (a scan stops only at a transaction boundary), "burst" (sent
  // while nothing was throttled), "no flow control" (none), "checked before the append" (ticdc
  // tests H before it appends, so one event can cross it), "oversized transaction let through
  // alone" (doc).
  std::uint64_t over_quota = 0, over_hard_limit = 0;
  std::string peak_cause;
  // doc, a peak above H: the transaction let through alone whose bytes it was (the one holding
  // the most at the peak: an event of it, rdp_id 0 when none) and how many of the peak's
  // bytes were its own (the rest, at most H, belonged to other transactions).
  EventIdentity peak_transaction;
  std::uint64_t peak_transaction_bytes = 0;
  std::uint64_t peak_resident = 0;      // pending + in flight on the data link + in sinks
  std::uint64_t reader_blocked_us = 0;  // blocking policy: time the reader was blocked
  std::uint64_t time_above_pause_us = 0;
  AreaCounters counters;
  std::uint64_t source_end_us = 0, drain_us = 0;
};

// The option values that make no sense (a usage error): "" when all are valid, otherwise which
// option is wrong, its value and why (--hard-limit-ratio <= 0, pause/resume fractions <= 0 or a
// resume above its pause, --drop-rate outside [0, 1), --watchdog 0, ...).
std::string validate_replay_options(const ReplayOptions& o);

struct Violation {
  std::string check;  // memory_bound, exactly_once, in_order, drained, protocol, deadlock,
                      // drain_timeout, pause_alternation, stuck_paused, accounting,
                      // source_context, path_pause, area_pause, resume_threshold
  std::uint64_t time_us = 0;
  std::string message;
  std::vector<std::string> trace;  // the last actions before the violation
  std::string path;                // the path concerned ("" when none)
  EventIdentity at;                // the event concerned (rdp_id 0 when none)
  // The file and offset the violation is about: the event's, or for source_context where the
  // context breaks ("" when none).
  std::string log_name;
  std::uint64_t pos = 0;
};

struct ReplayMark {
  std::uint64_t time_us = 0;
  ActionKind kind = ActionKind::pause_path;
  std::uint32_t area = 0;
  std::uint32_t path = kNoPath;
  std::uint64_t area_pending = 0;  // circuit_break / release_path: area pending just before
};

// The area going above the hard limit with an append (doc: the transaction let through alone).
struct ReplayAdmission {
  std::uint64_t time_us = 0;
  std::uint32_t area = 0;
  std::uint64_t held = 0;     // bytes held after the append
  std::uint64_t rdp_id = 0;   // the appended event's transaction
};

struct ReplaySeries {
  std::vector<std::uint64_t> time_us;
  std::vector<std::vector<std::uint64_t>> area_pending;  // [area][sample]
  // [area][sample]: the maximum pending since the previous sample (the envelope: what a
  // sample every 100 ms misses, e.g. the moment a circuit breaker fires)
  std::vector<std::vector<std::uint64_t>> area_max;
  std::vector<std::uint32_t> top_paths;                  // by peak pending
  std::vector<std::vector<std::uint64_t>> path_pending;  // [i of top_paths][sample]
  std::vector<std::vector<std::uint64_t>> path_max;      // [i of top_paths][sample] envelope
  std::vector<ReplayMark> marks;
  std::vector<ReplayAdmission> admissions;
  bool truncated = false;
};

struct ReplayResult {
  Policy policy = Policy::doc;
  std::uint64_t seed = 0;
  std::uint64_t source_events = 0, delivered = 0, redelivered = 0;
  std::uint64_t source_bytes = 0;
  std::uint64_t pauses = 0, resumes = 0, flaps = 0;  // path + area
  std::uint64_t circuit_breaks = 0, releases = 0, drop_markers = 0, resets = 0;
  std::uint64_t stale_discarded = 0, discarded = 0;
  std::uint64_t peak_memory = 0, peak_resident = 0, quota = 0, hard_limit = 0;
  FlowThresholds thresholds;  // the run's (the plot draws them)
  LatencySummary latency_ms;
  std::uint64_t end_time_us = 0, source_end_us = 0, drain_us = 0;
  std::uint64_t trace_hash = 0;
  bool ok = true;
  std::vector<Violation> violations;
  std::vector<PathStats> paths;
  std::vector<AreaStats> areas;
  std::vector<OpenPause> open_pauses;
  ReplaySeries series;  // filled when ReplayOptions::record_series
  std::uint64_t sim_steps = 0;
};

// ---- timeline ----

struct TimelineAction {
  std::uint64_t time_us = 0;
  std::string_view kind;  // to_string(ActionKind), or "deadlock", "violation", "reset_applied"
  std::uint32_t area = 0;
  std::string_view path;  // empty for area actions
  std::uint32_t epoch = 0;
  std::uint64_t seq = 0, count = 0, bytes = 0;
  std::uint64_t area_pending = 0;
  std::uint64_t pending_before = 0;  // circuit_break / release_path: area pending just before
  std::string_view detail;           // reset: what the dispatcher detected
  EventIdentity at;                  // the event concerned (rdp_id 0: none)
};
struct TimelinePathSample {
  std::string_view path;
  std::uint64_t pending = 0;
  bool paused = false;
};
struct TimelineSample {
  std::uint64_t time_us = 0;
  std::uint32_t area = 0;
  std::uint64_t pending = 0, resident = 0, delivered = 0;
  bool paused = false;
  std::span<const TimelinePathSample> paths;  // paths with pending bytes
  EventIdentity reading;  // the next event the upstream reads (rdp_id 0: it read them all)
};

class TimelineWriter {
 public:
  virtual ~TimelineWriter() = default;
  virtual void action(const TimelineAction& a) = 0;
  virtual void sample(const TimelineSample& s) = 0;
};

// JSON Lines: {"t_ms":..,"kind":"pause_path","area":0,"path":"shop.orders",...} per action and
// {"t_ms":..,"kind":"sample","area":0,"pending":..,"resident":..,"paths":{"shop.orders":..}}.
class JsonlTimelineWriter : public TimelineWriter {
 public:
  explicit JsonlTimelineWriter(std::ostream& out) : out_(out) {}
  void action(const TimelineAction& a) override;
  void sample(const TimelineSample& s) override;

 private:
  std::ostream& out_;
};

// ---- running ----

ReplayResult run_replay(const ReplayOptions& opts, const ReplayInput& input,
                        TimelineWriter* timeline = nullptr);
// Loads `source` (one area) with opts.path_by, then runs.
ReplayResult run_replay(const ReplayOptions& opts, EventSource& source,
                        TimelineWriter* timeline = nullptr);
ReplayResult run_replay(const ReplayOptions& opts, std::span<EventSource* const> sources,
                        TimelineWriter* timeline = nullptr);

inline int replay_exit_code(const ReplayResult& r) noexcept { return r.ok ? 0 : 1; }

// Property sweep (the 1,000-seed test): for each seed in [first_seed, first_seed + seeds) run
// `base` with that seed and, when `randomize`, seed-derived perturbations (quota, per-path sink
// latency/cap/stall/jitter/hang, link delays; never barriers). Every run must hold all
// invariants; every `determinism_every`-th seed is run twice and must give the same trace hash.
struct PropertyReport {
  std::uint32_t runs = 0, failures = 0;
  std::uint64_t events_delivered = 0, resets = 0, pauses = 0, circuit_breaks = 0, releases = 0;
  std::vector<std::string> messages;  // the first failures (seed, check, message)
  bool ok() const noexcept { return failures == 0; }
};
PropertyReport check_replay_properties(const ReplayInput& input, const ReplayOptions& base,
                                       std::uint64_t first_seed, std::uint32_t seeds,
                                       bool randomize = true, std::uint32_t determinism_every = 10);

// ---- output ----

void write_summary_text(std::ostream& out, const ReplayResult& r);
nlohmann::ordered_json summary_json(const ReplayResult& r);         // the object under "summary"
void write_summary_json(std::ostream& out, const ReplayResult& r);  // {"summary": {...}}\n

struct PlotOptions {
  std::uint32_t width = 1100, height = 560;
  std::uint32_t top_paths = 6;
  std::string title;
};
void write_plot_svg(std::ostream& out, const ReplayResult& r, const PlotOptions& o = {});

}  // namespace binlogctl
