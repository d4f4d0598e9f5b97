// libmariadb's functions -R and fetch call, loaded when first needed (base/lazy_library.h).
#include "base/lazy_library.h"

#include <mysql.h>

#ifndef BINLOGCTL_LIBMARIADB_SONAME
#error "CMake passes BINLOGCTL_LIBMARIADB_SONAME"
#endif

namespace {
binlogctl::lazy::Library mariadb{BINLOGCTL_LIBMARIADB_SONAME, "reading a server (-R, fetch)"};
}

#define LAZY(ret, name, params, args) BINLOGCTL_LAZY(mariadb, ret, name, params, args)

LAZY(int, mysql_server_init, (int argc, char** argv, char** groups), (argc, argv, groups))
LAZY(MYSQL*, mysql_init, (MYSQL * m), (m))
LAZY(int, mysql_options, (MYSQL * m, enum mysql_option option, const void* arg), (m, option, arg))
LAZY(MYSQL*, mysql_real_connect,
     (MYSQL * m, const char* host, const char* user, const char* passwd, const char* db, unsigned int port,
      const char* unix_socket, unsigned long clientflag),
     (m, host, user, passwd, db, port, unix_socket, clientflag))
LAZY(void, mysql_close, (MYSQL * m), (m))
LAZY(unsigned int, mysql_errno, (MYSQL * m), (m))
LAZY(const char*, mysql_error, (MYSQL * m), (m))
LAZY(char*, mysql_get_server_info, (MYSQL * m), (m))
LAZY(my_socket, mysql_get_socket, (MYSQL * m), (m))
LAZY(const char*, mysql_get_ssl_cipher, (MYSQL * m), (m))
LAZY(int, mysql_real_query, (MYSQL * m, const char* q, unsigned long length), (m, q, length))
LAZY(MYSQL_RES*, mysql_store_result, (MYSQL * m), (m))
LAZY(unsigned int, mysql_num_fields, (MYSQL_RES * res), (res))
LAZY(MYSQL_ROW, mysql_fetch_row, (MYSQL_RES * res), (res))
LAZY(void, mysql_free_result, (MYSQL_RES * res), (res))
LAZY(unsigned long, mysql_net_read_packet, (MYSQL * m), (m))
