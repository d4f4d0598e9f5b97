// Datetime text as the selection options take it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace binlogctl {

// "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DD") as seconds since the epoch, taking the text as
// UTC + tz_offset_seconds. nullopt if it does not parse.
std::optional<std::int64_t> parse_datetime(std::string_view text, std::int32_t tz_offset_seconds = 0);

}  // namespace binlogctl
