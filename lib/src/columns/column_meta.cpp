// Column type names, TABLE_MAP metadata and value sizes (calc_field_size with bounds checks).
#include <binlogctl/columns.h>

namespace binlogctl {

const char* column_type_name(ColumnType t) noexcept {
  switch (t) {
    case ColumnType::decimal:
      return "DECIMAL";
    case ColumnType::tiny:
      return "TINY";
    case ColumnType::short_:
      return "SHORT";
    case ColumnType::long_:
      return "LONG";
    case ColumnType::float_:
      return "FLOAT";
    case ColumnType::double_:
      return "DOUBLE";
    case ColumnType::null:
      return "NULL";
    case ColumnType::timestamp:
      return "TIMESTAMP";
    case ColumnType::longlong:
      return "LONGLONG";
    case ColumnType::int24:
      return "INT24";
    case ColumnType::date:
      return "DATE";
    case ColumnType::time:
      return "TIME";
    case ColumnType::datetime:
      return "DATETIME";
    case ColumnType::year:
      return "YEAR";
    case ColumnType::newdate:
      return "NEWDATE";
    case ColumnType::varchar:
      return "VARCHAR";
    case ColumnType::bit:
      return "BIT";
    case ColumnType::timestamp2:
      return "TIMESTAMP2";
    case ColumnType::datetime2:
      return "DATETIME2";
    case ColumnType::time2:
      return "TIME2";
    case ColumnType::typed_array:
      return "TYPED_ARRAY";
    case ColumnType::vector:
      return "VECTOR";
    case ColumnType::invalid:
      return "INVALID";
    case ColumnType::bool_:
      return "BOOL";
    case ColumnType::json:
      return "JSON";
    case ColumnType::newdecimal:
      return "NEWDECIMAL";
    case ColumnType::enum_:
      return "ENUM";
    case ColumnType::set:
      return "SET";
    case ColumnType::tiny_blob:
      return "TINY_BLOB";
    case ColumnType::medium_blob:
      return "MEDIUM_BLOB";
    case ColumnType::long_blob:
      return "LONG_BLOB";
    case ColumnType::blob:
      return "BLOB";
    case ColumnType::var_string:
      return "VAR_STRING";
    case ColumnType::string:
      return "STRING";
    case ColumnType::geometry:
      return "GEOMETRY";
  }
  return "UNKNOWN";
}

int column_meta_size(ColumnType t) noexcept {
  switch (t) {
    case ColumnType::decimal:  // Field_decimal saves no metadata
    case ColumnType::tiny:
    case ColumnType::short_:
    case ColumnType::long_:
    case ColumnType::null:
    case ColumnType::timestamp:
    case ColumnType::longlong:
    case ColumnType::int24:
    case ColumnType::date:
    case ColumnType::time:
    case ColumnType::datetime:
    case ColumnType::year:
    case ColumnType::newdate:
    case ColumnType::bool_:
    case ColumnType::invalid:
      return 0;
    case ColumnType::float_:
    case ColumnType::double_:
    case ColumnType::timestamp2:
    case ColumnType::datetime2:
    case ColumnType::time2:
    case ColumnType::vector:
    case ColumnType::json:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
      return 1;
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::bit:
    case ColumnType::newdecimal:
    case ColumnType::enum_:
    case ColumnType::set:
    case ColumnType::string:
      return 2;
    case ColumnType::typed_array:  // element type byte + the element's metadata: variable
      return -1;
  }
  return -1;
}

std::uint16_t read_column_meta(ColumnType t, ByteReader& r) noexcept {
  switch (t) {
    case ColumnType::varchar:
    case ColumnType::var_string:
    case ColumnType::bit:  // bits % 8 first (low byte), then bytes (high byte)
      return r.u16();
    case ColumnType::newdecimal:
    case ColumnType::enum_:
    case ColumnType::set:
    case ColumnType::string:  // first byte is the high byte
      return static_cast<std::uint16_t>(r.be_n(2));
    default:
      break;
  }
  int n = column_meta_size(t);
  if (n == 1) return r.u8();
  if (n < 0) r.fail(Errc::bad_value, "column type with unknown metadata size in TABLE_MAP");
  return 0;
}

namespace {

constexpr std::size_t fsp_bytes(std::uint16_t fsp) { return (fsp + 1u) / 2u; }

// Peeks an n-byte little-endian length prefix and checks that its data is there.
Result<std::size_t> prefixed_size(ByteReader r, std::size_t prefix) {  // r: a copy, peeked
  std::uint64_t len = r.le_n(prefix);
  if (!r.ok()) return r.error();
  if (len > r.remaining())
    return DecodeError{Errc::truncated, r.offset(), "column value runs past the end of the row"};
  return static_cast<std::size_t>(prefix + len);
}

}  // namespace

Result<std::size_t> column_value_size(ColumnType t, std::uint16_t meta, const ByteReader& at_value) noexcept {
  const std::uint64_t at = at_value.offset();
  std::size_t n = 0;
  switch (t) {
    case ColumnType::null:
      return std::size_t{0};
    case ColumnType::tiny:
    case ColumnType::year:
      n = 1;
      break;
    case ColumnType::short_:
      n = 2;
      break;
    case ColumnType::int24:
    case ColumnType::date:
    case ColumnType::newdate:
      n = 3;
      break;
    case ColumnType::long_:
    case ColumnType::float_:
      n = 4;
      break;
    case ColumnType::longlong:
    case ColumnType::double_:
      n = 8;
      break;
    case ColumnType::time:  // meta = fsp: MariaDB's pre-10.0 high-precision forms (columns.h)
    case ColumnType::timestamp:
    case ColumnType::datetime:
      if (meta == 0) {
        n = t == ColumnType::time ? 3 : t == ColumnType::timestamp ? 4 : 8;
      } else {
        n = legacy_hires_size(t, meta);
        if (n == 0) return DecodeError{Errc::bad_value, at, "fractional second precision over 6"};
      }
      break;
    case ColumnType::decimal:  // pre-5.0 DECIMAL: the size is the metadata when there is any
      if (meta == 0)
        return DecodeError{Errc::bad_value, at, "old DECIMAL column without a known size"};
      n = meta;
      break;
    case ColumnType::newdecimal:
      n = decimal_binary_size(meta >> 8, meta & 0xff);
      if (n == 0) return DecodeError{Errc::bad_value, at, "impossible DECIMAL precision/scale"};
      break;
    case ColumnType::time2:
    case ColumnType::datetime2:
    case ColumnType::timestamp2:
      if (meta > 6) return DecodeError{Errc::bad_value, at, "fractional second precision over 6"};
      n = (t == ColumnType::time2 ? 3 : t == ColumnType::datetime2 ? 5 : 4) + fsp_bytes(meta);
      break;
    case ColumnType::bit: {
      std::size_t bits = meta & 0xff, bytes = meta >> 8;
      if (bits > 7) return DecodeError{Errc::bad_value, at, "BIT metadata with more than 7 bits"};
      n = bytes + (bits ? 1 : 0);
      break;
    }
    case ColumnType::varchar:
    case ColumnType::var_string:
      return prefixed_size(at_value, meta > 255 ? 2 : 1);
    case ColumnType::enum_:
    case ColumnType::set:
    case ColumnType::string: {
      StringMeta sm = unpack_string_meta(meta);
      if (sm.real_type == ColumnType::enum_ || sm.real_type == ColumnType::set ||
          t != ColumnType::string) {
        n = meta & 0xff;
        if (n == 0 || n > 8) return DecodeError{Errc::bad_value, at, "ENUM/SET size not in 1..8"};
        break;
      }
      return prefixed_size(at_value, sm.length > 255 ? 2 : 1);
    }
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector:
      if (meta < 1 || meta > 4)
        return DecodeError{Errc::bad_value, at, "BLOB length prefix size not in 1..4"};
      return prefixed_size(at_value, meta);
    case ColumnType::typed_array:
    case ColumnType::invalid:
    case ColumnType::bool_:
      return DecodeError{Errc::bad_value, at, "column type never stored in row events"};
  }
  if (t > ColumnType::typed_array && t < ColumnType::vector)
    return DecodeError{Errc::bad_value, at, "unknown column type"};
  if (n > at_value.remaining())
    return DecodeError{Errc::truncated, at, "column value runs past the end of the row"};
  return n;
}

ValueSizeRule value_size_rule(ColumnType t, std::uint16_t meta) noexcept {
  // column_value_size over a value whose first bytes say 0 and then over one whose first byte
  // says 5: a fixed size is the same both times, a length prefix adds the 5.
  static constexpr std::uint8_t kZero[16] = {};
  static constexpr std::uint8_t kFive[16] = {5};
  auto n0 = column_value_size(t, meta, ByteReader(Bytes(kZero, sizeof kZero), 0));
  auto n5 = column_value_size(t, meta, ByteReader(Bytes(kFive, sizeof kFive), 0));
  if (!n0 || !n5) return {};
  if (*n0 == *n5) return *n0 > 0 && *n0 < sizeof kZero ? ValueSizeRule{static_cast<std::uint32_t>(*n0), 0} : ValueSizeRule{};
  if (*n5 == *n0 + 5 && *n0 >= 1 && *n0 <= 4) return ValueSizeRule{0, static_cast<std::uint8_t>(*n0)};
  return {};
}

}  // namespace binlogctl
