// apply_table_schema: a TABLE_MAP completed from the table's definition in schema history.
//
// The definition is only trusted when it fits the map column for column: schema history can be
// stale (a --schema file older than the binlog, DDL the history did not understand, a binlog read
// from the middle), and a definition that does not fit would put names on the wrong values or,
// for MariaDB's legacy temporals, split the row at the wrong bytes.
#include "dump/info.h"
#include "rows/table_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

namespace binlogctl {

namespace {

// Whether a column declared `type` can be logged with type code `t` (real type resolved).
// Types the list does not know (plugin types, future keywords) fit anything.
bool fits(std::string_view type, ColumnType t) {
  const auto any_of = [t](std::initializer_list<ColumnType> l) {
    return std::find(l.begin(), l.end(), t) != l.end();
  };
  using C = ColumnType;
  const auto blobs = {C::tiny_blob, C::blob, C::medium_blob, C::long_blob};
  const auto is = [type](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), type) != names.end();
  };
  if (is({"tinyint", "bool", "boolean", "int1"})) return t == C::tiny;
  if (is({"smallint", "int2"})) return t == C::short_;
  if (is({"mediumint", "int3", "middleint"})) return t == C::int24;
  if (is({"int", "integer", "int4"})) return t == C::long_;
  if (is({"bigint", "int8", "serial"})) return t == C::longlong;
  if (is({"decimal", "dec", "numeric", "fixed", "number"})) return any_of({C::newdecimal, C::decimal});
  // FLOAT(p) with p > 24 is a DOUBLE; REAL is a FLOAT under sql_mode REAL_AS_FLOAT.
  if (is({"float", "float4", "float8", "double", "real", "double precision"}))
    return any_of({C::float_, C::double_});
  if (type == "bit") return t == C::bit;
  if (type == "year") return t == C::year;
  if (type == "date") return any_of({C::date, C::newdate});
  if (type == "time") return any_of({C::time, C::time2});
  if (type == "datetime") return any_of({C::datetime, C::datetime2});
  if (type == "timestamp") return any_of({C::timestamp, C::timestamp2});
  if (is({"char", "character", "nchar", "national char", "national character", "binary", "uuid", "inet4",
          "inet6"}))
    return any_of({C::string, C::var_string});
  if (type == "enum") return any_of({C::enum_, C::string});
  if (type == "set") return any_of({C::set, C::string});
  if (is({"varchar", "varbinary", "nvarchar", "varchar2", "character varying", "national varchar",
          "char varying", "varcharacter"}))
    return any_of({C::varchar, C::var_string});
  if (is({"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob", "long",
          "long varchar", "long varbinary", "clob"}))
    return std::find(blobs.begin(), blobs.end(), t) != blobs.end();
  if (type == "json")  // MySQL's binary JSON, MariaDB's LONGTEXT alias
    return t == C::json || std::find(blobs.begin(), blobs.end(), t) != blobs.end();
  if (is({"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
          "geometrycollection", "geomcollection"}))
    return t == C::geometry;
  return true;
}

bool binary_type(std::string_view type) {
  for (std::string_view b : {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "long varbinary"})
    if (type == b) return true;
  return false;
}

bool utf8_like(std::uint16_t collation) {
  const std::string_view cs = collation_charset_name(collation);
  return collation == 0 || cs == "utf8mb4" || cs == "utf8mb3" || cs == "ascii";
}

// Bytes per character of a collation's charset, for CHAR/VARCHAR lengths (the map gives bytes).
unsigned charset_maxlen(std::uint16_t collation) {
  return static_cast<unsigned>(collation_max_bytes(collation));
}

}  // namespace

SchemaColumn column_definition_from_map(const ColumnDef& c, Flavor flavor, bool display_widths) {
  const ColumnType t = c.real_type == ColumnType::null ? c.type : c.real_type;
  SchemaColumn s;
  s.name = c.name;
  s.nullable = c.nullable;
  s.invisible = !c.visible;
  const bool bin = c.charset == 63;
  const auto integer = [&](const char* name, int w_signed, int w_unsigned) {
    s.type = name;
    if (display_widths) s.length = c.is_unsigned ? w_unsigned : w_signed;
    s.is_unsigned = c.is_unsigned;
  };
  const auto fsp = [&](const char* name) {
    s.type = name;
    if (c.meta >= 1 && c.meta <= 6) s.decimals = c.meta;
  };
  switch (t) {
    case ColumnType::tiny: integer("tinyint", 4, 3); break;
    case ColumnType::short_: integer("smallint", 6, 5); break;
    case ColumnType::int24: integer("mediumint", 9, 8); break;
    case ColumnType::long_: integer("int", 11, 10); break;
    case ColumnType::longlong: integer("bigint", 20, 20); break;
    case ColumnType::newdecimal:
      s.type = "decimal";
      s.length = c.meta >> 8;
      s.decimals = c.meta & 0xff;
      s.is_unsigned = c.is_unsigned;
      break;
    case ColumnType::decimal: s.type = "decimal"; break;
    case ColumnType::float_:
    case ColumnType::double_:
      s.type = t == ColumnType::float_ ? "float" : "double";
      s.is_unsigned = c.is_unsigned;
      break;
    case ColumnType::bit:
      s.type = "bit";
      s.length = (c.meta >> 8) * 8 + (c.meta & 0xff);
      break;
    // The plain TIMESTAMP/DATETIME/TIME codes carry no fsp; meta holds one only for a MariaDB
    // pre-10.0 column that schema history completed.
    case ColumnType::timestamp:
    case ColumnType::timestamp2: fsp("timestamp"); break;
    case ColumnType::datetime:
    case ColumnType::datetime2: fsp("datetime"); break;
    case ColumnType::time:
    case ColumnType::time2: fsp("time"); break;
    case ColumnType::date:
    case ColumnType::newdate: s.type = "date"; break;
    case ColumnType::year:
      s.type = "year";
      if (display_widths) s.length = 4;
      break;
    case ColumnType::enum_:
    case ColumnType::set:
      s.type = t == ColumnType::enum_ ? "enum" : "set";
      s.elements = c.values;
      break;
    case ColumnType::string: {
      const unsigned len = unpack_string_meta(c.meta).length;
      s.type = bin ? "binary" : "char";
      s.length = static_cast<int>(bin ? len : len / charset_maxlen(c.charset));
      break;
    }
    case ColumnType::varchar:
    case ColumnType::var_string:
      s.type = bin ? "varbinary" : "varchar";
      s.length = static_cast<int>(bin ? c.meta : c.meta / charset_maxlen(c.charset));
      break;
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::blob: {
      static const char* const blobs[] = {"blob", "tinyblob", "blob", "mediumblob", "longblob"};
      static const char* const texts[] = {"text", "tinytext", "text", "mediumtext", "longtext"};
      const std::size_t i = c.meta <= 4 ? c.meta : 0;
      s.type = c.charset != 0 && c.charset != 63 ? texts[i] : blobs[i];
      break;
    }
    case ColumnType::json: s.type = "json"; break;
    case ColumnType::geometry: {
      static const char* const kinds[] = {"geometry",   "point",           "linestring",   "polygon",
                                          "multipoint", "multilinestring", "multipolygon", "geometrycollection"};
      s.type = c.has_geometry_type && c.geometry_type < 8 ? kinds[c.geometry_type] : "geometry";
      break;
    }
    case ColumnType::vector:
      s.type = "vector";
      s.length = c.meta / 4;
      break;
    default: s.type = column_type_name(t); break;
  }
  // Character columns (and ENUM/SET) with a known, non-binary collation.
  const bool textual = s.type == "char" || s.type == "varchar" || s.type.ends_with("text") || s.type == "enum" ||
                       s.type == "set";
  // Only a collation id known by name: the charset of an unknown id would be a guess.
  if (textual && c.charset != 0 && c.charset != 63) {
    if (const char* name = collation_name(c.charset, flavor)) {
      s.charset = collation_charset_name(c.charset);
      s.collation = name;
    }
  }
  return s;
}

SchemaTable table_definition_from_map(const TableMap& tm) {
  SchemaTable t;
  t.db = tm.db;
  t.name = tm.table;
  t.columns.reserve(tm.columns.size());
  for (const ColumnDef& c : tm.columns) t.columns.push_back(column_definition_from_map(c, tm.flavor));
  for (std::uint32_t k : tm.primary_key)
    if (k < t.columns.size()) t.primary_key.push_back(t.columns[k].name);
  return t;
}

std::string apply_table_schema(TableMap& tm, const SchemaTable& def) {
  if (def.columns.size() != tm.columns.size())
    return fmt::format("its definition has {} columns, the TABLE_MAP {}", def.columns.size(), tm.columns.size());
  for (std::size_t i = 0; i < def.columns.size(); ++i) {
    const SchemaColumn& s = def.columns[i];
    const ColumnDef& c = tm.columns[i];
    if (!fits(s.type, real_column_type(c.type, c.meta)))
      return fmt::format("column {} is declared {} but logged as {}", i + 1, s.type, column_type_name(c.type));
    // Names must agree where the map has them, or the definition is of another table version.
    if (tm.optional_fields & kOptColumnName) {
      const std::string& n = c.name;
      if (n.size() != s.name.size() ||
          !std::equal(n.begin(), n.end(), s.name.begin(), [](char a, char b) {
            const auto lower = [](char x) { return x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x; };
            return lower(a) == lower(b);
          }))
        return fmt::format("column {} is named {} in its definition, {} in the TABLE_MAP", i + 1, s.name, n);
    }
  }

  const bool have_names = (tm.optional_fields & kOptColumnName) != 0;
  const bool have_sign = (tm.optional_fields & kOptSignedness) != 0;
  const bool have_charset = (tm.optional_fields & (kOptDefaultCharset | kOptColumnCharset)) != 0;
  const bool have_enum_charset = (tm.optional_fields & (kOptEnumSetDefaultCharset | kOptEnumSetColumnCharset)) != 0;
  const std::uint16_t table_charset = charset_collation_id(def.default_charset);

  for (std::size_t i = 0; i < def.columns.size(); ++i) {
    const SchemaColumn& s = def.columns[i];
    ColumnDef& c = tm.columns[i];
    const ColumnType rt = real_column_type(c.type, c.meta);
    if (!have_names) c.name = s.name;
    if (!have_sign && is_numeric_column(c.type)) c.is_unsigned = s.is_unsigned;

    const bool enum_set = rt == ColumnType::enum_ || rt == ColumnType::set;
    if ((enum_set && !have_enum_charset) || (!enum_set && is_character_column(c.type, c.meta) && !have_charset)) {
      std::uint16_t cs = 0;
      if (binary_type(s.type)) cs = 63;
      else if (!s.collation.empty()) cs = charset_collation_id(s.collation);
      else if (!s.charset.empty()) cs = charset_collation_id(s.charset);
      else if (s.type == "json") cs = 45;
      else if (s.type == "nchar" || s.type == "nvarchar" || s.type.starts_with("national")) cs = 33;
      else cs = table_charset;
      if (cs != 0) c.charset = cs;
    }
    // Member names from the statement are UTF-8; they stand in for the map's (which are in the
    // column's charset) only where the two encodings agree.
    if (enum_set && c.values.empty() && utf8_like(c.charset)) c.values = s.elements;

    if ((c.type == ColumnType::float_ || c.type == ColumnType::double_) && s.decimals >= 0 && s.decimals <= 30 &&
        s.length >= 0)
      c.decimals = static_cast<std::int8_t>(s.decimals);
    if (rt == ColumnType::string) {
      if (s.type == "uuid") c.hint = ValueHint::uuid;
      else if (s.type == "inet4") c.hint = ValueHint::inet4;
      else if (s.type == "inet6") c.hint = ValueHint::inet6;
    }
    // MariaDB's pre-10.0 high-precision temporals: plain codes, no metadata, fsp from here.
    if ((c.type == ColumnType::time || c.type == ColumnType::datetime || c.type == ColumnType::timestamp) &&
        c.meta == 0 && s.decimals >= 1 && s.decimals <= 6)
      c.meta = static_cast<std::uint16_t>(s.decimals);
  }
  if (!have_names) tm.names_from_schema = true;
  if (tm.primary_key.empty() && !def.primary_key.empty()) {
    std::vector<std::uint32_t> pk;
    for (const std::string& name : def.primary_key) {
      const int k = def.column_index(name);
      if (k < 0) {
        pk.clear();
        break;
      }
      pk.push_back(static_cast<std::uint32_t>(k));
    }
    tm.primary_key = std::move(pk);
    for (std::uint32_t k : tm.primary_key) tm.columns[k].in_primary_key = true;
  }
  tm.finalize();
  return {};
}

}  // namespace binlogctl
