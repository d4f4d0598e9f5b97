// The one chain walker (chain.h): inputs -> sources -> EventStream -> selection -> payload
// expansion, pulled one event at a time.
#include <binlogctl/chain.h>
#include <binlogctl/source.h>

#include "events/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace binlogctl {
namespace {

enum class Select { take, skip, stop, stop_all };

// A batch of events, with the diagnostics the framing raised before each: `diags` holds, in the
// order raised, (i, d) for a diagnostic raised before events[i] was read (i == events.size():
// after the last one, at the end of the file or of the selection). The consumer reports them
// when it reaches events[i], so that the sink sees framing and consuming findings in the order
// of a one-thread run, and only ever from the consuming thread.
struct EventBatch {
  std::vector<Event> events;
  std::vector<std::pair<std::size_t, Diagnostic>> diags;
  void clear() {
    events.clear();
    diags.clear();
  }
};

// Batches of events handed from the framing thread to the consuming one, with a fixed pool of
// batches (bounded memory, no allocation once warm).
class EventPipe {
 public:
  static constexpr std::size_t kBatch = 1024;
  // A batch also ends once its events span this many bytes: the mapped pages between the
  // consumer and the framer are resident, so the bytes in flight (not the events) bound the
  // reader's memory. 8 x 1024 events of a few KiB (wide rows) kept 30+ MiB of the input mapped.
  static constexpr std::uint64_t kBatchBytes = 128 * 1024;
  static constexpr std::size_t kBatches = 8;
  EventPipe() {
    for (auto& b : pool_) {
      b.events.reserve(kBatch);
      free_.push_back(&b);
    }
  }
  // Each side sleeps until the other has handed over half the pool, not a single batch: a
  // wake-up per batch (a few microseconds of futex and scheduler work, an interrupt to the
  // other core under KVM) was about 16,000 context switches per GiB of small events, and woken
  // that often the two threads ran mostly one after the other on one core. No deadlock: a side
  // waits holding no batch, so when both wait, free + full is the whole pool and one of them
  // holds at least half.
  static constexpr std::size_t kWake = kBatches / 2;
  EventBatch* take_free() {
    std::unique_lock<std::mutex> l(m_);
    if (free_.empty() && !abandoned_) {
      framer_waits_ = true;
      free_cv_.wait(l, [&] { return free_.size() >= kWake || abandoned_; });
      framer_waits_ = false;
    }
    if (abandoned_) return nullptr;  // the consumer is gone: stop reading
    auto* b = free_.back();
    free_.pop_back();
    b->clear();
    return b;
  }
  void put_full(EventBatch* b) {
    std::lock_guard<std::mutex> l(m_);
    if (!abandoned_) full_.push_back(b);
    if (consumer_waits_ && full_.size() >= full_wake_) full_cv_.notify_one();
  }
  // `waited`: set when the consumer had to wait for the framer (it is the faster of the two).
  EventBatch* take_full(bool& waited) {
    std::unique_lock<std::mutex> l(m_);
    waited = full_.empty() && !done_;
    if (waited) {
      consumer_waits_ = true;
      full_cv_.wait(l, [&] { return full_.size() >= full_wake_ || done_; });
      consumer_waits_ = false;
    }
    full_wake_ = kWake;
    if (full_.empty()) return nullptr;
    auto* b = full_.front();
    full_.pop_front();
    return b;
  }
  void put_free(EventBatch* b) {
    std::lock_guard<std::mutex> l(m_);
    free_.push_back(b);
    if (framer_waits_ && free_.size() >= kWake) free_cv_.notify_one();
  }
  void finish(bool stop_all) {
    std::lock_guard<std::mutex> l(m_);
    done_ = true;
    stop_all_ = stop_all;
    full_cv_.notify_one();
  }
  void abandon() {
    std::lock_guard<std::mutex> l(m_);
    abandoned_ = true;
    free_cv_.notify_one();
  }
  bool stopped_all() {
    std::lock_guard<std::mutex> l(m_);
    return stop_all_;
  }

 private:
  std::mutex m_;
  std::condition_variable full_cv_, free_cv_;
  std::array<EventBatch, kBatches> pool_;
  std::vector<EventBatch*> free_;
  std::deque<EventBatch*> full_;
  bool done_ = false, stop_all_ = false, abandoned_ = false;
  bool framer_waits_ = false, consumer_waits_ = false;
  // The consumer's first batch wakes it: at the start there is no work of its own to overlap
  // with the framer's, and waiting for half the pool only delays the first event.
  std::size_t full_wake_ = 1;
};

// The part of a source from `base` on, at offsets from 0: the second and later files of a
// concatenated input, so that their positions are their own.
class OffsetSource final : public Source {
 public:
  OffsetSource(Source& s, std::uint64_t base) : s_(s), base_(base) {}
  Bytes window(std::uint64_t off, std::size_t n) override { return s_.window(base_ + off, n); }
  void release(std::uint64_t off) override { s_.release(base_ + off); }
  void prefetch(std::uint64_t off, std::size_t n) override { s_.prefetch(base_ + off, n); }
  void drop(std::uint64_t off, std::size_t n) override { s_.drop(base_ + off, n); }
  std::optional<std::uint64_t> gap_at(std::uint64_t off) override {
    auto to = s_.gap_at(base_ + off);
    if (!to) return std::nullopt;
    return *to - base_;
  }
  std::optional<std::uint64_t> size() const override {
    auto n = s_.size();
    if (!n) return std::nullopt;
    return *n > base_ ? *n - base_ : 0;
  }
  std::uint64_t raw_position() const override { return s_.raw_position(); }
  std::uint64_t raw_size() const override { return s_.raw_size(); }

 private:
  Source& s_;
  std::uint64_t base_;
};

}  // namespace

struct ChainReader::Impl {
  const ChainOptions& o;
  ChainHooks& hooks;
  DiagnosticSink& diag;
  std::unique_ptr<InputSet> owned_inputs;
  InputSet* inputs = nullptr;
  std::optional<Progress> progress;
  std::uint64_t done_before = 0;
  bool started = false, finished = false, stop_all = false;
  std::size_t next_file = 0;  // index of the file to open next
  std::size_t cur_file = 0;   // index of the file being read

  // The file being read: the input's source, or the part of it holding one file of several
  // concatenated (`segment`, at `seg_base`), whose InputFile is made up as it is met.
  std::unique_ptr<Source> src;
  std::unique_ptr<Source> segment;
  std::uint64_t seg_base = 0;
  std::deque<InputFile> segments;
  const InputFile* cur_input = nullptr;
  std::string rotate_name;  // the next file named by the last ROTATE read
  bool draining = false;    // reading a segment the hooks refused, for where the next one starts
  std::unique_ptr<EventStream> stream;
  bool first = false, last = false;
  // Whether select() can say anything but `take` for the current file (a start/stop position
  // or time applies to it), whether server ids filter, whether a progress bar is drawn: set
  // once per file, so that the path every event takes tests one flag for each.
  bool selecting = false;
  bool server_filter = false;
  bool progress_on = false;
  // Threaded framing of a mapped file.
  std::unique_ptr<EventPipe> pipe;
  std::thread framer;
  EventBatch* batch = nullptr;
  // Where the framing thread's last full batch ends, and how far the consumer has had the
  // source map the pages after it (Source::prefetch).
  std::atomic<std::uint64_t> framed_to{0};
  std::uint64_t prefetched = 0;
  std::size_t since_wait = 0;  // batches taken since the consumer last waited for one
  std::size_t in_batch = 0;
  std::size_t in_diags = 0;  // batch->diags reported so far
  // The payload whose inner events come next.
  bool expand_pending = false;
  Event payload_ev;
  std::optional<TransactionPayloadEvent> payload_body;
  std::unique_ptr<PayloadExpander> expander;

  // What the framing of the current file reports, with the file's path as the user gave it
  // (Diagnostic::path) for messages; log_name stays for records.
  // With a framing thread (`deferred`), findings are kept in `pending` (by that thread only)
  // and travel with the batch of the event read next (EventBatch::diags).
  struct PathSink final : DiagnosticSink {
    DiagnosticSink& inner;
    std::string path;  // set before the file's stream exists, read by its framing only
    std::uint64_t base = 0;  // where the file starts in `path` (Diagnostic::base)
    bool deferred = false;
    std::vector<Diagnostic> pending;
    explicit PathSink(DiagnosticSink& d) : inner(d) {}
    void report(const Diagnostic& d) override {
      if (deferred) {
        pending.push_back(d);
        if (pending.back().path.empty()) {
          pending.back().path = path;
          pending.back().base = base;
        }
        return;
      }
      if (!d.path.empty() || path.empty()) return inner.report(d);
      Diagnostic c = d;
      c.path = path;
      c.base = base;
      inner.report(c);
    }
    // The pending findings into `b`, as raised before its next event.
    void hand_over(EventBatch& b) {
      for (Diagnostic& d : pending) b.diags.emplace_back(b.events.size(), std::move(d));
      pending.clear();
    }
  };
  PathSink path_sink{diag};

  Impl(const ChainOptions& opts, ChainHooks& h, DiagnosticSink& d) : o(opts), hooks(h), diag(d) {}

  ~Impl() { stop_framer(); }

  void stop_framer() {
    if (!framer.joinable()) return;
    pipe->abandon();
    framer.join();
  }

  Select select(const Event& ev) const {
    if (!selecting) return Select::take;
    const bool fde = ev.type() == EventType::format_description;
    const bool keep_fde = fde && o.pass_fde_before_start;
    if (first && o.start_position && ev.pos < *o.start_position && !keep_fde) return Select::skip;
    if (last && o.stop_position && ev.pos >= *o.stop_position) return Select::stop;
    const auto ts = static_cast<std::int64_t>(ev.header.timestamp);
    if (o.stop_datetime && ts >= *o.stop_datetime && !fde) return Select::stop_all;
    if (o.start_datetime && ts < *o.start_datetime && !keep_fde) return Select::skip;
    return Select::take;
  }

  // --server-id / --exclude-server-ids (ChainOptions): the file's own events always pass.
  bool server_selected(const Event& ev) const {
    if (!server_filter) return true;
    if (is_file_event(ev.type())) return true;
    const std::uint32_t id = ev.header.server_id;
    if (o.server_id && id != *o.server_id) return false;
    for (const std::uint32_t x : o.exclude_server_ids)
      if (id == x) return false;
    return true;
  }

  void start() {
    started = true;
    if (o.input_set != nullptr) {
      inputs = o.input_set;
    } else {
      owned_inputs = path_inputs(o.inputs);
      inputs = owned_inputs.get();
    }
    for (const std::string& e : inputs->list().errors) hooks.input_error(e);
    for (const std::string& w : inputs->list().warnings) hooks.input_warning(w);
    progress.emplace(o.progress, inputs->total_size());
    progress_on = progress->enabled();
    server_filter = o.server_id || !o.exclude_server_ids.empty();
  }

  // Opens the next readable file; false when the chain is done.
  bool open_next() {
    const auto& files = inputs->list().files;
    while (!stop_all && next_file < files.size()) {
      const std::size_t i = next_file++;
      const InputFile& f = files[i];
      if (f.missing) {
        hooks.unavailable(f, nullptr);
        continue;
      }
      try {
        src = inputs->open(f);
      } catch (const std::system_error& e) {
        hooks.unavailable(f, &e);
        continue;
      }
      name_file(f, 0);
      if (!hooks.begin_file(f)) {
        src.reset();
        continue;
      }
      cur_file = i;
      cur_input = &f;
      progress->set_file(i, files.size());
      first = i == 0;
      last = i + 1 == files.size();
      segment.reset();
      seg_base = 0;
      rotate_name.clear();
      draining = false;
      open_stream(*src, f, first && o.start_position ? *o.start_position : 0);
      return true;
    }
    return false;
  }

  // Messages about the file `f` (which starts at `base` in its input) name it as the user gave
  // it: said before the hooks hear of the file, whose findings about it (given twice, a gap
  // before it) then name it too. A later file of concatenated input is named by the input and
  // the offset in it where the input is a file of known size (offsets in it mean something);
  // in a stream (standard input, an archive, a server's) by its own name and positions.
  void name_file(const InputFile& f, std::uint64_t base) {
    const bool in_place = base == 0 || (src && src->size().has_value());
    path_sink.path = in_place ? message_path(f) : std::string();
    path_sink.base = path_sink.path.empty() ? 0 : base;
    diag.name_file(f.log_name, path_sink.path, path_sink.base);
  }

  void open_stream(Source& s, const InputFile& f, std::uint64_t start_position) {
    StreamOptions so;
    so.verify_checksums = o.verify_checksums;
    so.start_position = start_position;
    const bool threaded = o.threads > 1 && s.size().has_value();
    so.release_behind = !threaded;
    selecting = (first && o.start_position) || (last && o.stop_position) || o.stop_datetime || o.start_datetime;
    stream = std::make_unique<EventStream>(s, f.log_name, path_sink, so);
    if (threaded) start_framer();
  }

  // After a file that ended where another begins in the same input: that one, named as the
  // last ROTATE named it (else "<input>#<k>"). Selection by position applies to the input's
  // first file only (`first`, `last` are cleared: a later file's positions are its own).
  bool open_concatenated(std::uint64_t at) {
    seg_base += at;
    const InputFile& outer = inputs->list().files[cur_file];
    std::string name = rotate_name;
    bool after_unclosed = false;
    if (auto begun = src->file_begin_at(seg_base)) {  // a server's stream names the file itself
      name = std::move(begun->name);
      after_unclosed = begun->after_unclosed;
    }
    if (name.empty() || name == cur_input->log_name)
      name = fmt::format("{}#{}", outer.log_name, segments.size() + 2);
    segments.push_back(InputFile{outer.path, std::move(name), false, outer.path});
    segments.back().after_unclosed = after_unclosed;
    cur_input = &segments.back();
    first = last = false;
    rotate_name.clear();
    stream.reset();
    segment = std::make_unique<OffsetSource>(*src, seg_base);
    name_file(*cur_input, seg_base);
    draining = !hooks.begin_file(*cur_input);
    open_stream(*segment, *cur_input, 0);
    return true;
  }

  Source& cur_src() { return segment ? *segment : *src; }

  // A second thread frames and checksums; this one consumes. Mapped bytes stay valid, so
  // events travel as views; this thread releases the pages it is done with.
  void start_framer() {
    pipe = std::make_unique<EventPipe>();
    batch = nullptr;
    in_batch = 0;
    in_diags = 0;
    framed_to.store(0, std::memory_order_relaxed);
    prefetched = 0;
    since_wait = 0;
    path_sink.deferred = true;
    framer = std::thread([this] {
      EventBatch* b = nullptr;
      std::uint64_t b_bytes = 0;
      Event ev;
      bool all = false;
      while (stream->next(ev)) {
        const Select sel = select(ev);
        if (sel == Select::skip) continue;
        if (sel != Select::take) {
          all = sel == Select::stop_all;
          break;
        }
        if (b == nullptr) {
          if ((b = pipe->take_free()) == nullptr) break;
          b_bytes = 0;
        }
        path_sink.hand_over(*b);
        b->events.push_back(ev);
        b_bytes += ev.header.event_size;
        if (b->events.size() == EventPipe::kBatch || b_bytes >= EventPipe::kBatchBytes) {
          framed_to.store(stream->offset(), std::memory_order_relaxed);
          pipe->put_full(b);
          b = nullptr;
        }
      }
      if (!path_sink.pending.empty() && b == nullptr) b = pipe->take_free();
      if (b != nullptr) {
        path_sink.hand_over(*b);  // what the end of the file raised, after its last event
        pipe->put_full(b);
      }
      path_sink.pending.clear();  // the consumer left: nobody to report to
      pipe->finish(all);
    });
  }

  // Ends the file being read; true when the same input goes on with another file.
  bool close_file() {
    if (framer.joinable()) {
      framer.join();
      path_sink.deferred = false;
      if (pipe->stopped_all()) stop_all = true;
      pipe.reset();
    }
    if (!draining) hooks.end_file(*cur_input, *stream);
    expander.reset();
    if (const auto at = stream->next_file_at(); at && !stop_all) return open_concatenated(*at);
    // Sources of unknown size (standard input, archives) count what was read.
    done_before += std::max<std::uint64_t>(src->raw_size(), src->raw_position());
    stream.reset();
    segment.reset();
    src.reset();
    return false;
  }

  // The framing's findings raised before the batch's next event (all that are left once every
  // event is out).
  void report_batch_diags() {
    auto& d = batch->diags;
    while (in_diags < d.size() && d[in_diags].first <= in_batch) diag.report(d[in_diags++].second);
  }

  void note_rotate(const Event& ev) {
    if (ev.type() != EventType::rotate || ev.is_inner() || ev.header.timestamp == 0) return;
    if (auto r = decode_rotate(ev.body_reader(), *ev.fde)) rotate_name.assign(r->next_file);
  }

  // While this thread is the faster one (it waited for a batch lately: its work per event takes
  // less time than framing and CRC32), it maps the pages the framing thread reads next, which
  // moves that thread's page faults (about a fifth of its time on a file of small events) here.
  // Only a threaded read gets here (ChainOptions::threads > 1: convert, stats, dump, schema);
  // verify, for which this was written, reads on one thread now (run_verify.cpp). A slower
  // consumer (dump's formatting) leaves the faults where they were. Ahead of
  // where the framer's last batch ended by kPrefetchAhead, a quarter of a MiB or more at a
  // time; pages mapped ahead stay resident until passed, so this bounds what it adds to the
  // resident set.
  static constexpr std::uint64_t kPrefetchAhead = 512 * 1024;
  static constexpr std::uint64_t kPrefetchStep = 256 * 1024;
  void prefetch_ahead() {
    const std::uint64_t at = framed_to.load(std::memory_order_relaxed);
    prefetched = std::max(prefetched, at);
    if (prefetched + kPrefetchStep > at + kPrefetchAhead) return;
    cur_src().prefetch(prefetched, static_cast<std::size_t>(at + kPrefetchAhead - prefetched));
    prefetched = at + kPrefetchAhead;
  }

  static constexpr std::size_t kPrefetchEvents = 8;

  // The batch's next event (there is one), with the progress bar told.
  [[gnu::always_inline]] void take_from_batch(Event& ev) {
    const auto& evs = batch->events;
    // The framing thread read these bytes last, on the other core: what the consumer reads of
    // an event comes from that core's cache, a few hundred cycles away. Asked for a few events
    // ahead, it is on this core when needed.
    if (in_batch + kPrefetchEvents < evs.size()) __builtin_prefetch(evs[in_batch + kPrefetchEvents].body.data());
    ev = evs[in_batch++];
    if (progress_on) progress->update(done_before + seg_base + ev.pos);
  }

  // The next top-level event of the open file; false at its end.
  bool next_outer(Event& ev) {
    if (pipe) {
      for (;;) {
        if (batch != nullptr) {
          report_batch_diags();
          if (in_batch < batch->events.size()) {
            take_from_batch(ev);
            if (ev.type() == EventType::rotate) note_rotate(ev);
            return true;
          }
          if (!batch->events.empty()) cur_src().release(batch->events.back().pos);
          pipe->put_free(batch);
          batch = nullptr;
        }
        bool waited = false;
        batch = pipe->take_full(waited);
        if (batch == nullptr) return false;
        since_wait = waited ? 0 : since_wait + 1;
        if (since_wait < EventPipe::kBatches) prefetch_ahead();
        in_batch = 0;
        in_diags = 0;
      }
    }
    while (stream->next(ev)) {
      if (progress_on) progress->update(done_before + src->raw_position());
      if (ev.type() == EventType::rotate) note_rotate(ev);
      const Select sel = select(ev);
      if (sel == Select::skip) continue;
      if (sel != Select::take) {
        if (sel == Select::stop_all) stop_all = true;
        return false;
      }
      return true;
    }
    return false;
  }

  // A payload to expand (ChainOptions::expand_payloads): its inner events come next.
  void note_payload(const Event& ev) {
    if (o.expand_payloads && ev.type() == EventType::transaction_payload &&
        (o.expand_damaged_payloads || ev.checksum_ok)) {
      payload_ev = ev;
      expand_pending = true;
    }
  }

  // The path of most events: no server id filter, no payload being expanded, and either a file
  // read on this thread with no position or time selection, or a framed batch with no finding
  // due before its next event. It does what next_slow() does for such an event, without that
  // function's frame (about 50 instructions an event, a twentieth of verify's time).
  bool next(Event& ev) {
    if (server_filter || draining || expand_pending || expander) return next_slow(ev);
    if (pipe) {
      if (batch == nullptr) return next_slow(ev);
      const auto& evs = batch->events;
      const auto& d = batch->diags;
      if (in_batch >= evs.size() || (in_diags < d.size() && d[in_diags].first <= in_batch)) return next_slow(ev);
      take_from_batch(ev);
    } else {
      if (!stream || selecting) return next_slow(ev);
      if (!stream->next(ev)) {
        (void)close_file();
        return next_slow(ev);
      }
      if (progress_on) progress->update(done_before + src->raw_position());
    }
    if (ev.type() == EventType::rotate) note_rotate(ev);
    note_payload(ev);
    return true;
  }

  bool next_slow(Event& ev) {
    if (!started) start();
    for (;;) {
      if (finished) return false;
      if (expand_pending) {
        expand_pending = false;
        auto p = decode_transaction_payload(payload_ev.body_reader(), *payload_ev.fde);
        if (!p) {
          hooks.payload_undecodable(payload_ev, *cur_input, p.error());
        } else {
          payload_body = *p;
          expander = std::make_unique<PayloadExpander>(payload_ev, *payload_body, stream->log_name(), diag);
        }
      }
      if (expander) {
        if (expander->next(ev)) {
          if (payload_ev.damage) ev.damage = payload_ev.damage;  // the contents of damaged bytes
          return true;
        }
        expander.reset();
      }
      if (!stream) {
        if (!open_next()) {
          finished = true;
          progress->finish(done_before);
          return false;
        }
      }
      if (next_outer(ev)) {
        if (draining || !server_selected(ev)) continue;
        note_payload(ev);
        return true;
      }
      (void)close_file();
    }
  }
};

void ChainHooks::input_warning(const std::string& w) { fmt::print(stderr, "binlogctl: warning: {}\n", w); }

ChainReader::ChainReader(const ChainOptions& o, ChainHooks& hooks, DiagnosticSink& diag)
    : impl_(std::make_unique<Impl>(o, hooks, diag)) {}

ChainReader::~ChainReader() = default;

bool ChainReader::next(Event& ev) { return impl_->next(ev); }

const InputFile& ChainReader::file() const { return *impl_->cur_input; }

std::size_t ChainReader::file_index() const { return impl_->cur_file; }

// ---- read_chain: the visitor form, with read problems printed on errf ----

namespace {

class PrintingHooks final : public ChainHooks {
 public:
  PrintingHooks(ChainVisitor& v, DiagnosticSink& diag, std::FILE* errf) : v_(v), diag_(diag), errf_(errf) {}
  void input_error(const std::string& e) override {
    fmt::print(errf_, "binlogctl: {}\n", e);
    readable = false;
  }
  void unavailable(const InputFile& f, const std::system_error* e) override {
    fmt::print(errf_, "binlogctl: {}\n", unavailable_message(f, e));
    readable = false;
  }
  bool begin_file(const InputFile& f) override {
    v_.begin_file(f);
    return true;
  }
  void payload_undecodable(const Event& ev, const InputFile& f, const DecodeError& e) override {
    diag_.report(Diagnostic{Check::undecodable_event, Severity::error, f.log_name, ev.pos,
                            fmt::format("TRANSACTION_PAYLOAD does not decode: {} at offset {}", e.what, e.offset)});
  }
  bool readable = true;

 private:
  ChainVisitor& v_;
  DiagnosticSink& diag_;
  std::FILE* errf_;
};

}  // namespace

bool read_chain(const ChainOptions& o, ChainVisitor& v, DiagnosticSink& diag, std::FILE* errf) {
  PrintingHooks hooks(v, diag, errf);
  ChainReader r(o, hooks, diag);
  Event ev;
  while (r.next(ev)) v.event(ev, r.file());
  return hooks.readable;
}

}  // namespace binlogctl
