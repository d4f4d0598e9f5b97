# binlogctl serve (issue 31): real clients (a mariadbd replica, mariadb-binlog -R, binlogctl -R,
# python-mysql-replication) against serve; one source and one replica server for the whole file
# (included from tests/CMakeLists.txt). Skips (77) without mariadbd or without the serve subcommand.
binlogctl_cli_test(serve ${Python3_EXECUTABLE} ${CLI}/serve.py ${BIN})
set_tests_properties(cli.serve PROPERTIES TIMEOUT 400)
