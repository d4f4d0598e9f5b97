// Decrypting MariaDB binlogs (crypto.h): a ByteStream that walks a file's events by their
// sizes (in the clear in an encrypted file too) and hands out each event decrypted, at the same
// offset, so that everything after it (EventStream, the chain reader, every subcommand) reads a
// binlog in the clear. AES through OpenSSL's EVP, one context per cipher set up once per file
// (the IV alone changes per event).
#include <binlogctl/bytes.h>
#include <binlogctl/crypto.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/event_type.h>
#include <binlogctl/fde.h>
#include <binlogctl/source.h>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>

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

void store_le16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
void store_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
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

// One key and one algorithm, ready to decrypt events in place.
class EventCipher {
 public:
  bool init(const EncryptionKey& k, Mode m) {
    mode_ = m;
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (!ctx_ || EVP_DecryptInit_ex(ctx_.get(), cipher_for(m, k.bytes.size()), nullptr, k.bytes.data(), nullptr) != 1)
      return false;
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);
    if (m == Mode::cbc) {
      ecb_.reset(EVP_CIPHER_CTX_new());
      if (!ecb_ || EVP_EncryptInit_ex(ecb_.get(), ecb_for(k.bytes.size()), nullptr, k.bytes.data(), nullptr) != 1)
        return false;
      EVP_CIPHER_CTX_set_padding(ecb_.get(), 0);
    }
    return true;
  }
  // Decrypts p[0, n) in place under `iv`.
  bool decrypt(std::uint8_t* p, std::size_t n, const std::uint8_t iv[16]) {
    int out = 0;
    if (EVP_DecryptInit_ex(ctx_.get(), nullptr, nullptr, nullptr, iv) != 1) return false;
    const std::size_t whole = mode_ == Mode::cbc ? n / 16 * 16 : n;
    for (std::size_t done = 0; done < whole;) {  // EVP takes an int length
      const std::size_t step = std::min<std::size_t>(whole - done, 1u << 30);
      if (EVP_DecryptUpdate(ctx_.get(), p + done, &out, p + done, static_cast<int>(step)) != 1) return false;
      done += step;
    }
    if (whole < n) {
      // MariaDB's no-padding CBC tail (my_crypt.cc, MyCTX_nopad): XOR with AES-ECB(key, IV).
      std::uint8_t mask[16];
      if (EVP_EncryptUpdate(ecb_.get(), mask, &out, iv, 16) != 1 || out != 16) return false;
      for (std::size_t i = whole; i < n; ++i) p[i] ^= mask[i - whole];
    }
    return true;
  }

 private:
  Mode mode_ = Mode::cbc;
  Ctx ctx_, ecb_;
};

// The event at `pos` (bytes `in`, `n` of its `size` present) decrypted into `out` (n bytes):
// see crypto.h for the layout.
bool decrypt_event(EventCipher& c, const std::uint8_t nonce[kNonceLen], std::uint64_t pos_in_file,
                   const std::uint8_t* in, std::size_t n, std::uint32_t size, std::uint8_t* out) {
  std::memcpy(out, in, n);
  if (n < kCommonHeaderLen) return true;  // nothing to decrypt the header with: as it is
  std::memcpy(out + 9, in, 4);  // the ciphertext of the timestamp, back in its place
  std::uint8_t iv[16];
  std::memcpy(iv, nonce, kNonceLen);
  store_le32(iv + kNonceLen, static_cast<std::uint32_t>(pos_in_file));
  if (!c.decrypt(out + 4, n - 4, iv)) return false;
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

class DecryptingStream final : public ByteStream {
 public:
  DecryptingStream(std::unique_ptr<Source> in, const KeyRing& keys) : in_(std::move(in)), keys_(keys) {}
  ~DecryptingStream() override {
    OPENSSL_cleanse(nonce_, sizeof nonce_);
  }

  // Events are written straight into the caller's buffer while they fit; one that does not
  // (or what follows it) waits in pend_ for the next read.
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
    while (wrote_ < room_ && pend_.empty() && !done_) step();
    if (!pend_.empty()) {
      const std::size_t k = std::min(room_ - wrote_, pend_.size());
      std::memcpy(dst + wrote_, pend_.data(), k);
      pend_at_ = k;
      wrote_ += k;
    }
    if (wrote_ == 0 && failed_) err = DecodeError{Errc::decrypt_failed, fail_at_, message_.c_str()};
    return wrote_;
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  // Room for the next k bytes of output: in the caller's buffer when they fit, else in pend_.
  std::uint8_t* reserve(std::size_t k) {
    if (pend_.empty() && k <= room_ - wrote_) {
      std::uint8_t* p = dst_ + wrote_;
      wrote_ += k;
      return p;
    }
    const std::size_t at = pend_.size();
    pend_.resize(at + k);
    return pend_.data() + at;
  }
  void pass(Bytes b) {
    if (!b.empty()) std::memcpy(reserve(b.size()), b.data(), b.size());
  }
  // Takes back the last k bytes reserve() handed out.
  void unreserve(std::uint8_t* p, std::size_t k) {
    if (!pend_.empty()) pend_.resize(pend_.size() - k);
    else wrote_ -= k;
    (void)p;
  }
  void fail(std::uint64_t at, std::string msg) {
    failed_ = true;
    done_ = true;
    fail_at_ = at;
    message_ = std::move(msg);
  }
  // The rest of the input as it is (what the event stream then makes of it is its business:
  // damage reported, nothing invented).
  void pass_rest() {
    for (;;) {
      Bytes w = in_->window(off_, kChunk);
      if (w.empty()) break;
      pass(w);
      off_ += w.size();
      in_->release(off_);
      if (!pend_.empty() || wrote_ >= room_) return;
    }
    done_ = true;
  }

  // A next binlog file of a concatenation starts here (as EventStream::file_starts_at).
  bool file_starts_at(std::uint64_t p) {
    Bytes w = in_->window(p, 4 + kCommonHeaderLen + 2);
    if (w.size() < 4 + kCommonHeaderLen + 2 || std::memcmp(w.data(), kBinlogMagic, 4) != 0) return false;
    const EventHeader h = parse_event_header(w.data() + 4);
    return h.type_code == static_cast<std::uint8_t>(EventType::format_description) &&
           h.event_size >= kCommonHeaderLen + 2 + 50 + 4 + 1 && h.event_size <= 64 * 1024 &&
           load_le16(w.data() + 4 + kCommonHeaderLen) == 4;
  }

  void step() {
    if (off_ >= prefetched_) {
      // A mapped file's next pages in one call rather than a page fault at a time (the copy out
      // of the mapping was most of the time, see bench/README.md).
      in_->prefetch(off_, kPrefetch);
      prefetched_ = off_ + kPrefetch;
    }
    if (raw_rest_) return pass_rest();
    if (off_ == 0 || (off_ > file_base_ + 4 && file_starts_at(off_))) {  // a file's magic number
      Bytes m = in_->window(off_, 4);
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
    Bytes h = in_->window(off_, kCommonHeaderLen);
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
    Bytes ev = in_->window(off_, size);
    const std::uint64_t pos = off_;
    const std::uint64_t in_file = pos - file_base_;
    if (!encrypted_) {
      if (type == static_cast<std::uint8_t>(EventType::format_description) && ev.size() == size) {
        if (auto f = decode_fde(ev, pos)) crc_ = f->crc32();
      }
      std::uint8_t* out = reserve(ev.size());
      std::memcpy(out, ev.data(), ev.size());
      if (type == kStartEncryption && ev.size() == size && (load_le16(ev.data() + 17) & kIgnorableEventFlag) == 0)
        start_encryption(out, size, pos);
    } else {
      std::uint8_t* out = reserve(ev.size());
      if (!cipher_ok_ && ev.size() == size) {
        if (!choose_cipher(ev, size, in_file, out)) {
          unreserve(out, ev.size());
          return;
        }
      } else if (!cipher_ok_ || !decrypt_event(cipher_, nonce_, in_file, ev.data(), ev.size(), size, out)) {
        std::memcpy(out, ev.data(), ev.size());  // the event stream reports the truncation (or the damage)
      }
    }
    off_ += ev.size();
    in_->release(off_);
    if (ev.size() < size) done_ = true;
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
    for (const EncryptionKey* k : candidates) {
      for (Mode m : {Mode::cbc, Mode::ctr}) {
        EventCipher c;
        if (!c.init(*k, m)) continue;
        if (decrypt_event(c, nonce_, in_file, ev.data(), size, size, out) && plausible_plaintext(out, size, in_file, crc_)) {
          cipher_ = std::move(c);
          cipher_ok_ = true;
          return true;
        }
      }
    }
    fail(file_base_ + in_file,
         fmt::format("the event at {} does not decrypt with key id {} of {} (AES_CBC or AES_CTR): wrong key, or key version {} "
                     "(START_ENCRYPTION at {}) is in another key file, or the event is damaged",
                     in_file, kBinlogKeyId, key_files(), key_version_, start_at_ - file_base_));
    return false;
  }

  std::unique_ptr<Source> in_;
  const KeyRing& keys_;
  std::vector<std::uint8_t> pend_;
  std::size_t pend_at_ = 0;
  std::uint8_t* dst_ = nullptr;  // the caller's buffer during read()
  std::size_t room_ = 0, wrote_ = 0;
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
  std::unique_ptr<Source> open(const InputFile& f) override {
    std::unique_ptr<Source> s = inner_.open(f);
    if (!needs_decryption(*s)) return s;
    const std::uint64_t raw = s->raw_size();
    return stream_source(std::make_unique<DecryptingStream>(std::move(s), keys_), raw);
  }

 private:
  InputSet& inner_;
  const KeyRing& keys_;
};

}  // namespace

std::unique_ptr<InputSet> decrypting_inputs(InputSet& inner, const KeyRing& keys) {
  return std::make_unique<DecryptingInputs>(inner, keys);
}

}  // namespace binlogctl
