#include "render_pool.h"

#include <fmt/format.h>

namespace binlogctl::convert_detail {

Diagnostic undecodable_rows(std::string_view log_name, std::uint64_t pos, std::int64_t inner_index,
                            std::string_view event_name, const DecodeError& e) {
  return Diagnostic{Check::undecodable_event, Severity::error, std::string(log_name), pos,
                    fmt::format("{} event does not decode: {} at offset {}{}", event_name, e.what, e.offset,
                                inner_index >= 0 ? fmt::format(" (inner event {} of the payload)", inner_index)
                                                 : std::string())};
}

void Batch::add_rows(const RowsView& v, std::shared_ptr<const TableMap> map, std::string_view log_name,
                     std::uint64_t pos, std::int64_t inner_index, std::string_view event_name) {
  Job j;
  j.literal = false;
  j.text = add(v.text);
  j.suffix = add(v.suffix);
  j.tail = add(v.tail);
  j.rows = add(v.rows);
  j.present_before = add(v.present_before);
  j.present_after = add(v.present_after);
  j.log_name = add(log_name);
  j.rows_offset = v.rows_offset;
  j.width = v.width;
  j.pos = pos;
  j.inner_index = inner_index;
  j.event_name = event_name;
  j.kind = v.kind;
  j.partial_json = v.partial_json;
  j.map = std::move(map);
  jobs.push_back(std::move(j));
}

RowsView Batch::rows_view(const Job& j) const {
  RowsView v;
  v.map = j.map.get();
  v.text = view(j.text);
  v.suffix = view(j.suffix);
  v.tail = view(j.tail);
  v.rows = bytes(j.rows);
  v.present_before = bytes(j.present_before);
  v.present_after = bytes(j.present_after);
  v.rows_offset = j.rows_offset;
  v.width = j.width;
  v.kind = j.kind;
  v.partial_json = j.partial_json;
  return v;
}

void render_batch(Batch& b, RowImageDecoder& images, const RenderOptions& ro) {
  struct Sink {
    RenderBuf& s;
    RenderBuf& buf() { return s; }
    void end_line() { s.push_back('\n'); }
  } sink{b.out};
  for (const Job& j : b.jobs) {
    if (j.literal) {
      b.out.append(b.view(j.text));
      continue;
    }
    const RowsView v = b.rows_view(j);
    if (auto e = render_rows(v, sink, images, ro))
      b.diags.push_back(undecodable_rows(b.view(j.log_name), j.pos, j.inner_index, j.event_name, *e));
  }
}

void JsonRender::write(Batch& b) const {
  out.write(b.out.view());
  for (const Diagnostic& d : b.diags) diag.report(d);
}

}  // namespace binlogctl::convert_detail
