// MySQL GTIDs: Uuid, GtidSet, PREVIOUS_GTIDS / GTID / ANONYMOUS_GTID / GTID_TAGGED bodies.
// Formats are described in gtid.h; written from the MySQL sources' behaviour, no code copied.
#include <binlogctl/gtid.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

namespace binlogctl {

namespace {

constexpr std::uint64_t kGnoEnd = 0x7fffffffffffffffULL;  // GNO_END (exclusive)

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_tag_start(char c) noexcept { return is_alpha(c) || c == '_'; }
bool is_tag_char(char c) noexcept { return is_tag_start(c) || is_digit(c); }
char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lower_tag(std::string_view tag) {
  std::string out(tag);
  for (char& c : out) c = to_lower(c);
  return out;
}

DecodeError text_error(std::size_t pos, const char* what) {
  return DecodeError{Errc::bad_value, pos, what};
}

// Parses a uuid at text[pos..]: 36 characters with dashes at 8/13/18/23, or 32 hex digits.
// Returns the number of characters used, 0 when neither form matches (err_pos = first bad char).
std::size_t parse_uuid_at(std::string_view text, std::size_t pos, Uuid& out,
                          std::size_t& err_pos) noexcept {
  auto try_form = [&](bool dashed) -> std::size_t {
    const std::size_t len = dashed ? 36 : 32;
    std::size_t i = pos;
    Uuid u;
    for (std::size_t b = 0; b < 16; ++b) {
      if (dashed && (b == 4 || b == 6 || b == 8 || b == 10)) {
        if (i >= text.size() || text[i] != '-') {
          err_pos = i;
          return 0;
        }
        ++i;
      }
      int hi = i < text.size() ? hex_value(text[i]) : -1;
      if (hi < 0) {
        err_pos = i;
        return 0;
      }
      int lo = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
      if (lo < 0) {
        err_pos = i + 1;
        return 0;
      }
      u.bytes[b] = static_cast<std::uint8_t>((hi << 4) | lo);
      i += 2;
    }
    out = u;
    return len;
  };
  std::size_t dashed_err = 0;
  if (std::size_t n = try_form(true)) return n;
  dashed_err = err_pos;
  if (std::size_t n = try_form(false)) return n;
  // Report the position that got furthest: the more plausible intended form.
  err_pos = std::max(dashed_err, err_pos);
  return 0;
}

// ---- interval helpers on a sorted, disjoint, non-adjacent vector of closed intervals ----

void intervals_add(GtidSet::Intervals& v, std::uint64_t start, std::uint64_t end) {
  // First interval that ends at or after start-1 (touching or overlapping the new one).
  auto it =
      std::lower_bound(v.begin(), v.end(), start,
                       [](const GtidInterval& iv, std::uint64_t s) { return iv.end + 1 < s; });
  auto last = it;
  while (last != v.end() && last->start <= end + 1) {
    start = std::min(start, last->start);
    end = std::max(end, last->end);
    ++last;
  }
  if (it == last) {
    v.insert(it, GtidInterval{start, end});
  } else {
    *it = GtidInterval{start, end};
    v.erase(it + 1, last);
  }
}

void intervals_remove(GtidSet::Intervals& v, std::uint64_t start, std::uint64_t end) {
  GtidSet::Intervals out;
  out.reserve(v.size() + 1);
  for (const GtidInterval& iv : v) {
    if (iv.end < start || iv.start > end) {
      out.push_back(iv);
      continue;
    }
    if (iv.start < start) out.push_back(GtidInterval{iv.start, start - 1});
    if (iv.end > end) out.push_back(GtidInterval{end + 1, iv.end});
  }
  v.swap(out);
}

// Interval of v containing [start, end] entirely?
bool intervals_cover(const GtidSet::Intervals& v, std::uint64_t start, std::uint64_t end) {
  auto it = std::upper_bound(v.begin(), v.end(), start,
                             [](std::uint64_t s, const GtidInterval& iv) { return s < iv.start; });
  if (it == v.begin()) return false;
  --it;
  return it->start <= start && end <= it->end;
}

// ---- mysql::serialization variable-length integers ----

std::uint64_t read_varint(ByteReader& r) noexcept {
  if (!r.ok()) return 0;
  if (r.remaining() == 0) {
    r.fail(Errc::truncated, "variable-length integer runs past the end of the event");
    return 0;
  }
  std::uint8_t first = r.data()[r.position()];
  const int n = std::countr_one(first) + 1;  // 1..9 bytes
  if (static_cast<std::size_t>(n) > r.remaining()) {
    r.fail(Errc::truncated, "variable-length integer runs past the end of the event");
    return 0;
  }
  r.skip(1);
  if (n == 1) return static_cast<std::uint64_t>(first >> 1);
  std::uint64_t value = n < 8 ? static_cast<std::uint64_t>(first) >> n : 0;
  std::uint64_t rest = r.le_n(static_cast<std::size_t>(n - 1));
  // n <= 8: the value bits of the first byte are 8 - n; n == 9: the first byte holds none.
  const int shift = n == 9 ? 0 : 8 - n;
  return value | (rest << shift);
}

std::int64_t read_varint_signed(ByteReader& r) noexcept {
  std::uint64_t u = read_varint(r);
  std::uint64_t mag = u >> 1;
  return static_cast<std::int64_t>((u & 1) ? ~mag : mag);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Uuid
// ---------------------------------------------------------------------------------------------

Result<Uuid> Uuid::parse(std::string_view text) {
  Uuid u;
  std::size_t err = 0;
  std::size_t n = parse_uuid_at(text, 0, u, err);
  if (n == 0) return text_error(err, "invalid UUID");
  if (n != text.size()) return text_error(n, "unexpected characters after the UUID");
  return u;
}

Uuid Uuid::from_bytes(Bytes b) noexcept {
  Uuid u;
  std::copy_n(b.begin(), 16, u.bytes.begin());
  return u;
}

std::string Uuid::to_string() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[bytes[i] >> 4]);
    s.push_back(kHex[bytes[i] & 0xf]);
  }
  return s;
}

bool Uuid::is_nil() const noexcept {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

bool is_valid_gtid_tag(std::string_view tag) noexcept {
  if (tag.empty() || tag.size() > kMaxTagLength || !is_tag_start(tag[0])) return false;
  return std::all_of(tag.begin(), tag.end(), is_tag_char);
}

// ---------------------------------------------------------------------------------------------
// GtidSet
// ---------------------------------------------------------------------------------------------

void GtidSet::add_interval_unchecked(Key key, std::uint64_t start, std::uint64_t end) {
  intervals_add(map_[std::move(key)], start, end);
}

Status GtidSet::add(const Uuid& uuid, std::string_view tag, std::uint64_t gno) {
  return add_interval(uuid, tag, gno, gno);
}

Status GtidSet::add_interval(const Uuid& uuid, std::string_view tag, std::uint64_t start,
                             std::uint64_t end) {
  if (!tag.empty() && !is_valid_gtid_tag(tag))
    return DecodeError{Errc::bad_value, 0, "invalid GTID tag"};
  if (start == 0) return DecodeError{Errc::bad_value, 0, "GNO must be positive"};
  if (end > kMaxGno) return DecodeError{Errc::bad_value, 0, "GNO out of range"};
  if (start > end) return DecodeError{Errc::bad_value, 0, "interval end below its start"};
  add_interval_unchecked(Key{uuid, lower_tag(tag)}, start, end);
  return {};
}

Result<GtidSet> GtidSet::parse(std::string_view text) {
  GtidSet set;
  std::size_t pos = 0;
  const std::size_t n = text.size();
  auto skip_ws = [&] {
    while (pos < n && is_space(text[pos])) ++pos;
  };
  // Decimal gno at pos; 0 digits or overflow are errors.
  auto parse_gno = [&](std::uint64_t& out) -> const char* {
    if (pos >= n || !is_digit(text[pos])) return "expected a GNO";
    std::uint64_t v = 0;
    const std::size_t start = pos;
    while (pos < n && is_digit(text[pos])) {
      auto d = static_cast<std::uint64_t>(text[pos] - '0');
      if (v > (kMaxGno - d) / 10) {
        pos = start;
        return "GNO out of range";
      }
      v = v * 10 + d;
      ++pos;
    }
    out = v;
    return nullptr;
  };

  skip_ws();
  while (true) {
    while (pos < n && text[pos] == ',') {
      ++pos;
      skip_ws();
    }
    if (pos >= n) return set;
    Uuid uuid;
    std::size_t err = 0;
    std::size_t used = parse_uuid_at(text, pos, uuid, err);
    if (used == 0) return text_error(err, "expected a UUID");
    pos += used;
    skip_ws();
    std::string tag;
    while (pos < n && text[pos] == ':') {
      ++pos;
      skip_ws();
      if (pos < n && is_tag_start(text[pos])) {
        const std::size_t start = pos;
        while (pos < n && is_tag_char(text[pos])) ++pos;
        if (pos - start > kMaxTagLength)
          return text_error(start, "GTID tag longer than 32 characters");
        tag = lower_tag(text.substr(start, pos - start));
        skip_ws();
        continue;
      }
      const std::size_t start_pos = pos;
      std::uint64_t start = 0;
      if (const char* e = parse_gno(start)) return text_error(pos, e);
      if (start == 0) return text_error(start_pos, "GNO must be positive");
      std::uint64_t end = start;
      skip_ws();
      if (pos < n && text[pos] == '-') {
        ++pos;
        skip_ws();
        const std::size_t end_pos = pos;
        if (const char* e = parse_gno(end)) return text_error(pos, e);
        if (end < start) return text_error(end_pos, "interval end below its start");
        skip_ws();
      }
      set.add_interval_unchecked(Key{uuid, tag}, start, end);
    }
    if (pos < n && text[pos] != ',') return text_error(pos, "expected ',' or ':'");
  }
}

std::string GtidSet::to_string(std::string_view sep) const {
  std::string out;
  const Uuid* prev = nullptr;
  for (const auto& [key, intervals] : map_) {
    if (prev == nullptr || key.uuid != *prev) {
      if (prev != nullptr) out.append(sep);
      out += key.uuid.to_string();
      prev = &key.uuid;
    }
    if (!key.tag.empty()) {
      out.push_back(':');
      out += key.tag;
    }
    for (const GtidInterval& iv : intervals) {
      out.push_back(':');
      out += std::to_string(iv.start);
      if (iv.end != iv.start) {
        out.push_back('-');
        out += std::to_string(iv.end);
      }
    }
  }
  return out;
}

void GtidSet::union_with(const GtidSet& other) {
  for (const auto& [key, intervals] : other.map_) {
    Intervals& mine = map_[key];
    for (const GtidInterval& iv : intervals) intervals_add(mine, iv.start, iv.end);
  }
}

void GtidSet::subtract(const GtidSet& other) {
  for (const auto& [key, intervals] : other.map_) {
    auto it = map_.find(key);
    if (it == map_.end()) continue;
    for (const GtidInterval& iv : intervals) {
      intervals_remove(it->second, iv.start, iv.end);
      if (it->second.empty()) break;
    }
    if (it->second.empty()) map_.erase(it);
  }
}

const GtidSet::Intervals* GtidSet::find(const Uuid& uuid, std::string_view tag) const {
  auto it = map_.find(Key{uuid, lower_tag(tag)});
  return it == map_.end() ? nullptr : &it->second;
}

bool GtidSet::contains(const Uuid& uuid, std::string_view tag, std::uint64_t gno) const {
  const Intervals* v = find(uuid, tag);
  return v != nullptr && intervals_cover(*v, gno, gno);
}

bool GtidSet::contains(const GtidSet& other) const {
  for (const auto& [key, intervals] : other.map_) {
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    for (const GtidInterval& iv : intervals) {
      if (!intervals_cover(it->second, iv.start, iv.end)) return false;
    }
  }
  return true;
}

std::uint64_t GtidSet::count() const noexcept {
  std::uint64_t total = 0;
  for (const auto& entry : map_) {
    for (const GtidInterval& iv : entry.second) {
      std::uint64_t c = iv.end - iv.start + 1;
      if (total > std::numeric_limits<std::uint64_t>::max() - c) {
        return std::numeric_limits<std::uint64_t>::max();
      }
      total += c;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// PREVIOUS_GTIDS_LOG_EVENT
// ---------------------------------------------------------------------------------------------

Result<GtidSet> decode_previous_gtids(ByteReader& body) {
  const std::uint64_t count_at = body.offset();
  const std::uint64_t word = body.u64();
  if (!body.ok()) return body.error();
  // Top byte 1 = tagged format (8.3+). Any other non-zero top byte is read the way servers
  // before 8.3 read the word, as a 64-bit count, which no event can hold: Errc::bad_length.
  const bool tagged = (word >> 56) == 1;
  const std::uint64_t n_sids = tagged ? (word >> 8) & 0x0000ffffffffffffULL : word;
  // Smallest sid entry: uuid + (tag length byte) + n_intervals.
  const std::size_t min_sid = 16 + (tagged ? 1 : 0) + 8;
  if (n_sids > body.remaining() / min_sid) {
    return DecodeError{Errc::bad_length, count_at, "GTID set sid count exceeds the event"};
  }
  GtidSet set;
  for (std::uint64_t i = 0; i < n_sids; ++i) {
    Bytes sid = body.bytes(16);
    if (!body.ok()) return body.error();
    const Uuid uuid = Uuid::from_bytes(sid);
    std::string_view tag;
    if (tagged) {
      const std::uint64_t tag_at = body.offset();
      std::uint64_t len = read_varint(body);
      if (!body.ok()) return body.error();
      if (len > kMaxTagLength)
        return DecodeError{Errc::bad_value, tag_at, "GTID tag longer than 32 characters"};
      tag = body.str(static_cast<std::size_t>(len));
      if (!body.ok()) return body.error();
      if (!tag.empty() && !is_valid_gtid_tag(tag)) {
        return DecodeError{Errc::bad_value, tag_at, "invalid GTID tag"};
      }
    }
    const std::uint64_t n_at = body.offset();
    const std::uint64_t n_intervals = body.u64();
    if (!body.ok()) return body.error();
    if (n_intervals > body.remaining() / 16) {
      return DecodeError{Errc::bad_length, n_at, "GTID interval count exceeds the event"};
    }
    const GtidSet::Key key{uuid, lower_tag(tag)};
    std::uint64_t last = 0;
    for (std::uint64_t j = 0; j < n_intervals; ++j) {
      const std::uint64_t iv_at = body.offset();
      const std::uint64_t start = body.u64();
      const std::uint64_t end = body.u64();  // exclusive
      if (!body.ok()) return body.error();
      if (start <= last || end <= start || end > kGnoEnd) {
        return DecodeError{Errc::bad_value, iv_at, "GTID interval not positive and increasing"};
      }
      last = end;
      intervals_add(set.map_[key], start, end - 1);
    }
  }
  if (body.remaining() != 0) {
    return DecodeError{Errc::bad_length, body.offset(), "trailing bytes after the GTID set"};
  }
  return set;
}

// ---------------------------------------------------------------------------------------------
// GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT
// ---------------------------------------------------------------------------------------------

Result<GtidLog> decode_gtid_log(ByteReader& body) {
  GtidLog ev;
  ev.flags = body.u8();
  Bytes sid = body.bytes(16);
  ev.gno = body.u64();
  if (!body.ok()) return body.error();
  ev.uuid = Uuid::from_bytes(sid);
  if (body.remaining() < 17) return ev;  // 5.6: no logical clock
  if (body.u8() != 2) return ev;         // LOGICAL_TIMESTAMP_TYPECODE
  ev.has_logical_clock = true;
  ev.last_committed = static_cast<std::int64_t>(body.u64());
  ev.sequence_number = static_cast<std::int64_t>(body.u64());
  if (body.remaining() < 7) return ev;
  ev.has_timestamps = true;
  constexpr std::uint64_t kTsFlag = std::uint64_t{1} << 55;
  ev.immediate_commit_timestamp = body.le_n(7);
  if ((ev.immediate_commit_timestamp & kTsFlag) != 0) {
    ev.immediate_commit_timestamp &= ~kTsFlag;
    ev.original_commit_timestamp = body.le_n(7);
  } else {
    ev.original_commit_timestamp = ev.immediate_commit_timestamp;
  }
  if (!body.ok()) return body.error();
  if (body.remaining() >= 1) {
    ev.has_length = true;
    ev.transaction_length = body.packed_int();
    if (!body.ok()) return body.error();
  }
  ev.immediate_server_version = kUndefinedServerVersion;
  ev.original_server_version = kUndefinedServerVersion;
  if (body.remaining() >= 4) {
    ev.has_server_versions = true;
    constexpr std::uint32_t kVerFlag = std::uint32_t{1} << 31;
    ev.immediate_server_version = body.u32();
    if ((ev.immediate_server_version & kVerFlag) != 0) {
      ev.immediate_server_version &= ~kVerFlag;
      ev.original_server_version = body.u32();
    } else {
      ev.original_server_version = ev.immediate_server_version;
    }
    if (!body.ok()) return body.error();
  }
  if (body.remaining() >= 8) ev.commit_group_ticket = body.u64();
  if (!body.ok()) return body.error();
  return ev;
}

// ---------------------------------------------------------------------------------------------
// GTID_TAGGED_LOG_EVENT (mysql::serialization)
// ---------------------------------------------------------------------------------------------

Result<GtidLog> decode_gtid_tagged_log(ByteReader& body) {
  const std::size_t msg_start = body.position();
  const std::uint64_t version_at = body.offset();
  const std::uint64_t version = read_varint(body);
  if (!body.ok()) return body.error();
  if (version != 1) {
    return DecodeError{Errc::unsupported_format, version_at,
                       "unknown serialization format version"};
  }
  const std::uint64_t size_at = body.offset();
  const std::uint64_t size = read_varint(body);
  if (!body.ok()) return body.error();
  const std::size_t consumed = body.position() - msg_start;
  if (size < consumed || size - consumed > body.remaining()) {
    return DecodeError{Errc::bad_length, size_at, "serialized message size exceeds the event"};
  }
  const std::size_t msg_end = msg_start + static_cast<std::size_t>(size);
  const std::uint64_t lnif_at = body.offset();
  const std::uint64_t last_non_ignorable = read_varint(body);
  if (!body.ok()) return body.error();
  constexpr std::uint64_t kLastKnownField = 11;  // commit_group_ticket
  if (last_non_ignorable > kLastKnownField + 1) {
    return DecodeError{Errc::unsupported_format, lnif_at,
                       "unknown non-ignorable field in GTID event"};
  }
  // Everything below must stay inside the message.
  ByteReader r = body.sub(msg_end - body.position());
  if (!r.ok()) return r.error();

  GtidLog ev;
  ev.has_logical_clock = ev.has_timestamps = ev.has_length = ev.has_server_versions = true;
  bool have_original_ts = false;
  bool have_original_ver = false;
  std::uint64_t expected = 0;  // ids must increase
  auto bad = [&](std::uint64_t at, const char* what) {
    return DecodeError{Errc::bad_value, at, what};
  };
  while (!r.empty()) {
    const std::uint64_t id_at = r.offset();
    const std::uint64_t id = read_varint(r);
    if (!r.ok()) return r.error();
    if (id < expected) return bad(id_at, "serialized fields out of order");
    if (id > kLastKnownField) {
      break;  // newer, ignorable fields: skip to the message end
    }
    expected = id + 1;
    const std::uint64_t at = r.offset();
    switch (id) {
      case 0: {
        std::uint64_t v = read_varint(r);
        if (r.ok() && v > 0xff) return bad(at, "gtid_flags out of range");
        ev.flags = static_cast<std::uint8_t>(v);
        break;
      }
      case 1:
        for (std::size_t i = 0; i < 16; ++i) {
          const std::uint64_t b_at = r.offset();
          std::uint64_t v = read_varint(r);
          if (r.ok() && v > 0xff) return bad(b_at, "uuid byte out of range");
          ev.uuid.bytes[i] = static_cast<std::uint8_t>(v);
        }
        break;
      case 2: {
        std::int64_t g = read_varint_signed(r);
        if (r.ok() && g < 0) return bad(at, "negative GNO");
        ev.gno = static_cast<std::uint64_t>(g);
        break;
      }
      case 3: {
        std::uint64_t len = read_varint(r);
        if (r.ok() && len > kMaxTagLength) return bad(at, "GTID tag longer than 32 characters");
        ev.tag = r.str(static_cast<std::size_t>(len));
        if (r.ok() && !ev.tag.empty() && !is_valid_gtid_tag(ev.tag))
          return bad(at, "invalid GTID tag");
        break;
      }
      case 4:
        ev.last_committed = read_varint_signed(r);
        break;
      case 5:
        ev.sequence_number = read_varint_signed(r);
        break;
      case 6:
        ev.immediate_commit_timestamp = read_varint(r);
        break;
      case 7:
        ev.original_commit_timestamp = read_varint(r);
        have_original_ts = true;
        break;
      case 8:
        ev.transaction_length = read_varint(r);
        break;
      case 9: {
        std::uint64_t v = read_varint(r);
        if (r.ok() && v > 0xffffffffULL) return bad(at, "server version out of range");
        ev.immediate_server_version = static_cast<std::uint32_t>(v);
        break;
      }
      case 10: {
        std::uint64_t v = read_varint(r);
        if (r.ok() && v > 0xffffffffULL) return bad(at, "server version out of range");
        ev.original_server_version = static_cast<std::uint32_t>(v);
        have_original_ver = true;
        break;
      }
      case 11:
        ev.commit_group_ticket = read_varint(r);
        break;
      default:
        break;
    }
    if (!r.ok()) return r.error();
  }
  if (!have_original_ts) ev.original_commit_timestamp = ev.immediate_commit_timestamp;
  if (!have_original_ver) ev.original_server_version = ev.immediate_server_version;
  return ev;
}

std::string gtid_next_info(const GtidLog& ev, bool anonymous) {
  std::string s = "SET @@SESSION.GTID_NEXT= '";
  if (anonymous) {
    s += "ANONYMOUS";
  } else {
    s += ev.uuid.to_string();
    if (!ev.tag.empty()) {
      s.push_back(':');
      s += lower_tag(ev.tag);
    }
    s.push_back(':');
    s += std::to_string(ev.gno);
  }
  s.push_back('\'');
  return s;
}

}  // namespace binlogctl
