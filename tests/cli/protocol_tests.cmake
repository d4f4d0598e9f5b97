# binlogctl serve, the protocol side: bad clients, mariadb-binlog -R --raw byte for byte, status
# (included from tests/CMakeLists.txt; the replica suites are serve_tests.cmake). Skips (77)
# without the MariaDB client programs.
if(TARGET binlogctl_serve)
  binlogctl_cli_test(serve_protocol ${Python3_EXECUTABLE} ${CLI}/protocol_checks.py ${BIN} ${CMAKE_SOURCE_DIR})
  set_tests_properties(cli.serve_protocol PROPERTIES TIMEOUT 120)
  binlogctl_cli_test(man_serve ${Python3_EXECUTABLE} ${CLI}/help_vs_man.py ${BIN} serve ${CMAKE_SOURCE_DIR}/man/binlogctl-serve.1.scd)
endif()
