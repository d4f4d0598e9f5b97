// MariaDB GTIDs: MariaGtid, MariaGtidList, GTID_EVENT and GTID_LIST_EVENT bodies.
// Formats are described in gtid.h; written from the MariaDB sources' behaviour, no code copied.
#include <binlogctl/gtid.h>

#include "render/json_out.h"

#include <algorithm>
#include <limits>

namespace binlogctl {

namespace {

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Decimal number at text[pos..] no greater than max; advances pos. nullptr on success.
const char* parse_decimal(std::string_view text, std::size_t& pos, std::uint64_t max,
                          std::uint64_t& out) noexcept {
  if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') return "expected a number";
  const std::size_t start = pos;
  std::uint64_t v = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    auto d = static_cast<std::uint64_t>(text[pos] - '0');
    if (v > (max - d) / 10) {
      pos = start;
      return "number out of range";
    }
    v = v * 10 + d;
    ++pos;
  }
  out = v;
  return nullptr;
}

// domain-server-seq at text[pos..]; advances pos.
Result<MariaGtid> parse_gtid_at(std::string_view text, std::size_t& pos) {
  std::uint64_t d = 0;
  std::uint64_t s = 0;
  std::uint64_t q = 0;
  if (const char* e = parse_decimal(text, pos, 0xffffffffULL, d)) {
    return DecodeError{Errc::bad_value, pos, e};
  }
  if (pos >= text.size() || text[pos] != '-')
    return DecodeError{Errc::bad_value, pos, "expected '-'"};
  ++pos;
  if (const char* e = parse_decimal(text, pos, 0xffffffffULL, s)) {
    return DecodeError{Errc::bad_value, pos, e};
  }
  if (pos >= text.size() || text[pos] != '-')
    return DecodeError{Errc::bad_value, pos, "expected '-'"};
  ++pos;
  if (const char* e = parse_decimal(text, pos, std::numeric_limits<std::uint64_t>::max(), q)) {
    return DecodeError{Errc::bad_value, pos, e};
  }
  return MariaGtid{static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(s), q};
}

// (domain, seq, server_id): compare_glle_gtids order with a deterministic tie-break.
bool info_order(const MariaGtid& a, const MariaGtid& b) noexcept {
  if (a.domain != b.domain) return a.domain < b.domain;
  if (a.seq != b.seq) return a.seq < b.seq;
  return a.server_id < b.server_id;
}

bool pair_order(const MariaGtid& a, const MariaGtid& b) noexcept {
  if (a.domain != b.domain) return a.domain < b.domain;
  if (a.server_id != b.server_id) return a.server_id < b.server_id;
  return a.seq < b.seq;
}

std::string join(std::vector<MariaGtid> v) {
  std::sort(v.begin(), v.end(), info_order);
  std::string out;
  for (const MariaGtid& g : v) {
    if (!out.empty()) out.push_back(',');
    out += g.to_string();
  }
  return out;
}

void append_hex(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// MariaGtid
// ---------------------------------------------------------------------------------------------

Result<MariaGtid> MariaGtid::parse(std::string_view text) {
  std::size_t pos = 0;
  Result<MariaGtid> g = parse_gtid_at(text, pos);
  if (!g) return g;
  if (pos != text.size())
    return DecodeError{Errc::bad_value, pos, "unexpected characters after the GTID"};
  return g;
}

std::string MariaGtid::to_string() const {
  std::string s = std::to_string(domain);
  s.push_back('-');
  s += std::to_string(server_id);
  s.push_back('-');
  s += std::to_string(seq);
  return s;
}

// ---------------------------------------------------------------------------------------------
// MariaGtidSet
// ---------------------------------------------------------------------------------------------

Result<MariaGtidSet> MariaGtidSet::parse(std::string_view text) {
  MariaGtidSet set;
  std::size_t pos = 0;
  const std::size_t n = text.size();
  constexpr std::uint64_t max_seq = std::numeric_limits<std::uint64_t>::max();
  auto skip_ws = [&] {
    while (pos < n && is_space(text[pos])) ++pos;
  };
  auto number = [&](std::uint64_t max, std::uint64_t& out) -> Status {
    if (const char* e = parse_decimal(text, pos, max, out)) return DecodeError{Errc::bad_value, pos, e};
    return {};
  };
  skip_ws();
  if (pos >= n) return set;
  while (true) {
    if (text.substr(pos, 2) == "..") {  // ..D-S-N: everything up to N
      pos += 2;
      Result<MariaGtid> g = parse_gtid_at(text, pos);
      if (!g) return g.error();
      set.ranges_.push_back(Range{g->domain, g->server_id, 0, g->seq});
    } else {
      std::uint64_t d = 0;
      std::uint64_t s = 0;
      if (Status st = number(0xffffffffULL, d); !st) return st.error();
      if (pos >= n || text[pos] != '-') return DecodeError{Errc::bad_value, pos, "expected '-'"};
      ++pos;
      if (Status st = number(0xffffffffULL, s); !st) return st.error();
      const auto domain = static_cast<std::uint32_t>(d);
      const auto server = static_cast<std::uint32_t>(s);
      if (pos < n && text[pos] == '-') {  // D-S-N: one GTID
        ++pos;
        std::uint64_t q = 0;
        if (Status st = number(max_seq, q); !st) return st.error();
        set.ranges_.push_back(Range{domain, server, q, q});
      } else if (pos < n && text[pos] == ':') {  // D-S:A-B:C...
        while (pos < n && text[pos] == ':') {
          ++pos;
          std::uint64_t lo = 0;
          if (Status st = number(max_seq, lo); !st) return st.error();
          std::uint64_t hi = lo;
          if (pos < n && text[pos] == '-') {
            ++pos;
            const std::size_t at = pos;
            if (Status st = number(max_seq, hi); !st) return st.error();
            if (hi < lo) return DecodeError{Errc::bad_value, at, "interval ends before it starts"};
          }
          set.ranges_.push_back(Range{domain, server, lo, hi});
        }
      } else {
        return DecodeError{Errc::bad_value, pos, "expected '-' and a seq, or ':' and seq intervals"};
      }
    }
    skip_ws();
    if (pos >= n) return set;
    if (text[pos] != ',') return DecodeError{Errc::bad_value, pos, "expected ','"};
    ++pos;
    skip_ws();
  }
}

bool MariaGtidSet::contains(const MariaGtid& g) const noexcept {
  for (const Range& r : ranges_) {
    if (r.domain == g.domain && r.server_id == g.server_id && r.lo <= g.seq && g.seq <= r.hi) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// MariaGtidList
// ---------------------------------------------------------------------------------------------

Result<MariaGtidList> MariaGtidList::parse(std::string_view text) {
  MariaGtidList list;
  std::size_t pos = 0;
  const std::size_t n = text.size();
  auto skip_ws = [&] {
    while (pos < n && is_space(text[pos])) ++pos;
  };
  skip_ws();
  if (pos >= n) return list;
  while (true) {
    const std::size_t at = pos;
    Result<MariaGtid> g = parse_gtid_at(text, pos);
    if (!g) return g.error();
    if (list.find(g->domain, g->server_id) != nullptr) {
      return DecodeError{Errc::bad_value, at, "repeated domain-server pair in GTID list"};
    }
    list.entries_.push_back(*g);
    skip_ws();
    if (pos >= n) return list;
    if (text[pos] != ',') return DecodeError{Errc::bad_value, pos, "expected ','"};
    ++pos;
    skip_ws();
  }
}

std::string MariaGtidList::to_string() const { return join(entries_); }

std::string MariaGtidList::to_info() const { return "[" + join(entries_) + "]"; }

const MariaGtid* MariaGtidList::find(std::uint32_t domain, std::uint32_t server_id) const {
  for (const MariaGtid& g : entries_) {
    if (g.domain == domain && g.server_id == server_id) return &g;
  }
  return nullptr;
}

void MariaGtidList::update(const MariaGtid& g) {
  for (MariaGtid& e : entries_) {
    if (e.domain == g.domain && e.server_id == g.server_id) {
      e.seq = g.seq;
      return;
    }
  }
  entries_.push_back(g);
}

void MariaGtidList::erase(std::uint32_t domain, std::uint32_t server_id) {
  std::erase_if(entries_, [&](const MariaGtid& e) { return e.domain == domain && e.server_id == server_id; });
}

bool MariaGtidList::contains(const MariaGtid& g) const {
  const MariaGtid* e = find(g.domain, g.server_id);
  return e != nullptr && e->seq >= g.seq;
}

void MariaGtidList::union_with(const MariaGtidList& other) {
  for (const MariaGtid& g : other.entries_) {
    if (!contains(g)) update(g);
  }
}

void MariaGtidList::subtract(const MariaGtidList& other) {
  std::erase_if(entries_, [&](const MariaGtid& g) { return other.contains(g); });
}

MariaGtidList MariaGtidList::position() const {
  MariaGtidList pos;
  for (const MariaGtid& g : entries_) {
    auto it = std::find_if(pos.entries_.begin(), pos.entries_.end(),
                           [&](const MariaGtid& p) { return p.domain == g.domain; });
    if (it == pos.entries_.end()) {
      pos.entries_.push_back(g);
    } else if (g.seq > it->seq) {
      *it = g;
    }
  }
  std::sort(pos.entries_.begin(), pos.entries_.end(), info_order);
  return pos;
}

bool MariaGtidList::operator==(const MariaGtidList& other) const {
  if (entries_.size() != other.entries_.size()) return false;
  std::vector<MariaGtid> a = entries_;
  std::vector<MariaGtid> b = other.entries_;
  std::sort(a.begin(), a.end(), pair_order);
  std::sort(b.begin(), b.end(), pair_order);
  return a == b;
}

// ---------------------------------------------------------------------------------------------
// GTID_LIST_EVENT
// ---------------------------------------------------------------------------------------------

Result<MariaGtidList> decode_gtid_list(ByteReader& body) {
  const std::uint64_t count_at = body.offset();
  const std::uint32_t word = body.u32();
  if (!body.ok()) return body.error();
  const std::uint32_t count = word & ((1U << 28) - 1);
  if (count > body.remaining() / 16) {
    return DecodeError{Errc::bad_length, count_at, "GTID list count exceeds the event"};
  }
  MariaGtidList list;
  list.set_flags(static_cast<std::uint8_t>(word >> 28));
  for (std::uint32_t i = 0; i < count; ++i) {
    MariaGtid g;
    g.domain = body.u32();
    g.server_id = body.u32();
    g.seq = body.u64();
    list.update(g);
  }
  if (!body.ok()) return body.error();
  return list;
}

void encode_gtid_list(const std::vector<MariaGtid>& entries, std::uint32_t flags, std::vector<std::uint8_t>& body) {
  body.assign(4 + 16 * entries.size(), 0);
  store_le32(body.data(), static_cast<std::uint32_t>(entries.size()) | (flags << 28));
  std::uint8_t* p = body.data() + 4;
  for (const MariaGtid& g : entries) {
    store_le32(p, g.domain);
    store_le32(p + 4, g.server_id);
    store_le64(p + 8, g.seq);
    p += 16;
  }
}

// ---------------------------------------------------------------------------------------------
// GTID_EVENT
// ---------------------------------------------------------------------------------------------

Result<MariaGtidEvent> decode_mariadb_gtid(ByteReader& body, std::uint32_t server_id) {
  (void)server_id;  // carried by the common header; kept for symmetry with mariadb_gtid_info
  MariaGtidEvent ev;
  ev.seq = body.u64();
  ev.domain = body.u32();
  ev.flags2 = body.u8();
  if (ev.flags2 & MariaGtidEvent::kFlGroupCommitId) ev.commit_id = body.u64();
  if (!body.ok()) return body.error();
  if (ev.is_xa()) {
    ev.xa_format_id = static_cast<std::int32_t>(body.u32());
    const std::uint64_t len_at = body.offset();
    const std::uint8_t gtrid_len = body.u8();
    const std::uint8_t bqual_len = body.u8();
    if (!body.ok()) return body.error();
    if (gtrid_len > 64 || bqual_len > 64) {  // MAXGTRIDSIZE, MAXBQUALSIZE
      return DecodeError{Errc::bad_value, len_at, "XID length above 64"};
    }
    ev.xa_gtrid = body.str(gtrid_len);
    ev.xa_bqual = body.str(bqual_len);
    if (!body.ok()) return body.error();
  }
  if (body.remaining() > 0) {
    ev.flags_extra = body.u8();
    if (ev.flags_extra & MariaGtidEvent::kFlExtraMultiEngine) ev.extra_engines = body.u8();
    if (ev.flags_extra & (MariaGtidEvent::kFlCommitAlter | MariaGtidEvent::kFlRollbackAlter)) {
      ev.sa_seq_no = body.u64();
    }
    if (!body.ok()) return body.error();
  }
  return ev;
}

void append_mariadb_gtid_info(std::string& s, const MariaGtidEvent& ev, std::uint32_t server_id) {
  // Same decision order as the server: the prefix, then the XID for a prepared XA.
  s += (ev.flags2 & MariaGtidEvent::kFlStandalone)   ? "GTID "
       : (ev.flags2 & MariaGtidEvent::kFlPreparedXa) ? "XA START "
                                                     : "BEGIN GTID ";
  if (ev.flags2 & MariaGtidEvent::kFlPreparedXa) {
    s += "X'";
    append_hex(s, ev.xa_gtrid);
    s += "',X'";
    append_hex(s, ev.xa_bqual);
    s += "',";
    s += std::to_string(ev.xa_format_id);
    s += " GTID ";
  }
  append_u64(s, ev.domain);
  s += '-';
  append_u64(s, server_id);
  s += '-';
  append_u64(s, ev.seq);
  if (ev.flags2 & MariaGtidEvent::kFlGroupCommitId) {
    s += " cid=";
    append_u64(s, ev.commit_id);
  }
  if (ev.flags_extra & MariaGtidEvent::kFlStartAlter) s += " START ALTER";
  if (ev.flags_extra & MariaGtidEvent::kFlCommitAlter) {
    s += " COMMIT ALTER id=";
    s += std::to_string(ev.sa_seq_no);
  }
  if (ev.flags_extra & MariaGtidEvent::kFlRollbackAlter) {
    s += " ROLLBACK ALTER id=";
    s += std::to_string(ev.sa_seq_no);
  }
}

std::string mariadb_gtid_info(const MariaGtidEvent& ev, std::uint32_t server_id) {
  std::string s;
  append_mariadb_gtid_info(s, ev, server_id);
  return s;
}

}  // namespace binlogctl
