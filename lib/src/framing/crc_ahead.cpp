#include "framing/crc_ahead.h"

#include <binlogctl/event_type.h>
#include <binlogctl/fde.h>

#include <algorithm>
#include <chrono>

namespace binlogctl {

namespace {
constexpr std::uint64_t kHeaderLen = 19;
constexpr std::uint64_t kMinEvent = kHeaderLen + 4;  // a header and a checksum
}  // namespace

CrcAhead::CrcAhead(Bytes file, std::uint64_t from, Source* pages) : file_(file), pages_(pages), ring_(kRing) {
  next_ = 0;
  reader_at_.store(from, std::memory_order_relaxed);
  worker_ = std::thread(&CrcAhead::run, this, from);
}

CrcAhead::~CrcAhead() {
  stop_.store(true, std::memory_order_relaxed);
  worker_.join();
}

void CrcAhead::publish() {
  consumed_.store(next_, std::memory_order_release);
  unpublished_ = 0;
}

std::optional<std::uint32_t> CrcAhead::take(std::uint64_t pos, std::uint64_t size) {
  std::optional<std::uint32_t> out;
  bool diverged = false;
  for (;;) {
    if (next_ == seen_produced_) {
      seen_produced_ = produced_.load(std::memory_order_acquire);
      if (next_ == seen_produced_) break;  // the worker is not there yet
    }
    const Sum& s = ring_[next_ & (kRing - 1)];
    if (s.gen != my_gen_ || s.pos < pos) {  // before a restart, or behind the reader
      ++next_;
      continue;
    }
    if (s.pos == pos && s.size == size) {
      out = s.crc;
      ++next_;
      ++taken_;
    } else {
      diverged = true;  // ahead, on a framing of its own: the reader's is the one that counts
    }
    break;
  }
  reader_at_.store(pos + size, std::memory_order_relaxed);
  if (diverged) {
    restart_at_.store(pos + size, std::memory_order_relaxed);
    gen_.store(++my_gen_, std::memory_order_release);
  }
  if (++unpublished_ >= kPublishEvery || diverged) publish();
  return out;
}

void CrcAhead::run(std::uint64_t pos) {
  const std::uint8_t* const base = file_.data();
  const std::uint64_t n = file_.size();
  std::uint32_t gen = 0;
  std::uint64_t produced = 0, consumed = 0;
  bool stuck = false;  // at the end, or at bytes it cannot frame: waits for the reader to move
  while (!stop_.load(std::memory_order_relaxed)) {
    // Once a batch: a restart asked for, where the reader is, room in the ring.
    const std::uint32_t g = gen_.load(std::memory_order_acquire);
    if (g != gen) {
      gen = g;
      pos = restart_at_.load(std::memory_order_relaxed);
      stuck = false;
    }
    const std::uint64_t reader = reader_at_.load(std::memory_order_relaxed);
    if (pos < reader) {  // behind: the reader's position is an event boundary
      pos = reader;
      stuck = false;
    }
    if (produced - consumed > kRing - kPublishEvery) consumed = consumed_.load(std::memory_order_acquire);
    if (stuck || pos - reader > kLead || produced - consumed > kRing - kPublishEvery) {
      produced_.store(produced, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    const std::uint64_t batch_from = pos;
    for (std::uint64_t k = 0; k < kPublishEvery && pos - reader <= kLead; ++k) {
      if (n - pos < kHeaderLen) {
        stuck = true;
        break;
      }
      const std::uint8_t* h = base + pos;
      // Another binlog file concatenated after this one: its magic number, then its FDE.
      if (h[0] == kBinlogMagic[0] && h[1] == kBinlogMagic[1] && h[2] == kBinlogMagic[2] &&
          h[3] == kBinlogMagic[3] && n - pos >= 4 + kHeaderLen &&
          h[8] == static_cast<std::uint8_t>(EventType::format_description)) {
        pos += 4;
        continue;
      }
      const std::uint64_t size = load_le32(h + 9);
      if (size < kMinEvent || size > n - pos) {
        stuck = true;
        break;
      }
      if (size < kPieceCrcAt) {
        const auto sz = static_cast<std::uint32_t>(size);
        ring_[produced & (kRing - 1)] = Sum{pos, sz, compute_event_crc(Bytes(h, sz)), gen};
        ++produced;
      }
      pos += size;
    }
    produced_.store(produced, std::memory_order_release);
    // Descheduled in the middle of the batch, the worker may have summed bytes the reader had
    // already passed and let go of: mapped again, they would stay mapped for good.
    const std::uint64_t now = reader_at_.load(std::memory_order_relaxed);
    if (pages_ != nullptr && now > batch_from) pages_->drop(batch_from, std::min(pos, now) - batch_from);
  }
}

}  // namespace binlogctl
