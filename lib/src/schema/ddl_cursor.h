// The DDL parser's shared parts (schema.cpp's StatementParser, ddl_targets.cpp, column_reader.cpp):
// DdlCursor, the tokens of one statement (base/sql_lexer.h) and a position in them with the reads
// every part shares. Reads are bounded: past the statement's end every read sees end_tok_, which
// matches no keyword and no punctuation, and every loop over the tokens consumes one per turn.
#pragma once

#include "base/sql_lexer.h"

#include <binlogctl/schema.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace binlogctl::ddl {

using namespace sql_lexer;

// MySQL and MariaDB refuse tables with more columns; a statement declaring more is not one a
// server logged, so it is unreadable rather than a reason to do unbounded work.
inline constexpr std::size_t kMaxColumns = 4096;
// ALTER TABLE specs per statement: enough for one spec per column of the widest table, twice.
inline constexpr std::size_t kMaxAlterSpecs = 2 * kMaxColumns;

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

class DdlCursor {
 public:
  DdlCursor(std::string_view db, const std::vector<Token>& toks) : db_(db), toks_(toks) {
    // A ';' ends the statement: whatever follows is not part of it.
    end_ = toks.size();
    for (std::size_t i = 0; i < toks.size(); ++i) {
      if (toks[i].is_punct(';')) {
        end_ = i;
        break;
      }
    }
  }

 protected:
  const Token& peek(std::size_t k = 0) const {
    return pos_ + k < end_ ? toks_[pos_ + k] : end_tok_;
  }
  bool at_end() const { return pos_ >= end_; }
  void next() {
    if (pos_ < end_) ++pos_;
  }
  void skip_rest() { pos_ = end_; }
  bool kw(std::string_view w, std::size_t k = 0) const { return peek(k).is_kw(w); }
  bool punct(char c, std::size_t k = 0) const { return peek(k).is_punct(c); }
  bool accept(std::string_view w) {
    if (!kw(w)) return false;
    next();
    return true;
  }
  bool accept(char c) {
    if (!punct(c)) return false;
    next();
    return true;
  }
  // CHARACTER SET | CHARSET | CHAR SET
  bool accept_charset_keyword() {
    if (accept("CHARSET")) return true;
    if (!(kw("CHARACTER") || kw("CHAR")) || !kw("SET", 1)) return false;
    pos_ += 2;
    return true;
  }
  bool accept_if_exists() {
    if (!kw("IF") || !kw("EXISTS", 1)) return false;
    pos_ += 2;
    return true;
  }
  bool accept_if_not_exists() {
    if (!kw("IF") || !kw("NOT", 1) || !kw("EXISTS", 2)) return false;
    pos_ += 3;
    return true;
  }
  // An identifier: bare, `quoted`, or a string (names in "..." under ANSI_QUOTES, and what
  // some clients write).
  // NUL is not allowed in identifiers (and would make the db + '\0' + table keys ambiguous).
  bool name(std::string& out) {
    if (!peek().is_name() || peek().value().find('\0') != std::string_view::npos) return false;
    out.assign(peek().value());
    next();
    return true;
  }
  // [db.]name, db defaulting to def_db.
  bool qualified(std::string_view def_db, std::string& db, std::string& table) {
    std::string first;
    if (!name(first)) return false;
    if (punct('.') && peek(1).is_name()) {
      next();
      db = std::move(first);
      return name(table);
    }
    db.assign(def_db);
    table = std::move(first);
    return true;
  }
  // On '(': moves past the matching ')' (or to the end); otherwise past one token.
  void skip_group() {
    if (!punct('(')) {
      next();
      return;
    }
    std::size_t depth = 0;
    while (!at_end()) {
      if (punct('(')) {
        ++depth;
      } else if (punct(')')) {
        if (--depth == 0) {
          next();
          return;
        }
      }
      next();
    }
  }
  // Moves to the next ',' or ')' outside parentheses (not consumed), or to the end.
  void skip_item() {
    std::size_t depth = 0;
    while (!at_end()) {
      if (punct('(')) {
        ++depth;
      } else if (punct(')')) {
        if (depth == 0) return;
        --depth;
      } else if (punct(',') && depth == 0) {
        return;
      }
      next();
    }
  }
  // A string literal; adjacent literals concatenate ('a' 'b' is 'ab').
  bool read_string(std::string& out) {
    if (peek().kind != Tok::string) return false;
    out.clear();
    while (peek().kind == Tok::string) {
      out += peek().text;
      next();
    }
    return true;
  }
  // A DEFAULT / ON UPDATE value: operand (operator operand)*. Parenthesised parts go whole; a
  // word followed by a string is a typed literal (DATE '...', _latin1 'x').
  void skip_expr() {
    auto is_prefix = [](const Token& t) {
      return t.is_punct('-') || t.is_punct('+') || t.is_punct('~') || t.is_punct('!');
    };
    auto is_binary = [](const Token& t) {
      return t.kind == Tok::punct && t.raw.size() == 1 &&
             std::string_view("+-*/%&|^<>=").find(t.raw[0]) != std::string_view::npos;
    };
    while (!at_end()) {
      while (is_prefix(peek())) next();
      const Token& t = peek();
      if (t.is_punct('(')) {
        skip_group();
      } else if (t.kind == Tok::string) {
        while (peek().kind == Tok::string) next();
      } else if (t.kind == Tok::number || t.kind == Tok::quoted) {
        next();
      } else if (t.kind == Tok::word) {
        const bool next_value = t.is_kw("NEXT") && kw("VALUE", 1);  // MariaDB NEXT VALUE FOR seq
        next();
        if (next_value) {
          next();
          accept("FOR");
          std::string d, n;
          qualified({}, d, n);
        } else if (punct('(')) {
          skip_group();
        } else if (peek().kind == Tok::string) {
          next();
        }
      } else {
        return;
      }
      if (!is_binary(peek())) return;
      while (is_binary(peek())) next();
    }
  }


  std::string_view db_;
  const std::vector<Token>& toks_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  Token end_tok_;  // returned past the end: matches no keyword and no punctuation
};

// What the statement of `toks` acts on (ddl_targets in schema.h, from tokens). ddl_targets.cpp.
DdlTargets read_ddl_targets(std::string_view db, const std::vector<Token>& toks);

}  // namespace binlogctl::ddl
