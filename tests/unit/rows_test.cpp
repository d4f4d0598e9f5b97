// Table-map metadata, row images (bitmaps, partial images), partial JSON and transaction
// structure, on hand-built bytes.
#include <algorithm>
#include <binlogctl/convert.h>
#include <binlogctl/transaction.h>

#include "rows/rows.h"
#include "rows/table_map.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace binlogctl;

namespace {

using Buf = std::vector<std::uint8_t>;

Bytes B(const Buf& b) { return Bytes(b.data(), b.size()); }

void put_str(Buf& b, std::string_view s) {
  b.push_back(static_cast<std::uint8_t>(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}

// A TABLE_MAP view over `types`/`meta`/`opt` (the fields decode_table_map would give).
struct TmBytes {
  Buf types, meta, nulls, opt;
  TableMapEvent ev() const {
    TableMapEvent e;
    e.table_id = 42;
    e.db = "shop";
    e.table = "orders";
    e.column_count = types.size();
    e.column_types = B(types);
    e.metadata = B(meta);
    e.null_bitmap = B(nulls);
    e.optional_metadata = B(opt);
    return e;
  }
};

// id INT UNSIGNED, name VARCHAR(20) utf8mb4, tier ENUM('free','pro'), doc JSON, raw BLOB binary
TmBytes orders_map() {
  TmBytes t;
  t.types = {3, 15, 254, 245, 252};
  t.meta = {80, 0, /*enum: real type, pack length*/ 247, 1, /*json*/ 4, /*blob*/ 2};
  t.nulls = {0x1e};
  Buf& o = t.opt;
  o.insert(o.end(), {1, 1, 0x80});              // SIGNEDNESS: the one numeric column is unsigned
  o.insert(o.end(), {2, 3, 45, 1, 63});         // DEFAULT_CHARSET 45, char column #1 (raw) -> 63
  Buf names;
  for (const char* n : {"id", "name", "tier", "doc", "raw"}) put_str(names, n);
  o.push_back(4);
  o.push_back(static_cast<std::uint8_t>(names.size()));
  o.insert(o.end(), names.begin(), names.end());
  Buf ev;
  ev.push_back(2);
  put_str(ev, "free");
  put_str(ev, "pro");
  o.push_back(6);
  o.push_back(static_cast<std::uint8_t>(ev.size()));
  o.insert(o.end(), ev.begin(), ev.end());
  o.insert(o.end(), {8, 1, 0});                 // SIMPLE_PRIMARY_KEY: column 0
  o.insert(o.end(), {12, 1, 0xe8});             // VISIBILITY: 11101 -> column 3 invisible
  o.insert(o.end(), {99, 2, 0xaa, 0xbb});       // unknown field from a newer server: skipped
  return t;
}

std::unique_ptr<TableMap> parse(const TmBytes& t) {
  auto r = parse_table_map(t.ev(), 1000, 2000);
  REQUIRE(r.ok());
  return std::move(*r);
}

}  // namespace

TEST_SUITE("rows") {
  TEST_CASE("table map: FULL optional metadata") {
    TmBytes t = orders_map();
    auto tm = parse(t);
    REQUIRE(tm->columns.size() == 5);
    CHECK(tm->has_names());
    CHECK(tm->columns[0].name == "id");
    CHECK(tm->columns[0].is_unsigned);
    CHECK_FALSE(tm->columns[0].nullable);
    CHECK(tm->columns[1].charset == 45);
    CHECK(tm->columns[4].charset == 63);
    CHECK(tm->columns[2].real_type == ColumnType::enum_);
    CHECK(tm->columns[2].values == std::vector<std::string>{"free", "pro"});
    CHECK(tm->primary_key == std::vector<std::uint32_t>{0});
    CHECK(tm->columns[0].in_primary_key);
    CHECK_FALSE(tm->columns[3].visible);
    CHECK(tm->columns[4].visible);
    CHECK(tm->json_columns == 1);
    CHECK(JsonRowPlan(*tm).keys[1] == ",\"name\":");
    CHECK(tm->same_as(t.ev()));
    TmBytes other = t;
    other.meta[0] = 81;
    CHECK_FALSE(tm->same_as(other.ev()));
  }

  TEST_CASE("table map: no optional metadata names columns @N") {
    TmBytes t = orders_map();
    t.opt.clear();
    auto tm = parse(t);
    CHECK_FALSE(tm->has_names());
    CHECK(tm->columns[0].name == "@1");
    CHECK(tm->columns[4].name == "@5");
    CHECK(tm->primary_key.empty());
    CHECK(tm->columns[1].charset == 0);
  }

  TEST_CASE("table map: primary key with prefix, enum/set charsets, geometry, vector") {
    TmBytes t;
    t.types = {252, 248, 255, 242};  // BLOB, SET, GEOMETRY, VECTOR
    t.meta = {2, 248, 1, 4, 4};
    t.nulls = {0};
    t.opt = {9, 4, 0, 10, 1, 0,      // PK: col 0 prefix 10, col 1 whole
             11, 1, 8,               // ENUM_AND_SET_COLUMN_CHARSET: the SET column -> 8
             7, 1, 1,                // GEOMETRY_TYPE: POINT
             13, 1, 3};              // VECTOR_DIMENSIONALITY 3
    auto tm = parse(t);
    CHECK(tm->primary_key == std::vector<std::uint32_t>{0, 1});
    CHECK(tm->columns[0].key_prefix == 10);
    CHECK(tm->columns[1].key_prefix == 0);
    CHECK(tm->columns[1].charset == 8);
    CHECK(tm->columns[2].has_geometry_type);
    CHECK(tm->columns[2].geometry_type == 1);
    CHECK(tm->columns[3].vector_dimension == 3);
  }

  TEST_CASE("table map: errors carry the offset") {
    TmBytes t = orders_map();
    t.opt = {8, 1, 9};  // PK names column 9 of 5
    auto r = parse_table_map(t.ev(), 1000, 2000);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_value);
    CHECK(r.error().offset == 2002);
    t.opt = {4, 9, 2, 'i', 'd'};  // field length past the end
    r = parse_table_map(t.ev(), 1000, 2000);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::truncated);
    CHECK(r.error().offset == 2002);  // after the length that runs past the end
    t.opt.clear();
    t.types[0] = 20;  // TYPED_ARRAY: metadata size unknown
    r = parse_table_map(t.ev(), 1000, 2000);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_value);
  }

  TEST_CASE("row image: null bitmap counts present columns; absent columns are absent") {
    TmBytes t = orders_map();
    auto tm = parse(t);
    // present: id, name, raw (bits 0, 1, 4); name is NULL (null bit 1 of the present columns)
    Buf present = {0x13};
    Buf row = {0x02, /*id*/ 0xff, 0xff, 0xff, 0xff, /*raw*/ 2, 0, 0x00, 0xff};
    ByteReader r(B(row), 500);
    std::string out;
    RowImageDecoder dec;
    RenderOptions ro;
    ro.binary_as = BinaryAs::hex;
    REQUIRE(dec.decode(*tm, 5, B(present), ImageRole::after, false, r, out, ro).ok());
    CHECK(out == R"({"id":4294967295,"name":null,"raw":"00ff"})");
    CHECK(r.empty());
  }

  TEST_CASE("row image: truncated value reports its offset") {
    TmBytes t = orders_map();
    auto tm = parse(t);
    Buf present = {0x03};
    Buf row = {0x00, 1, 0, 0, 0, /*varchar len 5, only 2 bytes*/ 5, 'a', 'b'};
    ByteReader r(B(row), 500);
    std::string out;
    RowImageDecoder dec;
    Status st = dec.decode(*tm, 5, B(present), ImageRole::after, false, r, out, {});
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::truncated);
    CHECK(st.error().offset == 506);
  }

  TEST_CASE("row image: more columns than the table map") {
    TmBytes t = orders_map();
    auto tm = parse(t);
    Buf present = {0xff};
    Buf row = {0};
    ByteReader r(B(row), 7);
    std::string out;
    RowImageDecoder dec;
    Status st = dec.decode(*tm, 6, B(present), ImageRole::before, false, r, out, {});
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::bad_value);
    CHECK(st.error().offset == 7);
  }

  TEST_CASE("partial JSON: diffs shown, applied to the before image") {
    TmBytes t = orders_map();
    auto tm = parse(t);
    // before image: id=1, doc={"a":1} (binary JSON small object: type 0, count 1, size, key entry,
    // value entry inlined int16)
    Buf doc = {0x00, 0x01, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x05, 0x01, 0x00, 'a'};
    Buf before = {0x00, 1, 0, 0, 0, static_cast<std::uint8_t>(doc.size()), 0, 0, 0};
    before.insert(before.end(), doc.begin(), doc.end());
    // after image: value_options=1, partial bits (1 JSON column) = 1, null bitmap, id, doc diffs
    Buf diffs = {0, 3, '$', '.', 'a', 3, 0x05, 0x07, 0x00,   // REPLACE $.a = 7 (int16)
                 1, 3, '$', '.', 'b', 3, 0x05, 0x02, 0x00,   // INSERT $.b = 2
                 2, 3, '$', '.', 'a'};                       // REMOVE $.a
    Buf after = {0x01, 0x01, 0x00, 1, 0, 0, 0, static_cast<std::uint8_t>(diffs.size()), 0, 0, 0};
    after.insert(after.end(), diffs.begin(), diffs.end());
    Buf present = {0x09};  // id, doc
    Buf all = before;
    all.insert(all.end(), after.begin(), after.end());
    ByteReader r(B(all), 0);
    std::string out;
    RowImageDecoder dec;
    REQUIRE(dec.decode(*tm, 5, B(present), ImageRole::before, true, r, out, {}).ok());
    CHECK(out == R"({"id":1,"doc":{"a":1}})");
    out.push_back('|');
    REQUIRE(dec.decode(*tm, 5, B(present), ImageRole::after, true, r, out, {}).ok());
    CHECK(out == R"({"id":1,"doc":{"a":1}}|{"id":1,"doc":{"b":2}})");
    CHECK(dec.json_diffs() ==
          R"({"doc":[{"op":"replace","path":"$.a","value":7},{"op":"insert","path":"$.b","value":2},{"op":"remove","path":"$.a"}]})");
    CHECK(r.empty());

    // Without a before document the after image leaves the column out.
    ByteReader r2(B(after), 0);
    std::string out2;
    RowImageDecoder dec2;
    REQUIRE(dec2.decode(*tm, 5, B(present), ImageRole::after, true, r2, out2, {}).ok());
    CHECK(out2 == R"({"id":1})");
  }

  TEST_CASE("apply_json_diffs: arrays, nested paths, quoted keys, key order, errors") {
    auto apply = [](std::string_view doc, const Buf& diffs, std::string& out) {
      out.clear();
      return apply_json_diffs(doc, B(diffs), 100, out);
    };
    std::string out;
    // INSERT $.l[1] = 9 ; REPLACE $."k y".z = true (literal true: type 4, value 1)
    Buf d = {1, 6, '$', '.', 'l', '[', '1', ']', 3, 0x05, 0x09, 0x00,
             0, 9, '$', '.', '"', 'k', ' ', 'y', '"', '.', 'z', 2, 0x04, 0x01};
    Status st0 = apply(R"({"l":[1,2],"k y":{"z":false}})", d, out);
    INFO(std::string(st0.error().what));
    REQUIRE(st0.ok());
    CHECK(out == R"({"l":[1,9,2],"k y":{"z":true}})");
    // INSERT a short key goes before a longer one (binary JSON key order)
    Buf d2 = {1, 3, '$', '.', 'a', 3, 0x05, 0x01, 0x00};
    REQUIRE(apply(R"({"bb":1})", d2, out).ok());
    CHECK(out == R"({"a":1,"bb":1})");
    // REPLACE of a missing member
    Buf d3 = {0, 3, '$', '.', 'q', 3, 0x05, 0x01, 0x00};
    Status st = apply(R"({"a":1})", d3, out);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::bad_value);
    // unknown operation
    Buf d4 = {7, 1, '$'};
    st = apply(R"({})", d4, out);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().offset == 100);
  }

  TEST_CASE("rows extra info: partition and NDB") {
    Buf x = {1, 0x05, 0x00, 0x07, 0x00};
    auto r = decode_rows_extra(B(x), 10, RowsKind::update);
    REQUIRE(r.ok());
    CHECK(r->partition_id == 5);
    CHECK(r->source_partition_id == 7);
    Buf n = {0, 4, 0x01, 0xaa, 0xbb};
    r = decode_rows_extra(B(n), 10, RowsKind::insert);
    REQUIRE(r.ok());
    CHECK(r->has_ndb);
    CHECK(r->ndb_format == 1);
    CHECK(r->ndb_data.size() == 2);
    Buf bad = {0, 1};
    r = decode_rows_extra(B(bad), 10, RowsKind::insert);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_length);
    CHECK(r.error().offset == 11);
  }

  TEST_CASE("bitmaps") {
    Buf b = {0xff, 0x01};
    CHECK(count_bits(B(b), 9) == 9);
    CHECK(count_bits(B(b), 8) == 8);
    CHECK(count_bits(B(b), 3) == 3);
    // Up to 8 columns (one byte, counted inline): bits past the width do not count.
    Buf one = {0xa5};  // 1010 0101
    CHECK(count_bits(B(one), 0) == 0);
    CHECK(count_bits(B(one), 1) == 1);
    CHECK(count_bits(B(one), 2) == 1);
    CHECK(count_bits(B(one), 6) == 3);
    CHECK(count_bits(B(one), 8) == 4);
    CHECK(count_bits(Bytes{}, 5) == 0);
    CHECK(count_bits(B(one), 12) == 4);  // a bitmap shorter than the width
    CHECK(bit_is_set(B(b), 8));
    CHECK_FALSE(bit_is_set(B(b), 9));
    CHECK_FALSE(bit_is_set(B(b), 99));
    CHECK(classify_rows_event(39)->partial_json);
    CHECK(classify_rows_event(170)->compressed);
    CHECK(classify_rows_event(20)->version == 0);
    CHECK_FALSE(classify_rows_event(19).has_value());
    // Exactly the 16 rows event codes, every other of the 256 none.
    const std::uint8_t codes[] = {20, 21, 22, 23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171};
    for (int t = 0; t < 256; ++t) {
      const bool listed = std::find(std::begin(codes), std::end(codes), t) != std::end(codes);
      CHECK_MESSAGE(classify_rows_event(static_cast<std::uint8_t>(t)).has_value() == listed, t);
      CHECK(is_rows_event(static_cast<std::uint8_t>(t)) == listed);
      CHECK(is_mariadb_compressed_rows(static_cast<std::uint8_t>(t)) == (listed && t >= 166));
    }
    // The known codes (inline, for the readers) are exactly those the name tables hold: 1..42
    // and 160..171; code 0 and the rest are unknown.
    for (int t = 0; t < 256; ++t) {
      const auto c = static_cast<std::uint8_t>(t);
      const bool named = t != 0 && event_type_constant(c) != "UNKNOWN_EVENT";
      CHECK_MESSAGE(is_known_event_type(c) == named, t);
    }
    CHECK(is_known_event_type(42));
    CHECK(is_known_event_type(171));
    CHECK_FALSE(is_known_event_type(43));
    CHECK_FALSE(is_known_event_type(159));
    CHECK_FALSE(is_known_event_type(172));
    CHECK(classify_rows_event(25)->kind == RowsKind::delete_);
    CHECK(classify_rows_event(31)->kind == RowsKind::update);
    CHECK(classify_rows_event(169)->version == 2);
    CHECK(classify_rows_event(166)->version == 1);
  }

  TEST_CASE("statements and XA") {
    CHECK(classify_statement("BEGIN") == StatementKind::begin);
    CHECK(classify_statement("/* c */ commit") == StatementKind::commit);
    CHECK(classify_statement("ROLLBACK TO SAVEPOINT a") == StatementKind::savepoint);
    CHECK(classify_statement("ROLLBACK") == StatementKind::rollback);
    CHECK(classify_statement("XA START X'61',X'',1") == StatementKind::xa_start);
    CHECK(classify_statement("XA COMMIT X'61',X'',1 ONE PHASE") == StatementKind::xa_finish);
    CHECK(classify_statement("  create table t (a int)") == StatementKind::ddl);
    CHECK(classify_statement("INSERT INTO t VALUES (1)") == StatementKind::other);
    CHECK(xa_statement_xid("XA COMMIT X'61',X'',1 ONE PHASE") == "X'61',X'',1");
    CHECK(xa_statement_one_phase("XA COMMIT X'61',X'',1 ONE PHASE"));
    CHECK(xa_statement_is_rollback("XA ROLLBACK X'61',X'',1"));
    CHECK_FALSE(xa_statement_is_rollback("XA COMMIT X'61',X'',1"));
    std::string s;
    append_utc_datetime(s, 1704067200);
    CHECK(s == "2024-01-01 00:00:00");
  }

  TEST_CASE("-d/--database selection for the row consumers") {
    DatabaseSelection every("");
    CHECK(every.selects("shop"));
    CHECK(every.selects(""));
    CHECK_FALSE(every.matched());  // nothing to warn about without -d
    DatabaseSelection shop("shop");
    CHECK_FALSE(shop.selects("SHOP"));  // compared exactly, as mysqlbinlog does
    CHECK_FALSE(shop.selects("shop2"));
    CHECK_FALSE(shop.matched());
    CHECK(shop.selects("shop"));
    CHECK(shop.matched());
    CHECK_FALSE(shop.selects("crm"));
    CHECK(shop.matched());  // a match stays noted
  }

  TEST_CASE("filters and GTID selections") {
    auto f = TableFilter::parse("shop\\..*, crm.users");
    REQUIRE(f.ok());
    CHECK(f->size() == 2);
    CHECK(f->matches("shop", "orders"));
    CHECK(f->matches("SHOP", "Orders"));
    CHECK(f->matches("crm", "users"));
    CHECK_FALSE(f->matches("crm", "users2"));  // whole-text match
    CHECK_FALSE(f->matches("shopx", "orders"));
    auto bad = TableFilter::parse("a,(b");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().offset == 2);
    CHECK(TableFilter::parse("")->matches("any", "thing"));

    TransactionState t;
    t.has_gtid = true;
    t.mariadb_gtid = MariaGtid{0, 1, 50};
    auto g = GtidSelection::parse("..0-1-100");
    REQUIRE(g.ok());
    CHECK(g->contains(t));
    t.mariadb_gtid.seq = 101;
    CHECK_FALSE(g->contains(t));
    auto one = GtidSelection::parse("0-1-101");
    REQUIRE(one.ok());
    CHECK_FALSE(one->is_mysql());
    CHECK(one->contains(t));
    t.mariadb_gtid.seq = 100;
    CHECK_FALSE(one->contains(t));  // one GTID, not every seq up to it
    auto ranges = GtidSelection::parse(" 0-1:5-9:100 , 0-1-3,0-2:1-2");
    REQUIRE(ranges.ok());
    for (std::uint64_t q : {3, 5, 9, 100}) {
      t.mariadb_gtid.seq = q;
      CHECK(ranges->contains(t));
    }
    for (std::uint64_t q : {1, 4, 10, 99, 101}) {
      t.mariadb_gtid.seq = q;
      CHECK_FALSE(ranges->contains(t));
    }
    t.mariadb_gtid = MariaGtid{0, 2, 2};
    CHECK(ranges->contains(t));
    t.mariadb_gtid = MariaGtid{1, 1, 5};
    CHECK_FALSE(ranges->contains(t));
    t.mariadb_gtid = MariaGtid{0, 1, 50};
    CHECK(GtidSelection::parse("   ")->empty());
    struct Bad {
      const char* text;
      std::size_t offset;
    };
    for (const Bad& b : {Bad{"0-1:9-5", 6}, Bad{"0-1", 3}, Bad{"0-1-", 4}, Bad{"0-1-5,", 6}, Bad{"0-1:", 4},
                         Bad{"..0-1", 5}, Bad{"0-1-5 0-1-6", 6}, Bad{"4294967296-1-1", 0}}) {
      auto r = GtidSelection::parse(b.text);
      CAPTURE(b.text);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().offset == b.offset);
    }
    // A MySQL uuid whose groups are all digits is still a MySQL set.
    auto digits = GtidSelection::parse("12345678-1234-1234-1234-123456789012:1-5");
    REQUIRE(digits.ok());
    CHECK(digits->is_mysql());
    auto m = GtidSelection::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
    REQUIRE(m.ok());
    CHECK(m->is_mysql());
    CHECK_FALSE(m->contains(t));  // a MariaDB GTID is never in a MySQL set
    TransactionState none;
    CHECK_FALSE(m->contains(none));
  }
}

// ---- schema history applied to a TABLE_MAP ------------------------------------------------------

namespace {
// A TABLE_MAP of `columns` (type, meta) without optional metadata, as NO_LOG servers write it.
std::unique_ptr<TableMap> bare_map(std::vector<std::pair<ColumnType, std::uint16_t>> columns) {
  auto tm = std::make_unique<TableMap>();
  tm->db = "shop";
  tm->table = "orders";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    ColumnDef c;
    c.type = columns[i].first;
    c.real_type = real_column_type(c.type, columns[i].second);
    c.meta = columns[i].second;
    c.name = "@" + std::to_string(i + 1);
    tm->columns.push_back(std::move(c));
  }
  tm->finalize();
  return tm;
}
}  // namespace

TEST_CASE("apply_table_schema: names, signedness, charsets, (M,D), UUID and legacy fsp from the definition") {
  SchemaHistory h;
  REQUIRE(h.apply("shop", "CREATE TABLE orders (id BIGINT UNSIGNED NOT NULL, note VARCHAR(20) CHARACTER SET latin1, "
                          "raw VARBINARY(8), price DOUBLE(12,4), f FLOAT, u UUID, ip INET6, "
                          "state ENUM('new','paid'), at DATETIME(3), PRIMARY KEY (id))"));
  auto tm = bare_map({{ColumnType::longlong, 0},
                      {ColumnType::varchar, 20},
                      {ColumnType::varchar, 8},
                      {ColumnType::double_, 8},
                      {ColumnType::float_, 4},
                      {ColumnType::string, 0xfe10},
                      {ColumnType::string, 0xfe10},
                      {ColumnType::string, 0xf701},
                      {ColumnType::datetime, 0}});
  CHECK_FALSE(tm->has_names());
  const SchemaTable* def = h.find("shop", "orders");
  REQUIRE(def != nullptr);
  CHECK(apply_table_schema(*tm, *def).empty());
  CHECK(tm->has_names());
  CHECK(tm->columns[0].name == "id");
  CHECK(tm->columns[0].is_unsigned);
  CHECK(tm->infos[0].is_unsigned);
  CHECK(std::string(collation_charset_name(tm->columns[1].charset)) == "latin1");
  CHECK(tm->columns[2].charset == 63);
  CHECK(tm->infos[3].decimals == 4);
  CHECK(tm->infos[4].decimals == -1);
  CHECK(tm->infos[5].hint == ValueHint::uuid);
  CHECK(tm->infos[6].hint == ValueHint::inet6);
  CHECK(tm->columns[7].values == std::vector<std::string>{"new", "paid"});
  CHECK(tm->infos[7].names.size() == 2);
  CHECK(tm->infos[8].meta == 3);  // MariaDB pre-10.0 DATETIME(3): its size comes from here
  CHECK(tm->primary_key == std::vector<std::uint32_t>{0});
  CHECK(JsonRowPlan(*tm).keys[0] == ",\"id\":");
}

TEST_CASE("apply_table_schema: a definition that does not fit is not used") {
  SchemaHistory h;
  REQUIRE(h.apply("shop", "CREATE TABLE orders (id INT, note VARCHAR(20))"));
  const SchemaTable* def = h.find("shop", "orders");
  REQUIRE(def != nullptr);
  SUBCASE("column count") {
    auto tm = bare_map({{ColumnType::long_, 0}});
    CHECK(apply_table_schema(*tm, *def).find("2 columns") != std::string::npos);
    CHECK(tm->columns[0].name == "@1");
    CHECK_FALSE(tm->has_names());
  }
  SUBCASE("type") {
    auto tm = bare_map({{ColumnType::long_, 0}, {ColumnType::double_, 8}});
    CHECK(apply_table_schema(*tm, *def).find("declared varchar") != std::string::npos);
    CHECK(tm->columns[1].name == "@2");
  }
  SUBCASE("names, when the map has its own") {
    auto tm = bare_map({{ColumnType::long_, 0}, {ColumnType::varchar, 80}});
    tm->columns[0].name = "id";
    tm->columns[1].name = "comment";
    tm->optional_fields |= kOptColumnName;
    CHECK(apply_table_schema(*tm, *def).find("named note") != std::string::npos);
  }
  SUBCASE("names agree case-insensitively: used") {
    auto tm = bare_map({{ColumnType::long_, 0}, {ColumnType::varchar, 80}});
    tm->columns[0].name = "ID";
    tm->columns[1].name = "Note";
    tm->optional_fields |= kOptColumnName;
    CHECK(apply_table_schema(*tm, *def).empty());
    CHECK(tm->columns[1].name == "Note");  // the map's own names stay
  }
}

TEST_CASE("charset_collation_id: charset and collation names") {
  CHECK(charset_collation_id("latin1") == 8);
  CHECK(charset_collation_id("utf8mb4_0900_ai_ci") == 45);
  CHECK(charset_collation_id("UTF8MB4") == 45);
  CHECK(charset_collation_id("utf8") == 33);
  CHECK(charset_collation_id("utf8_general_ci") == 33);
  CHECK(charset_collation_id("utf16le") == 56);
  CHECK(charset_collation_id("binary") == 63);
  CHECK(charset_collation_id("klingon") == 0);
  CHECK(charset_collation_id("") == 0);
}

TEST_SUITE("rows") {
  // RowImageDecoder remembers the last rendering of each temporal column; ENUM names come
  // pre-rendered from the TableMap. Whatever the sequence of rows, tables and time zones, the
  // output must be what a decoder with nothing remembered writes.
  TEST_CASE("row image: remembered renderings never leak into other values, tables or zones") {
    // A: DATETIME2(6), TIMESTAMP2(3), DATE, TIME2(2), ENUM('low','hïgh','"q"')
    TmBytes a;
    a.types = {18, 17, 10, 19, 254};
    a.meta = {6, 3, 2, 247, 1};
    a.nulls = {0x1f};
    Buf ev;
    ev.push_back(3);
    put_str(ev, "low");
    put_str(ev, "h\xc3\xafgh");
    put_str(ev, "\"q\"");
    a.opt.push_back(6);
    a.opt.push_back(static_cast<std::uint8_t>(ev.size()));
    a.opt.insert(a.opt.end(), ev.begin(), ev.end());
    auto ta = parse(a);
    // B: DATETIME2(0), TIMESTAMP2(3), TIME2(0): the same positions as A's first three columns,
    // the last of the same size as A's DATE (and fed the same bytes)
    TmBytes b;
    b.types = {18, 17, 19};
    b.meta = {0, 3, 0};
    b.nulls = {0x07};
    auto tb = parse(b);

    auto be = [](Buf& o, std::uint64_t v, int n) {
      for (int i = n - 1; i >= 0; --i) o.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    auto datetime2_int = [](unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s) {
      const std::uint64_t ymd = ((std::uint64_t{y} * 13 + mo) << 5) | d;
      return ((ymd << 17) | (h << 12) | (mi << 6) | s) + 0x8000000000ull;
    };
    std::uint32_t seed = 7;
    auto pick = [&](unsigned n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 16) % n;
    };
    // A TIMESTAMP2(3) value, then DATE bytes (A: its DATE column; B: read as its TIME2(0)).
    auto timestamp_and_date = [&](Buf& row) {
      be(row, 1706745600 + pick(2), 4);
      be(row, pick(2) * 10, 2);
      const std::uint32_t date = (1 + pick(2)) | (2u << 5) | (2024u << 9);
      row.push_back(static_cast<std::uint8_t>(date));
      row.push_back(static_cast<std::uint8_t>(date >> 8));
      row.push_back(static_cast<std::uint8_t>(date >> 16));
    };
    RowImageDecoder kept;
    int rows = 0, differing = 0;
    std::string previous;
    for (int k = 0; k < 400; ++k) {
      const bool use_a = pick(3) != 0;
      Buf row;
      Buf present;
      const TableMap* tm = nullptr;
      std::uint64_t width = 0;
      if (use_a) {
        tm = ta.get();
        width = 5;
        present = {0x1f};
        row.push_back(pick(4) == 0 ? 0x01 : 0x00);  // sometimes the first column is NULL
        if ((row[0] & 1) == 0) {
          be(row, datetime2_int(2024, 2, 1 + pick(2), 0, 0, pick(2)), 5);
          be(row, pick(2) * 123456, 3);
        }
        timestamp_and_date(row);
        be(row, 0x800000 + pick(2) * 61, 3);
        row.push_back(static_cast<std::uint8_t>(pick(2) * 5));
        row.push_back(static_cast<std::uint8_t>(pick(4)));  // 0 = '', 1..3 names
      } else {
        tm = tb.get();
        width = 3;
        present = {0x07};
        row.push_back(0x00);
        be(row, datetime2_int(2024, 2, 1 + pick(2), 0, 0, pick(2)), 5);
        timestamp_and_date(row);
      }
      RenderOptions ro;
      ro.tz_offset_seconds = pick(5) == 0 ? 3600 : 0;
      std::string got, want;
      ByteReader r1(B(row), 0), r2(B(row), 0);
      REQUIRE(kept.decode(*tm, width, B(present), ImageRole::after, false, r1, got, ro).ok());
      RowImageDecoder fresh;
      REQUIRE(fresh.decode(*tm, width, B(present), ImageRole::after, false, r2, want, ro).ok());
      CHECK(got == want);
      CHECK(r1.empty());
      ++rows;
      if (got != previous) ++differing;
      previous = got;
    }
    CHECK(rows == 400);
    CHECK(differing > 200);  // the values do change
    // The names as rendered: UTF-8 and quotes escaped.
    Buf row = {0x00, 3};  // no NULL; ENUM index 3
    Buf present = {0x10};
    std::string out;
    ByteReader r(B(row), 0);
    RowImageDecoder d;
    REQUIRE(d.decode(*ta, 5, B(present), ImageRole::after, false, r, out, {}).ok());
    CHECK(out == R"({"@5":"\"q\""})");
  }
}

namespace {
// The image (one NULL-bitmap byte, then the values of the first n columns) as append_value_json
// renders it column by column from the map's ColumnInfo (the general path: the plan's fast paths
// are the plan's, not the column model's).
std::string image_by_general_path(const TableMap& tm, const Buf& row, std::uint64_t base, std::size_t n) {
  std::string want = "{";
  ByteReader r2(B(row), base);
  r2.bytes(1);
  const JsonRowPlan plan(tm);
  for (std::size_t c = 0; c < n; ++c) {
    want += plan.keys[c].substr(c == 0 ? 1 : 0);
    REQUIRE(append_value_json(tm.infos[c], r2, want).ok());
  }
  return want + "}";
}
}  // namespace

TEST_SUITE("rows") {
  // UTF-8 compatible CHAR/VARCHAR text prepared by TableMap::finalize takes a short path in the
  // type dispatch: it must render what the general string path renders, and fall back to it (and
  // its errors) on anything odd.
  TEST_CASE("row image: the direct text path renders as the general string path") {
    // VARCHAR(20) utf8mb4, VARCHAR(300) (2-byte length), CHAR(10), VARCHAR(20) latin1, VARBINARY(20)
    TmBytes t;
    t.types = {15, 15, 254, 15, 15};
    t.meta = {20, 0, 0x2c, 0x01, 0xfe, 10, 20, 0, 20, 0};
    t.nulls = {0x1f};
    t.opt = {2, 5, 45, 3, 8, 4, 63};  // DEFAULT_CHARSET 45; column 3 latin1, column 4 binary
    auto tm = parse(t);
    const JsonRowPlan plan(*tm);
    REQUIRE(plan.cols.size() == 5);
    CHECK(plan.cols[0].text_prefix == 1);
    CHECK(plan.cols[1].text_prefix == 2);
    CHECK(plan.cols[2].text_prefix == 1);
    CHECK(plan.cols[3].text_prefix == 0);
    CHECK(plan.cols[4].text_prefix == 0);
    CHECK(plan.cols[0].fast == JsonRowPlan::Column::Fast::utf8_text);
    CHECK(plan.cols[3].fast == JsonRowPlan::Column::Fast::none);

    const std::string pieces[] = {"a", "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xe6\x9d\xb1", "\xff", "\xe9", "xyz"};
    std::uint32_t seed = 11;
    auto pick = [&](unsigned n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 16) % n;
    };
    auto text = [&](std::size_t max) {
      std::string s;
      const std::size_t n = pick(static_cast<unsigned>(max));
      while (s.size() < n) s += pieces[pick(10)];
      return s;
    };
    RowImageDecoder dec;
    Buf present = {0x1f};
    for (int k = 0; k < 300; ++k) {
      Buf row = {0x00};
      std::string cols[5] = {text(20), text(300), text(10), text(20), text(20)};
      for (int c = 0; c < 5; ++c) {
        const std::string& v = cols[c];
        row.push_back(static_cast<std::uint8_t>(v.size()));
        if (c == 1) row.push_back(static_cast<std::uint8_t>(v.size() >> 8));
        row.insert(row.end(), v.begin(), v.end());
      }
      std::string got;
      ByteReader r(B(row), 100);
      REQUIRE(dec.decode(*tm, 5, B(present), ImageRole::after, false, r, got, {}).ok());
      // unprepared: the general string path
      CHECK(got == image_by_general_path(*tm, row, 100, 5));
    }
    // A length past the end of the row: the same error as the general path.
    Buf row = {0x00, 5, 'a', 'b'};
    std::string out;
    ByteReader r(B(row), 100);
    Status st = dec.decode(*tm, 5, B(present), ImageRole::after, false, r, out, {});
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::truncated);
    ByteReader r2(B(row), 100);
    r2.bytes(1);
    std::string s2;
    Status st2 = append_value_json(tm->infos[0], r2, s2);
    REQUIRE_FALSE(st2.ok());
    CHECK(st.error().offset == st2.error().offset);
    CHECK(std::string_view(st.error().what) == st2.error().what);
  }
}

TEST_SUITE("rows") {
  TEST_CASE("row image: ENUM names from the TableMap render as the general path") {
    // ENUM('a','b\"','ü') as STRING with real type ENUM, 1 byte; ENUM of 300 names, 2 bytes
    TmBytes t;
    t.types = {254, 254};
    t.meta = {247, 1, 247, 2};
    t.nulls = {0x03};
    Buf ev;
    ev.push_back(3);
    put_str(ev, "a");
    put_str(ev, "b\"");
    put_str(ev, "\xc3\xbc");
    ev.push_back(0xfc);  // 300 names: a packed length of two bytes
    ev.push_back(300 & 0xff);
    ev.push_back(300 >> 8);
    for (int i = 0; i < 300; ++i) put_str(ev, "n" + std::to_string(i));
    t.opt.push_back(6);
    t.opt.push_back(0xfc);
    t.opt.push_back(static_cast<std::uint8_t>(ev.size()));
    t.opt.push_back(static_cast<std::uint8_t>(ev.size() >> 8));
    t.opt.insert(t.opt.end(), ev.begin(), ev.end());
    auto tm = parse(t);
    const JsonRowPlan plan(*tm);
    REQUIRE(plan.cols.size() == 2);
    REQUIRE(plan.cols[0].names_json.size() == 3);
    REQUIRE(plan.cols[1].names_json.size() == 300);
    RowImageDecoder dec;
    Buf present = {0x03};
    for (unsigned a = 0; a <= 5; ++a) {
      for (unsigned b : {0u, 1u, 255u, 256u, 300u, 301u, 65535u}) {
        Buf row = {0x00, static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(b >> 8)};
        std::string got;
        ByteReader r(B(row), 0);
        REQUIRE(dec.decode(*tm, 2, B(present), ImageRole::after, false, r, got, {}).ok());
        // unprepared: names converted per value
        CHECK(got == image_by_general_path(*tm, row, 0, 2));
      }
    }
    std::string one;
    Buf row = {0x00, 2, 44, 1};
    ByteReader r(B(row), 0);
    REQUIRE(dec.decode(*tm, 2, B(present), ImageRole::after, false, r, one, {}).ok());
    CHECK(one == R"({"@1":"b\"","@2":"n299"})");
  }
}

TEST_SUITE("rows") {
  // The JSON keys and rendered ENUM names are the renderer's plan, kept per map serial: a map
  // finalized again (schema history gave it names) must not render with its old plan, and a
  // decoder that has seen more maps than its cache holds must still render each with its own.
  TEST_CASE("row image: the JSON plan follows the map it renders") {
    std::vector<std::pair<ColumnType, std::uint16_t>> cols(40, {ColumnType::tiny, 0});
    auto tm = bare_map(cols);
    RowImageDecoder dec;
    const Buf present = {0x01};
    const Buf row = {0x00, 7};
    auto render = [&](const TableMap& m) {
      std::string out;
      ByteReader r(B(row), 0);
      REQUIRE(dec.decode(m, 1, B(present), ImageRole::after, false, r, out, {}).ok());
      return out;
    };
    CHECK(render(*tm) == R"({"@1":7})");
    const std::uint64_t first = tm->serial;
    tm->columns[0].name = "qty";
    tm->finalize();
    CHECK(tm->serial != first);
    CHECK(render(*tm) == R"({"qty":7})");

    std::vector<std::unique_ptr<TableMap>> maps;
    for (int i = 0; i < 2000; ++i) {  // 80,000 columns: past RowImageDecoder's 65,536
      maps.push_back(bare_map(cols));
      maps.back()->columns[0].name = "c" + std::to_string(i);
      maps.back()->finalize();
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < 2000; i += 7) {
        CAPTURE(i);
        CHECK(render(*maps[static_cast<std::size_t>(i)]) == "{\"c" + std::to_string(i) + "\":7}");
      }
    }
    CHECK(render(*tm) == R"({"qty":7})");
  }
}
