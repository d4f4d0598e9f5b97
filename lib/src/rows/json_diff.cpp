// PARTIAL_UPDATE_ROWS JSON diffs: reading, rendering, and applying them to a before image.
#include "rows/rows.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace binlogctl {

const char* json_diff_op_name(JsonDiffOp op) noexcept {
  switch (op) {
    case JsonDiffOp::replace: return "replace";
    case JsonDiffOp::insert: return "insert";
    case JsonDiffOp::remove: return "remove";
  }
  return "unknown";
}

bool JsonDiffReader::next(JsonDiff& d) {
  if (!ok() || !r_.ok() || r_.empty()) return false;
  const std::uint64_t at = r_.offset();
  const std::uint8_t op = r_.u8();
  if (op > 2) {
    err_ = DecodeError{Errc::bad_value, at, "unknown JSON diff operation"};
    return false;
  }
  d.op = static_cast<JsonDiffOp>(op);
  const std::size_t path_len = r_.packed_len();
  d.path = r_.str(path_len);
  d.value = {};
  if (d.op != JsonDiffOp::remove) {
    const std::size_t value_len = r_.packed_len();
    d.value_offset = r_.offset();
    d.value = r_.bytes(value_len);
    if (r_.ok() && value_len == 0) {
      err_ = DecodeError{Errc::bad_length, d.value_offset, "JSON diff without a value"};
      return false;
    }
  }
  if (!r_.ok()) {
    err_ = r_.error();
    return false;
  }
  if (d.path.empty() || d.path.front() != '$') {
    err_ = DecodeError{Errc::bad_value, at, "JSON diff path does not start with '$'"};
    return false;
  }
  return true;
}

Status append_json_diffs_json(RenderBuf& out, Bytes diffs, std::uint64_t offset) {
  JsonDiffReader rd(diffs, offset);
  JsonDiff d;
  out.push_back('[');
  bool first = true;
  while (rd.next(d)) {
    if (!first) out.push_back(',');
    first = false;
    out.append("{\"op\":\"");
    out.append(json_diff_op_name(d.op));
    out.append("\",\"path\":");
    append_json_string(out, d.path);
    if (d.op != JsonDiffOp::remove) {
      out.append(",\"value\":");
      Status st = append_json_binary(out, d.value, d.value_offset);
      if (!st.ok()) return st;
    }
    out.push_back('}');
  }
  if (!rd.ok()) return rd.error();
  out.push_back(']');
  return {};
}

namespace {

using Json = nlohmann::ordered_json;

struct Leg {
  bool is_member = false;
  std::string key;
  std::size_t index = 0;
};

// MySQL JSON path text as Json_path::to_string writes it: `$`, then `.key`, `."quoted key"` or
// `[n]` legs. Wildcards and ranges never appear in diffs and are refused.
bool parse_path(std::string_view p, std::vector<Leg>& legs) {
  legs.clear();
  std::size_t i = 0;
  auto skip_ws = [&] {
    while (i < p.size() && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n')) ++i;
  };
  skip_ws();
  if (i >= p.size() || p[i] != '$') return false;
  ++i;
  for (;;) {
    skip_ws();
    if (i >= p.size()) return true;
    Leg leg;
    if (p[i] == '.') {
      ++i;
      skip_ws();
      leg.is_member = true;
      if (i < p.size() && p[i] == '"') {
        // A JSON string literal.
        std::size_t j = i + 1;
        while (j < p.size() && p[j] != '"') j += (p[j] == '\\') ? 2 : 1;
        if (j >= p.size()) return false;
        try {
          leg.key = Json::parse(p.substr(i, j + 1 - i)).get<std::string>();
        } catch (const std::exception&) {
          return false;
        }
        i = j + 1;
      } else {
        const std::size_t j0 = i;
        while (i < p.size() && p[i] != '.' && p[i] != '[' && p[i] != ' ') ++i;
        if (i == j0) return false;
        leg.key.assign(p.substr(j0, i - j0));
        if (leg.key == "*") return false;
      }
    } else if (p[i] == '[') {
      ++i;
      skip_ws();
      std::size_t v = 0, digits = 0;
      while (i < p.size() && p[i] >= '0' && p[i] <= '9') {
        v = v * 10 + static_cast<std::size_t>(p[i] - '0');
        ++i;
        if (++digits > 18) return false;
      }
      skip_ws();
      if (digits == 0 || i >= p.size() || p[i] != ']') return false;
      ++i;
      leg.index = v;
    } else {
      return false;
    }
    legs.push_back(std::move(leg));
  }
}

// MySQL binary JSON keeps object keys sorted by length, then bytewise.
Json sorted(const Json& j) {
  if (j.is_array()) {
    Json a = Json::array();
    for (const Json& e : j) a.push_back(sorted(e));
    return a;
  }
  if (!j.is_object()) return j;
  std::vector<const std::string*> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(&it.key());
  std::stable_sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) {
    if (a->size() != b->size()) return a->size() < b->size();
    return std::memcmp(a->data(), b->data(), a->size()) < 0;
  });
  Json o = Json::object();
  for (const std::string* k : keys) o[*k] = sorted(j.at(*k));
  return o;
}

}  // namespace

Status apply_json_diffs(std::string_view doc_text, Bytes diffs, std::uint64_t offset, RenderBuf& out) {
  Json doc;
  try {
    doc = Json::parse(doc_text);
  } catch (const std::exception&) {
    return DecodeError{Errc::bad_value, offset, "before image of a partial JSON column is not JSON"};
  }
  JsonDiffReader rd(diffs, offset);
  JsonDiff d;
  std::vector<Leg> legs;
  std::string value_text;
  std::uint64_t at = offset;
  while (rd.next(d)) {
    const char* bad = nullptr;
    if (!parse_path(d.path, legs)) {
      bad = "JSON diff path does not parse";
    } else {
      Json value;
      if (d.op != JsonDiffOp::remove) {
        value_text.clear();
        Status st = append_json_binary(value_text, d.value, d.value_offset);
        if (!st.ok()) return st;
        try {
          value = Json::parse(value_text);
        } catch (const std::exception&) {
          return DecodeError{Errc::bad_value, d.value_offset, "JSON diff value does not render as JSON"};
        }
      }
      if (legs.empty()) {  // the whole document
        if (d.op == JsonDiffOp::replace) doc = std::move(value);
        else bad = "JSON diff inserts or removes the whole document";
      } else {
        // Walk to the parent of the last leg.
        Json* parent = &doc;
        for (std::size_t k = 0; k + 1 < legs.size() && parent != nullptr; ++k) {
          const Leg& l = legs[k];
          if (l.is_member) {
            parent = parent->is_object() && parent->contains(l.key) ? &(*parent)[l.key] : nullptr;
          } else if (parent->is_array()) {
            parent = l.index < parent->size() ? &(*parent)[l.index] : nullptr;
          } else {
            // MySQL auto-wraps a scalar for [0]
            parent = l.index == 0 ? parent : nullptr;
          }
        }
        const Leg& last = legs.back();
        if (parent == nullptr) {
          bad = "JSON diff path leads nowhere in the before image";
        } else if (last.is_member) {
          if (!parent->is_object()) {
            bad = "JSON diff member path on a non-object";
          } else if (d.op == JsonDiffOp::replace) {
            if (!parent->contains(last.key)) bad = "JSON diff replaces a member that does not exist";
            else (*parent)[last.key] = std::move(value);
          } else if (d.op == JsonDiffOp::insert) {
            (*parent)[last.key] = std::move(value);
          } else {
            parent->erase(last.key);
          }
        } else {
          if (!parent->is_array()) {
            if (d.op == JsonDiffOp::replace && last.index == 0) *parent = std::move(value);
            else bad = "JSON diff array path on a non-array";
          } else if (d.op == JsonDiffOp::replace) {
            if (last.index >= parent->size()) bad = "JSON diff replaces an element that does not exist";
            else (*parent)[last.index] = std::move(value);
          } else if (d.op == JsonDiffOp::insert) {
            const std::size_t idx = std::min(last.index, parent->size());
            parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(idx), std::move(value));
          } else {
            if (last.index < parent->size()) parent->erase(last.index);
          }
        }
      }
    }
    if (bad != nullptr) return DecodeError{Errc::bad_value, at, bad};
    at = d.value_offset;
  }
  if (!rd.ok()) return rd.error();
  out.append(sorted(doc).dump(-1, ' ', false, Json::error_handler_t::replace));
  return {};
}

}  // namespace binlogctl
