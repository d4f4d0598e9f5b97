#include <binlogctl/chain.h>
#include <binlogctl/events.h>
#include <binlogctl/source.h>

#include <fmt/format.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace binlogctl {
namespace {

enum class Select { print, skip, stop, stop_all };

// Batches of events handed from the reading thread to the formatting one, with a fixed pool
// of batches (bounded memory, no allocation once warm).
class EventPipe {
 public:
  static constexpr std::size_t kBatch = 1024;
  static constexpr std::size_t kBatches = 8;
  EventPipe() {
    for (auto& b : pool_) {
      b.reserve(kBatch);
      free_.push_back(&b);
    }
  }
  std::vector<Event>* take_free() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !free_.empty() || abandoned_; });
    if (abandoned_) return nullptr;  // the formatter is gone: stop reading
    auto* b = free_.back();
    free_.pop_back();
    b->clear();
    return b;
  }
  void put_full(std::vector<Event>* b) {
    std::lock_guard<std::mutex> l(m_);
    if (!abandoned_) full_.push_back(b);
    cv_.notify_all();
  }
  std::vector<Event>* take_full() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !full_.empty() || done_; });
    if (full_.empty()) return nullptr;
    auto* b = full_.front();
    full_.pop_front();
    return b;
  }
  void put_free(std::vector<Event>* b) {
    std::lock_guard<std::mutex> l(m_);
    free_.push_back(b);
    cv_.notify_all();
  }
  void finish(bool stop_all) {
    std::lock_guard<std::mutex> l(m_);
    done_ = true;
    stop_all_ = stop_all;
    cv_.notify_all();
  }
  void abandon() {
    std::lock_guard<std::mutex> l(m_);
    abandoned_ = true;
    cv_.notify_all();
  }
  bool stopped_all() {
    std::lock_guard<std::mutex> l(m_);
    return stop_all_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::array<std::vector<Event>, kBatches> pool_;
  std::vector<std::vector<Event>*> free_;
  std::deque<std::vector<Event>*> full_;
  bool done_ = false, stop_all_ = false, abandoned_ = false;
};

}  // namespace

bool read_chain(const ChainOptions& o, ChainVisitor& v, DiagnosticSink& diag, std::FILE* errf) {
  InputList inputs = expand_inputs(o.inputs);
  bool readable = true;
  for (const std::string& e : inputs.errors) {
    fmt::print(errf, "binlogctl: {}\n", e);
    readable = false;
  }
  std::uint64_t total = 0;
  for (const InputFile& f : inputs.files) {
    std::error_code ec;
    if (f.path == "-" || f.missing) continue;
    const auto sz = std::filesystem::file_size(f.path, ec);
    if (!ec) total += sz;
  }
  Progress progress(o.progress, total);
  std::uint64_t done_before = 0;
  bool stop = false;
  for (std::size_t i = 0; i < inputs.files.size() && !stop; ++i) {
    const InputFile& f = inputs.files[i];
    const bool first = i == 0, last = i + 1 == inputs.files.size();
    if (f.missing) {
      fmt::print(errf, "binlogctl: {}: offset 0: file not found{}\n", f.path,
                 f.origin.empty() ? "" : fmt::format(" (named by {})", f.origin));
      readable = false;
      continue;
    }
    std::unique_ptr<Source> src;
    try {
      src = open_source(f.path);
    } catch (const std::system_error& e) {
      fmt::print(errf, "binlogctl: {}: offset 0: cannot open: {}\n", f.path, e.code().message());
      readable = false;
      continue;
    }
    v.begin_file(f);
    StreamOptions so;
    so.verify_checksums = o.verify_checksums;
    if (first && o.start_position) so.start_position = *o.start_position;
    // Which events the visitor sees, decided where events are read (so that nothing past a
    // stop point is even framed).
    auto select = [&](const Event& ev) -> Select {
      const bool fde = ev.type() == EventType::format_description;
      const bool keep_fde = fde && o.pass_fde_before_start;
      if (first && o.start_position && ev.pos < *o.start_position && !keep_fde) return Select::skip;
      if (last && o.stop_position && ev.pos >= *o.stop_position) return Select::stop;
      const auto ts = static_cast<std::int64_t>(ev.header.timestamp);
      if (o.stop_datetime && ts >= *o.stop_datetime && !fde) return Select::stop_all;
      if (o.start_datetime && ts < *o.start_datetime && !keep_fde) return Select::skip;
      return Select::print;
    };
    auto visit = [&](const Event& ev) {
      v.event(ev, f);
      if (o.expand_payloads && ev.type() == EventType::transaction_payload) {
        auto p = decode_transaction_payload(ev.body_reader(), *ev.fde);
        if (!p) {
          diag.report(Diagnostic{Check::undecodable_event, Severity::error, f.log_name, ev.pos,
                                 fmt::format("TRANSACTION_PAYLOAD does not decode: {} at offset {}", p.error().what,
                                             p.error().offset)});
          return;
        }
        PayloadExpander inner(ev, *p, f.log_name, diag);
        Event iev;
        while (inner.next(iev)) v.event(iev, f);
      }
    };
    const bool threaded = o.threads > 1 && src->size().has_value();
    so.release_behind = !threaded;
    EventStream stream(*src, f.log_name, diag, so);
    if (threaded) {
      // A second thread frames and checksums; this one visits. Mapped bytes stay valid, so
      // events travel as views; this thread releases the pages it is done with.
      EventPipe pipe;
      std::thread reader([&] {
        std::vector<Event>* batch = nullptr;
        Event ev;
        bool stop_all = false;
        while (stream.next(ev)) {
          const Select sel = select(ev);
          if (sel == Select::skip) continue;
          if (sel != Select::print) {
            stop_all = sel == Select::stop_all;
            break;
          }
          if (batch == nullptr && (batch = pipe.take_free()) == nullptr) break;
          batch->push_back(ev);
          if (batch->size() == EventPipe::kBatch) {
            pipe.put_full(batch);
            batch = nullptr;
          }
        }
        if (batch != nullptr) pipe.put_full(batch);
        pipe.finish(stop_all);
      });
      try {
        while (std::vector<Event>* batch = pipe.take_full()) {
          for (const Event& ev : *batch) {
            visit(ev);
            progress.update(done_before + ev.pos);
          }
          src->release(batch->back().pos);
          pipe.put_free(batch);
        }
      } catch (...) {
        pipe.abandon();
        reader.join();
        throw;
      }
      reader.join();
      stop = pipe.stopped_all();
    } else {
      Event ev;
      while (stream.next(ev)) {
        progress.update(done_before + src->raw_position());
        const Select sel = select(ev);
        if (sel == Select::skip) continue;
        if (sel != Select::print) {
          stop = sel == Select::stop_all;
          break;
        }
        visit(ev);
      }
    }
    done_before += src->raw_size();
    if (stream.aborted() && stream.events() == 0 && src->raw_size() == 0) readable = false;
  }
  progress.finish(done_before);
  return readable;
}

}  // namespace binlogctl
