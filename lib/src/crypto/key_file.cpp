// MariaDB file_key_management key files (crypto.h): `id;hex-key` lines, optionally encrypted
// with `openssl enc -aes-256-cbc -md sha1 -k SECRET` (file_key_management_filekey). Read as the
// plugin reads them (plugin/file_key_management/parser.cc): leading blanks, `#` comments, ids
// 1..2^32-1, keys of 16, 24 or 32 bytes, the rest of a line after the key ignored.
#include <binlogctl/crypto.h>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>

namespace binlogctl {

namespace {

constexpr std::size_t kMaxKeyFile = 1024 * 1024;  // the plugin's MAX_KEY_FILE_SIZE
constexpr std::size_t kMaxSecret = 256;           // its MAX_SECRET_SIZE
constexpr char kSalted[] = "Salted__";
constexpr std::size_t kSaltedLen = sizeof(kSalted) - 1;
constexpr std::size_t kSaltLen = 8;

// Reads at most `limit` + 1 bytes (to tell "too long"); throws KeyFileError.
std::string read_small_file(const std::string& path, std::size_t limit, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw KeyFileError(fmt::format("{}: cannot open the {}: {}", path, what, std::strerror(errno)));
  std::string data(limit + 1, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (in.bad()) throw KeyFileError(fmt::format("{}: cannot read the {}", path, what));
  data.resize(static_cast<std::size_t>(in.gcount()));
  if (data.size() > limit)
    throw KeyFileError(fmt::format("{}: the {} is larger than {} bytes", path, what, limit));
  return data;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

}  // namespace

KeyRing::~KeyRing() {
  for (EncryptionKey& k : keys_) OPENSSL_cleanse(k.bytes.data(), k.bytes.size());
  for (MysqlKeyringKey& k : mysql_keys_) OPENSSL_cleanse(k.bytes.data(), k.bytes.size());
}

std::string decrypt_key_file(const std::string& data, const std::string& secret, const std::string& name) {
  if (data.size() < kSaltedLen + kSaltLen || data.compare(0, kSaltedLen, kSalted) != 0)
    throw KeyFileError(fmt::format("{}: a file key was given but the key file is not encrypted (no \"Salted__\" header)", name));
  unsigned char key[32], iv[16];
  const auto* salt = reinterpret_cast<const unsigned char*>(data.data() + kSaltedLen);
  // openssl enc's key derivation (EVP_BytesToKey, SHA-1, one round), as the plugin does it.
  if (EVP_BytesToKey(EVP_aes_256_cbc(), EVP_sha1(), salt, reinterpret_cast<const unsigned char*>(secret.data()),
                     static_cast<int>(secret.size()), 1, key, iv) != 32)
    throw KeyFileError(fmt::format("{}: cannot derive the file key", name));
  std::unique_ptr<EVP_CIPHER_CTX, CtxFree> ctx(EVP_CIPHER_CTX_new());
  const std::size_t body = data.size() - kSaltedLen - kSaltLen;
  std::string out(body + 16, '\0');
  int n1 = 0, n2 = 0;
  const bool ok =
      ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_cbc(), nullptr, key, iv) == 1 &&
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n1,
                        reinterpret_cast<const unsigned char*>(data.data() + kSaltedLen + kSaltLen),
                        static_cast<int>(body)) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + n1, &n2) == 1;
  OPENSSL_cleanse(key, sizeof key);
  OPENSSL_cleanse(iv, sizeof iv);
  if (!ok) {
    OPENSSL_cleanse(out.data(), out.size());
    throw KeyFileError(fmt::format("{}: the key file does not decrypt with the file key given (wrong --key-file-key?)", name));
  }
  out.resize(static_cast<std::size_t>(n1 + n2));
  return out;
}

void KeyRing::parse(const std::string& text, const std::string& name) {
  std::size_t line_no = 0;
  std::size_t p = 0;
  const std::size_t n = text.size();
  std::vector<EncryptionKey> found;
  // The plugin reads the file as a C string: a NUL ends it.
  const std::size_t end = std::min(n, text.find('\0'));
  while (p < end) {
    ++line_no;
    const std::size_t line_start = p;
    while (p < end && is_blank(text[p])) ++p;
    auto fail = [&](const char* why) {
      for (EncryptionKey& k : found) OPENSSL_cleanse(k.bytes.data(), k.bytes.size());
      throw KeyFileError(fmt::format("{}:{}: {} at column {}", name, line_no, why, p - line_start + 1));
    };
    if (p < end && text[p] != '#' && text[p] != '\n') {
      if (text[p] < '0' || text[p] > '9') fail("syntax error (expected `id;hex-key`)");
      std::uint64_t id = 0;
      while (p < end && text[p] >= '0' && text[p] <= '9') {
        id = id * 10 + static_cast<std::uint64_t>(text[p] - '0');
        if (id > 0xffffffffu) fail("key id out of range");
        ++p;
      }
      if (id < 1) fail("key id out of range");
      if (p >= end || text[p] != ';') fail("syntax error (expected `;` after the key id)");
      ++p;
      EncryptionKey k;
      k.id = static_cast<std::uint32_t>(id);
      k.file = name;
      while (p + 1 < end && hex_value(text[p]) >= 0 && hex_value(text[p + 1]) >= 0 && k.bytes.size() < 32) {
        k.bytes.push_back(static_cast<std::uint8_t>(hex_value(text[p]) * 16 + hex_value(text[p + 1])));
        p += 2;
      }
      if ((p < end && hex_value(text[p]) >= 0) || (k.bytes.size() != 16 && k.bytes.size() != 24 && k.bytes.size() != 32)) {
        OPENSSL_cleanse(k.bytes.data(), k.bytes.size());
        fail("invalid key (128, 192 or 256 bits in hex)");
      }
      // A later line with the same id replaces an earlier one, as in the plugin.
      bool replaced = false;
      for (EncryptionKey& f : found) {
        if (f.id == k.id) {
          OPENSSL_cleanse(f.bytes.data(), f.bytes.size());
          f = std::move(k);
          replaced = true;
          break;
        }
      }
      if (!replaced) found.push_back(std::move(k));
    }
    while (p < end && text[p] != '\n') ++p;
    if (p < end) ++p;
  }
  for (EncryptionKey& k : found) keys_.push_back(std::move(k));
  files_.push_back(name);
}

void KeyRing::load(const std::string& path, const std::string& file_key) {
  std::string data = read_small_file(path, kMaxKeyFile, "key file");
  std::string secret = file_key;
  if (secret.rfind("FILE:", 0) == 0) {
    const std::string where = secret.substr(5);
    secret = read_small_file(where, kMaxSecret + 2, "file key");
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
    if (secret.size() > kMaxSecret) throw KeyFileError(fmt::format("{}: the file key is longer than {} bytes", where, kMaxSecret));
  }
  const bool encrypted = data.size() > kSaltedLen && data.compare(0, kSaltedLen, kSalted) == 0;
  if (encrypted && secret.empty())
    throw KeyFileError(fmt::format("{}: the key file is encrypted (\"Salted__\"): give its file key (--key-file-key)", path));
  if (encrypted) {
    std::string plain = decrypt_key_file(data, secret, path);
    OPENSSL_cleanse(secret.data(), secret.size());
    OPENSSL_cleanse(data.data(), data.size());
    data.swap(plain);
    OPENSSL_cleanse(plain.data(), plain.size());
  }  // A file key given with several key files opens the encrypted ones; the others are read as they are.
  try {
    parse(data, path);
  } catch (...) {
    OPENSSL_cleanse(data.data(), data.size());
    throw;
  }
  OPENSSL_cleanse(data.data(), data.size());
}

std::vector<const EncryptionKey*> KeyRing::with_id(std::uint32_t id) const {
  std::vector<const EncryptionKey*> r;
  for (const EncryptionKey& k : keys_)
    if (k.id == id) r.push_back(&k);
  return r;
}

}  // namespace binlogctl
