// Column values as SQL literals (sql.h), from the typed view of column_value.h.
#include <binlogctl/json_buf.h>
#include <binlogctl/json_out.h>
#include <binlogctl/sql.h>

#include <charconv>
#include <cmath>
#include <cstring>

namespace binlogctl {

namespace {

void put_digits(std::string& out, std::uint64_t v, int width) {
  char tmp[24];
  char* e = tmp + sizeof tmp;
  char* b = v == 0 ? e : format_u64_backward(e, v);
  for (int n = static_cast<int>(e - b); n < width && b > tmp; ++n) *--b = '0';
  if (b == e) *--b = '0';
  out.append(b, static_cast<std::size_t>(e - b));
}

void put_fraction(std::string& out, std::uint32_t usec, unsigned fsp) {
  if (fsp == 0 || fsp > 6) return;
  static constexpr std::uint32_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  out.push_back('.');
  put_digits(out, usec % 1000000 / kPow10[6 - fsp], static_cast<int>(fsp));
}

void put_date(std::string& out, const TemporalParts& t) {
  put_digits(out, t.year, 4);
  out.push_back('-');
  put_digits(out, t.month, 2);
  out.push_back('-');
  put_digits(out, t.day, 2);
}

void put_time(std::string& out, const TemporalParts& t) {
  put_digits(out, t.hour, 2);
  out.push_back(':');
  put_digits(out, t.minute, 2);
  out.push_back(':');
  put_digits(out, t.second, 2);
  put_fraction(out, t.usec, t.fsp);
}

void put_double(std::string& out, double d) {
  if (!std::isfinite(d)) {  // no server stores these; NULL rather than text it would reject
    out.append("NULL");
    return;
  }
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, res.ptr);
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

void put_quoted(std::string& out, std::string_view s) {
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

void put_charset_hex(std::string& out, std::string_view bytes, std::uint16_t collation) {
  out.push_back('_');
  out.append(collation == 0 ? "utf8mb4" : collation_charset_name(collation));
  out.push_back(' ');
  append_sql_hex(out, Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// Text already in UTF-8 (names, JSON text) as _utf8mb4'...', else hex.
void put_utf8(std::string& out, std::string_view s) {
  if (quotable(s)) {
    out.append("_utf8mb4");
    put_quoted(out, s);
  } else {
    put_charset_hex(out, s, 0);
  }
}

template <void (*F)(JsonBuf&, Bytes)>
void put_hinted(std::string& out, Bytes b) {
  thread_local std::string text;  // not `out`: a JsonBuf fills the string it borrows to its capacity
  text.clear();
  {
    JsonBuf jb(text);  // gives `text` its contents when it goes
    F(jb, b);
  }
  out.push_back('\'');
  out.append(text);
  out.push_back('\'');
}

}  // namespace

void append_sql_hex(std::string& out, Bytes b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.append("X'");
  for (std::uint8_t c : b) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  out.push_back('\'');
}

void append_sql_text(std::string& out, std::string_view bytes, std::uint16_t collation) {
  // Most text is printable ASCII: it is the same in every charset the fast path admits (the
  // UTF-8 compatible ones and latin1) and goes out in one pass.
  const std::string_view cs = collation == 0 ? "utf8mb4" : collation_charset_name(collation);
  if (cs == "utf8mb4" || cs == "utf8mb3" || cs == "latin1" || cs == "ascii") {
    bool ascii = true;
    for (char ch : bytes) {
      const auto c = static_cast<unsigned char>(ch);
      ascii &= c >= 0x20 && c < 0x7f && c != '\\';
    }
    if (ascii) {
      out.append("_utf8mb4");
      put_quoted(out, bytes);
      return;
    }
  }
  thread_local std::string utf8;
  utf8.clear();
  if (quotable(bytes) && text_to_utf8(utf8, bytes, collation)) {
    out.append("_utf8mb4");
    put_quoted(out, utf8);
    return;
  }
  put_charset_hex(out, bytes, collation);
}

Status append_sql_literal(std::string& out, const ColumnInfo& col, const ColumnValue& v) {
  switch (v.kind) {
    case ValueKind::null:
      out.append("NULL");
      return {};
    case ValueKind::signed_int:
      if (v.i < 0) {
        out.push_back('-');
        put_digits(out, 0 - static_cast<std::uint64_t>(v.i), 1);
      } else {
        put_digits(out, static_cast<std::uint64_t>(v.i), 1);
      }
      return {};
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
      // Through a small scratch string: the renderers' std::string overloads borrow the string
      // as a JsonBuf, which fills it out to its capacity (all of a large output buffer).
      thread_local std::string text;
      text.clear();
      ByteReader r(v.bytes, v.offset);
      Status st = append_decimal_text(text, v.precision, v.scale, r);
      out.append(text);
      return st;
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
      out.append("b'");
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
    case ValueKind::date:
      out.push_back('\'');
      put_date(out, v.t);
      out.push_back('\'');
      return {};
    case ValueKind::time:
      out.push_back('\'');
      if (v.t.negative) out.push_back('-');
      put_time(out, v.t);
      out.push_back('\'');
      return {};
    case ValueKind::datetime:
    case ValueKind::timestamp:
      out.push_back('\'');
      put_date(out, v.t);
      out.push_back(' ');
      put_time(out, v.t);
      out.push_back('\'');
      return {};
    case ValueKind::text:
      append_sql_text(out, as_string_view(v.bytes), v.charset);
      return {};
    case ValueKind::binary: {
      if (v.bytes.size() >= v.pad_to) {
        append_sql_hex(out, v.bytes);
        return {};
      }
      append_sql_hex(out, v.bytes);
      out.pop_back();  // BINARY(n): the zero bytes the binlog strips
      for (std::size_t i = v.bytes.size(); i < v.pad_to; ++i) out.append("00");
      out.push_back('\'');
      return {};
    }
    case ValueKind::enum_index:
      if (v.u == 0) {
        out.append("''");  // the error value of a non-strict insert
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
      thread_local std::string text;
      text.clear();
      Status st = append_json_binary(text, v.bytes, v.offset);
      if (!st.ok()) return st;
      out.append("CAST(");
      put_utf8(out, text);
      out.append(" AS JSON)");
      return {};
    }
    case ValueKind::geometry: {
      if (v.bytes.size() < 4) {  // not SRID + WKB: the bytes as they are
        append_sql_hex(out, v.bytes);
        return {};
      }
      out.append("ST_GeomFromWKB(");
      append_sql_hex(out, v.bytes.subspan(4));
      out.append(", ");
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

}  // namespace binlogctl
