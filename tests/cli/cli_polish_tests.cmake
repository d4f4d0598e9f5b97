# The command line as DBAs expect it: usage, filters, escaping, exits, time zones (included from
# tests/CMakeLists.txt).
binlogctl_cli_test(cli_polish ${Python3_EXECUTABLE} ${CLI}/cli_polish.py ${BIN} ${FIX})
