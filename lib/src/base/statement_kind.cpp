// The one statement classifier (statement_kind.h): every consumer that needs to know what a
// QUERY event's statement means (verify, convert, Canal, stats, replay) asks here.
#include <binlogctl/statement_kind.h>

namespace binlogctl {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Skips whitespace and comments. MySQL-specific comments (/*! ... */) hold code: their content
// is read as statement text.
std::size_t skip_noise(std::string_view s, std::size_t i) {
  for (;;) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (s.substr(i, 3) == "/*!" || s.substr(i, 3) == "/*M") {
      i += 3;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;  // version number
      continue;
    }
    if (s.substr(i, 2) == "/*") {
      const std::size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? s.size() : e + 2;
      continue;
    }
    if (s.substr(i, 3) == "-- " || (i < s.size() && s[i] == '#')) {
      const std::size_t e = s.find('\n', i);
      i = e == std::string_view::npos ? s.size() : e + 1;
      continue;
    }
    return i;
  }
}

// The next word (letters, digits, '_') upper-cased into buf; returns its end.
std::size_t next_word(std::string_view s, std::size_t i, char (&buf)[16], std::size_t& len) {
  i = skip_noise(s, i);
  len = 0;
  while (i < s.size()) {
    char c = s[i];
    const bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!word) break;
    if (len < sizeof buf) buf[len++] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
    ++i;
  }
  return i;
}

}  // namespace

StatementKind classify_statement(std::string_view sql) noexcept {
  char w1b[16], w2b[16];
  std::size_t n1 = 0, n2 = 0;
  const std::size_t i = next_word(sql, 0, w1b, n1);
  next_word(sql, i, w2b, n2);
  const std::string_view w1(w1b, n1), w2(w2b, n2);
  if (w1 == "BEGIN") return StatementKind::begin;
  if (w1 == "START" && w2 == "TRANSACTION") return StatementKind::begin;
  if (w1 == "COMMIT") return StatementKind::commit;
  if (w1 == "ROLLBACK") return w2 == "TO" ? StatementKind::savepoint : StatementKind::rollback;
  if (w1 == "SAVEPOINT" || (w1 == "RELEASE" && w2 == "SAVEPOINT")) return StatementKind::savepoint;
  if (w1 == "XA") {
    if (w2 == "START" || w2 == "BEGIN") return StatementKind::xa_start;
    if (w2 == "END") return StatementKind::xa_end;
    if (w2 == "PREPARE") return StatementKind::xa_prepare;
    if (w2 == "COMMIT" || w2 == "ROLLBACK") return StatementKind::xa_finish;
    return StatementKind::other;
  }
  if (w1 == "CREATE" || w1 == "ALTER" || w1 == "DROP" || w1 == "RENAME" || w1 == "TRUNCATE" ||
      w1 == "GRANT" || w1 == "REVOKE")
    return StatementKind::ddl;
  return StatementKind::other;
}

std::string_view xa_statement_xid(std::string_view sql) noexcept {
  char w[16];
  std::size_t n = 0;
  std::size_t i = next_word(sql, 0, w, n);  // XA
  i = next_word(sql, i, w, n);              // START / END / PREPARE / COMMIT / ROLLBACK
  i = skip_noise(sql, i);
  std::string_view rest = sql.substr(i < sql.size() ? i : sql.size());
  while (!rest.empty() && (is_space(rest.back()) || rest.back() == ';')) rest.remove_suffix(1);
  // Trailing keywords after the xid (ONE PHASE, SUSPEND [FOR MIGRATE], JOIN, RESUME).
  for (std::string_view suffix : {" ONE PHASE", " FOR MIGRATE", " SUSPEND", " JOIN", " RESUME"}) {
    if (rest.size() >= suffix.size()) {
      std::string_view tail = rest.substr(rest.size() - suffix.size());
      bool eq = true;
      for (std::size_t k = 0; k < tail.size(); ++k) {
        char c = tail[k];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
        if (c != suffix[k]) eq = false;
      }
      if (eq) {
        rest.remove_suffix(suffix.size());
        while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
      }
    }
  }
  return rest;
}

bool xa_statement_is_rollback(std::string_view sql) noexcept {
  char w[16];
  std::size_t n = 0;
  const std::size_t i = next_word(sql, 0, w, n);
  next_word(sql, i, w, n);
  return std::string_view(w, n) == "ROLLBACK";
}

bool xa_statement_one_phase(std::string_view sql) noexcept {
  std::string_view x = xa_statement_xid(sql);
  const std::size_t end = static_cast<std::size_t>(x.data() - sql.data()) + x.size();
  char w1[16], w2[16];
  std::size_t n1 = 0, n2 = 0;
  const std::size_t i = next_word(sql, end, w1, n1);
  next_word(sql, i, w2, n2);
  return std::string_view(w1, n1) == "ONE" && std::string_view(w2, n2) == "PHASE";
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
