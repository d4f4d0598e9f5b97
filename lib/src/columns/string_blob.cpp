// CHAR/BINARY/ENUM/SET (type STRING), VARCHAR, BLOB/TEXT, GEOMETRY, JSON and VECTOR values as
// JSON, from their decoded form (ColumnValue; decode_value.h reads the row bytes).
#include "columns/column_json.h"
#include <fmt/format.h>

#include "value_json.h"

#include <array>
#include <cstring>
#include <iterator>

namespace binlogctl {

namespace {

void append_uint(RenderBuf& out, std::uint64_t v) { append_u64(out, v); }

void append_enum(const ColumnInfo& col, std::uint64_t index, RenderBuf& out) {
  if (col.names.empty()) {
    append_uint(out, index);
  } else if (index == 0) {
    out.append("\"\"", 2);  // the error value '' that non-strict inserts store
  } else if (index <= col.names.size()) {
    append_text_json(out, col.names[index - 1], col.charset);
  } else {
    append_uint(out, index);  // names do not cover it: keep the number rather than guess
  }
}

void append_set(const ColumnInfo& col, std::uint64_t bits, RenderBuf& out) {
  const bool covered =
      !col.names.empty() && (col.names.size() >= 64 || (bits >> col.names.size()) == 0);
  if (!covered) {  // no names, or bits past the last member: the bitmap as a number
    append_uint(out, bits);
    return;
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
}

// BINARY(n): the binlog drops the trailing zero bytes; SELECT shows them, so put them back.
void append_padded_binary(RenderBuf& out, Bytes data, std::size_t width, BinaryAs how) {
  if (data.size() >= width) {
    append_binary_json(out, data, how);
    return;
  }
  std::array<std::uint8_t, 1024> buf{};  // CHAR/BINARY widths are below 1024 bytes
  if (data.size() > 0) std::memcpy(buf.data(), data.data(), data.size());
  append_binary_json(out, Bytes(buf.data(), width < buf.size() ? width : buf.size()), how);
}

void append_hinted(RenderBuf& out, Bytes data, ValueKind kind) {
  out.push_back('"');
  if (kind == ValueKind::uuid)
    append_uuid_text(out, data);
  else if (kind == ValueKind::inet4)
    append_inet4_text(out, data);
  else
    append_inet6_text(out, data);
  out.push_back('"');
}

// The decoder checked that the length is a multiple of 4.
void append_vector(RenderBuf& out, Bytes data) {
  out.push_back('[');
  for (std::size_t i = 0; i + 4 <= data.size(); i += 4) {
    if (i > 0) out.push_back(',');
    std::uint32_t u = load_le32(data.data() + i);
    float f = 0;
    std::memcpy(&f, &u, sizeof f);
    append_float_json(out, f);
  }
  out.push_back(']');
}

bool is_blob_type(ColumnType t) {
  return t == ColumnType::tiny_blob || t == ColumnType::medium_blob || t == ColumnType::long_blob ||
         t == ColumnType::blob;
}

}  // namespace

std::uint8_t utf8_text_prefix(const ColumnInfo& col) noexcept {
  // Text that render_string_family_json hands to append_text_json, which passes it through.
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

Status value_detail::render_string_family_json(const ColumnInfo& col, const ColumnValue& v, RenderBuf& out,
                                              const RenderOptions& opts) {
  switch (v.kind) {
    case ValueKind::text:
      append_text_json(out, as_string_view(v.bytes), v.charset);  // CHAR: stored space-trimmed
      return {};
    case ValueKind::binary:
      append_padded_binary(out, v.bytes, v.pad_to, opts.binary_as);
      return {};
    case ValueKind::enum_index:
      append_enum(col, v.u, out);
      return {};
    case ValueKind::set_bits:
      append_set(col, v.u, out);
      return {};
    case ValueKind::json:
      return append_json_binary(out, v.bytes, v.offset);
    case ValueKind::geometry:
      append_binary_json(out, v.bytes, opts.binary_as);
      return {};
    case ValueKind::vector:
      append_vector(out, v.bytes);
      return {};
    case ValueKind::uuid:
    case ValueKind::inet4:
    case ValueKind::inet6:
      // A hint means a BINARY(n) column's type; on a BLOB it never did.
      if (is_blob_type(col.type)) {
        if (is_binary_collation(col.charset))
          append_binary_json(out, v.bytes, opts.binary_as);
        else
          append_text_json(out, as_string_view(v.bytes), col.charset);
        return {};
      }
      append_hinted(out, v.bytes, v.kind);
      return {};
    default:
      return DecodeError{Errc::bad_value, v.offset, "not a string column value"};
  }
}

}  // namespace binlogctl
