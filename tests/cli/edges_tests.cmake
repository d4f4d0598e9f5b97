# The edges of the command line and the damage policy (included from tests/CMakeLists.txt).
binlogctl_cli_test(edges ${Python3_EXECUTABLE} ${CLI}/edges.py ${BIN} ${FIX})
binlogctl_cli_test(damage_records ${Python3_EXECUTABLE} ${CLI}/damage_records.py ${BIN} ${FIX})
binlogctl_cli_test(streams ${Python3_EXECUTABLE} ${CLI}/streams.py ${BIN} ${FIX})
binlogctl_cli_test(cut_off ${Python3_EXECUTABLE} ${CLI}/cut_off.py ${BIN} ${FIX})
binlogctl_cli_test(replay_selection ${Python3_EXECUTABLE} ${CLI}/replay_selection.py ${BIN} ${FIX})
# replay reads rows as convert does: a TABLE_MAP that does not decode, a map from an excluded
# transaction (#37 item 1).
binlogctl_cli_test(replay_stream_edges ${Python3_EXECUTABLE} ${CLI}/replay_stream_edges.py ${BIN} ${FIX})
binlogctl_cli_test(output_kept ${Python3_EXECUTABLE} ${CLI}/output_kept.py ${BIN} ${FIX})
# Every example of the rendered man pages parses when pasted (issue 36, item 7).
binlogctl_cli_test(man_examples ${Python3_EXECUTABLE} ${CLI}/man_examples.py ${BIN} ${CMAKE_BINARY_DIR}/man ${CMAKE_BINARY_DIR})
binlogctl_cli_test(read_nothing ${Python3_EXECUTABLE} ${CLI}/read_nothing.py ${BIN} ${FIX})
binlogctl_cli_test(server_options ${Python3_EXECUTABLE} ${CLI}/server_options.py ${BIN} ${FIX})
binlogctl_cli_test(mysqlbinlog_habits ${Python3_EXECUTABLE} ${CLI}/mysqlbinlog_habits.py ${BIN} ${FIX})
binlogctl_cli_test(relay_gtid_state ${Python3_EXECUTABLE} ${CLI}/relay_gtid_state.py ${BIN} ${FIX})
binlogctl_cli_test(sql_start_inside ${Python3_EXECUTABLE} ${CLI}/sql_start_inside.py ${BIN} ${FIX})
binlogctl_cli_test(dump_filter ${Python3_EXECUTABLE} ${CLI}/dump_filter.py ${BIN} ${FIX})
binlogctl_cli_test(filter_glob ${Python3_EXECUTABLE} ${CLI}/filter_glob.py ${BIN} ${FIX})
binlogctl_cli_test(stats_zone ${Python3_EXECUTABLE} ${CLI}/stats_zone.py ${BIN} ${FIX})
binlogctl_cli_test(diagnostics ${Python3_EXECUTABLE} ${CLI}/diagnostics.py ${BIN} ${FIX})
if(TARGET binlogctl_canal)  # the Canal formats too, their protobuf checked by protoc
  binlogctl_cli_test(huge_statement ${Python3_EXECUTABLE} ${CLI}/huge_statement.py ${BIN} ${FIX} ${CMAKE_SOURCE_DIR}/bench
                     ${Protobuf_PROTOC_EXECUTABLE} ${CMAKE_SOURCE_DIR}/proto)
else()
  binlogctl_cli_test(huge_statement ${Python3_EXECUTABLE} ${CLI}/huge_statement.py ${BIN} ${FIX} ${CMAKE_SOURCE_DIR}/bench)
endif()
if(TARGET binlogctl_canal)  # every consumer, the Canal formats among them, refuses a rows event wider than its table
  binlogctl_cli_test(rows_width ${Python3_EXECUTABLE} ${CLI}/rows_width.py ${BIN} ${FIX})
endif()
