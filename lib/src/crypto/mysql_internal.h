// MySQL 8.0.14+ encrypted binlogs inside the decrypting input seam (crypto.h), and what the
// MariaDB and MySQL decryptions share.
#pragma once

#include <binlogctl/crypto.h>
#include <binlogctl/source.h>

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace binlogctl::detail {

// The source starts with the magic number of a MySQL encrypted binlog (fd 62 69 6e).
bool is_mysql_encrypted(Source& s);

// The decrypted stream of a MySQL encrypted binlog at the stream's offsets (see crypto.h):
// read at any offset when the file's size is known (decrypted into one buffer of a chunk or an
// event, memory flat), else as a stream. When the file cannot be decrypted the source is
// empty, with a read error of code Errc::decrypt_failed.
std::unique_ptr<Source> mysql_decrypting_source(std::unique_ptr<Source> in, const KeyRing& keys);

// EVP_DecryptUpdate over n bytes at `in` into `out` (the same place allowed), going on from
// where the last call on `ctx` stopped, in pieces of at most 1 GiB (EVP takes an int length).
// False when OpenSSL fails.
bool evp_decrypt_update(EVP_CIPHER_CTX* ctx, const std::uint8_t* in, std::size_t n, std::uint8_t* out);

}  // namespace binlogctl::detail
