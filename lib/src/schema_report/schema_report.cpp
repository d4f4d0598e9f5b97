// binlogctl schema (schema_report.h): schema history, seeded by --schema and following the DDL of
// the chain, printed as the tables stand at the end of the selection or version by version.
// A RowSink of the one RowStream (txn/row_stream.h), which owns the transaction front, schema
// history (noting what each DDL statement changes) and the table maps (as their TABLE_MAPs give
// them), and leaves the rows alone. What is this command's own is here: where each definition
// comes from, the versions, removals and lost definitions, the last map of each table, the output.
#include <binlogctl/schema_report.h>

#include <binlogctl/chain.h>
#include <binlogctl/datetime.h>
#include <binlogctl/diagnostic.h>

#include "dump/info.h"
#include "events/events.h"
#include "render/json_out.h"
#include "rows/table_map.h"
#include "txn/row_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace binlogctl {

namespace {

std::string table_key(std::string_view db, std::string_view name) {
  std::string k(db);
  k.push_back('\0');
  k.append(name);
  return k;
}

// The key of a name compared case-insensitively (servers with lower_case_table_names log names
// as typed, schema.h).
std::string folded_key(std::string_view db, std::string_view name) {
  std::string k = table_key(db, name);
  for (char& c : k)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return k;
}

// Where a definition (or a removal) comes from.
struct Origin {
  enum class Source : std::uint8_t { schema_file, ddl, table_map };
  Source source = Source::schema_file;
  std::string log_name;
  std::uint64_t pos = 0;
  std::int64_t time = 0;
  std::string gtid;
  std::string statement;  // the DDL (source ddl)
  std::uint64_t seq = 0;  // order of the change among the chain's DDL and TABLE_MAPs; 0 = seed
};

const char* source_name(Origin::Source s) {
  switch (s) {
    case Origin::Source::schema_file: return "schema_file";
    case Origin::Source::ddl: return "ddl";
    case Origin::Source::table_map: return "table_map";
  }
  return "";
}

// The last TABLE_MAP of a table, as the event gives it (shared with the stream's cache).
struct MapSeen {
  std::shared_ptr<TableMap> tm;
  Origin at;
  std::optional<SchemaTable> emitted;  // --history: the last definition printed from a map
};

// A table whose definition went away without a DROP or RENAME: schema history could not follow a
// statement on it (schema.h), and no later statement defined it again.
struct Lost {
  std::string db, name;
  Origin at;
};

// A statement on one line, for a comment: blanks folded, long ones cut.
std::string one_line(std::string_view sql) {
  std::string s;
  bool blank = false;
  for (char c : sql) {
    const bool is_blank = c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
    if (is_blank) {
      blank = !s.empty();
      continue;
    }
    if (blank) s.push_back(' ');
    blank = false;
    s.push_back(c);
    if (s.size() >= 300) {
      s.append(" ...");
      break;
    }
  }
  return s;
}

// Why a statement made a table go away, and the words for it in text and JSON.
enum class Removal : std::uint8_t { dropped, renamed, lost };
const char* removal_text(Removal r) noexcept {
  switch (r) {
    case Removal::dropped: return "dropped";
    case Removal::renamed: return "renamed";
    case Removal::lost: break;
  }
  return "definition lost: the statement could not be followed";
}
Removal removal_of(std::string_view sql, bool defined_another) {
  std::size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t' || sql[i] == '\r')) ++i;
  const auto starts = [&](std::string_view w) {
    if (sql.size() - i < w.size()) return false;
    for (std::size_t k = 0; k < w.size(); ++k)
      if ((sql[i + k] | 0x20) != (w[k] | 0x20)) return false;
    return true;
  };
  if (starts("drop")) return Removal::dropped;
  if (defined_another && (starts("rename") || starts("alter"))) return Removal::renamed;
  return Removal::lost;
}

// The two kinds of definition record: the state at the end, and a version of --history.
enum class Record : std::uint8_t { table, version };
const char* record_name(Record r) noexcept { return r == Record::table ? "table" : "version"; }

class SchemaReporter final : public RowSink {
 public:
  SchemaReporter(const SchemaReportOptions& o, DiagnosticSink& diag, LineOutput& out, std::FILE* err)
      : opts_(o), diag_(diag), out_(out), err_(err), tz_(o.timezone) {}

  // No GTID or table selection (--filter chooses what is printed, not what is read).
  static RowStream::Options stream_options(const SchemaReportOptions& o, std::FILE* err) {
    RowStream::Options s;
    s.schema = o.schema;
    s.row_events = false;
    s.complete_maps = false;
    s.track_schema_changes = true;
    s.err = err;
    return s;
  }

  std::uint64_t files() const noexcept { return files_; }

  // RowSink. The damage policy is the stream's: a damaged event defines nothing (it only moves
  // the end of what was read).
  void begin_file(const InputFile&) override {
    if (files_++ == 0) start();
    end_log_stale_ = true;
  }
  void damaged(const Event& ev) override { read_up_to(ev); }
  void event(const Event& ev, const TransactionFront::Step&) override { read_up_to(ev); }
  void statement(const Event& ev, const TransactionFront::Step& step) override {
    if (step.kind == StatementKind::ddl) ddl(ev, step.query);
  }
  void table_map(const Event& ev, const TableMapLoader::Loaded& l) override;
  // A statement or TABLE_MAP that does not decode.
  void undecodable(const Event& ev, std::string_view layer, const DecodeError& e) override {
    diag_.report(Diagnostic{Check::undecodable_event, Severity::error, stream().log_name(), top_pos(ev),
                            fmt::format("{} event does not decode at offset {}: {}", layer, e.offset, e.what)});
  }
  // The stream's own findings: a GTID event that does not decode is reported; a GTID event while
  // a transaction is open (transaction_structure) is not, a schema does not depend on it.
  void report(const Diagnostic& d) override {
    if (d.check != Check::transaction_structure) diag_.report(d);
  }

  // The state at the end (without --history), then what no definition covers.
  void finish() {
    struct Entry {
      const SchemaTable* def = nullptr;  // printed definition
      Origin origin;
      std::string warning;
      std::optional<SchemaTable> derived;  // a definition from the TABLE_MAP
      const MapSeen* undefined = nullptr;  // no definition: this map
      const Lost* lost = nullptr;
    };
    std::map<std::string, Entry> entries;
    const SchemaHistory& history = stream().schema();
    history.for_each([&](const SchemaTable& t) {
      Entry e;
      e.def = &t;
      if (auto it = origins_.find(table_key(t.db, t.name)); it != origins_.end()) e.origin = it->second;
      entries.emplace(table_key(t.db, t.name), std::move(e));
    });
    for (auto& [key, seen] : maps_) {
      const SchemaTable* def = history.find(seen.tm->db, seen.tm->table);
      if (def != nullptr) {
        Entry& e = entries[table_key(def->db, def->name)];
        if (seen.at.seq <= e.origin.seq) continue;  // the map is older than the definition
        // The definition must fit the TABLE_MAP written after it, or the history missed a change.
        const std::string why = apply_table_schema(*seen.tm, *def);
        if (why.empty()) continue;
        e.warning = fmt::format("the definition does not fit its TABLE_MAP at {}:{} ({})", seen.at.log_name,
                                seen.at.pos, why);
        if ((seen.tm->optional_fields & kOptColumnName) != 0) {
          e.derived = table_definition_from_map(*seen.tm);
          e.def = &*e.derived;
          e.origin = seen.at;
          e.warning += "; the TABLE_MAP's definition is printed";
        }
        fmt::print(err_, "binlogctl: {}:{}: warning: table {}.{}: {}\n", seen.at.log_name, seen.at.pos, def->db,
                   def->name, e.warning);
        continue;
      }
      // Maps of a table that was dropped or renamed since are of a table that is gone.
      if (auto rm = removed_.find(folded_key(seen.tm->db, seen.tm->table));
          rm != removed_.end() && rm->second > seen.at.seq)
        continue;
      Entry& e = entries[key];
      e.origin = seen.at;
      if ((seen.tm->optional_fields & kOptColumnName) != 0) {
        e.derived = table_definition_from_map(*seen.tm);
        e.def = &*e.derived;  // in place: the entry does not move again
      } else {
        e.undefined = &seen;
      }
    }
    for (const auto& [key, lost] : lost_) {
      if (entries.count(key) != 0) continue;  // used or defined again since
      Entry e;
      e.lost = &lost;
      e.origin = lost.at;
      entries.emplace(key, std::move(e));
    }

    if (!opts_.history && opts_.format == OutputFormat::text) {
      line("-- binlogctl schema: the tables as they stand" +
           (end_log_.empty() ? std::string(" (nothing read)") : fmt::format(" after {}:{}", end_log_, end_pos_)));
      line("-- (usable as --schema; defaults, secondary keys and generated columns' expressions are not kept)");
    }
    std::string db_done;
    bool first_db = true;
    for (auto& [key, e] : entries) {
      const std::string_view db(key.data(), key.find('\0'));
      const std::string_view name = std::string_view(key).substr(db.size() + 1);
      if (!opts_.filter.matches(db, name)) continue;
      if (e.undefined != nullptr) {
        print_undefined(*e.undefined);
      } else if (e.lost != nullptr) {
        print_lost(*e.lost);
      } else if (!opts_.history) {
        if (opts_.format == OutputFormat::text && (first_db || db != db_done)) {
          line("");
          create_database(db);
          db_done.assign(db);
          first_db = false;
        }
        print_defined(*e.def, e.origin, Record::table, e.warning.empty() ? nullptr : &e.warning);
      }
    }
  }

 private:
  static std::uint64_t top_pos(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }

  // --history: the seed's tables are the first versions (once the first file opens).
  void start() {
    if (!opts_.history) return;
    stream().schema().for_each([&](const SchemaTable& t) {
      if (opts_.filter.matches(t.db, t.name)) print_defined(t, Origin{}, Record::version, nullptr);
    });
  }

  // Where the text output says the tables stand: after the last top-level event read.
  void read_up_to(const Event& ev) {
    if (ev.is_inner()) return;
    if (end_log_stale_) {  // the first event of a file
      end_log_ = stream().log_name();
      end_log_stale_ = false;
    }
    end_pos_ = ev.pos + ev.header.event_size;
  }

  // Where the event is, written into `o` in place (its strings keep their capacity: a TABLE_MAP
  // seen again allocates nothing).
  void stamp(Origin& o, const Event& ev, Origin::Source s) {
    o.source = s;
    o.log_name.assign(stream().log_name());
    o.pos = top_pos(ev);
    o.time = ev.header.timestamp;
    o.gtid.assign(stream().state().gtid_text);
    o.statement.clear();
    o.seq = ++seq_;
  }

  // Schema history has applied the statement (the stream did): its changes are taken here.
  void ddl(const Event& ev, const QueryEvent& q) {
    std::vector<SchemaHistory::Change> changes = stream().schema().take_changes();
    if (changes.empty()) return;
    Origin o;
    stamp(o, ev, Origin::Source::ddl);
    o.statement.assign(q.sql);
    const bool defined_another =
        std::any_of(changes.begin(), changes.end(), [](const SchemaHistory::Change& c) { return c.table != nullptr; });
    for (const SchemaHistory::Change& c : changes) {
      const std::string key = table_key(c.db, c.name);
      if (c.table != nullptr) {
        origins_[key] = o;
        lost_.erase(key);
        if (opts_.history && opts_.filter.matches(c.db, c.name)) print_defined(*c.table, o, Record::version, nullptr);
        continue;
      }
      origins_.erase(key);
      removed_[folded_key(c.db, c.name)] = o.seq;
      const Removal why = removal_of(q.sql, defined_another);
      if (why == Removal::lost) lost_[key] = Lost{c.db, c.name, o};
      else lost_.erase(key);
      if (opts_.history && opts_.filter.matches(c.db, c.name)) print_removed(c.db, c.name, o, removal_text(why));
    }
  }

  // ---- printing -------------------------------------------------------------------------------

  void line(std::string_view s) {
    out_.buf().append(s);
    out_.end_line();
  }

  std::string where(const Origin& o) const {
    std::string s = fmt::format("{}:{} (", o.log_name, o.pos);
    tz_.append_local(s, o.time);
    s += opts_.timezone == "UTC" ? " UTC" : " " + opts_.timezone;
    if (!o.gtid.empty()) s += ", GTID " + o.gtid;
    s.push_back(')');
    return s;
  }

  static void json_origin(std::string& b, const Origin& o) {
    if (o.source == Origin::Source::schema_file) {
      b.append(",\"log_name\":null,\"pos\":null,\"timestamp\":null,\"gtid\":null,\"statement\":null");
      return;
    }
    b.append(",\"log_name\":");
    append_json_quoted(b, o.log_name);
    b.append(",\"pos\":");
    b.append(std::to_string(o.pos));
    b.append(",\"timestamp\":\"");
    TimeZone().append_local(b, o.time);
    b.append("\",\"gtid\":");
    if (o.gtid.empty()) b.append("null");
    else append_json_quoted(b, o.gtid);
    b.append(",\"statement\":");
    if (o.statement.empty()) b.append("null");
    else append_json_quoted(b, o.statement);
  }

  static void json_name(std::string& b, const char* kind, std::string_view db, std::string_view name) {
    b.append("{\"kind\":\"");
    b.append(kind);
    b.append("\",\"database\":");
    append_json_quoted(b, db);
    b.append(",\"table\":");
    append_json_quoted(b, name);
  }

  static void json_string_or_null(std::string& b, std::string_view s) {
    if (s.empty()) b.append("null");
    else append_json_quoted(b, s);
  }

  // A definition: the state at the end, or a version (--history).
  void print_defined(const SchemaTable& t, const Origin& o, Record kind, const std::string* warning) {
    const bool version = kind == Record::version;
    const std::string sql = create_table_sql(t);
    if (opts_.format == OutputFormat::text) {
      std::string& b = comment_on(t.db, t.name);
      switch (o.source) {
        case Origin::Source::schema_file: b.append(": from --schema"); break;
        case Origin::Source::ddl: b.append(version ? ": defined by the DDL at " : ": last changed by the DDL at ");
          b.append(where(o));
          b.append(": ");
          b.append(one_line(o.statement));
          break;
        case Origin::Source::table_map:
          b.append(": from its TABLE_MAP at ");
          b.append(where(o));
          b.append(" (binlog_row_metadata=FULL: no DDL defined it; lengths, charsets and the primary key as the map "
                   "gives them)");
          break;
      }
      out_.end_line();
      if (warning != nullptr) line("-- warning: " + *warning);
      if (version) {
        if (!databases_.count(t.db)) {
          databases_.insert(t.db);
          create_database(t.db);
        }
        drop_statement(t.db, t.name);
      }
      line(sql);
      return;
    }
    std::string& b = out_.buf();
    json_name(b, record_name(kind), t.db, t.name);
    if (version) b.append(",\"change\":\"defined\"");
    b.append(",\"defined\":true,\"source\":\"");
    b.append(source_name(o.source));
    b.push_back('"');
    json_origin(b, o);
    b.append(",\"columns\":[");
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const SchemaColumn& c = t.columns[i];
      if (i > 0) b.push_back(',');
      b.append("{\"name\":");
      append_json_quoted(b, c.name);
      b.append(",\"type\":");
      append_json_quoted(b, column_type_text(c));
      b.append(",\"charset\":");
      json_string_or_null(b, c.charset);
      b.append(",\"collation\":");
      json_string_or_null(b, c.collation);
      const bool pk = std::find(t.primary_key.begin(), t.primary_key.end(), c.name) != t.primary_key.end();
      b.append(fmt::format(",\"nullable\":{},\"primary_key\":{},\"invisible\":{},\"generated\":{}}}", c.nullable, pk,
                           c.invisible, c.generated));
    }
    b.append("],\"primary_key\":[");
    for (std::size_t i = 0; i < t.primary_key.size(); ++i) {
      if (i > 0) b.push_back(',');
      append_json_quoted(b, t.primary_key[i]);
    }
    b.append("],\"default_charset\":");
    json_string_or_null(b, t.default_charset);
    b.append(",\"create\":");
    append_json_quoted(b, sql);
    if (warning != nullptr) {
      b.append(",\"warning\":");
      append_json_quoted(b, *warning);
    }
    b.push_back('}');
    out_.end_line();
  }

  // After a blank line, a comment line on a table begun: "-- `db`.`name`"; the caller ends it.
  std::string& comment_on(std::string_view db, std::string_view name) {
    line("");
    std::string& b = out_.buf();
    b.append("-- ");
    append_quoted_identifier(b, db);
    b.push_back('.');
    append_quoted_identifier(b, name);
    return b;
  }

  // CREATE DATABASE IF NOT EXISTS, with the default charset the history knows for it.
  void create_database(std::string_view db) {
    std::string& b = out_.buf();
    b.append("CREATE DATABASE IF NOT EXISTS ");
    append_quoted_identifier(b, db);
    const std::string_view cs = stream().schema().database_charset(db);
    if (!cs.empty()) b.append(" DEFAULT CHARACTER SET ").append(cs);
    b.push_back(';');
    out_.end_line();
  }

  void drop_statement(std::string_view db, std::string_view name) {
    std::string& b = out_.buf();
    b.append("DROP TABLE IF EXISTS ");
    append_quoted_identifier(b, db);
    b.push_back('.');
    append_quoted_identifier(b, name);
    b.push_back(';');
    out_.end_line();
  }

  void print_removed(std::string_view db, std::string_view name, const Origin& o, const char* reason) {
    if (opts_.format == OutputFormat::text) {
      std::string& b = comment_on(db, name);
      b.append(": ");
      b.append(reason);
      b.append(" by the DDL at ");
      b.append(where(o));
      b.append(": ");
      b.append(one_line(o.statement));
      out_.end_line();
      drop_statement(db, name);
      return;
    }
    std::string& b = out_.buf();
    json_name(b, "version", db, name);
    b.append(",\"change\":\"removed\",\"defined\":false,\"source\":\"ddl\"");
    json_origin(b, o);
    b.append(",\"columns\":null,\"create\":null,\"reason\":");
    append_json_quoted(b, reason);
    b.push_back('}');
    out_.end_line();
  }

  void print_undefined(const MapSeen& seen) {
    const TableMap& tm = *seen.tm;
    const std::string message = fmt::format(
        "columns never defined: no DDL seen{} and its TABLE_MAP carries no column names (binlog_row_metadata is "
        "not FULL); give its CREATE TABLE with --schema",
        opts_.schema ? ", none in --schema" : "");
    std::string types;
    for (std::size_t i = 0; i < tm.columns.size(); ++i) {
      if (i > 0) types.append(opts_.format == OutputFormat::text ? ", " : ",");
      const ColumnType t = real_column_type(tm.columns[i].type, tm.columns[i].meta);
      if (opts_.format == OutputFormat::text) types.append(column_type_name(t));
      else append_json_quoted(types, column_type_name(t));
    }
    std::string& b = out_.buf();
    if (opts_.format == OutputFormat::text) {
      comment_on(tm.db, tm.table);
      b.append(fmt::format(": {} (TABLE_MAP at {}:{}); {} columns: {}", message, seen.at.log_name, seen.at.pos,
                           tm.columns.size(), types));
      out_.end_line();
      return;
    }
    json_name(b, "table", tm.db, tm.table);
    b.append(",\"defined\":false,\"source\":\"none\",\"log_name\":");
    append_json_quoted(b, seen.at.log_name);
    b.append(fmt::format(",\"pos\":{},\"column_count\":{},\"column_types\":[{}],\"message\":", seen.at.pos,
                         tm.columns.size(), types));
    append_json_quoted(b, message);
    b.push_back('}');
    out_.end_line();
  }

  void print_lost(const Lost& l) {
    const std::string message =
        "its definition was lost: schema history could not follow this statement, and no later DDL or TABLE_MAP "
        "defined the table again";
    std::string& b = out_.buf();
    if (opts_.format == OutputFormat::text) {
      comment_on(l.db, l.name);
      b.append(": ");
      b.append(message);
      b.append(": ");
      b.append(where(l.at));
      b.append(": ");
      b.append(one_line(l.at.statement));
      out_.end_line();
      return;
    }
    json_name(b, "lost", l.db, l.name);
    json_origin(b, l.at);
    b.append(",\"message\":");
    append_json_quoted(b, message);
    b.push_back('}');
    out_.end_line();
  }

  const SchemaReportOptions& opts_;
  DiagnosticSink& diag_;
  LineOutput& out_;
  std::FILE* err_;
  TimeZone tz_;
  std::string end_log_;
  bool end_log_stale_ = false;  // a file began and no event of it was read yet
  std::uint64_t end_pos_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t files_ = 0;
  std::map<std::string, Origin> origins_;  // history key -> the change that made the definition
  std::map<std::string, MapSeen, std::less<>> maps_;  // db NUL table as the map names it
  // Table id -> the entry of the map the stream loaded last under it (a map it reuses, not
  // fresh, is of that entry's table: no name lookup on the common path).
  std::unordered_map<std::uint64_t, MapSeen*> seen_by_id_;
  std::map<std::string, Lost> lost_;
  std::map<std::string, std::uint64_t> removed_;  // folded_key -> seq of the last removal
  std::set<std::string, std::less<>> databases_;  // --history text: CREATE DATABASE printed
  std::string key_;
};

// The stream keeps the maps by table id (and drops them with each file); here the last map of each
// table name is kept, with where it was.
void SchemaReporter::table_map(const Event& ev, const TableMapLoader::Loaded& l) {
  const TableMap& m = *l.map;
  MapSeen* entry = nullptr;
  if (!l.fresh) {  // the map the id had at its last TABLE_MAP: that one's table
    if (auto id = seen_by_id_.find(m.table_id); id != seen_by_id_.end()) entry = id->second;
  }
  if (entry == nullptr) {
    key_.assign(m.db);
    key_.push_back('\0');
    key_.append(m.table);
    auto it = maps_.find(key_);
    if (it == maps_.end()) it = maps_.emplace(key_, MapSeen{}).first;
    entry = &it->second;
    seen_by_id_[m.table_id] = entry;
  }
  MapSeen& seen = *entry;
  // A map parsed anew may say what the table's last one said (its id mapped again after a new
  // file, or after another table had it).
  const bool changed = !seen.tm || (seen.tm.get() != &m && !seen.tm->same_as(m));
  if (changed) seen.tm = stream().tables().find_shared(m.table_id);
  stamp(seen.at, ev, Origin::Source::table_map);
  // --history: a table no DDL defined gets a version from its map whenever the map says
  // something new about it.
  if (opts_.history && changed && (seen.tm->optional_fields & kOptColumnName) != 0 &&
      stream().schema().find(seen.tm->db, seen.tm->table) == nullptr &&
      opts_.filter.matches(seen.tm->db, seen.tm->table)) {
    SchemaTable t = table_definition_from_map(*seen.tm);
    if (!seen.emitted || create_table_sql(*seen.emitted) != create_table_sql(t)) {
      print_defined(t, seen.at, Record::version, nullptr);
      seen.emitted = std::move(t);
    }
  }
}

}  // namespace

int run_schema_report(const SchemaReportOptions& opts, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  LineOutput out(outf);
  SchemaReporter r(opts, diag, out, errf);
  RowStream stream(SchemaReporter::stream_options(opts, errf), r);
  ChainOptions co = chain_options_of(opts);
  co.threads = opts.threads;
  const bool readable = read_chain(co, stream, diag, errf);
  stream.finish();
  // No input could be opened: nothing on stdout (the reasons are on stderr, exit 2).
  if (readable || r.files() > 0) r.finish();
  out.flush();
  if (readable) warn_unmatched_filter_rules(opts.filter, errf);
  if (!readable) return 2;
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
