// What every part of ChainVerifier shares (chain_verifier.cpp is the driver; file_chain.h,
// txn_structure.h and gtid_continuity.h are the parts): the configuration, the summary and the
// one way a finding leaves the verifier (--strict applied, counted, delivered).
#pragma once

#include <binlogctl/verify.h>
#include <fmt/format.h>

#include <string>
#include <utility>

namespace binlogctl::verify {

class VerifyContext {
 public:
  // Told when a finding means the input is damaged (an event body that does not decode): the
  // driver marks the file and the open transaction, whose structure is then not judged.
  class DamageHook {
   public:
    virtual void mark_damage() = 0;

   protected:
    ~DamageHook() = default;
  };

  VerifyContext(DiagnosticSink& out, VerifyConfig cfg) : out_(out), cfg_(cfg) {}

  // The file being read, whose name emit() reports; set once by the driver.
  void bind(const std::string* current_log, DamageHook* damage) {
    log_name_ = current_log;
    damage_ = damage;
  }

  const VerifyConfig& cfg() const noexcept { return cfg_; }
  VerifySummary& sum() noexcept { return sum_; }
  const VerifySummary& sum() const noexcept { return sum_; }
  DiagnosticSink& out() noexcept { return out_; }

  void deliver(Diagnostic d) {
    if (cfg_.strict) d.severity = Severity::error;
    if (d.severity == Severity::error)
      ++sum_.errors;
    else
      ++sum_.warnings;
    ++sum_.per_check[static_cast<std::size_t>(d.check)];
    out_.report(d);
  }

  // A finding in the file being read.
  void emit(Check c, Severity s, std::uint64_t pos, std::string msg) {
    deliver(Diagnostic{c, s, *log_name_, pos, std::move(msg)});
  }

  // An event body that does not decode: reported, and the input marked damaged.
  void decode_failed(const Event& ev, const DecodeError& e) {
    const Check c = (e.code == Errc::truncated || e.code == Errc::bad_length)
                        ? Check::bad_event_size
                        : Check::undecodable_event;
    emit(
        c, Severity::error, where(ev),
        fmt::format("{}{} body does not decode: {} (at offset {}, event size {})", inner_prefix(ev),
                    event_type_constant(ev.type_code()), e.what, e.offset, ev.header.event_size));
    damage_->mark_damage();
  }

  // Position and message prefix for an event (inner events are reported at their payload).
  static std::uint64_t where(const Event& ev) { return ev.is_inner() ? ev.payload_pos : ev.pos; }
  static std::string inner_prefix(const Event& ev) {
    return ev.is_inner()
               ? fmt::format(
                     "in the transaction payload, inner event #{} ({} at inner offset {}): ",
                     ev.inner_index, event_type_constant(ev.type_code()), ev.pos)
               : std::string();
  }

 private:
  DiagnosticSink& out_;
  VerifyConfig cfg_;
  VerifySummary sum_;
  const std::string* log_name_ = nullptr;
  DamageHook* damage_ = nullptr;
};

}  // namespace binlogctl::verify
