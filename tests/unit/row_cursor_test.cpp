// Tests for RowImageCursor (lib/src/rows/row_cursor.h), the one walker of the row-image layout:
// on the project's real MariaDB fixtures against the ground truth the server's own tool printed
// (mariadb-binlog -vv in testdata/mariadb-10.11/*/expected/mariadb-binlog: every image's columns
// and which are NULL), and on hand-built images for the cells those fixtures do not have (absent
// columns of MINIMAL images, MySQL's partial JSON) and for the errors.
#include <binlogctl/chain.h>
#include <binlogctl/columns.h>
#include "rows/rows.h"
#include "rows/table_map.h"
#include <doctest/doctest.h>

#include "rows/row_cursor.h"
#include "txn/row_stream.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace binlogctl;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(BINLOGCTL_SOURCE_DIR) / "testdata" / "mariadb-10.11";

class Quiet : public DiagnosticSink {
 public:
  void report(const Diagnostic& d) override { list.push_back(d); }
  std::vector<Diagnostic> list;
};

// One line per cell of an image: "@N" (1-based, as mariadb-binlog numbers columns) and "=NULL"
// for a null one; images separated by "|".
std::string cell_text(const RowImageCursor& cur) {
  std::string s = "@" + std::to_string(cur.column() + 1);
  if (cur.kind() == CellKind::null) s += "=NULL";
  if (cur.kind() == CellKind::absent) s += "=absent";
  if (cur.kind() == CellKind::partial) s += "=partial";
  return s;
}

// Walks every image of every rows event with the cursor, sizing each value with
// column_value_size (as the stats walker does): the images must use up the event exactly.
class Walker final : public RowSink {
 public:
  std::vector<std::string> images;
  std::vector<std::string> errors;
  std::size_t kinds[4] = {};

  void undecodable(const Event&, std::string_view, const DecodeError& e) override { errors.push_back(e.what); }
  void report(const Diagnostic& d) override { errors.push_back(d.message); }
  void rows(const RowsView& v) override {
    ByteReader r(v.rows, v.rows_offset);
    while (!r.empty() && r.ok()) {
      walk(v, v.header->columns_before, r);
      if (v.kind.kind == RowsKind::update) walk(v, v.header->columns_after, r);
    }
    if (!r.ok()) errors.push_back(r.error().what);
  }
  void walk(const RowsView& v, Bytes present, ByteReader& r) {
    ByteReader r2 = r;  // walked again with next_value: the same values, the same bytes
    std::string values, values2;
    RowImageCursor cur2;
    REQUIRE(cur2.open(*v.map, v.header->width, present, false, r2).ok());
    while (cur2.next_value()) {
      values2 += std::to_string(cur2.column()) + " ";
      const ColumnDef& c = v.map->columns[cur2.column()];
      auto n = column_value_size(c.type, c.meta, r2);
      REQUIRE(n);
      r2.skip(*n);
    }
    RowImageCursor cur;
    Status st = cur.open(*v.map, v.header->width, present, false, r);
    if (!st.ok()) {
      errors.push_back(st.error().what);
      r.skip(r.remaining());
      return;
    }
    std::string img;
    while (cur.next()) {
      ++kinds[static_cast<int>(cur.kind())];
      img += (img.empty() ? "" : " ") + cell_text(cur);
      if (cur.kind() == CellKind::value) {
        const ColumnDef& c = v.map->columns[cur.column()];
        auto n = column_value_size(c.type, c.meta, r);
        if (!n) {
          errors.push_back(n.error().what);
          r.skip(r.remaining());
          return;
        }
        r.skip(*n);
        values += std::to_string(cur.column()) + " ";
      }
    }
    CHECK(values2 == values);
    CHECK(r2.position() == r.position());
    images.push_back(img);
  }
};

// The images mariadb-binlog -vv printed: after each "### SET" or "### WHERE", one
// "###   @N=... is_null=X */" line per column of the image.
std::vector<std::string> expected_images(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "expected" / "mariadb-binlog"))
    if (e.path().filename().string().rfind("mariadb-bin.", 0) == 0) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const fs::path& p : files) {
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) {
      if (line == "### SET" || line == "### WHERE") {
        out.emplace_back();
      } else if (line.rfind("###   @", 0) == 0) {  // (a value's text may go on over more lines)
        REQUIRE_FALSE(out.empty());
        const std::size_t eq = line.find('=');
        std::string cell = line.substr(6, eq - 6);
        while (line.find(" is_null=") == std::string::npos && std::getline(in, line)) {
        }
        const std::size_t nul = line.rfind(" is_null=") + 1;
        REQUIRE(nul != 0);
        if (line[nul + 8] == '1') cell += "=NULL";
        out.back() += (out.back().empty() ? "" : " ") + cell;
      }
    }
  }
  return out;
}

Walker walk_fixture(const fs::path& dir) {
  Walker w;
  RowStream s(RowStream::Options{}, w);
  ChainOptions co;
  co.inputs = {(dir / "binlogs").string()};
  co.pass_fde_before_start = true;
  co.threads = 1;
  co.progress = ProgressMode::never;
  Quiet q;
  REQUIRE(read_chain(co, s, q, stderr));
  s.finish();
  CHECK(q.list.empty());
  return w;
}

using Buf = std::vector<std::uint8_t>;
Bytes B(const Buf& b) { return Bytes(b.data(), b.size()); }

void put_str(Buf& b, std::string_view s) {
  b.push_back(static_cast<std::uint8_t>(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}

// id INT, doc JSON, note VARCHAR(20), meta JSON (two JSON columns: the partial bitmap has two bits)
std::unique_ptr<TableMap> docs_map() {
  static Buf types = {3, 245, 15, 245};
  static Buf meta = {/*json*/ 4, /*varchar 80*/ 80, 0, /*json*/ 4};
  static Buf nulls = {0x0e};
  static Buf opt;
  opt.clear();
  Buf names;
  for (const char* n : {"id", "doc", "note", "meta"}) put_str(names, n);
  opt.push_back(4);
  opt.push_back(static_cast<std::uint8_t>(names.size()));
  opt.insert(opt.end(), names.begin(), names.end());
  TableMapEvent e;
  e.table_id = 7;
  e.db = "d";
  e.table = "t";
  e.column_count = types.size();
  e.column_types = B(types);
  e.metadata = B(meta);
  e.null_bitmap = B(nulls);
  e.optional_metadata = B(opt);
  auto r = parse_table_map(e, 100, 200);
  REQUIRE(r.ok());
  return std::move(*r);
}

// `n` INT NOT NULL columns without names.
std::unique_ptr<TableMap> int_map(std::size_t n) {
  static Buf types, nulls;
  types.assign(n, 3);
  nulls.assign((n + 7) / 8, 0);
  TableMapEvent e;
  e.table_id = 8;
  e.db = "d";
  e.table = "w";
  e.column_count = n;
  e.column_types = B(types);
  e.null_bitmap = B(nulls);
  auto r = parse_table_map(e, 100, 200);
  REQUIRE(r.ok());
  return std::move(*r);
}

std::string walk_all(const TableMap& tm, std::uint64_t width, const Buf& present, bool partial, ByteReader& r,
                     Status& st) {
  RowImageCursor cur;
  st = cur.open(tm, width, B(present), partial, r);
  std::string s;
  if (!st.ok()) return s;
  while (cur.next()) {
    s += (s.empty() ? "" : " ") + cell_text(cur);
    if (cur.kind() == CellKind::partial) {
      Bytes diffs;
      std::uint64_t at = 0;
      st = RowImageCursor::read_partial(r, tm.columns[cur.column()].meta, diffs, at);
      if (!st.ok()) return s;
      s += "[" + std::to_string(diffs.size()) + "@" + std::to_string(at) + "]";
    } else if (cur.kind() == CellKind::value) {
      const ColumnDef& c = tm.columns[cur.column()];
      auto n = column_value_size(c.type, c.meta, r);
      REQUIRE(n);
      s += "[" + std::to_string(*n) + "@" + std::to_string(r.offset()) + "]";
      r.skip(*n);
    }
  }
  return s;
}

// Images of docs_map (present, partial layout, row): MINIMAL with a NULL; partial JSON; every
// column, one NULL; id and note.
struct DocsImage {
  Buf present;
  bool partial;
  Buf row;
};
const DocsImage kDocsImages[] = {
    {{0x05}, false, {0x02, 1, 0, 0, 0}},
    {{0x0f}, true, {0x01, 0x02, 0x00, 9, 0, 0, 0, 1, 0, 0, 0, 0x04, 2, 'a', 'b', 5, 0, 0, 0, 2, 1, '$', 0, 0}},
    {{0x0f}, false, {0x04, 9, 0, 0, 0, 1, 0, 0, 0, 0x04, 1, 0, 0, 0, 0x04}},
    {{0x0a}, false, {0x00, 1, 0, 0, 0, 0x04, 1, 0, 0, 0, 0x04}},
};

}  // namespace

TEST_SUITE("row cursor") {
  TEST_CASE("RowImageCursor: every image of the basic fixture, cell by cell, as mariadb-binlog -vv shows it") {
    for (const std::string set : {"basic", "nochecksum", "metadata"}) {
      CAPTURE(set);
      const fs::path dir = kFixtures / set;
      Walker w = walk_fixture(dir);
      CHECK(w.errors.empty());
      const std::vector<std::string> want = expected_images(dir);
      REQUIRE(want.size() > 20);
      REQUIRE(w.images.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i);
        CHECK(w.images[i] == want[i]);
      }
      // FULL images: null and value cells, no absent ones; MariaDB has no partial JSON.
      CHECK(w.kinds[static_cast<int>(CellKind::value)] > 0);
      CHECK(w.kinds[static_cast<int>(CellKind::absent)] == 0);
      CHECK(w.kinds[static_cast<int>(CellKind::partial)] == 0);
      if (set == "basic") CHECK(w.kinds[static_cast<int>(CellKind::null)] == 300);
    }
  }

  TEST_CASE("RowImageCursor: absent, null and value cells of a MINIMAL image") {
    auto tm = docs_map();
    // present: id, note (bits 0, 2); note is NULL (null bit 1 of the two present columns)
    Buf present = {0x05};
    Buf row = {0x02, 1, 0, 0, 0, 0xee};
    ByteReader r(B(row), 500);
    Status st;
    CHECK(walk_all(*tm, 4, present, false, r, st) == "@1[4@501] @2=absent @3=NULL @4=absent");
    REQUIRE(st.ok());
    CHECK(r.position() == 5);

    // next_present and next_value skip what they say.
    ByteReader r2(B(row), 500);
    RowImageCursor cur;
    REQUIRE(cur.open(*tm, 4, B(present), false, r2).ok());
    CHECK(cur.present_count() == 2);
    CHECK_FALSE(cur.all_present());
    REQUIRE(cur.next_present());
    CHECK(cur.column() == 0);
    CHECK(cur.kind() == CellKind::value);
    r2.skip(4);
    REQUIRE(cur.next_present());
    CHECK(cur.column() == 2);
    CHECK(cur.kind() == CellKind::null);
    CHECK_FALSE(cur.next_present());
    ByteReader r3(B(row), 500);
    RowImageCursor cur3;
    REQUIRE(cur3.open(*tm, 4, B(present), false, r3).ok());
    REQUIRE(cur3.next_value());
    CHECK(cur3.column() == 0);
    CHECK_FALSE(cur3.next_value());
  }

  TEST_CASE("RowImageCursor: partial JSON cells follow the partial bitmap over all JSON columns") {
    auto tm = docs_map();
    Buf present = {0x0f};  // every column
    // value_options 1 (PARTIAL_JSON_UPDATES); partial bits: JSON #0 (doc) no, JSON #1 (meta) yes;
    // nulls none; id; doc (full JSON, 1 byte); note 'ab'; meta diffs (5 bytes)
    Buf row = {0x01, 0x02, 0x00, 9, 0, 0, 0, 1, 0, 0, 0, 0x04, 2, 'a', 'b', 5, 0, 0, 0, 2, 1, '$', 0, 0};
    ByteReader r(B(row), 1000);
    Status st;
    CHECK(walk_all(*tm, 4, present, true, r, st) == "@1[4@1003] @2[5@1007] @3[3@1012] @4=partial[5@1019]");
    REQUIRE(st.ok());
    CHECK(r.empty());
    // Without PARTIAL_JSON_UPDATES the same column is a value (sized by its length prefix).
    Buf full = row;
    full[0] = 0x00;
    full.erase(full.begin() + 1);  // no partial bitmap
    ByteReader r2(B(full), 0);
    CHECK(walk_all(*tm, 4, present, true, r2, st) == "@1[4@2] @2[5@6] @3[3@11] @4[9@14]");
    // A partial column whose null bit is set is null.
    Buf nulled = {0x01, 0x02, 0x08, 9, 0, 0, 0, 1, 0, 0, 0, 0x04, 2, 'a', 'b'};
    ByteReader r3(B(nulled), 0);
    CHECK(walk_all(*tm, 4, present, true, r3, st) == "@1[4@3] @2[5@7] @3[3@12] @4=NULL");
    // An absent JSON column still has its bit: meta (JSON #1) is partial with doc absent.
    Buf p2 = {0x09};  // id, meta
    Buf minimal = {0x01, 0x02, 0x00, 9, 0, 0, 0, 5, 0, 0, 0, 2, 1, '$', 0, 0};
    ByteReader r4(B(minimal), 0);
    CHECK(walk_all(*tm, 4, p2, true, r4, st) == "@1[4@3] @2=absent @3=absent @4=partial[5@11]");
  }

  TEST_CASE("RowImageCursor: for_each_present yields next_present's cells, and stops when asked") {
    auto tm = docs_map();
    const auto& images = kDocsImages;
    // How: next_present, for_each_present, or for_each_present opened with the present count given.
    enum How { stepwise, inside_out, count_given };
    auto cells = [&](const DocsImage& im, How how) {
      std::string got;
      ByteReader r(B(im.row), 0);
      RowImageCursor cur;
      const std::size_t n_present = count_bits(B(im.present), 4);
      REQUIRE((how == count_given ? cur.open(*tm, 4, B(im.present), n_present, im.partial, r)
                                  : cur.open(*tm, 4, B(im.present), im.partial, r))
                  .ok());
      CHECK(cur.present_count() == n_present);
      CHECK(cur.all_present() == (n_present == 4));
      got += std::to_string(r.position()) + ": ";
      auto one = [&](std::size_t i, CellKind k) {
        got += std::to_string(i) + ":" + std::to_string(static_cast<int>(k)) + " ";
        return true;
      };
      if (how == stepwise) {
        while (cur.next_present()) one(cur.column(), cur.kind());
      } else {
        CHECK(cur.for_each_present(one));
      }
      return got;
    };
    for (const DocsImage& im : images) {
      INFO(cells(im, stepwise));
      CHECK(cells(im, inside_out) == cells(im, stepwise));
      CHECK(cells(im, count_given) == cells(im, stepwise));
    }
    CHECK(cells(images[1], count_given) == "3: 0:2 1:2 2:2 3:3 ");
    CHECK(cells(images[3], count_given) == "1: 1:2 3:2 ");
    // With no partial cell possible (kMayBePartial false, or no PARTIAL_JSON_UPDATES) the same.
    ByteReader r(B(images[2].row), 0);
    RowImageCursor cur;
    REQUIRE(cur.open(*tm, 4, B(images[2].present), false, r).ok());
    std::string got;
    int calls = 0;
    CHECK_FALSE(cur.for_each_present<false>([&](std::size_t i, CellKind k) {
      got += std::to_string(i) + (k == CellKind::null ? "n " : "v ");
      return ++calls < 3;  // stop at the third cell
    }));
    CHECK(got == "0v 1v 2n ");
    // Opened with the count given, wider than the map: the same error, at the image.
    Buf all = {0xff};
    Buf row = {0x00};
    ByteReader r2(B(row), 70);
    RowImageCursor wide;
    Status st = wide.open(*tm, 5, B(all), 5, false, r2);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().offset == 70);
    CHECK(std::string(st.error().what) == "rows event has more columns than its TABLE_MAP");
  }

  TEST_CASE("RowImageCursor: errors as the walkers report them") {
    auto tm = docs_map();
    Status st;
    Buf all = {0xff};
    Buf row = {0x00};
    ByteReader r(B(row), 70);
    walk_all(*tm, 5, all, false, r, st);  // wider than the map
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::bad_value);
    CHECK(st.error().offset == 70);
    CHECK(std::string(st.error().what) == "rows event has more columns than its TABLE_MAP");

    Buf empty;
    ByteReader r2(B(empty), 80);  // no null bitmap
    walk_all(*tm, 4, all, false, r2, st);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::truncated);
    CHECK(st.error().offset == 80);

    Buf only_options = {0x01};  // the partial bitmap is missing
    ByteReader r3(B(only_options), 90);
    walk_all(*tm, 4, all, true, r3, st);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().offset == 91);

    Buf p = {0x08};  // meta only
    Buf long_diffs = {0x01, 0x02, 0x00, 50, 0, 0, 0, 1, 2};
    ByteReader r4(B(long_diffs), 0);
    walk_all(*tm, 4, p, true, r4, st);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::truncated);
    CHECK(st.error().offset == 3);
    CHECK(std::string(st.error().what) == "partial JSON value runs past the end of the row");
  }

  TEST_CASE("RowImageCursor: a full image's NULLs in bulk (any_null, value_bits)") {
    auto tm = docs_map();
    Buf present = {0x0f};
    RowImageCursor cur;
    Buf row = {0x04};  // note NULL
    ByteReader r(B(row), 0);
    REQUIRE(cur.open(*tm, 4, B(present), false, r).ok());
    REQUIRE(cur.all_present());
    CHECK(cur.any_null());
    CHECK(cur.value_bits(0) == 0x0b);
    Buf none = {0xf0};  // the bits past the last column are no column's
    ByteReader r2(B(none), 0);
    REQUIRE(cur.open(*tm, 4, B(present), false, r2).ok());
    CHECK_FALSE(cur.any_null());
    CHECK(cur.value_bits(0) == 0x0f);
    // A MINIMAL image: any_null looks at the present columns' bits only.
    Buf p2 = {0x05};  // id, note
    Buf second = {0xfe};
    ByteReader r3(B(second), 0);
    RowImageCursor cur3;
    REQUIRE(cur3.open(*tm, 4, B(p2), false, r3).ok());
    CHECK(cur3.any_null());
    Buf neither = {0xfc};
    ByteReader r4(B(neither), 0);
    RowImageCursor cur4;
    REQUIRE(cur4.open(*tm, 4, B(p2), false, r4).ok());
    CHECK_FALSE(cur4.any_null());

    // 70 columns: a second word of 6 columns.
    auto wide = int_map(70);
    Buf all(9, 0xff);
    Buf nulls(9, 0x00);
    nulls[8] = 0x20 | 0xc0;  // column 69 NULL; bits 70, 71 past the last column
    ByteReader r5(B(nulls), 0);
    RowImageCursor cw;
    REQUIRE(cw.open(*wide, 70, B(all), false, r5).ok());
    CHECK(cw.any_null());
    CHECK(cw.value_bits(0) == ~std::uint64_t{0});
    CHECK(cw.value_bits(64) == 0x1f);
    nulls[8] = 0xc0;
    nulls[0] = 0x01;  // column 0 NULL
    ByteReader r6(B(nulls), 0);
    REQUIRE(cw.open(*wide, 70, B(all), false, r6).ok());
    CHECK(cw.any_null());
    CHECK(cw.value_bits(0) == ~std::uint64_t{1});
    CHECK(cw.value_bits(64) == 0x3f);
    nulls[0] = 0x00;
    ByteReader r7(B(nulls), 0);
    REQUIRE(cw.open(*wide, 70, B(all), false, r7).ok());
    CHECK_FALSE(cw.any_null());
  }
}
