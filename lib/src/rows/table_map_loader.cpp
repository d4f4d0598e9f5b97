// TableMapLoader: the TABLE_MAP path shared by convert and the Canal mapper.
#include <binlogctl/event_stream.h>

#include "events/events.h"
#include "rows/table_map.h"

#include <fmt/format.h>

namespace binlogctl {

void TableMapLoader::warn(std::string text) {
  if (deferred_ != nullptr)
    deferred_->append(text);
  else
    std::fputs(text.c_str(), err_);
}

Result<TableMapLoader::Loaded> TableMapLoader::load(const Event& ev, std::string_view log_name,
                                                    std::uint64_t pos) {
  auto r = decode_table_map(ev.body_reader(), *ev.fde);
  if (!r) return r.error();
  TableMap* cached = cache_.find(r->table_id);
  if (cached != nullptr && cached->same_as(*r) &&
      (cached->schema_generation == schema_.generation() || !complete_))
    return Loaded{cached, false, nullptr};
  const std::uint64_t base = ev.body_offset();
  const auto off = [&](Bytes b) {
    return b.empty() ? base : base + static_cast<std::uint64_t>(b.data() - ev.body.data());
  };
  auto tm = parse_table_map(*r, off(r->metadata), off(r->optional_metadata));
  if (!tm) return tm.error();
  TableMap& stored = cache_.put(std::move(*tm));
  if (!complete_) return Loaded{&stored, true, nullptr};
  stored.schema_generation = schema_.generation();
  const SchemaTable* def = schema_.find(stored.db, stored.table);
  if (def != nullptr) {
    const std::string why_not = apply_table_schema(stored, *def);
    if (!why_not.empty()) {
      def = nullptr;
      if (warned_schema_.insert(stored.db + "." + stored.table + "\n" + why_not).second)
        warn(fmt::format("binlogctl: {}:{}: warning: table {}.{}: schema history not used: {}\n", log_name, pos,
                         stored.db, stored.table, why_not));
    }
  }
  // Not findings about the data (no check code, not counted): notes on the output.
  if (!stored.has_names() && warned_names_.insert(stored.db + "." + stored.table).second)
    warn(fmt::format("binlogctl: {}:{}: warning: table {}.{}: the TABLE_MAP carries no column names "
                     "(binlog_row_metadata is not FULL) and schema history has no usable definition "
                     "(give one with --schema); columns are named @1, @2, ...\n",
                     log_name, pos, stored.db, stored.table));
  return Loaded{&stored, true, def};
}

}  // namespace binlogctl
