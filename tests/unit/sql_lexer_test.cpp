// The one SQL lexer (lib/src/base/sql_lexer.h) and the readers of statement text built on it:
// comment forms, quoted identifiers, and the statements on which the four scanners it replaced
// (the statement classifier's, Canal's, convert's ddl_table, the schema parser's) disagreed.
#include "base/sql_lexer.h"

#include <binlogctl/convert.h>
#include <binlogctl/statement_kind.h>
#if BINLOGCTL_HAVE_CANAL
#include <binlogctl/canal.h>
#include "EntryProtocol.pb.h"

#include "convert/convert_internal.h"
#endif
#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace binlogctl;
using sql_lexer::Lexer;
using sql_lexer::Tok;
using sql_lexer::Token;

namespace {

// Each token as kind:value ("w:CREATE", "q:a`b", "s:x", "n:1.5e3", "p:(").
std::vector<std::string> tokens(std::string_view sql, Lexer::Versioned v = Lexer::Versioned::open) {
  std::vector<std::string> out;
  Lexer lex(sql, v);
  Token t;
  while (lex.next(t)) {
    const char* k = t.kind == Tok::word ? "w:" : t.kind == Tok::quoted ? "q:" : t.kind == Tok::string ? "s:" : t.kind == Tok::number ? "n:" : "p:";
    out.push_back(k + std::string(t.value()));
  }
  return out;
}

using V = std::vector<std::string>;

std::string table_of(std::string_view sql) {
  std::string db = "def", table;
  if (!ddl_table(sql, db, table)) return "-";
  return db + "." + table;
}

}  // namespace

TEST_SUITE("sql_lexer") {
  TEST_CASE("comment forms: /* */, versioned /*! */ and /*M! */, -- with a blank, #") {
    CHECK(tokens("/* c */ a /* d */") == V{"w:a"});
    CHECK(tokens("a /* unterminated") == V{"w:a"});
    // Versioned comments are SQL, and their */ closes them.
    CHECK(tokens("CREATE /*!32312 IF NOT EXISTS*/ t") == V{"w:CREATE", "w:IF", "w:NOT", "w:EXISTS", "w:t"});
    CHECK(tokens("a /*M!100100 b */ c") == V{"w:a", "w:b", "w:c"});
    CHECK(tokens("a /*!b*/ c") == V{"w:a", "w:b", "w:c"});
    // ... or comments, read as Canal reads them.
    CHECK(tokens("a /*!40000 b */ c", Lexer::Versioned::comment) == V{"w:a", "w:c"});
    CHECK(tokens("a /*M!100100 b */ c", Lexer::Versioned::comment) == V{"w:a", "w:c"});
    // /*M without ! is a plain comment.
    CHECK(tokens("/*Maybe*/ x") == V{"w:x"});
    // "-- " needs a blank or a control byte after the dashes: "1--2" is arithmetic.
    CHECK(tokens("a -- c\nb") == V{"w:a", "w:b"});
    CHECK(tokens("a --\tc\nb") == V{"w:a", "w:b"});
    CHECK(tokens("a --") == V{"w:a"});
    CHECK(tokens("1--2") == V{"n:1", "p:-", "p:-", "n:2"});
    CHECK(tokens("a # c\nb") == V{"w:a", "w:b"});
  }

  TEST_CASE("quoted identifiers, strings and their escapes") {
    CHECK(tokens("`a``b`.`c d`") == V{"q:a`b", "p:.", "q:c d"});
    CHECK(tokens("'it''s' \"x\\ny\"") == V{"s:it's", "s:x\ny"});
    CHECK(tokens("_utf8mb4'a' N'b' X'4142'") == V{"s:a", "s:b", "s:AB"});
    CHECK(tokens("`/* not a comment */` '-- nor this'") == V{"q:/* not a comment */", "s:-- nor this"});
    CHECK(tokens("t.5col 0x1F .5") == V{"w:t", "p:.", "w:5col", "n:0x1F", "n:.5"});
  }

  // Where the old scanners disagreed: each case is the one lexer's reading.
  TEST_CASE("statement classifier: comments as the lexer reads them") {
    CHECK(classify_statement("/* c */ commit") == StatementKind::commit);
    CHECK(classify_statement("# c\nBEGIN") == StatementKind::begin);
    CHECK(classify_statement("-- c\nBEGIN") == StatementKind::begin);
    CHECK(classify_statement("--\tc\nBEGIN") == StatementKind::begin);      // was other ("-- " only)
    CHECK(classify_statement("/*Maybe*/ COMMIT") == StatementKind::commit);  // was other (/*M as versioned)
    CHECK(classify_statement("/*!40101 CREATE */ TABLE t (a int)") == StatementKind::ddl);
    CHECK(classify_statement("/*M!100100 DROP TABLE t */") == StatementKind::ddl);
    CHECK(classify_statement("start /* x */ transaction") == StatementKind::begin);
    CHECK(classify_statement("ROLLBACK TO SAVEPOINT a") == StatementKind::savepoint);
    CHECK(classify_statement("(SELECT 1)") == StatementKind::other);
    CHECK(classify_statement("") == StatementKind::other);
    CHECK(xa_statement_xid("XA /* c */ START 'x','y',1") == "'x','y',1");
    CHECK(xa_statement_xid("XA COMMIT 'x' one phase;") == "'x'");
    CHECK(xa_statement_one_phase("/* c */ XA COMMIT 'x' one phase"));
    CHECK_FALSE(xa_statement_one_phase("XA COMMIT 'x'"));
    CHECK(xa_statement_is_rollback("xa rollback 'x'"));
  }

  TEST_CASE("the table a DDL names (ddl_table, on ddl_targets)") {
    CHECK(table_of("CREATE TABLE t (a int)") == "def.t");
    CHECK(table_of("CREATE TABLE /*!32312 IF NOT EXISTS*/ `d`.`t``x` (a int)") == "d.t`x");
    CHECK(table_of("DROP TABLE IF EXISTS a, b") == "def.a");
    CHECK(table_of("CREATE UNIQUE INDEX i ON d.t (a)") == "d.t");
    CHECK(table_of("RENAME TABLE a TO b") == "def.a");
    CHECK(table_of("CREATE DATABASE d") == "-");
    CHECK(table_of("CREATE VIEW v AS SELECT * FROM t") == "-");
    // the old scanner stopped at these comments and keywords:
    CHECK(table_of("-- c\nALTER TABLE t ADD c int") == "def.t");
    CHECK(table_of("# c\nALTER TABLE t ADD c int") == "def.t");
    CHECK(table_of("TRUNCATE t") == "def.t");
    // ... and took the ON of a GRANT for a table: privileges name no table's rows.
    CHECK(table_of("GRANT SELECT ON d.t TO u") == "-");
  }

#if BINLOGCTL_HAVE_CANAL
  TEST_CASE("Canal's statement types: versioned comments are comments") {
    namespace pb = com::alibaba::otter::canal::protocol;
    CHECK(canal_statement_event_type("/* c */ insert into t values (1)") == pb::INSERT);
    CHECK(canal_statement_event_type("/*!40000 ALTER TABLE t DISABLE KEYS */") == pb::QUERY);
    CHECK(canal_statement_event_type("CREATE TEMPORARY TABLE t (a int)") == pb::CREATE);
    CHECK(canal_statement_event_type("ALTER TABLE `a``b` ADD INDEX i (c)") == pb::CINDEX);
    CHECK(canal_statement_event_type("ALTER TABLE d . /* c */ t DROP KEY k") == pb::DINDEX);
    CHECK(canal_statement_event_type("alter table t rename to u") == pb::RENAME);
    CHECK(canal_statement_event_type("ALTER TABLE t RENAME COLUMN a TO b") == pb::ALTER);
    CHECK(canal_statement_event_type("ALTER TABLE t ADD CONSTRAINT c UNIQUE (a)") == pb::CINDEX);
    CHECK(canal_statement_event_type("ALTER TABLE t # c\n ADD PRIMARY KEY (a)") == pb::CINDEX);
    // an unquoted non-ASCII name: the old scanner stopped inside it (ALTER)
    CHECK(canal_statement_event_type("ALTER TABLE t\xc3\xa9 ADD INDEX i (c)") == pb::CINDEX);
    CHECK(canal_statement_event_type("ALTER TABLE \"t\" ADD INDEX i (c)") == pb::ALTER);
  }
#endif
}
