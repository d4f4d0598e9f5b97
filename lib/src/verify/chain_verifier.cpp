// ChainVerifier: the chain-level checks of binlogctl verify (see verify.h and
// man/binlogctl-verify.1.scd for the rules and the reasons behind them).
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/transaction.h>
#include <binlogctl/verify.h>

#include "events/events.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>

namespace binlogctl {

namespace {

// A set of unsigned sequence numbers as sorted, disjoint, non-adjacent closed intervals. Adding
// the next number of a run (the common case: GTID sequence numbers in commit order) extends the
// last interval in place, so a contiguous history costs one interval.

class SeqSet {
 public:
  using Interval = std::pair<std::uint64_t, std::uint64_t>;  // [first, second]

  bool contains(std::uint64_t x) const noexcept {
    auto it = upper_bound_first(x);
    if (it == iv_.begin()) return false;
    --it;
    return x <= it->second;
  }

  void add(std::uint64_t x) {
    if (!iv_.empty()) {
      Interval& last = iv_.back();
      if (x >= last.first && x <= last.second) return;
      if (x == last.second + 1) {
        last.second = x;
        return;
      }
      if (x > last.second + 1) {
        iv_.emplace_back(x, x);
        return;
      }
    } else {
      iv_.emplace_back(x, x);
      return;
    }
    // Out of order: insert and merge with the neighbours.
    auto it = upper_bound_first(x);
    if (it != iv_.begin()) {
      auto prev = std::prev(it);
      if (x <= prev->second) return;
      if (x == prev->second + 1) {
        prev->second = x;
        if (it != iv_.end() && it->first == x + 1) {
          prev->second = it->second;
          iv_.erase(it);
        }
        return;
      }
    }
    if (it != iv_.end() && it->first == x + 1) {
      it->first = x;
      return;
    }
    iv_.insert(it, Interval{x, x});
  }

  // Takes x out of the set (a transaction a crash rolled back: its GTID was never executed).
  void remove(std::uint64_t x) {
    auto it = upper_bound_first(x);
    if (it == iv_.begin()) return;
    --it;
    if (x > it->second) return;
    if (it->first == it->second) {
      iv_.erase(it);
    } else if (x == it->first) {
      ++it->first;
    } else if (x == it->second) {
      --it->second;
    } else {
      const Interval right{x + 1, it->second};
      it->second = x - 1;
      iv_.insert(std::next(it), right);
    }
  }

  // The numbers of [a, b] that are not in the set, as intervals.
  std::vector<Interval> missing(std::uint64_t a, std::uint64_t b) const {
    std::vector<Interval> out;
    std::uint64_t cur = a;
    for (const Interval& i : iv_) {
      if (i.second < cur) continue;
      if (i.first > b) break;
      if (i.first > cur) out.emplace_back(cur, i.first - 1);
      if (i.second >= b) return out;
      cur = i.second + 1;
    }
    if (cur <= b) out.emplace_back(cur, b);
    return out;
  }

  bool empty() const noexcept { return iv_.empty(); }
  std::uint64_t max() const noexcept { return iv_.empty() ? 0 : iv_.back().second; }
  const std::vector<Interval>& intervals() const noexcept { return iv_; }

 private:
  std::vector<Interval>::iterator upper_bound_first(std::uint64_t x) {
    return std::upper_bound(iv_.begin(), iv_.end(), x,
                            [](std::uint64_t v, const Interval& i) { return v < i.first; });
  }
  std::vector<Interval>::const_iterator upper_bound_first(std::uint64_t x) const {
    return std::upper_bound(iv_.begin(), iv_.end(), x,
                            [](std::uint64_t v, const Interval& i) { return v < i.first; });
  }
  std::vector<Interval> iv_;
};


std::string utc_time(std::uint32_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", tm);
}

bool contains_relay(std::string_view name) {
  for (std::size_t i = 0; i + 5 <= name.size(); ++i) {
    std::string_view w = name.substr(i, 5);
    if ((w[0] | 0x20) == 'r' && (w[1] | 0x20) == 'e' && (w[2] | 0x20) == 'l' && (w[3] | 0x20) == 'a' &&
        (w[4] | 0x20) == 'y')
      return true;
  }
  return false;
}

// Query statements that drive the transaction state.
enum class QueryKind { begin, commit, rollback, statement };

// The one statement classifier (transaction.h), reduced to what drives transaction structure.
QueryKind classify(std::string_view sql) {
  switch (classify_statement(sql)) {
    case StatementKind::begin:
    case StatementKind::xa_start: return QueryKind::begin;
    case StatementKind::commit: return QueryKind::commit;
    case StatementKind::rollback: return QueryKind::rollback;
    default: return QueryKind::statement;
  }
}

bool is_gtid_type(std::uint8_t t) {
  return t == static_cast<std::uint8_t>(EventType::gtid) ||
         t == static_cast<std::uint8_t>(EventType::anonymous_gtid) ||
         t == static_cast<std::uint8_t>(EventType::gtid_tagged_log) ||
         t == static_cast<std::uint8_t>(EventType::mariadb_gtid);
}

struct PendingMysqlGap {
  Uuid uuid;
  std::string tag;
  std::uint64_t first = 0, last = 0;
  std::string log_name;
  std::uint64_t pos = 0;
  std::uint64_t txn_id = 0;
};

struct PendingMariaGap {
  MariaGtid gtid;  // the GTID after the jump
  std::uint64_t first = 0, last = 0;
  std::string log_name;
  std::uint64_t pos = 0;
  std::uint64_t txn_id = 0;
};

struct DomainServerSeen {
  std::uint32_t domain = 0, server_id = 0;
  SeqSet seen;
};

struct DomainState {
  std::uint32_t domain = 0;
  bool has_last = false;
  std::uint64_t last = 0;  // highest seq_no seen in this domain
  SeqSet seen;
};

enum class FileEnd { none, rotate, stop };

struct FileInfo {
  bool valid = false;
  std::string log_name;
  bool missing = false;      // named by an index but absent, or unreadable
  bool aborted = false;      // framing gave up (bad magic, unsupported format)
  bool damaged = false;      // any framing error
  bool relay = false;
  bool in_use = false;       // FDE still flagged LOG_EVENT_BINLOG_IN_USE_F
  FileEnd end = FileEnd::none;
  std::string rotate_name;
  std::uint64_t rotate_pos = 0;        // the position the ROTATE names
  std::uint64_t rotate_event_pos = 0;  // where the ROTATE event is
  std::uint64_t end_offset = 0;
  std::uint64_t last_event_pos = 0;
  std::uint64_t events = 0;
};

struct Txn {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t start_pos = 0;
  bool begun = false;      // BEGIN / XA START seen, or a MariaDB non-standalone GTID
  bool only_gtid = false;  // a GTID and nothing of its transaction yet
  bool from_gtid = false;
  bool reported = false;   // one transaction_structure finding per transaction at most
  bool damaged = false;    // damage met inside: its structure is not judged
  bool implicit_rows = false;  // MySQL < 5.5: rows of a non-transactional table, no BEGIN
  std::uint64_t begin_end = 0;  // end offset of the BEGIN event (MySQL bug #22540 positions)
  bool has_ts = false;
  std::uint32_t last_ts = 0;
  // The transaction's GTID, counted in the summary's executed sets and states only when the
  // transaction ends (a cut-off or broken transaction's GTID would be skipped by a replica
  // resuming from them).
  bool has_mysql_gtid = false, has_maria_gtid = false;
  Uuid uuid{};
  std::string tag;
  std::uint64_t gno = 0;
  MariaGtid maria{};
  // What the transaction's GTID changed in the chain's GTID bookkeeping, to undo it when a crash
  // rolled the transaction back (its server never committed it and reuses the GTID).
  bool undo_maria = false;
  bool undo_dom_has_last = false;
  std::uint64_t undo_dom_last = 0;
  bool undo_expect_m = false;      // expect_m was updated: its entry before
  bool undo_expect_m_had = false;
  std::uint64_t undo_expect_m_seq = 0;
  bool undo_maria_gap = false;     // a pending gap was recorded for it
  bool undo_mysql_expect = false;  // the GTID was added to `expect` (it was not there)
  bool undo_mysql_gap = false;
};

}  // namespace

struct ChainVerifier::Impl {
  DiagnosticSink& out;
  VerifyConfig cfg;
  VerifySummary sum;

  std::vector<std::string> plan;  // log names of all inputs, in order
  std::size_t input_index = 0;    // inputs met so far (begin_file / file_unavailable)
  std::vector<std::string> seen_names;

  FileInfo prev;
  FileInfo cur;
  bool in_file = false;
  bool chain_break = true;  // no usable predecessor for the header continuity checks
  bool prev_damaged_for_header = false;
  bool unrelated = false;  // this file's name does not continue the previous one's sequence
  bool out_of_order = false;  // this file comes after a later one of its sequence

  // per-file framing state
  std::uint32_t own_server_id = 0;
  std::uint32_t fde_count = 0;
  bool header_seen = false;
  Flavor flavor = Flavor::mysql;

  // MySQL GTIDs
  GtidSet expect;  // Previous_gtids of this file + executed in it
  bool expect_valid = false;
  std::vector<PendingMysqlGap> mysql_gaps;

  // MariaDB GTIDs
  MariaGtidList expect_m;
  bool expect_m_valid = false;
  std::vector<DomainServerSeen> ds_seen;
  std::vector<DomainState> domains;
  std::vector<PendingMariaGap> maria_gaps;

  // transactions
  Txn txn;
  Txn open_tail;  // a transaction open where the previous file ends without ROTATE or STOP (end_file)
  bool open_tail_valid = false;
  std::uint64_t next_txn_id = 1;
  std::vector<std::uint64_t> table_ids;
  bool damage_since_gtid = false;
  // After a gap the server made (Event::omitted_before): the (uuid, tag) pairs whose first GTID
  // since has been seen; the first one of each is not checked for continuity.
  bool after_gap = false;
  std::set<std::pair<Uuid, std::string>> seen_since_gap;
  // After a break in the file sequence (a missing file, files out of order, another sequence) and
  // until a GTID header of the primary's own gives the new baseline: what the absent files
  // executed is unknown, so the first GTID of each source is no gap (binlogctl-verify(1), gtid_gap).
  bool break_pending = false;
  bool after_standalone = false;  // the previous event ended a statement-only transaction

  // timestamps
  bool has_commit_clock = false;
  std::uint32_t commit_clock = 0;

  std::string scratch;  // decompressed MariaDB query text

  Impl(DiagnosticSink& o, VerifyConfig c) : out(o), cfg(c) {}

  // ---- output ------------------------------------------------------------------------------

  void deliver(Diagnostic d) {
    if (cfg.strict) d.severity = Severity::error;
    if (d.severity == Severity::error) ++sum.errors;
    else ++sum.warnings;
    ++sum.per_check[static_cast<std::size_t>(d.check)];
    out.report(d);
  }

  void emit(Check c, Severity s, std::uint64_t pos, std::string msg) {
    deliver(Diagnostic{c, s, cur.log_name, pos, std::move(msg)});
  }

  // Position and message prefix for an event (inner events are reported at their payload).
  static std::uint64_t where(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }
  static std::string inner_prefix(const Event& ev) {
    return ev.is_inner() ? fmt::format("in the transaction payload, inner event #{} ({} at inner offset {}): ",
                                       ev.inner_index, event_type_constant(ev.type_code()), ev.pos)
                         : std::string();
  }

  void mark_damage() {
    cur.damaged = true;
    damage_since_gtid = true;
    if (txn.active) txn.damaged = true;
  }

  void structure(const Event& ev, std::string msg) {
    if (txn.active && (txn.reported || txn.damaged)) return;
    if (txn.active) txn.reported = true;
    emit(Check::transaction_structure, Severity::error, where(ev), inner_prefix(ev) + msg);
  }

  void decode_failed(const Event& ev, const DecodeError& e) {
    const Check c = (e.code == Errc::truncated || e.code == Errc::bad_length) ? Check::bad_event_size
                                                                              : Check::undecodable_event;
    emit(c, Severity::error, where(ev),
         fmt::format("{}{} body does not decode: {} (at offset {}, event size {})", inner_prefix(ev),
                     event_type_constant(ev.type_code()), e.what, e.offset, ev.header.event_size));
    mark_damage();
  }

  // Servers before 5.5 wrote some transactions without BEGIN: autocommitted statements followed
  // by their XID (5.0), rows events of non-transactional tables (5.1).
  static bool legacy_mysql(const Event& ev) {
    return ev.fde->flavor == Flavor::mysql && ev.fde->version_product != 0 && ev.fde->version_product < 0x050500;
  }

  // ---- transactions --------------------------------------------------------------------------

  void start_txn(const Event& ev) {
    txn = Txn{};
    txn.active = true;
    txn.id = next_txn_id++;
    txn.start_pos = where(ev);
    table_ids.clear();
    ++sum.transactions;
    if (sum.first_transaction_id == 0) sum.first_transaction_id = txn.id;
    sum.last_transaction_id = txn.id;
  }

  void end_txn(const Event& ev) {
    const std::uint32_t ts = ev.header.timestamp;
    if (ts != 0 && !txn.damaged) {
      if (has_commit_clock && static_cast<std::uint64_t>(ts) + cfg.timestamp_threshold < commit_clock) {
        emit(Check::timestamp_regression, Severity::warning, where(ev),
             fmt::format("{}transaction #{} commits at {} ({}), {} s before an earlier transaction's commit at {} ({})",
                         inner_prefix(ev), txn.id, utc_time(ts), ts, commit_clock - ts, utc_time(commit_clock),
                         commit_clock));
      }
      if (!has_commit_clock || ts > commit_clock) commit_clock = ts;
      has_commit_clock = true;
    }
    if (txn.has_mysql_gtid) {
      (void)sum.gtid_state.add(txn.uuid, txn.tag, txn.gno);
      (void)sum.gtid_executed.add(txn.uuid, txn.tag, txn.gno);
    }
    if (txn.has_maria_gtid) {
      sum.mariadb_gtid_state.update(txn.maria);
      sum.mariadb_gtid_executed.update(txn.maria);
    }
    txn.has_mysql_gtid = txn.has_maria_gtid = false;
    txn.active = false;
    table_ids.clear();
  }

  // Events of a transaction must not go back in time within it (GTID events excluded: the
  // server stamps them at commit, after the statements).
  void note_ts(const Event& ev) {
    const std::uint32_t ts = ev.header.timestamp;
    if (ts == 0 || !txn.active) return;
    if (txn.has_ts && static_cast<std::uint64_t>(ts) + cfg.timestamp_threshold < txn.last_ts && !txn.damaged) {
      emit(Check::timestamp_regression, Severity::warning, where(ev),
           fmt::format("{}{} at {} ({}) is {} s before an earlier event of transaction #{} ({})", inner_prefix(ev),
                       event_type_constant(ev.type_code()), utc_time(ts), ts, txn.last_ts - ts, txn.id,
                       utc_time(txn.last_ts)));
    }
    if (!txn.has_ts || ts > txn.last_ts) txn.last_ts = ts;
    txn.has_ts = true;
  }

  // An event that only makes sense inside a transaction.
  void require_txn(const Event& ev) {
    if (txn.active) {
      txn.only_gtid = false;
      return;
    }
    const bool dmg = damage_since_gtid;
    start_txn(ev);
    const std::uint8_t t = ev.type_code();
    if (legacy_mysql(ev) && (is_rows_event(t) || t == static_cast<std::uint8_t>(EventType::table_map))) {
      txn.implicit_rows = true;  // ends with the STMT_END_F rows event
      return;
    }
    txn.begun = true;
    if (dmg) {
      txn.damaged = true;
      return;
    }
    structure(ev, fmt::format("{} outside a transaction (no BEGIN or GTID before it); transaction #{} starts here",
                              event_type_constant(ev.type_code()), txn.id));
  }

  void abandon_open_txn(const Event& ev, std::string_view why) {
    if (!txn.active) return;
    if (txn.only_gtid) {
      structure(ev, fmt::format("the GTID at {} (transaction #{}) is not followed by its transaction: {}",
                                txn.start_pos, txn.id, why));
    } else {
      structure(ev, fmt::format("transaction #{} begun at {} has no COMMIT/XID: {}", txn.id, txn.start_pos, why));
    }
    txn.active = false;
    table_ids.clear();
  }

  std::uint64_t read_table_id(const Event& ev, std::uint16_t* flags) const {
    ByteReader r = ev.body_reader();
    const std::uint8_t ph = ev.fde->post_header(ev.type_code());
    const std::uint64_t id = ph == 6 ? r.le_n(4) : r.le_n(6);
    const std::uint16_t f = r.u16();
    if (flags != nullptr) *flags = f;
    return r.ok() ? id : ~0ull;
  }

  void on_gtid(const Event& ev) {
    if (txn.active) {
      abandon_open_txn(ev, fmt::format("the {} at {} starts the next one", event_type_constant(ev.type_code()),
                                       where(ev)));
    }
    const bool had_damage = damage_since_gtid;
    start_txn(ev);
    txn.only_gtid = true;
    txn.from_gtid = true;
    const std::uint8_t t = ev.type_code();
    ByteReader r = ev.body_reader();
    if (t == static_cast<std::uint8_t>(EventType::mariadb_gtid)) {
      auto g = decode_mariadb_gtid(r, ev.header.server_id);
      if (!g) {
        decode_failed(ev, g.error());
        return;
      }
      txn.begun = !g->standalone();
      mariadb_gtid(ev, g->gtid(ev.header.server_id), had_damage);
    } else if (t == static_cast<std::uint8_t>(EventType::anonymous_gtid)) {
      // no GTID to account for
    } else {
      auto g = t == static_cast<std::uint8_t>(EventType::gtid_tagged_log) ? decode_gtid_tagged_log(r)
                                                                            : decode_gtid_log(r);
      if (!g) {
        decode_failed(ev, g.error());
        return;
      }
      mysql_gtid(ev, g->uuid, g->tag, g->gno, had_damage);
    }
    damage_since_gtid = false;
  }

  void mysql_gtid(const Event& ev, const Uuid& uuid, std::string_view tag, std::uint64_t gno, bool had_damage) {
    if (sum.gtid_state.contains(uuid, tag, gno)) {
      emit(Check::gtid_duplicate, Severity::error, where(ev),
           fmt::format("{}GTID {}{}{}:{} (transaction #{}) was already executed{}", inner_prefix(ev),
                       uuid.to_string(), tag.empty() ? "" : ":", tag, gno, txn.id,
                       sum.gtid_executed.contains(uuid, tag, gno) ? " earlier in the chain"
                                                                  : " (the Previous_gtids of the chain include it)"));
      return;
    }
    const bool first_after_gap =
        (after_gap || break_pending) && seen_since_gap.emplace(uuid, std::string(tag)).second;
    if (!had_damage && !first_after_gap) {
      const GtidSet::Intervals* iv = sum.gtid_state.find(uuid, tag);
      if (iv != nullptr && !iv->empty() && gno > iv->back().end + 1) {
        mysql_gaps.push_back(PendingMysqlGap{uuid, std::string(tag), iv->back().end + 1, gno - 1, cur.log_name,
                                             where(ev), txn.id});
      }
    }
    // The GTID must be one a set can hold (it is counted when its transaction ends).
    const char* bad = !tag.empty() && !is_valid_gtid_tag(tag) ? "invalid GTID tag"
                      : gno == 0                              ? "GNO must be positive"
                      : gno > kMaxGno                         ? "GNO out of range"
                                                              : nullptr;
    if (bad != nullptr) {
      decode_failed(ev, DecodeError{Errc::bad_value, 0, bad});
      return;
    }
    txn.has_mysql_gtid = true;
    txn.uuid = uuid;
    txn.tag.assign(tag);
    txn.gno = gno;
    txn.undo_mysql_gap = !mysql_gaps.empty() && mysql_gaps.back().txn_id == txn.id;
    txn.undo_mysql_expect = expect_valid && !expect.contains(uuid, tag, gno);
    if (expect_valid) (void)expect.add(uuid, tag, gno);
  }

  DomainServerSeen& ds_of(std::uint32_t d, std::uint32_t s) {
    for (DomainServerSeen& x : ds_seen)
      if (x.domain == d && x.server_id == s) return x;
    ds_seen.push_back(DomainServerSeen{d, s, {}});
    return ds_seen.back();
  }
  DomainState& domain_of(std::uint32_t d) {
    for (DomainState& x : domains)
      if (x.domain == d) return x;
    domains.push_back(DomainState{d, false, 0, {}});
    return domains.back();
  }

  void mariadb_gtid(const Event& ev, const MariaGtid& g, bool had_damage) {
    DomainServerSeen& ds = ds_of(g.domain, g.server_id);
    const MariaGtid* known = sum.mariadb_gtid_state.find(g.domain, g.server_id);
    // Executed before: seen in the chain, or the very GTID the chain's Gtid_list ends with.
    if (ds.seen.contains(g.seq) || (known != nullptr && known->seq == g.seq)) {
      emit(Check::gtid_duplicate, Severity::error, where(ev),
           fmt::format("{}GTID {} (transaction #{}) was already executed{}", inner_prefix(ev), g.to_string(), txn.id,
                       ds.seen.contains(g.seq) ? " earlier in the chain" : " (the chain's Gtid_list includes it)"));
      return;
    }
    DomainState& dom = domain_of(g.domain);
    txn.undo_maria = true;
    txn.undo_dom_has_last = dom.has_last;
    txn.undo_dom_last = dom.last;
    txn.undo_maria_gap = false;
    txn.undo_expect_m = expect_m_valid;
    if (expect_m_valid) {
      const MariaGtid* e = expect_m.find(g.domain, g.server_id);
      txn.undo_expect_m_had = e != nullptr;
      txn.undo_expect_m_seq = e != nullptr ? e->seq : 0;
    }
    if (dom.has_last) {
      if (g.seq > dom.last + 1 && !had_damage) {
        txn.undo_maria_gap = true;
        maria_gaps.push_back(PendingMariaGap{g, dom.last + 1, g.seq - 1, cur.log_name, where(ev), txn.id});
      } else if (g.seq <= dom.last && !out_of_order) {
        emit(Check::gtid_gap, Severity::warning, where(ev),
             fmt::format("{}GTID {} (transaction #{}) goes back in domain {}: seq_no {} after {} (out of order; "
                         "gtid_strict_mode would refuse it)",
                         inner_prefix(ev), g.to_string(), txn.id, g.domain, g.seq, dom.last));
      }
    }
    if (!dom.has_last || g.seq > dom.last) dom.last = g.seq;
    dom.has_last = true;
    ds.seen.add(g.seq);
    dom.seen.add(g.seq);
    txn.has_maria_gtid = true;
    txn.maria = g;
    if (expect_m_valid) expect_m.update(g);
  }

  void on_query(const Event& ev) {
    auto q = decode_query(ev.body_reader(), *ev.fde);
    QueryKind kind = QueryKind::statement;
    if (!q) {
      decode_failed(ev, q.error());
    } else {
      std::string_view sql = q->sql;
      if (ev.type_code() == static_cast<std::uint8_t>(EventType::mariadb_query_compressed)) {
        Status s = decompress_mariadb(Bytes(reinterpret_cast<const std::uint8_t*>(sql.data()), sql.size()),
                                      ev.body_offset(), scratch);
        if (!s) {
          decode_failed(ev, s.error());
          sql = {};
        } else {
          sql = scratch;
        }
      }
      kind = classify(sql);
    }
    switch (kind) {
      case QueryKind::begin:
        if (txn.active && (txn.begun || txn.implicit_rows) && !txn.only_gtid) {
          abandon_open_txn(ev, fmt::format("a BEGIN at {} starts another one", where(ev)));
        }
        if (!txn.active) start_txn(ev);
        txn.begun = true;
        txn.only_gtid = false;
        txn.begin_end = ev.is_inner() ? 0 : ev.pos + ev.header.event_size;
        note_ts(ev);
        return;
      case QueryKind::commit:
      case QueryKind::rollback:
        note_ts(ev);
        if (end_open_txn(ev, kind == QueryKind::commit ? "COMMIT" : "ROLLBACK")) return;
        if (!damage_since_gtid) {
          emit(Check::transaction_structure, Severity::error, where(ev),
               fmt::format("{}{} without BEGIN", inner_prefix(ev), kind == QueryKind::commit ? "COMMIT" : "ROLLBACK"));
        }
        return;
      case QueryKind::statement:
        statement(ev);
        return;
    }
  }

  // A statement: part of the open transaction, the one statement of a GTID's transaction, or a
  // transaction on its own (DDL, non-transactional statements without GTIDs).
  void statement(const Event& ev) {
    if (txn.active && txn.begun) {
      txn.only_gtid = false;
      note_ts(ev);
      return;
    }
    if (!txn.active) start_txn(ev);
    txn.only_gtid = false;
    note_ts(ev);
    end_txn(ev);
    after_standalone = true;
  }

  // The end of a transaction (`what`: COMMIT, ROLLBACK, the event's constant) ends the open
  // one, reported when it had no BEGIN. False when no transaction is open.
  bool end_open_txn(const Event& ev, std::string_view what) {
    if (!txn.active) return false;
    if (!txn.begun)
      structure(ev, fmt::format("{} right after the GTID of transaction #{} at {}, without BEGIN", what, txn.id,
                                txn.start_pos));
    end_txn(ev);
    return true;
  }

  void on_commit_event(const Event& ev) {
    note_ts(ev);
    if (end_open_txn(ev, event_type_constant(ev.type_code()))) return;
    // MySQL 5.0 wrote an autocommitted statement as `statement; XID`, without BEGIN.
    if (after_standalone && legacy_mysql(ev)) {
      after_standalone = false;
      return;
    }
    if (!damage_since_gtid) {
      emit(Check::transaction_structure, Severity::error, where(ev),
           fmt::format("{}{} without BEGIN", inner_prefix(ev), event_type_constant(ev.type_code())));
    }
  }

  void on_table_map(const Event& ev) {
    require_txn(ev);
    note_ts(ev);
    const std::uint64_t id = read_table_id(ev, nullptr);
    if (std::find(table_ids.begin(), table_ids.end(), id) == table_ids.end()) table_ids.push_back(id);
  }

  void on_rows(const Event& ev) {
    require_txn(ev);
    note_ts(ev);
    const std::uint8_t t = ev.type_code();
    const std::optional<RowsEventKind> kind = classify_rows_event(t);
    const bool pre_ga = kind && kind->version == 0;  // 5.1 pre-GA rows events: no table map rule
    std::uint16_t flags = 0;
    const std::uint64_t id = read_table_id(ev, &flags);
    const bool dummy = id == 0xffffffull || id == 0xffffffffffffull;
    if (!pre_ga && !dummy && std::find(table_ids.begin(), table_ids.end(), id) == table_ids.end()) {
      structure(ev, fmt::format("{} for table_id {} without a TABLE_MAP for it in this statement (transaction #{})",
                                event_type_constant(t), id, txn.id));
    }
    if ((flags & kRowsStmtEnd) != 0) {
      table_ids.clear();
      if (txn.implicit_rows) end_txn(ev);
    }
  }

  void on_context(const Event& ev) {
    if (txn.active) txn.only_gtid = false;
    note_ts(ev);
  }

  // ---- file headers and GTID continuity --------------------------------------------------------

  bool header_check_applies() const {
    return !chain_break && !prev_damaged_for_header && !cur.relay && !prev.relay;
  }

  // A file's GTID header (Previous_gtids or Gtid_list): only its first top-level one counts.
  bool first_gtid_header(const Event& ev) {
    if (ev.is_inner() || header_seen) return false;
    header_seen = true;
    return true;
  }
  // A GTID header that does not decode is reported, and the expectation it would have been
  // checked against (`expect_ok`) is dropped.
  template <class Decoded>
  bool gtid_header_decoded(const Event& ev, const Decoded& h, bool& expect_ok) {
    if (h) return true;
    decode_failed(ev, h.error());
    expect_ok = false;
    return false;
  }

  void on_previous_gtids(const Event& ev) {
    if (!first_gtid_header(ev)) return;
    ByteReader r = ev.body_reader();
    auto h = decode_previous_gtids(r);
    if (!gtid_header_decoded(ev, h, expect_valid)) return;
    if (cur.relay) {
      expect_valid = false;
      return;
    }
    break_pending = false;  // this header is the baseline (its GTIDs are in gtid_state below)
    if (expect_valid && header_check_applies() && !(h.value() == expect)) {
      GtidSet missing = expect;  // executed in the chain, absent from this header
      missing.subtract(h.value());
      GtidSet extra = h.value();  // in this header, never executed in the chain
      extra.subtract(expect);
      std::string msg = fmt::format("Previous_gtids is '{}', but {}'s Previous_gtids plus the GTIDs executed in it give '{}'",
                                    h->to_string(), prev.log_name, expect.to_string());
      if (!extra.empty()) msg += fmt::format("; not executed in {}: {}", prev.log_name, extra.to_string());
      if (!missing.empty()) msg += fmt::format("; executed in {} but missing here: {}", prev.log_name, missing.to_string());
      emit(Check::previous_gtids_mismatch, Severity::error, ev.pos, std::move(msg));
    }
    expect = h.value();
    expect_valid = true;
    sum.gtid_state.union_with(h.value());
  }

  void on_gtid_list(const Event& ev) {
    if (!first_gtid_header(ev)) return;
    ByteReader r = ev.body_reader();
    auto l = decode_gtid_list(r);
    if (!gtid_header_decoded(ev, l, expect_m_valid)) return;
    if (cur.relay) {
      // The primary's Gtid_list (a relay log has none of its own): not checked against the
      // predecessor, but the state before the chain all the same (the purged domains).
      expect_m_valid = false;
      sum.mariadb_gtid_state.union_with(l.value());
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
    if (expect_m_valid && header_check_applies() && !(l.value() == expect_m)) {
      emit(Check::gtid_list_mismatch, Severity::error, ev.pos,
           fmt::format("Gtid_list is {}, but {}'s Gtid_list updated with the GTIDs executed in it gives {}",
                       l->to_info(), prev.log_name, expect_m.to_info()));
    }
    // Where the chain has no usable predecessor, this header is the baseline for gaps.
    const bool rebase = chain_break || !expect_m_valid;
    for (const MariaGtid& g : l->entries()) {
      DomainState& dom = domain_of(g.domain);
      if (rebase || !dom.has_last) {
        if (!dom.has_last || g.seq > dom.last) dom.last = g.seq;
        dom.has_last = true;
      }
    }
    expect_m = l.value();
    expect_m_valid = true;
    break_pending = false;
    sum.mariadb_gtid_state.union_with(l.value());
  }

  // ---- framing-level checks of a top-level event --------------------------------------------

  void detect_relay(const Event& ev) {
    const std::uint8_t t = ev.type_code();
    const std::uint16_t flags = ev.header.flags;
    if ((flags & kFlagRelayLog) != 0) cur.relay = true;
    if (t == static_cast<std::uint8_t>(EventType::format_description)) {
      ++fde_count;
      if (fde_count == 1) {
        own_server_id = ev.header.server_id;
        cur.in_use = (flags & kFlagInUse) != 0;
        flavor = ev.fde->flavor;
      } else {
        const auto chained = static_cast<std::uint32_t>(ev.pos + ev.header.event_size);
        // A second format description written by another server, or with a position of another
        // file: the primary's, copied into a relay log.
        if (ev.header.server_id != own_server_id || ev.header.log_pos != chained) cur.relay = true;
      }
    } else if (t == static_cast<std::uint8_t>(EventType::rotate)) {
      // The ROTATE a primary sends first (artificial, position 0) only exists in relay logs.
      if ((flags & kFlagArtificial) != 0 || ev.header.log_pos == 0) cur.relay = true;
    }
  }

  void check_log_pos(const Event& ev) {
    const auto expected = static_cast<std::uint32_t>(ev.pos + ev.header.event_size);
    const std::uint32_t lp = ev.header.log_pos;
    if (lp == expected) return;
    // In a relay log the primary's events carry the primary's positions.
    if (cur.relay && ev.header.server_id != own_server_id) return;
    if (lp == 0) {
      if (cur.relay || (ev.header.flags & kFlagArtificial) != 0) return;
      // MariaDB 11.4+ (binlog_legacy_event_pos=OFF): 0 inside transactions.
      if (ev.fde->zero_log_pos_inside_transactions() && txn.active) return;
    }
    // MySQL before 5.0.48/5.1.20 (bug #22540): positions of the events of a transaction cache
    // were relative to the end of its BEGIN.
    if (ev.fde->flavor == Flavor::mysql && ev.fde->version_product != 0 && ev.fde->version_product < 0x050500 &&
        txn.active && txn.begin_end != 0 && ev.pos + ev.header.event_size > txn.begin_end &&
        lp == static_cast<std::uint32_t>(ev.pos + ev.header.event_size - txn.begin_end))
      return;
    emit(Check::log_pos_mismatch, Severity::error, ev.pos,
         fmt::format("{} has end_log_pos {}, expected {} (position {} + event size {}{})",
                     event_type_constant(ev.type_code()), lp, expected, ev.pos, ev.header.event_size,
                     ev.pos + ev.header.event_size > 0xffffffffull ? ", modulo 2^32" : ""));
  }

  // ---- per event -------------------------------------------------------------------------------

  void event(const Event& ev) {
    if (!in_file) return;
    const std::uint8_t t = ev.type_code();
    if (ev.is_inner()) {
      ++sum.inner_events;
    } else {
      ++sum.events;
      ++cur.events;
      cur.last_event_pos = ev.pos;
      if (ev.omitted_before > 0) {
        // The server left transactions out on purpose (a GTID dump): what they executed is
        // unknown, so GTID continuity is not checked across the gap, and the next file's GTID
        // header becomes the baseline. An open transaction at the gap is still reported.
        damage_since_gtid = true;
        expect_valid = false;
        expect_m_valid = false;
        for (DomainState& d : domains) d.has_last = false;
        after_gap = true;
        seen_since_gap.clear();
      }
      detect_relay(ev);
      if (ev.checksum_ok) check_log_pos(ev);
      if (t == static_cast<std::uint8_t>(EventType::rotate) && ev.checksum_ok) {
        cur.end = FileEnd::rotate;
        cur.rotate_event_pos = ev.pos;
        auto r = decode_rotate(ev.body_reader(), *ev.fde);
        if (!r) {
          decode_failed(ev, r.error());
          cur.end = FileEnd::none;
        } else {
          cur.rotate_name.assign(r->next_file);
          cur.rotate_pos = r->position;
        }
      } else if (t == static_cast<std::uint8_t>(EventType::stop) && ev.checksum_ok) {
        cur.end = FileEnd::stop;
      } else {
        cur.end = FileEnd::none;
      }
    }
    if (!ev.checksum_ok) {  // reported by the framing layer; its content cannot be trusted
      mark_damage();
      after_standalone = false;
      return;
    }
    const bool was_after_standalone = after_standalone;
    after_standalone = false;
    if (was_after_standalone && (t == static_cast<std::uint8_t>(EventType::xid))) after_standalone = true;
    if (is_gtid_type(t)) {
      on_gtid(ev);
      return;
    }
    if (is_rows_event(t)) {
      on_rows(ev);
      return;
    }
    switch (static_cast<EventType>(t)) {
      case EventType::query:
      case EventType::mariadb_query_compressed:
        on_query(ev);
        return;
      case EventType::execute_load_query:
      case EventType::load:
      case EventType::new_load:
      case EventType::exec_load:
      case EventType::delete_file:
        statement(ev);
        return;
      case EventType::xid:
      case EventType::xa_prepare:
        on_commit_event(ev);
        return;
      case EventType::table_map:
        on_table_map(ev);
        return;
      case EventType::transaction_payload:
        // The transaction's events are inside (BEGIN ... XID), after its GTID.
        if (!txn.active) require_txn(ev);
        return;
      case EventType::rows_query:
      case EventType::mariadb_annotate_rows:
      case EventType::transaction_context:
      case EventType::view_change:
        require_txn(ev);
        note_ts(ev);
        return;
      case EventType::intvar:
      case EventType::rand:
      case EventType::user_var:
      case EventType::begin_load_query:
      case EventType::append_block:
      case EventType::create_file:
        on_context(ev);
        return;
      case EventType::previous_gtids:
        on_previous_gtids(ev);
        return;
      case EventType::mariadb_gtid_list:
        on_gtid_list(ev);
        return;
      default:  // the file's own bookkeeping (FDE, ROTATE, STOP, checkpoints, ...) or unknown
        return;
    }
  }

  // ---- files -----------------------------------------------------------------------------------

  // file_sequence_gap between the previous input and this one; true when the sequence is broken.
  bool check_sequence(const std::string& name) {
    if (!prev.valid) return false;
    const auto p = numeric_suffix(prev.log_name);
    const auto n = numeric_suffix(name);
    unrelated = !p || !n;
    if (!p || !n) return false;
    const std::string pb = base_name_of(prev.log_name), nb = base_name_of(name);
    unrelated = pb != nb;
    if (pb != nb) {
      emit(Check::file_sequence_gap, Severity::error, 0,
           fmt::format("{} follows {}: not the same binlog sequence (base names differ)", name, prev.log_name));
      return true;
    }
    if (*n == *p + 1) return false;
    if (*n <= *p) {
      out_of_order = true;
      emit(Check::file_sequence_gap, Severity::error, 0,
           fmt::format("files out of order: {} comes after {}", name, prev.log_name));
      return true;
    }
    // The files in between: given elsewhere in the input (out of order: reported where the
    // sequence goes back), or absent (a gap, reported here).
    const std::size_t width = prev.log_name.size() - pb.size() - 1;
    auto name_of = [&](std::uint64_t k) { return fmt::format("{}.{:0{}}", pb, k, width); };
    std::uint64_t absent = 0;
    std::uint64_t first_absent = 0, last_absent = 0;
    for (std::uint64_t k = *p + 1; k < *n; ++k) {
      if (k - *p > 100000) {  // an absurd jump: count the rest as absent without looking
        last_absent = *n - 1;
        absent += *n - k;
        break;
      }
      const std::string nm = name_of(k);
      if (std::find(plan.begin(), plan.end(), nm) != plan.end()) continue;
      if (absent == 0) first_absent = k;
      last_absent = k;
      ++absent;
    }
    if (absent == 1) {
      deliver(Diagnostic{Check::file_sequence_gap, Severity::error, name_of(first_absent), 0,
                         fmt::format("{} is missing: the chain goes from {} to {}", name_of(first_absent),
                                     prev.log_name, name)});
    } else if (absent > 1) {
      deliver(Diagnostic{Check::file_sequence_gap, Severity::error, name_of(first_absent), 0,
                         fmt::format("{} files are missing ({} to {}): the chain goes from {} to {}", absent,
                                     name_of(first_absent), name_of(last_absent), prev.log_name, name)});
    }
    return true;
  }

  // The previous file's closing event against this file.
  void check_rotate(const std::string& name, bool seq_problem, bool after_unclosed) {
    if (!prev.valid || prev.missing || prev.aborted) return;
    if (prev.end == FileEnd::rotate) {
      const std::string_view target = prev.rotate_name;
      if (!seq_problem && target != name) {
        deliver(Diagnostic{Check::rotate_mismatch, Severity::error, prev.log_name, prev.rotate_event_pos,
                           fmt::format("the closing ROTATE names {}, but the next file is {}", target, name)});
      }
      if (prev.rotate_pos != 4) {
        deliver(Diagnostic{Check::rotate_mismatch, Severity::error, prev.log_name, prev.rotate_event_pos,
                           fmt::format("the closing ROTATE points to position {} of {}, expected 4", prev.rotate_pos,
                                       target)});
      }
    } else if (prev.end == FileEnd::none && !prev.damaged && !prev.relay && !seq_problem &&
               (prev.in_use || after_unclosed)) {
      // The server never closed the file (its FDE still flagged in use, or a live server went on
      // past its end without a closing event) and the next file follows: a server writes a new
      // file without closing the old one only when it starts again after a crash. The chain is
      // whole as the server has it; the crash itself is worth knowing.
      deliver(Diagnostic{
          Check::server_crash, Severity::warning, prev.log_name, prev.end_offset,
          fmt::format("the server never closed this file ({}) and began {} after it: it crashed or was killed "
                      "while writing it, and the file ends at {} with the last event it wrote",
                      prev.in_use ? "its format description is still flagged in use and it ends without ROTATE or STOP"
                                  : "the server went on to the next file from its end, with no ROTATE or STOP there",
                      name, prev.end_offset) + roll_back_open_tail()});
    } else if (prev.end == FileEnd::none && !prev.damaged && !prev.relay) {
      deliver(Diagnostic{
          Check::rotate_mismatch, Severity::error, prev.log_name, prev.end_offset,
          fmt::format("the file does not end with a ROTATE or STOP event{}, yet {} follows it: the server did not "
                      "close it (crash?) or the copy stops short; events after position {} may be lost",
                      prev.in_use ? " and its format description is still flagged in use" : "", name,
                      prev.end_offset)});
    }
  }

  bool begin_file(const InputFile& f) {
    const std::string& name = f.log_name;
    ++input_index;
    // A transaction open at the end of the previous file waits for check_rotate only when a crash
    // may explain it; otherwise it is reported now, before this file's findings.
    if (!(prev.valid && !prev.missing && !prev.aborted && prev.end == FileEnd::none && !prev.damaged &&
          !prev.relay && (prev.in_use || f.after_unclosed)))
      flush_open_tail();
    if (name != "-" && std::find(seen_names.begin(), seen_names.end(), name) != seen_names.end()) {
      flush_open_tail();
      deliver(Diagnostic{Check::file_sequence_gap, Severity::error, name, 0,
                         fmt::format("{} is given twice (input #{}): the second copy is not verified", name,
                                     input_index)});
      return false;
    }
    seen_names.push_back(name);
    cur = FileInfo{};
    cur.valid = true;
    cur.log_name = name;
    unrelated = false;
    out_of_order = false;
    const bool seq_problem = check_sequence(name);
    // Files of another sequence (or without one), or not in order: clocks are not comparable.
    if (unrelated || seq_problem) has_commit_clock = false;
    check_rotate(name, seq_problem, f.after_unclosed);
    flush_open_tail();
    chain_break = !prev.valid || seq_problem || prev.missing || prev.aborted;
    prev_damaged_for_header = prev.valid && prev.damaged;
    if (chain_break) {
      expect_valid = false;
      expect_m_valid = false;
      if (prev.valid) {
        // GTID continuity is not judged across the break: the seq_nos the absent or unrelated
        // files used are unknown. The next header (Gtid_list) is the baseline; without one, the
        // first GTID of each domain (or uuid) is.
        for (DomainState& d : domains) d.has_last = false;
        break_pending = true;
        seen_since_gap.clear();
      }
    }
    if (f.missing) {
      ++sum.missing_files;
      emit(Check::file_sequence_gap, Severity::error, 0,
           fmt::format("{} is missing: {} names it, but it is absent{}", name,
                       f.origin.empty() ? std::string("the input") : log_name_of(f.origin),
                       f.path != name ? fmt::format(" ({})", f.path) : std::string()));
      cur.missing = true;
      prev = cur;
      return false;
    }
    ++sum.files;
    in_file = true;
    own_server_id = 0;
    fde_count = 0;
    header_seen = false;
    cur.relay = contains_relay(name);
    if (!txn.active || !prev.relay) txn = Txn{};  // only relay logs carry a transaction over
    table_ids.clear();
    return true;
  }

  void file_unavailable(const InputFile& f) {
    flush_open_tail();
    ++input_index;
    ++sum.missing_files;
    FileInfo info;
    info.valid = true;
    info.log_name = f.log_name;
    info.missing = true;
    prev = std::move(info);
    expect_valid = false;
    expect_m_valid = false;
  }

  void report_open_txn(const Txn& t, const std::string& log_name, std::string_view what) {
    if (t.only_gtid) {
      deliver(Diagnostic{Check::transaction_structure, Severity::error, log_name, t.start_pos,
                         fmt::format("the GTID of transaction #{} is not followed by its transaction: the file ends ({})",
                                     t.id, what)});
    } else {
      deliver(Diagnostic{Check::transaction_structure, Severity::error, log_name, t.start_pos,
                         fmt::format("transaction #{} begun here is still open at the file boundary (no COMMIT/XID "
                                     "before {})",
                                     t.id, what)});
    }
  }

  // The transaction held at the end of the previous file is reported as cut off (no crash
  // explains it).
  void flush_open_tail() {
    if (!open_tail_valid) return;
    open_tail_valid = false;
    report_open_txn(open_tail, prev.log_name, "the end");
  }

  // The server crashed inside the transaction held at the end of the previous file. Its recovery
  // counts only transactions whole in the binlog: this one's GTID goes to the next transaction
  // (MariaDB's binlog state; MySQL's Previous_gtids alike), and its engines roll it back (they
  // commit only after the binlog write, unless sync_binlog=0 lost the binlog's tail). Its GTID
  // leaves the chain's bookkeeping. Returns what the server_crash finding says of it.
  std::string roll_back_open_tail() {
    if (!open_tail_valid) return std::string();
    open_tail_valid = false;
    const Txn& t = open_tail;
    std::string gtid;
    if (t.has_maria_gtid && t.undo_maria) {
      const MariaGtid& g = t.maria;
      gtid = fmt::format(" (GTID {})", g.to_string());
      ds_of(g.domain, g.server_id).seen.remove(g.seq);
      DomainState& dom = domain_of(g.domain);
      dom.seen.remove(g.seq);
      dom.has_last = t.undo_dom_has_last;
      dom.last = t.undo_dom_last;
      if (t.undo_maria_gap && !maria_gaps.empty() && maria_gaps.back().txn_id == t.id) maria_gaps.pop_back();
      if (t.undo_expect_m && expect_m_valid) {
        if (t.undo_expect_m_had) expect_m.update(MariaGtid{g.domain, g.server_id, t.undo_expect_m_seq});
        else expect_m.erase(g.domain, g.server_id);
      }
    } else if (t.has_mysql_gtid) {
      gtid = fmt::format(" (GTID {}{}{}:{})", t.uuid.to_string(), t.tag.empty() ? "" : ":", t.tag, t.gno);
      if (t.undo_mysql_gap && !mysql_gaps.empty() && mysql_gaps.back().txn_id == t.id) mysql_gaps.pop_back();
      if (t.undo_mysql_expect && expect_valid) {
        GtidSet one;
        if (one.add(t.uuid, t.tag, t.gno)) expect.subtract(one);
      }
    }
    return fmt::format("; transaction #{}{} begun at {} has no COMMIT: cut off by the crash, it does not count as "
                       "executed (the server gives its GTID to the next transaction) and was rolled back on restart, "
                       "unless the engine had committed it already (possible only when sync_binlog=0 lost the file's "
                       "tail: the server then holds changes that its binlog and its replicas lack)",
                       t.id, gtid, t.start_pos);
  }

  void end_file(std::uint64_t end_offset, std::uint64_t skipped, bool aborted) {
    if (!in_file) return;
    in_file = false;
    cur.end_offset = end_offset;
    cur.aborted = aborted;
    sum.skipped_bytes += skipped;
    if (txn.active && !cur.relay) {
      if (!txn.damaged && !cur.damaged && !txn.reported) {
        if (cur.end == FileEnd::none) {
          // Held until the next file shows whether its server crashed here (check_rotate): a
          // transaction a crash cut off was never committed; the server rolled it back.
          open_tail = txn;
          open_tail_valid = true;
        } else {
          report_open_txn(txn, cur.log_name, cur.end == FileEnd::rotate ? "ROTATE" : "STOP");
        }
      }
      txn.active = false;
    }
    if (!aborted && !cur.damaged && fde_count == 0 && end_offset <= 4 && skipped == 0) {
      emit(Check::missing_format_description, Severity::error, end_offset,
           "the file holds the binlog magic number alone: no format description, no events");
    }
    prev = cur;
  }

  void finish() {
    flush_open_tail();
    // --closed: the chain is complete, so its last file must have been closed by its server.
    if (cfg.closed && prev.valid && !prev.missing && !prev.aborted && prev.end == FileEnd::none) {
      deliver(Diagnostic{Check::rotate_mismatch, Severity::error, prev.log_name, prev.end_offset,
                         fmt::format("the last file of the chain does not end with a ROTATE or STOP event (--closed): "
                                     "the server was still writing it, or the copy stops short at {}",
                                     prev.end_offset)});
    }
    for (const PendingMysqlGap& g : mysql_gaps) {
      GtidSet range;
      if (!range.add_interval(g.uuid, g.tag, g.first, g.last)) continue;
      range.subtract(sum.gtid_state);
      if (range.empty()) continue;
      deliver(Diagnostic{Check::gtid_gap, Severity::warning, g.log_name, g.pos,
                         fmt::format("GTIDs of {}{}{} jump to {} (transaction #{}): {} ({} GTIDs) never executed in the chain",
                                     g.uuid.to_string(), g.tag.empty() ? "" : ":", g.tag, g.last + 1, g.txn_id,
                                     range.to_string(), range.count())});
    }
    mysql_gaps.clear();
    for (const PendingMariaGap& g : maria_gaps) {
      const DomainState& dom = domain_of(g.gtid.domain);
      auto miss = dom.seen.missing(g.first, g.last);
      if (miss.empty()) continue;
      std::uint64_t n = 0;
      for (const auto& m : miss) n += m.second - m.first + 1;
      deliver(Diagnostic{
          Check::gtid_gap, Severity::warning, g.log_name, g.pos,
          fmt::format("GTID {} (transaction #{}): seq_no of domain {} jumps from {} to {}; {} seq_no{} never used in "
                      "the chain ({}{})",
                      g.gtid.to_string(), g.txn_id, g.gtid.domain, g.first - 1, g.gtid.seq, n, n == 1 ? "" : "s",
                      miss.front().first == miss.front().second ? fmt::format("{}", miss.front().first)
                                                                 : fmt::format("{}-{}", miss.front().first,
                                                                               miss.front().second),
                      miss.size() > 1 ? ", ..." : "")});
    }
    maria_gaps.clear();
  }
};

ChainVerifier::ChainVerifier(DiagnosticSink& out, VerifyConfig cfg) : impl_(std::make_unique<Impl>(out, cfg)) {}
ChainVerifier::~ChainVerifier() = default;

void ChainVerifier::plan(const std::vector<InputFile>& files) {
  impl_->plan.clear();
  for (const InputFile& f : files) impl_->plan.push_back(f.log_name);
}
bool ChainVerifier::begin_file(const InputFile& f) { return impl_->begin_file(f); }
void ChainVerifier::file_unavailable(const InputFile& f) { impl_->file_unavailable(f); }
void ChainVerifier::event(const Event& ev) { impl_->event(ev); }
void ChainVerifier::end_file(std::uint64_t end_offset, std::uint64_t skipped, bool aborted) {
  impl_->end_file(end_offset, skipped, aborted);
}
void ChainVerifier::finish() { impl_->finish(); }
const VerifySummary& ChainVerifier::summary() const noexcept { return impl_->sum; }
std::uint64_t ChainVerifier::current_transaction_id() const noexcept {
  return impl_->txn.active ? impl_->txn.id : 0;
}

void ChainVerifier::name_file(const std::string& log_name, const std::string& path, std::uint64_t base) {
  impl_->out.name_file(log_name, path, base);
}

void ChainVerifier::report(const Diagnostic& d) {
  switch (d.check) {
    case Check::unknown_event_type:
    case Check::timestamp_regression:
    case Check::gtid_gap:
      break;
    default:
      if (d.severity == Severity::error) impl_->mark_damage();
  }
  impl_->deliver(d);
}

}  // namespace binlogctl
