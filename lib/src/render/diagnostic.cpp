#include <binlogctl/diagnostic.h>
#include <binlogctl/result.h>

#include <fmt/format.h>

namespace binlogctl {

std::string_view check_name(Check c) noexcept {
  switch (c) {
    case Check::bad_magic: return "bad_magic";
    case Check::unsupported_format: return "unsupported_format";
    case Check::missing_format_description: return "missing_format_description";
    case Check::bad_event_size: return "bad_event_size";
    case Check::truncated_event: return "truncated_event";
    case Check::log_pos_mismatch: return "log_pos_mismatch";
    case Check::checksum_mismatch: return "checksum_mismatch";
    case Check::rotate_mismatch: return "rotate_mismatch";
    case Check::file_sequence_gap: return "file_sequence_gap";
    case Check::previous_gtids_mismatch: return "previous_gtids_mismatch";
    case Check::gtid_list_mismatch: return "gtid_list_mismatch";
    case Check::gtid_duplicate: return "gtid_duplicate";
    case Check::gtid_gap: return "gtid_gap";
    case Check::transaction_structure: return "transaction_structure";
    case Check::unknown_event_type: return "unknown_event_type";
    case Check::timestamp_regression: return "timestamp_regression";
    case Check::server_crash: return "server_crash";
    case Check::undecodable_event: return "undecodable_event";
    case Check::read_error: return "read_error";
    case Check::decryption_failed: return "decryption_failed";
  }
  return "unknown";
}

std::string_view severity_name(Severity s) noexcept {
  return s == Severity::error ? "error" : "warning";
}

std::string format_diagnostic(const Diagnostic& d) {
  const std::string_view file = d.path.empty() ? std::string_view(d.log_name) : std::string_view(d.path);
  if (d.base == 0)
    return fmt::format("{}:{}: {}: {}: {}", file, d.pos, severity_name(d.severity), check_name(d.check), d.message);
  return fmt::format("{}:{}: {}: {}: {} ({}, position {})", file, d.base + d.pos, severity_name(d.severity),
                     check_name(d.check), d.message, d.log_name, d.pos);
}

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::ok: return "ok";
    case Errc::truncated: return "truncated";
    case Errc::bad_length: return "bad_length";
    case Errc::bad_value: return "bad_value";
    case Errc::bad_magic: return "bad_magic";
    case Errc::unsupported_format: return "unsupported_format";
    case Errc::missing_format_description: return "missing_format_description";
    case Errc::checksum_mismatch: return "checksum_mismatch";
    case Errc::decompress_failed: return "decompress_failed";
    case Errc::io_error: return "io_error";
    case Errc::decrypt_failed: return "decrypt_failed";
  }
  return "unknown";
}

void FileNames::set(const std::string& log_name, const std::string& path, std::uint64_t base) {
  std::lock_guard<std::mutex> lock(m_);
  for (Named& n : names_) {
    if (n.log_name == log_name) {
      n.path = path;
      n.base = base;
      return;
    }
  }
  names_.push_back(Named{log_name, path, base});
}

Diagnostic FileNames::named(const Diagnostic& d) const {
  Diagnostic out = d;
  if (!d.path.empty()) return out;
  std::lock_guard<std::mutex> lock(m_);
  for (const Named& n : names_) {
    if (n.log_name == d.log_name) {
      out.path = n.path.empty() ? d.log_name : n.path;
      out.base = n.base;
      return out;
    }
  }
  out.path = d.log_name;
  return out;
}

void StderrDiagnostics::report(const Diagnostic& d) {
  if (d.severity == Severity::error) ++errors_;
  else ++warnings_;
  const Diagnostic named = names_.named(d);
  const std::string line = fmt::format("binlogctl: {}\n", format_diagnostic(named));
  std::lock_guard<std::mutex> lock(m_);
  std::fputs(line.c_str(), f_);
  std::fflush(f_);
}

}  // namespace binlogctl
