// Buffered output in whole lines: records are formatted into one reusable buffer and written in
// large blocks; when the output is a terminal, every line is written as soon as it is complete.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace binlogctl {

// How a subcommand prints its records: aligned text or JSON Lines.
enum class OutputFormat { text, json };

class LineOutput {
 public:
  // Takes ownership of nothing: `f` stays the caller's. Throws std::system_error on write errors.
  explicit LineOutput(std::FILE* f);
  ~LineOutput();
  LineOutput(const LineOutput&) = delete;
  LineOutput& operator=(const LineOutput&) = delete;

  // The buffer to append the current line to (without its '\n').
  std::string& buf() { return buf_; }
  // Ends the current line; writes out when the block is full or the output is interactive.
  void end_line() {
    buf_.push_back('\n');
    if (line_buffered_ || buf_.size() >= kBlock) flush();
  }
  void flush();
  // Writes `block` (whole lines) after whatever the buffer holds.
  void write(std::string_view block);
  // True when every line is written as soon as it ends (a terminal, or live input).
  bool interactive() const noexcept { return line_buffered_; }
  // Every LineOutput made after this call writes each line as it ends, terminal or not: for
  // inputs that never end (reading a live server with --stop-never), whose readers must see
  // each record when it happens rather than a block at a time.
  static void set_line_buffered_always(bool on) noexcept;

 private:
  void write_all(const char* p, std::size_t n);
  static constexpr std::size_t kBlock = 256 * 1024;
  std::FILE* f_;
  int fd_;
  bool line_buffered_;
  std::string buf_;
};

}  // namespace binlogctl
