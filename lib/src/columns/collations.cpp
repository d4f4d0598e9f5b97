// Collation id -> name, as SHOW COLLATION lists them (ids shared by MySQL and MariaDB).
#include "dump/info.h"

#include <array>
#include <string>

namespace binlogctl {
namespace {

constexpr const char* kSingle[100] = {
    nullptr, "big5_chinese_ci", "latin2_czech_cs", "dec8_swedish_ci", "cp850_general_ci",
    "latin1_german1_ci", "hp8_english_ci", "koi8r_general_ci", "latin1_swedish_ci",
    "latin2_general_ci", "swe7_swedish_ci", "ascii_general_ci", "ujis_japanese_ci",
    "sjis_japanese_ci", "cp1251_bulgarian_ci", "latin1_danish_ci", "hebrew_general_ci", nullptr,
    "tis620_thai_ci", "euckr_korean_ci", "latin7_estonian_cs", "latin2_hungarian_ci",
    "koi8u_general_ci", "cp1251_ukrainian_ci", "gb2312_chinese_ci", "greek_general_ci",
    "cp1250_general_ci", "latin2_croatian_ci", "gbk_chinese_ci", "cp1257_lithuanian_ci",
    "latin5_turkish_ci", "latin1_german2_ci", "armscii8_general_ci", "utf8mb3_general_ci",
    "cp1250_czech_cs", "ucs2_general_ci", "cp866_general_ci", "keybcs2_general_ci",
    "macce_general_ci", "macroman_general_ci", "cp852_general_ci", "latin7_general_ci",
    "latin7_general_cs", "macce_bin", "cp1250_croatian_ci", "utf8mb4_general_ci", "utf8mb4_bin",
    "latin1_bin", "latin1_general_ci", "latin1_general_cs", "cp1251_bin", "cp1251_general_ci",
    "cp1251_general_cs", "macroman_bin", "utf16_general_ci", "utf16_bin", "utf16le_general_ci",
    "cp1256_general_ci", "cp1257_bin", "cp1257_general_ci", "utf32_general_ci", "utf32_bin",
    "utf16le_bin", "binary", "armscii8_bin", "ascii_bin", "cp1250_bin", "cp1256_bin", "cp866_bin",
    "dec8_bin", "greek_bin", "hebrew_bin", "hp8_bin", "keybcs2_bin", "koi8r_bin", "koi8u_bin",
    "utf8mb3_tolower_ci", "latin2_bin", "latin5_bin", "latin7_bin", "cp850_bin", "cp852_bin",
    "swe7_bin", "utf8mb3_bin", "big5_bin", "euckr_bin", "gb2312_bin", "gbk_bin", "sjis_bin",
    "tis620_bin", "ucs2_bin", "ujis_bin", "geostd8_general_ci", "geostd8_bin",
    "latin1_spanish_ci", "cp932_japanese_ci", "cp932_bin", "eucjpms_japanese_ci", "eucjpms_bin",
    "cp1250_polish_ci"};

// The Unicode collation families share one order of languages.
constexpr const char* kLangs[24] = {
    "unicode_ci", "icelandic_ci", "latvian_ci", "romanian_ci", "slovenian_ci", "polish_ci",
    "estonian_ci", "spanish_ci", "swedish_ci", "turkish_ci", "czech_ci", "danish_ci",
    "lithuanian_ci", "slovak_ci", "spanish2_ci", "roman_ci", "persian_ci", "esperanto_ci",
    "hungarian_ci", "sinhala_ci", "german2_ci", "croatian_ci", "unicode_520_ci", "vietnamese_ci"};

struct Family {
  std::uint32_t first;
  const char* charset;
};
constexpr Family kFamilies[] = {{101, "utf16"}, {128, "ucs2"}, {160, "utf32"}, {192, "utf8mb3"}, {224, "utf8mb4"}};

// Names built once, kept for the program's life (the function hands out const char*).
struct UnicodeNames {
  std::array<std::string, 256> names;
  UnicodeNames() {
    for (const Family& f : kFamilies)
      for (std::uint32_t i = 0; i < 24; ++i) names[f.first + i] = std::string(f.charset) + "_" + kLangs[i];
    names[255] = "utf8mb4_0900_ai_ci";
  }
};

}  // namespace

const char* collation_name(std::uint32_t id, Flavor) noexcept {
  if (id < 100) return kSingle[id];
  if (id < 256) {
    static const UnicodeNames u;
    const std::string& s = u.names[id];
    return s.empty() ? nullptr : s.c_str();
  }
  return nullptr;
}

}  // namespace binlogctl
