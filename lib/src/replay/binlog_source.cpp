#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/gtid.h>
#include <binlogctl/inputs.h>
#include <binlogctl/replay_binlog.h>
#include <binlogctl/source.h>

#include <fmt/format.h>

#include <optional>
#include <system_error>
#include <unordered_map>

namespace binlogctl {

struct BinlogEventSource::Impl {
  DiagnosticSink& diag;
  InputList inputs;
  std::size_t file = 0;
  bool unreadable = false;
  std::unique_ptr<Source> src;
  std::unique_ptr<EventStream> stream;
  std::unique_ptr<PayloadExpander> payload;
  std::optional<TransactionPayloadEvent> payload_body;
  Event outer, inner;
  std::unordered_map<std::uint64_t, std::string> tables;  // table id -> "schema.table"
  std::string key;
  bool in_txn = false;

  explicit Impl(DiagnosticSink& d) : diag(d) {}

  bool open_next_file() {
    stream.reset();
    payload.reset();
    src.reset();
    while (file < inputs.files.size()) {
      const InputFile& f = inputs.files[file];
      if (f.missing) {
        diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0, fmt::format("{}: file not found", f.path)});
        unreadable = true;
        ++file;
        continue;
      }
      try {
        src = open_source(f.path);
      } catch (const std::system_error& e) {
        diag.report(Diagnostic{Check::read_error, Severity::error, f.log_name, 0, fmt::format("cannot open: {}", e.code().message())});
        unreadable = true;
        ++file;
        continue;
      }
      stream = std::make_unique<EventStream>(*src, f.log_name, diag);
      tables.clear();
      return true;
    }
    return false;
  }

  // Turns one event into a replay event; false when it is not one the engine sees.
  bool convert(const Event& e, ReplayEvent& out) {
    const std::uint8_t code = e.type_code();
    out = ReplayEvent{};
    out.file_index = static_cast<std::uint32_t>(file);
    out.pos = e.is_inner() ? e.payload_pos : e.pos;
    out.inner_index = e.is_inner() ? static_cast<std::uint32_t>(e.inner_index) : 0;
    out.source_ts_us = static_cast<std::uint64_t>(e.header.timestamp) * 1'000'000u;
    out.size = e.header.event_size;
    switch (e.type()) {
      case EventType::table_map: {
        auto t = decode_table_map(e.body_reader(), *e.fde);
        if (t) tables[t->table_id] = fmt::format("{}.{}", t->db, t->table);
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
        if (!q) return false;
        std::string_view sql = q->sql;
        if (sql == "BEGIN" || sql.rfind("XA START", 0) == 0 || sql.rfind("XA END", 0) == 0) {
          in_txn = true;
          return false;
        }
        out.path_key = {};
        out.txn_end = sql == "COMMIT" || sql == "ROLLBACK" || sql.rfind("XA COMMIT", 0) == 0 ||
                      sql.rfind("XA ROLLBACK", 0) == 0 || !in_txn;
        if (out.txn_end) in_txn = false;
        return true;
      }
      default:
        break;
    }
    if (is_rows_event(code)) {
      auto h = decode_rows_header(e.body_reader(), *e.fde, code);
      if (!h) return false;
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

BinlogEventSource::BinlogEventSource(const std::vector<std::string>& inputs, DiagnosticSink& diag)
    : impl_(std::make_unique<Impl>(diag)) {
  impl_->inputs = expand_inputs(inputs);
  for (const auto& e : impl_->inputs.errors) {
    diag.report(Diagnostic{Check::read_error, Severity::error, e, 0, "cannot read the input list"});
    impl_->unreadable = true;
  }
  impl_->open_next_file();
}

BinlogEventSource::~BinlogEventSource() = default;

bool BinlogEventSource::unreadable() const noexcept { return impl_->unreadable; }

bool BinlogEventSource::next(ReplayEvent& ev) {
  Impl& m = *impl_;
  for (;;) {
    if (m.payload) {
      if (m.payload->next(m.inner)) {
        if (m.convert(m.inner, ev)) return true;
        continue;
      }
      m.payload.reset();
    }
    if (!m.stream) return false;
    if (!m.stream->next(m.outer)) {
      ++m.file;
      if (!m.open_next_file()) return false;
      continue;
    }
    if (m.outer.type() == EventType::transaction_payload) {
      auto p = decode_transaction_payload(m.outer.body_reader(), *m.outer.fde);
      if (p) {
        m.payload_body = *p;
        m.payload = std::make_unique<PayloadExpander>(m.outer, *m.payload_body, m.stream->log_name(), m.diag);
      }
      continue;
    }
    if (m.convert(m.outer, ev)) return true;
  }
}

}  // namespace binlogctl
