#pragma once
// The CRC32 of a mapped binlog's events, summed on a second thread ahead of the one that reads them
// (verify on one thread: issue 38, item 3).
//
// The worker frames the file on its own, by each event's size field, from where the reader is,
// and keeps the sums of the events ahead of it in a ring. The reader takes the sum of the event
// it is at when the worker has it (same position and size: the same bytes, so the same sum) and
// sums the event itself when not: at the start, behind a huge event, or where the worker
// framed differently (damage). Then the worker starts again after the reader's event. The reader's
// own framing and checks stay the authority; the worker only saves it the arithmetic, and a
// mismatch is always computed again by the reader before it is reported.
//
// Bounded: a ring of kRing sums, and the worker stays at most kLead bytes ahead of the reader (the
// pages it touches are faulted in on its thread, which the reader then finds mapped, and the
// reader's release() lets them go behind it as before; what the worker touched after the reader
// had passed it, the worker lets go itself). Events of kPieceCrcAt bytes or more are
// left to the reader, which sums them in pieces with the pages let go as it goes.
#include <binlogctl/bytes.h>
#include <binlogctl/source.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

namespace binlogctl {

class CrcAhead {
 public:
  // `file`: the whole input, readable from any thread while this lives (Source::mapping()).
  // `from`: where the reader is (an event boundary). `pages`, when given, is the source the
  // mapping is of: pages the worker touched behind the reader (it fell behind, descheduled in the
  // middle of a batch) are let go through its drop(), as the reader lets go of its own.
  CrcAhead(Bytes file, std::uint64_t from, Source* pages = nullptr);
  ~CrcAhead();
  CrcAhead(const CrcAhead&) = delete;
  CrcAhead& operator=(const CrcAhead&) = delete;

  // The sum compute_event_crc() gives for the event of `size` bytes at `pos`, when the worker has
  // it; nullopt when the reader must sum it itself. Positions must not go down between calls.
  std::optional<std::uint32_t> take(std::uint64_t pos, std::uint64_t size);

  // For the tests: sums handed over by take(), and sums the worker has published.
  std::uint64_t taken() const noexcept { return taken_; }
  std::uint64_t published() const noexcept { return produced_.load(std::memory_order_acquire); }

  static constexpr std::size_t kRing = 4096;  // a power of two
  static constexpr std::uint64_t kLead = 2u << 20;
  static constexpr std::uint64_t kPieceCrcAt = 8u << 20;  // event_stream.cpp sums these in pieces

 private:
  struct Sum {
    std::uint64_t pos;
    std::uint32_t size;
    std::uint32_t crc;
    std::uint32_t gen;  // the restart it belongs to
  };
  static constexpr std::uint64_t kPublishEvery = 64;  // ring indices are published in batches

  void run(std::uint64_t from);
  void publish();

  Bytes file_;
  Source* pages_;
  std::vector<Sum> ring_;
  // Written by the worker, read by the reader.
  alignas(64) std::atomic<std::uint64_t> produced_{0};
  // Written by the reader, read by the worker.
  alignas(64) std::atomic<std::uint64_t> consumed_{0};
  // Where the reader is (the end of the event it took last), stored at every take on a line of its
  // own and read by the worker once a batch: it never sums what the reader has passed (whose
  // pages the reader may have let go: summing them would map them again, for good).
  alignas(64) std::atomic<std::uint64_t> reader_at_{0};
  std::atomic<std::uint64_t> restart_at_{0};
  std::atomic<std::uint32_t> gen_{0};
  std::atomic<bool> stop_{false};
  // The reader's own.
  alignas(64) std::uint64_t next_ = 0;       // ring index of the next sum to look at
  std::uint64_t seen_produced_ = 0;
  std::uint64_t unpublished_ = 0;
  std::uint32_t my_gen_ = 0;
  std::uint64_t taken_ = 0;
  std::thread worker_;
};

}  // namespace binlogctl
