// Builds binlog files in memory for tests, the way yaml2obj builds objects for LLVM's tests:
//   auto bytes = BinlogBuilder{}.fde_mysql("8.0.32").query("db", "BEGIN").xid(7).bytes();
// Positions (end_log_pos) and CRC32 footers are filled in; mutate the result for corrupt cases.
#pragma once

#include <binlogctl/crc32.h>
#include <binlogctl/event_type.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl::testing {

class BinlogBuilder {
 public:
  using Buf = std::vector<std::uint8_t>;

  explicit BinlogBuilder(bool magic = true) {
    if (magic) out_.assign(std::begin(kBinlogMagic), std::end(kBinlogMagic));
  }

  // A binlog v4 FDE. checksum: true = CRC32 for the events that follow (and the FDE itself).
  BinlogBuilder& fde(std::string_view version, bool checksum = true, std::uint16_t flags = 0) {
    Buf b;
    le(b, 4, 2);
    std::string v(version);
    v.resize(50, '\0');
    b.insert(b.end(), v.begin(), v.end());
    le(b, 0, 4);   // create timestamp
    b.push_back(19);
    // post-header lengths for types 1..171 (MySQL 8 / MariaDB values, zero for the rest)
    std::uint8_t ph[171] = {};
    auto set = [&ph](int t, std::uint8_t n) { ph[t - 1] = n; };
    set(1, 56); set(2, 13); set(4, 8); set(15, 98); set(17, 4); set(18, 26); set(19, 8);
    set(23, 8); set(24, 8); set(25, 8); set(26, 2); set(30, 10); set(31, 10); set(32, 10);
    set(33, 42); set(34, 42); set(39, 10); set(40, 40); set(161, 4); set(162, 19); set(163, 4);
    set(165, 13);
    const bool maria = version.find("MariaDB") != std::string_view::npos;
    b.insert(b.end(), ph, ph + (maria ? 171 : 41));
    const bool has_field = true;  // every version we build is checksum-aware (>= 5.6.1)
    if (has_field) b.push_back(checksum ? 1 : 0);
    crc_ = false;  // the FDE decides for itself below
    event(15, b, flags, /*fde_crc=*/has_field);
    crc_ = checksum;
    return *this;
  }

  BinlogBuilder& query(std::string_view db, std::string_view sql, std::uint16_t flags = 0) {
    Buf b;
    le(b, 1, 4);  // thread id
    le(b, 0, 4);  // exec time
    b.push_back(static_cast<std::uint8_t>(db.size()));
    le(b, 0, 2);  // error code
    le(b, 0, 2);  // status vars length
    b.insert(b.end(), db.begin(), db.end());
    b.push_back(0);
    b.insert(b.end(), sql.begin(), sql.end());
    return event(2, b, flags);
  }

  BinlogBuilder& xid(std::uint64_t x) {
    Buf b;
    le(b, x, 8);
    return event(16, b);
  }

  BinlogBuilder& rotate(std::string_view next, std::uint64_t pos = 4) {
    Buf b;
    le(b, pos, 8);
    b.insert(b.end(), next.begin(), next.end());
    return event(4, b);
  }

  BinlogBuilder& stop() { return event(3, {}); }

  // Any event type with a raw body.
  BinlogBuilder& raw(std::uint8_t type, const Buf& body, std::uint16_t flags = 0) { return event(type, body, flags); }

  BinlogBuilder& timestamp(std::uint32_t t) {
    ts_ = t;
    return *this;
  }
  BinlogBuilder& server_id(std::uint32_t s) {
    server_id_ = s;
    return *this;
  }

  const Buf& bytes() const { return out_; }
  std::size_t size() const { return out_.size(); }
  // Offset at which the n-th event (0-based, FDE included) starts.
  std::size_t event_offset(std::size_t n) const { return starts_.at(n); }

  static void le(Buf& b, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }

 private:
  BinlogBuilder& event(std::uint8_t type, const Buf& body, std::uint16_t flags = 0, bool fde_crc = false) {
    const bool crc = crc_ || fde_crc;
    const std::size_t start = out_.size();
    starts_.push_back(start);
    const std::uint32_t size = static_cast<std::uint32_t>(19 + body.size() + (crc ? 4 : 0));
    Buf h;
    le(h, ts_, 4);
    h.push_back(type);
    le(h, server_id_, 4);
    le(h, size, 4);
    le(h, start + size, 4);
    le(h, flags, 2);
    out_.insert(out_.end(), h.begin(), h.end());
    out_.insert(out_.end(), body.begin(), body.end());
    if (crc) {
      // CRC over the event with the FDE's IN_USE flag cleared (as the server computes it).
      Buf tmp(out_.begin() + static_cast<std::ptrdiff_t>(start), out_.end());
      if (type == 15) tmp[17] = static_cast<std::uint8_t>(tmp[17] & ~kFlagInUse);
      std::uint32_t c = crc32_update(0, tmp.data(), tmp.size());
      le(out_, c, 4);
    }
    return *this;
  }

  Buf out_;
  std::vector<std::size_t> starts_;
  bool crc_ = false;
  std::uint32_t ts_ = 1700000000;
  std::uint32_t server_id_ = 1;
};

}  // namespace binlogctl::testing
