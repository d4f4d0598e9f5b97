# binlogctl schema (included from tests/CMakeLists.txt).
# On the fixtures and the shared corpora, without a server ...
binlogctl_cli_test(schema_cmd ${Python3_EXECUTABLE} ${CLI}/schema_cmd.py ${BIN} ${FIX} ${SHARED}/corpus/mariadb)
# ... and against a private MariaDB server (skipped, exit 77, when mariadbd is not installed).
binlogctl_cli_test(schema_server ${Python3_EXECUTABLE} ${CLI}/schema_server.py ${BIN})
set_tests_properties(cli.schema_server PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
# Every long option printed by --help is documented in the man page.
binlogctl_cli_test(man_schema ${Python3_EXECUTABLE} ${CLI}/help_vs_man.py ${BIN} schema ${CMAKE_SOURCE_DIR}/man/binlogctl-schema.1.scd)
