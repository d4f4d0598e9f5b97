#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/source.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>
#include <binlogctl/verify.h>

#include "base/hash.h"
#include "events/events.h"
#include "rows/rows.h"
#include "rows/table_map.h"
#include "txn/row_stream.h"

#include <fmt/format.h>

#include <system_error>

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

// The row changes of the chain as a RowSink of the one RowStream (txn/row_stream.h): next() feeds
// the stream events until one of them gives the replay event this sink builds (at most one per
// binlog event) into `out`. What replay keeps of its own is here: which events the engine sees,
// their keys and sizes, the findings it reports and their wording.
struct ReplaySink final : RowSink {
  DiagnosticSink& diag;
  const bool row_keys;
  const ChainReader* reader = nullptr;
  ReplayEvent* out = nullptr;  // where the event being fed puts its replay event ...
  bool produced = false;       // ... if it has one
  std::string key;
  std::uint64_t key_serial = 0;  // the TableMap::serial `key` names (0: none)
  // row_keys (--path-by hash:N): the rows of the current event with their hashes.
  std::vector<ImageCell> cells_a, cells_b;
  std::vector<ReplayRow> keyed_rows;

  ReplaySink(DiagnosticSink& d, bool keys) : diag(d), row_keys(keys) {}

  // RowSink. An event the replay needs that does not decode: an error (exit status 1), not a
  // silence; a statement whatever the GTID selection, a TABLE_MAP or rows event (worded "rows")
  // only in a transaction it takes.
  void undecodable(const Event& e, std::string_view layer, const DecodeError& err) override {
    const bool rows_event = is_rows_event(e.type_code());
    if ((rows_event || layer == "TABLE_MAP") && !stream().front().selected()) return;
    diag.report(Diagnostic{Check::undecodable_event, Severity::error, reader->log_name(),
                           e.is_inner() ? e.payload_pos : e.pos,
                           fmt::format("{} event does not decode: {} at offset {}", rows_event ? "rows" : layer,
                                       err.what, err.offset)});
  }
  // The stream's own findings: a GTID event that does not decode is reported; a GTID event while
  // a transaction is open (transaction_structure) is not, the engine's report does without it.
  void report(const Diagnostic& d) override {
    if (d.check != Check::transaction_structure) diag.report(d);
  }

  // The replay event of `e`, with no key or rows yet; next() adds what the transaction front
  // knows once the event has ended.
  ReplayEvent& produce(const Event& e) {
    produced = true;
    ReplayEvent& r = *out;
    r.path_key = {};
    r.rows = {};
    r.file_index = static_cast<std::uint32_t>(reader->file_index());
    r.pos = e.is_inner() ? e.payload_pos : e.pos;
    r.inner_index = e.is_inner() ? static_cast<std::uint32_t>(e.inner_index) : 0;
    r.source_ts_us = static_cast<std::uint64_t>(e.header.timestamp) * 1'000'000u;
    r.size = e.header.event_size;
    return r;
  }
  // Commits (XID, XA PREPARE: next() asks, sparing every other event a call) and statements
  // other than BEGIN / XA START / XA END, on the control path (empty key).
  void commit(const Event& e) {
    if (stream().front().selected()) produce(e);
  }
  void statement(const Event& e, const TransactionFront::Step& step) override {
    if (!stream().front().selected()) return;
    switch (step.kind) {
      case StatementKind::begin:
      case StatementKind::xa_start:
      case StatementKind::xa_end:
        return;
      default:
        produce(e);
    }
  }
  // The --filter decision at each TABLE_MAP of a transaction replayed: a rule that names a
  // table counts as matched even when its rows are damaged (the warning about rules that matched
  // no table stays as it was).
  void table_map(const Event&, const TableMapLoader::Loaded& l) override {
    if (stream().front().selected()) (void)stream().table_selected(*l.map);
  }
  // A rows event, on the path of its table ("schema.table"), sized by its rows' bytes (a
  // compressed event's: compressed).
  void rows(const RowsView& v) override {
    ReplayEvent& r = produce(*v.ev);
    if (key_serial != v.map->serial) {
      key.assign(v.map->db).append(1, '.').append(v.map->table);
      key_serial = v.map->serial;
    }
    r.path_key = key;
    r.size = static_cast<std::uint32_t>(v.header->rows.size());
    if (row_keys) hash_rows(v, r);
  }
  // One whose table id has no TABLE_MAP (or is the dummy id): replayed all the same, on a path
  // of its own ("table_id.N"), whole, without a finding.
  void missing_table_map(const Event& e, const RowsEventHeader& h) override {
    if (!stream().front().selected()) return;
    ReplayEvent& r = produce(e);
    key = fmt::format("table_id.{}", h.table_id);
    key_serial = 0;
    r.path_key = key;
    r.size = static_cast<std::uint32_t>(h.rows.size());
  }
  void dummy_rows(const Event& e, const RowsEventHeader& h) override { missing_table_map(e, h); }

  // row_keys: each row of the event with the hash of its key and its bytes (re.rows). The key
  // is that of the image a dispatcher by key looks at (TiCDC's index-value dispatcher: the after
  // image, the before image of a delete): the table's name, then its primary key columns in key
  // order (an UPDATE whose after image lacks one of them, binlog_row_image=MINIMAL, uses its
  // before image), or every column of that image when the table has no primary key known
  // (neither SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX metadata nor a definition in the
  // schema history that the binlog's DDL builds) or the image lacks a key column. A prefix key
  // column is hashed whole. When the rows do not decode (reported), re.rows stays empty: the
  // event goes whole to the bucket of its table's name.
  void hash_rows(const RowsView& view, ReplayEvent& re) {
    keyed_rows.clear();
    RowsView v = view;
    if (v.kind.compressed) {
      Status st = stream().inflate(v);
      if (!st.ok()) {
        undecodable(*v.ev, "rows", st.error());
        return;
      }
    }
    const TableMap* tm = v.map;
    const RowsEventHeader& h = *v.header;
    constexpr std::uint8_t kNul = 0;
    const std::uint64_t table_seed = fnv1a(fnv1a(fnv1a(fnv1a(kFnv1aOffset, tm->db), &kNul, 1), tm->table), &kNul, 1);
    const bool update = v.kind.kind == RowsKind::update;
    ByteReader r(v.rows, v.rows_offset);
    while (r.ok() && !r.empty()) {
      const std::size_t from = r.position();
      Status st = decode_image_cells(*tm, h.width, h.columns_before, update ? ImageRole::before : ImageRole::after,
                                     false, r, cells_a);
      if (st.ok() && update)
        st = decode_image_cells(*tm, h.width, h.columns_after, ImageRole::after, v.kind.partial_json, r, cells_b);
      if (st.ok() && r.position() == from) st = DecodeError{Errc::bad_value, r.offset(), kEmptyRowImage};
      if (!st.ok()) {
        undecodable(*v.ev, "rows", st.error());
        keyed_rows.clear();
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
      keyed_rows.push_back(ReplayRow{mix64(hv), static_cast<std::uint32_t>(r.position() - from)});
    }
    // The rows share the event's size: their bytes, except in a compressed event, whose size is
    // its compressed bytes (as with the other --path-by modes): shared in proportion.
    if (v.kind.compressed && !v.rows.empty()) {
      std::uint64_t acc = 0, given = 0;
      for (ReplayRow& row : keyed_rows) {
        acc += row.size;
        const std::uint64_t upto = acc * re.size / v.rows.size();
        row.size = static_cast<std::uint32_t>(upto - given);
        given = upto;
      }
    }
    re.rows = keyed_rows;
  }
};

}  // namespace

struct BinlogEventSource::Impl final : ChainHooks {
  DiagnosticSink& diag;
  BinlogSourceOptions opts;
  std::unique_ptr<InputSet> owned_inputs;
  ContextBreaks context;
  std::unique_ptr<ChainVerifier> verifier;  // check_context
  bool verifier_done = false;
  TeeSink tee{diag};
  std::unique_ptr<ChainReader> reader;
  ReplaySink sink{diag, opts.row_keys};
  RowStream stream;
  bool unreadable = false;
  bool finished = false;
  Event ev_;

  static RowStream::Options stream_options(const BinlogSourceOptions& o) {
    RowStream::Options s;
    s.include_gtids = o.include_gtids ? &*o.include_gtids : nullptr;
    s.exclude_gtids = o.exclude_gtids ? &*o.exclude_gtids : nullptr;
    s.filter = &o.filter;
    s.loader_notes = false;  // about column names, which replay does not use
    s.warn_foreign_types = false;
    s.read_foreign_types = true;
    s.clear_maps_mid_file = false;
    s.inflate_rows = false;       // only row_keys looks at the images ...
    s.schema_history = o.row_keys;  // ... and at the primary keys that DDL defines
    return s;
  }

  Impl(const BinlogSourceOptions& o, DiagnosticSink& d) : diag(d), opts(o), stream(stream_options(opts), sink) {}

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
    stream.begin_file(f);
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
  m.sink.reader = m.reader.get();
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
  m.sink.out = &ev;
  while (m.reader->next(m.ev_)) {
    if (m.verifier) m.verifier->event(m.ev_);
    // Its inner events follow; the stream sees them only (a damaged payload, reported by the
    // reader, is not one the transaction front hears of either).
    if (m.ev_.type() == EventType::transaction_payload) continue;
    // The damage policy: a damaged event is reported by the reader, never replayed.
    m.sink.produced = false;
    m.stream.event(m.ev_);
    if (!m.sink.produced) {
      if (m.ev_.damage || (m.ev_.type() != EventType::xid && m.ev_.type() != EventType::xa_prepare)) continue;
      m.sink.commit(m.ev_);
      if (!m.sink.produced) continue;
    }
    const TransactionState& ts = m.stream.state();
    ev.txn_end = !ts.open;      // this event ended its transaction (or stood alone)
    ev.txn_id = ts.txn_id;      // RDP id: binlogctl convert's txn_id
    ev.gtid = ts.gtid_text;
    ev.log_name = m.reader->log_name();
    ++m.context.returned;
    return true;
  }
  if (!m.finished) {
    m.finished = true;
    m.stream.finish();
  }
  if (m.verifier && !m.verifier_done) {
    m.verifier_done = true;
    m.verifier->finish();
  }
  return false;
}

}  // namespace binlogctl
