// GTIDs of both server families: the MySQL GTID set (uuid[:tag]:intervals) with the binary bodies
// of PREVIOUS_GTIDS (35), GTID (33), ANONYMOUS_GTID (34) and GTID_TAGGED (42), and the MariaDB GTID
// (domain-server-seq), its binlog-state list and the bodies of GTID_EVENT (162) / GTID_LIST_EVENT
// (163).
//
// Print formats, checked against the server sources (read through the search tool, not copied):
//
// * MySQL sql/rpl_gtid_set.cc, Gtid_set::to_string(): entries follow tsid_map->get_sorted_sidno(),
//   a map ordered by Tsid (uuid bytes, then tag; the untagged tsid has the empty tag and sorts
//   first). A uuid is printed once, followed by its untagged intervals and then by `:tag:intervals`
//   for each tag in ascending order: `uuid:1-5:7:a:1-3:b:5`. A single gno prints as `7`, never
//   `7-7`. Gtid_set::default_string_format separates uuids with ",\n" (gno_sid_separator) and
//   prints "" for the empty set. Previous_gtids_log_event::pack_info (sql/log_event.cc) decodes the
//   body into a fresh Tsid_map, so the order is by uuid bytes, and prints it with
//   default_string_format: SHOW BINLOG EVENTS shows `a:1-5,\nb:1-3` (a real newline in the Info
//   column). @@gtid_executed and friends use the same format. GtidSet::to_info() returns exactly
//   that text.
// * MySQL libs/mysql/gtid/tag.cpp: a tag is [A-Za-z_][A-Za-z0-9_]* of at most 32 characters,
//   stored lower-cased. libs/mysql/gtid/tsid.cpp prints a tsid as `uuid:tag`.
// * Gtid_log_event info: `SET @@SESSION.GTID_NEXT= '<uuid>[:<tag>]:<gno>'`, and
//   `SET @@SESSION.GTID_NEXT= 'ANONYMOUS'` for ANONYMOUS_GTID (Gtid_log_event::SET_STRING_PREFIX,
//   spelling confirmed in real SHOW BINLOG EVENTS output).
// * MariaDB sql/log_event_server.cc, Gtid_log_event::pack_info(): `GTID d-s-n` when FL_STANDALONE,
//   else `XA START <xid> GTID d-s-n` when FL_PREPARED_XA (xid = X'<gtrid hex>',X'<bqual
//   hex>',<formatID>), else `BEGIN GTID d-s-n`; then ` cid=<commit_id>` when FL_GROUP_COMMIT_ID, `
//   START ALTER`, ` COMMIT ALTER id=<sa_seq_no>` / ` ROLLBACK ALTER id=<sa_seq_no>` from the extra
//   flags.
// * MariaDB Gtid_list_log_event::pack_info(): the list is sorted with compare_glle_gtids (rpl_gtid
//   operator<: domain, then seq_no) and printed as `[d-s-n,d-s-n]`; `[]` when empty.
//   @@gtid_binlog_state (rpl_binlog_state::append_state, rpl_gtid.cc) sorts by domain only
//   (rpl_gtid_cmp_cb); MariaGtidList::to_string() sorts by domain, then seq, then server_id.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/result.h>

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl {

// ---------------------------------------------------------------------------------------------
// MySQL
// ---------------------------------------------------------------------------------------------

struct Uuid {
  std::array<std::uint8_t, 16> bytes{};

  // 32 hex digits, either 8-4-4-4-12 with dashes or without any dash; any case.
  // Errors: Errc::bad_value with the offset (in the text) of the first bad character.
  static Result<Uuid> parse(std::string_view text);
  // The first 16 bytes of b (b.size() >= 16 is the caller's duty).
  static Uuid from_bytes(Bytes b) noexcept;
  // Lower case 8-4-4-4-12.
  std::string to_string() const;
  bool is_nil() const noexcept;
  // Byte order, the order MySQL's Tsid_map sorts by.
  auto operator<=>(const Uuid&) const = default;
};

// One closed interval of gnos [start, end], 1 <= start <= end <= kMaxGno.
struct GtidInterval {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  bool operator==(const GtidInterval&) const = default;
};

inline constexpr std::uint64_t kMaxGno = 0x7ffffffffffffffeULL;  // GNO_END - 1, GNO_END = INT64_MAX
inline constexpr std::size_t kMaxTagLength = 32;                 // mysql::gtid::tag_max_length

// True for a valid tag: [A-Za-z_][A-Za-z0-9_]{0,31}. The empty string is "untagged", not a tag.
bool is_valid_gtid_tag(std::string_view tag) noexcept;

// A MySQL GTID set: (uuid, tag) -> sorted, disjoint, non-adjacent closed intervals. Tags are
// stored lower-cased; the untagged entry has the empty tag. Entries never hold an empty interval
// list, so operator== is set equality.
class GtidSet {
 public:
  struct Key {
    Uuid uuid;
    std::string tag;  // lower case, "" = untagged
    auto operator<=>(const Key&) const = default;
  };
  using Intervals = std::vector<GtidInterval>;
  using Map = std::map<Key, Intervals>;

  // MySQL text syntax: comma-separated `uuid(:item)*` where an item is a gno `a`, an interval
  // `a-b`, or a tag that applies to the intervals after it. The uuid may be written with or
  // without dashes, in any case; tags are case-insensitive. Whitespace (spaces, tabs, newlines)
  // is allowed around every token; empty elements between commas are skipped like the server
  // does; "" (or only whitespace) is the empty set. Stricter than the server on purpose: gnos are
  // decimal only and an interval `b-a` with b < a is an error (the server silently drops it).
  // Errors: Errc::bad_value, offset = position in text.
  static Result<GtidSet> parse(std::string_view text);

  // Server format with `sep` between uuids (default ","): `uuid:1-5:7:tag:1-3,uuid2:4`.
  std::string to_string(std::string_view sep = ",") const;
  // The Info column of SHOW BINLOG EVENTS for a Previous_gtids event (separator ",\n").
  std::string to_info() const { return to_string(",\n"); }

  // Errors (set unchanged): Errc::bad_value for an invalid tag, gno 0, gno > kMaxGno or
  // start > end. Offsets are 0.
  Status add(const Uuid& uuid, std::string_view tag, std::uint64_t gno);
  Status add_interval(const Uuid& uuid, std::string_view tag, std::uint64_t start,
                      std::uint64_t end);

  void union_with(const GtidSet& other);
  void subtract(const GtidSet& other);

  bool contains(const Uuid& uuid, std::string_view tag, std::uint64_t gno) const;
  bool contains(const GtidSet& other) const;  // other is a subset of *this
  bool empty() const noexcept { return map_.empty(); }
  // Number of GTIDs (saturates at UINT64_MAX).
  std::uint64_t count() const noexcept;
  // Intervals of one (uuid, tag), or nullptr. The tag is compared after lower-casing.
  const Intervals* find(const Uuid& uuid, std::string_view tag) const;

  // Iteration in print order: for (const auto& [key, intervals] : set).
  Map::const_iterator begin() const noexcept { return map_.begin(); }
  Map::const_iterator end() const noexcept { return map_.end(); }
  std::size_t size() const noexcept { return map_.size(); }  // number of (uuid, tag) entries

  bool operator==(const GtidSet&) const = default;

 private:
  friend Result<GtidSet> decode_previous_gtids(ByteReader& body);
  void add_interval_unchecked(Key key, std::uint64_t start, std::uint64_t end);
  Map map_;
};

// PREVIOUS_GTIDS_LOG_EVENT (35) body, CRC footer already dropped. Layout (sql/rpl_gtid_set.cc,
// Gtid_set::encode / add_gtid_encoding), all integers little-endian:
//   8  n_sids word. Top byte = format: 0 = classic, n_sids = low 56 bits;
//      1 = tagged (8.3+), n_sids = bits 8..55 and the low byte repeats the format (ignored).
//      Any other top byte is read as servers before 8.3 did, as part of a 64-bit count, and so
//      fails the count check (Errc::bad_length); 8.3+ servers reject it as an unknown format.
//   per sid:
//     16 uuid
//     tagged only: tag as mysql::serialization string: varint length (<= 32) + characters,
//        length 0 = untagged
//     8  n_intervals
//     n_intervals x (8 start, 8 end): half-open [start, end), converted to closed [start, end-1].
// Checks: every count against the remaining bytes before looping (Errc::bad_length at the count's
// offset); start > previous end, end > start, end <= INT64_MAX (else Errc::bad_value at the
// interval); an invalid tag (Errc::bad_value); trailing bytes (Errc::bad_length).
Result<GtidSet> decode_previous_gtids(ByteReader& body);

// The body of GTID_LOG_EVENT (33), ANONYMOUS_GTID_LOG_EVENT (34) or GTID_TAGGED_LOG_EVENT (42).
struct GtidLog {
  std::uint8_t flags = 0;  // bit 0: FLAG_MAY_HAVE_SBR
  Uuid uuid;
  std::uint64_t gno = 0;  // 0 for anonymous
  // Tagged events only: borrows the event body (valid while the body bytes are). Lower case as
  // written by the server; decode only checks the character set.
  std::string_view tag;
  bool has_logical_clock = false;  // 5.7+
  std::int64_t last_committed = 0;
  std::int64_t sequence_number = 0;
  bool has_timestamps = false;  // 8.0.1+; microseconds since the epoch
  std::uint64_t immediate_commit_timestamp = 0;
  std::uint64_t original_commit_timestamp = 0;  // = immediate unless the event carries one
  bool has_length = false;                      // 8.0.2+
  std::uint64_t transaction_length = 0;         // whole transaction, GTID event included
  bool has_server_versions = false;             // 8.0.14+
  std::uint32_t immediate_server_version = 0;
  std::uint32_t original_server_version = 0;  // = immediate unless the event carries one
  std::uint64_t commit_group_ticket = 0;      // 8.0.27+ group replication, 0 = unset
};

inline constexpr std::uint32_t kUndefinedServerVersion = 999999;  // UNDEFINED_SERVER_VERSION

// Classic GTID / ANONYMOUS_GTID body (libs/mysql/binlog/event/control_events.h, Gtid_event):
//   1 flags | 16 uuid | 8 gno                                                     (5.6)
//   | 1 lt_type (=2) | 8 last_committed | 8 sequence_number                       (5.7)
//   | 7 immediate_commit_timestamp (bit 55 set: a 7-byte original follows) [| 7 original]
//   | packed transaction_length
//   | 4 immediate_server_version (bit 31 set: a 4-byte original follows) [| 4 original]
//   | 8 commit_group_ticket                                                       (8.0)
// Each optional group is read only when its bytes are there, like the server does; an lt_type
// other than 2 ends the event. Errors: Errc::truncated inside the fixed 25 bytes or inside a
// field that was started; Errc::bad_value for an invalid packed integer.
Result<GtidLog> decode_gtid_log(ByteReader& body);

// GTID_TAGGED_LOG_EVENT (42) body, MySQL 8.3+, encoded with mysql::serialization
// (libs/mysql/serialization/readme.md, variable_length_integers.h, serializer_default_impl.hpp):
//   varint format version (must be 1) | varint message size (counted from the version byte)
//   | varint last_non_ignorable_field_id | fields in ascending id order, each `varint id | data`.
// Varint: the number of trailing one bits of the first byte + 1 gives the byte count (1..9);
// the value follows the length marker, little-endian; signed values are zig-zag encoded.
// Fields of Gtid_event::define_fields: 0 gtid_flags (u8), 1 uuid (16 x varint u8), 2 gno (i64),
// 3 tag (varint length <= 32 + chars), 4 last_committed (i64), 5 sequence_number (i64),
// 6 immediate_commit_timestamp, 7 original_commit_timestamp (= 6 if absent),
// 8 transaction_length, 9 immediate_server_version (u32), 10 original_server_version (= 9 if
// absent), 11 commit_group_ticket (0 if absent). Unknown later fields are skipped to the message
// end; a last_non_ignorable_field_id above 12 is Errc::unsupported_format. Returns the same
// struct as decode_gtid_log, with tag set and every has_* flag true.
Result<GtidLog> decode_gtid_tagged_log(ByteReader& body);

// `SET @@SESSION.GTID_NEXT= 'uuid:gno'`, `... 'uuid:tag:gno'`, or `... 'ANONYMOUS'`.
std::string gtid_next_info(const GtidLog& ev, bool anonymous);

// ---------------------------------------------------------------------------------------------
// MariaDB
// ---------------------------------------------------------------------------------------------

struct MariaGtid {
  std::uint32_t domain = 0;
  std::uint32_t server_id = 0;
  std::uint64_t seq = 0;

  // `domain-server-seq`, decimal, no whitespace. Errors: Errc::bad_value, offset in text.
  static Result<MariaGtid> parse(std::string_view text);
  std::string to_string() const;
  bool operator==(const MariaGtid&) const = default;
};

// A set of MariaDB GTIDs to select transactions by (--include-gtids / --exclude-gtids): a comma-
// separated list of items, each naming GTIDs of one (domain, server_id):
//   `2-102-12`         the one GTID 2-102-12
//   `2-102:10-20:25`   seq 10 to 20 and 25 of domain 2, server 102 (MySQL's interval syntax)
//   `..2-102-12`       every seq up to 12 (the binlog-state meaning of `2-102-12` in a GTID list
//                      such as @@gtid_binlog_state or verify's gtid_executed)
// Several items may name the same (domain, server_id). Whitespace around commas is allowed;
// "" = the empty set. Errors: Errc::bad_value with the offset in text where it stops parsing.
class MariaGtidSet {
 public:
  struct Range {
    std::uint32_t domain = 0;
    std::uint32_t server_id = 0;
    std::uint64_t lo = 0;  // first and last seq, inclusive
    std::uint64_t hi = 0;
  };
  static Result<MariaGtidSet> parse(std::string_view text);
  bool contains(const MariaGtid& g) const noexcept;
  const std::vector<Range>& ranges() const noexcept { return ranges_; }
  bool empty() const noexcept { return ranges_.empty(); }

 private:
  std::vector<Range> ranges_;
};

// A list of MariaDB GTIDs with binlog-state semantics: at most one entry per (domain, server_id),
// holding the last seq. Keeps the order entries were added or decoded in (entries()).
class MariaGtidList {
 public:
  // `0-1-100,1-2-3` (whitespace around commas allowed, "" = empty). A repeated (domain,
  // server_id) pair is Errc::bad_value. Offsets are positions in text.
  static Result<MariaGtidList> parse(std::string_view text);

  // As @@gtid_binlog_state: sorted by domain, then seq, then server_id; `,` separated.
  std::string to_string() const;
  // As SHOW BINLOG EVENTS prints a Gtid_list event: `[2-102-49,20-2020-1000]`, sorted by
  // (domain, seq) like compare_glle_gtids (server_id breaks ties).
  std::string to_info() const;

  // Records g as the last GTID of its (domain, server_id), like rpl_binlog_state::update.
  void update(const MariaGtid& g);
  // Drops the entry of (domain, server_id), if any.
  void erase(std::uint32_t domain, std::uint32_t server_id);
  // True when the entry for (g.domain, g.server_id) has seq >= g.seq.
  bool contains(const MariaGtid& g) const;
  // Per (domain, server_id), the higher seq of both lists.
  void union_with(const MariaGtidList& other);
  // Drops every entry that other contains().
  void subtract(const MariaGtidList& other);
  // Per domain, the entry with the highest seq, sorted by domain (like @@gtid_binlog_pos).
  MariaGtidList position() const;
  // Last seq for (domain, server_id), or nullptr.
  const MariaGtid* find(std::uint32_t domain, std::uint32_t server_id) const;

  const std::vector<MariaGtid>& entries() const noexcept { return entries_; }
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t size() const noexcept { return entries_.size(); }
  // Top 4 bits of a decoded Gtid_list count word (FLAG_UNTIL_REACHED, FLAG_IGN_GTIDS), else 0.
  std::uint8_t flags() const noexcept { return flags_; }
  void set_flags(std::uint8_t f) noexcept { flags_ = f; }

  // Same set of entries, whatever the order; flags are ignored.
  bool operator==(const MariaGtidList& other) const;

 private:
  std::vector<MariaGtid> entries_;
  std::uint8_t flags_ = 0;
};

// GTID_LIST_EVENT (163) body: 4 count word (low 28 bits count, top 4 bits flags), then
// count x (4 domain, 4 server_id, 8 seq). Entries are kept in event order (a repeated pair keeps
// the later seq). The count is checked against the remaining bytes first (Errc::bad_length at the
// count). Trailing bytes (the padding of an empty list) are ignored.
Result<MariaGtidList> decode_gtid_list(ByteReader& body);
// The same body for `entries` (in their order), `flags` in the count word's top 4 bits.
void encode_gtid_list(const std::vector<MariaGtid>& entries, std::uint32_t flags, std::vector<std::uint8_t>& body);

struct MariaGtidEvent {
  // flags2 bits (sql/log_event.h, Gtid_log_event)
  static constexpr std::uint8_t kFlStandalone = 1;
  static constexpr std::uint8_t kFlGroupCommitId = 2;
  static constexpr std::uint8_t kFlTransactional = 4;
  static constexpr std::uint8_t kFlAllowParallel = 8;
  static constexpr std::uint8_t kFlWaited = 16;
  static constexpr std::uint8_t kFlDdl = 32;
  static constexpr std::uint8_t kFlPreparedXa = 64;
  static constexpr std::uint8_t kFlCompletedXa = 128;
  // flags_extra bits
  static constexpr std::uint8_t kFlExtraMultiEngine = 1;  // FL_EXTRA_MULTI_ENGINE_E1
  static constexpr std::uint8_t kFlStartAlter = 2;        // FL_START_ALTER_E1
  static constexpr std::uint8_t kFlCommitAlter = 4;       // FL_COMMIT_ALTER_E1
  static constexpr std::uint8_t kFlRollbackAlter = 8;     // FL_ROLLBACK_ALTER_E1

  std::uint64_t seq = 0;
  std::uint32_t domain = 0;
  std::uint8_t flags2 = 0;
  std::uint64_t commit_id = 0;  // if kFlGroupCommitId
  // XA (kFlPreparedXa / kFlCompletedXa): formatID, then gtrid and bqual bytes, borrowed from
  // the event body.
  std::int32_t xa_format_id = 0;
  std::string_view xa_gtrid;
  std::string_view xa_bqual;
  std::uint8_t flags_extra = 0;
  std::uint8_t extra_engines = 0;  // if kFlExtraMultiEngine
  std::uint64_t sa_seq_no = 0;     // if kFlCommitAlter / kFlRollbackAlter

  bool standalone() const noexcept { return (flags2 & kFlStandalone) != 0; }
  bool is_xa() const noexcept { return (flags2 & (kFlPreparedXa | kFlCompletedXa)) != 0; }
  MariaGtid gtid(std::uint32_t server_id) const noexcept { return {domain, server_id, seq}; }
};

// GTID_EVENT (162) body (sql/log_event.cc, Gtid_log_event ctor), CRC dropped:
//   8 seq | 4 domain | 1 flags2 | [8 commit_id if FL_GROUP_COMMIT_ID]
//   | [XA: 4 formatID, 1 gtrid_len, 1 bqual_len (each <= 64), gtrid, bqual]
//   | [1 flags_extra | 1 extra_engines if MULTI_ENGINE | 8 sa_seq_no if COMMIT/ROLLBACK ALTER]
//   zero padding up to 19 bytes (read as flags_extra 0).
// server_id comes from the common header. Errors: Errc::truncated, Errc::bad_value (XID lengths).
Result<MariaGtidEvent> decode_mariadb_gtid(ByteReader& body, std::uint32_t server_id);

// The Info column, e.g. `BEGIN GTID 2-102-50`, `GTID 2-102-7`,
// `XA START X'78612d31',X'',1 GTID 0-1-5`, `BEGIN GTID 0-1-9 cid=1234`.
std::string mariadb_gtid_info(const MariaGtidEvent& ev, std::uint32_t server_id);
// The same, appended to out (no allocation once out has grown).
void append_mariadb_gtid_info(std::string& out, const MariaGtidEvent& ev, std::uint32_t server_id);

}  // namespace binlogctl
