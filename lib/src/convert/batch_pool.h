// Ordered batch rendering, shared by convert --format json (render_pool.h) and --format sql /
// --flashback (sql_convert.cpp): the converting thread fills a batch with jobs (copies of what
// they need), hands it to a pool of threads that render it, and rendered batches are written in
// the order they were handed on, one writer at a time, so that output and diagnostics come out
// as a one-thread run writes them. Memory is bounded: a fixed number of batches, each handed on
// once its size passes a set amount.
//
// `Handler` gives the rendering and the writing:
//   typename Handler::Batch   default-constructible; size() (bytes copied in), empty(), clear()
//   typename Handler::Worker  a rendering thread's own state, default-constructible
//   void render(Batch&, Worker&)  on any rendering thread, several at once: must not touch
//                                 shared state
//   void write(Batch&)            one batch at a time, in submission order; may throw (the
//                                 error is rethrown to the converting thread)
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/diagnostic.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace binlogctl::convert_detail {

// A range of a batch's copied bytes.
struct Span {
  std::size_t at = 0, len = 0;
};

// The bytes a batch's jobs copy in (so that the input behind them can be released while the
// batch waits), addressed by Span. Both batch kinds derive from it.
struct Arena {
  std::string arena;

  Span add(std::string_view bytes) {
    Span s{arena.size(), bytes.size()};
    arena.append(bytes);
    return s;
  }
  Span add(Bytes bytes) { return add(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())); }
  std::string_view view(Span s) const { return std::string_view(arena).substr(s.at, s.len); }
  Bytes bytes(Span s) const { return Bytes(reinterpret_cast<const std::uint8_t*>(arena.data()) + s.at, s.len); }
};

// The chain reader's sink for a converter with a pool: each finding goes out after the output
// and findings prepared before it (`Conv::sync()` drains the pool; its batches report their
// findings when written).
template <class Conv>
struct DrainFirst final : DiagnosticSink {
  Conv& conv;
  DiagnosticSink& diag;
  DrainFirst(Conv& c, DiagnosticSink& d) : conv(c), diag(d) {}
  void report(const Diagnostic& x) override {
    conv.sync();
    diag.report(x);
  }
  void name_file(const std::string& log_name, const std::string& path, std::uint64_t base) override { diag.name_file(log_name, path, base); }
};

template <class Handler>
class BatchPool {
 public:
  using Batch = typename Handler::Batch;
  using Worker = typename Handler::Worker;

  // `threads` 0: batches are rendered and written by the calling thread when submitted.
  BatchPool(unsigned threads, std::size_t batch_bytes, Handler& h) : batch_bytes_(batch_bytes), h_(h) {
    const std::size_t batches = threads == 0 ? 1 : 2 * static_cast<std::size_t>(threads) + 1;
    for (std::size_t i = 0; i < batches; ++i) {
      pool_.push_back(std::make_unique<Slot>());
      free_.push_back(pool_.back().get());
    }
    current_ = free_.back();
    free_.pop_back();
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { worker(); });
  }
  ~BatchPool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  bool threaded() const { return !threads_.empty(); }
  // The batch being filled (converting thread only).
  Batch& current() { return current_->batch; }
  // Hands the current batch on when it is full enough.
  void maybe_submit() {
    if (current_->batch.size() >= batch_bytes_) submit();
  }
  // Hands the current batch on and waits until every batch is rendered and written: after it,
  // the caller may write to the output or to stderr itself. Rethrows a write error.
  void sync() {
    submit();
    if (threads_.empty()) return;
    std::unique_lock<std::mutex> l(m_);
    free_cv_.wait(l, [&] { return (inflight_.empty() && !writing_) || failed_; });
    if (failed_) std::rethrow_exception(failed_);
  }

 private:
  struct Slot {
    Batch batch;
    bool done = false;
  };

  void submit() {
    if (current_->batch.empty()) return;
    if (threads_.empty()) {
      Batch& b = current_->batch;
      try {
        h_.render(b, inline_worker_);
        h_.write(b);
      } catch (...) {
        b.clear();
        throw;
      }
      b.clear();
      return;
    }
    std::unique_lock<std::mutex> l(m_);
    if (failed_) std::rethrow_exception(failed_);
    todo_.push_back(current_);
    inflight_.push_back(current_);
    current_ = nullptr;
    work_cv_.notify_one();
    free_cv_.wait(l, [&] { return !free_.empty() || failed_; });
    if (failed_) std::rethrow_exception(failed_);
    current_ = free_.back();
    free_.pop_back();
  }

  void worker() {
    Worker w;
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      work_cv_.wait(l, [&] { return stop_ || !todo_.empty(); });
      if (todo_.empty()) return;  // stopped, nothing left
      Slot* s = todo_.front();
      todo_.pop_front();
      l.unlock();
      std::exception_ptr err;
      try {
        h_.render(s->batch, w);
      } catch (...) {
        err = std::current_exception();
      }
      l.lock();
      if (err && !failed_) failed_ = err;
      s->done = true;
      write_ready(l);
    }
  }

  // Writes the rendered batches at the head of the submission order; one writer at a time.
  void write_ready(std::unique_lock<std::mutex>& l) {
    if (writing_) return;  // the writer will find this batch done when it gets to it
    writing_ = true;
    while (!inflight_.empty() && inflight_.front()->done) {
      Slot* s = inflight_.front();
      inflight_.pop_front();
      const bool failed = static_cast<bool>(failed_);
      l.unlock();
      std::exception_ptr err;
      if (!failed) {
        try {
          h_.write(s->batch);
        } catch (...) {
          err = std::current_exception();
        }
      }
      s->batch.clear();
      s->done = false;
      l.lock();
      if (err && !failed_) failed_ = err;
      free_.push_back(s);
      free_cv_.notify_all();
    }
    writing_ = false;
    free_cv_.notify_all();
  }

  std::size_t batch_bytes_;
  Handler& h_;
  std::vector<std::unique_ptr<Slot>> pool_;
  Slot* current_ = nullptr;
  Worker inline_worker_;  // threads == 0

  std::mutex m_;
  std::condition_variable work_cv_, free_cv_;
  std::vector<Slot*> free_;
  std::deque<Slot*> todo_;      // submitted, not yet taken by a worker
  std::deque<Slot*> inflight_;  // submitted, not yet written, in submission order
  bool writing_ = false;
  bool stop_ = false;
  std::exception_ptr failed_;
  std::vector<std::thread> threads_;
};

}  // namespace binlogctl::convert_detail
