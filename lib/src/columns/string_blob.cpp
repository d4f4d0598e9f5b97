// CHAR/BINARY/ENUM/SET (type STRING), VARCHAR, BLOB/TEXT, GEOMETRY, JSON and VECTOR values.
#include <binlogctl/columns.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <iterator>

namespace binlogctl {

namespace {

// An n-byte little-endian length, then that many bytes. A length past the end of the row fails
// before anything is read or allocated, at the offset of the data.
Bytes read_prefixed(ByteReader& r, std::size_t prefix) {
  std::uint64_t len = r.le_n(prefix);
  if (!r.ok()) return {};
  if (len > r.remaining()) {
    r.fail(Errc::truncated, "column value runs past the end of the row");
    return {};
  }
  return r.bytes(static_cast<std::size_t>(len));
}

void append_uint(JsonBuf& out, std::uint64_t v) { append_u64(out, v); }

Status append_enum(const ColumnInfo& col, ByteReader& r, std::size_t size, JsonBuf& out) {
  const std::uint64_t at = r.offset();
  if (size < 1 || size > 2) return DecodeError{Errc::bad_value, at, "ENUM size not 1 or 2"};
  std::uint64_t index = r.le_n(size);
  if (!r.ok()) return r.error();
  if (col.names.empty()) {
    append_uint(out, index);
  } else if (index == 0) {
    out.append("\"\"", 2);  // the error value '' that non-strict inserts store
  } else if (index <= col.names.size()) {
    append_text_json(out, col.names[index - 1], col.charset);
  } else {
    append_uint(out, index);  // names do not cover it: keep the number rather than guess
  }
  return {};
}

Status append_set(const ColumnInfo& col, ByteReader& r, std::size_t size, JsonBuf& out) {
  const std::uint64_t at = r.offset();
  if (size < 1 || size > 8) return DecodeError{Errc::bad_value, at, "SET size not in 1..8"};
  std::uint64_t bits = r.le_n(size);
  if (!r.ok()) return r.error();
  const bool covered =
      !col.names.empty() && (col.names.size() >= 64 || (bits >> col.names.size()) == 0);
  if (!covered) {  // no names, or bits past the last member: the bitmap as a number
    append_uint(out, bits);
    return {};
  }
  thread_local std::string joined;
  joined.clear();
  for (std::size_t i = 0; i < col.names.size() && i < 64; ++i) {
    if ((bits >> i) & 1) {
      if (!joined.empty()) joined.push_back(',');
      joined.append(col.names[i]);
    }
  }
  append_text_json(out, joined, col.charset);
  return {};
}

// BINARY(n): the binlog drops the trailing zero bytes; SELECT shows them, so put them back.
void append_padded_binary(JsonBuf& out, Bytes data, std::size_t width, BinaryAs how) {
  if (data.size() >= width) {
    append_binary_json(out, data, how);
    return;
  }
  std::array<std::uint8_t, 1024> buf{};  // CHAR/BINARY widths are below 1024 bytes
  if (data.size() > 0) std::memcpy(buf.data(), data.data(), data.size());
  append_binary_json(out, Bytes(buf.data(), width < buf.size() ? width : buf.size()), how);
}

void append_hinted(JsonBuf& out, Bytes data, ValueHint hint) {
  out.push_back('"');
  switch (hint) {
    case ValueHint::uuid:
      append_uuid_text(out, data);
      break;
    case ValueHint::inet4:
      append_inet4_text(out, data);
      break;
    case ValueHint::inet6:
      append_inet6_text(out, data);
      break;
    case ValueHint::none:
      break;
  }
  out.push_back('"');
}

Status append_vector(JsonBuf& out, Bytes data, std::uint64_t at) {
  if (data.size() % 4 != 0)
    return DecodeError{Errc::bad_length, at, "VECTOR length not a multiple of 4"};
  out.push_back('[');
  for (std::size_t i = 0; i < data.size(); i += 4) {
    if (i > 0) out.push_back(',');
    std::uint32_t u = load_le32(data.data() + i);
    float f = 0;
    std::memcpy(&f, &u, sizeof f);
    append_float_json(out, f);
  }
  out.push_back(']');
  return {};
}

}  // namespace

std::uint8_t utf8_text_prefix(const ColumnInfo& col) noexcept {
  // What append_string_family_json renders with append_text_json and no conversion.
  if (col.hint != ValueHint::none || is_binary_collation(col.charset) || !collation_is_utf8_compatible(col.charset))
    return 0;
  switch (col.type) {
    case ColumnType::varchar:
    case ColumnType::var_string:
      return col.meta > 255 ? 2 : 1;
    case ColumnType::string: {
      const StringMeta sm = unpack_string_meta(col.meta);
      if (sm.real_type != ColumnType::string) return 0;
      return sm.length > 255 ? 2 : 1;
    }
    default:
      return 0;
  }
}

Status append_string_family_json(const ColumnInfo& col, ByteReader& r, JsonBuf& out,
                                 const RenderOptions& opts) {
  const std::uint64_t at = r.offset();
  const bool binary = is_binary_collation(col.charset);
  switch (col.type) {
    case ColumnType::enum_:
      return append_enum(col, r, col.meta & 0xff, out);
    case ColumnType::set:
      return append_set(col, r, col.meta & 0xff, out);
    case ColumnType::string: {
      const StringMeta sm = unpack_string_meta(col.meta);
      if (sm.real_type == ColumnType::enum_) return append_enum(col, r, col.meta & 0xff, out);
      if (sm.real_type == ColumnType::set) return append_set(col, r, col.meta & 0xff, out);
      Bytes data = read_prefixed(r, sm.length > 255 ? 2 : 1);
      if (!r.ok()) return r.error();
      if (col.hint != ValueHint::none)
        append_hinted(out, data, col.hint);
      else if (binary)
        append_padded_binary(out, data, sm.length, opts.binary_as);
      else
        append_text_json(out, as_string_view(data), col.charset);  // CHAR: stored space-trimmed
      return {};
    }
    case ColumnType::varchar:
    case ColumnType::var_string: {
      Bytes data = read_prefixed(r, col.meta > 255 ? 2 : 1);
      if (!r.ok()) return r.error();
      if (col.hint != ValueHint::none)
        append_hinted(out, data, col.hint);
      else if (binary)
        append_binary_json(out, data, opts.binary_as);
      else
        append_text_json(out, as_string_view(data), col.charset);
      return {};
    }
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob:
    case ColumnType::geometry:
    case ColumnType::json:
    case ColumnType::vector: {
      if (col.meta < 1 || col.meta > 4)
        return DecodeError{Errc::bad_value, at, "BLOB length prefix size not in 1..4"};
      Bytes data = read_prefixed(r, col.meta);
      if (!r.ok()) return r.error();
      const std::uint64_t data_at = r.offset() - data.size();
      if (col.type == ColumnType::json) return append_json_binary(out, data, data_at);
      if (col.type == ColumnType::vector) return append_vector(out, data, data_at);
      if (col.type == ColumnType::geometry || binary)
        append_binary_json(out, data, opts.binary_as);
      else
        append_text_json(out, as_string_view(data), col.charset);
      return {};
    }
    default:
      return DecodeError{Errc::bad_value, at, "not a string column type"};
  }
}

}  // namespace binlogctl
