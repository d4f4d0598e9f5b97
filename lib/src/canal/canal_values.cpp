// Canal's value rendering and sqlType of one column value (design/canal.md §4-5), and the small
// text helpers the mapper shares.
#include "canal_internal.h"

#include <binlogctl/canal.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>

namespace binlogctl::canal_detail {

namespace {

std::uint64_t le(Bytes b, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n && i < b.size(); ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  return v;
}
std::uint64_t be(Bytes b, std::size_t from, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = from; i < from + n && i < b.size(); ++i) v = (v << 8) | b[i];
  return v;
}

// Double.toString's layout of the value d1.d2d3... x 10^sci_exp (`digits` = d1d2d3..., the
// shortest round-trip digits, no trailing zeros): plain decimal with at least one fraction digit
// for 10^-3 <= |v| < 10^7, else "d1.d2d3...E<exp>" (at least one digit after the point).
std::string java_format(bool neg, const std::string& digits, int sci_exp) {
  std::string s = neg ? "-" : "";
  if (sci_exp >= -3 && sci_exp < 7) {
    if (sci_exp < 0) {
      s += "0.";
      s.append(static_cast<std::size_t>(-sci_exp - 1), '0');
      s += digits;
    } else {
      const std::size_t int_len = static_cast<std::size_t>(sci_exp) + 1;
      if (digits.size() <= int_len) {
        s += digits;
        s.append(int_len - digits.size(), '0');
        s += ".0";
      } else {
        s += digits.substr(0, int_len);
        s += '.';
        s += digits.substr(int_len);
      }
    }
    return s;
  }
  s += digits[0];
  s += '.';
  s += digits.size() > 1 ? digits.substr(1) : std::string("0");
  s += 'E';
  s += std::to_string(sci_exp);
  return s;
}

template <typename F>
std::string java_fp(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view t(buf, static_cast<std::size_t>(r.ptr - buf));
  bool neg = false;
  if (!t.empty() && t[0] == '-') {
    neg = true;
    t.remove_prefix(1);
  }
  const std::size_t e = t.find('e');
  std::string digits;
  for (char c : t.substr(0, e))
    if (c != '.') digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exp = std::atoi(std::string(t.substr(e + 1)).c_str());
  return java_format(neg, digits, exp);
}

void latin1_to_utf8(std::string& out, Bytes b) {
  for (std::uint8_t c : b) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
}

// A JSON string or number rendered by append_value_json, as plain text.
std::string json_to_text(const std::string& j) {
  auto v = nlohmann::json::parse(j, nullptr, false);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_discarded()) return j;
  return v.dump();
}

void append_2(std::string& s, unsigned v) {
  s.push_back(static_cast<char>('0' + v / 10 % 10));
  s.push_back(static_cast<char>('0' + v % 10));
}

}  // namespace

// ---- time zone ---------------------------------------------------------------------------------

std::optional<std::int32_t> fixed_offset(std::string_view tz) {
  if (tz == "UTC" || tz == "utc" || tz == "Z" || tz == "GMT") return 0;
  if (tz.size() == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':') {
    auto d = [&](std::size_t i) { return tz[i] >= '0' && tz[i] <= '9'; };
    if (!d(1) || !d(2) || !d(4) || !d(5)) return std::nullopt;
    const int h = (tz[1] - '0') * 10 + (tz[2] - '0'), m = (tz[4] - '0') * 10 + (tz[5] - '0');
    if (h > 14 || m > 59) return std::nullopt;
    const int s = (h * 3600 + m * 60) * (tz[0] == '-' ? -1 : 1);
    return s;
  }
  return std::nullopt;
}

static bool zone_file_exists(std::string_view tz) {
  if (tz.empty() || tz.find("..") != std::string_view::npos || tz[0] == '/') return false;
  const char* dir = std::getenv("TZDIR");
  std::filesystem::path p = std::filesystem::path(dir != nullptr && *dir != 0 ? dir : "/usr/share/zoneinfo") / std::string(tz);
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

TimeZone::TimeZone(std::string_view tz) {
  if (auto off = fixed_offset(tz)) {
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
  std::tm tm{};
  if (named_) {
    const std::time_t t = static_cast<std::time_t>(seconds);
    ::localtime_r(&t, &tm);
  } else {
    const std::time_t t = static_cast<std::time_t>(seconds + offset_);
    ::gmtime_r(&t, &tm);
  }
  const unsigned y = static_cast<unsigned>(tm.tm_year + 1900);
  append_2(out, y / 100);
  append_2(out, y % 100);
  out.push_back('-');
  append_2(out, static_cast<unsigned>(tm.tm_mon + 1));
  out.push_back('-');
  append_2(out, static_cast<unsigned>(tm.tm_mday));
  out.push_back(' ');
  append_2(out, static_cast<unsigned>(tm.tm_hour));
  out.push_back(':');
  append_2(out, static_cast<unsigned>(tm.tm_min));
  out.push_back(':');
  append_2(out, static_cast<unsigned>(tm.tm_sec));
}

// ---- sqlType and values ------------------------------------------------------------------------

namespace types {
constexpr int BIT = -7, TINYINT = -6, SMALLINT = 5, INTEGER = 4, BIGINT = -5, REAL = 7, DOUBLE = 8, DECIMAL = 3,
              CHAR = 1, VARCHAR = 12, DATE = 91, TIME = 92, TIMESTAMP = 93, BLOB = 2004, CLOB = 2005, OTHER = 1111;
}

static bool blob_family(ColumnType t) {
  return t == ColumnType::tiny_blob || t == ColumnType::medium_blob || t == ColumnType::long_blob ||
         t == ColumnType::blob;
}

int null_sql_type(const ColumnDef& c) {
  using namespace types;
  switch (c.real_type == ColumnType::null ? c.type : c.real_type) {
    case ColumnType::tiny: return TINYINT;
    case ColumnType::short_: return SMALLINT;
    case ColumnType::int24:
    case ColumnType::long_: return INTEGER;
    case ColumnType::longlong: return BIGINT;
    case ColumnType::decimal:
    case ColumnType::newdecimal: return DECIMAL;
    case ColumnType::float_: return REAL;
    case ColumnType::double_: return DOUBLE;
    case ColumnType::bit: return BIT;
    case ColumnType::timestamp:
    case ColumnType::timestamp2:
    case ColumnType::datetime:
    case ColumnType::datetime2: return TIMESTAMP;
    case ColumnType::time:
    case ColumnType::time2: return TIME;
    case ColumnType::date:
    case ColumnType::newdate: return DATE;
    case ColumnType::year: return VARCHAR;
    case ColumnType::enum_: return INTEGER;
    case ColumnType::set: return BLOB;  // BINARY, then the BLOB rewrite
    case ColumnType::varchar:
    case ColumnType::var_string: return c.charset == 63 ? BLOB : VARCHAR;
    case ColumnType::string: return c.charset == 63 ? BLOB : CHAR;
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob: return c.charset != 0 && c.charset != 63 ? CLOB : BLOB;
    case ColumnType::json: return VARCHAR;
    case ColumnType::geometry: return BLOB;
    default: return OTHER;
  }
}

Status render_value(const ColumnDef& c, const ColumnInfo& info, Bytes raw, std::uint64_t offset, const TimeZone& tz,
                    CanalValue& v) {
  using namespace types;
  v.is_null = false;
  v.value.clear();
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  auto sign_ext = [](std::uint64_t x, unsigned bits) {
    const std::uint64_t m = 1ull << (bits - 1);
    return static_cast<std::int64_t>((x ^ m) - m);
  };
  auto integer = [&](unsigned bytes, int base, int bumped) {
    const std::int64_t s = sign_ext(le(raw, bytes), bytes * 8);
    if (c.is_unsigned && s < 0) {
      v.value = std::to_string(le(raw, bytes));
      v.sql_type = bumped;
    } else {
      v.value = std::to_string(s);
      v.sql_type = base;
    }
  };
  switch (t) {
    case ColumnType::tiny: integer(1, TINYINT, SMALLINT); return {};
    case ColumnType::short_: integer(2, SMALLINT, INTEGER); return {};
    case ColumnType::int24: integer(3, INTEGER, INTEGER); return {};
    case ColumnType::long_: integer(4, INTEGER, BIGINT); return {};
    case ColumnType::longlong: integer(8, BIGINT, DECIMAL); return {};
    case ColumnType::float_: {
      const auto bits = static_cast<std::uint32_t>(le(raw, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      v.value = java_float_string(f);
      v.sql_type = REAL;
      return {};
    }
    case ColumnType::double_: {
      const std::uint64_t bits = le(raw, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      v.value = java_double_string(d);
      v.sql_type = DOUBLE;
      return {};
    }
    case ColumnType::year: {
      const unsigned y = raw.empty() ? 0 : raw[0];
      v.value = y == 0 ? "0000" : std::to_string(1900 + y);
      v.sql_type = VARCHAR;
      return {};
    }
    case ColumnType::enum_:
      v.value = std::to_string(le(raw, raw.size()));
      v.sql_type = INTEGER;
      return {};
    case ColumnType::set:
      v.value = std::to_string(le(raw, raw.size()));
      v.sql_type = BIT;
      return {};
    case ColumnType::timestamp:
    case ColumnType::timestamp2: {
      const bool v2 = t == ColumnType::timestamp2;
      const std::uint64_t sec = v2 ? be(raw, 0, 4) : le(raw, 4);
      if (sec == 0) v.value = "0000-00-00 00:00:00";
      else tz.append_local(v.value, static_cast<std::int64_t>(sec));
      const unsigned fsp = v2 ? c.meta : 0;
      if (fsp >= 1 && fsp <= 6) {
        const std::size_t n = (fsp + 1) / 2;
        std::uint64_t frac = be(raw, 4, n);
        const std::uint64_t usec = n == 1 ? frac * 10000 : n == 2 ? frac * 100 : frac;
        char buf[8];
        std::snprintf(buf, sizeof buf, "%06u", static_cast<unsigned>(usec % 1000000));
        v.value.push_back('.');
        v.value.append(buf, fsp);
      }
      v.sql_type = TIMESTAMP;
      return {};
    }
    case ColumnType::string:
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry: {
      // Skip the length prefix.
      std::size_t prefix = 0;
      if (t == ColumnType::string) prefix = unpack_string_meta(c.meta).length > 255 ? 2 : 1;
      else if (t == ColumnType::varchar || t == ColumnType::var_string) prefix = c.meta > 255 ? 2 : 1;
      else prefix = c.meta;
      const Bytes data = raw.size() >= prefix ? raw.subspan(prefix) : Bytes{};
      const bool binary = t == ColumnType::geometry || c.charset == 63 || (blob_family(t) && c.charset == 0);
      if (binary) {
        latin1_to_utf8(v.value, data);
        v.sql_type = BLOB;
      } else {
        std::string j;
        append_text_json(j, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()), c.charset);
        v.value = json_to_text(j);
        v.sql_type = blob_family(t) ? CLOB : t == ColumnType::string ? CHAR : VARCHAR;
      }
      return {};
    }
    case ColumnType::json: {
      const std::uint64_t len = le(raw, c.meta);
      v.sql_type = VARCHAR;
      if (len == 0) return {};
      Status st = append_json_binary(v.value, raw.subspan(c.meta), offset + c.meta);
      return st;
    }
    case ColumnType::decimal:
    case ColumnType::newdecimal:
    case ColumnType::bit:
    case ColumnType::date:
    case ColumnType::newdate:
    case ColumnType::time:
    case ColumnType::time2:
    case ColumnType::datetime:
    case ColumnType::datetime2: {
      std::string j;
      ByteReader r(raw, offset);
      Status st = append_value_json(info, r, j, {});
      if (!st.ok()) return st;
      v.value = json_to_text(j);
      v.sql_type = (t == ColumnType::decimal || t == ColumnType::newdecimal) ? DECIMAL
                   : t == ColumnType::bit                                     ? BIT
                   : (t == ColumnType::date || t == ColumnType::newdate)      ? DATE
                   : (t == ColumnType::time || t == ColumnType::time2)        ? TIME
                                                                              : TIMESTAMP;
      return {};
    }
    default:
      v.is_null = true;  // Canal: unknown type, value null
      v.sql_type = OTHER;
      return {};
  }
}

// ---- mysqlType text ----------------------------------------------------------------------------

static unsigned charset_maxlen(std::uint16_t collation) {
  const std::string_view cs = collation_charset_name(collation);
  if (cs == "utf8mb4" || cs == "utf16" || cs == "utf16le" || cs == "utf32" || cs == "gb18030") return 4;
  if (cs == "utf8mb3" || cs == "utf8" || cs == "ujis" || cs == "eucjpms") return 3;
  if (cs == "gbk" || cs == "gb2312" || cs == "big5" || cs == "sjis" || cs == "cp932" || cs == "euckr" || cs == "ucs2")
    return 2;
  return 1;
}

std::string mysql_type_text(const ColumnDef& c, bool display_widths) {
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  std::string s;
  auto intw = [&](const char* name, int w_signed, int w_unsigned) {
    s = name;
    if (display_widths) s += "(" + std::to_string(c.is_unsigned ? w_unsigned : w_signed) + ")";
    if (c.is_unsigned) s += " unsigned";
  };
  auto list = [&](const char* name) {
    s = name;
    if (c.values.empty()) return;
    s += '(';
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      if (i > 0) s += ',';
      s += '\'';
      for (char ch : c.values[i]) {
        if (ch == '\'') s += '\'';
        s += ch;
      }
      s += '\'';
    }
    s += ')';
  };
  auto fsp = [&](const char* name) {
    s = name;
    if (c.meta > 0 && c.meta <= 6) s += "(" + std::to_string(c.meta) + ")";
  };
  const bool bin = c.charset == 63;
  switch (t) {
    case ColumnType::tiny: intw("tinyint", 4, 3); break;
    case ColumnType::short_: intw("smallint", 6, 5); break;
    case ColumnType::int24: intw("mediumint", 9, 8); break;
    case ColumnType::long_: intw("int", 11, 10); break;
    case ColumnType::longlong: intw("bigint", 20, 20); break;
    case ColumnType::newdecimal:
      s = "decimal(" + std::to_string(c.meta >> 8) + "," + std::to_string(c.meta & 0xff) + ")";
      if (c.is_unsigned) s += " unsigned";
      break;
    case ColumnType::decimal: s = "decimal"; break;
    case ColumnType::float_: s = c.is_unsigned ? "float unsigned" : "float"; break;
    case ColumnType::double_: s = c.is_unsigned ? "double unsigned" : "double"; break;
    case ColumnType::bit: s = "bit(" + std::to_string((c.meta >> 8) * 8 + (c.meta & 0xff)) + ")"; break;
    case ColumnType::timestamp: s = "timestamp"; break;
    case ColumnType::timestamp2: fsp("timestamp"); break;
    case ColumnType::datetime: s = "datetime"; break;
    case ColumnType::datetime2: fsp("datetime"); break;
    case ColumnType::time: s = "time"; break;
    case ColumnType::time2: fsp("time"); break;
    case ColumnType::date:
    case ColumnType::newdate: s = "date"; break;
    case ColumnType::year: s = display_widths ? "year(4)" : "year"; break;
    case ColumnType::enum_: list("enum"); break;
    case ColumnType::set: list("set"); break;
    case ColumnType::string: {
      const unsigned len = unpack_string_meta(c.meta).length;
      s = (bin ? "binary(" : "char(") + std::to_string(bin ? len : len / charset_maxlen(c.charset)) + ")";
      break;
    }
    case ColumnType::varchar:
    case ColumnType::var_string:
      s = (bin ? "varbinary(" : "varchar(") + std::to_string(bin ? c.meta : c.meta / charset_maxlen(c.charset)) + ")";
      break;
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob: {
      static const char* const blobs[] = {"blob", "tinyblob", "blob", "mediumblob", "longblob"};
      static const char* const texts[] = {"text", "tinytext", "text", "mediumtext", "longtext"};
      const std::size_t i = c.meta <= 4 ? c.meta : 0;
      s = c.charset != 0 && c.charset != 63 ? texts[i] : blobs[i];
      break;
    }
    case ColumnType::json: s = "json"; break;
    case ColumnType::geometry: s = "geometry"; break;
    case ColumnType::vector: s = "vector(" + std::to_string(c.meta / 4) + ")"; break;
    default: s = column_type_name(t); break;
  }
  return s;
}

}  // namespace binlogctl::canal_detail

namespace binlogctl {

std::string java_double_string(double v) { return canal_detail::java_fp(v); }
std::string java_float_string(float v) { return canal_detail::java_fp(v); }

bool canal_timezone_valid(std::string_view tz) {
  return canal_detail::fixed_offset(tz).has_value() || canal_detail::zone_file_exists(tz);
}

}  // namespace binlogctl
