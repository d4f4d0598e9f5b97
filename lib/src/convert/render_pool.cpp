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
    JsonBuf& s;
    JsonBuf& buf() { return s; }
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

RenderPool::RenderPool(unsigned threads, std::size_t batch_bytes, LineOutput& out, DiagnosticSink& diag,
                       const RenderOptions& ro)
    : batch_bytes_(batch_bytes), out_(out), diag_(diag), ro_(ro) {
  const std::size_t batches = threads == 0 ? 1 : 2 * static_cast<std::size_t>(threads) + 1;
  for (std::size_t i = 0; i < batches; ++i) {
    pool_.push_back(std::make_unique<Batch>());
    free_.push_back(pool_.back().get());
  }
  current_ = free_.back();
  free_.pop_back();
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { worker(); });
}

RenderPool::~RenderPool() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void RenderPool::write_batch(Batch& b) {
  out_.write(b.out.view());
  for (const Diagnostic& d : b.diags) diag_.report(d);
}

void RenderPool::submit() {
  if (current_->jobs.empty()) return;
  if (threads_.empty()) {
    render_batch(*current_, inline_images_, ro_);
    Batch& b = *current_;
    try {
      write_batch(b);
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

void RenderPool::sync() {
  submit();
  if (threads_.empty()) return;
  std::unique_lock<std::mutex> l(m_);
  free_cv_.wait(l, [&] { return (inflight_.empty() && !writing_) || failed_; });
  if (failed_) std::rethrow_exception(failed_);
}

void RenderPool::worker() {
  RowImageDecoder images;
  std::unique_lock<std::mutex> l(m_);
  for (;;) {
    work_cv_.wait(l, [&] { return stop_ || !todo_.empty(); });
    if (todo_.empty()) return;  // stopped, nothing left
    Batch* b = todo_.front();
    todo_.pop_front();
    l.unlock();
    render_batch(*b, images, ro_);
    l.lock();
    b->done = true;
    write_ready(l);
  }
}

// Writes the rendered batches at the head of the submission order; one writer at a time.
void RenderPool::write_ready(std::unique_lock<std::mutex>& l) {
  if (writing_) return;  // the writer will find this batch done when it gets to it
  writing_ = true;
  while (!inflight_.empty() && inflight_.front()->done) {
    Batch* b = inflight_.front();
    inflight_.pop_front();
    const bool failed = static_cast<bool>(failed_);
    l.unlock();
    std::exception_ptr err;
    if (!failed) {
      try {
        write_batch(*b);
      } catch (...) {
        err = std::current_exception();
      }
    }
    b->clear();
    l.lock();
    if (err && !failed_) failed_ = err;
    free_.push_back(b);
    free_cv_.notify_all();
  }
  writing_ = false;
  free_cv_.notify_all();
}

}  // namespace binlogctl::convert_detail
