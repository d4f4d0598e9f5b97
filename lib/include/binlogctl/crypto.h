// Encrypted MariaDB binlogs (encrypt_binlog=ON), read offline with the server's key file; MySQL
// 8.0.14+ encrypted binlogs (binlog_encryption=ON) with its keyring_file data file (below).
//
// What the server writes (MariaDB 10.1+, sql/log_event*.cc, mysys_ssl/my_crypt.cc): the file
// starts in the clear with its magic number and format description, then a START_ENCRYPTION
// event (type 164), also in the clear:
//   body 0  1  scheme        1 (the only one)
//        1  4  key_version   the version of key id 1 (ENCRYPTION_KEY_SYSTEM_DATA) in force
//        5 12  nonce         random, one per file
// Every later event is encrypted whole, from its byte 4 to its end (the CRC32, computed over the
// plaintext, included), with AES (the key management plugin's algorithm: file_key_management
// offers AES_CBC and AES_CTR; the binlog does not say which) under key id 1, without padding, and
// with its own IV: the 12-byte nonce followed by the event's offset in the file (4 bytes, little
// endian). Before encrypting, the writer moves the timestamp (bytes 0..3) into the event_size slot
// (bytes 9..12); after, the 4 encrypted bytes of that slot go to bytes 0..3 and the event_size is
// written into its slot in the clear: readers frame the file without the key. AES_CBC ends an
// event whose length is not a multiple of 16 with MariaDB's no-padding tail: the last partial
// block is XORed with AES-ECB(key, IV).
//
// Over the replication protocol the server sends the events decrypted, and its START_ENCRYPTION
// with LOG_EVENT_IGNORABLE_F set (its CRC32 recomputed): a binlog in which START_ENCRYPTION
// carries that flag is in the clear after it. decrypting_inputs() turns an encrypted file into
// exactly that, offset for offset: what `binlogctl fetch` and `mariadb-binlog -R --raw` store.
#pragma once

#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace binlogctl {

// The key id a MariaDB server encrypts binlogs with (ENCRYPTION_KEY_SYSTEM_DATA).
inline constexpr std::uint32_t kBinlogKeyId = 1;
inline constexpr std::uint16_t kIgnorableEventFlag = 0x80;  // LOG_EVENT_IGNORABLE_F

// A key file that cannot be used (unreadable, syntax error, wrong file key): the message names
// the file as given and the line, never a key.
class KeyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EncryptionKey {
  std::uint32_t id = 0;
  std::vector<std::uint8_t> bytes;  // 16, 24 or 32
  std::string file;                 // the key file as the user named it
};

// A key of a MySQL keyring_file data file (plugin/keyring: keyring_file_data), de-obfuscated.
struct MysqlKeyringKey {
  std::string id;       // "MySQLReplicationKey_<server uuid>_<seqno>" for a binlog master key
  std::string type;     // "AES", "RSA", "DSA"
  std::string user_id;  // empty for the server's own keys
  std::vector<std::uint8_t> bytes;
  std::string file;     // the keyring file as the user named it
};

// Keys from one or more key files in MariaDB's file_key_management format: one `id;hex-key` per
// line (id 1..2^32-1, a 128-, 192- or 256-bit key in hex), `#` comments, blank lines. A file that
// starts with "Salted__" is the encrypted variant (file_key_management_filekey: `openssl enc
// -aes-256-cbc -md sha1 -k SECRET`), opened with `file_key` (the secret itself, or FILE:path to
// read it from a file; a key file in the clear is read as it is). The keys are wiped from memory
// when the ring goes.
class KeyRing {
 public:
  KeyRing() = default;
  ~KeyRing();
  KeyRing(const KeyRing&) = delete;
  KeyRing& operator=(const KeyRing&) = delete;

  // Throws KeyFileError.
  void load(const std::string& path, const std::string& file_key = {});
  // Parses a key file's text (tests, fuzzers); `name` is how messages name it.
  void parse(const std::string& text, const std::string& name);
  // Every key with this id, in the order the files were given (key rotation: a server whose key
  // file changed between restarts wrote its older binlogs under another key with the same id).
  std::vector<const EncryptionKey*> with_id(std::uint32_t id) const;
  const std::vector<std::string>& files() const noexcept { return files_; }

  // MySQL 8.0.14+ binlog_encryption: the keys of a keyring_file plugin data file (its
  // keyring_file_data), in the layout plugin/keyring/ writes (buffered_file_io.cc, checker/,
  // common/keyring_key.cc): "Keyring file version:2.0" (or "...:1.0"), then the keys, each
  // five 64-bit little-endian lengths (the entry's size padded to 8, the key id's, the key
  // type's, the user id's and the key's), the three strings and the key bytes (XORed with the
  // plugin's obfuscation string) padded to 8 bytes, then "EOF" and, in version 2.0, the SHA-256
  // of the keys' bytes. Every length is checked against the file; a bad digest, version or
  // layout throws KeyFileError naming the file (and the byte offset). 64-bit little-endian
  // files only (what x86-64 and ARM64 servers write; the plugin also reads 32-bit and
  // big-endian ones). A key id present in several files: the first file given wins.
  void load_mysql_keyring(const std::string& path);
  void parse_mysql_keyring(Bytes data, const std::string& name);
  const MysqlKeyringKey* mysql_key(const std::string& id) const;
  const std::vector<std::string>& keyring_files() const noexcept { return keyring_files_; }

 private:
  std::vector<EncryptionKey> keys_;
  std::vector<std::string> files_;
  std::vector<MysqlKeyringKey> mysql_keys_;
  std::vector<std::string> keyring_files_;
};

// MySQL 8.0.14+ encrypted binlog file header (sql/rpl_log_encryption.cc,
// Rpl_encryption_header_v1), 512 bytes in the clear:
//   0  4  magic fd 62 69 6e
//   4  1  version (1, the only one)
//   5  .. fields up to a type 0 (or the header's end): type 1 the key id (a length byte, then
//         the id: the replication master key in the keyring), type 2 the 32-byte file password
//         encrypted with that key (AES-256-CBC, no padding, the IV below), type 3 that 16-byte
//         IV; other types are an error.
// From offset 512 on the file is the binlog (magic fe 62 69 6e, events) encrypted with
// AES-256-CTR (sql/stream_cipher.cc): key and IV from EVP_BytesToKey(SHA-512, no salt, one
// round) of the file password, i.e. SHA-512(password)[0,32) and [32,48), the IV's last 8 bytes
// replaced by the big-endian block counter: offset (in the stream, file offset - 512) / 16.
// The server's positions (SHOW BINLOG EVENTS, log_pos, replication) are those of the
// decrypted stream: the file is read as if it were the stream (Binlog_encryption_istream::seek
// seeks to offset + 512).
inline constexpr std::size_t kMysqlEncryptionHeaderSize = 512;
struct MysqlEncryptionHeader {
  std::string key_id;
  std::uint8_t encrypted_password[32] = {};
  std::uint8_t iv[16] = {};
};
// Parses the header at the start of `file` (at least its first 512 bytes); on failure returns
// false with `error` saying why and `error_offset` where in the file.
bool parse_mysql_encryption_header(Bytes file, MysqlEncryptionHeader& out, std::string& error,
                                   std::uint64_t& error_offset);

// Decrypts a file_key_management key file encrypted by `openssl enc -aes-256-cbc -md sha1 -k`
// (the "Salted__" format) with `secret`; throws KeyFileError naming `name` when it does not
// decrypt. Public for tests.
std::string decrypt_key_file(const std::string& data, const std::string& secret, const std::string& name);

// The input seam, decrypting. A MySQL encrypted binlog (magic fd 62 69 6e) is read as the
// decrypted stream it holds, at the stream's offsets (the server's positions: file offset -
// 512), with the keyring_file keys: a header that cannot be parsed, a key id not in the
// keyring, or a file password that does not decrypt the stream's magic number makes the
// source empty with a read error of code Errc::decrypt_failed at offset 0 whose message names
// the encrypted file's offset, the key id and the keyring files. MariaDB: each file of `inner`
// whose START_ENCRYPTION is not flagged
// ignorable is read through a decrypting stream (its events in the clear at the same offsets,
// START_ENCRYPTION flagged ignorable as a server sends it); streamed inputs (stdin, archives)
// always are, since a later file of a concatenation may be encrypted. Files in the clear are
// handed out as they are. When no key decrypts a file (wrong key, key id 1 missing) or its
// encrypted part cannot be framed, its stream ends at that event with a read error of code
// Errc::decrypt_failed whose message names the offset, the key id and the key files: the event
// stream reports it as the check decryption_failed. `inner` and `keys` must outlive the set.
std::unique_ptr<InputSet> decrypting_inputs(InputSet& inner, const KeyRing& keys);

// One opened file as decrypting_inputs() reads it (returned as it is when it needs no decrypting).
// A file of known size is decrypted ahead on a thread of its own (read with Source::read_at into
// memory laid out as the file and decrypted there in place), a stream as it is read.
std::unique_ptr<Source> decrypting_source(std::unique_ptr<Source> in, const KeyRing& keys);

// One file read at any event boundary, for serve (each replica starts where it asks; a file that
// grew is read again from where its stream stopped): every window must start where an event
// does, or inside the file's magic number, format description and the event after it, which are
// read from the start of the file whenever a window reaches back into them. Each event is
// decrypted when a window reaches it, into one buffer of about an event (memory flat). A file in
// the clear is handed out as it is. `in`'s gaps (Source::gap_at) are the view's. A decryption
// failure is a read error of code Errc::decrypt_failed, as in decrypting_inputs().
std::unique_ptr<Source> decrypting_view(std::unique_ptr<Source> in, const KeyRing& keys);

}  // namespace binlogctl
