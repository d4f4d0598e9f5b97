# The edges of the command line and the damage policy (included from tests/CMakeLists.txt).
binlogctl_cli_test(edges ${Python3_EXECUTABLE} ${CLI}/edges.py ${BIN} ${FIX})
binlogctl_cli_test(damage_records ${Python3_EXECUTABLE} ${CLI}/damage_records.py ${BIN} ${FIX})
binlogctl_cli_test(streams ${Python3_EXECUTABLE} ${CLI}/streams.py ${BIN} ${FIX})
binlogctl_cli_test(cut_off ${Python3_EXECUTABLE} ${CLI}/cut_off.py ${BIN} ${FIX})
binlogctl_cli_test(replay_selection ${Python3_EXECUTABLE} ${CLI}/replay_selection.py ${BIN} ${FIX})
binlogctl_cli_test(output_kept ${Python3_EXECUTABLE} ${CLI}/output_kept.py ${BIN} ${FIX})
binlogctl_cli_test(read_nothing ${Python3_EXECUTABLE} ${CLI}/read_nothing.py ${BIN} ${FIX})
binlogctl_cli_test(relay_gtid_state ${Python3_EXECUTABLE} ${CLI}/relay_gtid_state.py ${BIN} ${FIX})
