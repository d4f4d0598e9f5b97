// ChainVerifier: the chain-level checks of binlogctl verify (see verify.h and
// man/binlogctl-verify.1.scd for the rules and the reasons behind them).
//
// The driver: it hands each event to the parts, in the order the checks need, and takes the
// framing layer's findings. The parts:
//   FileChain       (file_chain.h)       positions, relay logs, the file sequence, ROTATE targets;
//   TxnStructure    (txn_structure.h)    transaction boundaries and structure, timestamps;
//   GtidContinuity  (gtid_continuity.h)  GTIDs against the chain, the files' GTID headers;
//   VerifyContext   (verify_context.h)   what they share: config, summary, finding delivery.
#include <binlogctl/inputs.h>
#include <binlogctl/verify.h>

#include <optional>
#include <string>
#include <utility>

#include "events/events.h"
#include "verify/file_chain.h"
#include "verify/gtid_continuity.h"
#include "verify/txn_structure.h"
#include "verify/verify_context.h"

namespace binlogctl {

struct ChainVerifier::Impl final : verify::VerifyContext::DamageHook {
  verify::VerifyContext ctx;
  verify::FileChain chain{ctx};
  verify::GtidContinuity gtids{ctx, chain};
  verify::TxnStructure txns{ctx, gtids};

  Impl(DiagnosticSink& o, VerifyConfig c) : ctx(o, c) { ctx.bind(&chain.cur().log_name, this); }

  void mark_damage() override {
    chain.mark_damage();
    txns.mark_damage();
  }

  // ---- per event -------------------------------------------------------------------------------

  void event(const Event& ev) {
    if (!chain.in_file()) return;
    const std::uint8_t t = ev.type_code();
    if (ev.is_inner()) {
      ++ctx.sum().inner_events;
    } else {
      ++ctx.sum().events;
      if (ev.omitted_before > 0) {
        // The server left transactions out on purpose (a GTID dump): what they executed is
        // unknown, so GTID continuity is not checked across the gap, and the next file's GTID
        // header becomes the baseline. An open transaction at the gap is still reported.
        txns.gap();
        gtids.on_gap();
      }
      chain.top_event(ev, txns.txn().active, txns.txn().begin_end);
    }
    if (!ev.checksum_ok) {  // reported by the framing layer; its content cannot be trusted
      mark_damage();
      txns.bad_checksum();
      return;
    }
    txns.before_event(t);
    if (is_rows_event(t)) {
      txns.on_rows(ev);
      return;
    }
    switch (static_cast<EventType>(t)) {
      case EventType::query:
      case EventType::mariadb_query_compressed:
        txns.on_query(ev);
        return;
      case EventType::table_map:
        txns.on_table_map(ev);
        return;
      case EventType::execute_load_query:
      case EventType::load:
      case EventType::new_load:
      case EventType::exec_load:
      case EventType::delete_file:
      case EventType::xid:
      case EventType::xa_prepare:
      case EventType::rows_query:
      case EventType::mariadb_annotate_rows:
      case EventType::transaction_context:
      case EventType::view_change:
      case EventType::intvar:
      case EventType::rand:
      case EventType::user_var:
      case EventType::begin_load_query:
      case EventType::append_block:
      case EventType::create_file:
        txns.on_timed(ev);
        return;
      case EventType::previous_gtids:
        txns.on_other(ev);
        if (chain.first_gtid_header(ev)) gtids.on_previous_gtids(ev);
        return;
      case EventType::mariadb_gtid_list:
        txns.on_other(ev);
        if (chain.first_gtid_header(ev)) gtids.on_gtid_list(ev);
        return;
      default:  // GTIDs, TRANSACTION_PAYLOAD, INCIDENT, the file's own bookkeeping, unknown
        txns.on_other(ev);
        return;
    }
  }

  // ---- files -----------------------------------------------------------------------------------

  bool begin_file(const InputFile& f) {
    const std::string& name = f.log_name;
    chain.count_input();
    // A transaction open at the end of the previous file waits for check_rotate only when a crash
    // may explain it; otherwise it is reported now, before this file's findings.
    if (!chain.crash_may_explain(f)) txns.flush_open_tail(chain.prev().log_name);
    if (chain.seen_before(name)) {
      txns.flush_open_tail(chain.prev().log_name);
      chain.report_given_twice(name);
      return false;
    }
    const bool seq_problem = chain.start(name);
    if (chain.unrelated() || seq_problem) txns.reset_commit_clock();
    if (std::optional<Diagnostic> crash = chain.check_rotate(name, seq_problem, f.after_unclosed)) {
      crash->message += txns.roll_back_open_tail();
      ctx.deliver(std::move(*crash));
    }
    txns.flush_open_tail(chain.prev().log_name);
    if (chain.settle_break(seq_problem)) gtids.on_chain_break(chain.prev().valid);
    if (f.missing) {
      ++ctx.sum().missing_files;
      ctx.emit(Check::file_sequence_gap, Severity::error, 0,
               fmt::format("{} is missing: {} names it, but it is absent{}", name,
                           f.origin.empty() ? std::string("the input") : log_name_of(f.origin),
                           f.path != name ? fmt::format(" ({})", f.path) : std::string()));
      chain.mark_missing();
      return false;
    }
    ++ctx.sum().files;
    chain.open(name);
    txns.begin_file(chain.prev().relay);
    return true;
  }

  void file_unavailable(const InputFile& f) {
    txns.flush_open_tail(chain.prev().log_name);
    chain.count_input();
    ++ctx.sum().missing_files;
    chain.unavailable(f);
    gtids.file_unavailable();
  }

  void end_file(std::uint64_t end_offset, std::uint64_t skipped, bool aborted) {
    if (!chain.end(end_offset, aborted)) return;
    ctx.sum().skipped_bytes += skipped;
    txns.end_file(chain.cur());
    chain.close(end_offset, skipped, aborted);
  }

  void finish() {
    txns.flush_open_tail(chain.prev().log_name);
    chain.check_closed();
    gtids.report_gaps();
  }
};

ChainVerifier::ChainVerifier(DiagnosticSink& out, VerifyConfig cfg)
    : impl_(std::make_unique<Impl>(out, cfg)) {}
ChainVerifier::~ChainVerifier() = default;

void ChainVerifier::plan(const std::vector<InputFile>& files) {
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const InputFile& f : files) names.push_back(f.log_name);
  impl_->chain.plan(std::move(names));
}
bool ChainVerifier::begin_file(const InputFile& f) { return impl_->begin_file(f); }
void ChainVerifier::file_unavailable(const InputFile& f) { impl_->file_unavailable(f); }
void ChainVerifier::event(const Event& ev) { impl_->event(ev); }
void ChainVerifier::end_file(std::uint64_t end_offset, std::uint64_t skipped, bool aborted) {
  impl_->end_file(end_offset, skipped, aborted);
}
void ChainVerifier::finish() { impl_->finish(); }
const VerifySummary& ChainVerifier::summary() const noexcept { return impl_->ctx.sum(); }
std::uint64_t ChainVerifier::current_transaction_id() const noexcept {
  const verify::Txn& t = impl_->txns.txn();
  return t.active ? t.id : 0;
}

void ChainVerifier::name_file(const std::string& log_name, const std::string& path,
                              std::uint64_t base) {
  impl_->ctx.out().name_file(log_name, path, base);
}

void ChainVerifier::report(const Diagnostic& d) {
  switch (d.check) {
    case Check::unknown_event_type:
    case Check::timestamp_regression:
    case Check::gtid_gap:
      break;
    default:
      if (d.severity == Severity::error) impl_->mark_damage();
  }
  impl_->ctx.deliver(d);
}

}  // namespace binlogctl
