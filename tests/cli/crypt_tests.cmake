# Encrypted MariaDB binlogs (encrypt_binlog=ON, file_key_management): one private mariadbd,
# restarted with a rotated key and with AES_CTR; -R and fetch against offline --key-file.
# Skips (77) without mariadbd, the plugin or libmariadb.
binlogctl_cli_test(encrypted_server ${Python3_EXECUTABLE} ${CLI}/encrypted.py ${BIN})
set_tests_properties(cli.encrypted_server PROPERTIES TIMEOUT 240)

# Encrypted MySQL 8.0.14+ binlogs (binlog_encryption, keyring_file): the one real file of
# testdata/mysql-8-encrypted read with --keyring-file against its clear copy; the errors. No server.
binlogctl_cli_test(encrypted_mysql ${Python3_EXECUTABLE} ${CLI}/encrypted_mysql.py ${BIN})
set_tests_properties(cli.encrypted_mysql PROPERTIES TIMEOUT 60)

# libcrypto, libssl and libmariadb loaded only when needed: not for a clear file; libcrypto for an
# encrypted one; a libcrypto that cannot be loaded is named, exit 127. No server.
binlogctl_cli_test(lazy_libs ${Python3_EXECUTABLE} ${CLI}/lazy_libs.py ${BIN})
set_tests_properties(cli.lazy_libs PROPERTIES TIMEOUT 60)
