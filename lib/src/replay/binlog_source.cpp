#include <binlogctl/chain.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/source.h>
#include <binlogctl/statement_kind.h>
#include <binlogctl/transaction.h>
#include <binlogctl/txn_front.h>

#include <fmt/format.h>

#include <optional>
#include <system_error>
#include <unordered_map>

namespace binlogctl {

struct BinlogEventSource::Impl final : ChainHooks, TransactionFront::Hooks {
  DiagnosticSink& diag;
  BinlogSourceOptions opts;
  std::unique_ptr<ChainReader> reader;
  TransactionFront front{nullptr, nullptr};
  bool unreadable = false;
  Event ev_;
  std::unordered_map<std::uint64_t, std::string> tables;  // table id -> "schema.table" (selected tables)
  std::unordered_map<std::uint64_t, bool> skipped;        // table id -> not taken by the filter
  std::string key;

  Impl(const BinlogSourceOptions& o, DiagnosticSink& d)
      : diag(d),
        opts(o),
        front(opts.include_gtids ? &*opts.include_gtids : nullptr, opts.exclude_gtids ? &*opts.exclude_gtids : nullptr) {}

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
    skipped.clear();
    front.reset();
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
      return true;
    }
    return false;
  }
};

BinlogEventSource::BinlogEventSource(const BinlogSourceOptions& opts, DiagnosticSink& diag)
    : impl_(std::make_unique<Impl>(opts, diag)) {
  impl_->opts.chain.threads = 1;
  impl_->reader = std::make_unique<ChainReader>(impl_->opts.chain, *impl_, diag);
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

bool BinlogEventSource::next(ReplayEvent& ev) {
  Impl& m = *impl_;
  while (m.reader->next(m.ev_)) {
    if (m.ev_.type() == EventType::transaction_payload) continue;  // its inner events follow
    // The damage policy: a damaged event is reported by the reader, never replayed.
    const TransactionFront::Step& step = m.front.begin(m.ev_, m);
    const bool take = !step.damaged && m.front.selected() && m.convert(m.ev_, step, ev);
    m.front.end();
    if (!take) continue;
    ev.txn_end = !m.front.state().open;  // this event ended its transaction (or stood alone)
    return true;
  }
  return false;
}

}  // namespace binlogctl
