// The simulator's upstream (simulator.h): per-path cursors, txn-boundary stops, credits,
// resets, and the control link to it.
#include "replay/simulator.h"

namespace binlogctl::replay_detail {

Simulator::Gate Simulator::gate(const UpArea& A, const UpPath& P, std::uint32_t size) const {
  switch (o_.policy) {
    case Policy::none:
      return Gate::ok;
    case Policy::blocking:
      if (A.outstanding > 0 &&
          static_cast<std::uint64_t>(A.outstanding) + size > o_.thresholds.quota)
        return Gate::area_blocked;
      return Gate::ok;
    case Policy::doc:
      if (P.in_txn) return Gate::ok;  // a scan stops only at a transaction boundary
      if (A.paused) return Gate::area_blocked;
      if (P.paused) return Gate::path_blocked;
      return Gate::ok;
    case Policy::ticdc:
      if (P.in_txn) return Gate::ok;
      if (A.credit <= 0) return Gate::area_blocked;
      if (P.credit == 0) return Gate::path_blocked;
      return Gate::ok;
  }
  return Gate::ok;
}

void Simulator::send(UpArea& A, std::uint32_t g, std::uint64_t& budget) {
  // The event's fields in locals: the byte store into the checker's sent_why_ may alias
  // anything, and would make the compiler load them again after it.
  const ReplayInputEvent& e = in_.events[g];
  const std::uint32_t path = e.path, size = e.size, path_seq = e.path_seq;
  const bool path_txn_end = (e.flags & kPathTxnEnd) != 0;
  UpPath& P = upp_[path];
  const bool in_txn = P.in_txn;
  {
    std::uint8_t why = kSentFree;
    switch (o_.policy) {
      case Policy::doc:
        if (in_txn && (A.paused || P.paused)) {
          why = kSentInTxn;
        } else if (fc_.area_paused(in_.path_area[path]) || fc_.path_paused(path)) {
          why = kSentBeforeStop;
        }
        break;
      case Policy::ticdc:
        if (in_txn && (A.credit <= 0 || P.credit == 0)) {
          why = kSentInTxn;
        } else if (fc_.area_pending(in_.path_area[path]) + size > o_.thresholds.quota) {
          why = kSentBeforeStop;  // the credit the upstream holds is stale
        }
        break;
      default:
        break;
    }
    checker_.sent(g, why);
  }
  A.link.push_back(Msg{g, P.epoch, path_seq});
  ++P.cursor;
  P.in_txn = !path_txn_end;
  A.outstanding += static_cast<std::int64_t>(size);
  A.credit -= static_cast<std::int64_t>(size);
  A.link_bytes += size;
  budget = budget > size ? budget - size : 0;
  last_progress_ = now_;
}

void Simulator::send_handshake(UpArea& A, std::uint32_t p) {
  UpPath& P = upp_[p];
  A.link.push_back(Msg{kHandshakeBit | p, P.epoch, P.cursor});
  P.need_handshake = false;
}

void Simulator::block_reader(UpArea& A) {
  if (!A.blocked) {
    A.blocked = true;
    A.blocked_since = now_;
  }
}

bool Simulator::lagging_can_progress(const UpArea& A) const {
  for (std::uint32_t p : A.lagging) {
    const UpPath& P = upp_[p];
    if (P.need_handshake) return true;
    const auto& list = in_.path_events[p];
    if (P.cursor >= list.size() || list[P.cursor] >= A.head) return true;  // caught up
    if (gate(A, P, in_.events[list[P.cursor]].size) == Gate::ok) return true;
  }
  return false;
}

bool Simulator::upstream_has_work(const UpArea& A) const {
  return !A.lagging.empty() || (A.head < A.end && avail_[A.head] <= now_);
}

void Simulator::upstream_step(std::uint32_t a) {
  UpArea& A = up_[a];
  if (A.next_step != now_) return;  // superseded by an earlier step
  A.next_step = kInf;
  std::uint64_t budget = scan_step_;
  const std::size_t start = A.link.size();
  const bool rules_due = checker_.rules_due();  // doc's rule check before each send (see send())
  if (A.blocked) {
    A.blocked = false;
    A.blocked_us += now_ - A.blocked_since;
  }
  // 1. Catch-up scans of lagging paths (paused earlier, out of credit, or reset), round robin,
  //    scan_quantum bytes each, ending at a transaction boundary.
  if (!A.lagging.empty()) {
    std::vector<std::uint32_t> keep, later;
    std::size_t i = 0;
    for (; i < A.lagging.size() && budget > 0; ++i) {
      const std::uint32_t p = A.lagging[i];
      UpPath& P = upp_[p];
      if (P.need_handshake) send_handshake(A, p);
      const auto& list = in_.path_events[p];
      std::uint64_t sent = 0;
      bool blocked = false;
      while (P.cursor < list.size()) {
        const std::uint32_t g = list[P.cursor];
        if (g >= A.head) break;
        if (budget == 0 || (sent >= scan_quantum_ && !P.in_txn)) break;
        const Gate gt = gate(A, P, in_.events[g].size);
        if (gt != Gate::ok) {
          if (gt == Gate::area_blocked && o_.policy == Policy::blocking) blocked = true;
          break;
        }
        sent += in_.events[g].size;
        if (rules_due) check_policy_rules();  // (a violation stops the run after this step)
        send(A, g, budget);
      }
      if (P.cursor >= list.size() || list[P.cursor] >= A.head) {
        P.lagging = false;
      } else {
        later.push_back(p);
      }
      if (blocked) {
        block_reader(A);
        ++i;
        break;
      }
    }
    for (; i < A.lagging.size(); ++i) keep.push_back(A.lagging[i]);
    keep.insert(keep.end(), later.begin(), later.end());
    A.lagging.swap(keep);
  }
  // 2. Live reading at the source rate. Each event is checked against its context first (a
  //    break found before it is met when the upstream reads it).
  budget = o_.upstream_step_bytes;
  const bool hol = o_.policy == Policy::blocking;
  // The rare work (a source break to report, doc's rule check before a send) is behind one
  // compare per event: from `slow` on (the next break's event, or every event when a rule check
  // is due).
  std::uint32_t slow = rules_due ? 0 : A.break_at;
  while (!A.blocked && A.head < A.end && avail_[A.head] <= now_ && budget > 0) {
    const std::uint32_t g = A.head;
    const ReplayInputEvent& e = in_.events[g];
    if (g >= slow) [[unlikely]] {
      if (g >= A.break_at) {
        source_break(a);
        if (stop_) return;
        if (!rules_due) slow = A.break_at;
      }
      // The check before the send below (not lagging, gate open); it changes neither.
      if (rules_due && !upp_[e.path].lagging && gate(A, upp_[e.path], e.size) == Gate::ok) {
        check_policy_rules();  // (a violation stops the run after this step)
      }
    }
    UpPath& P = upp_[e.path];
    if (P.lagging) {
      ++A.head;
      continue;
    }
    const Gate gt = gate(A, P, e.size);
    if (gt == Gate::ok) {
      send(A, g, budget);
      ++A.head;
      continue;
    }
    if (hol) {  // the reader blocks: head-of-line
      block_reader(A);
      break;
    }
    P.lagging = true;
    A.lagging.push_back(e.path);
    ++A.head;
  }
  if (A.head == A.end && A.next_break < A.end_break) {  // breaks after the last event
    source_break(a);
    if (stop_) return;
  }
  // 3. Ship what was sent as one link batch.
  if (A.link.size() > start) {
    std::uint64_t t = now_ + o_.data_delay_us;
    if (o_.data_jitter_us != 0) t += A.data_rng.below(o_.data_jitter_us + 1);
    t = std::max(t, A.link_last);
    A.link_last = t;
    A.link_batches.push_back(static_cast<std::uint32_t>(A.link.size() - start));
    ++inflight_;
    push(t, EvKind::data_arrival, a);
    const std::uint64_t resident = A.link_bytes + fc_.area_pending(a) + A.in_sink;
    A.peak_resident = std::max(A.peak_resident, resident);
  }
  // 4. Next step: now + tick while there is work; at the next availability otherwise; nothing
  //    when blocked (a resume, credit report, reset or pop wakes the upstream).
  std::uint64_t next = kInf;
  if (!A.blocked && lagging_can_progress(A)) next = now_ + o_.upstream_tick_us;
  if (!A.blocked && A.head < A.end) {
    next = std::min(next, std::max(now_ + o_.upstream_tick_us, avail_[A.head]));
  }
  if (next != kInf) {
    schedule_step(a, next);
  } else if (o_.policy == Policy::blocking && upstream_has_work(A)) {
    block_reader(A);  // full queue: the next pop wakes the reader
  }
}

void Simulator::wake(std::uint32_t a) { schedule_step(a, now_); }

// The upstream reads past a break of the source's context.
void Simulator::source_break(std::uint32_t a) {
  UpArea& A = up_[a];
  const SourceBreak& b = in_.source_breaks[A.next_break++];
  A.break_at = A.next_break < A.end_break ? in_.source_breaks[A.next_break].event : 0xffffffffu;
  checker_.source_break(now_, b, b.event < A.end ? b.event : kNoEvent);
}

void Simulator::send_control(std::uint32_t a, ControlMsg m) {
  UpArea& A = up_[a];
  std::uint64_t t = now_ + o_.control_delay_us;
  if (o_.control_jitter_us != 0) t += A.ctl_rng.below(o_.control_jitter_us + 1);
  t = std::max(t, A.ctl_last);
  A.ctl_last = t;
  if (m.kind != Ctl::credit) ++inflight_;  // periodic credit reports never keep a run alive
  A.ctl.push_back(std::move(m));
  push(t, EvKind::control_arrival, a);
}

void Simulator::on_control(std::uint32_t a) {
  UpArea& A = up_[a];
  ControlMsg m = std::move(A.ctl.front());
  A.ctl.pop_front();
  if (m.kind != Ctl::credit) --inflight_;
  bool wake_up = false;
  switch (m.kind) {
    case Ctl::pause_path:
      upp_[m.path].paused = true;
      break;
    case Ctl::resume_path:
      upp_[m.path].paused = false;
      wake_up = true;
      break;
    case Ctl::pause_area:
      A.paused = true;
      break;
    case Ctl::resume_area:
      A.paused = false;
      wake_up = true;
      break;
    case Ctl::reset: {
      UpPath& P = upp_[m.path];
      if (m.epoch <= P.epoch) break;  // stale reset
      P.epoch = m.epoch;
      P.cursor = m.seq;
      P.in_txn = false;
      P.need_handshake = true;
      if (!P.lagging) {
        P.lagging = true;
        A.lagging.push_back(m.path);
      }
      trace('c', 0, m.path, m.epoch, m.seq);
      if (tl_ != nullptr) {
        TimelineAction ta;
        ta.time_us = now_;
        ta.kind = "reset_applied";
        ta.area = a;
        ta.path = in_.path_names[m.path];
        if (const std::uint32_t g = event_at(m.path, m.seq); g != kNoEvent) ta.at = identity_of(in_, g);
        ta.epoch = m.epoch;
        ta.seq = m.seq;
        ta.area_pending = fc_.area_pending(a);
        tl_->action(ta);
      }
      wake_up = true;
      break;
    }
    case Ctl::credit: {
      A.credit = static_cast<std::int64_t>(m.area_credit);
      const auto& paths = in_.areas[a].paths;
      for (std::size_t i = 0; i < paths.size() && i < m.path_credit.size(); ++i) {
        upp_[paths[i]].credit = m.path_credit[i];
      }
      wake_up = true;
      break;
    }
  }
  if (wake_up) wake(a);
}

}  // namespace binlogctl::replay_detail
