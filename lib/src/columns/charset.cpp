// Collation ids -> charsets, and the one charset -> UTF-8 converter (append_utf8; latin1 by table,
// the others through iconv) with the JSON renderer's escaping of its result (append_text_json).
#include "columns/column_json.h"
#include "render/json_out.h"
#include <iconv.h>

#include "ascii_run.h"

#include <array>
#include <cerrno>
#include <cstring>

namespace binlogctl {

namespace {


// A code point below U+10000 as UTF-8 at b[k..], k moved past it.
void append_utf8_codepoint(char* b, std::size_t& k, std::uint32_t cp) {
  if (cp < 0x80) {
    b[k++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    b[k++] = static_cast<char>(0xc0 | (cp >> 6));
    b[k++] = static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    b[k++] = static_cast<char>(0xe0 | (cp >> 12));
    b[k++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    b[k++] = static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// ---- collations --------------------------------------------------------------------------------

enum class Cs : std::uint8_t {
  utf8mb4,
  utf8mb3,
  ascii,
  binary,
  latin1,
  big5,
  latin2,
  dec8,
  cp850,
  hp8,
  koi8r,
  swe7,
  ujis,
  sjis,
  cp1251,
  hebrew,
  tis620,
  euckr,
  latin7,
  koi8u,
  gb2312,
  greek,
  cp1250,
  gbk,
  cp1257,
  latin5,
  armscii8,
  ucs2,
  cp866,
  keybcs2,
  macce,
  macroman,
  cp852,
  utf16,
  utf16le,
  cp1256,
  utf32,
  geostd8,
  cp932,
  eucjpms,
  gb18030,
  filename,
  count_
};

struct CsDef {
  const char* name;
  const char* iconv;  // nullptr: handled without iconv
  int max_bytes;      // bytes of its longest character (the servers' mbmaxlen)
};

constexpr CsDef kCharsets[] = {
    {"utf8mb4", nullptr, 4},
    {"utf8mb3", nullptr, 3},
    {"ascii", nullptr, 1},
    {"binary", nullptr, 1},
    {"latin1", nullptr, 1},
    {"big5", "BIG5", 2},
    {"latin2", "ISO-8859-2", 1},
    {"dec8", "DEC-MCS", 1},
    {"cp850", "CP850", 1},
    {"hp8", "HP-ROMAN8", 1},
    {"koi8r", "KOI8-R", 1},
    {"swe7", "ISO646-SE", 1},
    {"ujis", "EUC-JP", 3},
    {"sjis", "SJIS", 2},
    {"cp1251", "CP1251", 1},
    {"hebrew", "ISO-8859-8", 1},
    {"tis620", "TIS-620", 1},
    {"euckr", "EUC-KR", 2},
    {"latin7", "ISO-8859-13", 1},
    {"koi8u", "KOI8-U", 1},
    {"gb2312", "GB2312", 2},
    {"greek", "ISO-8859-7", 1},
    {"cp1250", "CP1250", 1},
    {"gbk", "GBK", 2},
    {"cp1257", "CP1257", 1},
    {"latin5", "ISO-8859-9", 1},
    {"armscii8", "ARMSCII-8", 1},
    {"ucs2", "UCS-2BE", 2},
    {"cp866", "CP866", 1},
    {"keybcs2", "KEYBCS2", 1},
    {"macce", "MAC-CENTRALEUROPE", 1},
    {"macroman", "MACINTOSH", 1},
    {"cp852", "CP852", 1},
    {"utf16", "UTF-16BE", 4},
    {"utf16le", "UTF-16LE", 4},
    {"cp1256", "CP1256", 1},
    {"utf32", "UTF-32BE", 4},
    {"geostd8", "GEORGIAN-PS", 1},
    {"cp932", "CP932", 2},
    {"eucjpms", "EUC-JP-MS", 3},
    {"gb18030", "GB18030", 4},
    {"filename", nullptr, 5},
};
static_assert(std::size(kCharsets) == static_cast<std::size_t>(Cs::count_));

// Collation ids 0..99, identical in MySQL and MariaDB (SHOW COLLATION); Cs::count_ = unassigned.
constexpr Cs kLow[100] = {
    Cs::count_,   Cs::big5,     Cs::latin2,
    Cs::dec8,     Cs::cp850,  // 0-4
    Cs::latin1,   Cs::hp8,      Cs::koi8r,
    Cs::latin1,   Cs::latin2,  // 5-9
    Cs::swe7,     Cs::ascii,    Cs::ujis,
    Cs::sjis,     Cs::cp1251,  // 10-14
    Cs::latin1,   Cs::hebrew,   Cs::filename,
    Cs::tis620,   Cs::euckr,  // 15-19
    Cs::latin7,   Cs::latin2,   Cs::koi8u,
    Cs::cp1251,   Cs::gb2312,  // 20-24
    Cs::greek,    Cs::cp1250,   Cs::latin2,
    Cs::gbk,      Cs::cp1257,  // 25-29
    Cs::latin5,   Cs::latin1,   Cs::armscii8,
    Cs::utf8mb3,  Cs::cp1250,  // 30-34
    Cs::ucs2,     Cs::cp866,    Cs::keybcs2,
    Cs::macce,    Cs::macroman,  // 35-39
    Cs::cp852,    Cs::latin7,   Cs::latin7,
    Cs::macce,    Cs::cp1250,  // 40-44
    Cs::utf8mb4,  Cs::utf8mb4,  Cs::latin1,
    Cs::latin1,   Cs::latin1,  // 45-49
    Cs::cp1251,   Cs::cp1251,   Cs::cp1251,
    Cs::macroman, Cs::utf16,  // 50-54
    Cs::utf16,    Cs::utf16le,  Cs::cp1256,
    Cs::cp1257,   Cs::cp1257,  // 55-59
    Cs::utf32,    Cs::utf32,    Cs::utf16le,
    Cs::binary,   Cs::armscii8,  // 60-64
    Cs::ascii,    Cs::cp1250,   Cs::cp1256,
    Cs::cp866,    Cs::dec8,  // 65-69
    Cs::greek,    Cs::hebrew,   Cs::hp8,
    Cs::keybcs2,  Cs::koi8r,  // 70-74
    Cs::koi8u,    Cs::utf8mb3,  Cs::latin2,
    Cs::latin5,   Cs::latin7,  // 75-79 (76: MySQL 8 utf8mb3_tolower_ci)
    Cs::cp850,    Cs::cp852,    Cs::swe7,
    Cs::utf8mb3,  Cs::big5,  // 80-84
    Cs::euckr,    Cs::gb2312,   Cs::gbk,
    Cs::sjis,     Cs::tis620,  // 85-89
    Cs::ucs2,     Cs::ujis,     Cs::geostd8,
    Cs::geostd8,  Cs::latin1,  // 90-94
    Cs::cp932,    Cs::cp932,    Cs::eucjpms,
    Cs::eucjpms,  Cs::cp1250,  // 95-99
};

Cs collation_charset(std::uint32_t id) noexcept {
  if (id < 100) return kLow[id] == Cs::count_ ? Cs::utf8mb4 : kLow[id];
  if (id >= 101 && id <= 124) return Cs::utf16;    // utf16_unicode_ci .. utf16_unicode_520_ci
  if (id >= 128 && id <= 151) return Cs::ucs2;     // ucs2_unicode_ci ..
  if (id == 159) return Cs::ucs2;                  // ucs2_general_mysql500_ci
  if (id >= 160 && id <= 183) return Cs::utf32;    // utf32_unicode_ci ..
  if (id >= 192 && id <= 215) return Cs::utf8mb3;  // utf8mb3_unicode_ci ..
  if (id == 223) return Cs::utf8mb3;               // utf8mb3_general_mysql500_ci
  if (id >= 224 && id <= 247) return Cs::utf8mb4;  // utf8mb4_unicode_ci ..
  if (id >= 248 && id <= 250) return Cs::gb18030;  // MySQL gb18030_*
  if (id >= 255 && id <= 511) return Cs::utf8mb4;  // MySQL 8 utf8mb4_0900_* (255..323)
  // MariaDB "page 2" collations (m_ctype.h MY_PAGE2_COLLATION_ID_*).
  if (id >= 0x240 && id < 0x260) return Cs::utf8mb3;
  if (id >= 0x260 && id < 0x280) return Cs::utf8mb4;
  if (id >= 0x280 && id < 0x2a0) return Cs::ucs2;
  if (id >= 0x2a0 && id < 0x2c0) return Cs::utf16;
  if (id >= 0x2c0 && id < 0x2e0) return Cs::utf16le;
  if (id >= 0x2e0 && id < 0x300) return Cs::utf32;
  // MariaDB NO PAD variants: the PAD SPACE collation's id + 1024.
  if (id >= 1024 && id < 2048) return collation_charset(id - 1024);
  // MariaDB 10.10+ UCA-14.0.0 collations: 1ccc tttt tPST, ccc = charset.
  if (id >= 2048 && id <= 4095) {
    switch ((id >> 8) & 7) {
      case 0:
        return Cs::utf8mb3;
      case 1:
        return Cs::utf8mb4;
      case 2:
        return Cs::ucs2;
      case 3:
        return Cs::utf16;
      case 4:
        return Cs::utf32;
      default:
        break;
    }
  }
  return Cs::utf8mb4;
}

// MySQL's latin1 is Windows-1252, with 81 8d 8f 90 9d mapped to the C1 controls.
constexpr std::uint16_t kCp1252High[32] = {
    0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008d, 0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022,
    0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178};

using columns_detail::ascii_end;

// One iconv descriptor per charset and thread, opened on first use.
class IconvCache {
 public:
  IconvCache() { handles_.fill(kUnopened); }
  ~IconvCache() {
    for (iconv_t h : handles_)
      if (h != kUnopened && h != kFailed) iconv_close(h);
  }
  IconvCache(const IconvCache&) = delete;
  IconvCache& operator=(const IconvCache&) = delete;

  // nullptr-equivalent kFailed when glibc has no converter for this charset.
  iconv_t get(Cs cs) {
    iconv_t& h = handles_[static_cast<std::size_t>(cs)];
    if (h == kUnopened) {
      h = iconv_open("UTF-8", kCharsets[static_cast<std::size_t>(cs)].iconv);
      if (h == reinterpret_cast<iconv_t>(-1)) h = kFailed;
    }
    return h;
  }
  std::string& scratch() { return scratch_; }

  static inline const iconv_t kUnopened = reinterpret_cast<iconv_t>(-2);
  static inline const iconv_t kFailed = reinterpret_cast<iconv_t>(-1);

 private:
  std::array<iconv_t, static_cast<std::size_t>(Cs::count_)> handles_{};
  std::string scratch_;
};

IconvCache& iconv_cache() {
  thread_local IconvCache cache;
  return cache;
}

// Charsets whose bytes are UTF-8 already (or taken as such): they go out unconverted.
bool passes_through(Cs cs) noexcept {
  return cs == Cs::utf8mb4 || cs == Cs::utf8mb3 || cs == Cs::ascii || cs == Cs::binary || cs == Cs::filename;
}

// The one charset -> UTF-8 converter (append_utf8, append_text_json). Hands `emit` the result
// in order: emit.text(piece) for well-formed UTF-8 pieces, emit.bad(byte) for each byte the
// charset cannot decode; emit.bad returns false to stop (BadBytes::refuse), and then so does
// this. `strict`: BadBytes::refuse's reading of the charsets (columns.h).
template <class Emit>
bool convert_to_utf8(std::string_view s, Cs cs, bool strict, Emit& emit) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  if (passes_through(cs)) {
    if (strict && (cs == Cs::binary || cs == Cs::filename)) return false;
    // Well-formed stretches (ASCII runs and UTF-8 sequences) go out in one piece each.
    std::size_t i = 0, from = 0;
    while (i < n) {
      i = ascii_end(p, i, n);
      if (i == n) break;
      const std::size_t len = utf8_sequence_length(p, i, n);
      if (len != 0 && !(strict && (cs == Cs::ascii || (cs == Cs::utf8mb3 && len == 4)))) {
        i += len;
        continue;
      }
      if (i > from) emit.text(s.substr(from, i - from));
      if (!emit.bad(p[i])) return false;
      from = ++i;
    }
    if (n > from) emit.text(s.substr(from));
    return true;
  }
  if (cs == Cs::latin1) {
    std::size_t i = 0;
    while (i < n) {
      const std::size_t j = ascii_end(p, i, n);
      if (j > i) emit.text(s.substr(i, j - i));
      if (j == n) break;
      const unsigned char c = p[j];
      char b[3];
      std::size_t k = 0;
      append_utf8_codepoint(b, k, c < 0xa0 ? kCp1252High[c - 0x80] : c);
      emit.text(std::string_view(b, k));
      i = j + 1;
    }
    return true;
  }
  IconvCache& cache = iconv_cache();
  iconv_t cd = kCharsets[static_cast<std::size_t>(cs)].iconv == nullptr ? IconvCache::kFailed : cache.get(cs);
  if (cd == IconvCache::kFailed) {
    if (strict) return false;
    // A charset glibc does not know: ASCII passes, every other byte is undecodable.
    std::size_t i = 0;
    while (i < n) {
      const std::size_t j = ascii_end(p, i, n);
      if (j > i) emit.text(s.substr(i, j - i));
      if (j == n) break;
      if (!emit.bad(p[j])) return false;
      i = j + 1;
    }
    return true;
  }
  iconv(cd, nullptr, nullptr, nullptr, nullptr);  // initial shift state
  std::string& buf = cache.scratch();
  char* src = const_cast<char*>(s.data());  // iconv's signature; the input is not written
  std::size_t src_left = n;
  while (src_left > 0) {
    const std::size_t want = src_left * 4 + 16;  // bounded by the input actually present
    if (buf.size() < want) buf.resize(want);
    char* dst = buf.data();
    std::size_t dst_left = buf.size();
    const std::size_t rc = iconv(cd, &src, &src_left, &dst, &dst_left);
    if (dst_left < buf.size()) emit.text(std::string_view(buf.data(), buf.size() - dst_left));
    if (rc == static_cast<std::size_t>(-1)) {
      if (errno == E2BIG) continue;
      // EILSEQ (not decodable) or EINVAL (truncated sequence at the end): one byte is bad.
      if (!emit.bad(static_cast<unsigned char>(*src))) return false;
      ++src;
      --src_left;
      iconv(cd, nullptr, nullptr, nullptr, nullptr);
    }
  }
  return true;
}

// The JSON renderer's escaping of the converter's result.
struct JsonEmit {
  RenderBuf& out;
  void text(std::string_view s) { append_json_escaped(out, s); }
  bool bad(unsigned char b) {
    append_invalid_byte(out, b);
    return true;
  }
};

// append_utf8's: the UTF-8 as it is; a bad byte as the text \xHH, or a stop.
struct RawEmit {
  std::string& out;
  bool refuse;
  void text(std::string_view s) { out.append(s); }
  bool bad(unsigned char b) {
    if (refuse) return false;
    static constexpr char kHex[] = "0123456789abcdef";
    const char esc[4] = {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
    out.append(esc, 4);
    return true;
  }
};

}  // namespace

// ---- public ------------------------------------------------------------------------------------

const char* collation_charset_name(std::uint16_t collation) noexcept {
  return kCharsets[static_cast<std::size_t>(collation_charset(collation))].name;
}

int charset_max_bytes(std::string_view name) noexcept {
  if (name == "utf8") return 3;  // utf8mb3's old name
  for (const CsDef& c : kCharsets)
    if (name == c.name) return c.max_bytes;
  return 0;
}

int collation_max_bytes(std::uint16_t collation) noexcept {
  return kCharsets[static_cast<std::size_t>(collation_charset(collation))].max_bytes;
}

std::uint16_t charset_collation_id(std::string_view name) noexcept {
  // The default collation of each charset (ids shared by MySQL and MariaDB).
  struct Entry {
    std::string_view name;
    std::uint16_t id;
  };
  static constexpr Entry kDefaults[] = {
      {"big5", 1},      {"dec8", 3},      {"cp850", 4},     {"hp8", 6},       {"koi8r", 7},
      {"latin1", 8},    {"latin2", 9},    {"swe7", 10},     {"ascii", 11},    {"ujis", 12},
      {"sjis", 13},     {"hebrew", 16},   {"tis620", 18},   {"euckr", 19},    {"koi8u", 22},
      {"gb2312", 24},   {"greek", 25},    {"cp1250", 26},   {"gbk", 28},      {"latin5", 30},
      {"armscii8", 32}, {"utf8mb3", 33},  {"utf8", 33},     {"ucs2", 35},     {"cp866", 36},
      {"keybcs2", 37},  {"macce", 38},    {"macroman", 39}, {"cp852", 40},    {"latin7", 41},
      {"utf8mb4", 45},  {"cp1251", 51},   {"utf16le", 56},  {"utf16", 54},    {"cp1256", 57},
      {"cp1257", 59},   {"utf32", 60},    {"binary", 63},   {"geostd8", 92},  {"cp932", 95},
      {"eucjpms", 97},  {"gb18030", 248},
  };
  // A collation name starts with its charset's: "utf8mb4_0900_ai_ci", "latin1_bin". Longest
  // match wins (utf8mb4 over utf8, utf16le over utf16).
  std::uint16_t best = 0;
  std::size_t best_len = 0;
  for (const Entry& e : kDefaults) {
    if (name.size() < e.name.size() || e.name.size() <= best_len) continue;
    bool eq = true;
    for (std::size_t i = 0; i < e.name.size() && eq; ++i) {
      char c = name[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      eq = c == e.name[i];
    }
    if (!eq || (name.size() > e.name.size() && name[e.name.size()] != '_')) continue;
    best = e.id;
    best_len = e.name.size();
  }
  return best;
}

bool collation_is_utf8_compatible(std::uint16_t collation) noexcept {
  return passes_through(collation_charset(collation));
}

void append_text_json(RenderBuf& out, std::string_view bytes, std::uint16_t collation) {
  out.push_back('"');
  const Cs cs = collation_charset(collation);
  if (passes_through(cs)) {
    // Nothing to convert: the escaper finds the ill-formed bytes itself, as hex_text would.
    append_json_string_body(out, bytes);
  } else {
    JsonEmit emit{out};
    convert_to_utf8(bytes, cs, false, emit);
  }
  out.push_back('"');
}

bool append_utf8(std::string& out, std::string_view bytes, std::uint16_t collation, BadBytes policy) {
  const std::size_t mark = out.size();
  const bool refuse = policy == BadBytes::refuse;
  RawEmit emit{out, refuse};
  if (convert_to_utf8(bytes, collation_charset(collation), refuse, emit)) return true;
  out.resize(mark);
  return false;
}

}  // namespace binlogctl
