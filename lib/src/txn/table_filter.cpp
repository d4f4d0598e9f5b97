// --filter: Canal's table filter over std::regex.
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized (std::function inside _StateT) under
// -fsanitize builds; the warning is a false positive in the library header, so it is silenced
// for this file only, which is why the regex lives here behind TableFilter's opaque pointer.
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <binlogctl/selection.h>

#include <regex>

namespace binlogctl {

namespace {
// Why std::regex refused a rule, in words (static strings: DecodeError does not own its text).
const char* regex_reason(std::regex_constants::error_type code) {
  using namespace std::regex_constants;
  switch (code) {
    case error_collate: return "not a valid regular expression: invalid collating element name";
    case error_ctype: return "not a valid regular expression: invalid character class name";
    case error_escape: return "not a valid regular expression: invalid escape or trailing backslash";
    case error_backref: return "not a valid regular expression: invalid back reference";
    case error_brack: return "not a valid regular expression: unmatched [";
    case error_paren: return "not a valid regular expression: unmatched ( or )";
    case error_brace: return "not a valid regular expression: unmatched { or }";
    case error_badbrace: return "not a valid regular expression: invalid range in { }";
    case error_range: return "not a valid regular expression: invalid character range";
    case error_badrepeat: return "not a valid regular expression: *, +, ? or { } with nothing to repeat";
    case error_complexity: return "not a valid regular expression: too complex";
    case error_stack: return "not a valid regular expression: too complex (stack)";
    default: return "not a valid regular expression";
  }
}
}  // namespace

struct TableFilter::Rules {
  std::vector<std::regex> list;
};

Result<TableFilter> TableFilter::parse(std::string_view rules) {
  auto compiled = std::make_shared<Rules>();
  std::size_t start = 0;
  while (start <= rules.size()) {
    std::size_t end = rules.find(',', start);
    if (end == std::string_view::npos) end = rules.size();
    std::string_view rule = rules.substr(start, end - start);
    while (!rule.empty() && (rule.front() == ' ' || rule.front() == '\t')) rule.remove_prefix(1);
    while (!rule.empty() && (rule.back() == ' ' || rule.back() == '\t')) rule.remove_suffix(1);
    if (!rule.empty()) {
      try {
        compiled->list.emplace_back(std::string(rule),
                                    std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
      } catch (const std::regex_error& e) {
        // offset: where the rule starts in `rules` (its leading blanks skipped)
        return DecodeError{Errc::bad_value, static_cast<std::size_t>(rule.data() - rules.data()), regex_reason(e.code())};
      }
    }
    start = end + 1;
  }
  TableFilter f;
  f.size_ = compiled->list.size();
  f.rules_ = std::move(compiled);
  return f;
}

// Canal lower-cases the target and compiles the rules case-insensitively; each rule must match
// the whole text (AviaterRegexFilter wraps it in ^...$).
bool TableFilter::matches(std::string_view schema, std::string_view table) const {
  if (size_ == 0) return true;
  std::string target;
  target.reserve(schema.size() + table.size() + 1);
  for (char c : schema) target.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
  target.push_back('.');
  for (char c : table) target.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
  for (const std::regex& re : rules_->list)
    if (std::regex_match(target, re)) return true;
  return false;
}

}  // namespace binlogctl
