// Datetime text for the selection options (datetime.h).
#include <binlogctl/datetime.h>

#include "civil_date.h"
#include "digits.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <system_error>

namespace binlogctl {

std::optional<std::int64_t> parse_datetime(std::string_view t, std::int32_t tz) {
  int v[6] = {0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  const char seps[] = {'-', '-', ' ', ':', ':'};
  for (int k = 0; k < 6; ++k) {
    if (i >= t.size() || t[i] < '0' || t[i] > '9') {
      if (k == 3 && i >= t.size()) break;  // date only
      return std::nullopt;
    }
    int n = 0, digits = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9' && digits < 4) n = n * 10 + (t[i++] - '0'), ++digits;
    v[k] = n;
    if (k < 5) {
      if (i >= t.size()) {
        if (k == 2) break;
        return std::nullopt;
      }
      if (t[i] != seps[k] && !(k == 2 && t[i] == 'T')) return std::nullopt;
      ++i;
    }
  }
  if (i != t.size() && !(i + 1 == t.size() && t[i] == 'Z')) return std::nullopt;
  if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[3] > 23 || v[4] > 59 || v[5] > 59) return std::nullopt;
  // The day must exist in its month (2021-02-30 does not; 2024-02-29 does).
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (v[0] % 4 == 0 && v[0] % 100 != 0) || v[0] % 400 == 0;
  if (v[2] > kDays[v[1] - 1] + (v[1] == 2 && leap ? 1 : 0)) return std::nullopt;
  const std::int64_t days =
      civil::to_days(v[0], static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]));
  return days * 86400 + v[3] * 3600 + v[4] * 60 + v[5] - tz;
}

std::optional<std::int32_t> fixed_timezone_offset(std::string_view tz) {
  if (tz == "UTC" || tz == "utc" || tz == "Z" || tz == "GMT") return 0;
  if (tz.size() == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':') {
    auto d = [&](std::size_t i) { return tz[i] >= '0' && tz[i] <= '9'; };
    if (!d(1) || !d(2) || !d(4) || !d(5)) return std::nullopt;
    const int h = (tz[1] - '0') * 10 + (tz[2] - '0'), m = (tz[4] - '0') * 10 + (tz[5] - '0');
    if (h > 14 || m > 59) return std::nullopt;
    return (h * 3600 + m * 60) * (tz[0] == '-' ? -1 : 1);
  }
  return std::nullopt;
}

bool timezone_name_exists(std::string_view tz) {
  if (tz.empty() || tz.find("..") != std::string_view::npos || tz[0] == '/') return false;
  const char* dir = std::getenv("TZDIR");
  const std::filesystem::path p =
      std::filesystem::path(dir != nullptr && *dir != 0 ? dir : "/usr/share/zoneinfo") / std::string(tz);
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

std::optional<std::int64_t> parse_datetime_in_zone(std::string_view text, std::string_view tz) {
  if (auto off = fixed_timezone_offset(tz)) return parse_datetime(text, *off);
  if (!timezone_name_exists(tz)) return std::nullopt;
  const auto wall = parse_datetime(text, 0);  // the wall-clock reading as if it were UTC
  if (!wall) return std::nullopt;
  static std::mutex m;
  const std::lock_guard<std::mutex> lock(m);
  ::setenv("TZ", std::string(tz).c_str(), 1);
  ::tzset();
  auto offset_at = [](std::int64_t t) {
    std::tm tm{};
    const auto tt = static_cast<std::time_t>(t);
    ::localtime_r(&tt, &tm);
    return static_cast<std::int64_t>(tm.tm_gmtoff);
  };
  // The zone's offset at the instant, found in two steps (it may differ across a DST change).
  std::int64_t t = *wall - offset_at(*wall);
  t = *wall - offset_at(t);
  return t;
}

// ---- printing in a zone ---------------------------------------------------------------------------------

TimeZone::TimeZone(std::string_view tz) {
  if (auto off = fixed_timezone_offset(tz)) {
    offset_ = *off;
  } else {
    named_ = true;
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    ::setenv("TZ", std::string(tz).c_str(), 1);
    ::tzset();
  }
}

void TimeZone::append_local(std::string& out, std::int64_t seconds) const {
  char b[19];
  out.append(b, static_cast<std::size_t>(put_local(b, seconds) - b));
}

char* TimeZone::put_local(char* out, std::int64_t seconds) const {
  unsigned year, month, day, hour, minute, second;
  if (named_) {
    std::tm tm{};
    const std::time_t t = static_cast<std::time_t>(seconds);
    ::localtime_r(&t, &tm);
    year = static_cast<unsigned>(tm.tm_year + 1900);
    month = static_cast<unsigned>(tm.tm_mon + 1);
    day = static_cast<unsigned>(tm.tm_mday);
    hour = static_cast<unsigned>(tm.tm_hour);
    minute = static_cast<unsigned>(tm.tm_min);
    second = static_cast<unsigned>(tm.tm_sec);
  } else {
    // gmtime_r's calendar (days to civil date, H. Hinnant's algorithm), without its call.
    const civil::DaySeconds t = civil::split_days(seconds + offset_);
    hour = static_cast<unsigned>(t.seconds / 3600);
    minute = static_cast<unsigned>(t.seconds / 60 % 60);
    second = static_cast<unsigned>(t.seconds % 60);
    const civil::Date date = civil::from_days(t.days);
    day = date.day;
    month = date.month;
    year = static_cast<unsigned>(date.year);
  }
  // Two digits at a time (each field's last two; the year's last four), from a table.
  auto put2 = [](char* p, unsigned v) { put_two_digits(p, v % 100); };
  std::memcpy(out, "0000-00-00 00:00:00", 19);
  put2(out, year / 100);
  put2(out + 2, year);
  put2(out + 5, month);
  put2(out + 8, day);
  put2(out + 11, hour);
  put2(out + 14, minute);
  put2(out + 17, second);
  return out + 19;
}

}  // namespace binlogctl
