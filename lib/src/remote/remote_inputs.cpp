// The input seam over a live server (remote.h: remote_inputs): each server binlog is one input
// file whose bytes are what the file holds, streamed by a BinlogFeed.
#include <binlogctl/remote.h>
#include <binlogctl/event_type.h>
#include <binlogctl/source.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>

namespace binlogctl {
namespace {

constexpr std::uint8_t kMagic[4] = {0xfe, 0x62, 0x69, 0x6e};

// One server file as a byte stream: the magic number, then its events. With `follow` the stream
// goes on into the files after it (magic number, events, ...), as concatenated files do.
class RemoteFileStream final : public ByteStream {
 public:
  RemoteFileStream(const RemoteOptions& o, std::unique_ptr<ReplicationClient> client, std::string file, bool follow)
      : opts_(o), client_(std::move(client)), file_(std::move(file)), follow_(follow) {}

  // A connection that fails is not damage in the data: RemoteError goes up to the caller (exit
  // status 2, the server and the reason named), after the bytes already received are handed out.
  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError&) override {
    if (failure_) {
      const RemoteError e = *failure_;
      failure_.reset();
      throw e;
    }
    std::size_t n = 0;
    try {
      while (n < cap && !done_) {
        if (pending_.empty() && !refill()) break;
        if (gap_next_ > 0) {  // the bytes before it go out first; take_gap() then tells of it
          gap_ready_ = gap_next_;
          gap_next_ = 0;
          break;
        }
        const std::size_t k = std::min(cap - n, pending_.size());
        std::memcpy(dst + n, pending_.data(), k);
        pending_ = pending_.subspan(k);
        n += k;
        pos_ += k;
        // Hand out what we have rather than wait for the server's next event.
        if (pending_.empty() && n > 0) break;
      }
    } catch (const RemoteError& e) {
      done_ = true;
      if (n == 0) throw;
      failure_ = e;
    }
    return n;
  }
  std::uint64_t raw_position() const override { return pos_; }
  std::uint64_t take_gap() override {
    const std::uint64_t g = gap_ready_;
    gap_ready_ = 0;
    gaps_ += g;
    return g;
  }
  std::optional<FileBegin> file_begin_at(std::uint64_t off) override {
    while (!begun_.empty() && begun_.front().first < off) begun_.pop_front();
    if (begun_.empty() || begun_.front().first != off) return std::nullopt;
    FileBegin b = std::move(begun_.front().second);
    begun_.pop_front();
    return b;
  }
  // `flag` is set when the server goes on from this file to `next` without a closing event in
  // it (the next input of the list: InputFile::after_unclosed).
  void on_unclosed(std::string next, bool* flag) {
    unclosed_next_ = std::move(next);
    unclosed_flag_ = flag;
  }
  // The file the stream begins with (known once primed): the one the server chose for a GTID
  // start.
  const std::string& first_file() const noexcept { return first_file_; }

  // Under stop_never a lost connection is made again (with fetch's backoff, reported on
  // opts_.notices) and the dump goes on by position right after the last event handed out, so
  // the reader sees one unbroken stream. Not for errors that reconnecting cannot mend (a file
  // the server cannot send, a refused request) or before anything was read.
  bool reconnect(const RemoteError& lost) {
    if (!opts_.stop_never || files_ == 0 || lost.permanent() || lost.server_errno() == 0 ||
        lost.server_errno() == kErrReadingBinlog)
      return false;
    unsigned backoff = 1;
    note(fmt::format("binlogctl: {}; reconnecting in {} s", lost.what(), backoff));
    for (;;) {
      reconnect_wait(backoff, nullptr);  // cut short by request_remote_stop()
      if (remote_stop_requested()) return false;
      try {
        feed_.reset();
        client_.reset();
        RemoteOptions o = opts_;  // by position from here: no GTID start, nothing left out
        o.start_gtid.clear();
        o.mysql_exclude = GtidSet{};
        client_ = std::make_unique<ReplicationClient>(o);
        feed_ = std::make_unique<BinlogFeed>(*client_, cur_file_, next_pos_, false);
        note(fmt::format("binlogctl: server {}: reconnected, going on from {} at {}", client_->label(), cur_file_, next_pos_));
        return true;
      } catch (const RemoteError& e) {
        if (remote_stop_requested()) return false;  // a connect cut short by the signal
        if (e.permanent() || e.server_errno() == 0 || e.server_errno() == kErrReadingBinlog) throw;
        note(fmt::format("binlogctl: {}; reconnecting in {} s", e.what(), backoff));
      }
    }
  }
  void note(const std::string& line) const {
    if (opts_.notices == nullptr) return;
    std::fprintf(opts_.notices, "%s\n", line.c_str());
    std::fflush(opts_.notices);
  }

  // Starts the dump and reads up to the file's first bytes, so that a server that refuses (no
  // REPLICATION SLAVE privilege, a purged file) throws RemoteError here rather than looking like
  // an empty file later.
  void prime() {
    if (!refill()) done_ = true;
  }

 private:
  // The next bytes to hand out; false at the end of the file (or of the followed chain).
  bool refill() {
    if (remote_stop_requested() && files_ > 0) {
      done_ = true;
      return false;
    }
    if (!client_) client_ = std::make_unique<ReplicationClient>(opts_);
    if (!feed_) feed_ = std::make_unique<BinlogFeed>(*client_, file_, 4, !opts_.stop_never, client_->gtid_dump());
    if (!held_.empty()) {
      pending_ = held_;
      gap_next_ = held_gap_;
      held_ = {};
      return true;
    }
    for (;;) {
      BinlogFeed::Item* next = nullptr;
      try {
        next = &feed_->next();
      } catch (const RemoteError& e) {
        if (remote_stop_requested()) {  // SIGINT/SIGTERM: the end of the input, after the last whole event
          done_ = true;
          return false;
        }
        if (!reconnect(e)) {
          if (!remote_stop_requested()) throw;
          done_ = true;
          return false;
        }
        continue;
      }
      BinlogFeed::Item& it = *next;
      switch (it.kind) {
        case BinlogFeed::Kind::end:
          done_ = true;
          return false;
        case BinlogFeed::Kind::file: {
          if (files_ > 0 && it.file == cur_file_ && it.pos == next_pos_) continue;  // reconnected where it was
          // The server goes on from the end of a file that has no ROTATE or STOP: it never
          // closed it (a crash).
          const bool unclosed = files_ > 0 && !closed_;
          cur_file_ = it.file;
          next_pos_ = it.pos;
          closed_ = false;
          if (files_ > 0 && !follow_) {  // the server moved on to the next file: this one is complete
            if (unclosed && unclosed_flag_ != nullptr && it.file == unclosed_next_) *unclosed_flag_ = true;
            done_ = true;
            return false;
          }
          if (files_++ > 0) {
            if (begun_.size() >= kMaxBegun) begun_.pop_front();
            begun_.emplace_back(pos_ + gaps_, FileBegin{it.file, unclosed});
          } else {
            first_file_ = it.file;
          }
          pending_ = Bytes(kMagic, 4);
          return true;
        }
        case BinlogFeed::Kind::event:
          cur_file_ = it.file;
          next_pos_ = it.pos + it.raw.size();
          closed_ = it.raw.size() > 4 && (it.raw[4] == static_cast<std::uint8_t>(EventType::rotate) ||
                                          it.raw[4] == static_cast<std::uint8_t>(EventType::stop));
          if (files_ == 0) {  // an event before any file was announced: the server skipped the ROTATE
            ++files_;
            first_file_ = it.file;
            held_ = it.raw;
            held_gap_ = it.gap;
            pending_ = Bytes(kMagic, 4);
            return true;
          }
          pending_ = it.raw;
          gap_next_ = it.gap;  // the server left out the transactions before it (GTID dumps)
          return true;
        case BinlogFeed::Kind::idle:  // not asked for here
          continue;
      }
    }
  }

  const RemoteOptions& opts_;
  std::unique_ptr<ReplicationClient> client_;
  std::unique_ptr<BinlogFeed> feed_;
  std::string file_;
  bool follow_;
  bool done_ = false;
  std::optional<RemoteError> failure_;  // met after bytes that were handed out first
  unsigned files_ = 0;
  Bytes pending_;
  Bytes held_;
  std::uint64_t held_gap_ = 0;
  std::uint64_t gap_next_ = 0;   // a gap before pending_
  std::uint64_t gap_ready_ = 0;  // a gap after the bytes read() returned last
  std::string first_file_;
  std::string cur_file_;        // the file of the last item read, and the position after it
  std::uint64_t next_pos_ = 0;
  std::uint64_t pos_ = 0;
  std::uint64_t gaps_ = 0;  // gap bytes reported so far: pos_ + gaps_ is the input offset
  bool closed_ = false;     // the last event read is a ROTATE or STOP
  // The files begun in the stream after the first, at their input offsets (the reader asks for
  // each as it reaches it; a few at most are waiting).
  static constexpr std::size_t kMaxBegun = 64;
  std::deque<std::pair<std::uint64_t, FileBegin>> begun_;
  std::string unclosed_next_;
  bool* unclosed_flag_ = nullptr;
};

class RemoteInputs final : public InputSet {
 public:
  RemoteInputs(const RemoteOptions& o, const std::vector<std::string>& names) : opts_(o) {
    spare_ = std::make_unique<ReplicationClient>(opts_);
    const std::string label = spare_->label();  // a copy: the connection may move on
    const auto logs = spare_->binary_logs();
    if (!opts_.start_gtid.empty()) {
      // The server picks the file: the dump starts now, and its first file names the input. It
      // goes on through the files after it (up to the current end, or forever with
      // --stop-never), as concatenated files do.
      if (!names.empty())
        throw RemoteError(fmt::format("server {}: --start-gtid picks the first file itself: name no binlog", label));
      gtid_stream_ = std::make_unique<RemoteFileStream>(opts_, std::move(spare_), std::string(), true);
      gtid_stream_->prime();
      const std::string first = gtid_stream_->first_file().empty() ? std::string("(none)") : gtid_stream_->first_file();
      list_.files.push_back(InputFile{first, first, false, label});
      return;
    }
    std::vector<std::string> chosen = names;
    if (chosen.empty()) {
      if (!logs)
        throw RemoteError(fmt::format("server {}: cannot list its binary logs (SHOW BINARY LOGS needs the BINLOG MONITOR "
                                      "or REPLICATION CLIENT privilege): name the files to read",
                                      label));
      if (logs->empty()) throw RemoteError(fmt::format("server {}: SHOW BINARY LOGS lists no file", label));
      // From the first file: all of them now, or the first followed through every rotation.
      if (opts_.stop_never) chosen.push_back(logs->front().name);
      else
        for (const BinlogFileInfo& f : *logs) chosen.push_back(f.name);
    }
    for (const std::string& name : chosen) {
      std::uint64_t size = 0;
      if (logs) {
        auto it = std::find_if(logs->begin(), logs->end(), [&](const BinlogFileInfo& f) { return f.name == name; });
        if (it == logs->end())
          throw RemoteError(fmt::format("server {}: {}: no such binary log (SHOW BINARY LOGS lists {}){}", label, name,
                                        logs->empty() ? std::string("none")
                                                      : logs->front().name + " to " + logs->back().name,
                                        logs->empty() || name > logs->front().name ? "" : "; purged?"));
        size = it->size;
      }
      list_.files.push_back(InputFile{name, name, false, label});
      if (!opts_.stop_never) total_ += size;
    }
  }
  const InputList& list() const override { return list_; }
  std::uint64_t total_size() const override { return total_; }
  std::unique_ptr<Source> open(const InputFile& f) override {
    if (gtid_stream_) return stream_source(std::move(gtid_stream_), 0);
    const bool last = !list_.files.empty() && &f == &list_.files.back();
    auto s = std::make_unique<RemoteFileStream>(opts_, std::move(spare_), f.path, opts_.stop_never && last);
    if (!last && &f >= list_.files.data() && &f < list_.files.data() + list_.files.size()) {
      InputFile& next = list_.files[static_cast<std::size_t>(&f - list_.files.data()) + 1];
      s->on_unclosed(next.log_name, &next.after_unclosed);
    }
    s->prime();
    return stream_source(std::move(s), 0);
  }

 private:
  RemoteOptions opts_;
  std::unique_ptr<ReplicationClient> spare_;  // the listing's connection, used by the first file
  std::unique_ptr<RemoteFileStream> gtid_stream_;  // --start-gtid: the one stream, primed
  InputList list_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<InputSet> remote_inputs(const RemoteOptions& o, const std::vector<std::string>& names) {
  return std::make_unique<RemoteInputs>(o, names);
}

}  // namespace binlogctl
