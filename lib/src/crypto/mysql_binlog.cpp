// MySQL 8.0.14+ encrypted binlogs (crypto.h): the keyring_file plugin's data file, the binlog
// file header, and the decrypted stream handed to the rest of the library at the stream's own
// offsets (the positions the server shows). Read from MySQL's sources: sql/rpl_log_encryption.cc
// (the header, the file password), sql/stream_cipher.cc (AES-256-CTR from the password),
// sql/binlog_istream.cc (the stream's offsets), plugin/keyring/ (the keyring file). AES and the
// hashes through OpenSSL's EVP; nothing hand-written.
#include "mysql_internal.h"

#include <binlogctl/bytes.h>
#include <binlogctl/event_type.h>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace binlogctl {

namespace {

constexpr char kVersion2[] = "Keyring file version:2.0";
constexpr char kVersion1[] = "Keyring file version:1.0";
constexpr std::size_t kVersionLen = sizeof(kVersion2) - 1;
constexpr std::size_t kEofTagLen = 3;
constexpr std::size_t kDigestLen = 32;                 // SHA-256
constexpr std::size_t kEntryHead = 5 * 8;              // five 64-bit lengths
constexpr std::size_t kMaxKeyring = 64u << 20;         // far above any real keyring
constexpr char kObfuscation[] = "*305=Ljt0*!@$Hnm(*-9-w;:";  // plugin/keyring/common/keyring_key.cc
constexpr std::size_t kObfuscationLen = sizeof(kObfuscation) - 1;
constexpr std::uint8_t kMysqlMagic[4] = {0xfd, 0x62, 0x69, 0x6e};
constexpr std::size_t kHeader = kMysqlEncryptionHeaderSize;
constexpr std::size_t kPasswordLen = 32;
constexpr std::size_t kIvLen = 16;
constexpr std::size_t kMasterKeyLen = 32;              // Rpl_encryption_header_v1::KEY_LENGTH
constexpr std::size_t kChunk = 1u << 20;               // decrypted ahead per refill
constexpr std::size_t kKeep = 4u << 20;                // a buffer grown past this for one event shrinks after

std::uint64_t le64(const std::uint8_t* p) { return load_le(p, 8); }

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

std::string list_files(const std::vector<std::string>& files) {
  std::string r;
  for (const std::string& f : files) r += (r.empty() ? "" : ", ") + f;
  return r;
}

// The file's AES-256-CTR stream cipher, positioned at any offset of the stream.
class StreamCipher {
 public:
  StreamCipher() = default;
  StreamCipher(StreamCipher&&) = default;
  StreamCipher& operator=(StreamCipher&&) = default;
  ~StreamCipher() {
    OPENSSL_cleanse(key_, sizeof key_);
    OPENSSL_cleanse(iv_, sizeof iv_);
  }

  // The key and IV from the file password, as Aes_ctr_cipher::open does (EVP_BytesToKey).
  bool open(const std::uint8_t password[kPasswordLen]) {
    ctx_.reset(EVP_CIPHER_CTX_new());
    if (!ctx_) return false;
    if (EVP_BytesToKey(EVP_aes_256_ctr(), EVP_sha512(), nullptr, password, static_cast<int>(kPasswordLen), 1, key_, iv_) == 0)
      return false;
    return seek(0);
  }
  // The counter of the block holding `off` in the IV's last 8 bytes (big endian), then the
  // bytes of that block before `off` skipped.
  bool seek(std::uint64_t off) {
    std::uint8_t iv[16];
    std::memcpy(iv, iv_, 8);
    const std::uint64_t counter = off / 16;
    for (int i = 0; i < 8; ++i) iv[8 + i] = static_cast<std::uint8_t>(counter >> (8 * (7 - i)));
    if (EVP_DecryptInit_ex(ctx_.get(), EVP_aes_256_ctr(), nullptr, key_, iv) != 1) return false;
    std::uint8_t skip[16];
    const std::size_t k = static_cast<std::size_t>(off % 16);
    return k == 0 || apply(skip, k);
  }
  // Decrypts n bytes in place, going on from where the last call stopped.
  bool apply(std::uint8_t* p, std::size_t n) { return detail::evp_decrypt_update(ctx_.get(), p, n, p); }

 private:
  Ctx ctx_;
  std::uint8_t key_[32] = {};
  std::uint8_t iv_[16] = {};
};

// What opening an encrypted file gave: its cipher, or why not (`error`, and where in the file).
struct Opened {
  StreamCipher cipher;
  std::string error;
  std::uint64_t error_offset = 0;
};

// Reads the header at the start of `in`, finds the master key in the keyring, unwraps the file
// password, and checks that it decrypts the stream's magic number.
Opened open_file(Source& in, const KeyRing& keys) {
  Opened o;
  Bytes head = in.window(0, kHeader + 4);
  MysqlEncryptionHeader h;
  if (!parse_mysql_encryption_header(head, h, o.error, o.error_offset)) return o;
  const std::string files = keys.keyring_files().empty() ? std::string() : list_files(keys.keyring_files());
  const MysqlKeyringKey* k = keys.mysql_key(h.key_id);
  if (k == nullptr) {
    o.error_offset = 5;
    o.error = keys.keyring_files().empty()
                  ? fmt::format("MySQL encrypted binlog (binlog_encryption), master key id {}: give the server's keyring "
                                "file (keyring_file_data) with --keyring-file",
                                h.key_id)
                  : fmt::format("MySQL encrypted binlog: master key id {} is not in the keyring ({})", h.key_id, files);
    return o;
  }
  if (k->bytes.size() != kMasterKeyLen || k->type != "AES") {
    o.error_offset = 5;
    o.error = fmt::format("MySQL encrypted binlog: master key id {} in {} is a {}-byte {} key, not the 32-byte AES key "
                          "of a binlog master key",
                          h.key_id, k->file, k->bytes.size(), k->type);
    return o;
  }
  std::uint8_t password[kPasswordLen + 16];
  int n1 = 0;
  Ctx cbc(EVP_CIPHER_CTX_new());
  const bool unwrapped = cbc && EVP_DecryptInit_ex(cbc.get(), EVP_aes_256_cbc(), nullptr, k->bytes.data(), h.iv) == 1 &&
                         EVP_CIPHER_CTX_set_padding(cbc.get(), 0) == 1 &&
                         EVP_DecryptUpdate(cbc.get(), password, &n1, h.encrypted_password, static_cast<int>(kPasswordLen)) == 1 &&
                         n1 == static_cast<int>(kPasswordLen);
  const bool opened = unwrapped && o.cipher.open(password);
  OPENSSL_cleanse(password, sizeof password);
  if (!opened) {
    o.error_offset = 5;
    o.error = fmt::format("MySQL encrypted binlog: the file password cannot be unwrapped with master key id {} (OpenSSL)", h.key_id);
    return o;
  }
  if (head.size() >= kHeader + 4) {
    std::uint8_t magic[4];
    std::memcpy(magic, head.data() + kHeader, 4);
    if (!o.cipher.apply(magic, 4) || !o.cipher.seek(0)) {
      o.error_offset = kHeader;
      o.error = "MySQL encrypted binlog: OpenSSL failed to decrypt";
      return o;
    }
    if (std::memcmp(magic, kBinlogMagic, 4) != 0) {
      o.error_offset = kHeader;
      o.error = fmt::format("MySQL encrypted binlog: the file password (unwrapped with master key id {} from {}) does "
                            "not decrypt the binlog magic number at encrypted-file offset {}: a wrong key (another "
                            "server's keyring with the same key id?) or a damaged header",
                            h.key_id, k->file, kHeader);
      return o;
    }
  }
  return o;
}

// A file of known size: read at any offset of its stream (serve reads at event boundaries, the
// chain reader sequentially), one buffer decrypted at a time: read (pread for a mapped file)
// into the buffer and decrypted there in place.
class MysqlDecryptedFile final : public Source {
 public:
  MysqlDecryptedFile(std::unique_ptr<Source> in, const KeyRing& keys, std::uint64_t file_size) : in_(std::move(in)) {
    Opened o = open_file(*in_, keys);
    if (!o.error.empty()) {
      message_ = std::move(o.error);
      read_error_ = DecodeError{Errc::decrypt_failed, 0, message_.c_str()};
      return;
    }
    cipher_ = std::move(o.cipher);
    size_ = file_size > kHeader ? file_size - kHeader : 0;
    ok_ = true;
  }
  ~MysqlDecryptedFile() override { OPENSSL_cleanse(buf_.data(), buf_.size()); }

  Bytes window(std::uint64_t off, std::size_t n) override {
    if (!ok_ || off >= size_) return {};
    if (n > size_ - off) n = static_cast<std::size_t>(size_ - off);
    if (off >= buf_off_ && off - buf_off_ <= len_ && n <= len_ - (off - buf_off_))
      return {buf_.data() + (off - buf_off_), n};
    fill(off, n);
    if (off < buf_off_ || off - buf_off_ >= len_) return {};
    const std::size_t at = static_cast<std::size_t>(off - buf_off_);
    return {buf_.data() + at, std::min(n, len_ - at)};
  }
  void release(std::uint64_t off) override {
    if (ok_) in_->release(off + kHeader);
  }
  std::optional<std::uint64_t> size() const override { return ok_ ? size_ : 0; }
  std::uint64_t raw_position() const override { return in_->raw_position(); }
  std::uint64_t raw_size() const override { return in_->raw_size(); }

 private:
  void fill(std::uint64_t off, std::size_t n) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size_ - off, std::max(n, kChunk)));
    if (buf_.size() > kKeep && want <= kKeep) {
      OPENSSL_cleanse(buf_.data(), buf_.size());
      std::vector<std::uint8_t>().swap(buf_);
    }
    if (buf_.size() < want) buf_.resize(want);
    buf_off_ = off;
    len_ = in_->read_at(off + kHeader, buf_.data(), want);
    if (!cipher_.seek(off) || !cipher_.apply(buf_.data(), len_)) {
      len_ = 0;
      ok_ = false;
      message_ = "MySQL encrypted binlog: OpenSSL failed to decrypt";
      read_error_ = DecodeError{Errc::decrypt_failed, off, message_.c_str()};
      return;
    }
    if (len_ < want && in_->read_error().code != Errc::ok && read_error_.code == Errc::ok) {
      const DecodeError& e = in_->read_error();
      read_error_ = DecodeError{e.code, e.offset >= kHeader ? e.offset - kHeader : 0, e.what};
    }
  }

  std::unique_ptr<Source> in_;
  StreamCipher cipher_;
  std::string message_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t buf_off_ = 0;
  std::size_t len_ = 0;
  std::uint64_t size_ = 0;
  bool ok_ = false;
};

// A stream (standard input, an archive): decrypted as it is read.
class MysqlDecryptingStream final : public ByteStream {
 public:
  MysqlDecryptingStream(std::unique_ptr<Source> in, const KeyRing& keys) : in_(std::move(in)) {
    Opened o = open_file(*in_, keys);
    if (!o.error.empty()) {
      message_ = std::move(o.error);
      return;
    }
    cipher_ = std::move(o.cipher);
    ok_ = true;
  }

  std::size_t read(std::uint8_t* dst, std::size_t cap, DecodeError& err) override {
    if (!ok_) {
      if (!message_.empty()) err = DecodeError{Errc::decrypt_failed, 0, message_.c_str()};
      return 0;
    }
    Bytes w = in_->window(pos_, cap);
    if (w.empty()) {
      if (in_->read_error().code != Errc::ok) {
        const DecodeError& e = in_->read_error();
        err = DecodeError{e.code, e.offset >= kHeader ? e.offset - kHeader : 0, e.what};
      }
      return 0;
    }
    std::memcpy(dst, w.data(), w.size());
    if (!cipher_.apply(dst, w.size())) {
      ok_ = false;
      message_ = "MySQL encrypted binlog: OpenSSL failed to decrypt";
      err = DecodeError{Errc::decrypt_failed, pos_ - kHeader, message_.c_str()};
      return 0;
    }
    pos_ += w.size();
    in_->release(pos_);
    return w.size();
  }
  std::uint64_t raw_position() const override { return in_->raw_position(); }

 private:
  std::unique_ptr<Source> in_;
  StreamCipher cipher_;
  std::string message_;
  std::uint64_t pos_ = kHeader;
  bool ok_ = false;
};

}  // namespace

bool parse_mysql_encryption_header(Bytes file, MysqlEncryptionHeader& out, std::string& error, std::uint64_t& error_offset) {
  if (file.size() < 4 || std::memcmp(file.data(), kMysqlMagic, 4) != 0) {
    error_offset = 0;
    error = "not a MySQL encrypted binlog (magic fd 62 69 6e)";
    return false;
  }
  if (file.size() < kHeader) {
    error_offset = file.size();
    error = fmt::format("MySQL encrypted binlog: the file ends at {} bytes, inside its {}-byte encryption header", file.size(), kHeader);
    return false;
  }
  if (file[4] != 1) {
    error_offset = 4;
    error = fmt::format("MySQL encrypted binlog: encryption header version {} is not supported (only 1)", file[4]);
    return false;
  }
  out = MysqlEncryptionHeader{};
  bool have_id = false, have_password = false, have_iv = false;
  std::size_t p = 5;
  const auto corrupt = [&](std::size_t at, const char* why) {
    error_offset = at;
    error = fmt::format("MySQL encrypted binlog: encryption header corrupted at offset {}: {}", at, why);
    return false;
  };
  for (;;) {
    if (p >= kHeader) return corrupt(p, "its fields run past its 512 bytes");
    const std::size_t at = p;
    const std::uint8_t type = file[p++];
    if (type == 0) break;
    switch (type) {
      case 1: {  // the key id, a length byte first
        if (p >= kHeader) return corrupt(at, "the key id's length is past the header's end");
        const std::size_t len = file[p++];
        if (len > kHeader - p) return corrupt(at, "the key id runs past the header's end");
        out.key_id.assign(reinterpret_cast<const char*>(file.data() + p), len);
        have_id = true;
        p += len;
        break;
      }
      case 2:
        if (kPasswordLen > kHeader - p) return corrupt(at, "the encrypted file password runs past the header's end");
        std::memcpy(out.encrypted_password, file.data() + p, kPasswordLen);
        have_password = true;
        p += kPasswordLen;
        break;
      case 3:
        if (kIvLen > kHeader - p) return corrupt(at, "the IV runs past the header's end");
        std::memcpy(out.iv, file.data() + p, kIvLen);
        have_iv = true;
        p += kIvLen;
        break;
      default:
        error_offset = at;
        error = fmt::format("MySQL encrypted binlog: unknown encryption header field type {} at offset {}", type, at);
        return false;
    }
  }
  const char* missing = !have_id || out.key_id.empty() ? "the replication encryption key id"
                        : !have_password                ? "the encrypted file password"
                        : !have_iv                      ? "the IV"
                                                        : nullptr;
  if (missing != nullptr) {
    error_offset = 5;
    error = fmt::format("MySQL encrypted binlog: the encryption header lacks {}", missing);
    return false;
  }
  return true;
}

void KeyRing::parse_mysql_keyring(Bytes data, const std::string& name) {
  std::vector<MysqlKeyringKey> found;
  const auto fail = [&](std::uint64_t off, const std::string& why) {
    for (MysqlKeyringKey& k : found) OPENSSL_cleanse(k.bytes.data(), k.bytes.size());
    throw KeyFileError(fmt::format("{}: offset {}: {}", name, off, why));
  };
  if (!data.empty()) {  // an empty file is the plugin's empty keyring
    const bool v2 = data.size() >= kVersionLen && std::memcmp(data.data(), kVersion2, kVersionLen) == 0;
    const bool v1 = data.size() >= kVersionLen && std::memcmp(data.data(), kVersion1, kVersionLen) == 0;
    if (!v1 && !v2)
      fail(0, "not a MySQL keyring_file data file (it starts with \"Keyring file version:2.0\" or \"...:1.0\"; "
              "keyring_encrypted_file and component_keyring_file files are not read)");
    const std::size_t tail = kEofTagLen + (v2 ? kDigestLen : 0);
    if (data.size() < kVersionLen + tail) fail(data.size(), "the file ends before its \"EOF\" tag: truncated");
    const std::size_t end = data.size() - tail;
    if (std::memcmp(data.data() + end, "EOF", kEofTagLen) != 0)
      fail(end, "no \"EOF\" tag where the keys end: truncated or damaged");
    const Bytes body(data.data() + kVersionLen, end - kVersionLen);
    if (v2) {
      std::uint8_t digest[EVP_MAX_MD_SIZE];
      unsigned int dlen = 0;
      if (EVP_Digest(body.data(), body.size(), digest, &dlen, EVP_sha256(), nullptr) != 1 || dlen != kDigestLen)
        fail(end + kEofTagLen, "cannot compute its SHA-256 digest (OpenSSL)");
      if (std::memcmp(digest, data.data() + end + kEofTagLen, kDigestLen) != 0)
        fail(end + kEofTagLen, "the SHA-256 digest does not match the keys: the file is damaged");
    }
    if (body.size() % 8 != 0)
      fail(kVersionLen, "the keys take a size that is not a multiple of 8 bytes: damaged, or not a 64-bit "
                        "little-endian keyring file (32-bit and big-endian ones are not read)");
    std::size_t p = 0;
    while (p < body.size()) {
      const std::uint64_t off = kVersionLen + p;
      const std::size_t left = body.size() - p;
      if (left < kEntryHead) fail(off, "a key entry is cut short");
      const std::uint8_t* e = body.data() + p;
      const std::uint64_t size = le64(e), id_len = le64(e + 8), type_len = le64(e + 16), user_len = le64(e + 24),
                          key_len = le64(e + 32);
      if (size < kEntryHead || size % 8 != 0 || size > left)
        fail(off, fmt::format("a key entry of {} bytes is impossible here ({} bytes left)", size, left));
      if (id_len > size || type_len > size || user_len > size || key_len > size ||
          kEntryHead + id_len + type_len + user_len + key_len > size ||
          size - (kEntryHead + id_len + type_len + user_len + key_len) >= 8)
        fail(off, fmt::format("a key entry's lengths (id {}, type {}, user {}, key {}) do not make its {} bytes", id_len,
                              type_len, user_len, key_len, size));
      const char* s = reinterpret_cast<const char*>(e + kEntryHead);
      MysqlKeyringKey k;
      k.id.assign(s, id_len);
      k.type.assign(s + id_len, type_len);
      k.user_id.assign(s + id_len + type_len, user_len);
      const std::uint8_t* kb = e + kEntryHead + id_len + type_len + user_len;
      k.bytes.resize(key_len);
      for (std::size_t i = 0; i < key_len; ++i)
        k.bytes[i] = static_cast<std::uint8_t>(kb[i] ^ static_cast<std::uint8_t>(kObfuscation[i % kObfuscationLen]));
      k.file = name;
      found.push_back(std::move(k));
      p += size;
    }
  }
  for (MysqlKeyringKey& k : found) mysql_keys_.push_back(std::move(k));
  keyring_files_.push_back(name);
}

void KeyRing::load_mysql_keyring(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw KeyFileError(fmt::format("{}: cannot open the keyring file: {}", path, std::strerror(errno)));
  std::vector<std::uint8_t> data(kMaxKeyring + 1);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (in.bad()) throw KeyFileError(fmt::format("{}: cannot read the keyring file", path));
  data.resize(static_cast<std::size_t>(in.gcount()));
  if (data.size() > kMaxKeyring) throw KeyFileError(fmt::format("{}: the keyring file is larger than {} bytes", path, kMaxKeyring));
  try {
    parse_mysql_keyring(Bytes(data.data(), data.size()), path);
  } catch (...) {
    OPENSSL_cleanse(data.data(), data.size());
    throw;
  }
  OPENSSL_cleanse(data.data(), data.size());
}

const MysqlKeyringKey* KeyRing::mysql_key(const std::string& id) const {
  for (const MysqlKeyringKey& k : mysql_keys_)
    if (k.id == id && k.user_id.empty()) return &k;
  return nullptr;
}

namespace detail {

bool evp_decrypt_update(EVP_CIPHER_CTX* ctx, const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  for (std::size_t done = 0; done < n;) {
    const std::size_t step = std::min<std::size_t>(n - done, 1u << 30);
    int got = 0;
    if (EVP_DecryptUpdate(ctx, out + done, &got, in + done, static_cast<int>(step)) != 1) return false;
    done += step;
  }
  return true;
}

bool is_mysql_encrypted(Source& s) {
  Bytes m = s.window(0, 4);
  return m.size() == 4 && std::memcmp(m.data(), kMysqlMagic, 4) == 0;
}

std::unique_ptr<Source> mysql_decrypting_source(std::unique_ptr<Source> in, const KeyRing& keys) {
  if (const auto size = in->size()) return std::make_unique<MysqlDecryptedFile>(std::move(in), keys, *size);
  const std::uint64_t raw = in->raw_size();
  return stream_source(std::make_unique<MysqlDecryptingStream>(std::move(in), keys), raw);
}

}  // namespace detail

}  // namespace binlogctl
