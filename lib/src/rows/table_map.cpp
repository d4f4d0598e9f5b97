// TABLE_MAP: column metadata, optional metadata (TLV), and the table-map cache.
#include "rows/table_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

namespace binlogctl {

ColumnType real_column_type(ColumnType t, std::uint16_t meta) noexcept {
  if (t == ColumnType::string) {
    const StringMeta sm = unpack_string_meta(meta);
    if (sm.real_type == ColumnType::enum_ || sm.real_type == ColumnType::set) return sm.real_type;
  }
  return t;
}

bool is_character_column(ColumnType t, std::uint16_t meta, Flavor flavor) noexcept {
  switch (real_column_type(t, meta)) {
    case ColumnType::string:
    case ColumnType::var_string:
    case ColumnType::varchar:
    case ColumnType::blob:
    case ColumnType::tiny_blob:
    case ColumnType::medium_blob:
    case ColumnType::long_blob:
    case ColumnType::vector:  // MySQL 9 lists VECTOR columns among the character columns
      return true;
    case ColumnType::geometry:  // MariaDB's writer counts it (binary charset); MySQL's does not
      return flavor == Flavor::mariadb;
    default:
      return false;
  }
}

bool is_numeric_column(ColumnType t) noexcept {
  switch (t) {
    case ColumnType::decimal:
    case ColumnType::tiny:
    case ColumnType::short_:
    case ColumnType::int24:
    case ColumnType::long_:
    case ColumnType::longlong:
    case ColumnType::newdecimal:
    case ColumnType::float_:
    case ColumnType::double_:
      return true;
    default:
      return false;
  }
}

namespace {

bool is_enum_or_set(const ColumnDef& c) {
  return c.real_type == ColumnType::enum_ || c.real_type == ColumnType::set;
}

// Bit i of a most-significant-bit-first bitmap.
bool msb_bit(Bytes b, std::size_t i) {
  return (b[i / 8] >> (7 - i % 8)) & 1;
}

// The first MySQL release taken to write a SIGNEDNESS bit for YEAR. MySQL 8.0's writer tests
// has_signedess_information_type(), which lists YEAR; 8.0.20's tested is_numeric_type(), which
// does not. Which release in between changed is not known here (see signedness_counts_year).
constexpr std::uint32_t kMysqlYearSignedness = (8u << 16) | 21u;  // 8.0.21

// Whether the SIGNEDNESS bitmap of `tm` (`bytes` long) has a bit for each YEAR column. MariaDB
// always writes one (Binlog_type_info of its Field_year, a Field_tiny, has a sign). For MySQL,
// the bitmap's length decides when the YEAR columns change its byte count; else the version.
bool signedness_counts_year(const TableMap& tm, std::size_t bytes) {
  if (tm.flavor == Flavor::mariadb) return true;
  std::size_t numeric = 0, years = 0;
  for (const ColumnDef& c : tm.columns) {
    if (is_numeric_column(c.type)) ++numeric;
    if (c.type == ColumnType::year) ++years;
  }
  const std::size_t with = (numeric + years + 7) / 8, without = (numeric + 7) / 8;
  if (with != without && (bytes == with || bytes == without)) return bytes == with;
  return tm.server_version == 0 || tm.server_version >= kMysqlYearSignedness;
}

// Collations per column of a subset (character columns, or ENUM/SET columns).
template <class Pred>
Status read_default_charset(ByteReader& f, TableMap& tm, Pred in_subset) {
  const auto def = static_cast<std::uint16_t>(f.packed_int());
  std::vector<ColumnDef*> subset;
  for (ColumnDef& c : tm.columns)
    if (in_subset(c)) subset.push_back(&c);
  for (ColumnDef* c : subset) c->charset = def;
  while (f.ok() && !f.empty()) {
    const std::uint64_t at = f.offset();
    const std::uint64_t idx = f.packed_int();
    const auto coll = static_cast<std::uint16_t>(f.packed_int());
    if (!f.ok()) break;
    if (idx >= subset.size())
      return DecodeError{Errc::bad_value, at, "DEFAULT_CHARSET names a column past the character columns"};
    subset[static_cast<std::size_t>(idx)]->charset = coll;
  }
  if (!f.ok()) return f.error();
  return {};
}

template <class Pred>
Status read_column_charset(ByteReader& f, TableMap& tm, Pred in_subset) {
  for (ColumnDef& c : tm.columns) {
    if (!in_subset(c)) continue;
    if (f.empty()) break;  // fewer entries than columns: keep what we have
    c.charset = static_cast<std::uint16_t>(f.packed_int());
  }
  if (!f.ok()) return f.error();
  return {};
}

Status read_str_values(ByteReader& f, TableMap& tm, ColumnType which) {
  for (ColumnDef& c : tm.columns) {
    if (c.real_type != which) continue;
    if (f.empty()) break;
    const std::uint64_t at = f.offset();
    const std::uint64_t n = f.packed_int();
    if (n > f.remaining())
      return DecodeError{Errc::bad_length, at, "ENUM/SET value count larger than the field"};
    c.values.clear();
    c.values.reserve(static_cast<std::size_t>(n));
    for (std::uint64_t k = 0; k < n && f.ok(); ++k) {
      const std::size_t len = f.packed_len();
      c.values.emplace_back(f.str(len));
    }
    if (!f.ok()) return f.error();
  }
  return {};
}

}  // namespace

Status parse_optional_metadata(Bytes block, std::uint64_t offset, TableMap& tm) {
  ByteReader r(block, offset);
  const std::size_t ncols = tm.columns.size();
  const auto is_char = [flavor = tm.flavor](const ColumnDef& c) {
    return is_character_column(c.type, c.meta, flavor);
  };
  while (r.ok() && !r.empty()) {
    const std::uint8_t type = r.u8();
    const std::size_t len = r.packed_len();
    ByteReader f = r.sub(len);
    if (!r.ok()) return r.error();
    const std::uint64_t at = f.offset();
    Status st;
    if (type < 32) tm.optional_fields |= 1u << type;
    switch (type) {
      case 1: {  // SIGNEDNESS
        std::size_t k = 0;
        const Bytes bits = f.rest();
        const bool year = signedness_counts_year(tm, bits.size());
        for (ColumnDef& c : tm.columns) {
          const bool is_year = c.type == ColumnType::year;
          if (!is_numeric_column(c.type) && !(is_year && year)) continue;
          if (k >= bits.size() * 8)
            return DecodeError{Errc::truncated, at, "SIGNEDNESS bitmap shorter than the numeric columns"};
          const bool bit = msb_bit(bits, k++);
          if (!is_year) c.is_unsigned = bit;  // YEAR's bit is written, but means nothing
        }
        break;
      }
      case 2:
        st = read_default_charset(f, tm, is_char);
        break;
      case 3:
        st = read_column_charset(f, tm, is_char);
        break;
      case 4: {  // COLUMN_NAME
        for (std::size_t i = 0; i < ncols && f.ok() && !f.empty(); ++i) {
          const std::size_t n = f.packed_len();
          tm.columns[i].name.assign(f.str(n));
        }
        break;
      }
      case 5:
        st = read_str_values(f, tm, ColumnType::set);
        break;
      case 6:
        st = read_str_values(f, tm, ColumnType::enum_);
        break;
      case 7: {  // GEOMETRY_TYPE
        for (ColumnDef& c : tm.columns) {
          if (c.type != ColumnType::geometry || f.empty()) continue;
          c.geometry_type = static_cast<std::uint32_t>(f.packed_int());
          c.has_geometry_type = true;
        }
        break;
      }
      case 8:    // SIMPLE_PRIMARY_KEY
      case 9: {  // PRIMARY_KEY_WITH_PREFIX
        tm.primary_key.clear();
        while (f.ok() && !f.empty()) {
          const std::uint64_t kat = f.offset();
          const std::uint64_t idx = f.packed_int();
          const std::uint64_t prefix = type == 9 ? f.packed_int() : 0;
          if (!f.ok()) break;
          if (idx >= ncols)
            return DecodeError{Errc::bad_value, kat, "primary key column index past the column count"};
          ColumnDef& c = tm.columns[static_cast<std::size_t>(idx)];
          c.in_primary_key = true;
          c.key_prefix = static_cast<std::uint32_t>(prefix);
          tm.primary_key.push_back(static_cast<std::uint32_t>(idx));
        }
        break;
      }
      case 10:
        st = read_default_charset(f, tm, is_enum_or_set);
        break;
      case 11:
        st = read_column_charset(f, tm, is_enum_or_set);
        break;
      case 12: {  // COLUMN_VISIBILITY
        const Bytes bits = f.rest();
        if (bits.size() * 8 < ncols)
          return DecodeError{Errc::truncated, at, "COLUMN_VISIBILITY bitmap shorter than the columns"};
        for (std::size_t i = 0; i < ncols; ++i) tm.columns[i].visible = msb_bit(bits, i);
        break;
      }
      case 13: {  // VECTOR_DIMENSIONALITY
        for (ColumnDef& c : tm.columns) {
          if (c.type != ColumnType::vector || f.empty()) continue;
          c.vector_dimension = static_cast<std::uint32_t>(f.packed_int());
          c.has_vector_dimension = true;
        }
        break;
      }
      default:
        break;  // a field from a newer server: skipped by its length
    }
    if (!st.ok()) return st;
    if (!f.ok()) return f.error();
  }
  if (!r.ok()) return r.error();
  return {};
}

Result<std::unique_ptr<TableMap>> parse_table_map(const TableMapEvent& ev,
                                                  std::uint64_t metadata_offset,
                                                  std::uint64_t optional_offset) {
  auto tm = std::make_unique<TableMap>();
  tm->table_id = ev.table_id;
  tm->flags = ev.flags;
  tm->db.assign(ev.db);
  tm->table.assign(ev.table);
  tm->flavor = ev.flavor;
  tm->server_version = ev.server_version;
  const auto n = static_cast<std::size_t>(ev.column_count);
  tm->columns.resize(n);
  ByteReader meta(ev.metadata, metadata_offset);
  for (std::size_t i = 0; i < n; ++i) {
    ColumnDef& c = tm->columns[i];
    c.type = static_cast<ColumnType>(ev.column_types[i]);
    if (column_meta_size(c.type) < 0)
      return DecodeError{Errc::bad_value, metadata_offset,
                         "TABLE_MAP column type with unknown metadata size"};
    c.meta = read_column_meta(c.type, meta);
    c.real_type = real_column_type(c.type, c.meta);
    c.nullable = i / 8 < ev.null_bitmap.size() ? ((ev.null_bitmap[i / 8] >> (i % 8)) & 1) != 0 : true;
    if (c.type == ColumnType::json) ++tm->json_columns;
  }
  if (!meta.ok()) return meta.error();
  if (!ev.optional_metadata.empty()) {
    Status st = parse_optional_metadata(ev.optional_metadata, optional_offset, *tm);
    if (!st.ok()) return st.error();
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (tm->columns[i].name.empty()) tm->columns[i].name = fmt::format("@{}", i + 1);
  }
  tm->signature.reserve(ev.db.size() + ev.table.size() + 2 + ev.column_types.size() + ev.metadata.size() +
                        ev.null_bitmap.size() + ev.optional_metadata.size());
  tm->signature.append(ev.db).push_back('\0');
  tm->signature.append(ev.table).push_back('\0');
  for (Bytes b : {ev.column_types, ev.metadata, ev.null_bitmap, ev.optional_metadata})
    tm->signature.append(as_string_view(b));
  tm->finalize();
  return tm;
}

bool TableMap::same_as(const TableMapEvent& ev) const noexcept {
  std::string_view rest = signature;
  auto take = [&rest](std::string_view part, bool nul) {
    if (rest.size() < part.size() + (nul ? 1 : 0) || rest.substr(0, part.size()) != part) return false;
    rest.remove_prefix(part.size());
    if (nul) {
      if (rest.front() != '\0') return false;
      rest.remove_prefix(1);
    }
    return true;
  };
  return ev.table_id == table_id && ev.flags == flags && ev.flavor == flavor &&
         ev.server_version == server_version && take(ev.db, true) && take(ev.table, true) &&
         take(as_string_view(ev.column_types), false) && take(as_string_view(ev.metadata), false) &&
         take(as_string_view(ev.null_bitmap), false) && take(as_string_view(ev.optional_metadata), false) &&
         rest.empty();
}

void TableMap::finalize() {
  static std::atomic<std::uint64_t> serials{0};
  serial = serials.fetch_add(1, std::memory_order_relaxed) + 1;
  value_views.assign(columns.size(), {});
  infos.assign(columns.size(), ColumnInfo{});
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const ColumnDef& c = columns[i];
    auto& views = value_views[i];
    views.reserve(c.values.size());
    for (const std::string& v : c.values) views.emplace_back(v);
    ColumnInfo& ci = infos[i];
    ci.type = c.type;
    ci.meta = c.meta;
    ci.is_unsigned = c.is_unsigned;
    ci.charset = c.charset;
    ci.names = std::span<const std::string_view>(views.data(), views.size());
    ci.hint = c.hint;
    ci.decimals = c.decimals;
  }
}

TableMap& TableMapCache::put(std::unique_ptr<TableMap> tm) {
  const std::uint64_t id = tm->table_id;
  auto it = map_.find(id);
  if (it != map_.end()) {
    it->second = std::move(tm);
    return *it->second;
  }
  while (map_.size() >= capacity_ && !order_.empty()) {
    map_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(id);
  auto [pos, inserted] = map_.emplace(id, std::move(tm));
  (void)inserted;
  return *pos->second;
}

const TableMap* TableMapCache::find(std::uint64_t table_id) const {
  auto it = map_.find(table_id);
  return it == map_.end() ? nullptr : it->second.get();
}

TableMap* TableMapCache::find(std::uint64_t table_id) {
  auto it = map_.find(table_id);
  return it == map_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const TableMap> TableMapCache::find_shared(std::uint64_t table_id) const {
  auto it = map_.find(table_id);
  return it == map_.end() ? nullptr : it->second;
}

std::shared_ptr<TableMap> TableMapCache::find_shared(std::uint64_t table_id) {
  auto it = map_.find(table_id);
  return it == map_.end() ? nullptr : it->second;
}

void TableMapCache::clear() {
  map_.clear();
  order_.clear();
}

}  // namespace binlogctl
