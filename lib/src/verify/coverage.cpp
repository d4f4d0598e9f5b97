// verify --cover-from (coverage.h): the transactions of one or several chains, by GTID, against
// the range a point-in-time recovery needs.
#include <binlogctl/chain.h>
#include <binlogctl/coverage.h>
#include <binlogctl/diagnostic.h>
#include <binlogctl/gtid.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>

#include "base/hash.h"
#include "events/events.h"
#include "render/json_out.h"
#include "rows/rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace binlogctl {

namespace {

// FNV-1a, 64 bits: a digest of a transaction's content, compared between the copies of a GTID.
struct Digest {
  std::uint64_t h = kFnv1aOffset;
  void add(const void* p, std::size_t n) { h = fnv1a(h, p, n); }
  void add(Bytes b) { add(b.data(), b.size()); }
  void add(std::string_view s) {
    add_u64(s.size());
    add(s.data(), s.size());
  }
  void add_u64(std::uint64_t v) { add(&v, sizeof v); }
};

// One transaction present (its GTID event and its end read, nothing of it damaged).
struct Txn {
  std::uint64_t seq = 0;
  std::uint64_t digest = 0;
  std::int64_t time = 0;  // the latest event time of the transaction
  std::uint64_t pos = 0;  // of its GTID event
  std::uint64_t ord = 0;  // its place in its chain
  std::uint32_t stream = 0;
  std::uint32_t server_id = 0;  // MariaDB
  std::uint32_t chain = 0;
  std::uint32_t file = 0;  // index into Coverage::files_
};

struct Finding {
  std::string file;
  std::uint64_t pos = 0;
  std::string check, message;
  std::vector<std::string> gtids;  // the GTIDs named (coverage_gap: the first missing ones)
};

struct ChainEnd {  // where a chain stops
  bool any = false;
  std::string file, gtid;
  std::uint64_t pos = 0;
  std::int64_t time = 0;
  std::int64_t last_event_time = 0;
  std::string last_event_file;
  std::uint64_t last_event_pos = 0;
};

class Coverage final : public ChainVisitor {
 public:
  explicit Coverage(std::FILE* err) : err_(err) {}

  void start_chain(std::uint32_t chain) {
    chain_ = chain;
    ord_ = 0;
    cur_.reset();
    last_seq_.clear();
    ends_.emplace_back();
  }
  void end_chain() { close_txn(); }

  void begin_file(const InputFile& f) override {
    files_.push_back(f.log_name);
    display_.push_back(f.path);
  }

  void event(const Event& ev, const InputFile&) override {
    ChainEnd& end = ends_.back();
    const auto t = static_cast<std::int64_t>(ev.header.timestamp);
    if (ev.header.timestamp != 0 && t >= end.last_event_time) {
      end.last_event_time = t;
      end.last_event_file = display_.back();
      end.last_event_pos = ev.is_inner() ? ev.payload_pos : ev.pos;
    }
    if (cur_ && (ev.damage || ev.skipped_before > 0)) cur_->damaged = true;
    if (is_file_event(ev.type())) return;  // about the file, not a transaction's content
    switch (ev.type()) {
      case EventType::heartbeat:
      case EventType::heartbeat_v2:
      case EventType::transaction_payload:  // its inner events follow
        return;
      case EventType::gtid:
      case EventType::gtid_tagged_log:
      case EventType::anonymous_gtid:
      case EventType::mariadb_gtid:
        close_txn();
        open_txn(ev);
        return;
      default:
        break;
    }
    if (!cur_ || cur_->complete) return;
    if (t > cur_->txn.time) cur_->txn.time = t;
    content(ev);
  }

  // After every chain: the findings and the summary; returns the exit status.
  int finish(const CoverOptions& o, std::FILE* out);

 private:
  struct Open {
    Txn txn;
    Digest digest;
    std::string gtid;
    bool begun = false, complete = false, damaged = false;
  };

  std::uint32_t stream_of(const std::string& key, bool mysql, const Uuid& uuid, std::string_view tag) {
    auto [it, fresh] = stream_ids_.try_emplace(key, static_cast<std::uint32_t>(streams_.size()));
    if (fresh) streams_.push_back(Stream{key, mysql, uuid, std::string(tag), 0});
    return it->second;
  }

  void open_txn(const Event& ev) {
    ByteReader r = ev.body_reader();
    Open o;
    o.txn.pos = ev.is_inner() ? ev.payload_pos : ev.pos;
    o.txn.time = static_cast<std::int64_t>(ev.header.timestamp);
    o.txn.chain = chain_;
    o.txn.file = static_cast<std::uint32_t>(files_.size() - 1);
    o.damaged = ev.damage.has_value();
    if (ev.type() == EventType::mariadb_gtid) {
      auto g = decode_mariadb_gtid(r, ev.header.server_id);
      if (!g) return;  // not a transaction we can name: its sequence number shows as a gap
      o.txn.seq = g->seq;
      o.txn.server_id = ev.header.server_id;
      o.txn.stream = stream_of(std::to_string(g->domain), false, Uuid{}, {});
      o.begun = !g->standalone();
      o.gtid = fmt::format("{}-{}-{}", g->domain, ev.header.server_id, g->seq);
    } else {
      if (ev.type() == EventType::anonymous_gtid) return;  // no GTID: cannot be accounted for
      auto g = ev.type() == EventType::gtid_tagged_log ? decode_gtid_tagged_log(r) : decode_gtid_log(r);
      if (!g || g->gno == 0) return;
      std::string key = g->uuid.to_string();
      if (!g->tag.empty()) key.append(":").append(g->tag);
      o.txn.seq = g->gno;
      o.txn.stream = stream_of(key, true, g->uuid, g->tag);
      o.gtid = fmt::format("{}:{}", key, g->gno);
    }
    o.txn.ord = ++ord_;
    cur_ = std::move(o);
  }

  // The parts of an event that are the transaction's content: the same in every server's copy.
  void content(const Event& ev) {
    Open& o = *cur_;
    Digest& d = o.digest;
    const std::uint8_t type = ev.type_code();
    switch (ev.type()) {
      case EventType::xid:
        o.complete = true;  // (the XID number is the writing server's)
        return;
      case EventType::mariadb_annotate_rows:
      case EventType::rows_query:
        return;  // the statement text, written or not by each server's own settings
      case EventType::table_map: {
        auto tm = decode_table_map(ev.body_reader(), *ev.fde);
        d.add(&type, 1);
        if (!tm) {
          o.damaged = true;
          return;
        }
        d.add(tm->db);
        d.add(tm->table);
        d.add(tm->column_types);
        d.add(tm->metadata);
        d.add(tm->null_bitmap);
        return;
      }
      case EventType::query:
      case EventType::mariadb_query_compressed: {
        auto q = decode_query(ev.body_reader(), *ev.fde);
        d.add(&type, 1);
        if (!q) {
          o.damaged = true;
          return;
        }
        d.add_u64(q->error_code);
        d.add(q->db);
        d.add(q->sql);
        std::string_view sql = q->sql;
        std::string inflated;
        if (ev.type() == EventType::mariadb_query_compressed) {
          auto s = decode_statement(ev, inflated);
          if (s) sql = s->sql;
        }
        const StatementKind k = classify_statement(sql);
        if (k == StatementKind::commit || k == StatementKind::rollback) o.complete = true;
        else if (k == StatementKind::begin || k == StatementKind::xa_start) o.begun = true;
        else if (!o.begun) o.complete = true;  // the one statement of a standalone transaction
        return;
      }
      case EventType::xa_prepare:
        d.add(&type, 1);
        d.add(ev.body);
        o.complete = true;
        return;
      default:
        break;
    }
    d.add(&type, 1);
    if (classify_rows_event(type)) {
      // After the table id, which each server numbers itself (4 bytes when the post-header is 6).
      const std::size_t id_len = type < ev.fde->n_post_headers && ev.fde->post_header(type) == 6 ? 4 : 6;
      d.add(ev.body.size() > id_len ? ev.body.subspan(id_len) : Bytes{});
      return;
    }
    d.add(ev.body);
  }

  void close_txn() {
    if (!cur_) return;
    Open& o = *cur_;
    if (o.complete && !o.damaged) {
      o.txn.digest = o.digest.h;
      Txn& t = txns_.emplace_back(o.txn);
      // In order and once within the chain.
      auto [it, fresh] = last_seq_.try_emplace(t.stream, t.seq);
      if (!fresh) {
        if (t.seq <= it->second)
          findings_.push_back(Finding{display_[t.file], t.pos,
                                      t.seq == it->second ? "coverage_duplicate" : "coverage_order",
                                      t.seq == it->second
                                          ? fmt::format("GTID {} is in this chain twice", o.gtid)
                                          : fmt::format("GTID {} comes after a later one of its {} in this chain", o.gtid,
                                                        stream_noun(t.stream)),
                                      {o.gtid}});
        it->second = std::max(it->second, t.seq);
      }
      ChainEnd& end = ends_.back();
      end.any = true;
      end.file = display_[t.file];
      end.pos = t.pos;
      end.gtid = o.gtid;
      end.time = t.time;
    }
    cur_.reset();
  }

  std::string stream_noun(std::uint32_t s) const {
    return streams_[s].mysql ? "source " + streams_[s].key : "domain " + streams_[s].key;
  }
  std::string gtid_text(const Txn& t) const {
    const Stream& s = streams_[t.stream];
    return s.mysql ? fmt::format("{}:{}", s.key, t.seq) : fmt::format("{}-{}-{}", s.key, t.server_id, t.seq);
  }

  struct Stream {
    std::string key;  // MariaDB: the domain; MySQL: uuid[:tag]
    bool mysql = false;
    Uuid uuid;
    std::string tag;
    std::uint32_t domain = 0;
  };

  std::FILE* err_;
  std::uint32_t chain_ = 0;
  std::uint64_t ord_ = 0;
  std::optional<Open> cur_;
  std::unordered_map<std::uint32_t, std::uint64_t> last_seq_;  // per stream, in the current chain
  std::vector<std::string> files_, display_;
  std::vector<Stream> streams_;
  std::map<std::string, std::uint32_t> stream_ids_;
  std::vector<Txn> txns_;
  std::vector<ChainEnd> ends_;
  std::vector<Finding> findings_;
};

void put_finding(std::string& s, const Finding& f, OutputFormat format) {
  if (format == OutputFormat::text) {
    s.append(fmt::format("{}:{}: error: {}: {}\n", f.file, f.pos, f.check, f.message));
    return;
  }
  s.append("{\"log_name\":");
  append_json_quoted(s, f.file);
  s.append(fmt::format(",\"pos\":{},\"severity\":\"error\",\"check\":\"{}\",\"message\":", f.pos, f.check));
  append_json_quoted(s, f.message);
  if (!f.gtids.empty()) {
    s.append(",\"gtids\":[");
    for (std::size_t i = 0; i < f.gtids.size(); ++i) {
      if (i) s.push_back(',');
      append_json_quoted(s, f.gtids[i]);
    }
    s.push_back(']');
  }
  s.append("}\n");
}

int Coverage::finish(const CoverOptions& o, std::FILE* out) {
  // The backup's position.
  const bool mysql_from = o.from.find(':') != std::string::npos;
  GtidSet from_set;
  std::map<std::uint32_t, std::uint64_t> from_seq;  // MariaDB: per domain, the last seq in the backup
  if (mysql_from) {
    auto s = GtidSet::parse(o.from);
    if (!s) {
      fmt::print(err_, "binlogctl: error: --cover-from: not a GTID position: {} (at offset {})\n", s.error().what,
                 s.error().offset);
      return 2;
    }
    from_set = std::move(*s);
  } else {
    auto l = MariaGtidList::parse(o.from);
    if (!l) {
      fmt::print(err_, "binlogctl: error: --cover-from: not a GTID position: {} (at offset {})\n", l.error().what,
                 l.error().offset);
      return 2;
    }
    for (const MariaGtid& g : l->entries()) from_seq[g.domain] = std::max(from_seq[g.domain], g.seq);
  }
  for (const Stream& s : streams_)
    if (s.mysql != mysql_from && !o.from.empty()) {
      fmt::print(err_, "binlogctl: error: --cover-from is a {} position but the archives hold {} GTIDs\n",
                 mysql_from ? "MySQL" : "MariaDB", s.mysql ? "MySQL" : "MariaDB");
      return 2;
    }
  auto before_from = [&](const Stream& s, std::uint64_t seq) {
    if (s.mysql) return from_set.contains(s.uuid, s.tag, seq);
    auto it = from_seq.find(static_cast<std::uint32_t>(std::stoul(s.key)));
    return it != from_seq.end() && seq <= it->second;
  };

  std::sort(txns_.begin(), txns_.end(), [](const Txn& a, const Txn& b) {
    return a.stream != b.stream ? a.stream < b.stream : a.seq != b.seq ? a.seq < b.seq : a.chain < b.chain;
  });

  // The target: an upper seq per stream.
  std::vector<std::optional<std::uint64_t>> upper(streams_.size());
  std::string to_text = "the end of the archives";
  bool reached = true;
  if (!o.to_gtid.empty()) {
    to_text = o.to_gtid;
    std::optional<std::uint32_t> stream;
    std::uint64_t seq = 0;
    if (o.to_gtid.find(':') != std::string::npos) {
      const std::size_t c = o.to_gtid.rfind(':');
      auto it = stream_ids_.find(o.to_gtid.substr(0, c));
      if (it != stream_ids_.end() && streams_[it->second].mysql) stream = it->second;
      seq = std::strtoull(o.to_gtid.c_str() + c + 1, nullptr, 10);
    } else {
      auto g = MariaGtid::parse(o.to_gtid);
      if (!g) {
        fmt::print(err_, "binlogctl: error: --cover-to: not a GTID or a time: {}\n", o.to_gtid);
        return 2;
      }
      auto it = stream_ids_.find(std::to_string(g->domain));
      if (it != stream_ids_.end() && !streams_[it->second].mysql) stream = it->second;
      seq = g->seq;
    }
    const Txn* target = nullptr;
    if (stream) {
      auto it = std::lower_bound(txns_.begin(), txns_.end(), std::make_pair(*stream, seq),
                                 [](const Txn& t, const std::pair<std::uint32_t, std::uint64_t>& k) {
                                   return t.stream != k.first ? t.stream < k.first : t.seq < k.second;
                                 });
      if (it != txns_.end() && it->stream == *stream && it->seq == seq) target = &*it;
    }
    if (target == nullptr) {
      reached = false;
      if (stream) upper[*stream] = seq;  // its stream's missing transactions up to it are named below
      const ChainEnd* e = nullptr;
      for (const ChainEnd& c : ends_)
        if (c.any) e = &c;
      findings_.push_back(Finding{e ? e->file : std::string("-"), e ? e->pos : 0, "coverage_end",
                                  fmt::format("--cover-to {} is not in the archives{}", o.to_gtid,
                                              e ? fmt::format(" (the last chain stops at {})", e->gtid) : ""),
                                  {o.to_gtid}});
    } else {
      upper[target->stream] = target->seq;
      // Every other stream: up to what the target's chain holds before it.
      for (const Txn& t : txns_)
        if (t.chain == target->chain && t.ord < target->ord && t.stream != target->stream)
          upper[t.stream] = std::max(upper[t.stream].value_or(0), t.seq);
    }
  } else if (o.to_time) {
    std::string when;
    append_utc_datetime(when, *o.to_time);
    to_text = when + " UTC";
    for (const Txn& t : txns_)
      if (t.time < *o.to_time) upper[t.stream] = std::max(upper[t.stream].value_or(0), t.seq);
    const ChainEnd* latest = nullptr;
    for (const ChainEnd& c : ends_)
      if (latest == nullptr || c.last_event_time > latest->last_event_time) latest = &c;
    if (latest == nullptr || latest->last_event_time < *o.to_time) {
      reached = false;
      std::string stop;
      if (latest != nullptr) append_utc_datetime(stop, latest->last_event_time);
      findings_.push_back(Finding{latest ? latest->last_event_file : std::string("-"), latest ? latest->last_event_pos : 0,
                                  "coverage_end",
                                  fmt::format("the archives stop at {} UTC, before --cover-to {}: what happened "
                                              "in between is not known",
                                              stop.empty() ? std::string("(no event)") : stop, to_text),
                                  {}});
    }
  } else {
    for (const Txn& t : txns_) upper[t.stream] = std::max(upper[t.stream].value_or(0), t.seq);
  }

  // Per stream: every seq after the position up to the target present, with equal copies.
  std::uint64_t present = 0, missing = 0, gaps = 0;
  constexpr std::uint64_t kMaxGapFindings = 20;
  std::string first_gtid, last_gtid;
  std::vector<std::string> covered;  // per stream: "stream: from..to"
  auto gap = [&](const Stream& s, std::uint32_t sid, std::uint64_t a, std::uint64_t b, const Txn* before,
                 const Txn* after) {
    // [a, b] minus what the backup holds (MySQL sets may have holes)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
    if (s.mysql) {
      std::uint64_t x = a;
      const GtidSet::Intervals* iv = from_set.find(s.uuid, s.tag);
      if (iv != nullptr)
        for (const GtidInterval& i : *iv) {
          if (i.end < x || x > b) continue;
          if (i.start > b) break;
          if (i.start > x) parts.emplace_back(x, i.start - 1);
          x = i.end + 1;
        }
      if (x <= b) parts.emplace_back(x, b);
    } else {
      parts.emplace_back(a, b);
    }
    for (const auto& [lo, hi] : parts) {
      missing += hi - lo + 1;
      if (gaps++ >= kMaxGapFindings) continue;
      auto name = [&](std::uint64_t n) {
        return s.mysql ? fmt::format("{}:{}", s.key, n) : fmt::format("{}-{}-{}", s.key, sid, n);
      };
      std::vector<std::string> named;
      for (std::uint64_t n = lo; n <= hi && named.size() < 10; ++n) named.push_back(name(n));
      const std::string range = lo == hi ? name(lo) : fmt::format("{} to {}", name(lo), name(hi));
      std::string where;
      if (before != nullptr) where = fmt::format("after {} ({}:{})", gtid_text(*before), display_[before->file], before->pos);
      if (after != nullptr)
        where += fmt::format("{}before {} ({}:{})", where.empty() ? "" : ", ", gtid_text(*after), display_[after->file],
                             after->pos);
      if (where.empty()) where = "the archives hold none of them";
      const Txn* at = before != nullptr ? before : after;
      findings_.push_back(Finding{at ? display_[at->file] : std::string("-"), at ? at->pos : 0, "coverage_gap",
                                  fmt::format("{} transaction{} of {} missing: {} ({}{})", hi - lo + 1,
                                              hi == lo ? "" : "s", stream_noun(static_cast<std::uint32_t>(&s - streams_.data())),
                                              range, where, s.mysql ? "" : "; server_id as the transaction before"),
                                  named});
    }
  };
  std::size_t i = 0;
  for (std::uint32_t si = 0; si < streams_.size(); ++si) {
    const Stream& s = streams_[si];
    const std::uint64_t lo_seq = s.mysql ? 0 : [&] {
      auto it = from_seq.find(static_cast<std::uint32_t>(std::stoul(s.key)));
      return it == from_seq.end() ? std::uint64_t{0} : it->second;
    }();
    std::uint64_t expect = lo_seq + 1;
    const Txn* prev = nullptr;
    std::uint64_t first = 0, last = 0, n = 0;
    for (; i < txns_.size() && txns_[i].stream == si; ++i) {
      const Txn& t = txns_[i];
      if (!upper[si] || t.seq > *upper[si] || before_from(s, t.seq)) continue;
      if (prev != nullptr && prev->seq == t.seq) {  // another chain's copy
        if (prev->digest != t.digest)
          findings_.push_back(Finding{display_[t.file], t.pos, "coverage_mismatch",
                                      fmt::format("GTID {} differs from its copy in {}:{}", gtid_text(t),
                                                  display_[prev->file], prev->pos),
                                      {gtid_text(t)}});
        continue;
      }
      if (t.seq > expect) gap(s, prev ? prev->server_id : t.server_id, expect, t.seq - 1, prev, &t);
      if (n++ == 0) first = t.seq;
      last = t.seq;
      if (first_gtid.empty()) first_gtid = gtid_text(t);
      last_gtid = gtid_text(t);
      expect = t.seq + 1;
      prev = &t;
    }
    present += n;
    if (upper[si] && expect <= *upper[si] && !o.to_gtid.empty())
      gap(s, prev ? prev->server_id : 0, expect, *upper[si], prev, nullptr);
    if (n > 0) covered.push_back(fmt::format("{}: {} to {}", stream_noun(si), first, last));
  }
  if (gaps > kMaxGapFindings)
    findings_.push_back(Finding{"-", 0, "coverage_gap",
                                fmt::format("... {} more gaps (not listed)", gaps - kMaxGapFindings), {}});

  const bool ok = findings_.empty() && reached;
  std::string s;
  for (const Finding& f : findings_) put_finding(s, f, o.format);
  if (o.format == OutputFormat::text) {
    s.append(fmt::format("coverage: {} from {} to {} over {} chain{}\n", ok ? "complete" : "INCOMPLETE",
                         o.from.empty() ? std::string("the start") : o.from, to_text, ends_.size(),
                         ends_.size() == 1 ? "" : "s"));
    s.append(fmt::format("coverage: {} transactions present, {} missing\n", present, missing));
    for (const std::string& c : covered) s.append("coverage: ").append(c).append("\n");
    for (std::size_t c = 0; c < ends_.size(); ++c) {
      const ChainEnd& e = ends_[c];
      if (!e.any) {
        s.append(fmt::format("coverage: chain {} ({}) holds no transaction\n", c + 1, o.archives[c]));
        continue;
      }
      std::string when;
      append_utc_datetime(when, e.time);
      s.append(fmt::format("coverage: chain {} ({}) stops at {} ({}:{}, {} UTC)\n", c + 1, o.archives[c], e.gtid,
                           e.file, e.pos, when));
    }
  } else {
    s.append("{\"coverage\":{\"covered\":");
    s.append(ok ? "true" : "false");
    s.append(",\"from\":");
    append_json_quoted(s, o.from);
    s.append(",\"to\":");
    append_json_quoted(s, to_text);
    s.append(fmt::format(",\"chains\":{},\"present\":{},\"missing\":{},\"first_gtid\":", ends_.size(), present, missing));
    append_json_quoted(s, first_gtid);
    s.append(",\"last_gtid\":");
    append_json_quoted(s, last_gtid);
    s.append(",\"ranges\":[");
    for (std::size_t c = 0; c < covered.size(); ++c) {
      if (c) s.push_back(',');
      append_json_quoted(s, covered[c]);
    }
    s.append("],\"stops\":[");
    for (std::size_t c = 0; c < ends_.size(); ++c) {
      const ChainEnd& e = ends_[c];
      if (c) s.push_back(',');
      s.append("{\"chain\":");
      append_json_quoted(s, o.archives[c]);
      s.append(",\"file\":");
      append_json_quoted(s, e.file);
      s.append(fmt::format(",\"pos\":{},\"gtid\":", e.pos));
      append_json_quoted(s, e.gtid);
      s.append(fmt::format(",\"time\":{}}}", e.time));
    }
    s.append("]}}\n");
  }
  LineOutput lo(out);
  lo.write(s);
  lo.flush();
  return ok ? 0 : 1;
}

}  // namespace

int run_cover(const CoverOptions& opts, std::FILE* out, std::FILE* err) {
  Coverage cov(err);
  StderrDiagnostics diag(err);
  bool readable = true;
  for (std::size_t c = 0; c < opts.archives.size(); ++c) {
    ChainOptions co;
    co.inputs = {opts.archives[c]};
    if (c < opts.archive_sets.size()) co.input_set = opts.archive_sets[c];
    co.verify_checksums = opts.verify_checksums;
    co.progress = opts.progress;
    co.threads = 1;
    cov.start_chain(static_cast<std::uint32_t>(c));
    readable = read_chain(co, cov, diag, err) && readable;
    cov.end_chain();
  }
  if (!readable) return 2;
  return cov.finish(opts, out);
}

}  // namespace binlogctl
