// Comparing two servers' copies of one event (serve --upstream's failover, fetch.cpp).
#include <binlogctl/gtid.h>

#include "events/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace binlogctl {

ComparableEvent comparable_event(Bytes raw, const Fde& fde) {
  ComparableEvent n;
  if (raw.size() < kCommonHeaderLen) return n;
  n.type = raw[4];
  const std::size_t crc = fde.crc32() ? kChecksumLen : 0;
  if (raw.size() < kCommonHeaderLen + crc) return n;
  const Bytes body(raw.data() + kCommonHeaderLen, raw.size() - kCommonHeaderLen - crc);
  const auto t = static_cast<EventType>(n.type);
  auto tail = [&](std::size_t skip) {
    if (body.size() >= skip) n.text.assign(reinterpret_cast<const char*>(body.data()) + skip, body.size() - skip);
  };
  if (t == EventType::mariadb_gtid) {
    const std::uint32_t server_id = load_le32(raw.data() + 5);
    ByteReader r(body);
    if (auto g = decode_mariadb_gtid(r, server_id)) n.text = g->gtid(server_id).to_string();
  } else if (t == EventType::xid) {
    // the XID is each server's own
  } else if (t == EventType::table_map || is_rows_event(n.type)) {
    tail(fde.post_header(n.type) == 6 ? 4 : 6);  // after the table id
  } else if (t == EventType::query) {
    if (auto q = decode_query(ByteReader(body), fde)) {
      n.text.assign(q->db);
      n.text += '\0';
      n.text.append(q->sql);
      n.text += '\0';
      n.text += std::to_string(q->error_code);
    }
  } else {
    tail(0);
  }
  return n;
}

std::string format_difference(const Fde& a, const Fde& b) {
  if (a.checksum != b.checksum) return "binlog_checksum differs";
  if (a.binlog_version != b.binlog_version || a.common_header_len != b.common_header_len)
    return "the binlog version differs";
  for (std::size_t t = 1; t < std::min(a.n_post_headers, b.n_post_headers); ++t)
    if (a.post_header_len[t] != b.post_header_len[t])
      return fmt::format("the post-header length of event type {} differs", t);
  return {};
}

}  // namespace binlogctl
