// RowStream: transactions -> row changes, once for every row-change consumer (convert json, the
// Canal formats, SQL, stats, replay's binlog source; the schema command, without the rows). It
// owns what they all did before each on their own: the TransactionFront (statement decoding,
// transaction tracking, GTID selection), the table maps and their loader, schema history (every
// DDL statement applied), the rows prologue (a type code that this server's format description
// gives a foreign post-header, decode_rows_header, a rows event without its TABLE_MAP, the dummy
// table id, the extra row data, MariaDB's compressed rows inflated) and the table selection
// (-d/--database and --filter, decided once per TABLE_MAP). It pushes what it found to a RowSink,
// which keeps only what is its own: rendering, counting. (The split of ripgrep's Searcher -> Sink:
// the searcher finds, the sink prints.)
//
// The hot path (a rows event of a mapped, selected table) allocates nothing: the views point into
// the event, the table map cache and one inflate buffer kept across events.
#pragma once

#include "txn_front.h"

#include <binlogctl/chain.h>
#include <binlogctl/schema.h>
#include <binlogctl/selection.h>

#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

namespace binlogctl {

// One rows event of a mapped, selected table, its row images ready to walk. Valid during the
// RowSink::rows call.
struct RowsView {
  const Event* ev = nullptr;
  const RowsEventHeader* header = nullptr;  // table id, flags, width, column bitmaps
  TableMap* map = nullptr;                  // the table's current map
  RowsEventKind kind;
  // The row images (MariaDB's compressed events: inflated, unless Options::inflate_rows is off).
  Bytes rows;
  std::uint64_t rows_offset = 0;  // the images' offset (inflated: the compressed part's)
  // The decoded extra row data (partition, NDB info) when RowStream::Options::decode_extra and
  // the event has any; else null.
  const RowsExtraInfo* extra = nullptr;
};

// What a consumer of row changes receives, in stream order. Every call but undecodable has a
// default that ignores it. The order for one event: hole, then damaged (and nothing else), or
// transaction_end (the previous one, left open) / transaction_begin, event, and then at most one
// of statement, table_map, rows, missing_table_map, dummy_rows, undecodable; tables_cleared;
// after_event.
class RowStream;

class RowSink {
 public:
  virtual ~RowSink() = default;

  // A new file; end_file closed the previous one.
  virtual void begin_file(const InputFile&) {}
  // The end of a file (`more_files`: another follows) or of the input. `cut`: the transaction the
  // file's end leaves without its COMMIT (binlogctl(1), CUT-OFF TRANSACTIONS), or null.
  virtual void end_file(const TransactionFront::CutOff* /*cut*/, bool /*more_files*/) {}

  // `bytes` that could not be read as events right before `ev` (Event::skipped_before).
  virtual void hole(const Event&, std::uint64_t /*bytes*/) {}
  // An event that failed its checksum: not decoded, not given to the transaction tracker.
  virtual void damaged(const Event&) {}

  // The first event of a transaction (`selected`: the GTID selection takes it), and the end of
  // one: `complete` when an event closed it (`ev` that event), not when the next transaction
  // began first or the file ended (`ev` then the event that began the next one, or null).
  virtual void transaction_begin(const Event&, const TransactionState&, bool /*selected*/) {}
  virtual void transaction_end(const Event* /*ev*/, bool /*complete*/) {}

  // Every undamaged event, after the transaction front took it: `step` says whether it is a
  // statement and whether that decoded.
  virtual void event(const Event&, const TransactionFront::Step&) {}
  // A QUERY / QUERY_COMPRESSED event whose statement decoded (step.query, step.kind). Schema
  // history has already applied it when it is DDL (Options::track_schema_changes: its changes
  // are noted in schema(), to take).
  virtual void statement(const Event&, const TransactionFront::Step&) {}
  // A TABLE_MAP, loaded (`l.fresh`: parsed anew, not the cached map reused). The map is kept
  // in tables() by its table id (Options::complete_maps: as the event gives it).
  virtual void table_map(const Event&, const TableMapLoader::Loaded&) {}
  // A rows event of a mapped table that the GTID and table selections take.
  virtual void rows(const RowsView&) {}
  // A rows event whose table id has no TABLE_MAP before it (not the dummy id). The default
  // reports missing_table_map_finding through undecodable's sink: override to word it otherwise.
  virtual void missing_table_map(const Event& ev, const RowsEventHeader& h);
  // A rows event of the dummy table id (0xffffff, 0xffffffffffff: no table, MySQL 5.1's
  // statement-end marker) that no TABLE_MAP maps: ignored by default (replay replays it as it
  // does the rows of a table it does not know).
  virtual void dummy_rows(const Event&, const RowsEventHeader&) {}
  // A part of an event that does not decode: `layer` names it ("TABLE_MAP", the rows event's
  // constant, "QUERY", "QUERY_COMPRESSED").
  virtual void undecodable(const Event&, std::string_view layer, const DecodeError&) = 0;
  // A finding the stream words itself (missing_table_map's default, the GTID findings).
  virtual void report(const Diagnostic&) {}
  // The table maps of the file were dropped (a top-level FORMAT_DESCRIPTION or ROTATE).
  virtual void tables_cleared() {}
  // After the event was consumed and the transaction front closed what it ended.
  virtual void after_event(const Event&, const TransactionFront::Step&) {}
  // The stream is about to write to stderr (the loader's notes, the foreign type-code warning):
  // a sink that holds output not yet written writes it first.
  virtual void before_stderr() {}
  // The database -d/--database compares with a table's (SQL's --rewrite-db: the rewritten one).
  virtual std::string_view selection_db(const TableMap& tm) { return tm.db; }

  // The stream this sink is attached to (set by RowStream's constructor).
  RowStream& stream() const noexcept { return *stream_; }

 private:
  friend class RowStream;
  RowStream* stream_ = nullptr;
};

class RowStream final : public ChainVisitor, private TransactionFront::Hooks {
 public:
  struct Options {
    const GtidSelection* include_gtids = nullptr;
    const GtidSelection* exclude_gtids = nullptr;
    const TableFilter* filter = nullptr;  // --filter (null: every table)
    std::string database;                 // -d/--database ("": every database)
    std::shared_ptr<const SchemaHistory> schema;  // --schema's seed
    bool mid_stream = false;  // a start position or time was given: missing TABLE_MAPs are warnings
    bool stop_given = false;  // a stop position or time was given: it may cut a transaction off
    bool decode_extra = false;     // decode the rows events' extra data for RowsView::extra
    bool loader_notes = true;      // print the TABLE_MAP loader's notes on `err` (else drop them)
    bool warn_foreign_types = true;  // warn once per file about a foreign rows type code
    // Replay's source keeps what it always did (binlog_source.cpp), with these three:
    // - a foreign rows type code is read as a rows event all the same (no warning, no skip);
    bool read_foreign_types = false;
    // - only a new file drops the table maps, not a top-level FORMAT_DESCRIPTION or ROTATE
    //   inside one (a relay log's master FDE after a reconnect);
    bool clear_maps_mid_file = true;
    // - MariaDB's compressed rows are passed as they stand (RowsView::kind.compressed says so)
    //   for a sink that looks at the images only now and then: it calls inflate() when it does,
    //   and reports a failure itself.
    bool inflate_rows = true;
    // Schema history follows the DDL statements (the loader completes the maps from it). false:
    // it keeps the seed, for a sink that uses no column definition (replay without --path-by
    // hash:N, whose paths are the maps' names).
    bool schema_history = true;
    // The schema command (schema_report.cpp) reads DDL and TABLE_MAPs only, with these three:
    // - rows events are left alone: no prologue, no finding, no sink call (it prints no rows);
    bool row_events = true;
    // - the maps stay as their TABLE_MAP gives them: the loader neither completes them from
    //   schema history nor notes what it could not (the command prints the definition a map
    //   itself gives, and checks it against schema history at the end, worded its own way);
    bool complete_maps = true;
    // - schema history notes the tables each DDL statement defines or removes
    //   (SchemaHistory::track_changes), for the sink to take in statement(): the versions of
    //   --history, the removals and lost definitions.
    bool track_schema_changes = false;
    std::FILE* err = stderr;
  };

  template <class Opts>
  static Options options_of(const Opts& o) {
    Options s;
    s.include_gtids = o.include_gtids ? &*o.include_gtids : nullptr;
    s.exclude_gtids = o.exclude_gtids ? &*o.exclude_gtids : nullptr;
    s.filter = &o.filter;
    s.schema = o.schema;
    s.mid_stream = o.start_position.has_value() || o.start_datetime.has_value();
    s.stop_given = o.stop_position.has_value() || o.stop_datetime.has_value();
    return s;
  }

  RowStream(Options opts, RowSink& sink);

  // ChainVisitor
  void begin_file(const InputFile& f) override;
  void event(const Event& ev, const InputFile&) override { event(ev); }
  void event(const Event& ev);
  // The end of the input (after the last event): ends the last file.
  void finish();

  const TransactionFront& front() const noexcept { return front_; }
  const TransactionState& state() const noexcept { return front_.state(); }
  SchemaHistory& schema() noexcept { return schema_; }
  TableMapCache& tables() noexcept { return tables_; }
  // -d/--database: the statements' check, and whether anything of the database was met.
  DatabaseSelection& database() noexcept { return database_; }
  const InputFile& file() const noexcept { return file_; }
  const std::string& log_name() const noexcept { return file_.log_name; }

  // The one wording of a rows event without its TABLE_MAP (an error; a warning mid-stream).
  static Diagnostic missing_table_map_finding(const Event& ev, const RowsEventHeader& h,
                                              const std::string& log_name, bool mid_stream);
  bool mid_stream() const noexcept { return opts_.mid_stream; }

  // Whether -d/--database and --filter take the table: decided once per map (kept on it) at its
  // first rows event, or sooner when a sink asks (replay asks at each TABLE_MAP of a selected
  // transaction, so that a --filter rule counts as matched by a table whose rows are damaged).
  bool table_selected(TableMap& tm);

  // Options::inflate_rows = false: inflates `v`'s compressed rows (rows, then the inflated bytes
  // in a buffer kept until the next call). Call once per view.
  Status inflate(RowsView& v);

 private:
  // TransactionFront::Hooks
  void statement_undecodable(const Event& ev, std::string_view layer, const DecodeError& e) override {
    sink_.undecodable(ev, layer, e);
  }
  void gtid_undecodable(const Event& ev) override;
  void open_at_gtid(const Event& ev) override;

  // The current file ends; `next`: the file that follows (none at the end of the input).
  void end_file(const InputFile* next);
  void table_map(const Event& ev);
  void rows(const Event& ev, RowsEventKind kind);
  bool rows_type_in_this_server(const Event& ev);

  Options opts_;
  RowSink& sink_;
  TransactionFront front_;
  SchemaHistory schema_;
  TableMapCache tables_;
  TableMapLoader loader_;
  std::string loader_notes_;
  DatabaseSelection database_;
  InputFile file_;  // the file being read (a copy: the input list may be gone at finish())
  bool in_file_ = false;
  bool txn_open_ = false;  // transaction_begin was called and transaction_end not yet
  std::uint64_t txn_id_ = 0;
  std::unordered_set<std::uint8_t> warned_types_;  // foreign type codes warned about in this file
  RowsExtraInfo extra_;
  std::string inflated_;  // MariaDB's compressed rows, inflated
};

}  // namespace binlogctl
