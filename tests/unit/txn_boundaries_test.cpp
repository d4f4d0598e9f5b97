// Where a transaction begins and ends, as the two state machines have it today: the one every
// row-change consumer shares (TransactionTracker through TransactionFront, txn/txn_front.h) and
// verify's own (ChainVerifier, verify/txn_structure.h). Issue 37 asks for one tracker; until
// then these cases pin where the two agree and where they differ, so that merging them changes
// no boundary unnoticed. Each case is a binlog built in memory; for each event, the transaction
// open after it (0: none), and the number of transactions each machine counted.
#include <binlogctl/event_stream.h>
#include <binlogctl/source.h>
#include <binlogctl/verify.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog_builder.h"
#include "txn/txn_front.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;

namespace {

using Buf = std::vector<std::uint8_t>;

struct Boundaries {
  std::string front;   // TransactionFront / TransactionTracker
  std::string verify;  // ChainVerifier
  std::uint64_t front_count = 0, verify_count = 0;
};

// "front <after each event> (<count>) / verify <after each event> (<count>)"
std::string text(const Boundaries& b) {
  return "front " + b.front + " (" + std::to_string(b.front_count) + ") / verify " + b.verify +
         " (" + std::to_string(b.verify_count) + ")";
}

struct NoHooks final : TransactionFront::Hooks {
  void statement_undecodable(const Event&, std::string_view, const DecodeError&) override {}
  void gtid_undecodable(const Event&) override {}
};

Boundaries boundaries(const Buf& bytes) {
  Boundaries b;
  DiagnosticCollector framing, findings;
  {
    auto src = memory_source(Bytes(bytes.data(), bytes.size()));
    EventStream s(*src, "binlog.000001", framing);
    TransactionFront front(nullptr, nullptr);
    NoHooks hooks;
    Event ev;
    while (s.next(ev)) {
      front.begin(ev, hooks);
      front.end();
      const TransactionState& st = front.state();
      b.front += (b.front.empty() ? "" : " ") + std::to_string(st.open ? st.txn_id : 0);
      b.front_count = st.txn_id;
    }
  }
  {
    auto src = memory_source(Bytes(bytes.data(), bytes.size()));
    ChainVerifier v(findings);
    EventStream s(*src, "binlog.000001", v);
    InputFile f;
    f.log_name = "binlog.000001";
    f.path = "binlog.000001";
    REQUIRE(v.begin_file(f));
    Event ev;
    while (s.next(ev)) {
      v.event(ev);
      b.verify += (b.verify.empty() ? "" : " ") + std::to_string(v.current_transaction_id());
    }
    v.end_file(bytes.size(), 0, false);
    v.finish();
    b.verify_count = v.summary().transactions;
  }
  return b;
}

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
                       kExecuteLoadQuery = 18;

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
          "front 0 1 1 1 0 2 0 3 3 4 4 0 (4) / verify 0 1 1 1 0 2 0 3 3 4 4 0 (4)");
  }

  TEST_CASE(
      "differ: a BEGIN inside an open transaction (verify: a new one, as MySQL's boundary "
      "parser)") {
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.query("db", "BEGIN").query("db", "INSERT INTO t VALUES (1)").query("db", "BEGIN");
    f.query("db", "INSERT INTO t VALUES (2)").query("db", "COMMIT");
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 1 1 0 (1) / verify 0 1 1 2 2 0 (2)");
  }

  TEST_CASE(
      "differ: SAVEPOINT right after a GTID (verify: a statement that ends the GTID's "
      "transaction)") {
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kGtid, gtid(1))
        .query("db", "SAVEPOINT a")
        .raw(kGtid, gtid(2))
        .query("db", "CREATE TABLE u (a INT)");
    CHECK(text(boundaries(f.bytes())) == "front 0 1 1 2 0 (2) / verify 0 1 0 2 0 (2)");
  }

  TEST_CASE(
      "differ: rows outside a transaction on a 5.5+ server (front: ends at STMT_END_F; verify: at "
      "XID)") {
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kTableMap, table_map(7)).raw(kWriteRows, write_rows(7, true)).xid(9);
    CHECK(text(boundaries(f.bytes())) == "front 0 1 0 0 (1) / verify 0 1 1 0 (1)");
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

  TEST_CASE(
      "differ: ROWS_QUERY outside a transaction (verify: it starts one; front: the TABLE_MAP "
      "does)") {
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kRowsQuery, Buf{1, 'x'})
        .raw(kTableMap, table_map(7))
        .raw(kWriteRows, write_rows(7, true))
        .xid(9);
    CHECK(text(boundaries(f.bytes())) == "front 0 0 1 0 0 (1) / verify 0 1 1 1 0 (1)");
  }

  TEST_CASE(
      "differ: EXECUTE_LOAD_QUERY on its own (verify: a transaction of one statement; front: "
      "none)") {
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
    BinlogBuilder f;
    f.fde("5.7.30-log");
    f.raw(kExecuteLoadQuery, body);
    CHECK(text(boundaries(f.bytes())) == "front 0 0 (0) / verify 0 0 (1)");
  }
}  // TEST_SUITE
