// MySQL binary JSON (sql-common/json_binary.cc) -> compact JSON text.
//
//   doc       ::= type value
//   object    ::= count size key-entry* value-entry* keys values      (small: 2-byte fields,
//   array     ::= count size value-entry* values                        large: 4-byte fields)
//   key-entry ::= offset(2|4) length(2)
//   value-entry ::= type offset-or-inlined(2|4)
//   string    ::= varlen bytes          (varlen: 7 bits per byte, low first, at most 5 bytes)
//   opaque    ::= field-type varlen bytes
// Offsets count from the first byte of the enclosing object/array (after its type byte) and must
// stay inside its `size`. literal/int16/uint16 (and int32/uint32 in large containers) are inlined
// in the value entry.
#include "columns/column_json.h"
#include <fmt/format.h>

#include <cstring>
#include <iterator>

namespace binlogctl {

namespace {

// Value type bytes (json_binary.cc JSONB_TYPE_*).
constexpr std::uint8_t kSmallObject = 0x00;
constexpr std::uint8_t kLargeObject = 0x01;
constexpr std::uint8_t kSmallArray = 0x02;
constexpr std::uint8_t kLargeArray = 0x03;
constexpr std::uint8_t kLiteral = 0x04;
constexpr std::uint8_t kInt16 = 0x05;
constexpr std::uint8_t kUint16 = 0x06;
constexpr std::uint8_t kInt32 = 0x07;
constexpr std::uint8_t kUint32 = 0x08;
constexpr std::uint8_t kInt64 = 0x09;
constexpr std::uint8_t kUint64 = 0x0a;
constexpr std::uint8_t kDouble = 0x0b;
constexpr std::uint8_t kString = 0x0c;
constexpr std::uint8_t kOpaque = 0x0f;

constexpr int kMaxDepth = 100;  // JSON_DOCUMENT_MAX_DEPTH

class JsonBinaryPrinter {
 public:
  JsonBinaryPrinter(Bytes doc, std::uint64_t base, RenderBuf& out)
      : doc_(doc), base_(base), out_(out) {}

  Status print() {
    if (doc_.empty()) {
      out_.append("null", 4);
      return {};
    }
    value(doc_[0], 1, doc_.size(), 0);
    return err_;
  }

 private:
  bool fail(std::size_t pos, Errc code, const char* what) {
    if (err_.ok()) err_ = DecodeError{code, base_ + pos, what};
    return false;
  }
  // [pos, pos + n) must lie inside [.., end).
  bool need(std::size_t pos, std::size_t n, std::size_t end) {
    if (pos > end || n > end - pos)
      return fail(pos, Errc::truncated, "JSON value runs past its container");
    return true;
  }
  std::uint64_t le(std::size_t pos, std::size_t n) const { return load_le(doc_.data() + pos, n); }

  // The value of `type` whose data starts at pos; `end` bounds it (its container's end).
  bool value(std::uint8_t type, std::size_t pos, std::size_t end, int depth) {
    switch (type) {
      case kSmallObject:
      case kLargeObject:
      case kSmallArray:
      case kLargeArray:
        if (depth >= kMaxDepth) return fail(pos, Errc::bad_value, "JSON nested too deeply");
        return container(type, pos, end, depth + 1);
      case kLiteral:
        if (!need(pos, 1, end)) return false;
        return literal(doc_[pos], pos);
      case kInt16:
      case kUint16:
        if (!need(pos, 2, end)) return false;
        return integer(type, le(pos, 2));
      case kInt32:
      case kUint32:
        if (!need(pos, 4, end)) return false;
        return integer(type, le(pos, 4));
      case kInt64:
      case kUint64:
        if (!need(pos, 8, end)) return false;
        return integer(type, le(pos, 8));
      case kDouble: {
        if (!need(pos, 8, end)) return false;
        std::uint64_t u = le(pos, 8);
        double d = 0;
        std::memcpy(&d, &u, sizeof d);
        append_double_json(out_, d);
        return true;
      }
      case kString: {
        std::size_t len = 0;
        if (!varlen(pos, end, len)) return false;
        append_json_string(out_, as_string_view(doc_.subspan(pos, len)));
        return true;
      }
      case kOpaque:
        return opaque(pos, end);
      default:
        return fail(pos, Errc::bad_value, "unknown JSON value type");
    }
  }

  bool literal(std::uint8_t v, std::size_t pos) {
    switch (v) {
      case 0:
        out_.append("null", 4);
        return true;
      case 1:
        out_.append("true", 4);
        return true;
      case 2:
        out_.append("false", 5);
        return true;
      default:
        return fail(pos, Errc::bad_value, "unknown JSON literal");
    }
  }

  bool integer(std::uint8_t type, std::uint64_t raw) {
    auto it = std::back_inserter(out_);
    switch (type) {
      case kInt16:
        fmt::format_to(it, "{}", static_cast<std::int16_t>(raw));
        break;
      case kInt32:
        fmt::format_to(it, "{}", static_cast<std::int32_t>(raw));
        break;
      case kInt64:
        fmt::format_to(it, "{}", static_cast<std::int64_t>(raw));
        break;
      default:
        fmt::format_to(it, "{}", raw);
        break;  // uint16/32/64
    }
    return true;
  }

  // Variable-length length at pos; on return pos is past it and [pos, pos + len) is checked.
  bool varlen(std::size_t& pos, std::size_t end, std::size_t& len) {
    std::uint64_t v = 0;
    const std::size_t start = pos;
    for (int i = 0; i < 5; ++i) {
      if (!need(pos, 1, end)) return false;
      std::uint8_t b = doc_[pos++];
      v |= std::uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80) == 0) {
        if (v > 0xffffffffu) return fail(start, Errc::bad_length, "JSON length over 4 GiB");
        len = static_cast<std::size_t>(v);
        return need(pos, len, end);
      }
    }
    return fail(start, Errc::bad_length, "JSON variable-length length longer than 5 bytes");
  }

  bool container(std::uint8_t type, std::size_t pos, std::size_t end, int depth) {
    const bool large = type == kLargeObject || type == kLargeArray;
    const bool object = type == kSmallObject || type == kLargeObject;
    const std::size_t w = large ? 4 : 2;  // offset/count width
    if (!need(pos, 2 * w, end)) return false;
    const std::uint64_t count = le(pos, w), size = le(pos + w, w);
    if (size < 2 * w || size > end - pos)
      return fail(pos + w, Errc::bad_length, "JSON container size past its parent");
    const std::size_t cend = pos + static_cast<std::size_t>(size);  // this container's end
    const std::size_t key_entry = w + 2, value_entry = 1 + w;
    const std::size_t header = 2 * w;
    // count * entry sizes must fit inside the container before any loop runs on count.
    const std::uint64_t per = (object ? key_entry : 0) + value_entry;
    if (count > (size - header) / per)
      return fail(pos, Errc::bad_length, "JSON element count past the container size");
    const std::size_t n = static_cast<std::size_t>(count);
    const std::size_t keys_at = pos + header;
    const std::size_t values_at = keys_at + (object ? n * key_entry : 0);

    out_.push_back(object ? '{' : '[');
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out_.push_back(',');
      if (object) {
        const std::size_t ke = keys_at + i * key_entry;
        const std::size_t koff = static_cast<std::size_t>(le(ke, w));
        const std::size_t klen = static_cast<std::size_t>(le(ke + w, 2));
        if (koff > size || klen > size - koff)
          return fail(ke, Errc::bad_length, "JSON key past its object");
        append_json_string(out_, as_string_view(doc_.subspan(pos + koff, klen)));
        out_.push_back(':');
      }
      const std::size_t ve = values_at + i * value_entry;
      const std::uint8_t vtype = doc_[ve];
      const bool inlined = vtype == kLiteral || vtype == kInt16 || vtype == kUint16 ||
                           (large && (vtype == kInt32 || vtype == kUint32));
      if (inlined) {
        if (!value(vtype, ve + 1, ve + 1 + w, depth)) return false;
        continue;
      }
      const std::size_t voff = static_cast<std::size_t>(le(ve + 1, w));
      if (voff >= size)
        return fail(ve + 1, Errc::bad_length, "JSON value offset past its container");
      if (!value(vtype, pos + voff, cend, depth)) return false;
    }
    out_.push_back(object ? '}' : ']');
    return true;
  }

  // Opaque values: DECIMAL and the temporal types print as strings (what mysqlbinlog and the
  // JSON functions print), everything else as "base64:typeNN:<data>".
  bool opaque(std::size_t pos, std::size_t end) {
    if (!need(pos, 1, end)) return false;
    const std::uint8_t field_type = doc_[pos++];
    std::size_t len = 0;
    const std::size_t len_at = pos;
    if (!varlen(pos, end, len)) return false;
    Bytes data = doc_.subspan(pos, len);
    switch (static_cast<ColumnType>(field_type)) {
      case ColumnType::newdecimal: {
        if (len < 2) return fail(len_at, Errc::bad_length, "JSON opaque DECIMAL too short");
        ByteReader r(data.subspan(2), base_ + pos + 2);
        out_.push_back('"');
        Status st = append_decimal_text(out_, data[0], data[1], r);
        if (!st.ok()) {
          if (err_.ok()) err_ = st.error();
          return false;
        }
        out_.push_back('"');
        return true;
      }
      case ColumnType::date:
      case ColumnType::datetime:
      case ColumnType::timestamp:
      case ColumnType::time: {
        if (len < 8) return fail(len_at, Errc::bad_length, "JSON opaque temporal too short");
        const auto packed = static_cast<std::int64_t>(load_le(data.data(), 8));
        out_.push_back('"');
        if (field_type == static_cast<std::uint8_t>(ColumnType::time))
          append_packed_time_text(out_, packed, 6);
        else
          append_packed_datetime_text(out_, packed, 6,
                                      field_type == static_cast<std::uint8_t>(ColumnType::date));
        out_.push_back('"');
        return true;
      }
      default:
        fmt::format_to(std::back_inserter(out_), "\"base64:type{}:", field_type);
        append_base64(out_, data);
        out_.push_back('"');
        return true;
    }
  }

  Bytes doc_;
  std::uint64_t base_;
  RenderBuf& out_;
  Status err_{};
};

}  // namespace

Status append_json_binary(RenderBuf& out, Bytes doc, std::uint64_t base_offset) {
  const std::size_t mark = out.size();
  JsonBinaryPrinter p(doc, base_offset, out);
  Status st = p.print();
  if (!st.ok()) out.resize(mark);
  return st;
}

}  // namespace binlogctl
