// GtidContinuity: GTID continuity of binlogctl verify (gtid_continuity.h).
#include "verify/gtid_continuity.h"

#include <fmt/format.h>

#include <string_view>

#include "events/events.h"

namespace binlogctl::verify {

void GtidContinuity::mysql_gtid(const Event& ev, const Uuid& uuid, std::string_view tag,
                                std::uint64_t gno, bool had_damage, std::uint64_t txn_id,
                                TxnGtid& tg) {
  if (ctx_.sum().gtid_state.contains(uuid, tag, gno)) {
    ctx_.emit(Check::gtid_duplicate, Severity::error, VerifyContext::where(ev),
              fmt::format("{}GTID {}{}{}:{} (transaction #{}) was already executed{}",
                          VerifyContext::inner_prefix(ev), uuid.to_string(), tag.empty() ? "" : ":",
                          tag, gno, txn_id,
                          ctx_.sum().gtid_executed.contains(uuid, tag, gno)
                              ? " earlier in the chain"
                              : " (the Previous_gtids of the chain include it)"));
    return;
  }
  const bool first_after_gap =
      (after_gap_ || break_pending_) && seen_since_gap_.emplace(uuid, std::string(tag)).second;
  if (!had_damage && !first_after_gap) {
    const GtidSet::Intervals* iv = ctx_.sum().gtid_state.find(uuid, tag);
    if (iv != nullptr && !iv->empty() && gno > iv->back().end + 1) {
      mysql_gaps_.push_back(PendingMysqlGap{uuid, std::string(tag), iv->back().end + 1, gno - 1,
                                            chain_.cur().log_name, VerifyContext::where(ev),
                                            txn_id});
    }
  }
  // The GTID must be one a set can hold (it is counted when its transaction ends).
  const char* bad = !tag.empty() && !is_valid_gtid_tag(tag) ? "invalid GTID tag"
                    : gno == 0                              ? "GNO must be positive"
                    : gno > kMaxGno                         ? "GNO out of range"
                                                            : nullptr;
  if (bad != nullptr) {
    ctx_.decode_failed(ev, DecodeError{Errc::bad_value, 0, bad});
    return;
  }
  tg.has_mysql = true;
  tg.uuid = uuid;
  tg.tag.assign(tag);
  tg.gno = gno;
  tg.undo_mysql_gap = !mysql_gaps_.empty() && mysql_gaps_.back().txn_id == txn_id;
  tg.undo_mysql_expect = expect_valid_ && !expect_.contains(uuid, tag, gno);
  if (expect_valid_) (void)expect_.add(uuid, tag, gno);
}

GtidContinuity::DomainServerSeen& GtidContinuity::ds_of(std::uint32_t d, std::uint32_t s) {
  for (DomainServerSeen& x : ds_seen_)
    if (x.domain == d && x.server_id == s) return x;
  ds_seen_.push_back(DomainServerSeen{d, s, {}});
  return ds_seen_.back();
}
GtidContinuity::DomainState& GtidContinuity::domain_of(std::uint32_t d) {
  for (DomainState& x : domains_)
    if (x.domain == d) return x;
  domains_.push_back(DomainState{d, false, 0, {}});
  return domains_.back();
}

void GtidContinuity::mariadb_gtid(const Event& ev, const MariaGtid& g, bool had_damage,
                                  std::uint64_t txn_id, TxnGtid& tg) {
  DomainServerSeen& ds = ds_of(g.domain, g.server_id);
  const MariaGtid* known = ctx_.sum().mariadb_gtid_state.find(g.domain, g.server_id);
  // Executed before: seen in the chain, or the very GTID the chain's Gtid_list ends with.
  if (ds.seen.contains(g.seq) || (known != nullptr && known->seq == g.seq)) {
    ctx_.emit(Check::gtid_duplicate, Severity::error, VerifyContext::where(ev),
              fmt::format("{}GTID {} (transaction #{}) was already executed{}",
                          VerifyContext::inner_prefix(ev), g.to_string(), txn_id,
                          ds.seen.contains(g.seq) ? " earlier in the chain"
                                                  : " (the chain's Gtid_list includes it)"));
    return;
  }
  DomainState& dom = domain_of(g.domain);
  tg.undo_maria = true;
  tg.undo_dom_has_last = dom.has_last;
  tg.undo_dom_last = dom.last;
  tg.undo_maria_gap = false;
  tg.undo_expect_m = expect_m_valid_;
  if (expect_m_valid_) {
    const MariaGtid* e = expect_m_.find(g.domain, g.server_id);
    tg.undo_expect_m_had = e != nullptr;
    tg.undo_expect_m_seq = e != nullptr ? e->seq : 0;
  }
  if (dom.has_last) {
    if (g.seq > dom.last + 1 && !had_damage) {
      tg.undo_maria_gap = true;
      maria_gaps_.push_back(PendingMariaGap{g, dom.last + 1, g.seq - 1, chain_.cur().log_name,
                                            VerifyContext::where(ev), txn_id});
    } else if (g.seq <= dom.last && !chain_.out_of_order()) {
      ctx_.emit(Check::gtid_gap, Severity::warning, VerifyContext::where(ev),
                fmt::format("{}GTID {} (transaction #{}) goes back in domain {}: seq_no {} after "
                            "{} (out of order; "
                            "gtid_strict_mode would refuse it)",
                            VerifyContext::inner_prefix(ev), g.to_string(), txn_id, g.domain, g.seq,
                            dom.last));
    }
  }
  if (!dom.has_last || g.seq > dom.last) dom.last = g.seq;
  dom.has_last = true;
  ds.seen.add(g.seq);
  dom.seen.add(g.seq);
  tg.has_maria = true;
  tg.maria = g;
  if (expect_m_valid_) expect_m_.update(g);
}

template <class Decoded>
bool GtidContinuity::header_decoded(const Event& ev, const Decoded& h, bool& expect_ok) {
  if (h) return true;
  ctx_.decode_failed(ev, h.error());
  expect_ok = false;
  return false;
}

void GtidContinuity::on_previous_gtids(const Event& ev) {
  ByteReader r = ev.body_reader();
  auto h = decode_previous_gtids(r);
  if (!header_decoded(ev, h, expect_valid_)) return;
  if (chain_.in_relay_log()) {
    expect_valid_ = false;
    return;
  }
  break_pending_ = false;  // this header is the baseline (its GTIDs are in gtid_state below)
  if (expect_valid_ && chain_.header_check_applies() && !(h.value() == expect_)) {
    GtidSet missing = expect_;  // executed in the chain, absent from this header
    missing.subtract(h.value());
    GtidSet extra = h.value();  // in this header, never executed in the chain
    extra.subtract(expect_);
    std::string msg = fmt::format(
        "Previous_gtids is '{}', but {}'s Previous_gtids plus the GTIDs executed in it give '{}'",
        h->to_string(), chain_.prev().log_name, expect_.to_string());
    if (!extra.empty())
      msg += fmt::format("; not executed in {}: {}", chain_.prev().log_name, extra.to_string());
    if (!missing.empty())
      msg += fmt::format("; executed in {} but missing here: {}", chain_.prev().log_name,
                         missing.to_string());
    ctx_.emit(Check::previous_gtids_mismatch, Severity::error, ev.pos, std::move(msg));
  }
  expect_ = h.value();
  expect_valid_ = true;
  ctx_.sum().gtid_state.union_with(h.value());
}

void GtidContinuity::on_gtid_list(const Event& ev) {
  ByteReader r = ev.body_reader();
  auto l = decode_gtid_list(r);
  if (!header_decoded(ev, l, expect_m_valid_)) return;
  if (chain_.in_relay_log()) {
    // The primary's Gtid_list (a relay log has none of its own): not checked against the
    // predecessor, but the state before the chain all the same (the purged domains).
    expect_m_valid_ = false;
    ctx_.sum().mariadb_gtid_state.union_with(l.value());
    // After a break, the primary's state is the baseline of the domains it names.
    for (const MariaGtid& g : l->entries()) {
      DomainState& dom = domain_of(g.domain);
      if (!dom.has_last) {
        dom.last = g.seq;
        dom.has_last = true;
      }
    }
    return;
  }
  if (expect_m_valid_ && chain_.header_check_applies() && !(l.value() == expect_m_)) {
    ctx_.emit(
        Check::gtid_list_mismatch, Severity::error, ev.pos,
        fmt::format(
            "Gtid_list is {}, but {}'s Gtid_list updated with the GTIDs executed in it gives {}",
            l->to_info(), chain_.prev().log_name, expect_m_.to_info()));
  }
  // Where the chain has no usable predecessor, this header is the baseline for gaps.
  const bool rebase = chain_.chain_break() || !expect_m_valid_;
  for (const MariaGtid& g : l->entries()) {
    DomainState& dom = domain_of(g.domain);
    if (rebase || !dom.has_last) {
      if (!dom.has_last || g.seq > dom.last) dom.last = g.seq;
      dom.has_last = true;
    }
  }
  expect_m_ = l.value();
  expect_m_valid_ = true;
  break_pending_ = false;
  ctx_.sum().mariadb_gtid_state.union_with(l.value());
}

void GtidContinuity::on_gap() {
  expect_valid_ = false;
  expect_m_valid_ = false;
  for (DomainState& d : domains_) d.has_last = false;
  after_gap_ = true;
  seen_since_gap_.clear();
}

void GtidContinuity::on_chain_break(bool prev_valid) {
  expect_valid_ = false;
  expect_m_valid_ = false;
  if (prev_valid) {
    // GTID continuity is not judged across the break: the seq_nos the absent or unrelated
    // files used are unknown. The next header (Gtid_list) is the baseline; without one, the
    // first GTID of each domain (or uuid) is.
    for (DomainState& d : domains_) d.has_last = false;
    break_pending_ = true;
    seen_since_gap_.clear();
  }
}

std::string GtidContinuity::roll_back(const TxnGtid& t, std::uint64_t txn_id) {
  std::string gtid;
  if (t.has_maria && t.undo_maria) {
    const MariaGtid& g = t.maria;
    gtid = fmt::format(" (GTID {})", g.to_string());
    ds_of(g.domain, g.server_id).seen.remove(g.seq);
    DomainState& dom = domain_of(g.domain);
    dom.seen.remove(g.seq);
    dom.has_last = t.undo_dom_has_last;
    dom.last = t.undo_dom_last;
    if (t.undo_maria_gap && !maria_gaps_.empty() && maria_gaps_.back().txn_id == txn_id)
      maria_gaps_.pop_back();
    if (t.undo_expect_m && expect_m_valid_) {
      if (t.undo_expect_m_had)
        expect_m_.update(MariaGtid{g.domain, g.server_id, t.undo_expect_m_seq});
      else
        expect_m_.erase(g.domain, g.server_id);
    }
  } else if (t.has_mysql) {
    gtid = fmt::format(" (GTID {}{}{}:{})", t.uuid.to_string(), t.tag.empty() ? "" : ":", t.tag,
                       t.gno);
    if (t.undo_mysql_gap && !mysql_gaps_.empty() && mysql_gaps_.back().txn_id == txn_id)
      mysql_gaps_.pop_back();
    if (t.undo_mysql_expect && expect_valid_) {
      GtidSet one;
      if (one.add(t.uuid, t.tag, t.gno)) expect_.subtract(one);
    }
  }
  return gtid;
}

void GtidContinuity::report_gaps() {
  VerifySummary& sum = ctx_.sum();
  for (const PendingMysqlGap& g : mysql_gaps_) {
    GtidSet range;
    if (!range.add_interval(g.uuid, g.tag, g.first, g.last)) continue;
    range.subtract(sum.gtid_state);
    if (range.empty()) continue;
    ctx_.deliver(Diagnostic{
        Check::gtid_gap, Severity::warning, g.log_name, g.pos,
        fmt::format("GTIDs of {}{}{} jump to {} (transaction #{}): {} ({} GTIDs) never executed in "
                    "the chain",
                    g.uuid.to_string(), g.tag.empty() ? "" : ":", g.tag, g.last + 1, g.txn_id,
                    range.to_string(), range.count())});
  }
  mysql_gaps_.clear();
  for (const PendingMariaGap& g : maria_gaps_) {
    const DomainState& dom = domain_of(g.gtid.domain);
    auto miss = dom.seen.missing(g.first, g.last);
    if (miss.empty()) continue;
    std::uint64_t n = 0;
    for (const auto& m : miss) n += m.second - m.first + 1;
    ctx_.deliver(
        Diagnostic{Check::gtid_gap, Severity::warning, g.log_name, g.pos,
                   fmt::format("GTID {} (transaction #{}): seq_no of domain {} jumps from {} to "
                               "{}; {} seq_no{} never used in "
                               "the chain ({}{})",
                               g.gtid.to_string(), g.txn_id, g.gtid.domain, g.first - 1, g.gtid.seq,
                               n, n == 1 ? "" : "s",
                               miss.front().first == miss.front().second
                                   ? fmt::format("{}", miss.front().first)
                                   : fmt::format("{}-{}", miss.front().first, miss.front().second),
                               miss.size() > 1 ? ", ..." : "")});
  }
  maria_gaps_.clear();
}

}  // namespace binlogctl::verify
