# End-to-end tests: the binlogctl binary on real files (ctest label "cli").
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(BIN $<TARGET_FILE:binlogctl>)
set(CLI ${CMAKE_CURRENT_SOURCE_DIR}/cli)
set(FIX ${CMAKE_SOURCE_DIR}/testdata/mariadb-10.11)
set(SHARED ${CMAKE_SOURCE_DIR}/../shared)

function(binlogctl_cli_test name)
  add_test(NAME cli.${name} COMMAND ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# golden: binlogctl_golden_test(name EXPECT_RC n GOLDEN file ARGS ...)
function(binlogctl_golden_test name)
  cmake_parse_arguments(G "" "EXPECT_RC;GOLDEN" "ARGS" ${ARGN})
  string(REPLACE ";" "|" args "${G_ARGS}")
  add_test(NAME cli.golden.${name}
           COMMAND ${CMAKE_COMMAND} -DBINLOGCTL=${BIN} -DGOLDEN=${G_GOLDEN} -DEXPECT_RC=${G_EXPECT_RC}
                   -DARGS=${args} -DWORKDIR=${FIX} -P ${CLI}/run_golden.cmake)
  set_tests_properties(cli.golden.${name} PROPERTIES LABELS cli)
endfunction()

# dump == SHOW BINLOG EVENTS, field for field, on the project's own fixtures ...
foreach(set basic nochecksum compressed metadata)
  binlogctl_cli_test(show_events.${set} ${Python3_EXECUTABLE} ${CLI}/compare_show_events.py ${BIN}
                     ${FIX}/${set}/binlogs ${FIX}/${set}/expected/show-binlog-events)
endforeach()
# ... the encrypted set decrypted with its key file (the server listed what it decrypts) ...
binlogctl_cli_test(show_events.encrypted ${Python3_EXECUTABLE} ${CLI}/compare_show_events.py ${BIN}
                   ${FIX}/encrypted/binlogs ${FIX}/encrypted/expected/show-binlog-events
                   --key-file ${FIX}/encrypted/keys.txt)
# ... and on the shared MariaDB corpus (skipped without ../shared).
foreach(set txn types)
  binlogctl_cli_test(show_events.shared_${set} ${Python3_EXECUTABLE} ${CLI}/compare_show_events.py ${BIN}
                     ${SHARED}/corpus/mariadb/${set}/binlogs ${SHARED}/corpus/mariadb/${set}/expected/show-binlog-events)
endforeach()
binlogctl_cli_test(public_corpus ${Python3_EXECUTABLE} ${CLI}/public_corpus.py ${BIN} ${SHARED}/corpus/public)

# Golden outputs of dump (text, JSON with --decode) on committed fixtures.
binlogctl_golden_test(dump_text EXPECT_RC 0 GOLDEN ${CMAKE_SOURCE_DIR}/testdata/golden/basic.000002.dump.txt
                      ARGS dump basic/binlogs/mariadb-bin.000002)
binlogctl_golden_test(dump_json_decode EXPECT_RC 0 GOLDEN ${CMAKE_SOURCE_DIR}/testdata/golden/basic.000002.dump.jsonl
                      ARGS dump --format json --decode basic/binlogs/mariadb-bin.000002)
binlogctl_golden_test(dump_compressed_decode EXPECT_RC 0 GOLDEN ${CMAKE_SOURCE_DIR}/testdata/golden/compressed.000001.dump.jsonl
                      ARGS dump --format json --decode compressed/binlogs/mariadb-bin.000001)
binlogctl_golden_test(dump_hexdump EXPECT_RC 0 GOLDEN ${CMAKE_SOURCE_DIR}/testdata/golden/nochecksum.000001.hexdump.txt
                      ARGS dump --hexdump --stop-position 400 nochecksum/binlogs/mariadb-bin.000001)

# Errors and exit codes.
set(EXPECT ${Python3_EXECUTABLE} ${CLI}/expect_run.py)
binlogctl_cli_test(encrypted ${EXPECT} --rc 1 --stderr-contains "mariadb-bin.000001:256: error: unsupported_format"
                   -- ${BIN} dump ${FIX}/encrypted/binlogs/mariadb-bin.000001)
binlogctl_cli_test(usage_no_subcommand ${EXPECT} --rc 2 -- ${BIN})
binlogctl_cli_test(usage_bad_format ${EXPECT} --rc 2 -- ${BIN} dump --format xml ${FIX}/basic/binlogs/mariadb-bin.000001)
binlogctl_cli_test(usage_bad_option ${EXPECT} --rc 2 -- ${BIN} dump --no-such-option x)
binlogctl_cli_test(missing_file ${EXPECT} --rc 2 --stderr-contains "/nonexistent/binlog.000001: offset 0: file not found"
                   -- ${BIN} dump /nonexistent/binlog.000001)
binlogctl_cli_test(missing_from_index ${EXPECT} --rc 2 --stderr-contains "file not found"
                   -- ${BIN} dump ${CLI}/data/missing.index)
binlogctl_cli_test(help ${EXPECT} --rc 0 --stdout-contains=--start-position -- ${BIN} dump --help)
binlogctl_cli_test(version ${EXPECT} --rc 0 --stdout-contains "(CRC32: " -- ${BIN} --version)
binlogctl_cli_test(stdin ${EXPECT} --rc 0 --stdin ${FIX}/basic/binlogs/mariadb-bin.000001
                   --same-stdout-as "${BIN} dump --format json ${FIX}/basic/binlogs/mariadb-bin.000001"
                   --reference-sub "\"log_name\":\"mariadb-bin.000001\"" "\"log_name\":\"-\""
                   -- ${BIN} dump --format json -)
binlogctl_cli_test(index_order ${EXPECT} --rc 0 --stdout-contains "mariadb-bin.000003"
                   -- ${BIN} dump ${FIX}/basic/binlogs/mariadb-bin.index)
binlogctl_cli_test(datetime_filter ${EXPECT} --rc 0 --stdout-contains "Log_name"
                   -- ${BIN} dump --start-datetime "2024-02-01 00:00:00" --stop-datetime "2030-01-01" ${FIX}/basic/binlogs)

# verify: the public corpus per MANIFEST.md (skipped without ../shared).
binlogctl_cli_test(verify_corpus bash ${CLI}/verify_corpus.sh ${BIN} ${SHARED})
binlogctl_cli_test(verify_damage_large ${Python3_EXECUTABLE} ${CLI}/verify_damage_large.py ${BIN} ${SHARED}/corpus/public)
binlogctl_cli_test(verify_fixtures ${EXPECT} --rc 0 --stdout-contains "\"errors\":0"
                   -- ${BIN} verify --format json ${FIX}/basic/binlogs/mariadb-bin.index)

# replay: a real chain through each policy, invariants checked, summary keys present.
foreach(policy doc ticdc none blocking)
  binlogctl_cli_test(replay_${policy} ${EXPECT} --rc 0 --stdout-contains "\"ok\":true"
                     --stdout-contains "\"trace_hash\"" --stdout-contains "\"latency_ms\""
                     -- ${BIN} replay --format json --policy ${policy} --quota 64K
                        --sink "shop\\..*=latency:5ms,cap:200KB/s" ${FIX}/basic/binlogs)
endforeach()
binlogctl_cli_test(replay_bad_sink ${EXPECT} --rc 2 -- ${BIN} replay --sink "x=warp:9" ${FIX}/basic/binlogs)
# Option values that make no sense: usage errors naming the value and why (#15 point 4).
foreach(bad "hard_ratio_0|--hard-limit-ratio|0|--hard-limit-ratio 0: must be > 0"
            "hard_ratio_neg|--hard-limit-ratio|-1|--hard-limit-ratio -1: must be > 0"
            "path_pause_0|--path-pause|0|--path-pause 0: must be > 0"
            "path_resume_0|--path-resume|0|--path-resume 0: must be > 0"
            "path_resume_above|--path-resume|0.3|--path-resume 0.3 is above --path-pause 0.2"
            "area_resume_above|--area-resume|0.9|--area-resume 0.9 is above --area-pause 0.8"
            "drop_rate_2|--drop-rate|2|--drop-rate 2: must be in"
            "drop_rate_neg|--drop-rate|-1|--drop-rate -1: must be in"
            "watchdog_0|--watchdog|0|--watchdog 0: must be a positive duration")
  string(REPLACE "|" ";" parts "${bad}")
  list(GET parts 0 name)
  list(GET parts 1 opt)
  list(GET parts 2 val)
  list(GET parts 3 msg)
  binlogctl_cli_test(replay_usage_${name} ${EXPECT} --rc 2 --stderr-contains "${msg}"
                     -- ${BIN} replay ${opt} ${val} ${FIX}/basic/binlogs)
endforeach()
# A run that ends with pauses open says so, and why that is not a violation (#15 point 6).
binlogctl_cli_test(replay_open_pauses ${EXPECT} --rc 0 --stdout-contains "still paused"
                   --stdout-contains "lazy resume is due"
                   -- ${BIN} replay --policy doc --quota 16K --sink ".*=latency:5ms,cap:100KB/s"
                      ${FIX}/basic/binlogs)
# --path-by hash:N hashes each row's key: buckets as computed independently, on the fixtures and
# (when ../shared is there) on the txn corpus, with its invariants under pressure (#15 point 7).
binlogctl_cli_test(replay_hash ${Python3_EXECUTABLE} ${CLI}/replay_hash.py ${BIN} ${FIX}
                   ${SHARED}/corpus/mariadb/txn/binlogs)
# The shared MariaDB corpus (configured only when ../shared is there).
if(EXISTS ${SHARED}/corpus/mariadb/txn/binlogs)
  set(TXN ${SHARED}/corpus/mariadb/txn/binlogs)
  # A resume on its way is not a deadlock (#15 point 3).
  binlogctl_cli_test(replay_resume_in_flight ${EXPECT} --rc 0 --stdout-contains "invariants      ok"
                     -- ${BIN} replay --policy doc --quota 256K --watchdog 500ms --control-delay 1s
                        --sink ".*=cap:40K/s" ${TXN})
  # One reset per gap under ticdc (#15 point 2): the protocol check would name a second one.
  binlogctl_cli_test(replay_ticdc_one_reset ${EXPECT} --rc 0 --stdout-contains "\"ok\":true"
                     -- ${BIN} replay --format json --policy ticdc --quota 256K --source-rate 1MB/s
                        --sink ".*=cap:40K/s" ${TXN})
  # blocking + barrier + drops: a real deadlock, named for what it is (#15 point 12).
  binlogctl_cli_test(replay_blocking_barrier ${EXPECT} --rc 1
                     --stdout-contains "the reader is blocked on a full queue"
                     --stdout-contains "wait at a barrier"
                     -- ${BIN} replay --policy blocking --quota 64K --seed 808
                        --sink ".*=cap:400K/s,barrier:5" --drop-rate 0.01 ${TXN})
  # The source's context checked (a removed file, a patched end_log_pos, files out of order:
  # source_context, exit 1, file and offset) and every record naming its transaction (#32).
  binlogctl_cli_test(replay_context ${Python3_EXECUTABLE} ${CLI}/replay_context.py ${BIN} ${TXN})
  # doc and transactions larger than the hard limit: let through alone, counted (#15 point 5).
  binlogctl_cli_test(replay_oversized_txn ${EXPECT} --rc 0 --stdout-contains "invariants      ok"
                     --stdout-contains "larger than the hard limit let through alone"
                     -- ${BIN} replay --policy doc --quota 4K --source-rate 1MB/s
                        --sink ".*=cap:40K/s" ${TXN})
  # ... also when no single path holds more than the hard limit but the transaction does, spread
  # over several paths (by table, schema or key hash): it used to cycle circuit breaks until the
  # 1 h drain timeout, with 484 of 4,969 delivered at --quota 1K (--path-by hash:N splits rows
  # events by key: 14,619 events). There a catch-up burst of several paths, each holding a few
  # whole transactions, is more than H too: a re-read discarded twice from the same event goes
  # through alone as well, and the summary counts it.
  foreach(case "table;1K;4969" "schema;2K;4969" "hash:64;2K;14619")
    list(GET case 0 by)
    list(GET case 1 quota)
    list(GET case 2 events)
    string(REPLACE ":" "_" tag "${by}")
    binlogctl_cli_test(replay_oversized_spread_${tag} ${EXPECT} --rc 0
                       --stdout-contains "${events} source, ${events} delivered"
                       --stdout-contains "invariants      ok"
                       --stdout-contains "larger than the hard limit let through alone"
                       --stdout-contains "re-reads discarded twice from the same event let"
                       -- ${BIN} replay --policy doc --path-by ${by} --quota ${quota}
                          --source-rate 1MB/s --sink ".*=cap:40K/s" ${TXN})
  endforeach()
endif()

# convert: the server-replay proof (row changes replayed into tables == the server's final
# contents), on the project's own fixtures and on the shared corpus; public asserted values.
foreach(set basic nochecksum compressed schema metadata)
  binlogctl_cli_test(convert_replay.${set} ${Python3_EXECUTABLE} ${CLI}/convert_replay.py ${BIN}
                     ${FIX}/${set}/binlogs ${FIX}/${set}/expected)
endforeach()
foreach(set types txn)
  binlogctl_cli_test(convert_replay.shared_${set} ${Python3_EXECUTABLE} ${CLI}/convert_replay.py ${BIN}
                     ${SHARED}/corpus/mariadb/${set}/binlogs ${SHARED}/corpus/mariadb/${set}/expected)
endforeach()
# Schema history: a file read alone with --schema FILE.sql gives the same records as the chain
# read from its start (where the names come from the DDL in the binlog); without it, @N names.
binlogctl_cli_test(convert_schema ${Python3_EXECUTABLE} ${CLI}/convert_schema.py ${BIN} ${FIX}/schema)
binlogctl_cli_test(convert_public ${Python3_EXECUTABLE} ${CLI}/convert_public.py ${BIN} ${SHARED}/corpus/public)
binlogctl_cli_test(convert_usage_bad_format ${EXPECT} --rc 2 -- ${BIN} convert --format xml ${FIX}/basic/binlogs)

# stats: per-table rows against convert, event types against dump, transactions against convert
# and verify, on the project's fixtures; MySQL payloads and partial JSON updates from the shared
# corpus (skipped without ../shared); exit codes.
foreach(set basic nochecksum compressed schema metadata)
  binlogctl_cli_test(stats.${set} ${Python3_EXECUTABLE} ${CLI}/stats_check.py --verify-transactions ${BIN}
                     ${FIX}/${set}/binlogs)
endforeach()
binlogctl_cli_test(stats.selection ${Python3_EXECUTABLE} ${CLI}/stats_check.py
                   --args "--start-datetime 2024-02-01T00:20:00" ${BIN} ${FIX}/basic/binlogs)
binlogctl_cli_test(stats.start_position ${Python3_EXECUTABLE} ${CLI}/stats_check.py
                   --args "--start-position 389" ${BIN} ${FIX}/basic/binlogs/mariadb-bin.000002)
set(RMC ${SHARED}/corpus/public/blackbeam__rust_mysql_common)
binlogctl_cli_test(stats.shared_public ${Python3_EXECUTABLE} ${CLI}/stats_check.py ${BIN}
                   ${RMC}/transaction_compression.000001 ${RMC}/update-partial-row.binlog ${RMC}/json.binlog.000001
                   ${RMC}/vector.binlog ${SHARED}/corpus/mariadb/txn/binlogs)
binlogctl_cli_test(stats.encrypted ${EXPECT} --rc 1 --stderr-contains "mariadb-bin.000001:256: error: unsupported_format"
                   --stdout-contains "\"kind\":\"summary\"" -- ${BIN} stats --format json ${FIX}/encrypted/binlogs)
binlogctl_cli_test(stats.schema_file ${EXPECT} --rc 0 --stdout-contains "\"table\":\"legacy_time\",\"inserts\":1,"
                   -- ${BIN} stats --format json --schema ${FIX}/schema/expected/schema.sql ${FIX}/schema/binlogs/mariadb-bin.000002)
binlogctl_cli_test(stats.undecodable ${EXPECT} --rc 1
                   --stderr-contains "mariadb-bin.000002:789: error: undecodable_event: WRITE_ROWS_EVENT_V1"
                   -- ${BIN} stats ${FIX}/schema/binlogs/mariadb-bin.000002)
binlogctl_cli_test(stats.missing_file ${EXPECT} --rc 2 --stderr-contains "/nonexistent/binlog.000001: offset 0: file not found"
                   -- ${BIN} stats /nonexistent/binlog.000001)
binlogctl_cli_test(stats.missing_from_index ${EXPECT} --rc 2 --stderr-contains "file not found"
                   -- ${BIN} stats ${CLI}/data/missing.index)
binlogctl_cli_test(stats.usage_bad_format ${EXPECT} --rc 2 -- ${BIN} stats --format xml ${FIX}/basic/binlogs)
binlogctl_cli_test(stats.usage_bad_interval ${EXPECT} --rc 2 --stderr-contains=--interval
                   -- ${BIN} stats --interval 0 ${FIX}/basic/binlogs)
binlogctl_cli_test(stats.usage_bad_filter ${EXPECT} --rc 2 --stderr-contains=--filter
                   -- ${BIN} stats --filter "shop(" ${FIX}/basic/binlogs)
binlogctl_cli_test(stats.filter ${EXPECT} --rc 0 --stdout-contains "\"tables\":1,\"rows\":41,"
                   -- ${BIN} stats --format json --filter "shop\\.orders" ${FIX}/basic/binlogs)
binlogctl_cli_test(stats.stdin ${EXPECT} --rc 0 --stdin ${FIX}/compressed/binlogs/mariadb-bin.000001
                   --same-stdout-as "${BIN} stats --format json ${FIX}/compressed/binlogs/mariadb-bin.000001"
                   --reference-sub "\"log_name\":\"mariadb-bin.000001\"" "\"log_name\":\"-\""
                   -- ${BIN} stats --format json -)

# Every long option printed by --help is documented in the man page.
foreach(cmd dump verify replay convert stats)
  binlogctl_cli_test(man_${cmd} ${Python3_EXECUTABLE} ${CLI}/help_vs_man.py ${BIN} ${cmd}
                     ${CMAKE_SOURCE_DIR}/man/binlogctl-${cmd}.1.scd)
endforeach()

# Canal output (convert --format canal-proto|canal-json), when built with protobuf.
if(TARGET binlogctl_canal)
  binlogctl_cli_test(canal_usage_bad_format ${EXPECT} --rc 2 -- ${BIN} convert --format canal-xml ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_protoc ${Python3_EXECUTABLE} ${CLI}/canal_protoc.py ${BIN} ${Protobuf_PROTOC_EXECUTABLE}
                     ${CMAKE_SOURCE_DIR}/proto ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_json ${Python3_EXECUTABLE} ${CLI}/canal_json.py ${BIN} ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_bad_timezone ${EXPECT} --rc 2 --stderr-contains=--timezone
                     -- ${BIN} convert --format canal-json --timezone Nowhere/Bogus ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_bad_batch_size ${EXPECT} --rc 2 -- ${BIN} convert --format canal-json --batch-size 0 ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_timezone_offset ${EXPECT} --rc 0 --stdout-contains "\"ts0\":\"1970-01-01 08:00:01\""
                     -- ${BIN} convert --format canal-json --timezone +08:00 ${FIX}/basic/binlogs)
  if(EXISTS /usr/share/zoneinfo/America/New_York)
    binlogctl_cli_test(canal_timezone_named ${EXPECT} --rc 0 --stdout-contains "\"ts0\":\"1969-12-31 19:00:01\""
                       -- ${BIN} convert --format canal-json --timezone America/New_York ${FIX}/basic/binlogs)
  endif()
  foreach(comp none zlib gzip)
    binlogctl_cli_test(canal_packets_${comp} ${Python3_EXECUTABLE} ${CLI}/canal_packets.py ${BIN}
                       ${Protobuf_PROTOC_EXECUTABLE} ${CMAKE_SOURCE_DIR}/proto ${FIX}/basic/binlogs 50 ${comp})
  endforeach()
  # Rendering threads keep a one-thread run's order, also where protobuf logs on stderr (a real
  # server's binlog with latin1 statement text; skipped, exit 77, without mariadbd).
  binlogctl_cli_test(canal_threads_server ${Python3_EXECUTABLE} ${CLI}/canal_threads_server.py ${BIN})
  set_tests_properties(cli.canal_threads_server PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
  # Schema history as Canal's table meta: names, keys and declared types where the TABLE_MAP
  # has no metadata (binlog_row_metadata=NO_LOG), from the binlog's DDL or from --schema.
  binlogctl_cli_test(canal_protoc_schema ${Python3_EXECUTABLE} ${CLI}/canal_protoc.py ${BIN} ${Protobuf_PROTOC_EXECUTABLE}
                     ${CMAKE_SOURCE_DIR}/proto ${FIX}/schema/binlogs)
  binlogctl_cli_test(canal_json_schema ${Python3_EXECUTABLE} ${CLI}/canal_json.py ${BIN} ${FIX}/schema/binlogs)
  binlogctl_cli_test(canal_schema_history ${EXPECT} --rc 0
                     --stdout-contains "\"mysqlType\":{\"id\":\"bigint unsigned\",\"ti\":\"tinyint unsigned\""
                     --stdout-contains "{\"id\":\"18446744073709551615\",\"ti\":\"255\""
                     -- ${BIN} convert --format canal-json ${FIX}/schema/binlogs)
  binlogctl_cli_test(canal_schema_file ${EXPECT} --rc 0
                     --stdout-contains "\"t6\":\"-03:00:00.000003\"}"
                     --stdout-contains "\"mysqlType\":{\"id\":\"int(11)\",\"dt0\":\"datetime\",\"dt3\":\"datetime(3)\""
                     -- ${BIN} convert --format canal-json --schema ${FIX}/schema/expected/schema.sql
                        ${FIX}/schema/binlogs/mariadb-bin.000002)
  binlogctl_cli_test(canal_gtidlog ${Python3_EXECUTABLE} ${CLI}/canal_gtidlog.py ${BIN} ${Protobuf_PROTOC_EXECUTABLE}
                     ${CMAKE_SOURCE_DIR}/proto ${FIX}/basic/binlogs ${SHARED}/corpus/public)
  binlogctl_cli_test(canal_packets_json ${EXPECT} --rc 2 -- ${BIN} convert --format canal-json --canal-packets ${FIX}/basic/binlogs)
  binlogctl_cli_test(canal_batch_ids ${EXPECT} --rc 0 --stdout-contains "\"id\":422,"
                     -- ${BIN} convert --format canal-json --batch-size 1 ${FIX}/basic/binlogs)
else()
  binlogctl_cli_test(canal_unavailable ${EXPECT} --rc 2 --stderr-contains "without protobuf"
                     -- ${BIN} convert --format canal-json ${FIX}/basic/binlogs)
endif()
