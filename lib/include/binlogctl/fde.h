// FORMAT_DESCRIPTION_EVENT (type 15) and the rules it sets for the events that follow it.
//
// Body layout (binlog v4):
//   0   2  binlog_version (4)
//   2  50  server_version, NUL-padded
//  52   4  create_timestamp
//  56   1  common_header_len (19)
//  57   n  post_header_len[type - 1] for each type the server knows
//  ... then, on servers that know checksums (MySQL >= 5.6.1, MariaDB >= 5.3):
//       1  checksum algorithm of the events that follow (0 off, 1 CRC32)
//       4  the FDE's own checksum (present even when the algorithm is off)
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/event_type.h>
#include <binlogctl/result.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

enum class ChecksumAlg : std::uint8_t { off = 0, crc32 = 1, undefined = 255 };

struct Fde {
  std::uint16_t binlog_version = 4;
  std::string server_version;  // NUL padding removed
  std::uint32_t create_timestamp = 0;
  std::uint8_t common_header_len = kCommonHeaderLen;
  std::array<std::uint8_t, 256> post_header_len{};  // indexed by type code (not type - 1)
  std::uint16_t n_post_headers = 0;
  ChecksumAlg checksum = ChecksumAlg::undefined;  // of the events that follow
  bool has_checksum_field = false;  // the FDE itself ends with alg + CRC32
  Flavor flavor = Flavor::mysql;
  std::uint32_t version_product = 0;  // major * 65536 + minor * 256 + patch

  // Post-header length the FDE declares for this type (0 when it declares none).
  std::uint8_t post_header(std::uint8_t type_code) const noexcept { return post_header_len[type_code]; }
  std::uint8_t post_header(EventType t) const noexcept {
    return post_header(static_cast<std::uint8_t>(t));
  }
  bool crc32() const noexcept { return checksum == ChecksumAlg::crc32; }
  // MariaDB >= 11.4 writes end_log_pos 0 inside transactions.
  bool zero_log_pos_inside_transactions() const noexcept {
    return flavor == Flavor::mariadb && version_product >= ((11u << 16) | (4u << 8));
  }
  // A MySQL server before 5.5 (its version known): it wrote rows of non-transactional tables
  // without BEGIN, and autocommitted statements followed by their XID (5.0).
  bool mysql_before_5_5() const noexcept {
    return flavor == Flavor::mysql && version_product != 0 && version_product < 0x050500;
  }
};

// "5.6.4-m7-debug-log" -> 0x050604; "10.11.19-MariaDB-..." -> 0x0a0b13. 0 when it does not parse.
std::uint32_t parse_server_version(std::string_view v) noexcept;

// A default FDE for events met before any FDE (binlog v4, common header 19, no checksum known).
Fde default_fde();

// Decodes a whole FDE event (header included, checksum included when present).
// `offset` is the absolute offset of the event, for errors.
Result<Fde> decode_fde(Bytes event, std::uint64_t offset);

// The checksum an event carries is computed over event[0, size - 4); for an FDE with the
// IN_USE flag set, the flag is taken as cleared (the server sets it after computing).
std::uint32_t compute_event_crc(Bytes event) noexcept;

}  // namespace binlogctl
