// The setup queries of replicas and CDC clients (the grammar is in serve.h, answer_query). A
// small lexer and a recursive reading of the few statement shapes; the values come from the
// archive's state, never invented: a variable serve cannot know is an unknown variable.
#include <binlogctl/gtid.h>

#include "serve/serve_protocol.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace binlogctl {

namespace {

using serve_proto::Column;
using serve_proto::ResultSet;

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

struct Token {
  enum class Kind : std::uint8_t { word, user_var, sys_var, string, number, punct, end };
  Kind kind = Kind::end;
  std::string text;         // word / variable name (without @ / @@) / unescaped string / punct
  std::size_t begin = 0;    // in the statement, for column names
  std::size_t end = 0;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  // false: an unterminated string or comment, or a byte no statement here holds.
  bool run(std::vector<Token>& out) {
    for (;;) {
      skip_space();
      Token t;
      t.begin = i_;
      if (i_ >= s_.size()) {
        t.kind = Token::Kind::end;
        t.end = i_;
        out.push_back(t);
        return true;
      }
      const char c = s_[i_];
      if (c == '\'' || c == '"') {
        if (!quoted(c, t.text)) return false;
        t.kind = Token::Kind::string;
      } else if (c == '`') {
        if (!quoted(c, t.text)) return false;
        t.kind = Token::Kind::word;
      } else if (c == '@') {
        ++i_;
        t.kind = Token::Kind::user_var;
        if (i_ < s_.size() && s_[i_] == '@') {
          ++i_;
          t.kind = Token::Kind::sys_var;
        }
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"' || s_[i_] == '`')) {
          if (!quoted(s_[i_], t.text)) return false;
        } else {
          t.text = ident();
          // @@global.x / @@session.x: one token
          if (t.kind == Token::Kind::sys_var && i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            t.text += '.';
            t.text += ident();
          }
        }
        if (t.text.empty()) return false;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) &&
                  prev_allows_sign(out))) {
        t.kind = Token::Kind::number;
        std::size_t j = i_ + 1;
        while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.')) ++j;
        t.text = std::string(s_.substr(i_, j - i_));
        i_ = j;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$') {
        t.kind = Token::Kind::word;
        t.text = ident();
      } else if (c == ':' && i_ + 1 < s_.size() && s_[i_ + 1] == '=') {
        t.kind = Token::Kind::punct;
        t.text = std::string(1, '=');  // not = "=": g++ 12 -Wrestrict misfires here under ASan
        i_ += 2;
      } else if (std::string_view("(),=;.*").find(c) != std::string_view::npos) {
        t.kind = Token::Kind::punct;
        t.text = std::string(1, c);
        ++i_;
      } else {
        return false;
      }
      t.end = i_;
      out.push_back(std::move(t));
    }
  }

 private:
  static bool prev_allows_sign(const std::vector<Token>& out) {
    return out.empty() || out.back().kind == Token::Kind::punct || out.back().kind == Token::Kind::word;
  }
  void skip_space() {
    for (;;) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (s_.substr(i_).starts_with("/*")) {
        const auto e = s_.find("*/", i_ + 2);
        i_ = e == std::string_view::npos ? s_.size() : e + 2;
        continue;
      }
      if (s_.substr(i_).starts_with("-- ") || s_.substr(i_).starts_with("#")) {
        const auto e = s_.find('\n', i_);
        i_ = e == std::string_view::npos ? s_.size() : e + 1;
        continue;
      }
      return;
    }
  }
  std::string ident() {
    std::size_t j = i_;
    while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_' || s_[j] == '$')) ++j;
    std::string r(s_.substr(i_, j - i_));
    i_ = j;
    return r;
  }
  bool quoted(char q, std::string& out) {
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '\\' && q != '`' && i_ < s_.size()) {
        const char e = s_[i_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case 'Z': out += '\x1a'; break;
          default: out += e;
        }
      } else if (c == q) {
        if (i_ < s_.size() && s_[i_] == q) {  // doubled quote
          out += q;
          ++i_;
        } else {
          return true;
        }
      } else {
        out += c;
      }
    }
    return false;
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

QueryAnswer error(serve_proto::ServerError e, std::string message) {
  QueryAnswer a;
  a.kind = QueryAnswer::Kind::error;
  a.error = e;
  a.message = std::move(message);
  return a;
}

QueryAnswer syntax_error(std::string_view sql, std::size_t at) {
  std::string near(sql.substr(std::min(at, sql.size()), 80));
  return error(serve_proto::kErrParse,
               "binlogctl serve answers only the queries replicas send before a dump; not understood near '" +
                   near + "'");
}

// MySQL LIKE with % and _ (backslash escapes), case-insensitive as the variable names are.
bool like(std::string_view text, std::string_view pat) {
  std::size_t t = 0, p = 0, star_p = std::string_view::npos, star_t = 0;
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  while (t < text.size()) {
    if (p < pat.size() && pat[p] == '%') {
      star_p = p++;
      star_t = t;
    } else if (p < pat.size() && pat[p] == '\\' && p + 1 < pat.size() && eq(pat[p + 1], text[t])) {
      p += 2;
      ++t;
    } else if (p < pat.size() && (pat[p] == '_' || (pat[p] != '\\' && eq(pat[p], text[t])))) {
      ++p;
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '%') ++p;
  return p == pat.size();
}

// The variables serve knows, in SHOW VARIABLES order (alphabetical, as the server lists them).
const char* const kVariableNames[] = {
    "binlog_checksum", "binlog_row_metadata", "gtid_binlog_pos", "gtid_current_pos", "gtid_domain_id", "gtid_executed",
    "gtid_mode",       "log_bin",         "max_allowed_packet", "server_id",    "version",
    "version_comment",
};

bool numeric_variable(std::string_view name) {
  return name == "server_id" || name == "gtid_domain_id" || name == "max_allowed_packet";
}

struct Value {
  std::optional<std::string> text;
  bool numeric = false;
};

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> toks, UserVars& vars, const QueryEnv& env)
      : sql_(sql), t_(std::move(toks)), vars_(vars), env_(env) {}

  QueryAnswer run() {
    if (word("set")) return set();
    if (word("select")) return select();
    if (word("show")) return show();
    if (word("use")) {
      if (cur().kind != Token::Kind::word) return syntax_error(sql_, cur().begin);
      ++i_;
      return finish(QueryAnswer{});
    }
    return syntax_error(sql_, cur().begin);
  }

 private:
  const Token& cur() const { return t_[i_]; }
  bool word(std::string_view w) {
    if (cur().kind == Token::Kind::word && iequals(cur().text, w)) {
      ++i_;
      return true;
    }
    return false;
  }
  bool punct(char c) {
    if (cur().kind == Token::Kind::punct && cur().text.size() == 1 && cur().text[0] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // The statement must end here (an optional ';').
  QueryAnswer finish(QueryAnswer a) {
    punct(';');
    if (cur().kind != Token::Kind::end) return syntax_error(sql_, cur().begin);
    return a;
  }

  // @@[global.|session.|local.]name -> the bare name, lower case; the scope in `global`.
  static std::string sys_name(std::string_view text, bool* global = nullptr) {
    std::string n = lower(text);
    for (std::string_view scope : {"global.", "session.", "local."}) {
      if (n.starts_with(scope)) {
        if (global != nullptr) *global = scope == "global.";
        return n.substr(scope.size());
      }
    }
    return n;
  }

  // expr -> value, or an error answer in err_.
  std::optional<Value> expr() {
    const Token& tk = cur();
    switch (tk.kind) {
      case Token::Kind::number: {
        ++i_;
        return Value{tk.text, true};
      }
      case Token::Kind::string: {
        ++i_;
        return Value{tk.text, false};
      }
      case Token::Kind::user_var: {
        ++i_;
        const auto it = vars_.find(lower(tk.text));
        if (it == vars_.end()) return Value{std::nullopt, false};
        return Value{it->second, false};
      }
      case Token::Kind::sys_var: {
        ++i_;
        const std::string name = sys_name(tk.text);
        auto v = serve_system_variable(name, env_);
        if (!v) {
          err_ = error(serve_proto::kErrUnknownSystemVariable, "Unknown system variable '" + name + "'");
          return std::nullopt;
        }
        return Value{std::move(v), numeric_variable(name)};
      }
      case Token::Kind::word: {
        const std::string w = lower(tk.text);
        ++i_;
        if (w == "null") return Value{std::nullopt, false};
        if (!punct('(')) {
          // A bare word: ON/OFF/DEFAULT and names as values of session settings.
          return Value{tk.text, false};
        }
        std::vector<Value> args;
        if (!punct(')')) {
          for (;;) {
            auto a = expr();
            if (!a) return std::nullopt;
            args.push_back(std::move(*a));
            if (punct(')')) break;
            if (!punct(',')) {
              err_ = syntax_error(sql_, cur().begin);
              return std::nullopt;
            }
          }
        }
        if (w == "unix_timestamp" && args.empty()) return Value{std::to_string(env_.now), true};
        if (w == "version" && args.empty()) return Value{serve_system_variable("version", env_), false};
        if (w == "database" && args.empty()) return Value{std::nullopt, false};
        if ((w == "user" || w == "current_user" || w == "session_user" || w == "system_user") && args.empty())
          return Value{env_.user, false};
        if (w == "connection_id" && args.empty()) return Value{std::to_string(env_.connection_id), true};
        if (w == "binlog_gtid_pos" && args.size() == 2) {
          // The archive's answer; NULL for what it does not have (MariaDB answers NULL too).
          std::string out, err;
          std::uint64_t pos = 0;
          const std::string& p = args[1].text ? *args[1].text : out;
          const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), pos);
          if (env_.archive == nullptr || !args[0].text || !args[1].text || ec != std::errc() ||
              end != p.data() + p.size() || !binlog_gtid_pos(*env_.archive, *args[0].text, pos, out, err))
            return Value{std::nullopt, false};
          return Value{std::move(out), false};
        }
        err_ = error(serve_proto::kErrSpDoesNotExist, "FUNCTION " + tk.text + " does not exist");
        return std::nullopt;
      }
      default:
        err_ = syntax_error(sql_, tk.begin);
        return std::nullopt;
    }
  }

  QueryAnswer set() {
    // SET NAMES x [COLLATE y] / SET CHARACTER SET x: accepted (results are UTF-8 text anyway).
    for (;;) {
      if (word("names")) {
        if (cur().kind != Token::Kind::word && cur().kind != Token::Kind::string) return syntax_error(sql_, cur().begin);
        ++i_;
        if (word("collate")) {
          if (cur().kind != Token::Kind::word && cur().kind != Token::Kind::string) return syntax_error(sql_, cur().begin);
          ++i_;
        }
      } else if (word("character")) {
        if (!word("set") || (cur().kind != Token::Kind::word && cur().kind != Token::Kind::string))
          return syntax_error(sql_, cur().begin);
        ++i_;
      } else if (cur().kind == Token::Kind::user_var) {
        const std::string name = lower(cur().text);
        ++i_;
        if (!punct('=')) return syntax_error(sql_, cur().begin);
        auto v = expr();
        if (!v) return err_;
        vars_[name] = v->text;
      } else {
        // A session setting: [SESSION|LOCAL] name = expr, or @@[session.]name = expr. Accepted
        // and ignored (nothing here depends on them); GLOBAL ones are refused.
        bool global = false;
        if (word("global")) global = true;
        else if (word("session") || word("local")) {
        }
        std::string name;
        if (cur().kind == Token::Kind::sys_var) {
          name = sys_name(cur().text, &global);
        } else if (cur().kind == Token::Kind::word) {
          name = lower(cur().text);
        } else {
          return syntax_error(sql_, cur().begin);
        }
        ++i_;
        if (!punct('=')) return syntax_error(sql_, cur().begin);
        auto v = expr();
        if (!v) return err_;
        if (global)
          return error(serve_proto::kErrNotSupportedYet,
                       "binlogctl serve has no settable global variables (SET GLOBAL " + name + ")");
      }
      if (!punct(',')) break;
    }
    return finish(QueryAnswer{});
  }

  QueryAnswer select() {
    QueryAnswer a;
    a.kind = QueryAnswer::Kind::rows;
    std::vector<std::optional<std::string>> row;
    for (;;) {
      const std::size_t begin = cur().begin;
      auto v = expr();
      if (!v) return err_;
      std::size_t end = t_[i_ - 1].end;
      std::string name(sql_.substr(begin, end - begin));
      if (word("as")) {
        if (cur().kind != Token::Kind::word && cur().kind != Token::Kind::string) return syntax_error(sql_, cur().begin);
        name = cur().text;
        ++i_;
      } else if (cur().kind == Token::Kind::word && !iequals(cur().text, "limit") && !iequals(cur().text, "from")) {
        name = cur().text;
        ++i_;
      }
      a.rows.columns.push_back(Column{name, v->numeric && v->text.has_value()});
      row.push_back(std::move(v->text));
      if (!punct(',')) break;
    }
    bool empty = false;
    if (word("limit")) {
      if (cur().kind != Token::Kind::number) return syntax_error(sql_, cur().begin);
      empty = cur().text == "0";
      ++i_;
    }
    if (cur().kind == Token::Kind::word && iequals(cur().text, "from"))
      return error(serve_proto::kErrNotSupportedYet,
                   "binlogctl serve has no tables: it answers SELECT of variables and functions only");
    if (!empty) a.rows.rows.push_back(std::move(row));
    return finish(std::move(a));
  }

  QueryAnswer show() {
    word("global") || word("session");
    if (word("variables")) {
      std::optional<std::string> pattern;
      if (word("like")) {
        if (cur().kind != Token::Kind::string) return syntax_error(sql_, cur().begin);
        pattern = cur().text;
        ++i_;
      }
      QueryAnswer a;
      a.kind = QueryAnswer::Kind::rows;
      a.rows.columns = {Column{"Variable_name", false}, Column{"Value", false}};
      for (const char* n : kVariableNames) {
        if (pattern && !like(n, *pattern)) continue;
        auto v = serve_system_variable(n, env_);
        if (v) a.rows.rows.push_back({std::string(n), std::move(v)});
      }
      return finish(std::move(a));
    }
    if (word("binary") || word("master")) {
      if (word("logs")) return finish(binary_logs());
      if (word("status")) return finish(master_status());
      return syntax_error(sql_, cur().begin);
    }
    if (word("binlog")) {
      if (word("status")) return finish(master_status());
      return syntax_error(sql_, cur().begin);
    }
    if (word("warnings") || word("errors")) {
      QueryAnswer a;
      a.kind = QueryAnswer::Kind::rows;
      a.rows.columns = {Column{"Level", false}, Column{"Code", true}, Column{"Message", false}};
      return finish(std::move(a));
    }
    return syntax_error(sql_, cur().begin);
  }

  QueryAnswer binary_logs() {
    QueryAnswer a;
    a.kind = QueryAnswer::Kind::rows;
    a.rows.columns = {Column{"Log_name", false}, Column{"File_size", true}};
    for (const ArchiveFile& f : env_.state->files) a.rows.rows.push_back({f.log_name, std::to_string(f.size)});
    return a;
  }

  QueryAnswer master_status() {
    QueryAnswer a;
    a.kind = QueryAnswer::Kind::rows;
    a.rows.columns = {Column{"File", false}, Column{"Position", true}, Column{"Binlog_Do_DB", false},
                      Column{"Binlog_Ignore_DB", false}};
    if (!env_.state->mariadb) a.rows.columns.push_back(Column{"Executed_Gtid_Set", false});
    if (!env_.state->end_file.empty()) {
      std::vector<std::optional<std::string>> row{env_.state->end_file, std::to_string(env_.state->end_position),
                                                  std::string(), std::string()};
      if (!env_.state->mariadb) row.push_back(env_.state->gtid_executed);
      a.rows.rows.push_back(std::move(row));
    }
    return a;
  }

  std::string_view sql_;
  std::vector<Token> t_;
  std::size_t i_ = 0;
  UserVars& vars_;
  const QueryEnv& env_;
  QueryAnswer err_;
};

}  // namespace

std::optional<std::string> serve_system_variable(std::string_view name_in, const QueryEnv& env) {
  const std::string name = lower(name_in);
  const ArchiveState& s = *env.state;
  if (name == "server_id") return std::to_string(env.server_id);
  if (name == "version") return s.server_version;
  if (name == "version_comment") return std::string("binlogctl serve");
  if (name == "binlog_checksum") return std::string(s.checksum_alg == 1 ? "CRC32" : "NONE");
  if (name == "log_bin") return std::string("ON");
  if (name == "binlog_row_metadata" && !s.binlog_row_metadata.empty()) return s.binlog_row_metadata;
  if (name == "max_allowed_packet") return std::to_string(serve_proto::kMaxCommandPacket);
  if (s.mariadb) {
    if (name == "gtid_binlog_pos" || name == "gtid_current_pos") return s.gtid_binlog_pos;
    if (name == "gtid_domain_id") {
      // The primary's own domain is configuration, not in the files: the lowest domain its binlog
      // state holds (0, MariaDB's default, when the state is empty).
      auto list = MariaGtidList::parse(s.gtid_binlog_pos);
      std::uint32_t domain = 0;
      bool first = true;
      if (list)
        for (const MariaGtid& g : list->entries()) {
          if (first || g.domain < domain) domain = g.domain;
          first = false;
        }
      return std::to_string(domain);
    }
  } else {
    if (name == "gtid_executed") return s.gtid_executed;
    if (name == "gtid_mode") return std::string(s.gtid_executed.empty() ? "OFF" : "ON");
  }
  return std::nullopt;
}

QueryAnswer answer_query(std::string_view sql, UserVars& vars, const QueryEnv& env) {
  std::vector<Token> toks;
  if (!Lexer(sql).run(toks) || toks.size() > 4096) return syntax_error(sql, 0);
  return Parser(sql, std::move(toks), vars, env).run();
}

}  // namespace binlogctl
