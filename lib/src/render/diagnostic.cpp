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
  return fmt::format("{}:{}: {}: {}: {}", d.path.empty() ? d.log_name : d.path, d.pos, severity_name(d.severity),
                     check_name(d.check), d.message);
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

void FileNames::set(const std::string& log_name, const std::string& path) {
  std::lock_guard<std::mutex> lock(m_);
  for (auto& [name, p] : names_) {
    if (name == log_name) {
      p = path;
      return;
    }
  }
  names_.emplace_back(log_name, path);
}

std::string FileNames::name_of(const Diagnostic& d) const {
  if (!d.path.empty()) return d.path;
  std::lock_guard<std::mutex> lock(m_);
  for (const auto& [name, p] : names_) {
    if (name == d.log_name && !p.empty()) return p;
  }
  return d.log_name;
}

void StderrDiagnostics::report(const Diagnostic& d) {
  if (d.severity == Severity::error) ++errors_;
  else ++warnings_;
  Diagnostic named = d;
  named.path = names_.name_of(d);
  const std::string line = fmt::format("binlogctl: {}\n", format_diagnostic(named));
  std::lock_guard<std::mutex> lock(m_);
  std::fputs(line.c_str(), f_);
  std::fflush(f_);
}

}  // namespace binlogctl
