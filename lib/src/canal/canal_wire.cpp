// The protobuf pieces the Canal mapper encodes by hand (canal_internal.h): string fields with
// the generated code's UTF-8 check and its log, and Pair.
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format_lite.h>

#include "canal_internal.h"

namespace binlogctl::canal_detail {

bool proto_utf8_valid(std::string_view s) noexcept {
  return google::protobuf::internal::IsStructurallyValidUTF8(s.data(), static_cast<int>(s.size()));
}

void log_invalid_utf8(std::string_view s, const char* full_name) {
  (void)google::protobuf::internal::WireFormatLite::VerifyUtf8String(
      s.data(), static_cast<int>(s.size()), google::protobuf::internal::WireFormatLite::SERIALIZE,
      full_name);
}

void append_string_field(std::string& out, std::uint32_t field, std::string_view s,
                         const char* full_name) {
  if (s.empty()) return;
  check_utf8(s, full_name);
  append_len_field(out, field, s);
}

void append_pair_field(std::string& out, std::uint32_t field, std::string_view key,
                       std::string_view value) {
  std::size_t n = 0;
  if (!key.empty()) n += len_field_size(1, key.size());
  if (!value.empty()) n += len_field_size(2, value.size());
  append_varint(out, (field << 3) | 2);
  append_varint(out, n);
  append_string_field(out, 1, key, "com.alibaba.otter.canal.protocol.Pair.key");
  append_string_field(out, 2, value, "com.alibaba.otter.canal.protocol.Pair.value");
}

}  // namespace binlogctl::canal_detail
