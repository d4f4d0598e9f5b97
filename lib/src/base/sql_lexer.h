// The one SQL lexer of the library: statement text -> tokens, with MySQL's and MariaDB's comment
// forms (/* */, versioned /*!NNNNN */ and /*M!NNNNNN */ read as SQL, "-- " with a blank or a
// control byte after the dashes, #), quoted identifiers (`a``b`), strings ('..', "..", N'..',
// X'..', B'..', _charset'..', backslash escapes) and numbers. Every reader of statement text
// uses it: the schema history's DDL parser (schema.cpp, and ddl_targets in schema.h), the
// statement classifier (statement_kind.cpp) and Canal's statement typing (canal_mapper.cpp).
//
// It pulls tokens on demand, so a reader can look at the first keyword of a 10 MB INSERT and stop
// there; nothing recurses and every call consumes input or stops.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl::sql_lexer {

inline char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c; }

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// Unquoted identifiers: ASCII letters, digits, '_', '$' and any non-ASCII byte (UTF-8 names).
inline bool is_ident_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || is_digit(c) || u == '_' || u == '$' ||
         u >= 0x80;
}

// ---------------------------------------------------------------------------------------------
// Tokens

enum class Tok : std::uint8_t {
  word,    // unquoted identifier or keyword
  quoted,  // `identifier`
  string,  // '...', "...", N'...', _charset'...', X'...', B'...'
  number,
  punct,  // any other single byte
};

struct Token {
  Tok kind = Tok::punct;
  std::string_view raw;  // the token's source text (a view into the statement)
  std::string text;      // quoted/string: the value, unquoted and unescaped

  std::string_view value() const {
    return (kind == Tok::quoted || kind == Tok::string) ? std::string_view(text) : raw;
  }
  bool is_kw(std::string_view w) const { return kind == Tok::word && iequals(raw, w); }
  bool is_punct(char c) const { return kind == Tok::punct && raw.size() == 1 && raw[0] == c; }
  bool is_name() const { return kind == Tok::word || kind == Tok::quoted || kind == Tok::string; }
};

// ---------------------------------------------------------------------------------------------
// Lexer

class Lexer {
 public:
  // How /*!NNNNN ... */ and /*M!NNNNNN ... */ are read: `open` (their content is SQL, as the
  // servers read it) or `comment` (skipped like any comment: Canal's reading of a statement,
  // which the canal formats reproduce).
  enum class Versioned : std::uint8_t { open, comment };
  explicit Lexer(std::string_view s, Versioned v = Versioned::open) : s_(s), open_versioned_(v == Versioned::open) {}

  // Moves past whitespace and comments. A versioned comment (/*!NNNNN ... */, MariaDB's
  // /*M!NNNNNN ... */) is opened rather than skipped: its content is SQL for us whatever the
  // version, as a dump's /*!50100 PARTITION BY ... */ or /*!80023 INVISIBLE */ belongs to the
  // definition it sits in. The matching */ then closes it.
  void skip_space() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (is_space(c)) {
        ++pos_;
      } else if (c == '#') {
        skip_to_eol();
      } else if (c == '-' && at(1) == '-' &&
                 (pos_ + 2 >= s_.size() || static_cast<unsigned char>(s_[pos_ + 2]) <= ' ')) {
        skip_to_eol();  // "-- " comments need the blank: "1--2" is arithmetic
      } else if (c == '/' && at(1) == '*') {
        if (open_versioned_ && (at(2) == '!' || (at(2) == 'M' && at(3) == '!'))) {
          pos_ += at(2) == '!' ? 3 : 4;
          while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;  // the version number
          ++versioned_;
        } else {
          const std::size_t e = s_.find("*/", pos_ + 2);
          pos_ = e == std::string_view::npos ? s_.size() : e + 2;
        }
      } else if (c == '*' && versioned_ > 0 && at(1) == '/') {
        pos_ += 2;
        --versioned_;
      } else {
        break;
      }
    }
  }

  // True at the end of the text (after whitespace and comments).
  bool done() {
    skip_space();
    return pos_ >= s_.size();
  }
  // True when the text at the current position (after skip_space) begins with `d`.
  bool starts_with(std::string_view d) const {
    return !d.empty() && s_.substr(pos_).starts_with(d);
  }
  void advance(std::size_t n) { pos_ = std::min(s_.size(), pos_ + n); }
  // The current offset in the text (after the last token read, or after skip_space).
  std::size_t pos() const noexcept { return pos_; }

  // The mysql client finds its delimiter at any byte outside quotes and comments, so "END$$"
  // ends a statement under DELIMITER $$ although '$' is an identifier character. Cuts a bare
  // token at an embedded delimiter and moves back to it; false when the token holds none.
  bool cut_at_delimiter(Token& t, std::string_view d) {
    if (t.kind == Tok::quoted || t.kind == Tok::string || d.empty()) return false;
    const std::size_t k = t.raw.find(d);
    if (k == std::string_view::npos || k == 0) return false;
    pos_ = static_cast<std::size_t>(t.raw.data() - s_.data()) + k;
    t.raw = t.raw.substr(0, k);
    return true;
  }

  // mysql client command argument: the next blank-separated word on this line; the rest of the
  // line is dropped (as the client does for DELIMITER).
  std::string_view line_argument() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    const std::size_t b = pos_;
    while (pos_ < s_.size() && !is_space(s_[pos_])) ++pos_;
    const std::string_view word = s_.substr(b, pos_ - b);
    skip_line();
    return word;
  }

  // Drops the rest of the line (a client command such as MariaDB 11's "/*!999999\- enable the
  // sandbox mode */"), closing any versioned comment that ends on it.
  void skip_line() {
    while (pos_ < s_.size() && s_[pos_] != '\n') {
      if (versioned_ > 0 && s_[pos_] == '*' && at(1) == '/') {
        --versioned_;
        ++pos_;
      }
      ++pos_;
    }
  }

  // Reads the next token. With keep_text false the value of strings is not built (statements
  // that are only being skipped).
  bool next(Token& t, bool keep_text = true) {
    skip_space();
    if (pos_ >= s_.size()) return false;
    const std::size_t start = pos_;
    const char c = s_[pos_];
    t.text.clear();
    if (c == '`') {
      t.kind = Tok::quoted;
      read_quoted(t.text, '`', false, keep_text);
    } else if (c == '\'' || c == '"') {
      t.kind = Tok::string;
      read_quoted(t.text, c, true, keep_text);
    } else if (is_ident_char(c)) {
      lex_word_or_number(t, keep_text);
    } else if (c == '.' && is_digit(at(1)) && !after_name_) {
      t.kind = Tok::number;  // .5 (but t.5col is a qualified name)
      ++pos_;
      lex_digits_fraction_exponent();
    } else {
      t.kind = Tok::punct;
      ++pos_;
    }
    t.raw = s_.substr(start, pos_ - start);
    after_name_ = t.kind == Tok::word || t.kind == Tok::quoted || t.is_punct(')');
    return true;
  }

 private:
  char at(std::size_t k) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }

  void skip_to_eol() {
    const std::size_t e = s_.find('\n', pos_);
    pos_ = e == std::string_view::npos ? s_.size() : e + 1;
  }

  // pos_ is on the opening quote. A doubled quote stands for itself; with `escapes` (strings,
  // not identifiers) a backslash escapes the next byte as MySQL does without
  // NO_BACKSLASH_ESCAPES. An unterminated literal runs to the end of the text.
  void read_quoted(std::string& out, char q, bool escapes, bool keep) {
    ++pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == q) {
        if (at(1) == q) {
          if (keep) out.push_back(q);
          pos_ += 2;
          continue;
        }
        ++pos_;
        return;
      }
      if (escapes && c == '\\' && pos_ + 1 < s_.size()) {
        const char e = s_[pos_ + 1];
        pos_ += 2;
        if (!keep) continue;
        // \% and \_ keep their backslash: they are LIKE escapes, not string escapes.
        static constexpr std::string_view kFrom = "0bnrtZ";
        static constexpr std::string_view kTo{"\0\b\n\r\t\x1a", 6};
        if (e == '%' || e == '_') out.push_back('\\');
        const std::size_t k = kFrom.find(e);
        out.push_back(k == std::string_view::npos ? e : kTo[k]);
        continue;
      }
      if (keep) out.push_back(c);
      ++pos_;
    }
  }

  void lex_digits_fraction_exponent() {
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    if (at(0) == '.') {
      ++pos_;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    }
    pos_ = exponent_end(pos_);
  }

  // End of an exponent ("e5", "E-3") starting at k, or k when there is none.
  std::size_t exponent_end(std::size_t k) const {
    if (k >= s_.size() || (s_[k] != 'e' && s_[k] != 'E')) return k;
    std::size_t m = k + 1;
    if (m < s_.size() && (s_[m] == '+' || s_[m] == '-')) ++m;
    if (m >= s_.size() || !is_digit(s_[m])) return k;
    while (m < s_.size() && is_digit(s_[m])) ++m;
    return m;
  }

  void lex_word_or_number(Token& t, bool keep) {
    std::size_t j = pos_;
    while (j < s_.size() && is_ident_char(s_[j])) ++j;
    const std::string_view run = s_.substr(pos_, j - pos_);
    const char q = j < s_.size() ? s_[j] : '\0';
    if (q == '\'' && run.size() == 1) {
      const char p = ascii_lower(run[0]);
      if (p == 'n' || p == 'x' || p == 'b') {  // N'national', X'hex', B'bits'
        pos_ = j;
        t.kind = Tok::string;
        read_quoted(t.text, '\'', p == 'n', keep);
        if (p == 'x' && keep) t.text = decode_hex(t.text);
        return;
      }
    }
    if ((q == '\'' || q == '"') && run.size() > 1 && run[0] == '_') {
      pos_ =
          j;  // _utf8mb4'x': the charset introducer says how to read the bytes, not what they are
      t.kind = Tok::string;
      read_quoted(t.text, q, true, keep);
      return;
    }
    if (is_digit(run[0])) {
      std::size_t k = pos_;
      while (k < j && is_digit(s_[k])) ++k;
      if (k == j) {  // all digits: a number, maybe with a fraction and an exponent
        t.kind = Tok::number;
        lex_digits_fraction_exponent();
        return;
      }
      const std::size_t e = exponent_end(k);
      const bool hex = run.size() > 2 && run[0] == '0' && (run[1] == 'x' || run[1] == 'X') &&
                       std::all_of(run.begin() + 2, run.end(), is_hex_digit);
      const bool bin = run.size() > 2 && run[0] == '0' && (run[1] == 'b' || run[1] == 'B') &&
                       run.find_first_not_of("01", 2) == std::string_view::npos;
      if (hex || bin || (e > k && e >= j)) {
        t.kind = Tok::number;
        pos_ = hex || bin ? j : e;
        return;
      }
      // otherwise an identifier that starts with digits, such as 1st_col
    }
    t.kind = Tok::word;
    pos_ = j;
  }

  static std::string decode_hex(std::string_view h) {
    auto nibble = [](char c) { return is_digit(c) ? c - '0' : (ascii_lower(c) - 'a' + 10); };
    std::string out;
    std::size_t i = h.size() % 2;  // an odd count has an implied leading 0
    if (i == 1 && is_hex_digit(h[0])) out.push_back(static_cast<char>(nibble(h[0])));
    for (; i + 1 < h.size(); i += 2) {
      if (!is_hex_digit(h[i]) || !is_hex_digit(h[i + 1])) break;
      out.push_back(static_cast<char>(nibble(h[i]) * 16 + nibble(h[i + 1])));
    }
    return out;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::size_t versioned_ = 0;  // versioned comments open around the current position
  bool after_name_ = false;    // the previous token could be qualified by a following '.'
  bool open_versioned_ = true;
};

}  // namespace binlogctl::sql_lexer
