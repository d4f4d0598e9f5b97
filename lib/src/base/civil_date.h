// The proleptic Gregorian calendar for the library's sources (not a public header): days since
// 1970-01-01 to and from a civil date (Howard Hinnant's algorithms), and seconds since the epoch
// split into whole days and the seconds of the day. The one copy: the column decoder, the
// timestamp renderers and the datetime options all count days through it.
#pragma once

#include <cstdint>

namespace binlogctl::civil {

struct Date {
  std::int64_t year = 0;
  unsigned month = 0;  // 1..12
  unsigned day = 0;    // 1..31
};

// Days since 1970-01-01 -> year, month, day (civil_from_days).
constexpr Date from_days(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  Date out;
  out.day = doy - (153 * mp + 2) / 5 + 1;
  out.month = mp < 10 ? mp + 3 : mp - 9;
  out.year = static_cast<std::int64_t>(yoe) + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

// Year, month (1..12), day -> days since 1970-01-01 (days_from_civil).
constexpr std::int64_t to_days(std::int64_t year, unsigned month, unsigned day) {
  const std::int64_t y = year - (month <= 2 ? 1 : 0);
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned mp = month > 2 ? month - 3 : month + 9;
  const unsigned doy = (153 * mp + 2) / 5 + day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Seconds since the epoch -> whole days (rounded down) and the seconds into that day (0..86399).
struct DaySeconds {
  std::int64_t days = 0;
  std::int64_t seconds = 0;
};
constexpr DaySeconds split_days(std::int64_t t) {
  DaySeconds out{t / 86400, t % 86400};
  if (out.seconds < 0) {
    out.seconds += 86400;
    --out.days;
  }
  return out;
}

static_assert(from_days(0).year == 1970 && from_days(0).month == 1 && from_days(0).day == 1);
static_assert(from_days(-1).year == 1969 && from_days(-1).month == 12 && from_days(-1).day == 31);
static_assert(to_days(2024, 2, 29) == 19782 && from_days(19782).month == 2);
static_assert(split_days(-1).days == -1 && split_days(-1).seconds == 86399);

}  // namespace binlogctl::civil
