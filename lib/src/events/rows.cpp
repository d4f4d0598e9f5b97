// TABLE_MAP, the rows family (header part) and TRANSACTION_PAYLOAD.
#include "events/events.h"

namespace binlogctl {

Result<TableMapEvent> decode_table_map(ByteReader r, const Fde& fde) {
  TableMapEvent t;
  std::uint8_t ph = fde.post_header(EventType::table_map);
  if (ph == 0) ph = 8;
  if (ph == 6) {
    t.table_id = r.u32();  // 5.1.x before 5.1.4: 4-byte table id
    t.flags = r.u16();
  } else {
    t.table_id = r.le_n(6);
    t.flags = r.u16();
    r.skip(ph > 8 ? ph - 8u : 0u);
  }
  std::size_t n = r.u8();
  t.db = r.str(n);
  r.skip(1);
  n = r.u8();
  t.table = r.str(n);
  r.skip(1);
  t.column_count = r.packed_int();
  if (t.column_count > r.remaining())
    return DecodeError{Errc::bad_length, r.offset(), "TABLE_MAP column count larger than the event"};
  t.column_types = r.bytes(static_cast<std::size_t>(t.column_count));
  std::size_t meta_len = r.remaining() > 0 ? r.packed_len() : 0;
  t.metadata = r.bytes(meta_len);
  t.null_bitmap = r.bytes(static_cast<std::size_t>((t.column_count + 7) / 8));
  t.optional_metadata = r.rest();
  if (!r.ok()) return r.error();
  t.flavor = fde.flavor;
  t.server_version = fde.version_product;
  return t;
}

namespace {
bool is_update_type(std::uint8_t c) {
  const std::optional<RowsEventKind> k = classify_rows_event(c);
  return k && k->kind == RowsKind::update;
}
}  // namespace

Result<RowsEventHeader> decode_rows_header(ByteReader r, const Fde& fde, std::uint8_t type_code) {
  RowsEventHeader h;
  std::uint8_t ph = fde.post_header(type_code);
  if (ph == 0) ph = (type_code >= 30 && type_code <= 39) ? 10 : 8;
  if (ph == 6) {
    h.table_id = r.u32();
    h.flags = r.u16();
  } else {
    h.table_id = r.le_n(6);
    h.flags = r.u16();
    if (ph >= 10) {
      std::uint16_t extra_len = r.u16();  // includes its own two bytes
      if (extra_len < 2) return DecodeError{Errc::bad_length, r.offset() - 2, "rows event extra data length below 2"};
      h.extra = r.bytes(extra_len - 2u);
      r.skip(ph - 10u);
    } else {
      r.skip(ph - 8u);
    }
  }
  h.width = r.packed_int();
  if (h.width > 8 * static_cast<std::uint64_t>(r.remaining()))
    return DecodeError{Errc::bad_length, r.offset(), "rows event column count larger than the event"};
  const std::size_t bm = static_cast<std::size_t>((h.width + 7) / 8);
  h.columns_before = r.bytes(bm);
  if (is_update_type(type_code)) h.columns_after = r.bytes(bm);
  h.rows_offset = r.offset();
  h.rows = r.rest();
  if (!r.ok()) return r.error();
  return h;
}

std::string_view compression_name(std::uint64_t type) noexcept {
  switch (type) {
    case 0: return "ZSTD";
    case 255: return "NONE";
    default: return "UNKNOWN";
  }
}

Result<TransactionPayloadEvent> decode_transaction_payload(ByteReader r, const Fde& fde) {
  // The FDE declares a 40-byte post-header for this type, but the server writes none: the
  // fields start right after the common header.
  (void)fde;
  TransactionPayloadEvent p;
  bool have_size = false;
  for (;;) {
    std::uint64_t type = r.packed_int();
    if (!r.ok()) return r.error();
    if (type == 0) break;  // OTW_PAYLOAD_HEADER_END_MARK
    std::size_t len = r.packed_len();
    ByteReader f = r.sub(len);
    switch (type) {
      case 1: p.payload_size = f.packed_int(); have_size = true; break;
      case 2: p.compression_type = f.packed_int(); break;
      case 3: p.uncompressed_size = f.packed_int(); break;
      default: break;  // a field from a newer server: skipped by its length
    }
    if (!f.ok()) return f.error();
  }
  p.payload_offset = r.offset();
  if (have_size && p.payload_size != r.remaining())
    return DecodeError{Errc::bad_length, r.offset(), "transaction payload size differs from the bytes present"};
  p.payload = r.rest();
  if (p.compression_type != 0 && p.compression_type != 255)
    return DecodeError{Errc::unsupported_format, r.offset(), "unknown transaction payload compression"};
  if (!r.ok()) return r.error();
  return p;
}

}  // namespace binlogctl
