# Reading a live server (-R, and later fetch): one private mariadbd for the whole file (included
# from tests/CMakeLists.txt). Skips (77) without mariadbd or without libmariadb.
binlogctl_cli_test(remote ${Python3_EXECUTABLE} ${CLI}/remote.py ${BIN})
set_tests_properties(cli.remote PROPERTIES TIMEOUT 300)
binlogctl_cli_test(man_fetch ${Python3_EXECUTABLE} ${CLI}/help_vs_man.py ${BIN} fetch ${CMAKE_SOURCE_DIR}/man/binlogctl-fetch.1.scd)
# A live server across a crash (kill -9) and a clean restart: fetch, dump -R and verify -R
# --stop-never follow it (issue 36, item 11). One private mariadbd.
binlogctl_cli_test(live_restart ${Python3_EXECUTABLE} ${CLI}/live_restart.py ${BIN})
set_tests_properties(cli.live_restart PROPERTIES TIMEOUT 240)
