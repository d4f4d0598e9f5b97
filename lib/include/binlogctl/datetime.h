// Datetime text as the selection options take it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace binlogctl {

// "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DD") as seconds since the epoch, taking the text as
// UTC + tz_offset_seconds. nullopt if it does not parse.
std::optional<std::int64_t> parse_datetime(std::string_view text, std::int32_t tz_offset_seconds = 0);

// A --timezone value that is a fixed offset: "UTC" (also "utc", "Z", "GMT") or "+HH:MM" /
// "-HH:MM" (up to 14 hours), as seconds east of UTC. nullopt otherwise (a zone name or junk).
std::optional<std::int32_t> fixed_timezone_offset(std::string_view tz);
// Whether `tz` names a zone of the system's zone database (TZDIR or /usr/share/zoneinfo).
bool timezone_name_exists(std::string_view tz);
// "YYYY-MM-DD HH:MM:SS" read as a wall-clock time in `tz` (a fixed offset or a zone name, see
// above; a zone name goes through TZ + localtime_r, one zone per process). nullopt when the text
// does not parse or the zone is not known.
std::optional<std::int64_t> parse_datetime_in_zone(std::string_view text, std::string_view tz);

// A --timezone to print times in (Canal's TIMESTAMP values, stats' text). A named zone goes
// through TZ + localtime_r (one zone per process); a fixed offset is computed directly (proleptic
// Gregorian calendar, as gmtime_r does). The zone must be valid (fixed_timezone_offset or
// timezone_name_exists).
class TimeZone {
 public:
  explicit TimeZone(std::string_view tz = "UTC");
  // "YYYY-MM-DD HH:MM:SS" of `seconds` since the epoch in this zone.
  void append_local(std::string& out, std::int64_t seconds) const;
  // The same 19 bytes written at `out`; returns their end.
  char* put_local(char* out, std::int64_t seconds) const;

 private:
  bool named_ = false;
  std::int32_t offset_ = 0;
};

}  // namespace binlogctl
