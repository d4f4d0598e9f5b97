// The one statement classifier (statement_kind.h): every consumer that needs to know what a
// QUERY event's statement means (verify, convert, Canal, stats, replay) asks here. It reads the
// statement with the library's one SQL lexer (base/sql_lexer.h).
#include <binlogctl/statement_kind.h>

#include "sql_lexer.h"

namespace binlogctl {

namespace {

using sql_lexer::Lexer;
using sql_lexer::Tok;
using sql_lexer::Token;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The first two tokens of a statement (comments skipped, versioned comments read as SQL); a
// token that is not there is left a punct with no text, which matches no keyword.
struct Leading {
  Token w1, w2;
  std::size_t end = 0;  // offset past w2 (or past w1 when there is no w2)
};
void leading(std::string_view sql, Leading& l) {
  Lexer lex(sql);
  if (!lex.next(l.w1, false)) return;
  l.end = lex.pos();
  if (lex.next(l.w2, false)) l.end = lex.pos();
}

}  // namespace

StatementKind classify_statement(std::string_view sql) noexcept {
  Leading l;
  leading(sql, l);
  const Token& w1 = l.w1;
  const Token& w2 = l.w2;
  if (w1.is_kw("BEGIN")) return StatementKind::begin;
  if (w1.is_kw("START") && w2.is_kw("TRANSACTION")) return StatementKind::begin;
  if (w1.is_kw("COMMIT")) return StatementKind::commit;
  if (w1.is_kw("ROLLBACK")) return w2.is_kw("TO") ? StatementKind::savepoint : StatementKind::rollback;
  if (w1.is_kw("SAVEPOINT") || (w1.is_kw("RELEASE") && w2.is_kw("SAVEPOINT"))) return StatementKind::savepoint;
  if (w1.is_kw("XA")) {
    if (w2.is_kw("START") || w2.is_kw("BEGIN")) return StatementKind::xa_start;
    if (w2.is_kw("END")) return StatementKind::xa_end;
    if (w2.is_kw("PREPARE")) return StatementKind::xa_prepare;
    if (w2.is_kw("COMMIT") || w2.is_kw("ROLLBACK")) return StatementKind::xa_finish;
    return StatementKind::other;
  }
  if (w1.is_kw("CREATE") || w1.is_kw("ALTER") || w1.is_kw("DROP") || w1.is_kw("RENAME") || w1.is_kw("TRUNCATE") ||
      w1.is_kw("GRANT") || w1.is_kw("REVOKE"))
    return StatementKind::ddl;
  return StatementKind::other;
}

std::string_view xa_statement_xid(std::string_view sql) noexcept {
  // XA, then START / END / PREPARE / COMMIT / ROLLBACK, then the xid as written.
  Lexer lex(sql);
  Token t;
  lex.next(t, false);
  lex.next(t, false);
  lex.skip_space();
  std::string_view rest = sql.substr(std::min(lex.pos(), sql.size()));
  while (!rest.empty() && (is_space(rest.back()) || rest.back() == ';')) rest.remove_suffix(1);
  // Trailing keywords after the xid (ONE PHASE, SUSPEND [FOR MIGRATE], JOIN, RESUME).
  for (std::string_view suffix : {" ONE PHASE", " FOR MIGRATE", " SUSPEND", " JOIN", " RESUME"}) {
    if (rest.size() >= suffix.size() && sql_lexer::iequals(rest.substr(rest.size() - suffix.size()), suffix)) {
      rest.remove_suffix(suffix.size());
      while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
    }
  }
  return rest;
}

bool xa_statement_is_rollback(std::string_view sql) noexcept {
  Leading l;
  leading(sql, l);
  return l.w2.is_kw("ROLLBACK");
}

bool xa_statement_one_phase(std::string_view sql) noexcept {
  std::string_view x = xa_statement_xid(sql);
  const std::size_t end = static_cast<std::size_t>(x.data() - sql.data()) + x.size();
  Leading l;
  leading(sql.substr(end), l);
  return l.w1.is_kw("ONE") && l.w2.is_kw("PHASE");
}

const char* statement_kind_name(StatementKind k) noexcept {
  switch (k) {
    case StatementKind::begin: return "begin";
    case StatementKind::commit: return "commit";
    case StatementKind::rollback: return "rollback";
    case StatementKind::savepoint: return "savepoint";
    case StatementKind::xa_start: return "xa_start";
    case StatementKind::xa_end: return "xa_end";
    case StatementKind::xa_prepare: return "xa_prepare";
    case StatementKind::xa_finish: return "xa_finish";
    case StatementKind::ddl: return "ddl";
    case StatementKind::other: return "other";
  }
  return "other";
}

}  // namespace binlogctl
