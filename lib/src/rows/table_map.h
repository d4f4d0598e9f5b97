// TABLE_MAP in full: the per-column types and metadata of the fixed part, and the optional
// metadata block (binlog_row_metadata=MINIMAL|FULL, MySQL 8.0.1+ / MariaDB 10.5+), turned into
// one ColumnDef per column that row decoding and rendering use. Plus the bounded cache of table
// maps by table id that a reader keeps while walking a binlog.
//
// Optional metadata (libs/mysql/binlog/event/rows_event.h, Table_map_event::Optional_metadata_
// field_type; MariaDB uses the same numbers 1..11). A sequence of TLV fields until the end of the
// event: 1 byte type, packed length, value. Integers inside are length-encoded (packed) integers.
//   1  SIGNEDNESS            bitmap, one bit per numeric column (TINY SHORT INT24 LONG LONGLONG
//                            DECIMAL NEWDECIMAL FLOAT DOUBLE) and per YEAR column, most
//                            significant bit first; 1 = UNSIGNED (YEAR's bit means nothing).
//                            MySQL 8.0.20 and older wrote no bit for YEAR.
//   2  DEFAULT_CHARSET       packed default collation, then (packed index among the character
//                            columns, packed collation) pairs for the columns that differ
//   3  COLUMN_CHARSET        packed collation per character column
//   4  COLUMN_NAME           per column: packed length + name
//   5  SET_STR_VALUE         per SET column: packed count, then count x (packed length + value)
//   6  ENUM_STR_VALUE        per ENUM column: the same
//   7  GEOMETRY_TYPE         packed geometry type per GEOMETRY column (0 GEOMETRY, 1 POINT, ...)
//   8  SIMPLE_PRIMARY_KEY    packed column index per key part
//   9  PRIMARY_KEY_WITH_PREFIX  (packed column index, packed prefix length; 0 = whole column)
//  10  ENUM_AND_SET_DEFAULT_CHARSET  as 2, over the ENUM and SET columns
//  11  ENUM_AND_SET_COLUMN_CHARSET   as 3, over the ENUM and SET columns
//  12  COLUMN_VISIBILITY     bitmap over all columns, most significant bit first; 1 = visible
//                            (MySQL 8.0.23+; invisible columns are still in every row image)
//  13  VECTOR_DIMENSIONALITY packed dimension per VECTOR column (MySQL 9.0+)
// "Character columns" are STRING (real type not ENUM/SET), VAR_STRING, VARCHAR and the BLOB family
// (MariaDB's JSON is a LONGTEXT and counts), and VECTOR (MySQL 9.0 writes a charset entry for
// it, as vector.binlog shows); on MariaDB also GEOMETRY (its writer counts every column with a
// charset but ENUM/SET, and GEOMETRY has the binary one; MySQL's counts by type and leaves
// GEOMETRY out). "ENUM and SET columns" are STRING columns whose real type is ENUM or SET (and
// the ENUM/SET type codes themselves). The FDE's flavor (TableMapEvent::flavor) picks the rules;
// man/binlogctl-convert.1.scd (OPTIONAL METADATA) lists them with their sources. Unknown field
// types are skipped by their length, so tables from newer servers still decode.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/columns.h>
#include <binlogctl/result.h>
#include <binlogctl/schema.h>

#include "events/events.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace binlogctl {

struct ColumnDef {
  ColumnType type = ColumnType::null;  // as TABLE_MAP gives it (STRING for CHAR/ENUM/SET)
  ColumnType real_type = ColumnType::null;  // STRING resolved to ENUM/SET when the meta says so
  std::uint16_t meta = 0;
  bool nullable = true;
  bool is_unsigned = false;
  std::uint16_t charset = 0;  // collation id, 0 = not given
  std::string name;           // from COLUMN_NAME, else "@N" (1-based, as mysqlbinlog prints)
  std::vector<std::string> values;  // ENUM/SET member names, definition order
  bool has_geometry_type = false;
  std::uint32_t geometry_type = 0;
  bool visible = true;
  bool has_vector_dimension = false;
  std::uint32_t vector_dimension = 0;
  bool in_primary_key = false;
  std::uint32_t key_prefix = 0;  // 0 = the whole column
  // From the table's definition (schema history), which the TABLE_MAP does not carry:
  std::int8_t decimals = -1;              // FLOAT(M,D) / DOUBLE(M,D): D
  ValueHint hint = ValueHint::none;       // MariaDB UUID / INET4 / INET6
};

// Which optional metadata fields the event carried.
enum OptionalField : std::uint32_t {
  kOptSignedness = 1u << 1,
  kOptDefaultCharset = 1u << 2,
  kOptColumnCharset = 1u << 3,
  kOptColumnName = 1u << 4,
  kOptSetValues = 1u << 5,
  kOptEnumValues = 1u << 6,
  kOptGeometryType = 1u << 7,
  kOptSimplePrimaryKey = 1u << 8,
  kOptPrimaryKeyWithPrefix = 1u << 9,
  kOptEnumSetDefaultCharset = 1u << 10,
  kOptEnumSetColumnCharset = 1u << 11,
  kOptColumnVisibility = 1u << 12,
  kOptVectorDimensionality = 1u << 13,
};

// A decoded TABLE_MAP. Not copyable or movable once finalized: `infos` holds views into the
// ENUM/SET names of `columns`. Create it with parse_table_map (which returns a unique_ptr).
struct TableMap {
  std::uint64_t table_id = 0;
  std::uint16_t flags = 0;
  std::string db, table;
  std::vector<ColumnDef> columns;
  std::vector<std::uint32_t> primary_key;  // column indexes in key order
  std::uint32_t optional_fields = 0;       // OptionalField bits
  std::uint32_t json_columns = 0;          // number of JSON columns (PARTIAL_UPDATE_ROWS bitmap)
  Flavor flavor = Flavor::mysql;           // the writer's (TableMapEvent::flavor): whose counting
  std::uint32_t server_version = 0;        // rules the optional metadata follows

  // What every value decoder reads of each column (built by finalize()). A renderer's own
  // caches (the JSON keys, rendered ENUM names) live in its plan (rows.h JsonRowPlan), not here.
  std::vector<ColumnInfo> infos;
  std::vector<std::vector<std::string_view>> value_views;
  // Unique to this map and this finalize() (never 0 once finalized, never reused): what a
  // renderer keys its plan for the map by. finalize() after a change (schema history's names)
  // gives a new one.
  std::uint64_t serial = 0;

  bool names_from_schema = false;          // column names taken from schema history
  std::uint64_t schema_generation = 0;     // SchemaHistory::generation() when it was applied
  bool has_names() const noexcept { return (optional_fields & kOptColumnName) != 0 || names_from_schema; }
  // True when `ev` maps the same table with byte-identical column data (the common case of a
  // table mapped again by every transaction): the cached map can be reused as is.
  bool same_as(const TableMapEvent& ev) const noexcept;
  // The same between two maps parsed from TABLE_MAPs (what completion added is not compared).
  bool same_as(const TableMap& o) const noexcept {
    return table_id == o.table_id && flags == o.flags && flavor == o.flavor &&
           server_version == o.server_version && signature == o.signature;
  }
  std::string signature;  // db NUL table NUL types metadata null_bitmap optional_metadata
  // The row stream's selection of this map (-d, --filter): -1 = not decided yet.
  std::int8_t selected = -1;
  // Builds infos/value_views and takes a new serial; call once the TableMap is at its final
  // address, and again after changing its columns.
  void finalize();

  TableMap() = default;
  TableMap(const TableMap&) = delete;
  TableMap& operator=(const TableMap&) = delete;
};

// ENUM or SET when the column is one (type code or STRING real type), else the type itself.
ColumnType real_column_type(ColumnType t, std::uint16_t meta) noexcept;
// Whether DEFAULT_CHARSET / COLUMN_CHARSET count the column, on a server of this flavor.
bool is_character_column(ColumnType t, std::uint16_t meta, Flavor flavor = Flavor::mysql) noexcept;
// The numeric types (SIGNEDNESS also has a bit for YEAR, which is not one of them).
bool is_numeric_column(ColumnType t) noexcept;

// Decodes the fixed part's metadata block and null bitmap and the optional metadata of `ev`.
// `metadata_offset` / `optional_offset` are the absolute offsets of ev.metadata /
// ev.optional_metadata (for error offsets). Errors: Errc::bad_value for a column type whose
// metadata size is unknown, Errc::truncated / Errc::bad_length inside a TLV field (at the field),
// Errc::bad_value for a primary key index past the column count.
Result<std::unique_ptr<TableMap>> parse_table_map(const TableMapEvent& ev,
                                                  std::uint64_t metadata_offset,
                                                  std::uint64_t optional_offset);

// Just the optional metadata block, applied to `tm` (whose columns, flavor and server_version
// are already set up: they decide which columns each field counts).
Status parse_optional_metadata(Bytes block, std::uint64_t offset, TableMap& tm);

// Completes `tm` (freshly parsed, not yet shared) with what the table's definition in schema
// history says and the TABLE_MAP does not: column names (when the map has none), signedness,
// character sets, ENUM/SET member names and the primary key when their optional metadata is
// absent; FLOAT(M,D)/DOUBLE(M,D) decimals; MariaDB's UUID/INET4/INET6 types; and the fsp of
// MariaDB's pre-10.0 high-precision TIME/DATETIME/TIMESTAMP columns, without which their rows
// cannot be split into columns. Applied only when the definition fits the map: the same number
// of columns, each of a type compatible with the map's type code. Returns an empty string when
// applied, else why not (for a warning). Calls tm.finalize().
std::string apply_table_schema(TableMap& tm, const SchemaTable& def);

// A column's definition as far as its TABLE_MAP entry tells it: the type from the type code and
// metadata (CHAR/VARCHAR lengths in characters of the column's charset, DECIMAL(M,D), BIT(M),
// fsp, ENUM/SET members, BLOB vs TEXT by charset, GEOMETRY's subtype when GEOMETRY_TYPE names
// one), UNSIGNED, nullability, visibility, and the charset and collation names of the collation
// id. `display_widths`: integer types with the display width of MySQL 5.7 (int(11), year(4)),
// as Canal's mysqlType spells them. The name is the map's (possibly "@N").
SchemaColumn column_definition_from_map(const ColumnDef& c, Flavor flavor, bool display_widths = false);
// The table as far as its TABLE_MAP tells it (column_definition_from_map for each column, and the
// primary key from the optional metadata). A definition only when the map names its columns.
SchemaTable table_definition_from_map(const TableMap& tm);

// Table maps by table id. Bounded: table ids are reused by the server, and a long binlog can
// map many tables; past `capacity` entries the oldest mapping is dropped (a rows event for it
// then reports a missing table map). Cleared on FORMAT_DESCRIPTION and ROTATE, as servers
// start numbering again.
class TableMapCache {
 public:
  explicit TableMapCache(std::size_t capacity = 4096) : capacity_(capacity) {}
  // Replaces any mapping of the same id. Returns the stored map.
  TableMap& put(std::unique_ptr<TableMap> tm);
  const TableMap* find(std::uint64_t table_id) const;
  TableMap* find(std::uint64_t table_id);
  // The stored map, shared: it outlives its replacement in the cache for as long as the caller
  // holds it (convert's rendering threads render rows events after the map was replaced; the
  // schema command keeps each table's last map to check it against schema history at the end).
  std::shared_ptr<const TableMap> find_shared(std::uint64_t table_id) const;
  std::shared_ptr<TableMap> find_shared(std::uint64_t table_id);
  void clear();
  std::size_t size() const noexcept { return map_.size(); }

 private:
  std::size_t capacity_;
  std::unordered_map<std::uint64_t, std::shared_ptr<TableMap>> map_;
  std::deque<std::uint64_t> order_;  // insertion order, for eviction
};

struct Event;

// The TABLE_MAP handling every row consumer shares (convert, the Canal mapper): decode, reuse of
// a map whose bytes and schema generation are unchanged, parse, completion from schema history
// (apply_table_schema), and two warnings on `err`, each once per table: that its definition does
// not fit (and why), and that its columns are named @1, @2, ... for want of names.
class TableMapLoader {
 public:
  TableMapLoader(TableMapCache& cache, const SchemaHistory& schema, std::FILE* err)
      : cache_(cache), schema_(schema), err_(err) {}

  struct Loaded {
    TableMap* map = nullptr;
    bool fresh = false;                // false: the cached map was reused as it was
    const SchemaTable* def = nullptr;  // the definition applied (fresh maps only), or null
  };
  // `log_name` and `pos` place the warnings. Errors: those of decode_table_map and
  // parse_table_map (the caller reports the event as undecodable).
  Result<Loaded> load(const Event& ev, std::string_view log_name, std::uint64_t pos);
  // Warnings are appended to `*to` (whole lines) instead of being printed on `err`, for a
  // caller that must order them with output it has not written yet. Null: print them.
  void defer_warnings(std::string* to) noexcept { deferred_ = to; }
  // false: the maps stay as their TABLE_MAP gives them (no schema history applied, so no
  // warning either, and a DDL statement does not make a cached map stale), for the schema
  // command, which prints what a map itself says (RowStream::Options::complete_maps).
  void complete_from_schema(bool on) noexcept { complete_ = on; }

 private:
  void warn(std::string text);
  TableMapCache& cache_;
  const SchemaHistory& schema_;
  std::FILE* err_;
  std::string* deferred_ = nullptr;
  bool complete_ = true;
  std::unordered_set<std::string> warned_names_, warned_schema_;
};

}  // namespace binlogctl
