// canal_statement_event_type (canal.h): a statement's Canal EventType, read as Canal reads it.
#include <binlogctl/canal.h>

#include "base/sql_lexer.h"

#include "EntryProtocol.pb.h"

#include <cstddef>
#include <string_view>

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl {

namespace {

// Statements are read as Canal reads them: versioned comments (/*!NNNNN ... */) are comments.
using sql_lexer::Lexer;
using sql_lexer::Tok;
using sql_lexer::Token;
constexpr Lexer::Versioned kCanalComments = Lexer::Versioned::comment;

// The run of unquoted words that follows in `lex` (comments and whitespace skipped) into
// w[from..max); returns how many were read.
std::size_t leading_words(Lexer& lex, Token (&w)[4], std::size_t from, std::size_t max) {
  std::size_t k = from;
  while (k < max && lex.next(w[k], false) && w[k].kind == Tok::word) ++k;
  return k - from;
}

// The first alteration of ALTER TABLE, as Canal's DruidDdlParser classifies it (Canal keeps the
// type of the first DdlResult, one per alteration): RENAME [TO|AS] -> RENAME; ADD INDEX/KEY/
// FULLTEXT/SPATIAL, ADD UNIQUE, ADD PRIMARY KEY, ADD CONSTRAINT [name] UNIQUE|PRIMARY -> CINDEX;
// DROP INDEX/KEY -> DINDEX; anything else, and statements with table options, -> ALTER.
int alter_table_event_type(std::string_view sql) {
  Lexer lex(sql, kCanalComments);
  Token t;
  // Past ALTER [ONLINE|IGNORE] TABLE
  bool table = false;
  for (int words = 0; words < 4 && !table; ++words) {
    if (!lex.next(t, false) || t.kind != Tok::word) return canalpb::ALTER;
    table = t.is_kw("TABLE");
  }
  if (!table) return canalpb::ALTER;
  // and the (possibly quoted, qualified) table name: ident or `quoted`, joined by '.'.
  Token w[4];
  for (;;) {
    if (!lex.next(t, false)) return canalpb::ALTER;
    if (t.kind != Tok::word && t.kind != Tok::quoted) break;  // no name: what follows is read as is
    if (!lex.next(t, false)) return canalpb::ALTER;
    if (!t.is_punct('.')) break;
  }
  // t: the first token after the name; the alteration's leading words start there.
  std::size_t n = 0;
  if (t.kind == Tok::word) {
    w[n++] = std::move(t);
    n += leading_words(lex, w, n, 4);
  }
  const auto is = [&](std::size_t k, std::string_view kw) { return k < n && w[k].is_kw(kw); };
  if (is(0, "RENAME") && !is(1, "COLUMN") && !is(1, "INDEX") && !is(1, "KEY")) return canalpb::RENAME;
  if (is(0, "ADD")) {
    std::size_t k = 1;
    if (is(1, "CONSTRAINT")) k = is(2, "UNIQUE") || is(2, "PRIMARY") ? 2 : 3;
    if (is(k, "INDEX") || is(k, "KEY") || is(k, "FULLTEXT") || is(k, "SPATIAL") || is(k, "UNIQUE") || is(k, "PRIMARY"))
      return canalpb::CINDEX;
  }
  if (is(0, "DROP") && (is(1, "INDEX") || is(1, "KEY"))) return canalpb::DINDEX;
  return canalpb::ALTER;
}

}  // namespace

int canal_statement_event_type(std::string_view sql) noexcept {
  try {
    Lexer lex(sql, kCanalComments);
    Token w[4];
    const std::size_t n = leading_words(lex, w, 0, 4);
    if (n == 0) return canalpb::QUERY;
    const auto is = [&](std::size_t k, std::string_view kw) { return k < n && w[k].is_kw(kw); };
    if (is(0, "INSERT") || is(0, "REPLACE")) return canalpb::INSERT;
    if (is(0, "UPDATE")) return canalpb::UPDATE;
    if (is(0, "DELETE")) return canalpb::DELETE;
    if (is(0, "TRUNCATE")) return canalpb::TRUNCATE;
    if (is(0, "RENAME") && is(1, "TABLE")) return canalpb::RENAME;
    if (is(0, "CREATE")) {
      if (is(1, "INDEX") || is(2, "INDEX")) return canalpb::CINDEX;  // CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX
      if (is(1, "TABLE") || is(2, "TABLE")) return canalpb::CREATE;  // CREATE [TEMPORARY] TABLE
      if (is(1, "OR") && is(3, "TABLE")) return canalpb::CREATE;
      return canalpb::QUERY;
    }
    if (is(0, "ALTER") && (is(1, "TABLE") || is(2, "TABLE"))) return alter_table_event_type(sql);
    if (is(0, "DROP")) {
      if (is(1, "TABLE") || is(2, "TABLE")) return canalpb::ERASE;
      if (is(1, "INDEX")) return canalpb::DINDEX;
    }
    return canalpb::QUERY;
  } catch (...) {
    return canalpb::QUERY;
  }
}

}  // namespace binlogctl
