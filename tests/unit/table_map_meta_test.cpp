// TABLE_MAP optional metadata (binlog_row_metadata=MINIMAL|FULL): which columns each field
// counts, by the rules of the server that wrote the file (the FDE says which), checked end to
// end through `convert --format json` on binlogs built byte by byte. The rules and their sources
// are listed in man/binlogctl-convert.1.scd (OPTIONAL METADATA).
#include <binlogctl/convert.h>

#include "rows/table_map.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "binlog_builder.h"
#include "tmpfile_io.h"

using namespace binlogctl;
using binlogctl::testing::BinlogBuilder;
using binlogctl::testing::read_all;
namespace fs = std::filesystem;

namespace {

using Buf = std::vector<std::uint8_t>;

constexpr std::uint8_t kTableMap = 19;
constexpr std::uint8_t kWriteRowsV1 = 23;  // MariaDB writes v1 rows events
constexpr std::uint8_t kWriteRowsV2 = 30;  // MySQL 8
constexpr std::uint64_t kTableId = 77;

// One TLV field of the optional metadata: type, packed length (< 251 here), value.
void tlv(Buf& b, std::uint8_t type, const Buf& value) {
  b.push_back(type);
  b.push_back(static_cast<std::uint8_t>(value.size()));
  b.insert(b.end(), value.begin(), value.end());
}

// COLUMN_NAME (4): packed length + name per column.
Buf names(std::initializer_list<std::string_view> ns) {
  Buf v;
  for (std::string_view n : ns) {
    v.push_back(static_cast<std::uint8_t>(n.size()));
    v.insert(v.end(), n.begin(), n.end());
  }
  return v;
}

// TABLE_MAP body: table id (6), flags (2), db, table, packed column count, types, packed
// metadata length, metadata, null bitmap, optional metadata.
Buf table_map(const Buf& types, const Buf& meta, const Buf& opt) {
  Buf b;
  BinlogBuilder::le(b, kTableId, 6);
  BinlogBuilder::le(b, 1, 2);
  const std::string_view db = "shop", table = "t";
  b.push_back(static_cast<std::uint8_t>(db.size()));
  b.insert(b.end(), db.begin(), db.end());
  b.push_back(0);
  b.push_back(static_cast<std::uint8_t>(table.size()));
  b.insert(b.end(), table.begin(), table.end());
  b.push_back(0);
  b.push_back(static_cast<std::uint8_t>(types.size()));
  b.insert(b.end(), types.begin(), types.end());
  b.push_back(static_cast<std::uint8_t>(meta.size()));
  b.insert(b.end(), meta.begin(), meta.end());
  b.insert(b.end(), (types.size() + 7) / 8, 0xff);  // every column nullable
  b.insert(b.end(), opt.begin(), opt.end());
  return b;
}

// WRITE_ROWS body with one row of every column: `row` is the row's null bitmap and values.
Buf write_rows(std::size_t ncols, const Buf& row, bool v2) {
  Buf b;
  BinlogBuilder::le(b, kTableId, 6);
  BinlogBuilder::le(b, 1, 2);  // STMT_END_F
  if (v2) BinlogBuilder::le(b, 2, 2);  // extra-info length (itself only)
  b.push_back(static_cast<std::uint8_t>(ncols));
  b.insert(b.end(), (ncols + 7) / 8, 0xff);  // every column present
  b.insert(b.end(), row.begin(), row.end());
  return b;
}

struct Run {
  int rc = -1;
  std::string out, err;
};

// `convert --format json` on a file holding one transaction: BEGIN, the TABLE_MAP, one
// WRITE_ROWS, XID, written by a server of version `server` (MariaDB when it says so).
Run convert_one(std::string_view server, const Buf& tm_body, const Buf& rows_body) {
  const bool maria = server.find("MariaDB") != std::string_view::npos;
  BinlogBuilder b;
  b.fde(server).query("shop", "BEGIN", 0x8).raw(kTableMap, tm_body).raw(maria ? kWriteRowsV1 : kWriteRowsV2, rows_body).xid(9);
  std::random_device rd;
  const fs::path path = fs::temp_directory_path() / ("binlogctl-tm-meta-" + std::to_string(rd()) + ".000001");
  {
    std::ofstream o(path, std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char*>(b.bytes().data()), static_cast<std::streamsize>(b.size()));
  }
  ConvertOptions o;
  o.inputs = {path.string()};
  o.progress = ProgressMode::never;
  o.render_threads = 0;
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  Run r;
  r.rc = run_convert(o, out, err);
  r.out = read_all(out);
  r.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  fs::remove(path);
  return r;
}

// The "after" object of the one row change in `out`.
std::string after_of(const std::string& out) {
  const std::size_t at = out.find("\"after\":");
  if (at == std::string::npos) return "";
  const std::size_t end = out.find(",\"primary_key\"", at);
  return out.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
}

// Table (a INT, y YEAR, b INT, d DECIMAL(10,2)): column types and metadata.
const Buf kYearTypes = {3, 13, 3, 246};
const Buf kYearMeta = {10, 2};  // DECIMAL: precision 10, scale 2
// One row: a = 0xffffffff, y = 2024 (124), b = 0xffffffff, d = 1.50.
const Buf kYearRow = {0x00, /*a*/ 0xff, 0xff, 0xff, 0xff, /*y*/ 124, /*b*/ 0xff, 0xff, 0xff, 0xff,
                      /*d: sign bit flipped, 4-byte integer part 1, 1-byte fraction 50*/ 0x80, 0, 0, 1, 50};

// parse_table_map on a TABLE_MAP view, as decode_table_map would give it for this server.
std::unique_ptr<TableMap> parse(const Buf& types, const Buf& meta, const Buf& opt, Flavor flavor,
                                std::uint32_t version) {
  static const Buf nulls(8, 0xff);
  TableMapEvent e;
  e.table_id = kTableId;
  e.db = "shop";
  e.table = "t";
  e.column_count = types.size();
  e.column_types = Bytes(types.data(), types.size());
  e.metadata = Bytes(meta.data(), meta.size());
  e.null_bitmap = Bytes(nulls.data(), (types.size() + 7) / 8);
  e.optional_metadata = Bytes(opt.data(), opt.size());
  e.flavor = flavor;
  e.server_version = version;
  auto r = parse_table_map(e, 1000, 2000);
  REQUIRE(r.ok());
  return std::move(*r);
}

constexpr std::uint32_t kMysql8020 = (8u << 16) | 20u, kMysql8036 = (8u << 16) | 36u;

}  // namespace

TEST_SUITE("table_map_meta") {
  TEST_CASE("SIGNEDNESS: YEAR's bit by server; MySQL 8.0.20 wrote none; the length decides when it can") {
    // (a INT, y YEAR, b INT): MySQL 8.0.20 writes bits for a and b only: 0 1 -> 0x40.
    const Buf types = {3, 13, 3};
    Buf opt = {1, 1, 0x40};
    auto tm = parse(types, {}, opt, Flavor::mysql, kMysql8020);
    CHECK_FALSE(tm->columns[0].is_unsigned);
    CHECK(tm->columns[2].is_unsigned);
    CHECK_FALSE(tm->columns[1].is_unsigned);  // YEAR: never UNSIGNED
    // The same bytes from MySQL 8.0.36 or MariaDB: a y b = 0 1 0, b is signed.
    CHECK_FALSE(parse(types, {}, opt, Flavor::mysql, kMysql8036)->columns[2].is_unsigned);
    CHECK_FALSE(parse(types, {}, opt, Flavor::mysql, 0)->columns[2].is_unsigned);  // unknown: current
    tm = parse(types, {}, opt, Flavor::mariadb, (10u << 16) | (11u << 8) | 19u);
    CHECK_FALSE(tm->columns[2].is_unsigned);
    CHECK_FALSE(tm->columns[1].is_unsigned);  // MariaDB writes 1 for YEAR: still not UNSIGNED
    // Seven INTs, YEAR, INT: eight bits without YEAR (one byte), nine with it (two), so the
    // length says which rule wrote the bitmap, whatever the version.
    const Buf nine = {3, 3, 3, 3, 3, 3, 3, 13, 3};
    opt = {1, 2, 0x00, 0x80};  // two bytes: YEAR has bit 7, the last INT bit 8 (unsigned)
    CHECK(parse(nine, {}, opt, Flavor::mysql, kMysql8020)->columns[8].is_unsigned);
    opt = {1, 1, 0x01};  // one byte: no bit for YEAR, the last INT has bit 7 (unsigned)
    CHECK(parse(nine, {}, opt, Flavor::mysql, kMysql8036)->columns[8].is_unsigned);
  }


  TEST_CASE("SIGNEDNESS: MySQL writes a bit for YEAR, so the columns after it keep their own") {
    // MySQL 8.0 (has_signedess_information_type: YEAR has a bit, written 0):
    //   a INT UNSIGNED, y YEAR, b INT UNSIGNED, d DECIMAL(10,2) UNSIGNED -> bits 1 0 1 1 = 0xb0
    Buf opt;
    tlv(opt, 1, {0xb0});
    tlv(opt, 4, names({"a", "y", "b", "d"}));
    const Run r = convert_one("8.0.36", table_map(kYearTypes, kYearMeta, opt), write_rows(4, kYearRow, true));
    CHECK(r.rc == 0);
    CHECK(r.err == "");
    CHECK(after_of(r.out) == R"({"a":4294967295,"y":2024,"b":4294967295,"d":"1.50"})");
  }

  TEST_CASE("SIGNEDNESS: MariaDB writes YEAR's bit as 1; a signed column after it stays signed") {
    // MariaDB 10.11 (Field_year is a Field_tiny: SIGN_UNSIGNED), as types_db.t_temporal shows:
    //   a INT, y YEAR, b INT, d DECIMAL(10,2) -> bits 0 1 0 0 = 0x40
    Buf opt;
    tlv(opt, 1, {0x40});
    tlv(opt, 4, names({"a", "y", "b", "d"}));
    const Run r = convert_one("10.11.19-MariaDB-log", table_map(kYearTypes, kYearMeta, opt), write_rows(4, kYearRow, false));
    CHECK(r.rc == 0);
    CHECK(r.err == "");
    CHECK(after_of(r.out) == R"({"a":-1,"y":2024,"b":-1,"d":"1.50"})");
  }

  TEST_CASE("COLUMN_CHARSET: MariaDB counts GEOMETRY among the character columns") {
    // MariaDB (id INT, g GEOMETRY, j JSON = LONGTEXT utf8mb4_bin): the character columns are g
    // (binary, 63) and j (46); two collations, so the per-column form: 63 46.
    const Buf types = {3, 255, 252};
    const Buf meta = {4, 4};  // GEOMETRY and LONGTEXT: 4-byte length
    Buf opt;
    tlv(opt, 1, {0x00});
    tlv(opt, 3, {63, 46});
    tlv(opt, 4, names({"id", "g", "j"}));
    tlv(opt, 7, {0});  // GEOMETRY_TYPE: GEOMETRY
    const std::string_view doc = R"({"a": 1})";
    Buf row = {0x02, /*id*/ 1, 0, 0, 0, /*g NULL; j*/ static_cast<std::uint8_t>(doc.size()), 0, 0, 0};
    row.insert(row.end(), doc.begin(), doc.end());
    const Run r = convert_one("10.11.19-MariaDB-log", table_map(types, meta, opt), write_rows(3, row, false));
    CHECK(r.rc == 0);
    CHECK(r.err == "");
    CHECK(after_of(r.out) == R"({"id":1,"g":null,"j":"{\"a\": 1}"})");
  }

  TEST_CASE("DEFAULT_CHARSET: MariaDB's index counts GEOMETRY; the TABLE_MAP is not rejected") {
    // MariaDB (id INT, j1 JSON, j2 JSON, g POINT): character columns j1 j2 g with 46 46 63, so
    // the default form: default 46, then (index 2, 63) for g.
    const Buf types = {3, 252, 252, 255};
    const Buf meta = {4, 4, 4};
    Buf opt;
    tlv(opt, 1, {0x00});
    tlv(opt, 2, {46, 2, 63});
    tlv(opt, 4, names({"id", "j1", "j2", "g"}));
    tlv(opt, 7, {1});  // GEOMETRY_TYPE: POINT
    Buf row = {0x08, /*id*/ 2, 0, 0, 0, /*j1*/ 2, 0, 0, 0, '[', ']', /*j2*/ 4, 0, 0, 0, 't', 'r', 'u', 'e'};
    const Run r = convert_one("10.11.19-MariaDB-log", table_map(types, meta, opt), write_rows(4, row, false));
    CHECK(r.rc == 0);
    CHECK(r.err == "");
    CHECK(after_of(r.out) == R"({"id":2,"j1":"[]","j2":"true","g":null})");
  }

  TEST_CASE("COLUMN_CHARSET: MySQL does not count GEOMETRY") {
    // MySQL 8.0 (is_character_type(real_type()): STRING VAR_STRING VARCHAR BLOB):
    // (id INT, g GEOMETRY, t TEXT utf8mb4_0900_ai_ci, b BLOB) -> character columns t b: 255 63.
    const Buf types = {3, 255, 252, 252};
    const Buf meta = {4, 2, 2};
    Buf opt;
    tlv(opt, 1, {0x00});
    tlv(opt, 3, {0xfc, 0xff, 0x00, 63});
    tlv(opt, 4, names({"id", "g", "t", "b"}));
    tlv(opt, 7, {0});
    const Buf row = {0x02, /*id*/ 3, 0, 0, 0, /*g NULL; t*/ 2, 0, 'h', 'i', /*b*/ 1, 0, 0xff};
    const Run r = convert_one("8.0.36", table_map(types, meta, opt), write_rows(4, row, true));
    CHECK(r.rc == 0);
    CHECK(r.err == "");
    CHECK(after_of(r.out) == R"({"id":3,"g":null,"t":"hi","b":"/w=="})");
  }
}

TEST_CASE("table_definition_from_map: a CREATE TABLE from the map alone that fits the map") {
  // a INT UNSIGNED, v VARCHAR(20) utf8mb4, e ENUM('x','y'), d DECIMAL(10,2), p POINT, t TEXT latin1
  const Buf types = {3, 15, 254, 246, 255, 252};
  const Buf meta = {80, 0, 247, 1, 10, 2, 4, 2};
  Buf opt;
  tlv(opt, 1, {0x80});                      // SIGNEDNESS: a unsigned, d signed
  tlv(opt, 3, {45, 8});                     // COLUMN_CHARSET: v utf8mb4_general_ci, t latin1_swedish_ci
  tlv(opt, 4, names({"a", "v", "e", "d", "p", "t"}));
  tlv(opt, 6, {2, 1, 'x', 1, 'y'});         // ENUM_STR_VALUE
  tlv(opt, 7, {1});                         // GEOMETRY_TYPE: POINT
  tlv(opt, 8, {0});                         // SIMPLE_PRIMARY_KEY: a
  tlv(opt, 11, {45});                       // ENUM_AND_SET_COLUMN_CHARSET
  auto tm = parse(types, meta, opt, Flavor::mysql, kMysql8036);
  const SchemaTable def = table_definition_from_map(*tm);
  CHECK(create_table_sql(def) ==
        "CREATE TABLE `shop`.`t` (\n"
        "  `a` int unsigned NOT NULL,\n"
        "  `v` varchar(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL,\n"
        "  `e` enum('x','y') CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL,\n"
        "  `d` decimal(10,2) NULL,\n"
        "  `p` point NULL,\n"
        "  `t` text CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,\n"
        "  PRIMARY KEY (`a`)\n"
        ");");
  // Read back as --schema would, the definition fits a map without metadata of the same table.
  SchemaHistory h;
  REQUIRE(h.apply_script(create_table_sql(def)) == 1);
  auto bare = parse(types, meta, {}, Flavor::mysql, kMysql8036);
  CHECK(apply_table_schema(*bare, *h.find("shop", "t")) == "");
  CHECK(bare->columns[0].is_unsigned);
  CHECK(bare->columns[5].charset == 8);
  CHECK(bare->columns[2].values == std::vector<std::string>{"x", "y"});
  // Canal's mysqlType keeps its own spelling: display widths, GEOMETRY without subtype.
  CHECK(column_type_text(column_definition_from_map(tm->columns[0], Flavor::mysql, true)) == "int(10) unsigned");
}
