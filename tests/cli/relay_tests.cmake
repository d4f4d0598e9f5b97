# binlogctl serve --upstream (issue 33): the relay under a real upstream mariadbd's bounded workload,
# with a mariadbd replica and two mariadb-binlog -R --raw clients (a slow one, a stalling one)
# downstream; one upstream and one replica server for the whole file (included from
# tests/CMakeLists.txt). Skips (77) without mariadbd or without serve --upstream.
binlogctl_cli_test(relay ${Python3_EXECUTABLE} ${CLI}/relay.py ${BIN})
set_tests_properties(cli.relay PROPERTIES TIMEOUT 300)
# serve --upstream A,C,B: failover (issue 33, item 3): A killed mid-workload, C (a conflicting history)
# refused, B (a replica of the relay, promoted) goes on; a replica and a raw client downstream; serve
# started again on the directory goes on by GTID. Four small private servers.
binlogctl_cli_test(failover ${Python3_EXECUTABLE} ${CLI}/failover.py ${BIN})
set_tests_properties(cli.failover PROPERTIES TIMEOUT 300)
