#include <binlogctl/datetime.h>
#include <doctest/doctest.h>

using binlogctl::parse_datetime;

TEST_CASE("parse_datetime: dates that exist, and only those") {
  CHECK(parse_datetime("1970-01-01 00:00:00") == 0);
  CHECK(parse_datetime("2024-02-01") == 1706745600);
  CHECK(parse_datetime("2024-02-01 00:00:10") == 1706745610);
  CHECK(parse_datetime("2024-02-29 12:00:00").has_value());  // a leap year
  CHECK(parse_datetime("2000-02-29").has_value());           // divisible by 400
  CHECK(!parse_datetime("2021-02-29"));
  CHECK(!parse_datetime("2021-02-30"));
  CHECK(!parse_datetime("1900-02-29"));                      // divisible by 100 only
  CHECK(!parse_datetime("2024-04-31"));
  CHECK(parse_datetime("2024-12-31 23:59:59").has_value());
  CHECK(!parse_datetime("2024-13-01"));
  CHECK(!parse_datetime("2024-00-10"));
  CHECK(!parse_datetime("2024-01-00"));
  CHECK(!parse_datetime("2024-01-01 24:00:00"));
  CHECK(!parse_datetime("2024-01-01 23:60:00"));
  CHECK(!parse_datetime("2024-01-01 23:59:60"));
  CHECK(!parse_datetime(""));
  CHECK(!parse_datetime("yesterday"));
  CHECK(parse_datetime("2024-02-01 00:00:00", 3600) == 1706745600 - 3600);
}
