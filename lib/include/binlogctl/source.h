// Byte sources: a memory-mapped regular file, or a streamed input (stdin, pipes, .gz/.zst
// archives) read into an owned buffer.
//
// Both hand out windows of borrowed bytes at absolute offsets. A window stays valid until the
// next call to window(); callers that are done with everything before an offset say so with
// release(), which lets the mapping drop its pages (flat RSS) and the stream buffer compact.
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace binlogctl {

// A file that begins inside a stream of several (a live server's stream followed through its
// rotations), as the stream's producer knows it: the server's name for it, and whether the server
// went on to it from the end of the file before it although that one has no ROTATE or STOP
// (InputFile::after_unclosed).
struct FileBegin {
  std::string name;
  bool after_unclosed = false;
};

class Source {
 public:
  virtual ~Source() = default;
  // Up to n bytes starting at absolute offset `off` (fewer only when the input ends first).
  // `off` must not be below the last release() point.
  virtual Bytes window(std::uint64_t off, std::size_t n) = 0;
  // Nothing before `off` will be asked for again.
  virtual void release(std::uint64_t off) = 0;
  // [off, off + n) will be read soon, by another thread: a mapped file maps those pages now,
  // on the calling thread (the chain reader's consumer does it ahead of its framing thread).
  // A hint only; nothing else does anything.
  virtual void prefetch(std::uint64_t off, std::size_t n) {
    (void)off;
    (void)n;
  }
  // [off, off + n) need not stay in memory: a mapped file lets go of the pages wholly inside it
  // (they stay readable, from the page cache, if used again). For reading a huge event in
  // pieces with a resident set bounded by the piece. A hint only; nothing else does anything.
  virtual void drop(std::uint64_t off, std::size_t n) {
    (void)off;
    (void)n;
  }
  // Copies up to n bytes from absolute offset `off` into `dst` (fewer only when the input ends
  // first, or an I/O error cut it short: read_error() then says so); the window's rules hold.
  // A mapped file reads them with pread(), without mapping the pages (under a hypervisor the
  // page-table work of a mapping costs several times the copy): for a reader that wants the
  // bytes in memory of its own (decrypting in place).
  virtual std::size_t read_at(std::uint64_t off, std::uint8_t* dst, std::size_t n);
  // Size of the input when known up front (mapped files); nullopt for streams.
  virtual std::optional<std::uint64_t> size() const = 0;
  // Bytes consumed from the underlying file so far (compressed bytes for archives): for progress.
  virtual std::uint64_t raw_position() const = 0;
  virtual std::uint64_t raw_size() const = 0;  // 0 when unknown
  // An error met while reading (I/O, corrupt archive): the input is cut short there.
  const DecodeError& read_error() const { return read_error_; }
  // A gap its producer made on purpose starts at `off` (a server's GTID dump leaves out the
  // transactions before its start, so a file's bytes come with holes): the offset where the
  // bytes go on. nullopt when no gap starts there (always, for files and memory). window()
  // never hands out bytes across a gap and nothing inside one.
  virtual std::optional<std::uint64_t> gap_at(std::uint64_t off) {
    (void)off;
    return std::nullopt;
  }
  // The file that begins at `off` when the producer knows it (a server's stream names each
  // file it goes on to); nullopt otherwise (files, archives, concatenated copies). Asked once
  // per file, in order: what is before `off` is forgotten.
  virtual std::optional<FileBegin> file_begin_at(std::uint64_t off) {
    (void)off;
    return std::nullopt;
  }

 protected:
  DecodeError read_error_{};
};

// A pull interface for streamed bytes (file descriptors, decompressors).
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to cap bytes; 0 at end of input. Sets err and returns 0 on failure.
  virtual std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) = 0;
  virtual std::uint64_t raw_position() const = 0;
  // After a read(): the size of a gap right after the bytes that read() returned (offsets the
  // producer left out on purpose, see Source::gap_at), 0 for none; asking clears it. A stream
  // with gaps stops each read() at one, and a read() that returns 0 with a gap pending is not
  // the end of the input.
  virtual std::uint64_t take_gap() { return 0; }
  // Source::file_begin_at, at the input's offsets (the bytes read() returned plus the gaps).
  virtual std::optional<FileBegin> file_begin_at(std::uint64_t off) {
    (void)off;
    return std::nullopt;
  }
};

enum class Compression { none, gzip, zstd };

struct OpenOptions {
  bool allow_mmap = true;
};

// Opens a path ("-" = standard input). Regular uncompressed files are mapped; compressed
// files (by extension .gz/.zst or by their magic) and non-regular files are streamed.
// Throws std::system_error when the file cannot be opened.
std::unique_ptr<Source> open_source(const std::string& path, const OpenOptions& opts = {});

// A source over bytes in memory (tests, fuzzing, decompressed payloads). The bytes must outlive it.
std::unique_ptr<Source> memory_source(Bytes data);

// Bytes in memory handed out as a stream (payload contents, tests). The bytes must outlive it.
std::unique_ptr<ByteStream> memory_stream(Bytes data);

// A streaming source over any ByteStream (used for stdin and archives; public for tests).
std::unique_ptr<Source> stream_source(std::unique_ptr<ByteStream> in, std::uint64_t raw_size = 0);

// Wraps a stream in a decompressor.
std::unique_ptr<ByteStream> decompress_stream(std::unique_ptr<ByteStream> in, Compression c);

}  // namespace binlogctl
