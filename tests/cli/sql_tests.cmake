# convert --format sql and --flashback against a private MariaDB server (included from
# tests/CMakeLists.txt; skipped, exit 77, when mariadbd is not installed).
binlogctl_cli_test(sql_server ${Python3_EXECUTABLE} ${CLI}/sql_server.py ${BIN} ${SHARED}/corpus/mariadb)
set_tests_properties(cli.sql_server PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# ... and on the fixtures, without a server.
binlogctl_cli_test(sql_output ${Python3_EXECUTABLE} ${CLI}/sql_output.py ${BIN} ${FIX} ${SHARED})
# verify --cover-from on the archives of a private primary and its replica (two servers: the
# replica's binlogs and relay logs are the point).
binlogctl_cli_test(cover ${Python3_EXECUTABLE} ${CLI}/cover.py ${BIN})
set_tests_properties(cli.cover PROPERTIES TIMEOUT 180)
