// serve --upstream's core (relay.h): fetch's events, stored once, fed to the replicas' queues
// under the flow-control engine.
#include <binlogctl/relay.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

namespace binlogctl {

struct RelayTail::Chunk {
  std::unique_ptr<std::uint8_t[]> data;
  std::size_t cap = 0;
  std::size_t used = 0;
  std::shared_ptr<std::atomic<std::uint64_t>> live;
  Chunk(std::size_t c, std::shared_ptr<std::atomic<std::uint64_t>> l)
      : data(new std::uint8_t[c]), cap(c), live(std::move(l)) {
    *live += cap;
  }
  ~Chunk() { *live -= cap; }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
};

namespace {
constexpr std::size_t kMaxRecords = 100000;
}

RelayTail::RelayTail(const RelaySettings& settings, Clock clock)
    : s_(settings),
      clock_(std::move(clock)),
      fc_(settings.policy, settings.thresholds),
      held_bytes_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  if (!clock_) {
    const auto t0 = std::chrono::steady_clock::now();
    clock_ = [t0] {
      return static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    };
  }
  area_ = fc_.add_area();
  path_pause_bytes_ = ratio_bytes(settings.thresholds.path_pause, settings.thresholds.quota);
}

RelayTail::~RelayTail() = default;

std::uint64_t RelayTail::now_us() const { return clock_(); }

void RelayTail::inject_engine_fault(EngineFault f, std::uint32_t at) {
  std::lock_guard lock(mu_);
  fc_.inject_fault(f, at);
}

std::uint32_t RelayTail::file_index(const std::string& name, bool add) {
  for (std::size_t i = files_.size(); i-- > 0;)
    if (files_[i] == name) return static_cast<std::uint32_t>(i);
  if (!add) return std::numeric_limits<std::uint32_t>::max();
  files_.push_back(name);
  file_ends_.push_back(4);
  return static_cast<std::uint32_t>(files_.size() - 1);
}

Bytes RelayTail::store(Bytes raw, std::shared_ptr<Chunk>& chunk, std::size_t& offset) {
  if (!open_chunk_ || open_chunk_->cap - open_chunk_->used < raw.size()) {
    const std::size_t cap = std::max(s_.chunk_bytes, raw.size());
    auto c = std::make_shared<Chunk>(cap, held_bytes_);
    peak_held_ = std::max<std::uint64_t>(peak_held_, held_bytes_->load());
    if (cap > s_.chunk_bytes) {  // an event of its own: the open chunk stays open
      std::memcpy(c->data.get(), raw.data(), raw.size());
      c->used = raw.size();
      chunk = std::move(c);
      offset = 0;
      return {chunk->data.get(), raw.size()};
    }
    open_chunk_ = std::move(c);
  }
  std::memcpy(open_chunk_->data.get() + open_chunk_->used, raw.data(), raw.size());
  chunk = open_chunk_;
  offset = open_chunk_->used;
  open_chunk_->used += raw.size();
  return {chunk->data.get() + offset, raw.size()};
}

std::size_t RelayTail::find(const Key& k) const {
  auto it = std::lower_bound(events_.begin(), events_.end(), k,
                             [](const TailEvent& e, const Key& key) { return e.key < key; });
  if (it != events_.end() && it->key == k) return static_cast<std::size_t>(it - events_.begin());
  return events_.size();
}

// ---- the producer -----------------------------------------------------------------------------

void RelayTail::on_file(const std::string& name) {
  std::lock_guard lock(mu_);
  cur_file_ = file_index(name, true);
  have_file_ = true;
  end_ = Key{cur_file_, 4};  // the stream goes on there (after the previous file's ROTATE)
}

void RelayTail::on_event(const std::string& file, std::uint64_t pos, Bytes raw) {
  std::lock_guard lock(mu_);
  const std::uint64_t now = clock_();
  const std::uint32_t f = file_index(file, true);
  cur_file_ = f;
  have_file_ = true;
  const Key k{f, pos};
  if (k != end_) {
    // fetch resumed somewhere else (a reconnect after a truncation, a resumed NAME.partial): no
    // replica's queue goes on across the jump; each finds its position again.
    for (Replica& r : replicas_) r.fed = false;
  }
  TailEvent e;
  e.key = k;
  e.size = static_cast<std::uint32_t>(raw.size());
  e.order = next_order_++;
  e.before = bytes_in_;
  store(raw, e.chunk, e.offset);
  events_.push_back(std::move(e));
  end_ = Key{f, pos + raw.size()};
  file_ends_[f] = std::max(file_ends_[f], end_.pos);
  ++events_in_;
  bytes_in_ += raw.size();
  fc_.on_tick(now);
  const TailEvent& added = events_.back();
  for (Replica& r : replicas_) {
    if (!r.open || !r.fed) continue;
    if (fc_.path_paused(r.path)) {  // a paused path is fed no more: its replica goes to the files
      r.fed = false;
      continue;
    }
    feed(r, added);
  }
  after_engine();
  trim();
}

void RelayTail::on_server(const std::string& server, bool failover) {
  std::lock_guard lock(mu_);
  upstream_ = server;
  if (failover) ++failovers_;
}

void RelayTail::on_written(const std::string& file, std::uint64_t end) {
  std::lock_guard lock(mu_);
  written_ = Key{file_index(file, true), end};
  trim();
}

bool RelayTail::at_boundary() {
  std::unique_lock lock(mu_);
  bool counted = false;
  for (;;) {
    if (stopped_) return false;
    const std::uint64_t now = clock_();
    fc_.on_tick(now);
    after_engine();
    stall_check(now);
    if (!fc_.area_paused(area_)) return true;
    if (!counted) {
      ++upstream_waits_;
      counted = true;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

bool RelayTail::upstream_held() {
  std::lock_guard lock(mu_);
  tick_locked();
  return fc_.area_paused(area_);
}

void RelayTail::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void RelayTail::tick() {
  std::lock_guard lock(mu_);
  tick_locked();
}

void RelayTail::tick_locked() {
  const std::uint64_t now = clock_();
  fc_.on_tick(now);
  after_engine();
  stall_check(now);
}

// The area paused with nothing released for stall_release_us: fetch is held and no append will
// trip the breaker, so the fullest paused path (else the fullest path) is released.
void RelayTail::stall_check(std::uint64_t now) {
  if (!fc_.area_paused(area_)) {
    area_paused_since_ = 0;
    return;
  }
  const std::uint64_t pending = fc_.area_pending(area_);
  if (area_paused_since_ == 0 || pending < last_pending_) area_paused_since_ = now == 0 ? 1 : now;
  last_pending_ = pending;
  if (now - area_paused_since_ < s_.stall_release_us) return;
  std::uint32_t victim = kNoPath;
  std::uint64_t most = 0;
  bool victim_paused = false;
  for (const Replica& r : replicas_) {
    if (!r.open) continue;
    const std::uint64_t p = fc_.path_pending(r.path);
    const bool paused = fc_.path_paused(r.path);
    if (p == 0) continue;
    if ((paused && !victim_paused) || (paused == victim_paused && p > most)) {
      victim = r.path;
      most = p;
      victim_paused = paused;
    }
  }
  if (victim == kNoPath) return;
  fc_.release_path(now, victim);
  after_engine();
  area_paused_since_ = now;
  last_release_us_ = now;
  last_pending_ = fc_.area_pending(area_);
  trim();
}

// ---- the engine's side -------------------------------------------------------------------------

void RelayTail::feed(Replica& r, const TailEvent& e) {
  const std::uint64_t now = clock_();
  const AppendStatus st = fc_.on_event(now, r.path, fc_.path_epoch(r.path), r.next_seq, e.size,
                                       static_cast<std::uint32_t>(e.order));
  switch (st) {
    case AppendStatus::appended:
      ++r.next_seq;
      r.q.push_back(e);
      break;
    case AppendStatus::discarded:
    case AppendStatus::marker:
      ++r.next_seq;
      r.fed = false;  // the path broke: its reset sends the replica to the files
      break;
    default:
      r.fed = false;
      break;
  }
}

void RelayTail::after_engine() {
  const auto& acts = fc_.actions();
  if (acts.empty()) return;
  bool wake = false;
  for (const FlowAction& a : acts) {
    RelayRecord rec;
    rec.time_us = a.time_us;
    rec.action = a;
    rec.area_pending = fc_.area_pending(area_);
    rec.held_bytes = held_bytes_->load();
    for (std::size_t i = 0; i < replicas_.size(); ++i)
      if (replicas_[i].open && replicas_[i].path == a.path) rec.replica = static_cast<std::uint32_t>(i);
    records_.push_back(rec);
    if (records_.size() > kMaxRecords) records_.pop_front();
    if (a.kind == ActionKind::resume_area) wake = true;
    if (a.kind == ActionKind::circuit_break || a.kind == ActionKind::release_path ||
        a.kind == ActionKind::gap_discard) {
      for (Replica& r : replicas_)
        if (r.open && r.path == a.path) r.q.clear();  // the engine discarded the queue
      continue;
    }
    if (a.kind != ActionKind::reset && a.kind != ActionKind::pause_path) continue;
    for (Replica& r : replicas_) {
      if (!r.open || r.path != a.path) continue;
      if (a.kind == ActionKind::pause_path) {
        r.fed = false;
      } else if (s_.fault == RelayFault::no_stream_reset) {
        // The defect: the replica is fed again at once, from the next event received.
        fc_.on_handshake(a.time_us, r.path, fc_.path_epoch(r.path), fc_.forwarded_seq(r.path));
        r.next_seq = fc_.forwarded_seq(r.path);
        r.fed = true;
      } else {
        r.fed = false;  // the stream rebuild: the replica reads the files from its position
      }
    }
  }
  fc_.clear_actions();
  if (wake) cv_.notify_all();
}

// Drops the events the file already has and that are too far behind the newest one for a replica
// to be fed again from (the queues hold their own references to the bytes).
void RelayTail::trim() {
  const std::uint64_t window = std::max<std::uint64_t>(path_pause_bytes_, 1);
  while (!events_.empty()) {
    const TailEvent& e = events_.front();
    const bool written = e.key.file < written_.file ||
                         (e.key.file == written_.file && e.key.pos + e.size <= written_.pos);
    if (!written || bytes_in_ - e.before < window) break;
    events_.pop_front();
  }
  if (events_.empty() && open_chunk_ && open_chunk_.use_count() == 1) open_chunk_.reset();
}

// ---- the replicas -----------------------------------------------------------------------------

std::uint32_t RelayTail::open_replica() {
  std::lock_guard lock(mu_);
  std::size_t id = 0;
  while (id < replicas_.size() && replicas_[id].open) ++id;
  if (id == replicas_.size()) replicas_.emplace_back();
  Replica& r = replicas_[id];
  r = Replica{};
  r.open = true;
  r.path = fc_.add_path(area_);
  r.next_seq = 0;
  r.last_take_us = clock_();
  return static_cast<std::uint32_t>(id);
}

void RelayTail::close_replica(std::uint32_t id) {
  std::lock_guard lock(mu_);
  if (id >= replicas_.size() || !replicas_[id].open) return;
  Replica& r = replicas_[id];
  const std::uint64_t now = clock_();
  if (r.batch) fc_.batch_done(now, *r.batch);
  fc_.remove_path(now, r.path);
  r = Replica{};
  after_engine();
  trim();
}

void RelayTail::ack(Replica& r) {
  if (!r.batch) return;
  fc_.batch_done(clock_(), *r.batch);
  r.batch.reset();
  r.held.reset();
  after_engine();
  trim();
}

bool RelayTail::try_attach(Replica& r, const Key& k) {
  const std::uint64_t now = clock_();
  fc_.on_tick(now);
  after_engine();
  if (fc_.path_paused(r.path) || fc_.path_broken(r.path) || fc_.path_blocking(r.path)) return false;
  const std::size_t i = find(k);
  if (i == events_.size() && k != end_) return false;
  // Near the live end only: what it would be fed at once stays below the pause threshold.
  if (i < events_.size() && bytes_in_ - events_[i].before >= std::max<std::uint64_t>(path_pause_bytes_, 1))
    return false;
  if (fc_.awaiting_handshake(r.path)) {
    fc_.on_handshake(now, r.path, fc_.path_epoch(r.path), fc_.forwarded_seq(r.path));
  }
  r.next_seq = fc_.forwarded_seq(r.path);
  r.fed = true;
  ++r.attaches;
  for (std::size_t j = i; j < events_.size() && r.fed; ++j) {
    if (fc_.path_paused(r.path)) {
      r.fed = false;
      break;
    }
    feed(r, events_[j]);
    after_engine();
  }
  return true;
}

bool RelayTail::take_event(Replica& r, const Key& k) {
  const bool defect = s_.fault == RelayFault::no_stream_reset;
  if (!r.fed && r.q.empty() && !try_attach(r, k)) return false;
  while (fc_.can_pop(r.path) && !r.q.empty()) {
    const std::uint64_t now = clock_();
    if (!defect && r.q.front().key > k) {
      // The replica is still in an earlier file (at its end, or its magic): the file first.
      if (r.q.front().key.file != k.file || k.pos < 4) return false;
      // The queue starts after the replica's position (events it never got): the stream is
      // broken, the replica reads the files and is fed again once it reaches the tail.
      fc_.release_path(now, r.path);
      after_engine();
      trim();
      return false;
    }
    const Batch b = fc_.pop_batch(now, r.path, 1, std::numeric_limits<std::uint64_t>::max());
    const auto orders = fc_.last_batch_orders();
    // What the engine handed out (a mutant may hand out another event than it popped).
    const TailEvent* got = nullptr;
    for (const TailEvent& e : r.q)
      if (!orders.empty() && static_cast<std::uint32_t>(e.order) == orders.front()) {
        got = &e;
        break;
      }
    TailEvent hand;
    if (got != nullptr) hand = *got;
    for (std::uint32_t i = 0; i < b.count && !r.q.empty(); ++i) r.q.pop_front();
    if (got == nullptr || (!defect && hand.key < k)) {
      // Already read from the files (or lost by an engine mutant): acknowledged and skipped.
      fc_.batch_done(now, b);
      after_engine();
      if (b.count == 0) break;
      continue;
    }
    r.batch = b;
    r.held = hand.chunk;
    r.held_key = hand.key;
    r.held_size = hand.size;
    r.held_offset = hand.offset;
    ++r.tail_events;
    r.last_take_us = now;
    after_engine();
    trim();
    return true;
  }
  return false;
}

Bytes RelayTail::window(std::uint32_t id, const std::string& file, std::uint64_t off, std::size_t n) {
  std::lock_guard lock(mu_);
  if (id >= replicas_.size() || !replicas_[id].open) return {};
  Replica& r = replicas_[id];
  const std::uint32_t f = file_index(file, false);
  const Key k{f, off};
  if (r.held && r.held_key.file == f && off >= r.held_key.pos && off < r.held_key.pos + r.held_size) {
    const std::size_t at = static_cast<std::size_t>(off - r.held_key.pos);
    return {r.held->data.get() + r.held_offset + at, std::min<std::size_t>(n, r.held_size - at)};
  }
  if (f == std::numeric_limits<std::uint32_t>::max()) return {};
  // Looking back (a file read again up to where it stopped, a header walk): the file has it.
  if ((r.held && k < r.held_key) || (r.asked_valid && k < r.asked)) return {};
  r.asked = k;
  r.asked_valid = true;
  ack(r);
  if (!take_event(r, k)) return {};
  return {r.held->data.get() + r.held_offset, std::min<std::size_t>(n, r.held_size)};
}

std::uint64_t RelayTail::end_of(std::uint32_t id, const std::string& file) {
  std::lock_guard lock(mu_);
  if (id >= replicas_.size() || !replicas_[id].open) return 0;
  Replica& r = replicas_[id];
  const std::uint64_t now = clock_();
  fc_.on_tick(now);
  after_engine();
  stall_check(now);
  const std::uint32_t f = file_index(file, false);
  std::uint64_t end = 0;
  if (r.held && r.held_key.file == f) end = r.held_key.pos + r.held_size;
  if (r.q.empty() || r.q.front().key.file != f) return end;
  for (auto it = r.q.rbegin(); it != r.q.rend(); ++it)
    if (it->key.file == f) return std::max(end, it->key.pos + it->size);
  return end;
}

std::optional<RelayTail::Taken> RelayTail::take(std::uint32_t id, const std::string& file, std::uint64_t pos) {
  std::lock_guard lock(mu_);
  if (id >= replicas_.size() || !replicas_[id].open) return std::nullopt;
  Replica& r = replicas_[id];
  const std::uint32_t f = file_index(file, false);
  if (f == std::numeric_limits<std::uint32_t>::max()) {
    ack(r);
    return std::nullopt;
  }
  const Key k{f, pos};
  r.asked = k;
  r.asked_valid = true;
  ack(r);
  if (!take_event(r, k)) return std::nullopt;
  Taken t;
  t.file = files_[r.held_key.file];
  t.pos = r.held_key.pos;
  const std::uint8_t* p = r.held->data.get() + r.held_offset;
  t.bytes.assign(p, p + r.held_size);
  return t;
}

std::vector<RelayRecord> RelayTail::take_records() {
  std::lock_guard lock(mu_);
  std::vector<RelayRecord> out(records_.begin(), records_.end());
  records_.clear();
  return out;
}

// Bytes received from the upstream after `k`: the rest of its file, the files after it (each
// from its header at 4 to the end of the last event received), and the current file up to end_.
std::uint64_t RelayTail::lag(const Key& k) const {
  if (!have_file_ || k > end_ || k.file >= file_ends_.size()) return 0;
  if (k.file == end_.file) return end_.pos - k.pos;
  std::uint64_t n = file_ends_[k.file] > k.pos ? file_ends_[k.file] - k.pos : 0;
  for (std::uint32_t f = k.file + 1; f < end_.file; ++f) n += file_ends_[f] - 4;
  return n + (end_.pos - 4);
}

RelayStatus RelayTail::status() const {
  std::lock_guard lock(mu_);
  RelayStatus s;
  s.pending = fc_.area_pending(area_);
  s.held_bytes = held_bytes_->load();
  s.peak_held_bytes = std::max<std::uint64_t>(peak_held_, s.held_bytes);
  s.quota = fc_.thresholds().quota;
  s.path_pause_bytes = ratio_bytes(fc_.thresholds().path_pause, s.quota);
  s.path_resume_bytes = fc_.path_resume_bytes();
  s.area_pause_bytes = fc_.area_pause_bytes();
  s.area_resume_bytes = fc_.area_resume_bytes();
  s.hard_limit_bytes = fc_.hard_limit_bytes();
  s.paused = fc_.area_paused(area_);
  s.counters = fc_.area_counters(area_);
  s.events = events_in_;
  s.bytes = bytes_in_;
  s.upstream_waits = upstream_waits_;
  s.upstream = upstream_;
  s.failovers = failovers_;
  if (have_file_ && end_.file < files_.size()) {
    s.file = files_[end_.file];
    s.position = end_.pos;
  }
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& r = replicas_[i];
    if (!r.open) continue;
    RelayReplicaStatus x;
    x.id = static_cast<std::uint32_t>(i);
    x.fed = r.fed;
    x.paused = fc_.path_paused(r.path);
    if (r.asked_valid && r.asked.file < files_.size()) {
      x.file = files_[r.asked.file];
      x.position = r.asked.pos;
      x.lag_bytes = lag(r.asked);
    }
    x.queue_bytes = fc_.path_pending(r.path);
    x.queue_events = fc_.queued_events(r.path);
    x.counters = fc_.path_counters(r.path);
    x.peak_queue_bytes = x.counters.peak_pending;
    x.tail_events = r.tail_events;
    x.attaches = r.attaches;
    s.replicas.push_back(std::move(x));
  }
  return s;
}

}  // namespace binlogctl
