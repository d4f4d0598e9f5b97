// `binlogctl serve --upstream`: the relay's core. One upstream stream (fetch, writing the
// directory that serve serves), many replicas of different speeds, one shared in-memory tail of
// the events fetch just received, and the flow-control engine of `replay` (flow_control.h, the
// same FlowController: this is its second driver) keeping that memory bounded.
//
// Mapping onto the engine (../shared/seeds/001_*):
//   area  = the tail; path = one replica's queue (the tail events it has yet to take).
//   - Every event fetch receives is stored once (in chunks shared by all replicas) and appended
//     (on_event) to the path of each replica that is being fed; a replica's session takes its
//     events one at a time (pop_batch) and acknowledges each when it asks for the next one
//     (batch_done), by which time the previous one is in the session's output buffer.
//   - A paused path stops being fed. The replica empties its queue, then reads the files (which
//     fetch keeps writing) from its position; once the path has resumed and the replica is near
//     the live end (at a position the tail still holds, less than the path's pause threshold
//     behind the newest event), it is fed again from there (re-attached): re-attaching never
//     pauses the path at once.
//   - The area paused holds fetch at its next transaction boundary (FetchObserver::at_boundary):
//     it reads nothing more from the upstream (TCP back-pressure) until the area resumes. While
//     the area stays paused with no byte released for `stall_release_us`, the fullest paused path
//     is released (FlowController::release_path): no producer append would ever trip the breaker
//     otherwise, and one stalled replica would stop every other one.
//   - The circuit breaker (an append that would take the area above the hard limit) discards the
//     longest queue; that path resets, and its replica reads the files from its next position
//     (the seed's stream rebuild), then re-attaches.
//   - The dispatcher's "non-sequential data" check is the position check: a replica asks for the
//     event at its position (file, offset); the tail hands out its queue's head only when the head
//     is that event, and otherwise sends the replica to the files. No event can be lost,
//     duplicated or reordered: every byte a replica gets is the byte at the position it asked for.
//
// Memory: an event's bytes are held while a replica's queue holds it, while fetch has not written
// it to the file yet (fetch writes at transaction boundaries or every 1 MiB), and while it is less
// than the path pause threshold behind the newest event (where a replica may be fed again from).
// The queues are at most the area's pending bytes (each queue is accounted on its own, so the sum
// over-counts the shared storage); the bytes live in chunks, so add up to two chunks per queue.
//
// Thread-safe: fetch's thread calls the FetchObserver side, each session its replica's side; one
// mutex. Time comes from the clock given (microseconds; tests inject one).
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/fetch_observer.h>
#include <binlogctl/flow_control.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

// Deliberate relay defects for the tests that show what a rule prevents.
enum class RelayFault : std::uint8_t {
  none,
  // The stream reset is disabled: after its queue was discarded, a replica is fed again at once
  // from the next event received, and takes its queue's head whatever position it asked for.
  no_stream_reset,
};

struct RelaySettings {
  Policy policy = Policy::doc;
  FlowThresholds thresholds;
  // The area paused this long with no byte released: the fullest paused path is released.
  std::uint64_t stall_release_us = 2'000'000;
  std::size_t chunk_bytes = 32 * 1024;  // events are stored in chunks of this size (or one event)
  RelayFault fault = RelayFault::none;
};

// One replica, as --status-file shows it.
struct RelayReplicaStatus {
  std::uint32_t id = 0;
  bool fed = false;             // new events go to its queue
  bool paused = false;          // its path is paused
  std::string file;             // the position it last asked for
  std::uint64_t position = 0;
  std::uint64_t lag_bytes = 0;  // bytes received from the upstream after its position
  std::uint64_t queue_bytes = 0, queue_events = 0, peak_queue_bytes = 0;
  std::uint64_t tail_events = 0;  // events it took from the tail (the rest came from the files)
  std::uint32_t attaches = 0;     // times it was fed again after reading the files
  PathCounters counters;          // pauses, resumes, circuit_breaks, releases, resets ...
};

struct RelayStatus {
  std::uint64_t pending = 0;         // the area's accounted bytes (sum of the queues)
  std::uint64_t held_bytes = 0;      // bytes of the chunks alive (the real memory of the tail)
  std::uint64_t peak_held_bytes = 0;
  std::uint64_t quota = 0, path_pause_bytes = 0, path_resume_bytes = 0, area_pause_bytes = 0,
                area_resume_bytes = 0, hard_limit_bytes = 0;
  bool paused = false;               // the area: fetch is held
  AreaCounters counters;
  std::uint64_t events = 0, bytes = 0;  // received from the upstream
  std::uint64_t upstream_waits = 0;     // times fetch was held at a boundary
  std::string upstream;              // the server fetch reads (host:port or socket)
  std::uint64_t failovers = 0;       // times fetch went on with another server of --upstream
  std::string file;                  // where the upstream stream is
  std::uint64_t position = 0;
  std::vector<RelayReplicaStatus> replicas;
};

// What happened, for --timeline (the engine's actions with the relay's time).
struct RelayRecord {
  std::uint64_t time_us = 0;
  FlowAction action;
  std::uint32_t replica = kNoPath;  // the replica whose path the action concerns
  std::uint64_t area_pending = 0;
  std::uint64_t held_bytes = 0;
};

class RelayTail final : public FetchObserver {
 public:
  using Clock = std::function<std::uint64_t()>;  // microseconds, monotonic
  explicit RelayTail(const RelaySettings& settings, Clock clock = {});
  ~RelayTail() override;
  RelayTail(const RelayTail&) = delete;
  RelayTail& operator=(const RelayTail&) = delete;

  // ---- the producer (fetch) ----
  void on_file(const std::string& name) override;
  void on_event(const std::string& file, std::uint64_t pos, Bytes raw) override;
  void on_written(const std::string& file, std::uint64_t end) override;
  // Blocks while the area is paused (until it resumes or stop()); false after stop().
  bool at_boundary() override;
  void on_server(const std::string& server, bool failover) override;
  // Ends every wait of the producer (serve stops).
  void stop();
  // The area is paused: at_boundary() would hold the producer now (after the timers ran).
  bool upstream_held();

  // ---- the replicas ----
  std::uint32_t open_replica();
  void close_replica(std::uint32_t id);
  // Bytes [off, off + n) of `file` for replica `id` from the tail, or empty: read them from the
  // file. At most the one event that starts at or covers `off`; valid until the replica's next
  // call. Asking for a position past the event handed out acknowledges it.
  Bytes window(std::uint32_t id, const std::string& file, std::uint64_t off, std::size_t n);
  // How far the tail holds `file` for the replica (what window() would hand out from its queue),
  // 0 when nothing: a reader at the end of the file looks here to see whether it grew.
  std::uint64_t end_of(std::uint32_t id, const std::string& file);

  // For the tests: the replica at (file, pos) takes its next event (nullopt: read the files).
  struct Taken {
    std::string file;
    std::uint64_t pos = 0;
    std::vector<std::uint8_t> bytes;
  };
  std::optional<Taken> take(std::uint32_t id, const std::string& file, std::uint64_t pos);

  // Timers (lazy resumes, the stall release); the producer's wait and the sessions call it.
  void tick();

  RelayStatus status() const;
  // The records since the last call (bounded: the oldest are dropped past 100000).
  std::vector<RelayRecord> take_records();
  std::uint64_t now_us() const;

  // The engine, for the tests' mutants (call before anything else).
  void inject_engine_fault(EngineFault f, std::uint32_t at = 1);

 private:
  struct Chunk;
  struct Key {
    std::uint32_t file = 0;
    std::uint64_t pos = 0;
    friend bool operator==(const Key&, const Key&) = default;
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  struct TailEvent {
    Key key;
    std::uint32_t size = 0;
    std::uint64_t order = 0;
    std::uint64_t before = 0;  // bytes received before it
    std::shared_ptr<Chunk> chunk;
    std::size_t offset = 0;
  };
  struct Replica {
    bool open = false;
    std::deque<TailEvent> q;          // its queue (the engine's path queue, with the bytes)
    std::uint32_t path = kNoPath;
    bool fed = false;
    std::uint32_t next_seq = 0;       // the engine's sequence of the next event fed
    std::optional<Batch> batch;       // popped, not yet acknowledged
    std::shared_ptr<Chunk> held;      // the chunk of the event handed out
    Key held_key;
    std::uint32_t held_size = 0;
    std::size_t held_offset = 0;
    Key asked;                        // the last position asked for
    bool asked_valid = false;
    std::uint64_t last_take_us = 0;
    std::uint64_t tail_events = 0;
    std::uint32_t attaches = 0;
  };

  std::uint32_t file_index(const std::string& name, bool add);
  std::size_t find(const Key& k) const;  // index in events_ of the event at k, or size()
  void feed(Replica& r, const TailEvent& e);
  bool try_attach(Replica& r, const Key& k);
  std::uint64_t lag(const Key& k) const;
  void ack(Replica& r);
  bool take_event(Replica& r, const Key& k);  // true: r.held is the event handed out
  void after_engine();
  void tick_locked();  // the engine's tick now, then after_engine() and stall_check() (mu_ held)
  void trim();
  void stall_check(std::uint64_t now);
  Bytes store(Bytes raw, std::shared_ptr<Chunk>& chunk, std::size_t& offset);

  RelaySettings s_;
  Clock clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  FlowController fc_;
  std::uint32_t area_ = 0;
  std::uint64_t path_pause_bytes_ = 0;
  std::vector<std::string> files_;
  std::vector<std::uint64_t> file_ends_;  // per file of files_: the end of the last event received
  std::uint32_t cur_file_ = 0;
  bool have_file_ = false;
  std::deque<TailEvent> events_;       // retained, in order
  std::uint64_t next_order_ = 0;
  Key end_;                            // where the next event goes
  Key written_;                        // the file holds everything before
  std::shared_ptr<Chunk> open_chunk_;
  std::shared_ptr<std::atomic<std::uint64_t>> held_bytes_;
  std::uint64_t peak_held_ = 0;
  std::vector<Replica> replicas_;
  std::uint64_t events_in_ = 0, bytes_in_ = 0, upstream_waits_ = 0;
  std::string upstream_;
  std::uint64_t failovers_ = 0;
  std::uint64_t area_paused_since_ = 0, last_release_us_ = 0;
  std::uint64_t last_pending_ = 0;
  std::size_t actions_seen_ = 0;
  std::deque<RelayRecord> records_;
  bool stopped_ = false;
};

}  // namespace binlogctl
