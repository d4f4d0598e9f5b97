// The Canal output (canal_mapper.cpp): Entries numbered into batches and written as canal-proto's
// varint-delimited stream, as Canal server packets (--canal-packets: length + Packet{MESSAGES},
// optionally compressed), or canal-json's lines; large stores written from where they are.
#pragma once

#include <binlogctl/canal.h>

#include "canal/canal_internal.h"

#include "CanalProtocol.pb.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <sys/uio.h>

namespace canalpb = com::alibaba::otter::canal::protocol;

namespace binlogctl::canal_detail {

class EntrySink {
 public:
  EntrySink(const CanalOptions& o, std::FILE* f) : o_(o), f_(f) {}

  // Batch number of the next entry (every entry counts, also where canal-json writes nothing).
  std::uint64_t next_batch() {
    const std::uint64_t batch = entries_ / (o_.batch_size == 0 ? 1 : o_.batch_size) + 1;
    ++entries_;
    return batch;
  }

  // canal-proto: Entry{header (1), entryType (2), storeValue (3, when not empty)}. `borrowed`:
  // `store` stays valid until release() (it is written from where it is, not copied).
  void entry(std::uint64_t batch, std::string_view header, int entry_type, std::string_view store,
             bool borrowed = false);
  // canal-proto: an Entry whose storeValue is head + big + tail, for a huge statement (a 1 GiB
  // QUERY): `big` is written out a block at a time, never serialized whole; into a packet
  // (--canal-packets) it is copied once, the batch's packet being sized only at its end.
  void entry_pieces(std::uint64_t batch, std::string_view header, int entry_type, std::string_view head,
                    std::string_view big, std::string_view tail);
  // canal-json: the buffer is written out when it is a block long (a huge statement's line is
  // appended to text() a piece at a time).
  void maybe_write_out() {
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }

  // `s` written after what the buffer holds, from where it is when it is large enough (it must
  // stay valid until release()), else copied.
  void borrow(std::string_view s);
  // The borrowed bytes are about to go: written out now.
  void release() {
    if (!pieces_.empty()) write_out();
  }

  // canal-json: lines are appended here, then done() is called.
  OutBuf& text() { return buf_; }
  void done() {
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }

  // At the end of the input: the last batch's packet, and everything written out.
  void flush() {
    if (messages_.messages_size() > 0) packet();
    write_out();
  }

 private:
  static constexpr std::size_t kFlushAt = 256u << 10;

  // Writes the buffer out. Only whole batches are in it: a batch's packet is made when the next
  // batch starts (or at the end), never because the buffer is full (the first implementation
  // flushed the open batch here, which split a batch into two packets of the same batch_id).
  void write_out();

  // The pieces, in order, with writev on the stream's descriptor (nothing is left in its
  // buffer: every write_out flushes it).
  void write_pieces();

  // One MESSAGES packet for the batch collected in messages_ (SessionHandler, NettyUtils.write):
  // 4-byte big-endian length, then Packet{version, type, [compression], body = Messages{batch_id,
  // messages}}. The small fields are serialized by the generated code; the body, its last field,
  // is written here field by field as the generated code writes it, so that no message (a huge
  // statement's entry) is copied into a serialized body and again into the output.
  void packet();

  // Messages{batch_id (m0, serialized), messages} deflated (zlib or gzip framing) into `out`, fed
  // to zlib field by field (a huge message from where it is).
  static void deflate_body(const std::string& m0, const canalpb::Messages& msgs, bool gzip, std::string& out);

  const CanalOptions& o_;
  std::FILE* f_;
  int fd_ = f_ != nullptr ? ::fileno(f_) : -1;
  OutBuf buf_;
  // Borrowed stores (canal-proto without packets): what is written out is, in order, the pieces
  // (a range of buf_ when ext is null, else ext's bytes), then buf_ past copied_.
  struct Piece {
    const char* ext;
    std::size_t at, len;
  };
  static constexpr std::size_t kBorrowFrom = 512;  // smaller stores are cheaper to copy
  static constexpr std::size_t kMaxPieces = 2048;
  std::vector<Piece> pieces_;
  std::vector<iovec> iov_;
  std::size_t copied_ = 0, borrowed_bytes_ = 0;
  std::string plain_, pre_, p0_, zbody_;
  std::uint64_t entries_ = 0;
  std::uint64_t batch_id_ = 0;
  canalpb::Messages messages_, head_msg_;
  canalpb::Packet packet_;
};

}  // namespace binlogctl::canal_detail
