// libssl's functions serve calls (TLS), loaded when first needed (base/lazy_library.h).
#include "base/lazy_library.h"

#include <openssl/ssl.h>

#ifndef BINLOGCTL_LIBSSL_SONAME
#error "CMake passes BINLOGCTL_LIBSSL_SONAME"
#endif

namespace {
binlogctl::lazy::Library ssl{BINLOGCTL_LIBSSL_SONAME, "serve's TLS"};
}

#define LAZY(ret, name, params, args) BINLOGCTL_LAZY(ssl, ret, name, params, args)

LAZY(const SSL_METHOD*, TLS_server_method, (void), ())
LAZY(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* meth), (meth))
LAZY(void, SSL_CTX_free, (SSL_CTX * ctx), (ctx))
LAZY(long, SSL_CTX_ctrl, (SSL_CTX * ctx, int cmd, long larg, void* parg), (ctx, cmd, larg, parg))
LAZY(int, SSL_CTX_check_private_key, (const SSL_CTX* ctx), (ctx))
LAZY(int, SSL_CTX_use_PrivateKey_file, (SSL_CTX * ctx, const char* file, int type), (ctx, file, type))
LAZY(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX * ctx, const char* file), (ctx, file))
LAZY(SSL*, SSL_new, (SSL_CTX * ctx), (ctx))
LAZY(void, SSL_free, (SSL * s), (s))
LAZY(long, SSL_ctrl, (SSL * s, int cmd, long larg, void* parg), (s, cmd, larg, parg))
LAZY(int, SSL_set_fd, (SSL * s, int fd), (s, fd))
LAZY(int, SSL_accept, (SSL * s), (s))
LAZY(int, SSL_read, (SSL * s, void* buf, int num), (s, buf, num))
LAZY(int, SSL_write, (SSL * s, const void* buf, int num), (s, buf, num))
LAZY(int, SSL_pending, (const SSL* s), (s))
LAZY(int, SSL_get_error, (const SSL* s, int ret_code), (s, ret_code))
LAZY(int, SSL_shutdown, (SSL * s), (s))
