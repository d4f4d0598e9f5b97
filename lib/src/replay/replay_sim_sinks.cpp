// The simulator's data link, collector and sinks (simulator.h).
#include "replay/simulator.h"

namespace binlogctl::replay_detail {

void Simulator::on_data(std::uint32_t a) {
  UpArea& A = up_[a];
  std::uint32_t count = A.link_batches.front();
  A.link_batches.pop_front();
  if ((count & kSignalBatch) != 0) {
    count &= ~kSignalBatch;  // resolved signals only: never keeps a run alive
  } else {
    --inflight_;
  }
  const bool inject = o_.drop_rate > 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    const Msg m = A.link[A.link_head++];
    if ((m.idx & (kHandshakeBit | kResolvedBit)) != 0) [[unlikely]] {  // one test per event
      if ((m.idx & kHandshakeBit) != 0) {
        const std::uint32_t hp = m.idx & ~kHandshakeBit;
        if (fc_.on_handshake(now_, hp, m.epoch, m.seq) == AppendStatus::appended) {
          checker_.handshake(hp);
        }
        continue;
      }
      // a resolved signal: no data
      fc_.on_resolved(now_, m.idx & ~kResolvedBit, m.epoch, m.seq);
      if (!fc_.actions().empty()) process_actions();
      if (stop_) return;
      continue;
    }
    const ReplayInputEvent& e = in_.events[m.idx];
    A.link_bytes -= e.size;
    const bool drop = inject && A.drop_rng.uniform() < o_.drop_rate;
    if (drop && !o_.drop_markers) {  // lost on the link: the engine never sees it
      A.outstanding -= static_cast<std::int64_t>(e.size);
      discarded_[m.idx] = 1;
      continue;
    }
    const AppendStatus st = fc_.on_event(now_, e.path, m.epoch, e.path_seq, e.size, m.idx, drop,
                                         checker_.oversized(m.idx), e.txn);
    // Discards decided on this append (circuit breaker, release) leave the mirror first.
    if (!fc_.actions().empty()) process_actions();
    if (stop_) return;
    if (st == AppendStatus::appended) {
      // The checker's copy (the memory bound, doc's rules), then the plot's envelope.
      const std::uint64_t held = checker_.append(now_, a, e.path, m.idx, e.size);
      rec_.appended(now_, a, e.path, m.idx, held, e.size, fc_);
      if (!touched_mark_[e.path]) {
        touched_mark_[e.path] = 1;
        touched_.push_back(e.path);
      }
    } else {
      A.outstanding -= static_cast<std::int64_t>(e.size);
      switch (st) {
        case AppendStatus::filtered:  // (not with this upstream: it restarts at the checkpoint)
          break;
        case AppendStatus::stale_epoch:
          ++stale_;
          [[fallthrough]];
        case AppendStatus::discarded:
        case AppendStatus::marker:
        case AppendStatus::gap:
          discarded_[m.idx] = 1;
          break;
        case AppendStatus::before_handshake:
          violate("protocol",
                  fmt::format("data before the handshake of epoch {}: {}", m.epoch,
                              where(e.path, e.path_seq)),
                  e.path, m.idx);
          break;
        case AppendStatus::appended:
          break;
      }
    }
    if (stop_) return;
  }
  if (A.link_head == A.link.size()) {
    A.link.clear();
    A.link_head = 0;
  } else if (A.link_head > 65536 && A.link_head * 2 > A.link.size()) {
    A.link.erase(A.link.begin(), A.link.begin() + static_cast<std::ptrdiff_t>(A.link_head));
    A.link_head = 0;
  }
  for (std::uint32_t p : touched_) {
    touched_mark_[p] = 0;
    try_dispatch(p);
  }
  touched_.clear();
  if (o_.policy == Policy::blocking && A.blocked) wake(a);
}

void Simulator::try_dispatch(std::uint32_t p) {
  if (stop_ || !fc_.can_pop(p)) return;
  SinkPath& S = sink_[p];
  const std::uint32_t a = in_.path_area[p];
  UpArea& A = up_[a];
  std::uint32_t max_order = 0xffffffffu;
  if (S.m.barrier_every_txns != 0) {  // a batch never spans a barrier
    const std::uint32_t k = S.m.barrier_every_txns;
    const std::uint32_t txn = in_.events[fc_.front_order(p)].txn;
    const std::uint64_t last_txn = (static_cast<std::uint64_t>(txn / k) + 1) * k - 1;
    if (last_txn < A.txn_last.size()) max_order = A.txn_last[last_txn];
  }
  const Batch b = fc_.pop_batch(now_, p, o_.batch_max_events, o_.batch_max_bytes, max_order);
  A.in_sink += b.bytes;
  trace('h', 0, p, b.first_seq, b.count);
  const auto got = fc_.last_batch_orders();
  S.orders.clear();
  S.first_pos = S.next;
  {
    // Fast path: the event is the mirror's front and the next position of the path (every check
    // of receive() holds); anything else goes to receive().
    MirrorQueue& mq = checker_.mirror(p);
    const auto& list = in_.path_events[p];
    std::uint64_t bytes = 0;
    bool slow = false;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::uint32_t g = got[k];
      if (!slow && mq.head < mq.q.size() && mq.q[mq.head].g == g && S.next < list.size() &&
          list[S.next] == g) {
        ++mq.head;
        ++S.next;
        bytes += in_.events[g].size;
        continue;
      }
      if (!slow) {  // from here on the sink keeps its own copy of what it received
        slow = true;
        S.orders.assign(list.begin() + S.first_pos, list.begin() + S.next);
      }
      S.orders.push_back(g);
      A.outstanding -= static_cast<std::int64_t>(in_.events[g].size);
      receive(p, g);
      if (stop_) break;
    }
    S.fast = !slow;
    S.fast_count = S.next - S.first_pos;
    A.outstanding -= static_cast<std::int64_t>(bytes);
    checker_.release(p, bytes);
    mq.compact();
  }
  S.batch = b;
  S.busy = true;
  ++sink_busy_;
  // Completion time: throughput cap (serial), latency, jitter, stall windows, hang window.
  std::uint64_t t = now_;
  if (S.m.cap_bytes_per_s != 0) {
    const std::uint64_t start = std::max(now_, S.cap_free);
    t = start + (b.bytes * 1'000'000 + S.m.cap_bytes_per_s - 1) / S.m.cap_bytes_per_s;
    S.cap_free = t;
  }
  t += S.m.latency_us;
  if (S.m.jitter_us != 0) t += S.rng.below(S.m.jitter_us + 1);
  if (S.m.stall_period_us != 0 && S.m.stall_us != 0) {
    const std::uint64_t phase = t % S.m.stall_period_us;
    if (phase >= S.m.stall_period_us - S.m.stall_us) t += S.m.stall_period_us - phase;
  }
  if (S.m.hang_to_us > S.m.hang_from_us && t >= S.m.hang_from_us && now_ < S.m.hang_to_us) {
    t = std::max(t, S.m.hang_to_us);
  }
  push(t, EvKind::sink_done, p);
  if (!fc_.actions().empty()) process_actions();
  if (o_.policy == Policy::blocking && A.blocked) wake(a);
}

// The sink of path p receives event g: checked against the source's ordered list of the path's
// positions. (No event of an old epoch can reach a sink before one of the checks here or the
// protocol check sees it: the links are FIFO, so what the upstream sent before a reset arrives
// before the handshake of the new epoch, where the engine must drop it.)
void Simulator::receive(std::uint32_t p, std::uint32_t g) {
  SinkPath& S = sink_[p];
  checker_.take(p, g);
  const auto& list = in_.path_events[p];
  const ReplayInputEvent& e = in_.events[g];
  if (e.path != p) {
    violate("exactly_once",
            fmt::format("the sink of path {} received an event of path {}: {}", in_.path_names[p],
                        in_.path_names[e.path], where(e.path, e.path_seq)),
            p, g);
    return;
  }
  // The sink receives its path's positions in source order, so the positions it has received
  // are exactly [0, next): one below `next` is a second copy.
  if (e.path_seq < S.next) {
    violate("exactly_once", fmt::format("path {}: {} delivered twice (duplicate)",
                                        in_.path_names[p], where(p, e.path_seq)),
            p, g);
    return;
  }
  if (S.next >= list.size() || list[S.next] != g) {
    violate("in_order",
            fmt::format("path {}: the sink received {} while {} had not been delivered yet "
                        "({} source positions skipped)",
                        in_.path_names[p], where(p, e.path_seq), where(p, S.next),
                        e.path_seq > S.next ? e.path_seq - S.next : 0),
            p, g);
  }
  S.next = e.path_seq + 1;
}

bool Simulator::barrier_ok(std::uint32_t p) const {
  const std::uint32_t k = sink_[p].m.barrier_every_txns;
  if (k == 0) return true;
  const std::uint32_t first = in_.path_events[p][sink_[p].batch.first_seq];
  const std::uint64_t need = static_cast<std::uint64_t>(in_.events[first].txn / k) * k;
  if (need == 0) return true;
  // Every path of the area must have acknowledged all its events of transactions < need.
  for (std::uint32_t q : in_.areas[in_.path_area[p]].paths) {
    if (q == p) continue;
    const auto& list = in_.path_events[q];
    const std::uint32_t acked = fc_.acked_seq(q);
    if (acked < list.size() && in_.events[list[acked]].txn < need) return false;
  }
  return true;
}

void Simulator::on_sink_done(std::uint32_t p) {
  if (has_barriers_ && !barrier_ok(p)) {
    sink_[p].held = true;
    held_.push_back(p);
    return;
  }
  complete(p);
}

void Simulator::complete(std::uint32_t p) {
  SinkPath& S = sink_[p];
  const Batch b = S.batch;
  const std::uint32_t a = in_.path_area[p];
  UpArea& A = up_[a];
  fc_.batch_done(now_, b);
  S.busy = false;
  S.held = false;
  --sink_busy_;
  A.in_sink -= b.bytes;
  // In order (the usual case), what the sink received is list[first_pos, first_pos + count).
  const std::uint32_t* rb = S.orders.data();
  std::size_t rn = S.orders.size();
  if (S.fast) {
    rb = in_.path_events[p].data() + S.first_pos;
    rn = S.fast_count;
  }
  for (std::size_t k = 0; k < rn; ++k) {
    const std::uint32_t g = rb[k];
    const std::uint64_t lat = now_ - avail_[g];
    rec_.add_latency(lat);
    S.latency.add(lat);
    if (discarded_[g]) {
      ++S.redelivered;
      ++redelivered_;
    }
  }
  // Acknowledged: the positions received up to this batch (a path has one batch in its sink).
  acked_distinct_ += S.next - S.acked;
  S.acked = S.next;
  const auto n = static_cast<std::uint64_t>(rn);
  S.delivered += n;
  S.bytes += b.bytes;
  delivered_ += n;
  A.delivered += n;
  if (!fc_.actions().empty()) process_actions();  // the dispatcher handled a marker: reset
  if (stop_) return;
  last_progress_ = now_;
  last_ack_ = now_;
  rec_.hash(now_);
  rec_.hash((static_cast<std::uint64_t>(p) << 32) | b.first_seq);
  rec_.hash(b.count);
  trace('d', 0, p, b.first_seq, b.count);
  if (!held_.empty()) check_barriers(a);
  try_dispatch(p);
}

void Simulator::check_barriers(std::uint32_t a) {
  bool again = true;
  while (again && !held_.empty()) {
    again = false;
    for (std::size_t i = 0; i < held_.size(); ++i) {
      const std::uint32_t p = held_[i];
      if (in_.path_area[p] != a || !barrier_ok(p)) continue;
      held_[i] = held_.back();
      held_.pop_back();
      complete(p);
      again = true;
      break;
    }
  }
}

void Simulator::process_actions() {
  // Copy: handling may call back into the engine.
  std::vector<FlowAction> acts = fc_.actions();
  fc_.clear_actions();
  for (const FlowAction& x : acts) {
    rec_.hash((x.time_us << 8) ^ static_cast<std::uint64_t>(x.kind));
    rec_.hash((static_cast<std::uint64_t>(x.path) << 32) ^ x.epoch ^ (std::uint64_t{x.seq} << 16));
    trace('a', static_cast<std::uint8_t>(x.kind), x.path, x.seq, x.count);
    // The event the action concerns: a reset, the one at its checkpoint (re-sent first).
    const std::uint32_t g = x.kind == ActionKind::reset && x.path != kNoPath
                                ? event_at(x.path, x.seq)
                                : (x.order < in_.events.size() ? x.order : kNoEvent);
    rec_.action(x, g, fc_);
    switch (x.kind) {
      case ActionKind::pause_path:
      case ActionKind::resume_path:
        if (!checker_.control(now_, x, g)) return;
        send_control(x.area,
                     make_ctl(x.kind == ActionKind::pause_path ? Ctl::pause_path : Ctl::resume_path,
                              x.path));
        break;
      case ActionKind::pause_area:
      case ActionKind::resume_area:
        if (!checker_.control(now_, x, g)) return;
        send_control(x.area, make_ctl(x.kind == ActionKind::pause_area ? Ctl::pause_area
                                                                       : Ctl::resume_area));
        break;
      case ActionKind::reset: {
        checker_.reset(now_, x, g);
        ControlMsg m = make_ctl(Ctl::reset, x.path);
        m.epoch = x.epoch;
        m.seq = x.seq;
        send_control(x.area, std::move(m));
        break;
      }
      case ActionKind::release_path:
      case ActionKind::gap_discard:
      case ActionKind::circuit_break:
        up_[x.area].outstanding -= static_cast<std::int64_t>(checker_.discard(now_, x, discarded_));
        break;
      case ActionKind::drop_marker:
        break;  // the event itself is flagged by on_data
    }
    if (stop_) return;
  }
}

}  // namespace binlogctl::replay_detail
