// EntrySink (entry_sink.h): entries, packets and writing out.
#include "canal/entry_sink.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace binlogctl::canal_detail {

void EntrySink::entry(std::uint64_t batch, std::string_view header, int entry_type, std::string_view store,
                      bool borrowed) {
  std::size_t n = 1 + varint_size(header.size()) + header.size() + 1 +
                  varint_size(static_cast<std::uint64_t>(entry_type));
  if (!store.empty()) n += 1 + varint_size(store.size()) + store.size();
  char* p;
  if (o_.packets) {
    if (batch != batch_id_ && messages_.messages_size() > 0) packet();
    batch_id_ = batch;
    std::string* m = messages_.add_messages();
    m->resize(n);
    p = m->data();
  } else if (borrowed && store.size() >= kBorrowFrom && fd_ >= 0) {
    // Everything up to the store's bytes here, then the store where it is.
    p = buf_.extend(varint_size(n) + n - store.size());
    p = put_varint(p, n);
    canal_detail::WireWriter w{p};
    w.bytes(1, header);
    w.varint(2, static_cast<std::uint64_t>(entry_type));
    *w.p++ = static_cast<char>((3u << 3) | 2);
    w.p = put_varint(w.p, store.size());
    buf_.truncate(static_cast<std::size_t>(w.p - buf_.data()));
    borrow(store);
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
    return;
  } else {
    p = buf_.extend(varint_size(n) + n);
    p = put_varint(p, n);
  }
  canal_detail::WireWriter w{p};
  w.bytes(1, header);
  w.varint(2, static_cast<std::uint64_t>(entry_type));
  if (!store.empty()) w.bytes(3, store);
  if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
}

void EntrySink::entry_pieces(std::uint64_t batch, std::string_view header, int entry_type, std::string_view head,
                             std::string_view big, std::string_view tail) {
  const std::size_t store = head.size() + big.size() + tail.size();
  const std::size_t n = 1 + varint_size(header.size()) + header.size() + 1 +
                        varint_size(static_cast<std::uint64_t>(entry_type)) + 1 + varint_size(store) + store;
  std::string& pre = pre_;
  pre.clear();
  if (!o_.packets) canal_detail::append_varint(pre, n);
  canal_detail::append_len_field(pre, 1, header);
  canal_detail::append_varint_field(pre, 2, static_cast<std::uint64_t>(entry_type));
  canal_detail::append_varint(pre, (3u << 3) | 2);
  canal_detail::append_varint(pre, store);
  pre.append(head);
  if (o_.packets) {
    if (batch != batch_id_ && messages_.messages_size() > 0) packet();
    batch_id_ = batch;
    std::string* m = messages_.add_messages();
    m->reserve(n);
    m->append(pre).append(big).append(tail);
    return;
  }
  buf_.append(pre);
  for (std::size_t at = 0; at < big.size(); at += kFlushAt) {
    buf_.append(big.substr(at, kFlushAt));
    if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
  }
  buf_.append(tail);
  if (buf_.size() + borrowed_bytes_ >= kFlushAt) write_out();
}

void EntrySink::borrow(std::string_view s) {
  if (s.size() < kBorrowFrom || fd_ < 0) {
    buf_.append(s);
    return;
  }
  pieces_.push_back(Piece{nullptr, copied_, buf_.size() - copied_});
  pieces_.push_back(Piece{s.data(), 0, s.size()});
  copied_ = buf_.size();
  borrowed_bytes_ += s.size();
  if (pieces_.size() >= kMaxPieces) write_out();
}

void EntrySink::write_out() {
  if (!pieces_.empty()) {
    if (copied_ < buf_.size()) pieces_.push_back(Piece{nullptr, copied_, buf_.size() - copied_});
    write_pieces();
    pieces_.clear();
    copied_ = 0;
    borrowed_bytes_ = 0;
    buf_.clear();
    return;
  }
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    throw std::system_error(errno, std::generic_category(), "write");
  buf_.clear();
  if (std::fflush(f_) != 0) throw std::system_error(errno, std::generic_category(), "write");
}

void EntrySink::write_pieces() {
  std::vector<iovec>& v = iov_;
  v.clear();
  for (const Piece& pc : pieces_) {
    const char* at = pc.ext != nullptr ? pc.ext : buf_.data() + pc.at;
    if (pc.len != 0) v.push_back(iovec{const_cast<char*>(at), pc.len});
  }
  std::size_t i = 0;
  while (i < v.size()) {
    const int cnt = static_cast<int>(std::min<std::size_t>(v.size() - i, 1024));  // IOV_MAX
    const ssize_t w = ::writev(fd_, v.data() + i, cnt);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "write");
    }
    auto left = static_cast<std::size_t>(w);
    while (i < v.size() && left >= v[i].iov_len) left -= v[i++].iov_len;
    if (left > 0) {
      v[i].iov_base = static_cast<char*>(v[i].iov_base) + left;
      v[i].iov_len -= left;
    }
  }
}

void EntrySink::packet() {
  head_msg_.Clear();
  head_msg_.set_batch_id(static_cast<std::int64_t>(batch_id_));
  std::string& m0 = plain_;
  m0.clear();
  head_msg_.SerializeToString(&m0);
  packet_.Clear();
  packet_.set_version(1);
  packet_.set_type(canalpb::MESSAGES);
  const bool compress = o_.compression != CanalCompression::none;
  if (compress)
    packet_.set_compression(o_.compression == CanalCompression::zlib ? canalpb::ZLIB : canalpb::GZIP);
  packet_.SerializeToString(&p0_);  // without body: field 5 comes last
  std::size_t body = m0.size();
  for (const std::string& m : messages_.messages()) body += 1 + varint_size(m.size()) + m.size();
  if (compress) {
    deflate_body(m0, messages_, o_.compression == CanalCompression::gzip, zbody_);
    body = zbody_.size();
  }
  const std::size_t n = p0_.size() + (body == 0 ? 0 : 1 + varint_size(body) + body);
  if (n > 0x7fffffffu)
    throw std::length_error("Canal packet over 2 GiB: use a smaller --batch-size");
  char* p = buf_.extend(4);
  for (int shift = 24; shift >= 0; shift -= 8) *p++ = static_cast<char>((n >> shift) & 0xff);
  buf_.append(p0_);
  if (body != 0) {
    std::string& f = pre_;
    f.clear();
    canal_detail::append_varint(f, (5u << 3) | 2);
    canal_detail::append_varint(f, body);
    buf_.append(f);
  }
  if (compress) {
    buf_.append(zbody_);
    if (zbody_.capacity() > (4u << 20)) std::string().swap(zbody_);
  } else {
    buf_.append(m0);
    for (const std::string& m : messages_.messages()) {
      std::string& f = pre_;
      f.clear();
      canal_detail::append_varint(f, (2u << 3) | 2);
      canal_detail::append_varint(f, m.size());
      buf_.append(f);
      for (std::size_t at = 0; at < m.size(); at += kFlushAt) {
        buf_.append(std::string_view(m).substr(at, kFlushAt));
        if (buf_.size() >= kFlushAt && m.size() >= kFlushAt) write_out();
      }
    }
  }
  messages_.Clear();
}

void EntrySink::deflate_body(const std::string& m0, const canalpb::Messages& msgs, bool gzip, std::string& out) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 31 : 15, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::size_t plain = m0.size();
  for (const std::string& m : msgs.messages()) plain += 1 + varint_size(m.size()) + m.size();
  out.resize(plain < (1u << 20) ? deflateBound(&z, static_cast<uLong>(plain)) + 32 : (1u << 20));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  auto feed = [&](const char* d, std::size_t len, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(d));
    z.avail_in = 0;
    std::size_t left = len;
    for (;;) {
      if (z.avail_in == 0 && left > 0) {
        const std::size_t k = std::min<std::size_t>(left, 1u << 30);
        z.avail_in = static_cast<uInt>(k);
        left -= k;
      }
      if (z.avail_out == 0) {
        const std::size_t done = z.total_out;
        out.resize(out.size() * 2);
        z.next_out = reinterpret_cast<Bytef*>(out.data()) + done;
        z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - done, 1u << 30));
      }
      const int rc = deflate(&z, flush);
      if (rc == Z_STREAM_END) return;
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        deflateEnd(&z);
        throw std::runtime_error("deflate failed");
      }
      if (flush == Z_NO_FLUSH && z.avail_in == 0 && left == 0) return;
    }
  };
  std::string small(m0);
  for (const std::string& m : msgs.messages()) {
    canal_detail::append_varint(small, (2u << 3) | 2);
    canal_detail::append_varint(small, m.size());
    if (m.size() < (1u << 20)) {
      small.append(m);
      continue;
    }
    feed(small.data(), small.size(), Z_NO_FLUSH);
    small.clear();
    feed(m.data(), m.size(), Z_NO_FLUSH);
  }
  feed(small.data(), small.size(), Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
}

}  // namespace binlogctl::canal_detail
