// The body of decode_column_value (column_value.h), inline: typed_value.cpp's out-of-line
// function and the JSON renderer's row loop (rows/row_image.cpp) both decode through it, so there
// is one decoder, and the loop that renders most values pays for no call per value.
//
// decode_value(col, r, v, leniency, then) returns then(v) once `v` holds the value (the errors
// before that are the decoder's own): decode_column_value passes Decoded, which returns ok; the
// JSON row loop passes its renderer, which then follows the assignment of v.kind directly, so
// the compiler can resolve the renderer's switch on the kind on each path.
#pragma once

#include "columns/column_value.h"

#include "base/civil_date.h"

#include <cstring>

namespace binlogctl::value_detail {


constexpr std::int64_t kTimefIntOfs = 0x800000;            // TIMEF_INT_OFS
constexpr std::int64_t kTimefOfs = 0x800000000000LL;       // TIMEF_OFS
constexpr std::int64_t kDatetimefIntOfs = 0x8000000000LL;  // DATETIMEF_INT_OFS
constexpr std::uint32_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
constexpr std::uint8_t kTimeHiresBytes[7] = {3, 4, 4, 5, 5, 5, 6};
constexpr std::uint8_t kDatetimeHiresBytes[7] = {5, 6, 6, 7, 7, 7, 8};
constexpr std::uint8_t kSecPartBytes[7] = {0, 1, 1, 2, 2, 3, 3};
constexpr std::int64_t kTimeMaxSecondsPlusOne = 3020400;  // 839:00:00

inline Status bad(std::uint64_t at, const char* what) { return DecodeError{Errc::bad_value, at, what}; }

inline std::uint32_t u32of(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

inline void set_timestamp(ColumnValue& v, std::uint64_t secs, std::uint32_t usec, unsigned fsp) {
  v.kind = ValueKind::timestamp;
  v.u = secs;
  v.t = TemporalParts{};
  v.t.fsp = static_cast<std::uint8_t>(fsp);
  v.t.usec = usec;
  if (secs == 0) return;  // the zero timestamp
  const auto s = static_cast<std::int64_t>(secs);
  const civil::Date date = civil::from_days(s / 86400);
  const auto rem = static_cast<std::uint64_t>(s % 86400);
  v.t.year = u32of(static_cast<std::uint64_t>(date.year));
  v.t.month = date.month;
  v.t.day = date.day;
  v.t.hour = u32of(rem / 3600);
  v.t.minute = u32of(rem / 60 % 60);
  v.t.second = u32of(rem % 60);
}

// The in-memory packed DATETIME (my_time.h) into parts.
inline void set_packed_datetime(ColumnValue& v, std::uint64_t packed, unsigned fsp) {
  const std::uint64_t ymdhms = packed >> 24, ymd = ymdhms >> 17, ym = ymd >> 5, hms = ymdhms % (1u << 17);
  v.t.year = u32of(ym / 13);
  v.t.month = u32of(ym % 13);
  v.t.day = u32of(ymd % 32);
  v.t.hour = u32of(hms >> 12);
  v.t.minute = u32of((hms >> 6) % 64);
  v.t.second = u32of(hms % 64);
  v.t.usec = u32of(packed % (1u << 24));
  v.t.fsp = static_cast<std::uint8_t>(fsp);
}

// Fraction bytes of TIMESTAMP2/DATETIME2 (signed, big-endian), scaled to microseconds.
inline std::int64_t read_fraction(ByteReader& r, unsigned fsp) {
  switch (fsp) {
    case 1:
    case 2:
      return static_cast<std::int8_t>(r.be_n(1)) * 10000LL;
    case 3:
    case 4:
      return static_cast<std::int16_t>(r.be_n(2)) * 100LL;
    case 5:
    case 6: {
      auto x = static_cast<std::int64_t>(r.be_n(3));
      return x >= 0x800000 ? x - 0x1000000 : x;
    }
    default:
      return 0;
  }
}

[[gnu::always_inline]] inline Status decode_time2(ByteReader& r, unsigned fsp, ColumnValue& v) {
  const std::uint64_t at = r.offset();
  if (fsp > 6) return bad(at, "fractional second precision over 6");
  std::int64_t packed = 0;
  if (fsp >= 5) {
    packed = static_cast<std::int64_t>(r.be_n(6)) - kTimefOfs;
  } else {
    std::int64_t intpart = static_cast<std::int64_t>(r.be_n(3)) - kTimefIntOfs;
    std::int64_t frac = 0;
    if (fsp >= 1) {
      const std::int64_t unit = fsp <= 2 ? 0x100 : 0x10000;
      frac = static_cast<std::int64_t>(r.be_n(fsp <= 2 ? 1 : 2));
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= unit;
      }
      frac *= fsp <= 2 ? 10000 : 100;
    }
    packed = intpart * (std::int64_t{1} << 24) + frac;
  }
  if (!r.ok()) return r.error();
  v.kind = ValueKind::time;
  v.t = TemporalParts{};
  v.t.negative = packed < 0;
  const auto mag = static_cast<std::uint64_t>(packed < 0 ? -packed : packed);
  if (mag % (1u << 24) > 999999) return bad(at, "TIME2 fraction out of range");
  const std::uint64_t hms = mag >> 24;
  v.t.hour = u32of((hms >> 12) % (1u << 10));
  v.t.minute = u32of((hms >> 6) % 64);
  v.t.second = u32of(hms % 64);
  v.t.usec = u32of(mag % (1u << 24));
  v.t.fsp = static_cast<std::uint8_t>(fsp);
  return {};
}

// The fraction bytes of TIMESTAMP2, unsigned, scaled to microseconds and wrapped (leniency
// kDecodeWrapTimestampFraction).
inline std::uint32_t wrapped_fraction(ByteReader& r, unsigned fsp) {
  const std::size_t n = (fsp + 1) / 2;
  const std::uint64_t f = n == 0 ? 0 : r.be_n(n);
  return u32of((n == 1 ? f * 10000 : n == 2 ? f * 100 : f) % 1000000);
}

// Inlined into decode_column_value's switch, whose case already tells `type` (one dispatch per
// value rather than two: the row loops of the renderers call this for every value).
template <class Then>
[[gnu::always_inline]] inline Status decode_temporal(ColumnType type, const ColumnInfo& col, ByteReader& r, ColumnValue& v,
                                                      unsigned leniency, Then& then) {
  const std::uint64_t at = r.offset();
  const unsigned fsp = col.meta;
  v.t = TemporalParts{};
  switch (type) {
    case ColumnType::date:
    case ColumnType::newdate: {
      const auto x = u32of(r.le_n(3));
      if (!r.ok()) return r.error();
      v.kind = ValueKind::date;
      v.t.year = x >> 9;
      v.t.month = (x >> 5) & 15;
      v.t.day = x & 31;
      return then(v);
    }
    case ColumnType::time: {
      if (fsp != 0) {  // MariaDB's pre-10.0 high-precision TIME (meta = fsp from the schema)
        if (fsp > 6) return bad(at, "fractional second precision over 6");
        const std::uint64_t stored = r.be_n(kTimeHiresBytes[fsp]);
        if (!r.ok()) return r.error();
        std::int64_t x = static_cast<std::int64_t>(stored) - kTimeMaxSecondsPlusOne * kPow10[fsp];
        v.kind = ValueKind::time;
        v.t.negative = x < 0;
        const auto mag = static_cast<std::uint64_t>(x < 0 ? -x : x);
        const std::uint64_t secs = mag / kPow10[fsp];
        v.t.hour = u32of(secs / 3600);
        v.t.minute = u32of(secs / 60 % 60);
        v.t.second = u32of(secs % 60);
        v.t.usec = u32of(mag % kPow10[fsp] * kPow10[6 - fsp]);
        v.t.fsp = static_cast<std::uint8_t>(fsp);
        return then(v);
      }
      const auto u = static_cast<std::int32_t>(r.le_n(3));
      if (!r.ok()) return r.error();
      std::int32_t x = u >= 0x800000 ? u - 0x1000000 : u;
      v.kind = ValueKind::time;
      v.t.negative = x < 0;
      const auto a = static_cast<std::uint32_t>(x < 0 ? -x : x);
      v.t.hour = a / 10000;
      v.t.minute = a / 100 % 100;
      v.t.second = a % 100;
      return then(v);
    }
    case ColumnType::time2:
    {
      const Status st = decode_time2(r, fsp, v);
      if (!st.ok()) return st;
      return then(v);
    }
    case ColumnType::datetime: {
      v.kind = ValueKind::datetime;
      if (fsp != 0) {
        if (fsp > 6) return bad(at, "fractional second precision over 6");
        std::uint64_t x = r.be_n(kDatetimeHiresBytes[fsp]);
        if (!r.ok()) return r.error();
        v.t.usec = u32of(x % kPow10[fsp] * kPow10[6 - fsp]);
        x /= kPow10[fsp];
        v.t.second = u32of(x % 60);
        v.t.minute = u32of(x / 60 % 60);
        v.t.hour = u32of(x / 3600 % 24);
        x /= 86400;
        v.t.day = u32of(x % 32);
        v.t.month = u32of(x / 32 % 13);
        v.t.year = u32of(x / 32 / 13);
        v.t.fsp = static_cast<std::uint8_t>(fsp);
        return then(v);
      }
      const std::uint64_t x = r.u64();
      if (!r.ok()) return r.error();
      const std::uint64_t date = x / 1000000, time = x % 1000000;
      v.t.year = u32of(date / 10000);
      v.t.month = u32of(date / 100 % 100);
      v.t.day = u32of(date % 100);
      v.t.hour = u32of(time / 10000);
      v.t.minute = u32of(time / 100 % 100);
      v.t.second = u32of(time % 100);
      return then(v);
    }
    case ColumnType::datetime2: {
      if (fsp > 6) return bad(at, "fractional second precision over 6");
      const std::int64_t intpart = static_cast<std::int64_t>(r.be_n(5)) - kDatetimefIntOfs;
      const std::int64_t frac = read_fraction(r, fsp);
      if (!r.ok()) return r.error();
      // A negative integer part is a negative value whatever the fraction (< 2^24), and it is
      // tested before the sum: -2^39 (five zero bytes) times 2^24 is INT64_MIN already.
      if (intpart < 0 || frac < 0 || frac > 999999) return bad(at, "DATETIME2 value out of range");
      const std::int64_t packed = intpart * (std::int64_t{1} << 24) + frac;
      v.kind = ValueKind::datetime;
      set_packed_datetime(v, static_cast<std::uint64_t>(packed), fsp);
      return then(v);
    }
    case ColumnType::timestamp: {
      if (fsp != 0) {
        if (fsp > 6) return bad(at, "fractional second precision over 6");
        const std::uint64_t secs = r.be_n(4);
        const std::uint64_t frac = r.be_n(kSecPartBytes[fsp]);
        if (!r.ok()) return r.error();
        if (frac >= kPow10[fsp]) {
          if ((leniency & kDecodeWrapTimestampFraction) == 0) return bad(at, "TIMESTAMP fraction out of range");
          set_timestamp(v, secs, u32of(frac * kPow10[6 - fsp] % 1000000), fsp);
          return then(v);
        }
        set_timestamp(v, secs, u32of(frac * kPow10[6 - fsp]), fsp);
        return then(v);
      }
      const std::uint64_t secs = r.le_n(4);
      if (!r.ok()) return r.error();
      set_timestamp(v, secs, 0, 0);
      return then(v);
    }
    case ColumnType::timestamp2: {
      if (fsp > 6) return bad(at, "fractional second precision over 6");
      const std::uint64_t secs = r.be_n(4);
      if ((leniency & kDecodeWrapTimestampFraction) != 0) {
        const std::uint32_t usec = wrapped_fraction(r, fsp);
        if (!r.ok()) return r.error();
        set_timestamp(v, secs, usec, fsp);
        return then(v);
      }
      const std::int64_t usec = read_fraction(r, fsp);
      if (!r.ok()) return r.error();
      if (usec < 0 || usec > 999999) return bad(at, "TIMESTAMP fraction out of range");
      set_timestamp(v, secs, u32of(static_cast<std::uint64_t>(usec)), fsp);
      return then(v);
    }
    default:
      return bad(at, "not a temporal column type");
  }
}

// An n-byte little-endian length, then that many bytes, bounds-checked before anything is read.
inline Bytes read_prefixed(ByteReader& r, std::size_t prefix) {
  const std::uint64_t len = r.le_n(prefix);
  if (!r.ok()) return {};
  if (len > r.remaining()) {
    r.fail(Errc::truncated, "column value runs past the end of the row");
    return {};
  }
  return r.bytes(static_cast<std::size_t>(len));
}

[[gnu::always_inline]] inline Status decode_enum_set(ColumnType real, std::size_t size, ByteReader& r, ColumnValue& v, unsigned leniency) {
  const std::uint64_t at = r.offset();
  if (real == ColumnType::enum_) {
    const std::size_t max = (leniency & kDecodeWideEnum) != 0 ? 8 : 2;
    if (size < 1 || size > max) return bad(at, max == 2 ? "ENUM size not 1 or 2" : "ENUM size not in 1..8");
    v.kind = ValueKind::enum_index;
  } else {
    if (size < 1 || size > 8) return bad(at, "SET size not in 1..8");
    v.kind = ValueKind::set_bits;
  }
  v.u = r.le_n(size);
  return r.ok() ? Status{} : Status{r.error()};
}

[[gnu::always_inline]] inline void set_string(const ColumnInfo& col, Bytes data, std::uint64_t at, std::uint16_t pad, ColumnValue& v) {
  v.bytes = data;
  v.offset = at;
  switch (col.hint) {
    case ValueHint::uuid:
      v.kind = ValueKind::uuid;
      return;
    case ValueHint::inet4:
      v.kind = ValueKind::inet4;
      return;
    case ValueHint::inet6:
      v.kind = ValueKind::inet6;
      return;
    case ValueHint::none:
      break;
  }
  if (is_binary_collation(col.charset)) {
    v.kind = ValueKind::binary;
    v.pad_to = pad;
  } else {
    v.kind = ValueKind::text;
    v.charset = col.charset;
  }
}

// Inlined as decode_temporal is.
template <class Then>
[[gnu::always_inline]] inline Status decode_string_family(ColumnType type, const ColumnInfo& col, ByteReader& r,
                                                           ColumnValue& v, unsigned leniency, Then& then) {
  const std::uint64_t at = r.offset();
  switch (type) {
    case ColumnType::enum_:
    case ColumnType::set:
    {
      const Status st = decode_enum_set(col.type, col.meta & 0xff, r, v, leniency);
      if (!st.ok()) return st;
      return then(v);
    }
    case ColumnType::string: {
      const StringMeta sm = unpack_string_meta(col.meta);
      if (sm.real_type == ColumnType::enum_ || sm.real_type == ColumnType::set)
      {
        const Status st = decode_enum_set(sm.real_type, col.meta & 0xff, r, v, leniency);
        if (!st.ok()) return st;
        return then(v);
      }
      Bytes data = read_prefixed(r, sm.length > 255 ? 2 : 1);
      if (!r.ok()) return r.error();
      set_string(col, data, r.offset() - data.size(), sm.length, v);
      return then(v);
    }
    case ColumnType::varchar:
    case ColumnType::var_string: {
      Bytes data = read_prefixed(r, col.meta > 255 ? 2 : 1);
      if (!r.ok()) return r.error();
      set_string(col, data, r.offset() - data.size(), 0, v);
      return then(v);
    }
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector: {
      if (col.meta < 1 || col.meta > 4) return bad(at, "BLOB length prefix size not in 1..4");
      Bytes data = read_prefixed(r, col.meta);
      if (!r.ok()) return r.error();
      const std::uint64_t data_at = r.offset() - data.size();
      if (col.type == ColumnType::json) {
        v.kind = ValueKind::json;
        v.bytes = data;
        v.offset = data_at;
      } else if (col.type == ColumnType::vector) {
        if (data.size() % 4 != 0) return DecodeError{Errc::bad_length, data_at, "VECTOR length not a multiple of 4"};
        v.kind = ValueKind::vector;
        v.bytes = data;
        v.offset = data_at;
      } else if (col.type == ColumnType::geometry) {
        v.kind = ValueKind::geometry;
        v.bytes = data;
        v.offset = data_at;
      } else {
        set_string(col, data, data_at, 0, v);
      }
      return then(v);
    }
    default:
      return bad(at, "not a string column type");
  }
}

template <class Then>
[[gnu::always_inline]] inline Status decode_value(const ColumnInfo& col, ByteReader& r, ColumnValue& v, unsigned leniency,
                                                   Then&& then) {
  const ColumnType type = col.type;
  // v.offset and v.bytes are set by the kinds that render them (decode_column_value sets both
  // first for every kind); a renderer of the other kinds needs neither.
  const std::uint64_t at = r.offset();
  auto integer = [&](std::size_t n) __attribute__((always_inline)) -> Status {
    const std::uint64_t x = r.le_n(n);
    if (!r.ok()) return r.error();
    if (col.is_unsigned) {
      v.kind = ValueKind::unsigned_int;
      v.u = x;
      return then(v);
    }
    const unsigned shift = static_cast<unsigned>(64 - 8 * n);  // sign-extend n bytes
    v.kind = ValueKind::signed_int;
    v.i = static_cast<std::int64_t>(x << shift) >> shift;
    return then(v);
  };
  switch (type) {
    case ColumnType::tiny:
      return integer(1);
    case ColumnType::short_:
      return integer(2);
    case ColumnType::int24:
      return integer(3);
    case ColumnType::long_:
      return integer(4);
    case ColumnType::longlong:
      return integer(8);
    case ColumnType::float_: {
      const std::uint32_t x = r.u32();
      if (!r.ok()) return r.error();
      v.kind = ValueKind::float32;
      std::memcpy(&v.f, &x, sizeof v.f);
      return then(v);
    }
    case ColumnType::double_: {
      const std::uint64_t x = r.u64();
      if (!r.ok()) return r.error();
      v.kind = ValueKind::float64;
      std::memcpy(&v.d, &x, sizeof v.d);
      return then(v);
    }
    case ColumnType::year: {
      const std::uint8_t y = r.u8();
      if (!r.ok()) return r.error();
      v.kind = ValueKind::year;
      v.u = y == 0 ? 0u : 1900u + y;
      return then(v);
    }
    case ColumnType::bit: {
      const std::size_t bits = col.meta & 0xff, bytes = col.meta >> 8;
      const std::size_t n = bytes + (bits ? 1 : 0);
      if (bits > 7 || n > 8 || n == 0) return bad(at, "BIT metadata out of range");
      v.u = r.be_n(n);
      if (!r.ok()) return r.error();
      v.kind = ValueKind::bit;
      v.bits = static_cast<std::uint8_t>(bytes * 8 + bits);
      return then(v);
    }
    case ColumnType::null:
      v.kind = ValueKind::null;
      return then(v);
    case ColumnType::newdecimal: {
      const int precision = col.meta >> 8, scale = col.meta & 0xff;
      const std::size_t size = decimal_binary_size(precision, scale);
      if (size == 0) return bad(at, "impossible DECIMAL precision/scale");
      v.bytes = r.bytes(size);
      if (!r.ok()) return r.error();
      v.kind = ValueKind::decimal;
      v.offset = at;
      v.precision = static_cast<std::uint8_t>(precision);
      v.scale = static_cast<std::uint8_t>(scale);
      return then(v);
    }
    case ColumnType::decimal: {
      if (col.meta == 0) return bad(at, "old DECIMAL column without a known size");
      Bytes b = r.bytes(col.meta);
      if (!r.ok()) return r.error();
      while (!b.empty() && b.front() == ' ') b = b.subspan(1);
      v.kind = ValueKind::decimal_text;
      v.offset = at;
      v.bytes = b;
      return then(v);
    }
    case ColumnType::date:
    case ColumnType::newdate:
    case ColumnType::time:
    case ColumnType::time2:
    case ColumnType::datetime:
    case ColumnType::datetime2:
    case ColumnType::timestamp:
    case ColumnType::timestamp2:
      return decode_temporal(type, col, r, v, leniency, then);
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::string:
    case ColumnType::enum_:
    case ColumnType::set:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector:
      return decode_string_family(type, col, r, v, leniency, then);
    case ColumnType::typed_array:
    case ColumnType::invalid:
    case ColumnType::bool_:
      break;
  }
  return bad(at, "column type that cannot be decoded from a row event");
}


// The value alone (decode_column_value).
struct Decoded {
  Status operator()(const ColumnValue&) const noexcept { return {}; }
};

}  // namespace binlogctl::value_detail
