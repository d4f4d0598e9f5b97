# binlogctl serve --upstream (issue 33): the relay under a real upstream mariadbd's bounded workload,
# with a mariadbd replica and two mariadb-binlog -R --raw clients (a slow one, a stalling one)
# downstream; one upstream and one replica server for the whole file (included from
# tests/CMakeLists.txt). Skips (77) without mariadbd or without serve --upstream.
binlogctl_cli_test(relay ${Python3_EXECUTABLE} ${CLI}/relay.py ${BIN})
set_tests_properties(cli.relay PROPERTIES TIMEOUT 300)
