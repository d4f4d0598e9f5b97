// Flow-control engine: thresholds, hysteresis, release choice, policies, reset protocol.
// The first cases rewrite TiCDC's utils/dynstream memory_control_test.go and
// memory_control_algorithm_test.go (design/flow-control.md §3) for our engine.
#include <binlogctl/flow_control.h>
#include <doctest/doctest.h>

#include <algorithm>

using namespace binlogctl;

namespace {

constexpr std::uint64_t kSec = 1'000'000;

FlowThresholds small_quota(std::uint64_t q) {
  FlowThresholds t;
  t.quota = q;
  return t;
}

std::size_t count_kind(const FlowController& fc, ActionKind k) {
  const auto& a = fc.actions();
  return static_cast<std::size_t>(
      std::count_if(a.begin(), a.end(), [k](const FlowAction& x) { return x.kind == k; }));
}

// Appends `size` bytes as the next event of path p (epoch 0 stream starting at seq 0).
struct Feeder {
  FlowController& fc;
  std::vector<std::uint32_t> next_seq = std::vector<std::uint32_t>(64, 0);
  std::uint32_t order = 0;
  AppendStatus push(std::uint64_t now, std::uint32_t p, std::uint32_t size) {
    return fc.on_event(now, p, fc.path_epoch(p), next_seq[p]++, size, order++);
  }
};

}  // namespace

TEST_SUITE("flow_control") {
  TEST_CASE("policy names round-trip") {
    for (Policy p : {Policy::doc, Policy::ticdc, Policy::none, Policy::blocking}) {
      Policy q = Policy::none;
      CHECK(parse_policy(to_string(p), q));
      CHECK(q == p);
    }
    Policy q = Policy::ticdc;
    CHECK_FALSE(parse_policy("v2path", q));
    CHECK(q == Policy::ticdc);
  }

  TEST_CASE("thresholds: 20/10 path and 80/50 area hysteresis (memory_control_algorithm_test)") {
    struct Row {
      bool paused;
      std::uint64_t used;
      PauseChange want;
    };
    // Path level, quota 100: pause at >= 20, resume below 10.
    for (const Row& r : {Row{false, 19, PauseChange::none}, Row{false, 20, PauseChange::pause},
                         Row{false, 90, PauseChange::pause}, Row{true, 15, PauseChange::none},
                         Row{true, 10, PauseChange::none}, Row{true, 9, PauseChange::resume},
                         Row{true, 0, PauseChange::resume}, Row{false, 5, PauseChange::none}}) {
      CAPTURE(r.used);
      CHECK(hysteresis(r.paused, r.used, 100, 0.20, 0.10) == r.want);
    }
    // Area level: pause at >= 80, resume below 50; 60 changes nothing either way.
    for (const Row& r : {Row{false, 79, PauseChange::none}, Row{false, 80, PauseChange::pause},
                         Row{true, 60, PauseChange::none}, Row{true, 50, PauseChange::none},
                         Row{true, 49, PauseChange::resume}, Row{false, 60, PauseChange::none}}) {
      CAPTURE(r.used);
      CHECK(hysteresis(r.paused, r.used, 100, 0.80, 0.50) == r.want);
    }
    // Quotas that are not multiples of 10 (no floating-point off-by-one at the edge).
    CHECK(hysteresis(false, 205, 1025, 0.20, 0.10) == PauseChange::pause);
    CHECK(hysteresis(false, 204, 1025, 0.20, 0.10) == PauseChange::none);
  }

  TEST_CASE("v2 adaptive thresholds table (calculateThresholds)") {
    auto near = [](double a, double b) { return std::abs(a - b) < 1e-9; };
    CHECK(near(calculate_v2_thresholds(1, 0.3).pause, 0.8));
    CHECK(near(calculate_v2_thresholds(1, 0.3).resume, 0.4));
    CHECK(near(calculate_v2_thresholds(2, 0.9).pause, 0.5));
    CHECK(near(calculate_v2_thresholds(2, 0.9).resume, 0.25));
    // n = 4 at low usage: 0.2 / (1 - 0.5/4) = 0.2286, 0.1143 (TiCDC's test says 0.22/0.11).
    const auto t4 = calculate_v2_thresholds(4, 0.3);
    CHECK(t4.pause == doctest::Approx(0.2 / 0.875));
    CHECK(t4.resume == doctest::Approx(0.1 / 0.875));
    CHECK(static_cast<int>(t4.pause * 100) == 22);
    CHECK(static_cast<int>(t4.resume * 100) == 11);
    // Tier edges are inclusive.
    CHECK(calculate_v2_thresholds(100, 0.5).pause == doctest::Approx(0.2 / 0.995));
    CHECK(calculate_v2_thresholds(100, 0.51).pause == doctest::Approx(0.1 / 0.995));
    CHECK(calculate_v2_thresholds(100, 0.8).pause == doctest::Approx(0.1 / 0.995));
    CHECK(calculate_v2_thresholds(100, 1.0).pause == doctest::Approx(0.05 / 0.995));
    CHECK(calculate_v2_thresholds(100, 1.5).resume == doctest::Approx(0.001 / 0.995));
    const auto big = calculate_v2_thresholds(10000, 1.2);
    CHECK(big.pause == doctest::Approx(0.01).epsilon(0.001));
    // Invariant 0 < resume < pause < 1 wherever the table has an entry.
    for (std::size_t n : {1u, 2u, 3u, 4u, 10u, 100u, 10000u}) {
      for (double u = 0; u <= 1.5; u += 0.05) {
        const auto t = calculate_v2_thresholds(n, u);
        CAPTURE(n);
        CAPTURE(u);
        CHECK(t.resume > 0);
        CHECK(t.resume < t.pause);
        CHECK(t.pause < 1);
      }
    }
    // Above 1.5 there is no tier: {0, 0}, the pause-forever edge case the engine must avoid.
    CHECK(calculate_v2_thresholds(10, 1.6).pause == 0);
  }

  TEST_CASE("release choice: most advanced blocked paths covering 60% (TestReleaseMemory)") {
    // Three blocking paths, last handled ts 300/200/100, sizes 400/300/300 of 1000.
    std::vector<ReleaseCandidate> c = {
        {1, 400, 300, true}, {2, 300, 200, true}, {3, 300, 100, true}};
    CHECK(select_release_paths(c, 1000, 0.6, 256) == std::vector<std::uint32_t>{1, 2});
    // 300 x 3 of 900: 600 >= 540 after two.
    c = {{1, 300, 300, true}, {2, 300, 200, true}, {3, 300, 100, true}};
    CHECK(select_release_paths(c, 900, 0.6, 256) == std::vector<std::uint32_t>{1, 2});
    // Order does not depend on the input order; ties on ts go to the lower id.
    c = {{3, 300, 100, true}, {2, 300, 300, true}, {1, 300, 300, true}};
    CHECK(select_release_paths(c, 900, 0.6, 256) == std::vector<std::uint32_t>{1, 2});
    // Non-blocking and tiny paths are skipped; the laggard is kept.
    c = {{1, 500, 300, false}, {2, 100, 250, true}, {3, 400, 200, true}, {4, 500, 100, true}};
    CHECK(select_release_paths(c, 1500, 0.6, 256) == std::vector<std::uint32_t>{3, 4});
    c = {{1, 500, 300, false}};
    CHECK(select_release_paths(c, 500, 0.6, 256).empty());
  }

  TEST_CASE("area pause state: 10, 60 no pause; 80 one pause; 30 resume; no repeats") {
    FlowThresholds t = small_quota(100);
    t.path_pause = 2.0;  // isolate the area level
    t.path_resume = 1.5;
    t.feedback_interval_us = 0;
    FlowController fc(Policy::doc, t);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    Feeder f{fc};
    f.push(0, p, 10);
    CHECK(fc.actions().empty());
    f.push(1, p, 50);
    CHECK(fc.area_pending(a) == 60);
    CHECK(fc.actions().empty());
    CHECK(f.push(2, p, 20) == AppendStatus::appended);
    REQUIRE(fc.actions().size() == 1);
    CHECK(fc.actions()[0].kind == ActionKind::pause_area);
    CHECK(fc.area_paused(a));
    fc.clear_actions();
    // Appends are never refused while paused (the upstream stops; in-flight data still lands).
    CHECK(f.push(3, p, 5) == AppendStatus::appended);
    CHECK(fc.actions().empty());
    // Pop the first two events (10 + 50): 25 left, below 50.
    auto b = fc.pop_batch(4, p, 2, 1000);
    CHECK(b.count == 2);
    CHECK(b.bytes == 60);
    CHECK(fc.area_pending(a) == 25);
    REQUIRE(count_kind(fc, ActionKind::resume_area) == 1);
    fc.clear_actions();
    fc.batch_done(5, b);
    b = fc.pop_batch(6, p, 10, 1000);
    fc.batch_done(7, b);
    fc.on_tick(8);
    CHECK(fc.actions().empty());
    CHECK(fc.area_pending(a) == 0);
    CHECK(fc.area_counters(a).pauses == 1);
    CHECK(fc.area_counters(a).resumes == 1);
  }

  TEST_CASE("path pause is fast, resume is lazy (feedback interval) and driven by the tick") {
    FlowController fc(Policy::doc, small_quota(1000));
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    const auto q = fc.add_path(a);
    Feeder f{fc};
    f.push(0, p, 150);
    CHECK(fc.actions().empty());
    f.push(10, p, 60);  // 210 >= 200: pause now
    REQUIRE(fc.actions().size() == 1);
    CHECK(fc.actions()[0].kind == ActionKind::pause_path);
    CHECK(fc.actions()[0].path == p);
    CHECK(fc.path_paused(p));
    CHECK_FALSE(fc.path_paused(q));
    fc.clear_actions();
    auto b = fc.pop_batch(20, p, 10, 10'000);  // pending 0 < 100, but only 10 µs after the pause
    CHECK(fc.path_pending(p) == 0);
    CHECK(fc.actions().empty());
    CHECK(fc.path_paused(p));
    fc.batch_done(30, b);
    fc.on_tick(kSec / 2);
    CHECK(fc.actions().empty());
    fc.on_tick(10 + kSec);  // the interval has passed: the timer resumes it
    REQUIRE(fc.actions().size() == 1);
    CHECK(fc.actions()[0].kind == ActionKind::resume_path);
    CHECK_FALSE(fc.path_paused(p));
    CHECK(fc.path_counters(p).pauses == 1);
    CHECK(fc.path_counters(p).resumes == 1);
    CHECK(fc.path_counters(p).flaps == 1);  // pause -> resume within 2 intervals
    CHECK(fc.path_counters(p).paused_us == kSec);
    CHECK(fc.paused_paths().empty());
  }

  TEST_CASE("doc circuit breaker discards the longest path (ties: lower id) and resets it") {
    FlowThresholds t = small_quota(1000);  // H = 1500
    t.path_pause = 5;
    t.path_resume = 4;
    t.area_pause = 5;
    t.area_resume = 4;
    FlowController fc(Policy::doc, t);
    const auto a = fc.add_area();
    const auto p0 = fc.add_path(a), p1 = fc.add_path(a), p2 = fc.add_path(a);
    Feeder f{fc};
    for (int i = 0; i < 6; ++i) f.push(0, p0, 100);  // 600
    for (int i = 0; i < 6; ++i) f.push(0, p1, 100);  // 600 (tie with p0)
    for (int i = 0; i < 3; ++i) f.push(0, p2, 100);  // 300 -> 1500 total
    CHECK(fc.actions().empty());
    CHECK(fc.area_pending(a) == 1500);
    CHECK(f.push(1, p2, 100) == AppendStatus::appended);  // 1600 > 1500: break p0 first
    REQUIRE(fc.actions().size() == 2);
    CHECK(fc.actions()[0].kind == ActionKind::circuit_break);
    CHECK(fc.actions()[0].path == p0);
    CHECK(fc.actions()[0].count == 6);
    CHECK(fc.actions()[0].bytes == 600);
    CHECK(fc.actions()[1].kind == ActionKind::reset);
    CHECK(fc.actions()[1].path == p0);
    CHECK(fc.actions()[1].epoch == 1);
    CHECK(fc.actions()[1].seq == 0);  // nothing acknowledged yet: restart from the beginning
    CHECK(fc.area_pending(a) == 1000);
    CHECK(fc.path_pending(p0) == 0);
    CHECK(fc.awaiting_handshake(p0));
    CHECK(fc.accounting_consistent());
    // The incoming path is the victim itself: it is discarded too.
    fc.clear_actions();
    for (int i = 0; i < 5; ++i) f.push(2, p2, 100);  // p2 900, p1 600 -> 1500
    CHECK(f.push(3, p2, 100) == AppendStatus::discarded);
    CHECK(count_kind(fc, ActionKind::circuit_break) == 1);
    CHECK(fc.actions()[0].path == p2);
    CHECK(fc.area_pending(a) == 600);
    CHECK(fc.area_counters(a).circuit_breaks == 2);
  }

  TEST_CASE("reset protocol: stale epochs dropped, handshake first, re-read prefix skipped") {
    FlowController fc(Policy::none, small_quota(1 << 20));
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    for (std::uint32_t s = 0; s < 8; ++s)
      CHECK(fc.on_event(0, p, 0, s, 10, s) == AppendStatus::appended);
    auto b1 = fc.pop_batch(1, p, 3, 1000);  // seq 0..2 to the sink
    CHECK(b1.first_seq == 0);
    CHECK(b1.count == 3);
    fc.batch_done(2, b1);
    CHECK(fc.acked_seq(p) == 3);
    auto b2 = fc.pop_batch(3, p, 2, 1000);  // seq 3..4 in the sink, not yet acknowledged
    CHECK(b2.first_seq == 3);
    // Injected drop on the next arrival: marker behind seq 5..7, reset when it reaches the head.
    CHECK(fc.on_event(4, p, 0, 8, 10, 8, true) == AppendStatus::marker);
    CHECK(fc.on_event(4, p, 0, 9, 10, 9) == AppendStatus::discarded);
    CHECK_FALSE(fc.awaiting_handshake(p));
    fc.clear_actions();
    fc.batch_done(5, b2);
    auto b3 = fc.pop_batch(6, p, 100, 1000);  // 5..7, then the marker is at the head
    CHECK(b3.first_seq == 5);
    CHECK(b3.count == 3);
    // The dispatcher is busy with 5..7 in the sink: it handles the marker, sees the broken
    // sequence and resets only when the sink acknowledges them (the seed: the Dispatcher
    // detects non-sequential data and triggers the reset).
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.batch_done(7, b3);
    REQUIRE(count_kind(fc, ActionKind::reset) == 1);
    const FlowAction reset = fc.actions().back();
    CHECK(reset.cause == ResetCause::drop_marker);
    CHECK(reset.epoch == 1);
    CHECK(reset.seq == 8);  // checkpoint: 0..7 acknowledged
    CHECK(fc.path_epoch(p) == 1);
    // Old-epoch events still on the link are dropped; data before the handshake is an error.
    CHECK(fc.on_event(7, p, 0, 10, 10, 10) == AppendStatus::stale_epoch);
    CHECK(fc.on_event(7, p, 1, 5, 10, 5) == AppendStatus::before_handshake);
    CHECK(fc.area_counters(a).protocol_errors == 1);
    CHECK(fc.on_handshake(8, p, 0, 5) == AppendStatus::stale_epoch);
    // An upstream that restarts further back (from an older checkpoint) re-sends 5..7.
    CHECK(fc.on_handshake(8, p, 1, 5) == AppendStatus::appended);
    // 5..7 were forwarded before the reset: skipped, not delivered twice.
    for (std::uint32_t s = 5; s < 8; ++s)
      CHECK(fc.on_event(9, p, 1, s, 10, s) == AppendStatus::filtered);
    CHECK(fc.on_event(9, p, 1, 8, 10, 8) == AppendStatus::appended);
    CHECK(fc.path_counters(p).filtered == 3);
    // A gap (9 missing) breaks the stream again; 8 is ahead of the marker.
    fc.clear_actions();
    CHECK(fc.on_event(9, p, 1, 10, 10, 10) == AppendStatus::gap);
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    auto b4 = fc.pop_batch(11, p, 100, 1000);
    CHECK(b4.first_seq == 8);
    CHECK(b4.count == 1);
    CHECK_FALSE(b4.stale);
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.batch_done(12, b4);
    REQUIRE(count_kind(fc, ActionKind::reset) == 1);
    CHECK(fc.actions().back().cause == ResetCause::gap);
    CHECK(fc.path_epoch(p) == 2);
    CHECK(fc.acked_seq(p) == 9);
    CHECK(fc.area_pending(a) == 0);
    CHECK(fc.accounting_consistent());
  }

  TEST_CASE("ticdc: drop markers at the hard limit, appends below it") {
    FlowThresholds t = small_quota(1000);  // H = 1500
    t.path_credit_floor = 0;
    FlowController fc(Policy::ticdc, t);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a), q = fc.add_path(a);
    Feeder f{fc};
    for (int i = 0; i < 14; ++i) CHECK(f.push(0, p, 100) == AppendStatus::appended);
    CHECK(f.push(0, q, 100) == AppendStatus::appended);  // 1500: the next one is over
    CHECK(fc.actions().empty());
    CHECK(f.push(1, q, 100) == AppendStatus::marker);
    CHECK(count_kind(fc, ActionKind::drop_marker) == 1);
    // q had one queued event ahead of the marker: the reset waits for it.
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    CHECK(fc.area_pending(a) == 1500);
    auto b = fc.pop_batch(2, q, 10, 10'000);
    CHECK(b.count == 1);
    // The marker is at the head, but the dispatcher is busy with the batch in the sink: it
    // handles the marker (and resets) only when the sink acknowledges that batch.
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.batch_done(3, b);
    CHECK(count_kind(fc, ActionKind::reset) == 1);
    CHECK(fc.actions().back().cause == ResetCause::drop_marker);
    // Credits as reported: area Q - used clamped at 0, path max(Q/10, floor) - used.
    CHECK(fc.area_credit(a) == 0);
    CHECK(fc.path_credit(p) == 0);
    CHECK(fc.path_credit(q) == 100);
    CHECK(fc.actions().size() == 2);
  }

  TEST_CASE("ticdc deadlock detection releases the most advanced blocked paths") {
    FlowThresholds t = small_quota(1000);
    t.path_credit_floor = 0;
    FlowController fc(Policy::ticdc, t);
    const auto a = fc.add_area();
    std::vector<std::uint32_t> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(fc.add_path(a));
    Feeder f{fc};
    // Each of p0..p2 has one batch in the sink (blocking); the order of its first event sets how
    // advanced it is. p3 is the laggard, with nothing blocked.
    f.order = 300;
    f.push(0, ps[0], 10);
    f.order = 200;
    f.push(0, ps[1], 10);
    f.order = 100;
    f.push(0, ps[2], 10);
    for (int k = 0; k < 3; ++k) (void)fc.pop_batch(0, ps[k], 1, 1000);
    for (int i = 0; i < 4; ++i) f.push(0, ps[0], 100);  // 400
    for (int i = 0; i < 3; ++i) f.push(0, ps[1], 100);  // 300
    for (int i = 0; i < 3; ++i) f.push(0, ps[2], 100);  // 300 -> 1000 pending
    fc.clear_actions();
    fc.on_signal(4 * kSec, a);  // no decrease for only 4 s
    CHECK(fc.actions().empty());
    fc.on_signal(5 * kSec + 1, a);  // > 5 s without a decrease, usage 1.0 > 0.6
    CHECK(count_kind(fc, ActionKind::release_path) == 2);
    std::vector<std::uint32_t> released;
    for (const auto& x : fc.actions()) {
      if (x.kind == ActionKind::release_path) released.push_back(x.path);
    }
    CHECK(released == std::vector<std::uint32_t>{ps[0], ps[1]});
    CHECK(fc.area_pending(a) == 300);
    CHECK(fc.area_counters(a).releases == 2);
    // Released paths are blocking: each resets when its dispatcher handles the marker, after
    // the sink acknowledged its batch.
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    CHECK(fc.path_broken(ps[0]));
    // No extra feedback: the release is rate-limited and the decrease timer restarted.
    fc.clear_actions();
    fc.on_signal(5 * kSec + 2, a);
    CHECK(fc.actions().empty());
  }

  TEST_CASE("none and blocking never emit pause actions; accounting returns to zero") {
    for (Policy pol : {Policy::none, Policy::blocking}) {
      FlowController fc(pol, small_quota(100));
      const auto a = fc.add_area();
      const auto p = fc.add_path(a);
      Feeder f{fc};
      for (int i = 0; i < 50; ++i) CHECK(f.push(0, p, 10) == AppendStatus::appended);
      CHECK(fc.actions().empty());
      CHECK(fc.area_pending(a) == 500);
      while (fc.can_pop(p)) fc.batch_done(1, fc.pop_batch(1, p, 7, 1000));
      CHECK(fc.area_pending(a) == 0);
      CHECK(fc.queued_events(p) == 0);
      CHECK(fc.acked_seq(p) == 50);
      CHECK(fc.accounting_consistent());
    }
  }

  TEST_CASE("pop_batch limits: count, bytes with one-event overshoot, max order") {
    FlowController fc(Policy::none, small_quota(1 << 20));
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    for (std::uint32_t s = 0; s < 10; ++s) fc.on_event(0, p, 0, s, 100, s * 2);
    auto b = fc.pop_batch(0, p, 100, 250);
    CHECK(b.count == 3);  // 300 >= 250: one event over
    CHECK(b.bytes == 300);
    CHECK_FALSE(fc.can_pop(p));  // blocking until batch_done
    fc.batch_done(0, b);
    b = fc.pop_batch(0, p, 100, 1 << 20, 11);  // orders 6, 8, 10 (12 is past the barrier)
    CHECK(b.first_seq == 3);
    CHECK(b.count == 3);
    fc.batch_done(0, b);
    b = fc.pop_batch(0, p, 100, 1 << 20, 0);  // at least one event even when the first is past
    CHECK(b.count == 1);
  }

  TEST_CASE(
      "doc: the breaker's victim resets when its dispatcher sees the gap, not at the discard") {
    FlowThresholds t = small_quota(1000);  // H = 1500
    t.path_pause = t.path_resume = t.area_pause = t.area_resume = 5;
    FlowController fc(Policy::doc, t);
    const auto a = fc.add_area();
    const auto p0 = fc.add_path(a), p1 = fc.add_path(a);
    Feeder f{fc};
    for (int i = 0; i < 10; ++i) f.push(0, p0, 100);      // 1000
    const Batch inflight = fc.pop_batch(0, p0, 1, 1000);  // p0 has a batch in its sink: blocking
    for (int i = 0; i < 6; ++i) f.push(0, p1, 100);       // 900 + 600 = 1500
    fc.clear_actions();
    CHECK(f.push(1, p1, 100) == AppendStatus::appended);  // over H: p0 (900) is discarded
    CHECK(count_kind(fc, ActionKind::circuit_break) == 1);
    CHECK(fc.actions().front().path == p0);
    CHECK(fc.actions().front().area_pending == 1500);  // the pending bytes just before it
    CHECK(count_kind(fc, ActionKind::reset) == 0);     // the dispatcher is busy with the batch
    CHECK(fc.path_broken(p0));
    CHECK(f.push(2, p0, 100) == AppendStatus::discarded);  // after the gap: dropped
    fc.clear_actions();
    fc.batch_done(3, inflight);
    REQUIRE(count_kind(fc, ActionKind::reset) == 1);
    CHECK(fc.actions().back().cause == ResetCause::circuit_break);
    CHECK(fc.actions().back().seq == 1);  // from the first unacknowledged position
    CHECK(fc.actions().back().time_us == 3);
    CHECK(fc.awaiting_handshake(p0));
  }

  TEST_CASE("ticdc: a release of the incoming path resets it once (#15 point 2)") {
    FlowThresholds t = small_quota(1000);  // H = 1500
    t.path_credit_floor = 0;
    FlowController fc(Policy::ticdc, t);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    Feeder f{fc};
    for (int i = 0; i < 10; ++i) f.push(0, p, 100);
    const Batch inflight = fc.pop_batch(0, p, 1, 1000);  // blocking, 900 pending
    for (int i = 0; i < 6; ++i) f.push(0, p, 100);       // 1500 >= H
    fc.clear_actions();
    // At H the append releases the most advanced blocked path (p itself); the event of the old
    // stream that triggered it is dropped, not turned into a second marker and a second reset.
    CHECK(f.push(1, p, 100) == AppendStatus::discarded);
    CHECK(count_kind(fc, ActionKind::release_path) == 1);
    CHECK(count_kind(fc, ActionKind::drop_marker) == 0);
    fc.batch_done(2, inflight);
    CHECK(count_kind(fc, ActionKind::reset) == 1);
    CHECK(fc.path_epoch(p) == 1);
    CHECK(fc.path_counters(p).resets == 1);
    CHECK(fc.area_counters(a).resets == 1);
  }

  TEST_CASE("a lazy resume waiting for its timer is scheduled work") {
    FlowThresholds t = small_quota(1000);
    FlowController fc(Policy::doc, t);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    Feeder f{fc};
    for (int i = 0; i < 9; ++i) f.push(0, p, 100);  // 900: path and area paused
    CHECK(fc.area_paused(a));
    CHECK_FALSE(fc.resume_scheduled(a));
    const Batch b = fc.pop_batch(1, p, 100, 10'000);  // 0 pending, resumes suppressed (< 1 s)
    CHECK(fc.area_paused(a));
    CHECK(fc.resume_scheduled(a));
    fc.batch_done(2, b);
    fc.on_tick(kSec + 1);
    CHECK_FALSE(fc.area_paused(a));
    CHECK_FALSE(fc.resume_scheduled(a));
  }
}

TEST_SUITE("flow_control #32") {
  TEST_CASE("without markers the dispatcher finds a gap at the head of its queue and resets") {
    FlowController fc(Policy::doc, small_quota(1 << 20));
    fc.set_drop_markers(false);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    Feeder f{fc};
    CHECK(f.push(0, p, 100) == AppendStatus::appended);                     // seq 0
    CHECK(fc.on_event(1, p, 0, f.next_seq[p]++, 100, f.order++, true) ==  // seq 1 dropped
          AppendStatus::marker);
    CHECK(count_kind(fc, ActionKind::reset) == 0);  // seq 0 is still to forward: no gap yet
    CHECK(f.push(2, p, 100) == AppendStatus::appended);  // seq 2 queued behind the gap
    const Batch b = fc.pop_batch(3, p, 4096, 1 << 20);
    CHECK(b.count == 1);  // the batch stops at the gap
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.batch_done(4, b);  // the dispatcher handles its queue again: seq 2 is not seq 1
    CHECK(count_kind(fc, ActionKind::gap_discard) == 1);
    REQUIRE(count_kind(fc, ActionKind::reset) == 1);
    const auto& acts = fc.actions();
    const auto reset = std::find_if(acts.begin(), acts.end(),
                                    [](const FlowAction& x) { return x.kind == ActionKind::reset; });
    CHECK(reset->cause == ResetCause::gap);
    CHECK(reset->seq == 1);  // the upstream restarts at the first event not acknowledged
    CHECK(fc.path_pending(p) == 0);
    CHECK(fc.accounting_consistent());
  }

  TEST_CASE("without markers a gap at the end of a path shows in the resolved signal") {
    FlowController fc(Policy::doc, small_quota(1 << 20));
    fc.set_drop_markers(false);
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    Feeder f{fc};
    CHECK(f.push(0, p, 100) == AppendStatus::appended);
    const Batch b = fc.pop_batch(1, p, 4096, 1 << 20);
    fc.batch_done(2, b);
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.on_resolved(3, p, 0, 1);  // everything sent arrived
    CHECK(count_kind(fc, ActionKind::reset) == 0);
    fc.on_resolved(4, p, 0, 3);  // seq 1 and 2 were sent and never arrived
    CHECK(count_kind(fc, ActionKind::reset) == 1);
  }

  TEST_CASE("markers: a drop's cause is on the action (injected, hard_limit)") {
    FlowController fc(Policy::ticdc, small_quota(1000));  // H = 1500
    const auto a = fc.add_area();
    const auto p = fc.add_path(a);
    const auto q = fc.add_path(a);
    Feeder f{fc};
    CHECK(fc.on_event(0, q, 0, f.next_seq[q]++, 10, f.order++, true) == AppendStatus::marker);
    CHECK(f.push(1, p, 1600) == AppendStatus::appended);
    CHECK(f.push(2, p, 10) == AppendStatus::marker);
    std::vector<ResetCause> causes;
    for (const auto& x : fc.actions()) {
      if (x.kind == ActionKind::drop_marker) causes.push_back(x.cause);
    }
    REQUIRE(causes.size() == 2);
    CHECK(causes[0] == ResetCause::injected);
    CHECK(causes[1] == ResetCause::hard_limit);
  }
}
