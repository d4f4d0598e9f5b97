// Relay logs: a replica's files holding its primary's events. What tells them apart from a
// server's own binlog (binlogctl-verify(1), RELAY LOGS): the name ("relay" in it, any case, as in
// host-relay-bin.000002), or the file's own events: an event flagged LOG_EVENT_RELAY_LOG_F, a
// second format description (the primary's, written by another server or with a position of
// another file), a ROTATE flagged artificial or at position 0 (what a primary sends first).
// Relay logs differ from binlogs where positions (the primary's) and transactions (a relay log
// may end inside one, which the next relay log goes on with) are concerned.
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/event_type.h>

#include <cstdint>
#include <string_view>

namespace binlogctl {

class RelayLogSigns {
 public:
  // A new file: a relay log when its name says so, until its events say it.
  void open(std::string_view log_name) noexcept {
    relay_ = false;
    for (std::size_t i = 0; i + 5 <= log_name.size() && !relay_; ++i) {
      const std::string_view w = log_name.substr(i, 5);
      relay_ = (w[0] | 0x20) == 'r' && (w[1] | 0x20) == 'e' && (w[2] | 0x20) == 'l' &&
               (w[3] | 0x20) == 'a' && (w[4] | 0x20) == 'y';
    }
    own_server_id_ = 0;
    fde_count_ = 0;
  }
  // Every top-level event of the file, in order. True for the file's first format description.
  bool event(const Event& ev) noexcept {
    const std::uint8_t t = ev.type_code();
    const std::uint16_t flags = ev.header.flags;
    if ((flags & kFlagRelayLog) != 0) relay_ = true;
    if (t == static_cast<std::uint8_t>(EventType::format_description)) {
      if (++fde_count_ == 1) {
        own_server_id_ = ev.header.server_id;
        return true;
      }
      const auto chained = static_cast<std::uint32_t>(ev.pos + ev.header.event_size);
      if (ev.header.server_id != own_server_id_ || ev.header.log_pos != chained) relay_ = true;
    } else if (t == static_cast<std::uint8_t>(EventType::rotate)) {
      if ((flags & kFlagArtificial) != 0 || ev.header.log_pos == 0) relay_ = true;
    }
    return false;
  }

  bool relay() const noexcept { return relay_; }
  // The server id of the file's first format description (the file's own server).
  std::uint32_t own_server_id() const noexcept { return own_server_id_; }
  std::uint32_t fde_count() const noexcept { return fde_count_; }

 private:
  bool relay_ = false;
  std::uint32_t own_server_id_ = 0;
  std::uint32_t fde_count_ = 0;
};

}  // namespace binlogctl
