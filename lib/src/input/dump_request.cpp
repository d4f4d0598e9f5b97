// The bodies of the dump commands (remote.h): COM_BINLOG_DUMP and MySQL's COM_BINLOG_DUMP_GTID
// with its GTID set. In the core library so that the byte layouts are unit-tested without a
// server (tests/unit/dump_request_test.cpp).
#include <binlogctl/remote.h>

#include <fmt/format.h>

#include <stdexcept>

namespace binlogctl {

namespace {

void put_le(std::vector<std::uint8_t>& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

std::vector<std::uint8_t> encode_binlog_dump(const std::string& file, std::uint64_t pos, std::uint16_t flags,
                                             std::uint32_t server_id) {
  if (pos > kMaxDumpPosition)
    throw std::invalid_argument(
        fmt::format("position {} is past what COM_BINLOG_DUMP can ask for (4 bytes: at most {})", pos, kMaxDumpPosition));
  std::vector<std::uint8_t> b;
  b.reserve(10 + file.size());
  put_le(b, pos, 4);
  put_le(b, flags, 2);
  put_le(b, server_id, 4);
  b.insert(b.end(), file.begin(), file.end());
  return b;
}

std::vector<std::uint8_t> encode_gtid_set(const GtidSet& set) {
  bool tagged = false;
  for (const auto& [key, intervals] : set)
    if (!key.tag.empty()) tagged = true;
  std::vector<std::uint8_t> b;
  const std::uint64_t n = set.size();
  put_le(b, tagged ? (1ull << 56) | (n << 8) | 1u : n, 8);
  for (const auto& [key, intervals] : set) {
    b.insert(b.end(), key.uuid.bytes.begin(), key.uuid.bytes.end());
    if (tagged) {
      b.push_back(static_cast<std::uint8_t>(key.tag.size() << 1));  // <= 32: one varint byte
      b.insert(b.end(), key.tag.begin(), key.tag.end());
    }
    put_le(b, intervals.size(), 8);
    for (const GtidInterval& iv : intervals) {
      put_le(b, iv.start, 8);
      put_le(b, iv.end + 1, 8);  // half-open on the wire; end <= kMaxGno, so no overflow
    }
  }
  return b;
}

std::vector<std::uint8_t> encode_binlog_dump_gtid(const std::string& file, std::uint64_t pos, std::uint16_t flags,
                                                  std::uint32_t server_id, const GtidSet& exclude) {
  const std::vector<std::uint8_t> set = encode_gtid_set(exclude);
  std::vector<std::uint8_t> b;
  b.reserve(22 + file.size() + set.size());
  put_le(b, static_cast<std::uint16_t>(flags | kDumpThroughGtid), 2);
  put_le(b, server_id, 4);
  put_le(b, file.size(), 4);
  b.insert(b.end(), file.begin(), file.end());
  put_le(b, pos, 8);
  put_le(b, set.size(), 4);
  b.insert(b.end(), set.begin(), set.end());
  return b;
}

DumpRequest make_dump_request(bool mariadb, const std::string& file, std::uint64_t pos, bool non_blocking,
                              std::uint32_t server_id, bool gtid_start, const GtidSet& exclude) {
  std::uint16_t flags = non_blocking ? kDumpNonBlock : 0;
  DumpRequest r;
  if (mariadb) {
    if (pos > kMaxDumpPosition)
      throw std::invalid_argument(fmt::format("position {} is past 4 GiB, and MariaDB's COM_BINLOG_DUMP carries 4 bytes of "
                                              "position: start at 4 (or at a position below 4 GiB) instead",
                                              pos));
    flags |= kDumpAnnotateRows;  // on MySQL this bit would ask for HEARTBEAT_V2
    r.body = gtid_start ? encode_binlog_dump("", 4, flags, server_id) : encode_binlog_dump(file, pos, flags, server_id);
  } else if (!exclude.empty() || pos > kMaxDumpPosition) {
    // The set to leave out, and an 8-byte position (the only way MySQL takes one past 4 GiB).
    r.command = kComBinlogDumpGtid;
    r.body = encode_binlog_dump_gtid(file, pos, flags, server_id, exclude);
  } else {
    r.body = encode_binlog_dump(file, pos, flags, server_id);
  }
  return r;
}

}  // namespace binlogctl
