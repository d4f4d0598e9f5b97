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
          reset_open_[hp] = 0;
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
    const bool oversized = !oversized_.empty() && oversized_[m.idx] != 0;
    const AppendStatus st = fc_.on_event(now_, e.path, m.epoch, e.path_seq, e.size, m.idx, drop,
                                         oversized, e.txn);
    // Discards decided on this append (circuit breaker, release) leave the mirror first.
    if (!fc_.actions().empty()) process_actions();
    if (stop_) return;
    if (st == AppendStatus::appended) {
      MirrorQueue& mq = mq_[e.path];
      mq.q.push_back(MirrorEntry{m.idx});
      std::uint64_t& held = mq_bytes_[a];
      held += e.size;
      if (doc_) {
        std::uint64_t& path_held = mqp_bytes_[e.path];
        if (path_held < path_pause_b_ && path_held + e.size >= path_pause_b_) {
          above_since_[e.path] = now_;
          ++above_;
        }
        path_held += e.size;
        if (held >= area_pause_b_ && held - e.size < area_pause_b_) {
          area_above_since_[a] = now_;
          ++above_;
        }
      }
      if (o_.record_series) [[unlikely]] {  // the plot's envelope
        imax_[a] = std::max(imax_[a], held);
        path_imax_[e.path] = std::max(path_imax_[e.path], fc_.path_pending(e.path));
        if (held > fc_.hard_limit_bytes() && held - e.size <= fc_.hard_limit_bytes() &&
            series_.admissions.size() < 100'000) {
          series_.admissions.push_back(ReplayAdmission{now_, a, held, rdp_id_of(m.idx)});
        }
      }
      const bool new_peak = held > mq_peak_[a];
      if (new_peak) {
        mq_peak_[a] = held;
        peak_why_[a] = sent_why_[m.idx];
        peak_time_[a] = now_;
      }
      if (held > mem_limit_) {
        // doc lets one transaction larger than H through alone: above H the area may hold no
        // more than H outside it. The transaction is the one holding the most bytes now (if
        // any transaction makes the rest fit, that one does), found in the simulator's own
        // copy of what the area holds, whatever the engine thinks it admitted.
        std::uint32_t top = kNoEvent;
        std::uint64_t top_bytes = 0;
        if (o_.policy == Policy::doc) {
          txn_bytes_.clear();
          for (std::uint32_t q : in_.areas[a].paths) {
            const MirrorQueue& oq = mq_[q];
            for (std::size_t i = oq.head; i < oq.q.size(); ++i) {
              const std::uint32_t g = oq.q[i].g;
              auto [it, fresh] = txn_bytes_.try_emplace(in_.events[g].txn, g, 0);
              it->second.second += in_.events[g].size;
              if (it->second.second > top_bytes) {
                top_bytes = it->second.second;
                top = it->second.first;
              }
            }
          }
        }
        const std::uint64_t others = held - top_bytes;
        if (new_peak && o_.policy == Policy::doc) {
          peak_txn_[a] = top;
          peak_txn_bytes_[a] = top_bytes;
        }
        if (o_.policy != Policy::doc || others > mem_limit_) {
          violate("memory_bound",
                  fmt::format("area {} holds {} bytes (the engine accounts {}) > the bound {} "
                              "({}) after appending {}{}",
                              a, held, fc_.area_pending(a), mem_limit_,
                              o_.policy == Policy::ticdc      ? "hard limit + one event"
                              : o_.policy == Policy::blocking ? "quota"
                                                              : "hard limit",
                              where(e.path, e.path_seq),
                              top != kNoEvent
                                  ? fmt::format(", {} of them outside the transaction holding the "
                                                "most ({} bytes, {})",
                                                others, top_bytes, describe(identity_of(in_, top)))
                                  : std::string()),
                  e.path, m.idx);
        }
      }
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
    MirrorQueue& mq = mq_[p];
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
    mirror_release(p, bytes);
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
  MirrorQueue& mq = mq_[p];
  bool held = false;
  if (mq.size() != 0 && mq.q[mq.head].g == g) {
    ++mq.head;
    held = true;
  } else {
    for (std::size_t i = mq.head; i < mq.q.size(); ++i) {
      if (mq.q[i].g == g) {
        mq.q.erase(mq.q.begin() + static_cast<std::ptrdiff_t>(i));
        held = true;
        break;
      }
    }
  }
  mq.compact();
  if (held) mirror_release(p, in_.events[g].size);
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

// A queue the engine says it discarded: everything the mirror holds for the path leaves it.
std::uint64_t Simulator::mirror_discard(const FlowAction& x) {
  MirrorQueue& mq = mq_[x.path];
  std::uint64_t bytes = 0;
  for (std::size_t i = mq.head; i < mq.q.size(); ++i) {
    const std::uint32_t g = mq.q[i].g;
    discarded_[g] = 1;
    bytes += in_.events[g].size;
  }
  const std::size_t count = mq.size();
  mirror_release(x.path, bytes);
  mq.q.clear();
  mq.head = 0;
  if (count != x.count && !stop_) {
    violate("accounting",
            fmt::format("path {}: the engine reports {} events discarded, it held {}",
                        in_.path_names[x.path], x.count, count),
            x.path);
  }
  return bytes;
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
    latency_.add(lat);
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
  hash(now_);
  hash((static_cast<std::uint64_t>(p) << 32) | b.first_seq);
  hash(b.count);
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
    hash((x.time_us << 8) ^ static_cast<std::uint64_t>(x.kind));
    hash((static_cast<std::uint64_t>(x.path) << 32) ^ x.epoch ^ (std::uint64_t{x.seq} << 16));
    trace('a', static_cast<std::uint8_t>(x.kind), x.path, x.seq, x.count);
    if (o_.record_series && series_.marks.size() < 200'000) {
      series_.marks.push_back(ReplayMark{x.time_us, x.kind, x.area, x.path, x.area_pending});
    }
    // The event the action concerns: a reset, the one at its checkpoint (re-sent first).
    const std::uint32_t g = x.kind == ActionKind::reset && x.path != kNoPath
                                ? event_at(x.path, x.seq)
                                : (x.order < in_.events.size() ? x.order : kNoEvent);
    if (tl_ != nullptr) {
      TimelineAction ta;
      if (g != kNoEvent) ta.at = identity_of(in_, g);
      ta.time_us = x.time_us;
      ta.kind = to_string(x.kind);
      ta.area = x.area;
      if (x.path != kNoPath) ta.path = in_.path_names[x.path];
      ta.epoch = x.epoch;
      ta.seq = x.seq;
      ta.count = x.count;
      ta.bytes = x.bytes;
      ta.area_pending = fc_.area_pending(x.area);
      ta.pending_before = x.area_pending;
      if (x.kind == ActionKind::reset || x.kind == ActionKind::drop_marker) {
        ta.detail = to_string(x.cause);
      }
      tl_->action(ta);
    }
    // A pause or a resume of `who` (a path, an area), as the documented protocol has them: a
    // resume only once what it holds is below its resume threshold, and pauses and resumes
    // alternate. False when a violation stops the run.
    auto check_control = [&](bool pause, const std::string& who, const auto& held, const auto& resume_b,
                             std::string_view option, const auto& fraction, std::uint8_t& paused,
                             std::uint32_t p) {
      if (doc_ && !pause && held >= resume_b) {
        violate("resume_threshold",
                fmt::format("{} resumed while it holds {} bytes, not below its resume threshold {} ({} {} of the "
                            "quota {})",
                            who, held, resume_b, option, fraction, o_.thresholds.quota),
                p, g);
        if (stop_) return false;
      }
      if (paused == static_cast<std::uint8_t>(pause))
        violate("pause_alternation", fmt::format("{}: two {} in a row", who, pause ? "pauses" : "resumes"), p, g);
      paused = pause ? 1 : 0;
      return true;
    };
    UpArea& A = up_[x.area];
    switch (x.kind) {
      case ActionKind::pause_path:
      case ActionKind::resume_path: {
        const bool pause = x.kind == ActionKind::pause_path;
        // below 10% first
        if (!check_control(pause, fmt::format("path {}", in_.path_names[x.path]), mqp_bytes_[x.path], path_resume_b_,
                           "--path-resume", o_.thresholds.path_resume, ctl_paused_[x.path], x.path))
          return;
        send_control(x.area, make_ctl(pause ? Ctl::pause_path : Ctl::resume_path, x.path));
        break;
      }
      case ActionKind::pause_area:
      case ActionKind::resume_area: {
        const bool pause = x.kind == ActionKind::pause_area;
        // below 50% first
        if (!check_control(pause, fmt::format("area {}", x.area), mq_bytes_[x.area], area_resume_b_, "--area-resume",
                           o_.thresholds.area_resume, ctl_paused_[in_.path_names.size() + x.area], kNoPath))
          return;
        send_control(x.area, make_ctl(pause ? Ctl::pause_area : Ctl::resume_area));
        break;
      }
      case ActionKind::reset: {
        if (fc_.path_epoch(x.path) != x.epoch || x.epoch != last_reset_epoch_[x.path] + 1 ||
            reset_open_[x.path]) {
          violate("protocol",
                  fmt::format("path {}: reset to epoch {} while the reset to epoch {} has not "
                              "been answered by a handshake (one gap, two resets)",
                              in_.path_names[x.path], x.epoch, last_reset_epoch_[x.path]),
                  x.path, g);
        }
        last_reset_epoch_[x.path] = x.epoch;
        reset_open_[x.path] = 1;
        ControlMsg m = make_ctl(Ctl::reset, x.path);
        m.epoch = x.epoch;
        m.seq = x.seq;
        send_control(x.area, std::move(m));
        break;
      }
      case ActionKind::release_path:
      case ActionKind::gap_discard:
      case ActionKind::circuit_break: {
        A.outstanding -= static_cast<std::int64_t>(mirror_discard(x));
        break;
      }
      case ActionKind::drop_marker:
        break;  // the event itself is flagged by on_data
    }
    if (stop_) return;
  }
}

}  // namespace binlogctl::replay_detail
