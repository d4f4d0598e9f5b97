// Decrypting MariaDB binlogs (crypto.h): an input that walks a file's events by their sizes (in
// the clear in an encrypted file too) and hands out each event decrypted, at the same offset, so
// that everything after it (EventStream, the chain reader, every subcommand) reads a binlog in
// the clear: a file of known size read (pread) and decrypted in place ahead of the reader on a
// thread of its own (DecryptedFile), a stream as it is read (DecryptingStream). AES through OpenSSL's EVP, one context per cipher set up once per
// file (the IV alone changes per event).
#include <binlogctl/bytes.h>
#include <binlogctl/crypto.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/event_type.h>
#include <binlogctl/fde.h>
#include <binlogctl/source.h>

#include "mysql_internal.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace binlogctl {

namespace {

constexpr std::size_t kNonceLen = 12;
constexpr std::size_t kStartEncryptionBody = 1 + 4 + kNonceLen;
constexpr std::uint8_t kStartEncryption = static_cast<std::uint8_t>(EventType::mariadb_start_encryption);
constexpr std::size_t kChunk = 256 * 1024;  // bytes passed through per step
constexpr std::size_t kPrefetch = 4 << 20;  // the input's pages mapped ahead, at a time

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

// memcpy, or nothing when the bytes are already there (a file decrypted in place: its input is
// its output).
void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  if (dst != src && n > 0) std::memcpy(dst, src, n);
}

enum class Mode { cbc, ctr };

const EVP_CIPHER* cipher_for(Mode m, std::size_t key_len) {
  switch (key_len) {
    case 16: return m == Mode::cbc ? EVP_aes_128_cbc() : EVP_aes_128_ctr();
    case 24: return m == Mode::cbc ? EVP_aes_192_cbc() : EVP_aes_192_ctr();
    case 32: return m == Mode::cbc ? EVP_aes_256_cbc() : EVP_aes_256_ctr();
    default: return nullptr;
  }
}
const EVP_CIPHER* ecb_for(std::size_t key_len) {
  switch (key_len) {
    case 16: return EVP_aes_128_ecb();
    case 24: return EVP_aes_192_ecb();
    case 32: return EVP_aes_256_ecb();
    default: return nullptr;
  }
}

// One key and one algorithm, ready to decrypt events. The context is set up once: AES_CTR
// takes each event's IV by a re-initialisation that keeps the key schedule; AES_CBC not even
// that (OpenSSL 3 spends more on a re-initialisation's parameter handling than on the AES of a
// small event): the context decrypts on from the last ciphertext block it saw, and since the IV
// only enters CBC decryption in the first block (P0 = D(C0) ^ IV), the first 16 bytes are fixed
// up by XOR with that block and the event's IV.
class EventCipher {
 public:
  bool init(const EncryptionKey& k, Mode m) {
    mode_ = m;
    static constexpr std::uint8_t kZero[16] = {};
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (!ctx_ || EVP_DecryptInit_ex(ctx_.get(), cipher_for(m, k.bytes.size()), nullptr, k.bytes.data(), kZero) != 1)
      return false;
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);
    std::memset(chain_, 0, sizeof chain_);
    if (m == Mode::cbc) {
      ecb_.reset(EVP_CIPHER_CTX_new());
      if (!ecb_ || EVP_EncryptInit_ex(ecb_.get(), ecb_for(k.bytes.size()), nullptr, k.bytes.data(), nullptr) != 1)
        return false;
      EVP_CIPHER_CTX_set_padding(ecb_.get(), 0);
    }
    return true;
  }
  ~EventCipher() { OPENSSL_cleanse(chain_, sizeof chain_); }
  EventCipher() = default;
  EventCipher(EventCipher&&) = default;
  EventCipher& operator=(EventCipher&&) = default;

  // Decrypts the ciphertext `head` (h bytes) followed by `rest` (r bytes) into out[0, h + r)
  // under `iv`; h is 16, or less when it is all there is (r == 0). `out` overlaps neither.
  bool decrypt(const std::uint8_t* head, std::size_t h, const std::uint8_t* rest, std::size_t r, std::uint8_t* out,
               const std::uint8_t iv[16]) {
    const std::size_t n = h + r;
    if (mode_ == Mode::ctr) {
      if (EVP_DecryptInit_ex(ctx_.get(), nullptr, nullptr, nullptr, iv) != 1) return false;
      return update(head, h, out) && update(rest, r, out + h);
    }
    const std::size_t whole = n / 16 * 16;
    if (whole > 0) {
      std::uint8_t prev[16];
      std::memcpy(prev, chain_, 16);
      const bool ok = update(head, 16, out) && update(rest, whole - 16, out + 16);
      if (!ok) {  // the context's chaining is unknown now: start it afresh
        static constexpr std::uint8_t kZero[16] = {};
        std::memset(chain_, 0, sizeof chain_);
        EVP_DecryptInit_ex(ctx_.get(), nullptr, nullptr, nullptr, kZero);
        return false;
      }
      std::memcpy(chain_, whole > 16 ? rest + (whole - 32) : head, 16);
      for (std::size_t i = 0; i < 16; ++i) out[i] ^= static_cast<std::uint8_t>(prev[i] ^ iv[i]);
    }
    if (whole < n) {
      // MariaDB's no-padding CBC tail (my_crypt.cc, MyCTX_nopad): XOR with AES-ECB(key, IV).
      std::uint8_t mask[16];
      int got = 0;
      if (EVP_EncryptUpdate(ecb_.get(), mask, &got, iv, 16) != 1 || got != 16) return false;
      const std::uint8_t* ct = whole == 0 ? head : rest + (whole - 16);
      for (std::size_t i = 0; i < n - whole; ++i) out[whole + i] = static_cast<std::uint8_t>(ct[i] ^ mask[i]);
    }
    return true;
  }

  // Decrypts the n contiguous bytes of ciphertext at `p` in place under `iv`: one call into
  // OpenSSL for the whole blocks of an event (AES_CBC; AES_CTR takes the IV first).
  bool decrypt_in_place(std::uint8_t* p, std::size_t n, const std::uint8_t iv[16]) {
    if (mode_ == Mode::ctr) {
      if (EVP_DecryptInit_ex(ctx_.get(), nullptr, nullptr, nullptr, iv) != 1) return false;
      return update(p, n, p);
    }
    const std::size_t whole = n / 16 * 16;
    if (whole > 0) {
      std::uint8_t prev[16];
      std::memcpy(prev, chain_, 16);
      std::memcpy(chain_, p + whole - 16, 16);  // read before it is overwritten
      if (!update(p, whole, p)) {
        static constexpr std::uint8_t kZero[16] = {};
        std::memset(chain_, 0, sizeof chain_);
        EVP_DecryptInit_ex(ctx_.get(), nullptr, nullptr, nullptr, kZero);
        return false;
      }
      for (std::size_t i = 0; i < 16; ++i) p[i] ^= static_cast<std::uint8_t>(prev[i] ^ iv[i]);
    }
    if (whole < n) {  // the no-padding tail, as in decrypt()
      std::uint8_t mask[16];
      int got = 0;
      if (EVP_EncryptUpdate(ecb_.get(), mask, &got, iv, 16) != 1 || got != 16) return false;
      for (std::size_t i = whole; i < n; ++i) p[i] ^= mask[i - whole];
    }
    return true;
  }

 private:
  bool update(const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
    return detail::evp_decrypt_update(ctx_.get(), in, n, out);
  }

  Mode mode_ = Mode::cbc;
  Ctx ctx_, ecb_;
  std::uint8_t chain_[16] = {};  // CBC: the block the context decrypts the next one against
};

// The event at `pos` (bytes `in`, `n` of its `size` present) decrypted into `out` (n bytes):
// see crypto.h for the layout. `out` is `in` (decrypted in place) or overlaps it not at all.
bool decrypt_event(EventCipher& c, const std::uint8_t nonce[kNonceLen], std::uint64_t pos_in_file,
                   const std::uint8_t* in, std::size_t n, std::uint32_t size, std::uint8_t* out) {
  if (n < kCommonHeaderLen) {  // nothing to decrypt the header with: as it is
    copy_bytes(out, in, n);
    return true;
  }
  std::uint8_t iv[16];
  std::memcpy(iv, nonce, kNonceLen);
  store_le32(iv + kNonceLen, static_cast<std::uint32_t>(pos_in_file));
  if (out == in) {
    // The ciphertext of the timestamp goes back to its place in the event_size slot, which
    // makes the ciphertext contiguous: bytes 4.. decrypted in place in one go. (A failure in
    // OpenSSL, which takes no data-dependent path to one, leaves the event damaged: its CRC32
    // or its framing says so downstream.)
    std::memmove(out + 9, out, 4);
    if (!c.decrypt_in_place(out + 4, n - 4, iv)) return false;
    std::memcpy(out, out + 9, 4);  // the timestamp
    store_le32(out + 9, size);
    return true;
  }
  // The ciphertext is bytes 4.. with the ciphertext of the timestamp (bytes 0..3) back in the
  // event_size slot (bytes 9..12): its first block put together here, the rest read in place.
  const std::size_t total = n - 4;
  const std::size_t h = std::min<std::size_t>(total, 16);
  std::uint8_t head[16];
  std::memcpy(head, in + 4, h);
  std::memcpy(head + 5, in, 4);
  if (!c.decrypt(head, h, in + 4 + h, total - h, out + 4, iv)) return false;
  std::memcpy(out, out + 9, 4);  // the timestamp
  store_le32(out + 9, size);
  return true;
}

// A decrypted event that looks right: a known type, its end where log_pos says, the CRC32 right
// when the file has checksums.
bool plausible_plaintext(const std::uint8_t* ev, std::uint32_t size, std::uint64_t pos_in_file, bool crc) {
  if (!is_known_event_type(ev[4])) return false;
  const std::uint32_t log_pos = load_le32(ev + 13);
  const bool pos_ok = log_pos == static_cast<std::uint32_t>(pos_in_file + size);
  if (crc) {
    if (size < kCommonHeaderLen + kChecksumLen) return false;
    const bool crc_ok = compute_event_crc(Bytes(ev, size)) == load_le32(ev + size - kChecksumLen);
    return crc_ok && (pos_ok || log_pos == 0);
  }
  return pos_ok;
}

// Where the decryptor's output goes: a stream's caller buffer, or the decrypted file's memory.
class Output {
 public:
  // Room for the next k bytes of output.
  virtual std::uint8_t* reserve(std::size_t k) = 0;
  // Takes back the last k bytes reserve() handed out.
  virtual void unreserve(std::size_t k) = 0;
  // Enough for now: the undecodable rest of an input is passed on a chunk at a time until then.
  virtual bool full() const = 0;

 protected:
  ~Output() = default;
};

// Walks a file's events by their sizes (in the clear in an encrypted file too) and writes each
// event decrypted to the output, at the offset it had in the input: output offset == input
// offset, always; the output only ends early when decryption fails.
class EventDecryptor {
 public:
  EventDecryptor(Source& in, const KeyRing& keys, Output& out) : in_(in), keys_(keys), out_(out) {}
  ~EventDecryptor() { OPENSSL_cleanse(nonce_, sizeof nonce_); }
  EventDecryptor(const EventDecryptor&) = delete;
  EventDecryptor& operator=(const EventDecryptor&) = delete;

  bool done() const { return done_; }
  bool failed() const { return failed_; }
  std::uint64_t offset() const { return off_; }
  // Goes on at `off`, an event boundary past the file's START_ENCRYPTION (or 0: from the start,
  // learning the file afresh); the key, algorithm and nonce found so far are kept. A failure
  // stays: what did not decrypt will not.
  void seek(std::uint64_t off) {
    off_ = off;
    prefetched_ = off;
    raw_rest_ = false;
    if (!failed_) done_ = false;
  }
  std::uint64_t fail_at() const { return fail_at_; }
  const std::string& message() const { return message_; }
  // Ends the output here, as a failed decryption does (an exception on the decrypting thread).
  void fail(std::uint64_t at, std::string msg) {
    failed_ = true;
    done_ = true;
    fail_at_ = at;
    message_ = std::move(msg);
  }

  // One event (or the magic number, or a chunk of what cannot be framed) to the output.
  void step() {
    if (off_ >= prefetched_) {
      // A mapped file's next pages in one call rather than a page fault at a time (the copy out
      // of the mapping was most of the time, see bench/README.md).
      in_.prefetch(off_, kPrefetch);
      prefetched_ = off_ + kPrefetch;
    }
    if (raw_rest_) return pass_rest();
    if (off_ == 0 || (off_ > file_base_ + 4 && file_starts_at(off_))) {  // a file's magic number
      Bytes m = in_.window(off_, 4);
      if (m.size() < 4 || std::memcmp(m.data(), kBinlogMagic, 4) != 0) {
        raw_rest_ = true;
        return pass_rest();
      }
      file_base_ = off_;
      encrypted_ = false;
      crc_ = false;
      cipher_ok_ = false;
      pass(m);
      off_ += 4;
      return;
    }
    Bytes h = in_.window(off_, kCommonHeaderLen);
    if (h.size() < kCommonHeaderLen) {
      pass(h);
      off_ += h.size();
      done_ = true;
      return;
    }
    const std::uint32_t size = load_le32(h.data() + 9);
    const std::uint8_t type = h[4];
    if (size < kCommonHeaderLen || size > kMaxEventSize) {
      // Not an event boundary: the sizes cannot be followed from here.
      raw_rest_ = true;
      return pass_rest();
    }
    Bytes ev = in_.window(off_, size);
    const std::uint64_t pos = off_;
    const std::uint64_t in_file = pos - file_base_;
    if (!encrypted_) {
      if (type == static_cast<std::uint8_t>(EventType::format_description) && ev.size() == size) {
        if (auto f = decode_fde(ev, pos)) crc_ = f->crc32();
      }
      std::uint8_t* out = out_.reserve(ev.size());
      copy_bytes(out, ev.data(), ev.size());
      if (type == kStartEncryption && ev.size() == size && (load_le16(ev.data() + 17) & kIgnorableEventFlag) == 0)
        start_encryption(out, size, pos);
    } else {
      std::uint8_t* out = out_.reserve(ev.size());
      if (!cipher_ok_ && ev.size() == size) {
        if (!choose_cipher(ev, size, in_file, out)) {
          out_.unreserve(ev.size());
          return;
        }
      } else if (!cipher_ok_ || !decrypt_event(cipher_, nonce_, in_file, ev.data(), ev.size(), size, out)) {
        copy_bytes(out, ev.data(), ev.size());  // the event stream reports the truncation (or the damage)
      }
    }
    off_ += ev.size();
    in_.release(off_);
    if (ev.size() < size) done_ = true;
  }

 private:
  void pass(Bytes b) {
    if (!b.empty()) copy_bytes(out_.reserve(b.size()), b.data(), b.size());
  }
  // The rest of the input as it is (what the event stream then makes of it is its business:
  // damage reported, nothing invented).
  void pass_rest() {
    for (;;) {
      Bytes w = in_.window(off_, kChunk);
      if (w.empty()) break;
      pass(w);
      off_ += w.size();
      in_.release(off_);
      if (out_.full()) return;
    }
    done_ = true;
  }

  // A next binlog file of a concatenation starts here (as EventStream::file_starts_at).
  bool file_starts_at(std::uint64_t p) {
    Bytes w = in_.window(p, 4 + kCommonHeaderLen + 2);
    if (w.size() < 4 + kCommonHeaderLen + 2 || std::memcmp(w.data(), kBinlogMagic, 4) != 0) return false;
    const EventHeader h = parse_event_header(w.data() + 4);
    return h.type_code == static_cast<std::uint8_t>(EventType::format_description) &&
           h.event_size >= kCommonHeaderLen + 2 + 50 + 4 + 1 && h.event_size <= 64 * 1024 &&
           load_le16(w.data() + 4 + kCommonHeaderLen) == 4;
  }

  // START_ENCRYPTION (in the clear): the nonce and key version; the copy handed out is flagged
  // ignorable (CRC32 recomputed when it was right), as a server sends it.
  void start_encryption(std::uint8_t* ev, std::uint32_t size, std::uint64_t pos) {
    const std::size_t tail = crc_ ? kChecksumLen : 0;
    if (size < kCommonHeaderLen + kStartEncryptionBody + tail) {
      fail(pos + size, fmt::format("START_ENCRYPTION at {} is {} bytes, too short for its scheme, key version and nonce",
                                   pos, size));
      return;
    }
    const std::uint8_t* body = ev + kCommonHeaderLen;
    start_at_ = pos;
    key_version_ = load_le32(body + 1);
    if (body[0] != 1) {
      fail(pos + size, fmt::format("START_ENCRYPTION at {}: unknown encryption scheme {} (MariaDB writes 1)", pos, body[0]));
      return;
    }
    std::memcpy(nonce_, body + 5, kNonceLen);
    const bool crc_was_right = crc_ && compute_event_crc(Bytes(ev, size)) == load_le32(ev + size - kChecksumLen);
    store_le16(ev + 17, static_cast<std::uint16_t>(load_le16(ev + 17) | kIgnorableEventFlag));
    if (crc_was_right) store_le32(ev + size - kChecksumLen, compute_event_crc(Bytes(ev, size)));
    encrypted_ = true;
    cipher_ok_ = false;
  }

  std::string key_files() const {
    std::string s;
    for (const std::string& f : keys_.files()) s += (s.empty() ? "" : ", ") + f;
    return s;
  }

  // The first encrypted event of a file: the key (of those with id 1) and the algorithm under
  // which it decrypts to an event that looks right.
  bool choose_cipher(Bytes ev, std::uint32_t size, std::uint64_t in_file, std::uint8_t* out) {
    const auto candidates = keys_.with_id(kBinlogKeyId);
    if (candidates.empty()) {
      fail(file_base_ + in_file,
           fmt::format("encrypted binlog (START_ENCRYPTION at {}, key id {}, key version {}): the key file{} {} hold{} no key id {}",
                       start_at_ - file_base_, kBinlogKeyId, key_version_, keys_.files().size() > 1 ? "s" : "", key_files(),
                       keys_.files().size() > 1 ? "" : "s", kBinlogKeyId));
      return false;
    }
    // Each try decrypts the ciphertext afresh: from a copy when the event is decrypted in place.
    std::vector<std::uint8_t> copy;
    const std::uint8_t* ct = ev.data();
    if (ct == out) {
      copy.assign(ev.begin(), ev.end());
      ct = copy.data();
    }
    for (const EncryptionKey* k : candidates) {
      for (Mode m : {Mode::cbc, Mode::ctr}) {
        EventCipher c;
        if (!c.init(*k, m)) continue;
        if (decrypt_event(c, nonce_, in_file, ct, size, size, out) && plausible_plaintext(out, size, in_file, crc_)) {
          cipher_ = std::move(c);
          cipher_ok_ = true;
          return true;
        }
      }
    }
    copy_bytes(out, ct, size);  // as it was (in place: the last try's output is undone)
    fail(file_base_ + in_file,
         fmt::format("the event at {} does not decrypt with key id {} of {} (AES_CBC or AES_CTR): wrong key, or key version {} "
                     "(START_ENCRYPTION at {}) is in another key file, or the event is damaged",
                     in_file, kBinlogKeyId, key_files(), key_version_, start_at_ - file_base_));
    return false;
  }

  Source& in_;
  const KeyRing& keys_;
  Output& out_;
  std::uint64_t off_ = 0;
  std::uint64_t prefetched_ = 0;  // the input is prefetched up to here
  std::uint64_t file_base_ = 0;
  bool done_ = false, failed_ = false, raw_rest_ = false;
  bool encrypted_ = false, crc_ = false, cipher_ok_ = false;
  std::uint64_t fail_at_ = 0;
  std::string message_;
  std::uint64_t start_at_ = 0;
  std::uint32_t key_version_ = 0;
  std::uint8_t nonce_[kNonceLen] = {};
  EventCipher cipher_;
};

// An input of unknown size (standard input, an archive): decrypted as it is read, into the
// caller's buffer. Events are written straight into it while they fit; one that does not (or
// what follows it) waits in pend_ for the next read.
class DecryptingStream final : public ByteStream, Output {
 public:
  DecryptingStream(std::unique_ptr<Source> in, const KeyRing& keys) : in_(std::move(in)), dec_(*in_, keys, *this) {}

  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    dst_ = dst;
    room_ = cap;
    wrote_ = 0;
    if (pend_at_ < pend_.size()) {
      const std::size_t k = std::min(cap, pend_.size() - pend_at_);
      std::memcpy(dst, pend_.data() + pend_at_, k);
      pend_at_ += k;
      wrote_ = k;
      if (pend_at_ < pend_.size()) return wrote_;
    }
    pend_.clear();
    pend_at_ = 0;
    while (wrote_ < room_ && pend_.empty() && !dec_.done()) dec_.step();
    if (!pend_.empty()) {
      const std::size_t k = std::min(room_ - wrote_, pend_.size());
      std::memcpy(dst + wrote_, pend_.data(), k);
      pend_at_ = k;
      wrote_ += k;
    }
    if (wrote_ == 0 && dec_.failed()) err = DecodeError{Errc::decrypt_failed, dec_.fail_at(), dec_.message().c_str()};
    return wrote_;
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  std::uint8_t* reserve(std::size_t k) override {
    if (pend_.empty() && k <= room_ - wrote_) {
      std::uint8_t* p = dst_ + wrote_;
      wrote_ += k;
      return p;
    }
    const std::size_t at = pend_.size();
    pend_.resize(at + k);
    return pend_.data() + at;
  }
  void unreserve(std::size_t k) override {
    if (!pend_.empty()) pend_.resize(pend_.size() - k);
    else wrote_ -= k;
  }
  bool full() const override { return !pend_.empty() || wrote_ >= room_; }

  std::unique_ptr<Source> in_;
  EventDecryptor dec_;
  std::vector<std::uint8_t> pend_;
  std::size_t pend_at_ = 0;
  std::uint8_t* dst_ = nullptr;  // the caller's buffer during read()
  std::size_t room_ = 0, wrote_ = 0;
};

// An input of known size (a mapped file): read (Source::read_at: pread, not the mapping, whose
// page-table work cost more than the AES, see bench/README.md) and decrypted in place ahead of
// the reader on a thread of its own, in memory laid out as the file (the same offsets), so that
// the chain reader frames and checksums it on its framing thread as it does a mapped file in
// the clear, and three cores' worth of work (AES, framing and CRC32, the subcommand) can overlap. Windows are views that
// stay valid while the source lives; memory stays flat: the decrypting thread runs at most
// kAhead past what the reader released (further only when the reader asks for more: one event
// larger than that, or a batch of views not yet released), and released pages are given back.
// The memory is address space reserved once (never a page of it written twice) in 2 MiB huge
// pages where the kernel offers them: a page fault per 2 MiB instead of per 4 KiB.
class DecryptedFile final : public Source, Output {
 public:
  static constexpr std::uint64_t kPage = 2 << 20;   // huge page; the give-back granularity
  static constexpr std::uint64_t kAhead = 4 << 20;  // decrypted ahead of the reader's releases
  static constexpr std::uint64_t kResume = 1 << 20; // a stalled side goes on once this much is there
  static constexpr std::uint64_t kWant = 256 << 10; // a reader that has to wait waits for this much
  static constexpr std::uint64_t kSpare = 2;        // released pages kept to be moved ahead

  // Address space for a file of `size` bytes (`len` of it, to be unmapped), or nullptr.
  static std::uint8_t* reserve_space(std::uint64_t size, std::size_t& len) {
    len = static_cast<std::size_t>(size + 2 * kPage);  // room to align the start and round the end to kPage
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<std::uint8_t*>(p);
  }

  // `map` from reserve_space(size, map_len); the source unmaps it.
  DecryptedFile(std::unique_ptr<Source> in, const KeyRing& keys, std::uint64_t size, std::uint8_t* map, std::size_t map_len)
      : in_(std::move(in)), fill_(*this), dec_(fill_, keys, *this), size_(size), map_(map), map_len_(map_len) {
    if (map_ != nullptr) {
      const auto addr = reinterpret_cast<std::uintptr_t>(map_);
      base_ = map_ + ((kPage - addr % kPage) % kPage);
#ifdef MADV_HUGEPAGE
      ::madvise(base_, (size_ + kPage - 1) / kPage * kPage, MADV_HUGEPAGE);  // a hint: 4 KiB pages otherwise
#endif
    }
    worker_ = std::thread([this] { run(); });
  }
  ~DecryptedFile() override {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_.store(true, std::memory_order_relaxed);
    }
    room_cv_.notify_all();
    worker_.join();
    if (map_ != nullptr) ::munmap(map_, map_len_);
  }
  DecryptedFile(const DecryptedFile&) = delete;
  DecryptedFile& operator=(const DecryptedFile&) = delete;

  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off >= size_ || off < gone_.load(std::memory_order_relaxed)) return {};  // released: moved away
    if (n > size_ - off) n = static_cast<std::size_t>(size_ - off);
    const std::uint64_t need = off + n;
    std::uint64_t ready = ready_.load(std::memory_order_acquire);
    if (ready < need && !finished_.load(std::memory_order_acquire)) ready = wait_for(need);
    if (off >= ready) return {};
    return {base_ + off, static_cast<std::size_t>(std::min<std::uint64_t>(n, ready - off))};
  }
  void release(std::uint64_t off) override {
    if (off <= released_.load(std::memory_order_relaxed)) return;
    released_.store(off, std::memory_order_seq_cst);
    if (worker_waits_.load(std::memory_order_seq_cst) && off >= resume_at_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> l(m_);
      room_cv_.notify_one();
    }
  }
  std::optional<std::uint64_t> size() const override { return size_; }
  std::uint64_t raw_position() const override { return ready_.load(std::memory_order_relaxed); }
  std::uint64_t raw_size() const override { return in_->raw_size(); }

 private:
  static constexpr std::size_t kFill = 128 << 10;  // read from the file at a time: decrypted while in the cache

  // The decryptor's input, on the decrypting thread: the file's bytes read (pread, not mapped)
  // straight into the output memory at their own offsets, a step ahead of the decryptor, which
  // then decrypts each event in place (its input is its output).
  class Fill final : public Source {
   public:
    explicit Fill(DecryptedFile& f) : f_(f) {}
    Bytes window(std::uint64_t off, std::size_t n) override {
      if (off >= f_.size_) return {};
      if (n > f_.size_ - off) n = static_cast<std::size_t>(f_.size_ - off);
      if (off + n > filled_ && !ended_) {
        const std::uint64_t to = std::min(f_.size_, std::max(off + n, filled_ + kFill));
        const std::size_t want = static_cast<std::size_t>(to - filled_);
        const std::size_t got = f_.in_->read_at(filled_, f_.base_ + filled_, want);
        filled_ += got;
        if (got < want) ended_ = true;  // cut short since it was opened, or an I/O error
      }
      if (off >= filled_) return {};
      return {f_.base_ + off, static_cast<std::size_t>(std::min<std::uint64_t>(n, filled_ - off))};
    }
    void release(std::uint64_t) override {}  // the reader's releases are what count
    std::optional<std::uint64_t> size() const override { return f_.size_; }
    std::uint64_t raw_position() const override { return filled_; }
    std::uint64_t raw_size() const override { return f_.size_; }
    std::uint64_t filled() const { return filled_; }

   private:
    DecryptedFile& f_;
    std::uint64_t filled_ = 0;  // the file's bytes are in the output memory up to here
    bool ended_ = false;
  };

  // Output, on the decrypting thread: the bytes go where they were in the input.
  std::uint8_t* reserve(std::size_t k) override {
    std::uint8_t* p = base_ + out_;
    out_ += k;
    return p;
  }
  void unreserve(std::size_t k) override { out_ -= k; }
  bool full() const override { return true; }

  // The reader's side: waits until [.., need) is decrypted (or more: up to kWant, so that it is
  // not woken for every event) or the decryption ended; returns how far it got.
  std::uint64_t wait_for(std::uint64_t need) {
    const std::uint64_t want = std::min(size_, need + kWant);
    std::unique_lock<std::mutex> l(m_);
    want_.store(want, std::memory_order_seq_cst);
    reader_waits_.store(true, std::memory_order_seq_cst);
    room_cv_.notify_one();  // the decrypting thread may be waiting for room: now it has a reason to go on
    ready_cv_.wait(l, [&] {
      return ready_.load(std::memory_order_seq_cst) >= want || finished_.load(std::memory_order_seq_cst);
    });
    reader_waits_.store(false, std::memory_order_relaxed);
    return ready_.load(std::memory_order_acquire);
  }

  // The decrypting thread's side: waits while it is far enough ahead of the reader.
  bool wait_for_room() {
    const auto enough = [&] {
      return out_ < released_.load(std::memory_order_seq_cst) + kAhead ||
             (reader_waits_.load(std::memory_order_seq_cst) && out_ < want_.load(std::memory_order_seq_cst));
    };
    if (enough()) return !stop_.load(std::memory_order_relaxed);
    std::unique_lock<std::mutex> l(m_);
    resume_at_.store(out_ + kResume - kAhead, std::memory_order_relaxed);
    worker_waits_.store(true, std::memory_order_seq_cst);
    room_cv_.wait(l, [&] { return stop_.load(std::memory_order_relaxed) || enough(); });
    worker_waits_.store(false, std::memory_order_relaxed);
    return !stop_.load(std::memory_order_relaxed);
  }

  void publish(bool last) {
    ready_.store(out_, std::memory_order_seq_cst);
    if (last) {
      finished_.store(true, std::memory_order_seq_cst);
      std::lock_guard<std::mutex> l(m_);
      ready_cv_.notify_all();
    } else if (reader_waits_.load(std::memory_order_seq_cst) && out_ >= want_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> l(m_);
      ready_cv_.notify_all();
    }
  }

  // Before each step: the whole pages the reader released are moved (mremap: page tables only,
  // no copy) to just ahead of where the file is read to, so that after the first few MiB the
  // kernel neither faults in nor clears a page of the output (clearing fresh pages was 13% of an
  // encrypted verify's time); released pages beyond those needed go back to the kernel. A page
  // the file was read into is never replaced.
  void recycle() {
    const std::uint64_t rel = released_.load(std::memory_order_acquire) / kPage;
    if (rel <= free_) return;
    const std::uint64_t front = std::max(out_, fill_.filled());
    const std::uint64_t cur = front == 0 ? 0 : (front - 1) / kPage;
    const std::uint64_t last = (size_ + kPage - 1) / kPage;
    backed_ = std::max(backed_, cur + 1);
    while (remap_ && free_ < rel && backed_ < std::min(cur + 1 + kSpare, last)) {
      if (::mremap(base_ + free_ * kPage, kPage, kPage, MREMAP_MAYMOVE | MREMAP_FIXED, base_ + backed_ * kPage) == MAP_FAILED) {
        remap_ = false;  // then fresh pages, as without recycling
        break;
      }
      ++free_;
      ++backed_;
    }
    const std::uint64_t keep = remap_ ? kSpare : 0;
    if (rel > free_ + keep) {
      ::madvise(base_ + free_ * kPage, (rel - keep - free_) * kPage, MADV_DONTNEED);
      free_ = rel - keep;
    }
    gone_.store(free_ * kPage, std::memory_order_relaxed);
  }

  void run() {
    try {
      while (!dec_.done()) {
        if (!wait_for_room()) break;
        recycle();
        dec_.step();
        publish(false);
      }
    } catch (const std::exception& e) {  // out of memory for a message: the output ends here
      dec_.fail(out_, e.what());
    }
    if (dec_.failed()) {
      message_ = dec_.message();
      read_error_ = DecodeError{Errc::decrypt_failed, dec_.fail_at(), message_.c_str()};
    } else if (in_->read_error().code != Errc::ok) {
      read_error_ = in_->read_error();
    }
    publish(true);  // read_error_ is written before finished_ is set, read after it is seen
  }

  std::unique_ptr<Source> in_;
  Fill fill_;
  EventDecryptor dec_;
  const std::uint64_t size_;
  std::uint8_t* map_ = nullptr;
  std::size_t map_len_ = 0;
  std::uint8_t* base_ = nullptr;  // map_ aligned to kPage; the file's offset 0
  std::uint64_t out_ = 0;         // the decrypting thread's output offset
  // The decrypting thread's pages: [0, free_) are gone (moved ahead or given back), those from
  // free_ to the reader's release point can be moved ahead, pages before backed_ have memory.
  std::uint64_t free_ = 0, backed_ = 0;
  bool remap_ = true;
  std::atomic<std::uint64_t> gone_{0};  // free_ in bytes, for window()
  std::string message_;
  std::mutex m_;
  std::condition_variable ready_cv_, room_cv_;
  std::atomic<bool> stop_{false};  // the source is going: the decrypting thread ends
  alignas(64) std::atomic<std::uint64_t> ready_{0};     // decrypted up to here (the decrypting thread)
  std::atomic<bool> finished_{false};
  alignas(64) std::atomic<std::uint64_t> released_{0};  // the reader's release point
  std::atomic<std::uint64_t> want_{0};
  std::atomic<bool> reader_waits_{false};
  alignas(64) std::atomic<std::uint64_t> resume_at_{0};
  std::atomic<bool> worker_waits_{false};
  std::thread worker_;
};

// A file read at any event boundary (serve: each replica starts where it asks, and a file that
// grew is read on from where it stopped): the magic number, the format description and the
// event after it are read from the start of the file whenever a window reaches back into them;
// any later window starts where an event does and is decrypted from there, one event at a time,
// into one buffer of about an event. The inner source's gaps are this one's.
class DecryptingView final : public Source, Output {
 public:
  DecryptingView(std::unique_ptr<Source> in, const KeyRing& keys) : in_(std::move(in)), dec_(*in_, keys, *this) {}

  Bytes window(std::uint64_t off, std::size_t n) override {
    if (off >= buf_off_ && off - buf_off_ <= valid_ && n <= valid_ - (off - buf_off_))
      return {buf_.data() + (off - buf_off_), n};
    fill(off, off + n);
    if (off < buf_off_ || off - buf_off_ >= buf_.size()) return {};
    const std::size_t at = static_cast<std::size_t>(off - buf_off_);
    return {buf_.data() + at, std::min(n, buf_.size() - at)};
  }
  void release(std::uint64_t off) override { in_->release(off); }
  std::optional<std::uint64_t> gap_at(std::uint64_t off) override { return in_->gap_at(off); }
  std::optional<std::uint64_t> size() const override { return in_->size(); }
  std::uint64_t raw_position() const override { return in_->raw_position(); }
  std::uint64_t raw_size() const override { return in_->raw_size(); }

 private:
  static constexpr std::size_t kKeep = 4 << 20;  // a buffer grown past this for one event is given back after it

  std::uint8_t* reserve(std::size_t k) override {
    const std::size_t at = buf_.size();
    buf_.resize(at + k);
    return buf_.data() + at;
  }
  void unreserve(std::size_t k) override { buf_.resize(buf_.size() - k); }
  bool full() const override { return true; }

  void fill(std::uint64_t from, std::uint64_t need) {
    if (buf_.capacity() > kKeep && need - from < kKeep) std::vector<std::uint8_t>().swap(buf_);
    buf_.clear();
    last_ = 0;
    if (!head_read_ || from < head_end_) {
      // The magic number, the format description and the event after it (START_ENCRYPTION in
      // an encrypted file), from the start of the file: what any later window starts after.
      buf_off_ = 0;
      dec_.seek(0);
      int steps = 0;
      for (; steps < 3 && !dec_.done(); ++steps) step();
      if (steps == 3 && !dec_.done()) {
        head_read_ = true;
        head_end_ = dec_.offset();
      }
      if (head_read_ && from >= head_end_) {
        buf_.clear();
        last_ = 0;
      }
    }
    if (head_read_ && from >= head_end_) {
      buf_off_ = from;
      dec_.seek(from);
    }
    while (buf_off_ + buf_.size() < need && !dec_.done()) step();
    // What the input's end cut short (a torn or growing tail) is handed out now, not kept.
    valid_ = dec_.done() ? last_ : buf_.size();
    if (dec_.failed() && read_error_.code == Errc::ok) {
      message_ = dec_.message();
      read_error_ = DecodeError{Errc::decrypt_failed, dec_.fail_at(), message_.c_str()};
    } else if (in_->read_error().code != Errc::ok && read_error_.code == Errc::ok) {
      read_error_ = in_->read_error();
    }
  }
  void step() {
    last_ = buf_.size();
    dec_.step();
  }

  std::unique_ptr<Source> in_;
  EventDecryptor dec_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t buf_off_ = 0;
  std::size_t valid_ = 0;  // buf_'s bytes that a later window may be handed
  std::size_t last_ = 0;   // buf_'s size before the last step
  bool head_read_ = false;
  std::uint64_t head_end_ = 0;
  std::string message_;
};

// The file needs the decrypting stream: a stream (a later file of a concatenation may be
// encrypted), or START_ENCRYPTION right after the format description without the ignorable flag.
bool needs_decryption(Source& s) {
  if (!s.size()) return true;
  Bytes m = s.window(0, 4 + kCommonHeaderLen);
  if (m.size() < 4 + kCommonHeaderLen || std::memcmp(m.data(), kBinlogMagic, 4) != 0) return false;
  const std::uint64_t next = 4 + std::uint64_t{load_le32(m.data() + 4 + 9)};
  Bytes h = s.window(next, kCommonHeaderLen);
  return h.size() == kCommonHeaderLen && h[4] == kStartEncryption && (load_le16(h.data() + 17) & kIgnorableEventFlag) == 0;
}

class DecryptingInputs final : public InputSet {
 public:
  DecryptingInputs(InputSet& inner, const KeyRing& keys) : inner_(inner), keys_(keys) {}
  const InputList& list() const override { return inner_.list(); }
  std::uint64_t total_size() const override { return inner_.total_size(); }
  std::unique_ptr<Source> open(const InputFile& f) override { return decrypting_source(inner_.open(f), keys_); }

 private:
  InputSet& inner_;
  const KeyRing& keys_;
};

}  // namespace

std::unique_ptr<Source> decrypting_source(std::unique_ptr<Source> s, const KeyRing& keys) {
  if (detail::is_mysql_encrypted(*s)) return detail::mysql_decrypting_source(std::move(s), keys);
  if (!needs_decryption(*s)) return s;
  if (const auto size = s->size(); size && *size > 0) {
    std::size_t len = 0;
    if (std::uint8_t* map = DecryptedFile::reserve_space(*size, len))
      return std::make_unique<DecryptedFile>(std::move(s), keys, *size, map, len);
  }
  const std::uint64_t raw = s->raw_size();  // no address space for it (or a stream): decrypted as it is read
  return stream_source(std::make_unique<DecryptingStream>(std::move(s), keys), raw);
}

std::unique_ptr<Source> decrypting_view(std::unique_ptr<Source> s, const KeyRing& keys) {
  if (detail::is_mysql_encrypted(*s)) return detail::mysql_decrypting_source(std::move(s), keys);  // read at any offset
  return std::make_unique<DecryptingView>(std::move(s), keys);
}

std::unique_ptr<InputSet> decrypting_inputs(InputSet& inner, const KeyRing& keys) {
  return std::make_unique<DecryptingInputs>(inner, keys);
}

}  // namespace binlogctl
