// Column values as SQL literals (sql.h), from the typed view of column_value.h.
#include <binlogctl/sql.h>

#include "columns/temporal_text.h"
#include "render/render_buf.h"
#include "render/json_out.h"
#include "sql/sql_value.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace binlogctl {

namespace {

// Numbers and dates (temporal_text.h) are formatted into a small array and appended at once: a RenderBuf append of a
// few bytes is a few stores (std::string's is a call to memmove).
// v in decimal, zero-padded to `width` digits (at most 20).
char* put_digits_at(char* p, std::uint64_t v, int width) {
  int n = decimal_digits(v);
  if (n < width) n = width > 20 ? 20 : width;
  format_fixed_digits(p, v, n);
  return p + n;
}

void put_digits(RenderBuf& out, std::uint64_t v, int width) {
  char* b = out.tail(24);
  out.advance(static_cast<std::size_t>(put_digits_at(b, v, width) - b));
}

void put_double(RenderBuf& out, double d) {
  if (!std::isfinite(d)) {  // no server stores these; NULL rather than text it would reject
    out.append("NULL", 4);
    return;
  }
  char* b = out.tail(40);
  auto res = std::to_chars(b, b + 40, d);
  out.advance(static_cast<std::size_t>(res.ptr - b));
}

// Whether text bytes can go inside '...' as they are, whatever sql_mode (NO_BACKSLASH_ESCAPES
// or not) and whatever the client does with control characters: no backslash, no control
// character but tab and newline. Quotes are doubled.
bool quotable(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n')) return false;
  }
  return true;
}

void put_quoted(RenderBuf& out, std::string_view s) {
  out.push_back('\'');
  std::size_t from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\'') {
      out.append(s.substr(from, i + 1 - from));
      out.push_back('\'');
      from = i + 1;
    }
  }
  out.append(s.substr(from));
  out.push_back('\'');
}

void put_charset_hex(RenderBuf& out, std::string_view bytes, std::uint16_t collation) {
  out.push_back('_');
  out.append(collation == 0 ? "utf8mb4" : collation_charset_name(collation));
  out.push_back(' ');
  append_sql_hex(out, Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// Text already in UTF-8 (names, JSON text) as _utf8mb4'...', else hex.
void put_utf8(RenderBuf& out, std::string_view s) {
  if (quotable(s)) {
    out.append("_utf8mb4", 8);
    put_quoted(out, s);
  } else {
    put_charset_hex(out, s, 0);
  }
}

template <void (*F)(RenderBuf&, Bytes)>
void put_hinted(RenderBuf& out, Bytes b) {
  out.push_back('\'');
  F(out, b);
  out.push_back('\'');
}

// The charsets whose printable ASCII is the same bytes as in UTF-8, by collation id (0: unknown,
// taken as utf8mb4), for append_sql_text's fast path.
bool ascii_compatible(std::uint16_t collation) {
  if (collation == 0) return true;
  const std::string_view cs = collation_charset_name(collation);
  return cs == "utf8mb4" || cs == "utf8mb3" || cs == "latin1" || cs == "ascii";
}

}  // namespace

void append_sql_hex(RenderBuf& out, Bytes b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  char* p = out.tail(b.size() * 2 + 3);
  *p++ = 'X';
  *p++ = '\'';
  for (std::uint8_t c : b) {
    *p++ = kHex[c >> 4];
    *p++ = kHex[c & 15];
  }
  *p = '\'';
  out.advance(b.size() * 2 + 3);
}

void append_sql_text(RenderBuf& out, std::string_view bytes, std::uint16_t collation) {
  // Most text is printable ASCII: it is the same in every charset the fast path admits (the
  // UTF-8 compatible ones and latin1) and goes out in one pass.
  if (ascii_compatible(collation)) {
    bool ascii = true;
    for (char ch : bytes) {
      const auto c = static_cast<unsigned char>(ch);
      ascii &= c >= 0x20 && c < 0x7f && c != '\\';
    }
    if (ascii) {
      out.append("_utf8mb4", 8);
      put_quoted(out, bytes);
      return;
    }
  }
  thread_local std::string utf8;
  utf8.clear();
  if (quotable(bytes) && append_utf8(utf8, bytes, collation, BadBytes::refuse)) {
    out.append("_utf8mb4", 8);
    put_quoted(out, utf8);
    return;
  }
  put_charset_hex(out, bytes, collation);
}

Status append_sql_literal(RenderBuf& out, const ColumnInfo& col, const ColumnValue& v) {
  switch (v.kind) {
    case ValueKind::null:
      out.append("NULL", 4);
      return {};
    case ValueKind::signed_int: {
      if (v.i < 0) {
        out.push_back('-');
        put_digits(out, 0 - static_cast<std::uint64_t>(v.i), 1);
      } else {
        put_digits(out, static_cast<std::uint64_t>(v.i), 1);
      }
      return {};
    }
    case ValueKind::unsigned_int:
    case ValueKind::year:
      put_digits(out, v.u, 1);
      return {};
    case ValueKind::float32:
      put_double(out, static_cast<double>(v.f));
      return {};
    case ValueKind::float64:
      put_double(out, v.d);
      return {};
    case ValueKind::decimal: {
      ByteReader r(v.bytes, v.offset);
      return append_decimal_text(out, v.precision, v.scale, r);
    }
    case ValueKind::decimal_text: {
      const std::string_view s = as_string_view(v.bytes);
      bool numeric = !s.empty();
      for (char c : s) numeric &= (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
      if (numeric) out.append(s);
      else put_quoted(out, quotable(s) ? s : std::string_view("0"));
      return {};
    }
    case ValueKind::bit: {
      out.append("b'", 2);
      const unsigned n = v.bits == 0 ? 1 : v.bits;
      bool any = false;
      for (unsigned i = n; i-- > 0;) {
        const bool one = ((v.u >> i) & 1) != 0;
        if (one || any || i == 0) {
          out.push_back(one ? '1' : '0');
          any = true;
        }
      }
      out.push_back('\'');
      return {};
    }
    case ValueKind::date: {
      char* const buf = out.tail(64);
      char* p = buf;
      *p++ = '\'';
      p = put_date_text(p, v.t);
      *p++ = '\'';
      out.advance(static_cast<std::size_t>(p - buf));
      return {};
    }
    case ValueKind::time: {
      char* const buf = out.tail(64);
      char* p = buf;
      *p++ = '\'';
      if (v.t.negative) *p++ = '-';
      p = put_time_text(p, v.t);
      *p++ = '\'';
      out.advance(static_cast<std::size_t>(p - buf));
      return {};
    }
    case ValueKind::datetime:
    case ValueKind::timestamp: {
      char* const buf = out.tail(96);
      char* p = buf;
      *p++ = '\'';
      p = put_date_text(p, v.t);
      *p++ = ' ';
      p = put_time_text(p, v.t);
      *p++ = '\'';
      out.advance(static_cast<std::size_t>(p - buf));
      return {};
    }
    case ValueKind::text:
      append_sql_text(out, as_string_view(v.bytes), v.charset);
      return {};
    case ValueKind::binary: {
      if (v.bytes.size() >= v.pad_to) {
        append_sql_hex(out, v.bytes);
        return {};
      }
      // BINARY(n): with the zero bytes the binlog strips
      static constexpr char kHex[] = "0123456789ABCDEF";
      const std::size_t n = std::size_t{v.pad_to} * 2 + 3;
      char* p = out.tail(n);
      *p++ = 'X';
      *p++ = '\'';
      for (std::uint8_t c : v.bytes) {
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
      }
      for (std::size_t i = v.bytes.size(); i < v.pad_to; ++i) {
        *p++ = '0';
        *p++ = '0';
      }
      *p = '\'';
      out.advance(n);
      return {};
    }
    case ValueKind::enum_index:
      if (v.u == 0) {
        out.append("''", 2);  // the error value of a non-strict insert
      } else if (v.u <= col.names.size()) {
        append_sql_text(out, col.names[v.u - 1], col.charset);
      } else {
        put_digits(out, v.u, 1);
      }
      return {};
    case ValueKind::set_bits: {
      const bool covered = !col.names.empty() && (col.names.size() >= 64 || (v.u >> col.names.size()) == 0);
      if (!covered) {
        put_digits(out, v.u, 1);
        return {};
      }
      thread_local std::string joined;
      joined.clear();
      for (std::size_t i = 0; i < col.names.size() && i < 64; ++i) {
        if ((v.u >> i) & 1) {
          if (!joined.empty()) joined.push_back(',');
          joined.append(col.names[i]);
        }
      }
      append_sql_text(out, joined, col.charset);
      return {};
    }
    case ValueKind::json: {
      thread_local RenderBuf text;
      text.clear();
      Status st = append_json_binary(text, v.bytes, v.offset);
      if (!st.ok()) return st;
      out.append("CAST(", 5);
      put_utf8(out, text.view());
      out.append(" AS JSON)", 9);
      return {};
    }
    case ValueKind::geometry: {
      if (v.bytes.size() < 4) {  // not SRID + WKB: the bytes as they are
        append_sql_hex(out, v.bytes);
        return {};
      }
      out.append("ST_GeomFromWKB(", 15);
      append_sql_hex(out, v.bytes.subspan(4));
      out.append(", ", 2);
      put_digits(out, load_le32(v.bytes.data()), 1);
      out.push_back(')');
      return {};
    }
    case ValueKind::vector:
      append_sql_hex(out, v.bytes);
      return {};
    case ValueKind::uuid:
      put_hinted<append_uuid_text>(out, v.bytes);
      return {};
    case ValueKind::inet4:
      put_hinted<append_inet4_text>(out, v.bytes);
      return {};
    case ValueKind::inet6:
      put_hinted<append_inet6_text>(out, v.bytes);
      return {};
  }
  return DecodeError{Errc::bad_value, v.offset, "value kind without an SQL rendering"};
}

// The std::string forms, through a RenderBuf over the string.
Status append_sql_literal(std::string& out, const ColumnInfo& col, const ColumnValue& v) {
  RenderBuf b(out);
  return append_sql_literal(b, col, v);
}
void append_sql_text(std::string& out, std::string_view bytes, std::uint16_t collation) {
  RenderBuf b(out);
  append_sql_text(b, bytes, collation);
}
void append_sql_hex(std::string& out, Bytes b) {
  RenderBuf j(out);
  append_sql_hex(j, b);
}

}  // namespace binlogctl
