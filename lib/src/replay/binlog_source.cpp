#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/schema.h>
#include <binlogctl/source.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>
#include <binlogctl/verify.h>

#include "base/hash.h"
#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "txn/txn_front.h"

#include <fmt/format.h>

#include <optional>
#include <system_error>
#include <unordered_map>

namespace binlogctl {

namespace {

// The key hash of --path-by hash:N (binlogctl-replay(1) gives the same definition): FNV-1a 64
// over the bytes below (base/hash.h), then splitmix64's finalizer (mix64) so that every bit of
// the hash depends on every byte (the bucket is hash % N).
//
// One column of an image: a tag (0 absent from the image, 1 NULL, 2 a value, 3 a partial JSON
// value), then for 2 and 3 the length of its bytes (4 bytes, little-endian) and the bytes as
// the row image holds them (for 3: its diffs).
inline std::uint64_t feed_cell(std::uint64_t h, const ImageCell& c) noexcept {
  std::uint8_t head[5];
  Bytes bytes;
  if (!c.present) {
    head[0] = 0;
  } else if (c.is_null) {
    head[0] = 1;
  } else {
    head[0] = c.partial_json ? 3 : 2;
    bytes = c.partial_json ? c.diffs : c.raw;
  }
  if (head[0] < 2) return fnv1a(h, head, 1);
  const auto n = static_cast<std::uint32_t>(bytes.size());
  for (int i = 0; i < 4; ++i) head[1 + i] = static_cast<std::uint8_t>(n >> (8 * i));
  return fnv1a(fnv1a(h, head, 5), bytes.data(), bytes.size());
}

bool key_present(const std::vector<ImageCell>& img, const std::vector<std::uint32_t>& key) noexcept {
  for (std::uint32_t c : key) {
    if (c >= img.size() || !img[c].present) return false;
  }
  return true;
}

// The checks of verify that say whether each event continues the one before (RDP's context:
// end_log_pos - event size = the event's offset inside a file, the file sequence and ROTATE
// across files, Previous_gtids / Gtid_list and GTID uniqueness across them). Their errors are
// breaks of the source's context; every other finding of the verifier is verify's business
// (the framing layer's findings reach the user through the source's own sink).
bool context_check(Check c) noexcept {
  switch (c) {
    case Check::log_pos_mismatch:
    case Check::file_sequence_gap:
    case Check::rotate_mismatch:
    case Check::previous_gtids_mismatch:
    case Check::gtid_list_mismatch:
    case Check::gtid_duplicate:
      return true;
    default:
      return false;
  }
}

// The verifier's output: context breaks are kept, with the number of events handed out so far.
struct ContextBreaks final : DiagnosticSink {
  std::vector<SourceBreak> breaks;
  std::uint32_t returned = 0;
  void report(const Diagnostic& d) override {
    if (d.severity != Severity::error || !context_check(d.check)) return;
    breaks.push_back(SourceBreak{0, returned, std::string(check_name(d.check)), d.log_name, d.pos, d.message});
  }
};

// What the chain reader reports goes to the user's sink and to the verifier (which marks the
// damage so that it does not judge what follows it).
struct TeeSink final : DiagnosticSink {
  DiagnosticSink& user;
  ChainVerifier* verifier = nullptr;
  explicit TeeSink(DiagnosticSink& u) : user(u) {}
  void report(const Diagnostic& d) override {
    user.report(d);
    if (verifier != nullptr) verifier->report(d);
  }
  void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) override { user.name_file(log_name, path, base); }
};

}  // namespace

struct BinlogEventSource::Impl final : ChainHooks, TransactionFront::Hooks {
  DiagnosticSink& diag;
  BinlogSourceOptions opts;
  std::unique_ptr<InputSet> owned_inputs;
  ContextBreaks context;
  std::unique_ptr<ChainVerifier> verifier;  // check_context
  bool verifier_done = false;
  TeeSink tee{diag};
  std::unique_ptr<ChainReader> reader;
  TransactionFront front{nullptr, nullptr};
  bool unreadable = false;
  Event ev_;
  std::unordered_map<std::uint64_t, std::string> tables;  // table id -> "schema.table" (selected tables)
  std::unordered_map<std::uint64_t, bool> skipped;        // table id -> not taken by the filter
  std::string key;
  // row_keys (--path-by hash:N): full table maps (primary key), completed from the schema
  // history that the binlog's DDL builds, and the rows of the current event with their hashes.
  TableMapCache maps;
  SchemaHistory schema;
  TableMapLoader loader{maps, schema, nullptr};
  std::string loader_notes;  // its warnings are about column names, which replay does not use
  std::vector<ImageCell> cells_a, cells_b;
  std::string inflated;
  std::vector<ReplayRow> rows;

  Impl(const BinlogSourceOptions& o, DiagnosticSink& d)
      : diag(d),
        opts(o),
        front(opts.include_gtids ? &*opts.include_gtids : nullptr, opts.exclude_gtids ? &*opts.exclude_gtids : nullptr) {
    loader.defer_warnings(&loader_notes);
  }

  void input_error(const std::string& e) override {
    diag.report(Diagnostic{Check::read_error, Severity::error, e, 0, "cannot read the input list"});
    unreadable = true;
  }
  void unavailable(const InputFile& f, const std::system_error* e) override {
    if (verifier) verifier->file_unavailable(f);
    if (e == nullptr)
      diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0, fmt::format("{}: file not found", f.path)});
    else
      diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0,
                             fmt::format("cannot open: {}", e->code().message())});
    unreadable = true;
  }
  bool begin_file(const InputFile& f) override {
    tables.clear();
    skipped.clear();
    maps.clear();
    front.new_file(f.log_name);
    // A file given twice is a break (reported by the verifier); its events are still read, as
    // they were before the context was checked, the verifier just does not judge them again.
    if (verifier) (void)verifier->begin_file(f);
    return true;
  }
  void end_file(const InputFile&, const EventStream& s) override {
    if (verifier) verifier->end_file(s.offset(), s.skipped_bytes(), s.aborted());
  }

  void payload_undecodable(const Event& ev, const InputFile& f, const DecodeError& e) override {
    tee.report(Diagnostic{Check::undecodable_event, Severity::error, f.log_name, ev.pos,
                          fmt::format("TRANSACTION_PAYLOAD does not decode: {} at offset {}", e.what, e.offset)});
  }
  // An event the replay needs that does not decode: an error (exit status 1), not a silence.
  void undecodable(const Event& e, std::string_view what, const DecodeError& err) {
    diag.report(Diagnostic{Check::undecodable_event, Severity::error, reader->log_name(),
                           e.is_inner() ? e.payload_pos : e.pos,
                           fmt::format("{} event does not decode: {} at offset {}", what, err.what, err.offset)});
  }
  // TransactionFront::Hooks
  void statement_undecodable(const Event& e, std::string_view layer, const DecodeError& err) override {
    undecodable(e, layer, err);
  }
  void gtid_undecodable(const Event& e) override {
    diag.report(TransactionFront::gtid_undecodable_finding(e, reader->log_name()));
  }

  // Turns one (intact) event into a replay event; false when it is not one the engine sees.
  // txn_end is filled in by next(), once the transaction front has seen the event end.
  bool convert(const Event& e, const TransactionFront::Step& step, ReplayEvent& out) {
    const std::uint8_t code = e.type_code();
    out = ReplayEvent{};
    out.file_index = static_cast<std::uint32_t>(reader->file_index());
    out.pos = e.is_inner() ? e.payload_pos : e.pos;
    out.inner_index = e.is_inner() ? static_cast<std::uint32_t>(e.inner_index) : 0;
    out.source_ts_us = static_cast<std::uint64_t>(e.header.timestamp) * 1'000'000u;
    out.size = e.header.event_size;
    switch (e.type()) {
      case EventType::table_map: {
        auto t = decode_table_map(e.body_reader(), *e.fde);
        if (!t) {
          undecodable(e, "TABLE_MAP", t.error());
          return false;
        }
        const bool take = opts.filter.matches(t->db, t->table);
        skipped[t->table_id] = !take;
        if (take) tables[t->table_id] = fmt::format("{}.{}", t->db, t->table);
        if (take && opts.row_keys) {
          auto l = loader.load(e, reader->log_name(), e.is_inner() ? e.payload_pos : e.pos);
          loader_notes.clear();
          if (!l) undecodable(e, "TABLE_MAP", l.error());
        }
        return false;
      }
      case EventType::xid:
      case EventType::xa_prepare:
        out.path_key = {};
        return true;
      case EventType::query:
      case EventType::mariadb_query_compressed:
        if (!step.statement_ok) return false;  // reported through the hooks
        switch (step.kind) {
          case StatementKind::begin:
          case StatementKind::xa_start:
          case StatementKind::xa_end:
            return false;
          default:
            out.path_key = {};
            return true;
        }
      default:
        break;
    }
    if (is_rows_event(code)) {
      auto h = decode_rows_header(e.body_reader(), *e.fde, code);
      if (!h) {
        undecodable(e, "rows", h.error());
        return false;
      }
      if (auto sk = skipped.find(h->table_id); sk != skipped.end() && sk->second) return false;  // --filter
      auto it = tables.find(h->table_id);
      key = it != tables.end() ? it->second : fmt::format("table_id.{}", h->table_id);
      out.path_key = key;
      out.size = static_cast<std::uint32_t>(h->rows.size());
      if (opts.row_keys) hash_rows(e, code, *h, out);
      return true;
    }
    return false;
  }

  // row_keys: each row of the event with the hash of its key and its bytes (out.rows). The key
  // is that of the image a dispatcher by key looks at (TiCDC's index-value dispatcher: the after
  // image, the before image of a delete): the table's name, then its primary key columns in key
  // order (an UPDATE whose after image lacks one of them, binlog_row_image=MINIMAL, uses its
  // before image), or every column of that image when the table has no primary key known
  // (neither SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX metadata nor a definition in schema
  // history) or the image lacks a key column. A prefix key column is hashed whole. Without a
  // table map, or when the rows do not decode (reported), out.rows stays empty: the event goes
  // whole to the bucket of its table's name.
  void hash_rows(const Event& e, std::uint8_t code, const RowsEventHeader& h, ReplayEvent& out) {
    rows.clear();
    const TableMap* tm = maps.find(h.table_id);
    const auto kind = classify_rows_event(code);
    if (tm == nullptr || !kind) return;
    Bytes data = h.rows;
    std::uint64_t at = h.rows_offset;
    if (kind->compressed) {
      Status st = decompress_mariadb(data, at, inflated);
      if (!st.ok()) {
        undecodable(e, "rows", st.error());
        return;
      }
      data = Bytes(reinterpret_cast<const std::uint8_t*>(inflated.data()), inflated.size());
    }
    constexpr std::uint8_t kNul = 0;
    const std::uint64_t table_seed = fnv1a(fnv1a(fnv1a(fnv1a(kFnv1aOffset, tm->db), &kNul, 1), tm->table), &kNul, 1);
    const bool update = kind->kind == RowsKind::update;
    ByteReader r(data, at);
    while (r.ok() && !r.empty()) {
      const std::size_t from = r.position();
      Status st = decode_image_cells(*tm, h.width, h.columns_before, update ? ImageRole::before : ImageRole::after,
                                     false, r, cells_a);
      if (st.ok() && update)
        st = decode_image_cells(*tm, h.width, h.columns_after, ImageRole::after, kind->partial_json, r, cells_b);
      if (st.ok() && r.position() == from) st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
      if (!st.ok()) {
        undecodable(e, "rows", st.error());
        rows.clear();
        return;
      }
      const std::vector<ImageCell>* img = update ? &cells_b : &cells_a;
      bool keyed = !tm->primary_key.empty();
      if (keyed && !key_present(*img, tm->primary_key)) {
        if (update && key_present(cells_a, tm->primary_key))
          img = &cells_a;
        else
          keyed = false;
      }
      std::uint64_t hv = table_seed;
      if (keyed) {
        for (std::uint32_t c : tm->primary_key) hv = feed_cell(hv, (*img)[c]);
      } else {
        for (const ImageCell& c : *img) hv = feed_cell(hv, c);
      }
      rows.push_back(ReplayRow{mix64(hv), static_cast<std::uint32_t>(r.position() - from)});
    }
    // The rows share the event's size: their bytes, except in a compressed event, whose size is
    // its compressed bytes (as with the other --path-by modes): shared in proportion.
    if (kind->compressed && !data.empty()) {
      std::uint64_t acc = 0, given = 0;
      for (ReplayRow& row : rows) {
        acc += row.size;
        const std::uint64_t upto = acc * out.size / data.size();
        row.size = static_cast<std::uint32_t>(upto - given);
        given = upto;
      }
    }
    out.rows = rows;
  }
};

BinlogEventSource::BinlogEventSource(const BinlogSourceOptions& opts, DiagnosticSink& diag)
    : impl_(std::make_unique<Impl>(opts, diag)) {
  Impl& m = *impl_;
  m.opts.chain.threads = 1;
  if (m.opts.check_context) {
    if (m.opts.chain.input_set == nullptr) {
      m.owned_inputs = path_inputs(m.opts.chain.inputs);
      m.opts.chain.input_set = m.owned_inputs.get();
    }
    m.verifier = std::make_unique<ChainVerifier>(m.context);
    m.verifier->plan(m.opts.chain.input_set->list().files);
    m.tee.verifier = m.verifier.get();
  }
  m.reader = std::make_unique<ChainReader>(m.opts.chain, m, m.tee);
}

namespace {
BinlogSourceOptions inputs_only(const std::vector<std::string>& inputs) {
  BinlogSourceOptions o;
  o.chain.inputs = inputs;
  o.chain.progress = ProgressMode::never;
  return o;
}
}  // namespace

BinlogEventSource::BinlogEventSource(const std::vector<std::string>& inputs, DiagnosticSink& diag)
    : BinlogEventSource(inputs_only(inputs), diag) {}

BinlogEventSource::~BinlogEventSource() = default;

bool BinlogEventSource::unreadable() const noexcept { return impl_->unreadable; }

std::span<const SourceBreak> BinlogEventSource::source_breaks() const { return impl_->context.breaks; }

bool BinlogEventSource::next(ReplayEvent& ev) {
  Impl& m = *impl_;
  while (m.reader->next(m.ev_)) {
    if (m.verifier) m.verifier->event(m.ev_);
    if (m.ev_.type() == EventType::transaction_payload) continue;  // its inner events follow
    // The damage policy: a damaged event is reported by the reader, never replayed.
    const TransactionFront::Step& step = m.front.begin(m.ev_, m);
    // Schema history (the primary key of tables whose maps do not carry it), whatever the
    // selection keeps.
    if (m.opts.row_keys && !step.damaged && step.statement_ok && step.kind == StatementKind::ddl)
      m.schema.apply(step.query.db, step.query.sql);
    const bool take = !step.damaged && m.front.selected() && m.convert(m.ev_, step, ev);
    m.front.end();
    if (!take) continue;
    ev.txn_end = !m.front.state().open;  // this event ended its transaction (or stood alone)
    ev.txn_id = m.front.state().txn_id;    // RDP id: binlogctl convert's txn_id
    ev.gtid = m.front.state().gtid_text;
    ev.log_name = m.reader->log_name();
    ++m.context.returned;
    return true;
  }
  if (m.verifier && !m.verifier_done) {
    m.verifier_done = true;
    m.verifier->finish();
  }
  return false;
}

}  // namespace binlogctl
