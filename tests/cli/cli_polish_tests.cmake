# The command line as DBAs expect it: usage, filters, escaping, exits, time zones (included from
# tests/CMakeLists.txt).
binlogctl_cli_test(cli_polish ${Python3_EXECUTABLE} ${CLI}/cli_polish.py ${BIN} ${FIX})
binlogctl_cli_test(install ${Python3_EXECUTABLE} ${CLI}/install_check.py ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR}/man "${SCDOC}")
