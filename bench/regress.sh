#!/usr/bin/env bash
# Catches a step back in speed: runs an OLD and a NEW binlogctl interleaved on a slice of each
# workload and prints, per input and command, the median wall and user time of each and the
# new/old ratio. It prints; it asserts nothing (the machine is shared, timings are noisy: run
# it with --old = --new first to see the noise, ratios ~1.0).
#
#   bench/regress.sh (--old PATH | --old-commit REV) [--new PATH] [options]
#
#   --old PATH          the binary to compare against
#   --old-commit REV    build REV's binlogctl first, in a temporary git worktree (under
#                       build-regress.XXXXXX/ in this tree, gitignored; ccache, ninja -j2,
#                       no tests), removed on exit
#   --new PATH          the binary under test (default: build/binlogctl of this tree)
#   --input FILE        a large binlog to slice (repeatable). Default: the 1 GiB file of each
#                       workload shape that exists, from bench/work/mariadb-1024mb,
#                       mariadb-wide-1024mb, mariadb-oltp-1024mb (bench/make-large-binlog.sh
#                       --shape mixed|wide|oltp), else /work/bench1g, /work/benchwide,
#                       /work/bencholtp
#   --mib N             slice: the first N MiB of each input, cut before the last GTID event
#                       that starts within them (a transaction boundary; default 128)
#   --rounds R          interleaved rounds (default 5): each round runs every command on every
#                       slice with both binaries, OLD then NEW in odd rounds, NEW then OLD in
#                       even ones
#   --only REGEX        only the commands whose name matches (grep -E)
#   -h, --help          this text
#
# Commands: convert json, convert canal-proto, dump json, verify, convert sql, stats (json),
# replay (its defaults), schema, and start-up (dump json of no event: --stop-position 4, what
# every command pays before its first event), output to /dev/null; wall
# time from a monotonic clock, user time from the child's rusage (it adds up every thread). A binary that fails a
# command (the old one may not have it) gets "failed (exit N)" on that line and is not timed
# again. The last line is the geometric mean of the wall ratios.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROG=regress
die() { echo "$PROG: $*" >&2; exit 2; }
note() { echo "$PROG: $*" >&2; }

OLD='' NEW='' OLD_COMMIT='' MIB=128 ROUNDS=5 ONLY=''
INPUTS=()
need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs an argument"; fi; }
while [ $# -gt 0 ]; do
    case $1 in
    --old) need_arg "$@"; OLD=$2; shift 2 ;;
    --old=*) OLD=${1#*=}; shift ;;
    --new) need_arg "$@"; NEW=$2; shift 2 ;;
    --new=*) NEW=${1#*=}; shift ;;
    --old-commit) need_arg "$@"; OLD_COMMIT=$2; shift 2 ;;
    --old-commit=*) OLD_COMMIT=${1#*=}; shift ;;
    --input) need_arg "$@"; INPUTS+=("$2"); shift 2 ;;
    --input=*) INPUTS+=("${1#*=}"); shift ;;
    --mib) need_arg "$@"; MIB=$2; shift 2 ;;
    --mib=*) MIB=${1#*=}; shift ;;
    --rounds) need_arg "$@"; ROUNDS=$2; shift 2 ;;
    --rounds=*) ROUNDS=${1#*=}; shift ;;
    --only) need_arg "$@"; ONLY=$2; shift 2 ;;
    --only=*) ONLY=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
case $MIB in ''|*[!0-9]*|0) die "--mib wants a positive integer" ;; esac
case $ROUNDS in ''|*[!0-9]*|0) die "--rounds wants a positive integer" ;; esac
[ -n "$OLD" ] || [ -n "$OLD_COMMIT" ] || die "give --old PATH or --old-commit REV"
[ -z "$OLD" ] || [ -z "$OLD_COMMIT" ] || die "--old and --old-commit exclude each other"
[ -c /dev/null ] || die "/dev/null is not a character device: timings would be wrong"
command -v python3 >/dev/null || die "needs python3"
[ -n "$NEW" ] || NEW=$ROOT/build/binlogctl
abs_bin() {  # what, path -> absolute path of an executable file
    if [ ! -f "$2" ] || [ ! -x "$2" ]; then die "$1: $2 is not an executable file"; fi
    echo "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
}
NEW=$(abs_bin --new "$NEW")
[ -z "$OLD" ] || OLD=$(abs_bin --old "$OLD")

if [ "${#INPUTS[@]}" -eq 0 ]; then
    for shape in mariadb-1024mb:/work/bench1g mariadb-wide-1024mb:/work/benchwide mariadb-oltp-1024mb:/work/bencholtp; do
        for d in "$ROOT/bench/work/${shape%%:*}" "${shape#*:}"; do
            if [ -f "$d/mariadb-bin.000001" ]; then INPUTS+=("$d/mariadb-bin.000001"); break; fi
        done
    done
    [ "${#INPUTS[@]}" -gt 0 ] || die "no bench file found (make them with bench/make-large-binlog.sh, or give --input FILE)"
fi
for f in "${INPUTS[@]}"; do [ -f "$f" ] || die "--input: no file $f"; done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/binlogctl-regress.XXXXXX")
OLD_TREE=''
cleanup() {
    local rc=$?
    if [ -n "$OLD_TREE" ]; then
        git -C "$ROOT" worktree remove --force "$OLD_TREE/src" >/dev/null 2>&1 || true
        rm -rf "$OLD_TREE"
        git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
    fi
    rm -rf "$TMP"
    return "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the old binary
if [ -n "$OLD_COMMIT" ]; then
    rev=$(git -C "$ROOT" rev-parse --verify --quiet "$OLD_COMMIT^{commit}") || die "--old-commit: no commit $OLD_COMMIT"
    if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then die "--old-commit needs cmake and ninja"; fi
    OLD_TREE=$(mktemp -d "$ROOT/build-regress.XXXXXX")
    note "building $OLD_COMMIT (${rev:0:12}) in $OLD_TREE/src (nice -n 15)"
    git -C "$ROOT" worktree add --detach "$OLD_TREE/src" "$rev" >/dev/null 2>&1 || die "git worktree add $rev failed"
    launcher=()
    if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
    if ! { nice -n 15 cmake -S "$OLD_TREE/src" -B "$OLD_TREE/src/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
               -DBINLOGCTL_WERROR=ON -DBINLOGCTL_TESTS=OFF "${launcher[@]}" &&
           nice -n 15 ninja -C "$OLD_TREE/src/build" -j2 binlogctl; } > "$TMP/old-build.log" 2>&1; then
        tail -n 30 "$TMP/old-build.log" >&2
        die "building $OLD_COMMIT failed"
    fi
    OLD=$OLD_TREE/src/build/binlogctl
    [ -x "$OLD" ] || die "no binlogctl in $OLD_TREE/src/build"
fi

# ---------------------------------------------------------------- slices
# The first MIB MiB of each input, cut where the last GTID event (MariaDB 162, MySQL 33/34)
# starting within them begins: whole transactions only, no framing error at the end.
slice() {  # src dst bytes
    python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
src, dst, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, "rb") as f:
    data = f.read(limit)
if data[:4] != b"\xfebin":
    sys.exit("%s: not a binlog file (no magic number at offset 0)" % src)
pos, cut, n = 4, 4, 0
while pos + 19 <= len(data):
    length = struct.unpack_from("<I", data, pos + 9)[0]
    if length < 19:
        sys.exit("%s: event at offset %d has length %d" % (src, pos, length))
    if data[pos + 4] in (162, 33, 34) and n > 0:
        cut = pos
    if pos + length > len(data):
        break
    pos += length
    n += 1
if cut <= 4:
    sys.exit("%s: no transaction boundary in the first %d bytes" % (src, limit))
with open(dst, "wb") as f:
    f.write(data[:cut])
PY
}
SLICES=() LABELS=()
for i in "${!INPUTS[@]}"; do
    f=${INPUTS[i]}
    label=$(basename "$(dirname "$(readlink -f "$f")")")
    s=$TMP/slice-$i.bin
    slice "$f" "$s" $((MIB * 1048576)) || die "cannot slice $f"
    SLICES+=("$s") LABELS+=("$label")
done

CMD_NAMES=("convert json" "convert canal-proto" "dump json" "verify" "convert sql" "stats" "replay" "schema" "start-up")
cmd_args() {  # index -> arguments (before the file)
    case $1 in
    0) echo "convert --progress never --format json" ;;
    1) echo "convert --progress never --format canal-proto" ;;
    2) echo "dump --progress never --format json" ;;
    3) echo "verify --progress never" ;;
    4) echo "convert --progress never --format sql" ;;
    5) echo "stats --progress never --format json" ;;
    6) echo "replay --progress never" ;;  # the default policy and sinks
    7) echo "schema --progress never" ;;
    8) echo "dump --progress never --format json --stop-position 4" ;;  # the file header only
    esac
}
CMDS=()
for c in "${!CMD_NAMES[@]}"; do
    if [ -z "$ONLY" ] || grep -qE -- "$ONLY" <<<"${CMD_NAMES[c]}"; then CMDS+=("$c"); fi
done
[ "${#CMDS[@]}" -gt 0 ] || die "--only: no command matches"

echo "old: $OLD ($("$OLD" --version 2>/dev/null | head -n 1))"
echo "new: $NEW ($("$NEW" --version 2>/dev/null | head -n 1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!SLICES[@]}"; do
    echo "slice ${LABELS[i]}: first $(stat -c %s "${SLICES[i]}") bytes of ${INPUTS[i]}"
    cat "${SLICES[i]}" > /dev/null
done
echo "rounds: $ROUNDS, interleaved (odd rounds old first, even rounds new first)"

# ---------------------------------------------------------------- runs
# RES/<slice>.<cmd>.<old|new>: one "wall user" line per run; .fail: the exit status of a failed run
RES=$TMP/res
mkdir -p "$RES"
# One timed run: wall from a monotonic clock around fork and wait, user time from wait4's
# rusage of the child (microseconds; GNU time rounds both to 10 ms, a tenth of a 64 MiB run).
cat > "$TMP/timeit.py" <<'PY'
import os, sys, time
out = sys.argv[1]
null = os.open(os.devnull, os.O_WRONLY)
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
rc = os.waitstatus_to_exitcode(status)
with open(out, "w") as f:
    f.write("%d %.4f %.4f\n" % (rc, wall, ru.ru_utime))
PY
run_one() {  # slice-index cmd-index which binary
    local key=$RES/$1.$2.$3 rc wall user
    [ ! -f "$key.fail" ] || return 0
    # shellcheck disable=SC2046 # the arguments are words
    python3 "$TMP/timeit.py" "$TMP/time.out" "$4" $(cmd_args "$2") "${SLICES[$1]}"
    read -r rc wall user < "$TMP/time.out"
    if [ "$rc" != 0 ]; then
        echo "$rc" > "$key.fail"
        return 0
    fi
    echo "$wall $user" >> "$key"
}
for r in $(seq "$ROUNDS"); do
    for c in "${CMDS[@]}"; do
        for i in "${!SLICES[@]}"; do
            if (( r % 2 == 1 )); then
                run_one "$i" "$c" old "$OLD"; run_one "$i" "$c" new "$NEW"
            else
                run_one "$i" "$c" new "$NEW"; run_one "$i" "$c" old "$OLD"
            fi
        done
    done
    note "round $r of $ROUNDS done (load average $(cut -d' ' -f1 /proc/loadavg))"
done

# ---------------------------------------------------------------- report
median() {  # column (1 wall, 2 user) file -> median
    awk -v c="$1" '{print $c}' "$2" | sort -g | awk '{a[NR]=$1} END { if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2] + a[NR/2+1]) / 2 }'
}
printf '\n%-22s %-20s %9s %9s %7s %9s %9s %7s\n' slice command "old wall" "new wall" ratio "old user" "new user" ratio
LOGSUM=0 NRATIO=0
for i in "${!SLICES[@]}"; do
    for c in "${CMDS[@]}"; do
        o=$RES/$i.$c.old n=$RES/$i.$c.new
        if [ -f "$o.fail" ] || [ -f "$n.fail" ]; then
            printf '%-22s %-20s %s\n' "${LABELS[i]}" "${CMD_NAMES[c]}" \
                "$([ -f "$o.fail" ] && echo "old failed (exit $(cat "$o.fail"))") $([ -f "$n.fail" ] && echo "new failed (exit $(cat "$n.fail"))")"
            continue
        fi
        ow=$(median 1 "$o") nw=$(median 1 "$n") ou=$(median 2 "$o") nu=$(median 2 "$n")
        line=$(awk -v l="${LABELS[i]}" -v c="${CMD_NAMES[c]}" -v ow="$ow" -v nw="$nw" -v ou="$ou" -v nu="$nu" 'BEGIN {
            rw = (ow > 0 ? nw / ow : 0); ru = (ou > 0 ? nu / ou : 0)
            printf "%-22s %-20s %8.3fs %8.3fs %7.3f %8.3fs %8.3fs %7.3f", l, c, ow, nw, rw, ou, nu, ru }')
        echo "$line"
        LOGSUM=$(awk -v s="$LOGSUM" -v ow="$ow" -v nw="$nw" 'BEGIN { printf "%.6f", s + (ow > 0 && nw > 0 ? log(nw / ow) : 0) }')
        NRATIO=$((NRATIO + 1))
    done
done
if [ "$NRATIO" -gt 0 ]; then
    awk -v s="$LOGSUM" -v n="$NRATIO" 'BEGIN { printf "geometric mean of the wall ratios (new/old) over %d lines: %.3f\n", n, exp(s / n) }'
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
