# The edges of the command line and the damage policy (included from tests/CMakeLists.txt).
binlogctl_cli_test(edges ${Python3_EXECUTABLE} ${CLI}/edges.py ${BIN} ${FIX})
binlogctl_cli_test(damage_records ${Python3_EXECUTABLE} ${CLI}/damage_records.py ${BIN} ${FIX})
binlogctl_cli_test(streams ${Python3_EXECUTABLE} ${CLI}/streams.py ${BIN} ${FIX})
binlogctl_cli_test(cut_off ${Python3_EXECUTABLE} ${CLI}/cut_off.py ${BIN} ${FIX})
binlogctl_cli_test(replay_selection ${Python3_EXECUTABLE} ${CLI}/replay_selection.py ${BIN} ${FIX})
binlogctl_cli_test(output_kept ${Python3_EXECUTABLE} ${CLI}/output_kept.py ${BIN} ${FIX})
# Every example of the rendered man pages parses when pasted (issue 36, item 7).
binlogctl_cli_test(man_examples ${Python3_EXECUTABLE} ${CLI}/man_examples.py ${BIN} ${CMAKE_BINARY_DIR}/man ${CMAKE_BINARY_DIR})
binlogctl_cli_test(read_nothing ${Python3_EXECUTABLE} ${CLI}/read_nothing.py ${BIN} ${FIX})
binlogctl_cli_test(server_options ${Python3_EXECUTABLE} ${CLI}/server_options.py ${BIN} ${FIX})
binlogctl_cli_test(mysqlbinlog_habits ${Python3_EXECUTABLE} ${CLI}/mysqlbinlog_habits.py ${BIN} ${FIX})
binlogctl_cli_test(relay_gtid_state ${Python3_EXECUTABLE} ${CLI}/relay_gtid_state.py ${BIN} ${FIX})
binlogctl_cli_test(sql_start_inside ${Python3_EXECUTABLE} ${CLI}/sql_start_inside.py ${BIN} ${FIX})
