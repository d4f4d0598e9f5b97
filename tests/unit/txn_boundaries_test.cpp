// Where a transaction begins and ends, for the two users of the one tracker
// (TransactionTracker, transaction.h): every row-change consumer (through TransactionFront,
// txn/txn_front.h) and verify (ChainVerifier, verify/txn_structure.h, through the tracker's
// Observer, with the checker's rules where the servers would not have written the input). The
// tracker follows the servers (transaction.h states the rules and where they come from). Each
// case is a chain of binlogs built in memory (a TRANSACTION_PAYLOAD's inner events follow it, as
// ChainReader hands them out); for each event, the transaction open after it (0: none; files
// separated by "|"), the number of transactions each counted, the front's findings:
// "gtid-while-open" (the open_at_gtid hook), "cut N" (cut_off()), and verify's
// transaction_structure findings ("[N structure]").
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>
#include <binlogctl/verify.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog_builder.h"
#include "events/events.h"
#include "payload_body.h"
#include "txn/txn_front.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;
using binlogctl::testing::zstd_payload_body;

namespace {

using Buf = std::vector<std::uint8_t>;

struct Boundaries {
  std::string front;   // TransactionFront / TransactionTracker
  std::string verify;  // ChainVerifier
  std::uint64_t front_count = 0, verify_count = 0;
  std::string front_findings;
  std::size_t verify_structure = 0;  // transaction_structure findings
  std::string verify_gtids;          // the summary's gtid_executed
};

// "front <after each event> (<count>)[ <findings>] / verify <after each event> (<count>)"
std::string text(const Boundaries& b) {
  return "front " + b.front + " (" + std::to_string(b.front_count) + ")" + b.front_findings +
         " / verify " + b.verify + " (" + std::to_string(b.verify_count) + ")" +
         (b.verify_structure == 0 ? "" : " [" + std::to_string(b.verify_structure) + " structure]");
}

struct FrontHooks final : TransactionFront::Hooks {
  std::string* findings = nullptr;
  void statement_undecodable(const Event&, std::string_view, const DecodeError&) override {}
  void gtid_undecodable(const Event&) override {}
  void open_at_gtid(const Event&) override { *findings += " gtid-while-open"; }
};

struct File {
  std::string name;
  Buf bytes;
};

// Each event of the file, then a TRANSACTION_PAYLOAD's inner events (damaged with it), the way
// ChainReader hands them out.
template <typename F>
void walk(const File& file, DiagnosticSink& diag, F&& each) {
  auto src = memory_source(Bytes(file.bytes.data(), file.bytes.size()));
  EventStream s(*src, file.name, diag);
  Event ev;
  while (s.next(ev)) {
    each(ev);
    if (ev.type() != EventType::transaction_payload) continue;
    auto p = decode_transaction_payload(ev.body_reader(), *ev.fde);
    if (!p) continue;
    PayloadExpander x(ev, *p, file.name, diag);
    Event inner;
    while (x.next(inner)) {
      if (ev.damage) inner.damage = ev.damage;
      each(inner);
    }
  }
}

void append_id(std::string& out, const char* sep, std::uint64_t id) {
  out += (out.empty() ? "" : sep) + std::to_string(id);
}

Boundaries boundaries(const std::vector<File>& files) {
  Boundaries b;
  DiagnosticCollector framing;
  {
    TransactionFront front(nullptr, nullptr);
    FrontHooks hooks;
    hooks.findings = &b.front_findings;
    for (std::size_t i = 0; i < files.size(); ++i) {
      front.new_file(files[i].name);
      const char* sep = i == 0 ? " " : " | ";
      walk(files[i], framing, [&](const Event& ev) {
        front.begin(ev, hooks);
        front.end();
        const TransactionState& st = front.state();
        append_id(b.front, sep, st.open ? st.txn_id : 0);
        sep = " ";
        b.front_count = st.txn_id;
      });
      const bool more = i + 1 < files.size();
      const bool carried = more && front.carries_into(files[i + 1].name);
      if (auto c = front.cut_off(more, false, false, carried)) b.front_findings += " cut " + std::to_string(c->txn_id);
    }
  }
  {
    DiagnosticCollector findings;
    ChainVerifier v(findings);
    for (std::size_t i = 0; i < files.size(); ++i) {
      InputFile f;
      f.log_name = files[i].name;
      f.path = files[i].name;
      REQUIRE(v.begin_file(f));
      const char* sep = i == 0 ? " " : " | ";
      walk(files[i], v, [&](const Event& ev) {
        v.event(ev);
        append_id(b.verify, sep, v.current_transaction_id());
        sep = " ";
      });
      v.end_file(files[i].bytes.size(), 0, false);
    }
    v.finish();
    b.verify_count = v.summary().transactions;
    b.verify_structure = v.summary().per_check[static_cast<std::size_t>(Check::transaction_structure)];
    b.verify_gtids = v.summary().gtid_executed.to_string();
  }
  return b;
}

Boundaries boundaries(const Buf& bytes) { return boundaries({File{"binlog.000001", bytes}}); }

void le(Buf& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// A MySQL GTID_LOG_EVENT body for uuid 80549ecc-d2f2-11ea-b790-0242ac130002.
Buf gtid(std::uint64_t gno) {
  static const std::uint8_t kUuid[16] = {0x80, 0x54, 0x9e, 0xcc, 0xd2, 0xf2, 0x11, 0xea,
                                         0xb7, 0x90, 0x02, 0x42, 0xac, 0x13, 0x00, 0x02};
  Buf b;
  b.push_back(1);
  b.insert(b.end(), kUuid, kUuid + 16);
  le(b, gno, 8);
  return b;
}

// TABLE_MAP / WRITE_ROWS (v2) bodies as far as transaction structure reads them: table id,
// flags (and the rows event's extra-data length).
Buf table_map(std::uint64_t id) {
  Buf b;
  le(b, id, 6);
  le(b, 0, 2);
  return b;
}
Buf write_rows(std::uint64_t id, bool stmt_end) {
  Buf b;
  le(b, id, 6);
  le(b, stmt_end ? 1 : 0, 2);
  le(b, 2, 2);
  return b;
}

constexpr std::uint8_t kGtid = 33, kTableMap = 19, kWriteRows = 30, kRowsQuery = 29,
                       kExecuteLoadQuery = 18, kPayload = 40, kIncident = 26;

// An INCIDENT_EVENT body: incident number (LOST_EVENTS), message.
Buf incident() {
  Buf b;
  le(b, 1, 2);
  const std::string m = "lost";
  b.push_back(static_cast<std::uint8_t>(m.size()));
  b.insert(b.end(), m.begin(), m.end());
  return b;
}

// Inner events of a TRANSACTION_PAYLOAD: no magic, no checksums.
Buf begin_commit_inner() {
  BinlogBuilder ib(false);
  ib.query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").xid(5);
  return ib.bytes();
}

}  // namespace

TEST_SUITE("txn_boundaries") {
  TEST_CASE("both machines: GTID + BEGIN ... XID, GTID + DDL, a GTID while a transaction is open") {
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kGtid, gtid(1)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").xid(5);
    f.raw(kGtid, gtid(2)).query("db", "CREATE TABLE u (a INT)");
    f.raw(kGtid, gtid(3))
        .query("db", "BEGIN")
        .raw(kGtid, gtid(4))
        .query("db", "BEGIN")
        .query("db", "COMMIT");
    CHECK(text(boundaries(f.bytes())) ==
          "front 0 1 1 1 0 2 0 3 3 4 4 0 (4) gtid-while-open / verify 0 1 1 1 0 2 0 3 3 4 4 0 (4) [1 structure]");
  }

  TEST_CASE("case 1: a BEGIN inside an open BEGIN transaction starts the next one") {
    // MySQL: trx_boundary_parser.cpp, EVENT_BOUNDARY_TYPE_BEGIN_TRX in state DML: the state
    // becomes DML anew (the open transaction is abandoned).
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").query("db", "BEGIN");
    f.query("db", "INSERT INTO t VALUES (2)").query("db", "COMMIT");
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 2 2 0 (2) / verify 0 1 1 2 2 0 (2) [1 structure]");
  }

  TEST_CASE("case 1: a BEGIN right after a MariaDB GTID (which stands for BEGIN) is that GTID's") {
    BinlogBuilder f;
    f.fde("10.11.6-MariaDB-log");
    Buf g;
    le(g, 7, 8);  // seq_no
    le(g, 0, 4);  // domain
    g.push_back(0);  // flags2: not standalone
    g.resize(19);
    f.raw(162, g).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").xid(5);
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 1 0 (1) / verify 0 1 1 1 0 (1)");
  }

  TEST_CASE("case 2: SAVEPOINT or XA END right after a GTID is the GTID's one statement") {
    // MySQL: EVENT_BOUNDARY_TYPE_STATEMENT in state GTID: the state becomes NONE.
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kGtid, gtid(1))
        .query("db", "SAVEPOINT a")
        .raw(kGtid, gtid(2))
        .query("db", "CREATE TABLE u (a INT)")
        .raw(kGtid, gtid(3))
        .query("db", "XA END X'61',X'',1")
        .raw(kGtid, gtid(4))
        .query("db", "BEGIN")
        .query("db", "SAVEPOINT b")
        .xid(6);
    CHECK(text(boundaries(f.bytes())) ==
          "front 0 1 0 2 0 3 0 4 4 4 0 (4) / verify 0 1 0 2 0 3 0 4 4 4 0 (4)");
  }

  TEST_CASE(
      "case 3, differ: rows outside a transaction on a 5.5+ server end at STMT_END_F (verify: at "
      "XID)") {
    // The applier's rule (sql/log_event.cc, Rows_log_event::do_apply_event: a statement outside
    // a multi-statement transaction is committed at its STMT_END_F event); the boundary parser's
    // (each event a unit of its own) would part the rows from their TABLE_MAP. Servers since 5.5
    // write no such rows (their parser errs at the XID: "outside a transaction"): verify reports
    // the damage once and reads on as the server wrote it, a transaction that lost its BEGIN and
    // ends at its XID (the tracker's observer rules).
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kTableMap, table_map(7)).raw(kWriteRows, write_rows(7, true)).xid(9);
    CHECK(text(boundaries(f.bytes())) == "front 0 1 0 0 (1) / verify 0 1 1 0 (1) [1 structure]");
  }

  TEST_CASE("agree: rows outside a transaction on a server before 5.5 end at STMT_END_F") {
    BinlogBuilder f;
    f.fde("5.1.73-log");
    f.raw(kTableMap, table_map(7))
        .raw(kWriteRows, write_rows(7, false))
        .raw(kWriteRows, write_rows(7, true));
    f.query("db", "INSERT INTO m VALUES (1)");
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 0 0 (2) / verify 0 1 1 0 0 (2)");
  }

  TEST_CASE("case 4: ROWS_QUERY or ANNOTATE_ROWS outside a transaction starts its statement's") {
    // Both come first in their rows statement, before its TABLE_MAPs: the transaction without
    // BEGIN that the statement's STMT_END_F ends (case 3) starts there.
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kRowsQuery, Buf{1, 'x'})
        .raw(kTableMap, table_map(7))
        .raw(kWriteRows, write_rows(7, true))
        .xid(9);
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 0 0 (1) / verify 0 1 1 1 0 (1) [1 structure]");
    BinlogBuilder m;
    m.fde("10.11.6-MariaDB-log");
    m.raw(160, Buf{'x'}).raw(kTableMap, table_map(7)).raw(kWriteRows, write_rows(7, true));
    CHECK(text(boundaries(m.bytes())) == "front 0 1 1 0 (1) / verify 0 1 1 1 (1) [1 structure]");
  }

  TEST_CASE("case 5: LOAD DATA's blocks and its EXECUTE_LOAD_QUERY are a statement") {
    // MySQL: BEGIN_LOAD_QUERY, APPEND_BLOCK and EXECUTE_LOAD_QUERY are statement events; the
    // blocks belong to the EXECUTE_LOAD_QUERY that follows them.
    Buf body;
    le(body, 1, 4);     // thread id
    le(body, 0, 4);     // exec time
    body.push_back(2);  // db length
    le(body, 0, 2);     // error code
    le(body, 0, 2);     // status vars length
    le(body, 1, 4);     // file id
    le(body, 0, 4);     // start position
    le(body, 0, 4);     // end position
    body.push_back(0);  // dup handling
    body.insert(body.end(), {'d', 'b', 0});
    const std::string sql = "LOAD DATA INFILE 'x' INTO TABLE t";
    body.insert(body.end(), sql.begin(), sql.end());
    Buf block;
    le(block, 1, 4);  // file id
    block.insert(block.end(), {'1', '\n'});
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kExecuteLoadQuery, body);
    f.raw(17, block).raw(9, block).raw(kExecuteLoadQuery, body);
    f.raw(kGtid, gtid(1)).raw(17, block).raw(kExecuteLoadQuery, body);
    f.raw(kGtid, gtid(2)).query("db", "BEGIN").raw(17, block).raw(kExecuteLoadQuery, body).xid(3);
    CHECK(text(boundaries(f.bytes())) ==
          "front 0 0 2 2 0 3 3 0 4 4 4 4 0 (4) / verify 0 0 0 0 0 3 3 0 4 4 4 4 0 (4)");
  }

  TEST_CASE("case 6: a TRANSACTION_PAYLOAD with no transaction open is one") {
    // MySQL: EVENT_BOUNDARY_TYPE_TRANSACTION_PAYLOAD is the transaction (after its GTID, it
    // ends it; without one, an error, and the payload a unit of its own). verify reports the
    // payload outside a transaction, and counts it once: it used to count its inner BEGIN as a
    // second transaction.
    BinlogBuilder f;
    f.fde("8.0.32");
    f.raw(kPayload, zstd_payload_body(begin_commit_inner()));
    f.raw(kGtid, gtid(1)).raw(kPayload, zstd_payload_body(begin_commit_inner()));
    CHECK(text(boundaries(f.bytes())) ==
          "front 0 1 1 1 0 2 2 2 2 0 (2) / verify 0 1 1 1 0 2 2 2 2 0 (2) [1 structure]");
  }

  TEST_CASE("case 7: a relay log carries an open transaction into the next one; a binlog does not") {
    BinlogBuilder a;
    a.fde("5.7.30-log");
    a.raw(kGtid, gtid(1)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)");
    BinlogBuilder b;
    b.fde("5.7.30-log");
    b.query("db", "INSERT INTO t VALUES (2)").xid(4);
    CHECK(text(boundaries({File{"relay-bin.000001", a.bytes()}, File{"relay-bin.000002", b.bytes()}})) ==
          "front 0 1 1 1 | 1 1 0 (1) / verify 0 1 1 1 | 1 1 0 (1)");
    CHECK(text(boundaries({File{"binlog.000001", a.bytes()}, File{"binlog.000002", b.bytes()}})) ==
          "front 0 1 1 1 | 0 0 0 (2) cut 1 / verify 0 1 1 1 | 0 0 0 (2) [2 structure]");
    // Only into the next relay log of the same sequence: not into an unrelated file.
    CHECK(text(boundaries({File{"relay-bin.000001", a.bytes()}, File{"binlog.000002", b.bytes()}})) ==
          "front 0 1 1 1 | 0 0 0 (2) cut 1 / verify 0 1 1 1 | 1 1 0 (1)");
  }

  TEST_CASE("case 8: a damaged TRANSACTION_PAYLOAD still ends its GTID's transaction") {
    // Its inner events are damage (not passed on); the payload is the transaction's end all the
    // same (case 6), so no finding says the transaction is open at the next GTID or cut off.
    BinlogBuilder f;
    f.fde("8.0.32");
    f.raw(kGtid, gtid(1)).raw(kPayload, zstd_payload_body(begin_commit_inner()));
    f.raw(kGtid, gtid(2)).raw(kPayload, zstd_payload_body(begin_commit_inner()));
    Buf bytes = f.bytes();
    bytes[f.event_offset(3) - 1] ^= 0xff;  // the first payload's CRC32 no longer holds
    bytes.back() ^= 0xff;                  // nor the second's
    CHECK(text(boundaries(bytes)) == "front 0 1 1 1 1 1 2 2 2 2 2 (2) / verify 0 1 1 1 1 0 2 2 2 2 0 (2)");
  }

  TEST_CASE("case 8: a TRANSACTION_PAYLOAD that does not decode still ends its GTID's transaction") {
    // MySQL: EVENT_BOUNDARY_TYPE_TRANSACTION_PAYLOAD in state GTID: the state becomes NONE,
    // whatever the payload holds. verify used to keep the transaction open (its GTID not
    // counted as executed; without damage reported, "not followed by its transaction").
    BinlogBuilder f;
    f.fde("8.0.32");
    f.raw(kGtid, gtid(1)).raw(kPayload, Buf{0xff, 0xff, 0xff});
    f.raw(kGtid, gtid(2)).raw(kPayload, Buf{0xff, 0xff, 0xff});
    const Boundaries b = boundaries(f.bytes());
    CHECK(text(b) == "front 0 1 1 2 2 (2) / verify 0 1 1 2 2 (2)");
    CHECK(b.verify_gtids == "80549ecc-d2f2-11ea-b790-0242ac130002:1-2");
  }

  TEST_CASE("case 9: an INCIDENT ends the open transaction (its own GTID's, or any)") {
    // MySQL: EVENT_BOUNDARY_TYPE_INCIDENT: the state becomes NONE, whatever it was; MariaDB:
    // an INCIDENT is no group event (Log_event::is_group_event). verify used to keep the
    // transaction open: "GTID not followed by its transaction" at the next GTID, and the
    // second one cut off at the end of the file.
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kGtid, gtid(1)).raw(kIncident, incident());
    f.raw(kGtid, gtid(2)).query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").raw(kIncident, incident());
    f.query("db", "INSERT INTO m VALUES (1)");
    CHECK(text(boundaries(f.bytes())) == "front 0 1 0 2 2 2 0 0 (3) / verify 0 1 0 2 2 2 0 0 (3)");
  }
}  // TEST_SUITE
