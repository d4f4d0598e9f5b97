#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/source.h>
#include <binlogctl/transaction.h>

#include <fmt/format.h>

#include <optional>
#include <system_error>
#include <unordered_map>

namespace binlogctl {

struct BinlogEventSource::Impl final : ChainHooks {
  DiagnosticSink& diag;
  ChainOptions opts;
  std::unique_ptr<ChainReader> reader;
  bool unreadable = false;
  Event ev_;
  std::unordered_map<std::uint64_t, std::string> tables;  // table id -> "schema.table"
  std::string key;
  bool in_txn = false;

  explicit Impl(DiagnosticSink& d) : diag(d) {}

  void input_error(const std::string& e) override {
    diag.report(Diagnostic{Check::read_error, Severity::error, e, 0, "cannot read the input list"});
    unreadable = true;
  }
  void unavailable(const InputFile& f, const std::system_error* e) override {
    if (e == nullptr)
      diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0, fmt::format("{}: file not found", f.path)});
    else
      diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0,
                             fmt::format("cannot open: {}", e->code().message())});
    unreadable = true;
  }
  bool begin_file(const InputFile&) override {
    tables.clear();
    return true;
  }

  void payload_undecodable(const Event& ev, const InputFile& f, const DecodeError& e) override {
    diag.report(Diagnostic{Check::undecodable_event, Severity::error, f.log_name, ev.pos,
                           fmt::format("TRANSACTION_PAYLOAD does not decode: {} at offset {}", e.what, e.offset)});
  }
  // An event the replay needs that does not decode: an error (exit status 1), not a silence.
  void undecodable(const Event& e, std::string_view what, const DecodeError& err) {
    diag.report(Diagnostic{Check::undecodable_event, Severity::error, reader->log_name(),
                           e.is_inner() ? e.payload_pos : e.pos,
                           fmt::format("{} event does not decode: {} at offset {}", what, err.what, err.offset)});
  }

  // Turns one event into a replay event; false when it is not one the engine sees.
  bool convert(const Event& e, ReplayEvent& out) {
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
        if (t) tables[t->table_id] = fmt::format("{}.{}", t->db, t->table);
        else undecodable(e, "TABLE_MAP", t.error());
        return false;
      }
      case EventType::xid:
      case EventType::xa_prepare:
        out.path_key = {};
        out.txn_end = true;
        in_txn = false;
        return true;
      case EventType::mariadb_gtid: {
        ByteReader r = e.body_reader();
        auto g = decode_mariadb_gtid(r, e.header.server_id);
        in_txn = g && !g->standalone();
        return false;
      }
      case EventType::query:
      case EventType::mariadb_query_compressed: {
        auto q = decode_query(e.body_reader(), *e.fde);
        if (!q) {
          undecodable(e, "QUERY", q.error());
          return false;
        }
        const StatementKind k = classify_statement(q->sql);
        if (k == StatementKind::begin || k == StatementKind::xa_start || k == StatementKind::xa_end) {
          in_txn = true;
          return false;
        }
        out.path_key = {};
        out.txn_end = k == StatementKind::commit || k == StatementKind::rollback ||
                      k == StatementKind::xa_finish || !in_txn;
        if (out.txn_end) in_txn = false;
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
      auto it = tables.find(h->table_id);
      key = it != tables.end() ? it->second : fmt::format("table_id.{}", h->table_id);
      out.path_key = key;
      out.size = static_cast<std::uint32_t>(h->rows.size());
      if (!in_txn && (h->flags & kRowsStmtEnd)) out.txn_end = true;  // autocommit non-transactional
      return true;
    }
    return false;
  }
};

BinlogEventSource::BinlogEventSource(const std::vector<std::string>& inputs, DiagnosticSink& diag,
                                     InputSet* input_set)
    : impl_(std::make_unique<Impl>(diag)) {
  impl_->opts.inputs = inputs;
  impl_->opts.input_set = input_set;
  impl_->opts.progress = ProgressMode::never;
  impl_->opts.threads = 1;
  impl_->reader = std::make_unique<ChainReader>(impl_->opts, *impl_, diag);
}

BinlogEventSource::~BinlogEventSource() = default;

bool BinlogEventSource::unreadable() const noexcept { return impl_->unreadable; }

bool BinlogEventSource::next(ReplayEvent& ev) {
  Impl& m = *impl_;
  while (m.reader->next(m.ev_)) {
    if (m.ev_.type() == EventType::transaction_payload) continue;  // its inner events follow
    if (m.ev_.damage) continue;  // the damage policy: reported by the reader, never replayed
    if (m.convert(m.ev_, ev)) return true;
  }
  return false;
}

}  // namespace binlogctl
