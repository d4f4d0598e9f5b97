// The simulator's online invariants (simulator.h).
#include "replay/simulator.h"

namespace binlogctl::replay_detail {

std::string Simulator::where(std::uint32_t p, std::uint32_t seq) const {
  const auto& list = in_.path_events[p];
  if (seq >= list.size()) return fmt::format("{} seq {} (past the end)", in_.path_names[p], seq);
  // The transaction (RDP id, GTID), the file and the event's start position (of its
  // TRANSACTION_PAYLOAD for an inner event, then its index inside it); row: a sub-event of a
  // rows event split by key (hash:N), its first row.
  return fmt::format("{} seq {} ({})", in_.path_names[p], seq, describe(identity_of(in_, list[seq])));
}

// The upstream reads past a break of the source's context.
void Simulator::source_break(std::uint32_t a) {
  UpArea& A = up_[a];
  const SourceBreak& b = in_.source_breaks[A.next_break++];
  A.break_at = A.next_break < A.end_break ? in_.source_breaks[A.next_break].event : 0xffffffffu;
  const std::uint32_t g = b.event < A.end ? b.event : kNoEvent;
  violate("source_context",
          fmt::format("{}:{}: {}: {}; the upstream read past it{}", b.log_name, b.pos, b.check, b.message,
                      g != kNoEvent ? fmt::format(" at {}", describe(identity_of(in_, g)))
                                    : std::string(" at the end of the source")),
          g != kNoEvent ? in_.events[g].path : kNoPath, g);
  Violation& v = violations_.back();
  v.log_name = b.log_name;  // where the context breaks (`at`: where the upstream met it)
  v.pos = b.pos;
}

void Simulator::violate(std::string check, std::string msg, std::uint32_t p, std::uint32_t g) {
  Violation v;
  v.check = std::move(check);
  v.time_us = now_;
  v.message = std::move(msg);
  if (p != kNoPath) v.path = in_.path_names[p];
  if (g != kNoEvent) {
    v.at = identity_of(in_, g);
    v.log_name = v.at.log_name;
    v.pos = v.at.pos;
  }
  const std::size_t n = std::min(trace_pos_, trace_.size());
  for (std::size_t i = trace_pos_ - n; i < trace_pos_; ++i) {
    const TraceRec& r = trace_[i % trace_.size()];
    const std::string path = r.path == kNoPath ? std::string("-") : in_.path_names[r.path];
    switch (r.what) {
      case 'a':
        v.trace.push_back(fmt::format("{:.3f} ms action {} {} seq {} count {}", ms(r.t),
                                      to_string(static_cast<ActionKind>(r.kind)), path, r.a, r.b));
        break;
      case 'd':
        v.trace.push_back(
            fmt::format("{:.3f} ms ack {} seq {}..{}", ms(r.t), path, r.a, r.a + r.b - 1));
        break;
      case 'h':
        v.trace.push_back(
            fmt::format("{:.3f} ms sink {} seq {}..{}", ms(r.t), path, r.a, r.a + r.b - 1));
        break;
      case 'c':
        v.trace.push_back(fmt::format("{:.3f} ms upstream reset {} epoch {} from seq {}", ms(r.t),
                                      path, r.a, r.b));
        break;
      default:
        break;
    }
  }
  if (tl_ != nullptr) {
    TimelineAction ta;
    ta.time_us = now_;
    ta.kind = v.check == "deadlock" ? "deadlock" : "violation";
    ta.detail = v.message;
    ta.at = v.at;
    if (!v.path.empty()) ta.path = v.path;
    tl_->action(ta);
  }
  hash(fnv1a(v.check));
  violations_.push_back(std::move(v));
  if (o_.stop_on_violation) stop_ = true;
}

}  // namespace binlogctl::replay_detail
