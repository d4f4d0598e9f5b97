#include <binlogctl/crc32.h>
#include <binlogctl/fde.h>

#include <cstring>

namespace binlogctl {

std::uint32_t parse_server_version(std::string_view v) noexcept {
  std::uint32_t parts[3] = {0, 0, 0};
  std::size_t i = 0;
  for (int k = 0; k < 3; ++k) {
    if (i >= v.size() || v[i] < '0' || v[i] > '9') return k == 0 ? 0 : (parts[0] << 16) | (parts[1] << 8) | parts[2];
    std::uint32_t n = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && n < 1000) n = n * 10 + static_cast<std::uint32_t>(v[i++] - '0');
    parts[k] = n > 255 ? 255 : n;
    if (k < 2) {
      if (i >= v.size() || v[i] != '.') break;
      ++i;
    }
  }
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

Fde default_fde() {
  // The post-header lengths binlog v4 servers declare (MySQL 8 / MariaDB 10.x), for events met
  // before any format description (relay logs, dump streams).
  Fde f;
  f.checksum = ChecksumAlg::undefined;
  auto set = [&f](int type, std::uint8_t len) { f.post_header_len[static_cast<std::size_t>(type)] = len; };
  set(1, 56); set(2, 13); set(4, 8); set(6, 18); set(8, 4); set(9, 4); set(10, 4); set(11, 4);
  set(12, 18); set(17, 4); set(18, 26); set(19, 8); set(20, 8); set(21, 8); set(22, 8);
  set(23, 8); set(24, 8); set(25, 8); set(26, 2); set(30, 10); set(31, 10); set(32, 10);
  set(33, 42); set(34, 42); set(36, 18); set(37, 52); set(39, 10);
  set(161, 4); set(162, 19); set(163, 4); set(165, 13);
  set(166, 8); set(167, 8); set(168, 8); set(169, 10); set(170, 10); set(171, 10);
  f.n_post_headers = 171;
  return f;
}

std::uint32_t compute_event_crc(Bytes event) noexcept {
  if (event.size() < kCommonHeaderLen + kChecksumLen) return 0;
  const std::size_t n = event.size() - kChecksumLen;
  if (event[4] == static_cast<std::uint8_t>(EventType::format_description) && (event[17] & kFlagInUse)) {
    std::uint8_t head[kCommonHeaderLen];
    std::memcpy(head, event.data(), kCommonHeaderLen);
    head[17] = static_cast<std::uint8_t>(head[17] & ~kFlagInUse);
    std::uint32_t crc = crc32_update(0, head, kCommonHeaderLen);
    return crc32_update(crc, event.data() + kCommonHeaderLen, n - kCommonHeaderLen);
  }
  return crc32_update(0, event.data(), n);
}

Result<Fde> decode_fde(Bytes event, std::uint64_t offset) {
  constexpr std::size_t kFixed = 2 + 50 + 4 + 1;  // up to and including common_header_len
  if (event.size() < kCommonHeaderLen + kFixed)
    return DecodeError{Errc::truncated, offset, "format description event is too short"};
  ByteReader r(event.subspan(kCommonHeaderLen), offset + kCommonHeaderLen);
  Fde f;
  f.binlog_version = r.u16();
  std::string_view ver = r.str(50);
  f.create_timestamp = r.u32();
  f.common_header_len = r.u8();
  if (f.binlog_version != 4)
    return DecodeError{Errc::unsupported_format, offset + kCommonHeaderLen,
                       "binlog format version is not 4 (v1/v3 binlogs are not supported)"};
  if (f.common_header_len < kCommonHeaderLen)
    return DecodeError{Errc::bad_value, offset + kCommonHeaderLen + 56,
                       "common header length in the format description is below 19"};
  auto nul = ver.find('\0');
  f.server_version.assign(ver.substr(0, nul));
  f.flavor = f.server_version.find("MariaDB") != std::string::npos ? Flavor::mariadb : Flavor::mysql;
  f.version_product = parse_server_version(f.server_version);
  // Checksum-aware servers: MySQL 5.6.1 (checksum_version_product), MariaDB 5.3.
  const std::uint32_t split = f.flavor == Flavor::mariadb ? 0x050300u : 0x050601u;
  std::size_t n = r.remaining();
  if (f.version_product >= split && n >= 1 + kChecksumLen) {
    f.has_checksum_field = true;
    n -= 1 + kChecksumLen;
  }
  Bytes ph = r.bytes(n);
  f.n_post_headers = static_cast<std::uint16_t>(n > 255 ? 255 : n);
  for (std::size_t i = 0; i < f.n_post_headers; ++i) f.post_header_len[i + 1] = ph[i];
  if (f.has_checksum_field) {
    std::uint8_t alg = r.u8();
    f.checksum = alg == 1 ? ChecksumAlg::crc32 : alg == 0 ? ChecksumAlg::off : ChecksumAlg::undefined;
    if (alg != 0 && alg != 1)
      return DecodeError{Errc::unsupported_format, r.offset() - 1, "unknown checksum algorithm in the format description"};
  } else {
    f.checksum = ChecksumAlg::off;
  }
  if (!r.ok()) return r.error();
  return f;
}

}  // namespace binlogctl
