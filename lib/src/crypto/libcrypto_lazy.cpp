// libcrypto's functions the library calls, loaded when first needed (base/lazy_library.h): AES
// for encrypted binlogs, digests and random bytes for serve's authentication.
#include "base/lazy_library.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#ifndef BINLOGCTL_LIBCRYPTO_SONAME
#error "CMake passes BINLOGCTL_LIBCRYPTO_SONAME"
#endif

namespace {
binlogctl::lazy::Library crypto{BINLOGCTL_LIBCRYPTO_SONAME, "encrypted binlogs and serve"};
}

#define LAZY(ret, name, params, args) BINLOGCTL_LAZY(crypto, ret, name, params, args)

LAZY(int, CRYPTO_memcmp, (const void* a, const void* b, size_t len), (a, b, len))
LAZY(void, ERR_error_string_n, (unsigned long e, char* buf, size_t len), (e, buf, len))
LAZY(unsigned long, ERR_get_error, (void), ())
LAZY(int, EVP_BytesToKey,
     (const EVP_CIPHER* type, const EVP_MD* md, const unsigned char* salt, const unsigned char* data, int datal,
      int count, unsigned char* key, unsigned char* iv),
     (type, md, salt, data, datal, count, key, iv))
LAZY(void, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX * c), (c))
LAZY(EVP_CIPHER_CTX*, EVP_CIPHER_CTX_new, (void), ())
LAZY(int, EVP_CIPHER_CTX_set_padding, (EVP_CIPHER_CTX * c, int pad), (c, pad))
LAZY(int, EVP_DecryptInit_ex,
     (EVP_CIPHER_CTX * ctx, const EVP_CIPHER* cipher, ENGINE* impl, const unsigned char* key, const unsigned char* iv),
     (ctx, cipher, impl, key, iv))
LAZY(int, EVP_DecryptUpdate, (EVP_CIPHER_CTX * ctx, unsigned char* out, int* outl, const unsigned char* in, int inl),
     (ctx, out, outl, in, inl))
LAZY(int, EVP_DecryptFinal_ex, (EVP_CIPHER_CTX * ctx, unsigned char* outm, int* outl), (ctx, outm, outl))
LAZY(int, EVP_EncryptInit_ex,
     (EVP_CIPHER_CTX * ctx, const EVP_CIPHER* cipher, ENGINE* impl, const unsigned char* key, const unsigned char* iv),
     (ctx, cipher, impl, key, iv))
LAZY(int, EVP_EncryptUpdate, (EVP_CIPHER_CTX * ctx, unsigned char* out, int* outl, const unsigned char* in, int inl),
     (ctx, out, outl, in, inl))
LAZY(int, EVP_Digest,
     (const void* data, size_t count, unsigned char* md, unsigned int* size, const EVP_MD* type, ENGINE* impl),
     (data, count, md, size, type, impl))
LAZY(const EVP_CIPHER*, EVP_aes_128_cbc, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_192_cbc, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_256_cbc, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_128_ctr, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_192_ctr, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_256_ctr, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_128_ecb, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_192_ecb, (void), ())
LAZY(const EVP_CIPHER*, EVP_aes_256_ecb, (void), ())
LAZY(const EVP_MD*, EVP_sha1, (void), ())
LAZY(const EVP_MD*, EVP_sha256, (void), ())
LAZY(const EVP_MD*, EVP_sha512, (void), ())
LAZY(void, OPENSSL_cleanse, (void* ptr, size_t len), (ptr, len))
LAZY(int, RAND_bytes, (unsigned char* buf, int num), (buf, num))
LAZY(unsigned char*, SHA1, (const unsigned char* d, size_t n, unsigned char* md), (d, n, md))
