#!/usr/bin/env bash
# Times binlogctl against cat and mariadb-binlog on the same large real binlog, in one run.
#
#   bench/run.sh [FILE] [REPEAT]
#   BENCH_ONLY='convert|-vv' bench/run.sh ...   # only the commands whose name matches (grep -E)
#
# FILE defaults to bench/work/mariadb-1024mb/mariadb-bin.000001 (make it with
# bench/make-large-binlog.sh). Each command runs REPEAT times (default 3) with output to
# /dev/null, each run after an untimed read of FILE; the median wall time gives MB/s, and GNU
# time's maximum resident set size gives peak RSS. Needs /usr/bin/time (Debian package "time") and
# mariadb-binlog (mariadb-client); the ratios in bench/README.md come from one run of this script.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-bench/work/mariadb-1024mb/mariadb-bin.000001}
REPEAT=${2:-3}
BIN=${BINLOGCTL:-build/binlogctl}
[ -f "$FILE" ] || { echo "no $FILE: run bench/make-large-binlog.sh first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
SIZE=$(stat -c %s "$FILE")
# Every figure assumes output goes to the null device. binlogctl before 2e4907a replaced
# /dev/null with a regular file when given "-o /dev/null" (as root): output then went to tmpfs,
# 3x slower for convert. Refuse to measure on such a machine (mknod -m 666 /dev/null c 1 3).
null_ok() { [ -c /dev/null ] || { echo "/dev/null is not a character device: results would be wrong" >&2; exit 2; }; }
null_ok
trap null_ok EXIT

measure() {  # name, command...
  local name=$1; shift
  if [ -n "${BENCH_ONLY:-}" ] && ! grep -qE -- "$BENCH_ONLY" <<<"$name"; then return 0; fi
  local times=() rss=0
  for _ in $(seq "$REPEAT"); do
    local out tf
    # Read the file again before each run, untimed: this machine's page cache lets go of an idle
    # file's pages with most memory free (15-30 MiB of 1 GiB in 20-30 s, seen with fincore), so a
    # run after a long one (mariadb-binlog -vv's 30 s) would read some of them from disk.
    cat "$FILE" > /dev/null
    tf=$(mktemp)
    /usr/bin/time -o "$tf" -f '%e %M' "$@" > /dev/null 2>/dev/null || true
    out=$(tail -n 1 "$tf")
    rm -f "$tf"
    times+=("${out% *}")
    local r=${out#* }
    (( r > rss )) && rss=$r
  done
  local med
  med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v n="$name" -v s="$SIZE" -v t="$med" -v r="$rss" \
    'BEGIN { printf "%-44s %8.2f s %10.1f MB/s %8.1f MiB peak RSS\n", n, t, (t > 0 ? s / t / 1e6 : 0), r / 1024 }'
}

echo "input: $FILE ($SIZE bytes), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "binlogctl: $($BIN --version)"
measure "cat FILE" cat "$FILE"
measure "mariadb-binlog FILE" mariadb-binlog --no-defaults "$FILE"
measure "binlogctl dump (text)" "$BIN" dump --progress never "$FILE"
measure "binlogctl dump --format json" "$BIN" dump --progress never --format json "$FILE"
measure "binlogctl dump --no-verify-checksum" "$BIN" dump --progress never --no-verify-checksum "$FILE"
measure "binlogctl verify (CRC32 on)" "$BIN" verify --progress never "$FILE"
measure "mariadb-binlog --base64-output=decode-rows -vv" mariadb-binlog --no-defaults --base64-output=decode-rows -vv "$FILE"
measure "binlogctl convert --format json" "$BIN" convert --progress never --format json "$FILE"
measure "binlogctl convert --format json --threads 0" "$BIN" convert --progress never --format json --threads 0 "$FILE"
measure "binlogctl convert --format canal-proto" "$BIN" convert --progress never --format canal-proto "$FILE"
measure "binlogctl convert --format canal-json" "$BIN" convert --progress never --format canal-json "$FILE"
measure "binlogctl convert --format sql" "$BIN" convert --progress never --format sql "$FILE"
measure "binlogctl convert --flashback" "$BIN" convert --progress never --flashback --flashback-skip-unsafe "$FILE"
measure "binlogctl stats --format json" "$BIN" stats --progress never --format json "$FILE"
if [ -x build/bench/replay_bench ] && [ -z "${BENCH_ONLY:-}" ]; then
  echo "== replay engine (build/bench/replay_bench; cmake -DBINLOGCTL_BUILD_BENCH=ON)"
  build/bench/replay_bench "$FILE"
fi
