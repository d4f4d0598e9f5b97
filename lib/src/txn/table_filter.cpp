// --filter: Canal's table filter over std::regex.
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized (std::function inside _StateT) under
// -fsanitize builds; the warning is a false positive in the library header, so it is silenced
// for this file only, which is why the regex lives here behind TableFilter's opaque pointer.
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <binlogctl/selection.h>

#include <atomic>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace binlogctl {

namespace {
constexpr const char* kNothingToRepeat =
    "not a valid regular expression: *, +, ? or { } with nothing before it to repeat (a rule is a regular "
    "expression, not a glob: '.*' matches any characters, 'shop\\..*' every table of shop)";

// A quantifier at the start of the rule or of an alternative or group: libstdc++ reports some of
// them as other errors ('*' alone as an unmatched parenthesis), so they are caught first.
bool quantifier_without_operand(std::string_view rule) {
  for (std::size_t i = 0; i < rule.size(); ++i) {
    if (rule[i] == '\\') {
      ++i;
      continue;
    }
    if ((rule[i] == '*' || rule[i] == '+' || rule[i] == '?' || rule[i] == '{') &&
        (i == 0 || rule[i - 1] == '(' || rule[i - 1] == '|') && !(rule[i] == '?' && i > 0 && rule[i - 1] == '('))
      return true;  // ((?:...) and friends are no quantifier)
  }
  return false;
}

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
    case error_badrepeat: return kNothingToRepeat;
    case error_complexity: return "not a valid regular expression: too complex";
    case error_stack: return "not a valid regular expression: too complex (stack)";
    default: return "not a valid regular expression";
  }
}
}  // namespace

struct TableFilter::Rules {
  std::vector<std::regex> list;
  std::vector<std::string> text;              // each rule as written
  std::unique_ptr<std::atomic<bool>[]> hit;  // matched at least once
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
      if (quantifier_without_operand(rule))
        return DecodeError{Errc::bad_value, static_cast<std::size_t>(rule.data() - rules.data()), kNothingToRepeat};
      try {
        compiled->list.emplace_back(std::string(rule),
                                    std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
        compiled->text.emplace_back(rule);
      } catch (const std::regex_error& e) {
        // offset: where the rule starts in `rules` (its leading blanks skipped)
        return DecodeError{Errc::bad_value, static_cast<std::size_t>(rule.data() - rules.data()), regex_reason(e.code())};
      }
    }
    start = end + 1;
  }
  compiled->hit = std::make_unique<std::atomic<bool>[]>(compiled->list.size());
  for (std::size_t i = 0; i < compiled->list.size(); ++i) compiled->hit[i].store(false, std::memory_order_relaxed);
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
  // Once one rule matched, the others are still tried while they have never matched, so that
  // unmatched_rules() names only rules that match no table at all (consumers call this once per
  // table map, not per row).
  bool any = false;
  for (std::size_t i = 0; i < rules_->list.size(); ++i) {
    if (any && rules_->hit[i].load(std::memory_order_relaxed)) continue;
    if (std::regex_match(target, rules_->list[i])) {
      rules_->hit[i].store(true, std::memory_order_relaxed);
      any = true;
    }
  }
  return any;
}

std::vector<std::string> TableFilter::unmatched_rules() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < size_; ++i)
    if (!rules_->hit[i].load(std::memory_order_relaxed)) out.push_back(rules_->text[i]);
  return out;
}

std::size_t warn_unmatched_filter_rules(const TableFilter& filter, std::FILE* err) {
  const std::vector<std::string> rules = filter.unmatched_rules();
  for (const std::string& r : rules) std::fprintf(err, "binlogctl: warning: --filter rule '%s' matched no table\n", r.c_str());
  return rules.size();
}

bool warn_unmatched_database(const std::string& db, bool matched, std::FILE* err) {
  if (db.empty() || matched) return false;
  std::fprintf(err,
               "binlogctl: warning: -d/--database '%s' matched nothing: no statement with it as the default "
               "database and no table of it (the name is compared exactly, case included)\n",
               db.c_str());
  return true;
}

}  // namespace binlogctl
