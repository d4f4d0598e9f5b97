#!/usr/bin/env bash
# Runs two binlogctl binaries on the same cases and compares stdout, stderr, exit status
# (and the file written with -o, where a case writes one) byte for byte: the proof that a
# refactor preserved behaviour.
#
#   scripts/compare-outputs.sh --old PATH [--new PATH] [options]
#   scripts/compare-outputs.sh --old-commit REV [--new PATH] [options]
#
#   --old PATH          the binary before the change
#   --old-commit REV    build REV's binlogctl first, in a temporary git worktree (under
#                       build-compare.XXXXXX/ in this tree, gitignored; ccache, ninja -j2,
#                       no tests), removed on exit
#   --new PATH          the binary after the change (default: build/binlogctl of this tree)
#   --bench FILE        also run every case on FILE (repeatable; default: the 64 MiB bench
#                       binlog of each shape, mariadb-64mb/ and mariadb-wide-64mb/, from
#                       bench/work/ or else /work/benchdata/, those that exist, skipped with
#                       a note when none does); --no-bench skips them
#   --shared DIR        the shared corpus root (default ../shared; skipped when absent)
#   --quick             the repository's fixtures (and their damaged copies) only
#   --filter REGEX      only the cases whose name matches (an extended regular expression)
#   -j, --jobs N        cases run N at a time (default 2; the old and new runs of a case
#                       one after the other)
#   --list              print the case names and exit
#   --times FILE        write each case's wall time (both runs, seconds) to FILE, slowest first
#   --timeout SECONDS   per run (default 300; a timeout is exit status 124, compared too)
#   --keep              keep the temporary directory (its path is printed)
#   -h, --help          this text
#
# Cases: every input (each binlog of testdata/mariadb-10.11 and of the shared corpus, the
# directories and index files as chains, truncated and bit-flipped copies of several files,
# a .gz (and .zst) copy, standard input, the bench file) through dump (text, json, json
# --decode, hexdump), verify (text, json), convert (json, json --threads 0, canal-json,
# canal-proto to a file; sql, sql --sql-set all, --flashback with and without
# --flashback-skip-unsafe, and with a 4 KiB --flashback-memory so that it spills; sql and the
# spilling flashback again with --threads 0), stats
# (text, json), replay (json with a timeline file, text with an SVG plot, --path-by hash:N,
# --filter, a start and stop position) and schema (text, json, --history in both, --history
# seeded with the schema fixture's --schema file). Both binaries run with the same arguments, paths and working directory.
# Nothing is rewritten, except that canal-json's "ts" (the wall clock by design) is made
# deterministic by running those cases under libfaketime's frozen clock (package faketime);
# without it, the digits of "ts" are set to 0 on both sides, with a note.
#
# Output: one FAIL line per differing case (which streams differ, where, the lines there),
# a few indented detail lines under it, then exactly "compare: N passed, M failed".
# Exit status: 0 when nothing differs, 1 when something does, 2 on usage errors (and when
# the old commit does not build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROG=compare-outputs

usage_error() {
    echo "$PROG: $*" >&2
    echo "usage: scripts/compare-outputs.sh (--old PATH | --old-commit REV) [--new PATH] [--bench FILE] [--quick] (see --help)" >&2
    exit 2
}
note() { echo "$PROG: $*" >&2; }

OLD='' NEW='' OLD_COMMIT='' NO_BENCH=0 QUICK=0 FILTER='' LIST=0 KEEP=0 TIMEOUT=300 JOBS=2 TIMES=''
SHARED=$ROOT/../shared
BENCH=()
need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs an argument"; fi; }
while [ $# -gt 0 ]; do
    case $1 in
    --old) need_arg "$@"; OLD=$2; shift 2 ;;
    --old=*) OLD=${1#*=}; shift ;;
    --new) need_arg "$@"; NEW=$2; shift 2 ;;
    --new=*) NEW=${1#*=}; shift ;;
    --old-commit) need_arg "$@"; OLD_COMMIT=$2; shift 2 ;;
    --old-commit=*) OLD_COMMIT=${1#*=}; shift ;;
    --bench) need_arg "$@"; BENCH+=("$2"); shift 2 ;;
    --bench=*) BENCH+=("${1#*=}"); shift ;;
    --no-bench) NO_BENCH=1; shift ;;
    --shared) need_arg "$@"; SHARED=$2; shift 2 ;;
    --shared=*) SHARED=${1#*=}; shift ;;
    --quick) QUICK=1; shift ;;
    --filter) need_arg "$@"; FILTER=$2; shift 2 ;;
    --filter=*) FILTER=${1#*=}; shift ;;
    --list) LIST=1; shift ;;
    --times) need_arg "$@"; TIMES=$2; shift 2 ;;
    --times=*) TIMES=${1#*=}; shift ;;
    -j|--jobs) need_arg "$@"; JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#*=}; shift ;;
    --timeout) need_arg "$@"; TIMEOUT=$2; shift 2 ;;
    --timeout=*) TIMEOUT=${1#*=}; shift ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument: $1" ;;
    esac
done
case $TIMEOUT in ''|*[!0-9]*) usage_error "--timeout wants whole seconds" ;; esac
case $JOBS in ''|*[!0-9]*|0) usage_error "--jobs wants a positive integer" ;; esac
if [ "$LIST" = 0 ]; then
    [ -n "$OLD" ] || [ -n "$OLD_COMMIT" ] || usage_error "give --old PATH or --old-commit REV"
    [ -z "$OLD" ] || [ -z "$OLD_COMMIT" ] || usage_error "--old and --old-commit exclude each other"
fi
if [ -n "$FILTER" ]; then
    rc=0; [[ "" =~ $FILTER ]] || rc=$?
    [ "$rc" -le 1 ] || usage_error "--filter: bad regular expression"
fi
[ -n "$NEW" ] || NEW=$ROOT/build/binlogctl
abs_bin() {  # what, path -> absolute path of an executable file
    if [ ! -f "$2" ] || [ ! -x "$2" ]; then usage_error "$1: $2 is not an executable file"; fi
    echo "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
}
if [ "$LIST" = 0 ]; then
    NEW=$(abs_bin --new "$NEW")
    [ -z "$OLD" ] || OLD=$(abs_bin --old "$OLD")
fi
if [ "${#BENCH[@]}" -gt 0 ]; then
    for i in "${!BENCH[@]}"; do
        [ -f "${BENCH[i]}" ] || usage_error "--bench: no file ${BENCH[i]}"
        BENCH[i]=$(cd "$(dirname "${BENCH[i]}")" && pwd)/$(basename "${BENCH[i]}")
    done
elif [ "$NO_BENCH" = 0 ] && [ "$QUICK" = 0 ]; then
    # the 64 MiB file of each workload shape, in bench/work/ or /work/benchdata/
    for d in mariadb-64mb mariadb-wide-64mb; do
        for f in "$ROOT/bench/work/$d/mariadb-bin.000001" "/work/benchdata/$d/mariadb-bin.000001"; do
            if [ -f "$f" ]; then BENCH+=("$f"); break; fi
        done
    done
fi

for tool in cmp diff timeout gzip python3; do
    command -v "$tool" >/dev/null 2>&1 || usage_error "needs $tool"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/compare-outputs.XXXXXX")
OLD_TREE=''   # the temporary build root of --old-commit
cleanup() {
    local rc=$?
    if [ -n "$OLD_TREE" ]; then
        git -C "$ROOT" worktree remove --force "$OLD_TREE/src" >/dev/null 2>&1 || true
        rm -rf "$OLD_TREE"
        git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
    fi
    if [ "$KEEP" = 1 ]; then note "kept $TMP"; else rm -rf "$TMP"; fi
    return "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the old binary
if [ -n "$OLD_COMMIT" ] && [ "$LIST" = 0 ]; then
    rev=$(git -C "$ROOT" rev-parse --verify --quiet "$OLD_COMMIT^{commit}") || usage_error "--old-commit: no commit $OLD_COMMIT"
    if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then usage_error "--old-commit needs cmake and ninja"; fi
    # Under this tree (build*/ is gitignored), the build directory inside the worktree as
    # in a normal checkout, and the usual flags: with ccache's base_dir the compiler
    # commands are then those of any other build of the same sources, so they hit the cache.
    OLD_TREE=$(mktemp -d "$ROOT/build-compare.XXXXXX")
    note "building $OLD_COMMIT (${rev:0:12}) in $OLD_TREE/src"
    git -C "$ROOT" worktree add --detach "$OLD_TREE/src" "$rev" >/dev/null 2>&1 ||
        { note "git worktree add $rev failed"; exit 2; }
    launcher=()
    if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
    if ! { cmake -S "$OLD_TREE/src" -B "$OLD_TREE/src/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
               -DBINLOGCTL_WERROR=ON -DBINLOGCTL_TESTS=OFF "${launcher[@]}" &&
           ninja -C "$OLD_TREE/src/build" -j2 binlogctl; } > "$TMP/old-build.log" 2>&1; then
        tail -n 30 "$TMP/old-build.log" >&2
        note "building $OLD_COMMIT failed"
        exit 2
    fi
    OLD=$OLD_TREE/src/build/binlogctl
    [ -x "$OLD" ] || { note "no binlogctl in $OLD_TREE/src/build"; exit 2; }
    note "built $OLD"
fi

# ---------------------------------------------------------------- inputs
# INPUTS: "label<TAB>path<TAB>kind"; kind: file (a binlog file), chain (a directory or an
# index file), stdin (the file is fed on standard input, the argument is "-").
INPUTS=()
add_input() { INPUTS+=("$1"$'\t'"$2"$'\t'"$3"); }
IN=$TMP/in
mkdir -p "$IN" "$TMP/run" "$TMP/res"

FX=$ROOT/testdata/mariadb-10.11
for set_dir in "$FX"/*/; do
    set=$(basename "$set_dir")
    [ -d "$set_dir/binlogs" ] || continue
    for f in "$set_dir"binlogs/mariadb-bin.[0-9]*; do
        add_input "fx/$set/$(basename "$f")" "$f" file
    done
    add_input "fx/$set/binlogs/" "${set_dir}binlogs" chain
    [ ! -f "${set_dir}binlogs/mariadb-bin.index" ] || add_input "fx/$set/mariadb-bin.index" "${set_dir}binlogs/mariadb-bin.index" chain
done

if [ -d "$SHARED" ]; then SHARED=$(cd "$SHARED" && pwd); fi
CORPUS=$SHARED/corpus
# shellcheck disable=SC2016 # the backquotes are Markdown's, not a command
manifest_files() { sed -n 's/^| `\([^`]*\)` |.*/\1/p' "$1"; }
if [ "$QUICK" = 0 ]; then
    if [ -d "$CORPUS" ]; then
        # shared MariaDB sets: like the fixtures
        for set_dir in "$CORPUS"/mariadb/*/; do
            set=$(basename "$set_dir")
            [ -d "$set_dir/binlogs" ] || continue
            for f in "$set_dir"binlogs/mariadb-bin.[0-9]*; do
                add_input "corpus/mariadb/$set/$(basename "$f")" "$f" file
            done
            add_input "corpus/mariadb/$set/binlogs/" "${set_dir}binlogs" chain
            [ ! -f "${set_dir}binlogs/mariadb-bin.index" ] || add_input "corpus/mariadb/$set/mariadb-bin.index" "${set_dir}binlogs/mariadb-bin.index" chain
        done
        # public: the files MANIFEST.md lists (first column, a backquoted local path), then
        # every directory of them as a chain
        if [ -f "$CORPUS/public/MANIFEST.md" ]; then
            declare -A pub_dirs=()
            while IFS= read -r rel; do
                [ -f "$CORPUS/public/$rel" ] || { note "MANIFEST.md lists $rel, not on disk"; continue; }
                add_input "corpus/public/$rel" "$CORPUS/public/$rel" file
                pub_dirs[$(dirname "$rel")]=1
            done < <(manifest_files "$CORPUS/public/MANIFEST.md")
            while IFS= read -r d; do
                [ -n "$d" ] || continue
                add_input "corpus/public/$d/" "$CORPUS/public/$d" chain
            done < <(printf '%s\n' "${!pub_dirs[@]}" | sort)
        else
            note "no $CORPUS/public/MANIFEST.md: public corpus skipped"
        fi
    else
        note "no shared corpus at $CORPUS: skipped"
    fi
fi

# Damaged copies: truncated (at a third, inside the event that spans the middle, at that
# event's start, one byte short) and bit-flipped (a byte at the middle and at a third, the
# middle event's length field, its last byte = the CRC32 when checksums are on).
DAMAGE_SRC=(
    "fx/basic/mariadb-bin.000002|$FX/basic/binlogs/mariadb-bin.000002"
    "fx/compressed/mariadb-bin.000001|$FX/compressed/binlogs/mariadb-bin.000001"
    "fx/nochecksum/mariadb-bin.000001|$FX/nochecksum/binlogs/mariadb-bin.000001"
    "fx/schema/mariadb-bin.000002|$FX/schema/binlogs/mariadb-bin.000002"
)
if [ "$QUICK" = 0 ]; then
    DAMAGE_SRC+=(
        "corpus/mariadb/types/mariadb-bin.000002|$CORPUS/mariadb/types/binlogs/mariadb-bin.000002"
        "corpus/mariadb/txn/mariadb-bin.000003|$CORPUS/mariadb/txn/binlogs/mariadb-bin.000003"
        "corpus/public/mysql-bin.checksum-crc32|$CORPUS/public/osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32"
        "corpus/public/canal-mysql-bin.000001|$CORPUS/public/alibaba__canal/mysql-bin.000001"
        "corpus/public/json.binlog.000001|$CORPUS/public/blackbeam__rust_mysql_common/json.binlog.000001"
    )
fi
for entry in "${DAMAGE_SRC[@]}"; do
    label=${entry%%|*} src=${entry#*|}
    [ -f "$src" ] || continue
    dst=$IN/damaged/$label
    mkdir -p "$(dirname "$dst")"
    python3 - "$src" "$dst" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
n = len(data)
# the event that spans the middle of the file (v4 headers: length at offset 9)
pos, start, length = 4, None, None
while pos + 19 <= n:
    ln = struct.unpack_from("<I", data, pos + 9)[0]
    if ln < 19:
        break
    if pos <= n // 2 < pos + ln:
        start, length = pos, ln
        break
    pos += ln
if start is None:
    start, length = n // 2, 38
def put(name, b):
    with open(dst + "." + name, "wb") as f:
        f.write(b)
def flip(off, mask):
    b = bytearray(data)
    if 0 <= off < n:
        b[off] ^= mask
    return bytes(b)
put("trunc-third", data[: n // 3])
put("trunc-mid-event", data[: start + length // 2])
put("trunc-at-event", data[:start])
put("trunc-tail1", data[: n - 1])
put("flip-mid", flip(n // 2, 0x01))
put("flip-third", flip(n // 3, 0x80))
put("flip-evlen", flip(start + 10, 0x04))
put("flip-evlast", flip(start + length - 1, 0x10))
PY
    for v in trunc-third trunc-mid-event trunc-at-event trunc-tail1 flip-mid flip-third flip-evlen flip-evlast; do
        add_input "damaged/$label.$v" "$dst.$v" file
    done
done

# Compressed copies and standard input
mkdir -p "$IN/gz"
gzip -n -c "$FX/basic/binlogs/mariadb-bin.000002" > "$IN/gz/mariadb-bin.000002.gz"
add_input "gz/fx/basic/mariadb-bin.000002.gz" "$IN/gz/mariadb-bin.000002.gz" file
gzip -n -c "$FX/compressed/binlogs/mariadb-bin.000001" > "$IN/gz/compressed-mariadb-bin.000001.gz"
add_input "gz/fx/compressed/mariadb-bin.000001.gz" "$IN/gz/compressed-mariadb-bin.000001.gz" file
if command -v zstd >/dev/null 2>&1; then
    zstd -q -c "$FX/basic/binlogs/mariadb-bin.000002" > "$IN/gz/mariadb-bin.000002.zst"
    add_input "zst/fx/basic/mariadb-bin.000002.zst" "$IN/gz/mariadb-bin.000002.zst" file
fi
add_input "stdin/fx/basic/mariadb-bin.000002" "$FX/basic/binlogs/mariadb-bin.000002" stdin
add_input "stdin/fx/nochecksum/mariadb-bin.000001" "$FX/nochecksum/binlogs/mariadb-bin.000001" stdin
add_input "stdin/gz/fx/basic/mariadb-bin.000002.gz" "$IN/gz/mariadb-bin.000002.gz" stdin
[ ! -f "$IN/damaged/fx/basic/mariadb-bin.000002.trunc-mid-event" ] ||
    add_input "stdin/damaged/fx/basic/mariadb-bin.000002.trunc-mid-event" "$IN/damaged/fx/basic/mariadb-bin.000002.trunc-mid-event" stdin

if [ "${#BENCH[@]}" -gt 0 ]; then
    for f in "${BENCH[@]}"; do
        add_input "bench/$(basename "$(dirname "$f")")/$(basename "$f")" "$f" file
    done
elif [ "$QUICK" = 0 ] && [ "$NO_BENCH" = 0 ]; then
    note "no bench file (make one with bench/make-large-binlog.sh --size-mb 64, or give --bench FILE): skipped"
fi

# ---------------------------------------------------------------- commands
# "name<TAB>args" (args separated by \x1f); @IN@ is the input argument, @OUT@ a file the
# case writes, compared as bytes.
US=$'\x1f'
COMMANDS=()
add_cmd() { local name=$1; shift; local IFS=$US; COMMANDS+=("$name"$'\t'"$*"); }
add_cmd dump.text           dump --progress never @IN@
add_cmd dump.json           dump --progress never --format json @IN@
add_cmd dump.json-decode    dump --progress never --format json --decode @IN@
add_cmd dump.hexdump        dump --progress never --hexdump @IN@
add_cmd verify.text         verify --progress never @IN@
add_cmd verify.json         verify --progress never --format json @IN@
add_cmd convert.json        convert --progress never --format json @IN@
add_cmd convert.json-t0     convert --progress never --format json --threads 0 @IN@
add_cmd convert.canal-json  convert --progress never --format canal-json @IN@
add_cmd convert.canal-proto convert --progress never --format canal-proto -o @OUT@ @IN@
add_cmd convert.sql         convert --progress never --format sql @IN@
add_cmd convert.sql-all     convert --progress never --format sql --sql-set all @IN@
add_cmd convert.flashback   convert --progress never --flashback @IN@
add_cmd convert.flashback-skip convert --progress never --flashback --flashback-skip-unsafe @IN@
add_cmd convert.flashback-4k convert --progress never --flashback --flashback-skip-unsafe --flashback-memory 4096 @IN@
add_cmd convert.sql-t0      convert --progress never --format sql --threads 0 @IN@
add_cmd convert.flashback-4k-t0 convert --progress never --flashback --flashback-skip-unsafe --flashback-memory 4096 --threads 0 @IN@
add_cmd stats.text          stats --progress never @IN@
add_cmd stats.json          stats --progress never --format json @IN@
add_cmd replay.json-ticdc   replay --format json --policy ticdc --quota 64K --sink 'shop\..*=latency:5ms,cap:200KB/s' --timeline @OUT@ @IN@
add_cmd replay.text-doc     replay --policy doc --quota 128K --source-rate 1MB/s --sink '.*=latency:2ms,cap:400KB/s' --plot @OUT@ @IN@
add_cmd replay.json-hash    replay --format json --path-by hash:8 --policy ticdc --quota 64K --sink '.*=latency:1ms,cap:300KB/s' @IN@
add_cmd replay.json-filter  replay --format json --filter '.*\.(orders|t.*)' --policy doc --quota 64K --timeline @OUT@ @IN@
add_cmd replay.json-start   replay --format json --start-position 1000 --stop-position 4000000 --path-by schema @IN@
add_cmd schema.text         schema --progress never @IN@
add_cmd schema.json         schema --progress never --format json @IN@
add_cmd schema.history      schema --progress never --history @IN@
add_cmd schema.history-json schema --progress never --history --format json @IN@
add_cmd schema.seeded       schema --progress never --history --schema "$FX/schema/expected/schema.sql" @IN@

# Wall-clock output: canal-json's "ts" is the time each message is written (Canal's
# FlatMessage.ts), so two runs of one binary differ there. Those cases run with the
# realtime clock frozen by libfaketime (monotonic time untouched): no byte is rewritten.
# Without libfaketime, the digits of "ts" are replaced by 0 on both sides (with a note).
WALL_CLOCK_CMDS=" convert.canal-json "
FAKETIME_LIB=
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 /usr/local/lib/faketime/libfaketimeMT.so.1; do
    if [ -f "$f" ]; then FAKETIME_LIB=$f; break; fi
done
[ -n "$FAKETIME_LIB" ] || note "no libfaketime (apt-get install faketime): canal-json \"ts\" values are compared as 0"

# hexdump of the bench file is gigabytes of text: fixtures and corpus only
skip_cmd() {  # command name, input label, kind
    case $1:$2 in
    dump.hexdump:bench/*) return 0 ;;
    esac
    return 1
}

CASES=()  # "case name<TAB>input path<TAB>kind<TAB>command args"
for inp in "${INPUTS[@]}"; do
    IFS=$'\t' read -r label path kind <<<"$inp"
    for c in "${COMMANDS[@]}"; do
        cname=${c%%$'\t'*} cargs=${c#*$'\t'}
        ! skip_cmd "$cname" "$label" "$kind" || continue
        name="$cname:$label"
        if [ -n "$FILTER" ] && ! [[ $name =~ $FILTER ]]; then continue; fi
        CASES+=("$name"$'\t'"$path"$'\t'"$kind"$'\t'"$cargs")
    done
done
if [ "$LIST" = 1 ]; then
    printf '%s\n' "${CASES[@]}" | cut -f1
    exit 0
fi
[ "${#CASES[@]}" -gt 0 ] || { note "no case matches --filter $FILTER"; echo "compare: 0 passed, 0 failed"; exit 0; }

# ---------------------------------------------------------------- running
RUN=$TMP/run      # the working directory of both binaries
RC_old='' RC_new=''

run_side() {  # side binary path kind command-name args...  (in the worker's $R, $OUTF)
    local side=$1 bin=$2 path=$3 kind=$4 cname=$5
    shift 5
    local pre=() wall=0
    case $WALL_CLOCK_CMDS in *" $cname "*) wall=1 ;; esac
    if [ "$wall" = 1 ] && [ -n "$FAKETIME_LIB" ]; then
        pre=(env "LD_PRELOAD=$FAKETIME_LIB" "FAKETIME=2026-01-01 00:00:00" FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_NO_CACHE=1)
    fi
    local args=() a stdin=/dev/null
    for a in "$@"; do
        case $a in
        @IN@) if [ "$kind" = stdin ]; then args+=(-); stdin=$path; else args+=("$path"); fi ;;
        @OUT@) args+=("$OUTF") ;;
        *) args+=("$a") ;;
        esac
    done
    if [ -e "$OUTF" ]; then rm -f "$OUTF"; fi
    if [ -e "$R/$side.file" ]; then rm -f "$R/$side.file"; fi
    local rc=0
    "${pre[@]}" timeout -k 5 "$TIMEOUT" "$bin" "${args[@]}" < "$stdin" > "$R/$side.out" 2> "$R/$side.err" || rc=$?
    printf -v "RC_$side" '%s' "$rc"
    if [ "$wall" = 1 ] && [ -z "$FAKETIME_LIB" ]; then
        sed -i 's/,"ts":[0-9]*,"type":/,"ts":0,"type":/g' "$R/$side.out"
    fi
    if [ -e "$OUTF" ]; then mv "$OUTF" "$R/$side.file"; fi
}

first_diff() {  # old new -> "byte N, line L" of the first difference, or "end of old|new after ..."
    local out
    out=$(LC_ALL=C cmp "$1" "$2" 2>&1 | head -n 1 || true)
    case $out in
    *"EOF on $1"*) echo "end of old after $(sed -n 's/.*after \(byte\|char\) \([0-9]*\), \(line [0-9]*\).*/byte \2, \3/p' <<<"$out")" ;;
    *"EOF on $2"*) echo "end of new after $(sed -n 's/.*after \(byte\|char\) \([0-9]*\), \(line [0-9]*\).*/byte \2, \3/p' <<<"$out")" ;;
    *) sed -n 's/.*differ: \(byte\|char\) \([0-9]*\), \(line [0-9]*\).*/byte \2, \3/p' <<<"$out" ;;
    esac
}

show() {  # a line for the report: at most 160 bytes, control bytes escaped
    LC_ALL=C cut -c1-160 <<<"$1" | LC_ALL=C sed 's/[^[:print:]]/?/g'
}

# detail lines about one differing stream
describe() {  # stream old new
    local s=$1 a=$2 b=$3 where line
    if [ ! -e "$a" ] || [ ! -e "$b" ]; then
        [ -e "$a" ] && echo "    $s: written by old only" || echo "    $s: written by new only"
        return
    fi
    where=$(first_diff "$a" "$b")
    line=$(sed -n 's/.*line \([0-9]*\).*/\1/p' <<<"$where")
    local sa sb
    sa=$(stat -c %s "$a") sb=$(stat -c %s "$b")
    if LC_ALL=C grep -qP '\x00' "$a" "$b" 2>/dev/null; then
        local off
        off=$(sed -n 's/.*byte \([0-9]*\).*/\1/p' <<<"$where")
        echo "    $s: binary, $sa vs $sb bytes; first difference: $where"
        if [ -n "$off" ] && [ "$off" -gt 0 ]; then
            echo "    old @$((off - 1)): $(od -An -tx1 -j $((off - 1)) -N 16 "$a" | tr -s ' ')"
            echo "    new @$((off - 1)): $(od -An -tx1 -j $((off - 1)) -N 16 "$b" | tr -s ' ')"
        fi
        return
    fi
    echo "    $s: $sa vs $sb bytes; first difference: $where"
    if [ "$sa" -le 20000000 ] && [ "$sb" -le 20000000 ]; then
        { diff -u --label "old $s" --label "new $s" "$a" "$b" || true; } | sed -n '3,10p' | while IFS= read -r l; do
            echo "      $(show "$l")"
        done
    elif [ -n "$line" ]; then
        echo "      -$(show "$(sed -n "${line}p;${line}q" "$a")")"
        echo "      +$(show "$(sed -n "${line}p;${line}q" "$b")")"
    fi
}

stream_file() { case $1 in stdout) echo out ;; stderr) echo err ;; *) echo file ;; esac; }

# One worker per job; worker W runs the cases i with i % JOBS == W, in its own result
# directory and with its own @OUT@ path (the same path for the old and the new run of a
# case, so messages that name it match), and writes a report per failing case.
worker() {  # W
    local w=$1 i cs name path kind cargs argv bad s summary part f t0
    R=$TMP/res/$w OUTF=$TMP/res/$w.out.bin
    mkdir -p "$R" "$TMP/fail"
    cd "$RUN"
    local passed=0
    for ((i = w; i < ${#CASES[@]}; i += JOBS)); do
        cs=${CASES[i]}
        IFS=$'\t' read -r name path kind cargs <<<"$cs"
        IFS=$US read -r -a argv <<<"$cargs"
        t0=$EPOCHREALTIME
        run_side old "$OLD" "$path" "$kind" "${name%%:*}" "${argv[@]}"
        run_side new "$NEW" "$path" "$kind" "${name%%:*}" "${argv[@]}"
        [ -z "$TIMES" ] || echo "$t0 $EPOCHREALTIME $name" >> "$TMP/res/$w.times"
        bad=()
        [ "$RC_old" = "$RC_new" ] || bad+=(status)
        cmp -s "$R/old.out" "$R/new.out" || bad+=(stdout)
        cmp -s "$R/old.err" "$R/new.err" || bad+=(stderr)
        if [ -e "$R/old.file" ] || [ -e "$R/new.file" ]; then
            { [ -e "$R/old.file" ] && [ -e "$R/new.file" ] && cmp -s "$R/old.file" "$R/new.file"; } || bad+=(output-file)
        fi
        if [ "${#bad[@]}" = 0 ]; then
            passed=$((passed + 1))
            continue
        fi
        summary=
        for s in "${bad[@]}"; do
            case $s in
            status) part="exit status $RC_old -> $RC_new" ;;
            *)
                f=$(stream_file "$s")
                if [ -e "$R/old.$f" ] && [ -e "$R/new.$f" ]; then
                    part="$s differs at $(first_diff "$R/old.$f" "$R/new.$f")"
                else
                    part="$s written by one side only"
                fi
                ;;
            esac
            summary=${summary:+$summary; }$part
        done
        {
            echo "FAIL $name: $summary"
            for s in "${bad[@]}"; do
                case $s in
                status) echo "    status: old $RC_old, new $RC_new" ;;
                stdout) describe stdout "$R/old.out" "$R/new.out" ;;
                stderr) describe stderr "$R/old.err" "$R/new.err" ;;
                output-file) describe output-file "$R/old.file" "$R/new.file" ;;
                esac
            done
        } > "$TMP/fail/$(printf '%06d' "$i")"
    done
    rm -rf "$R" "$OUTF"
    echo "$passed" > "$TMP/res/$w.passed"
}

T0=$SECONDS
note "old: $OLD"
note "new: $NEW"
note "${#CASES[@]} cases (${#INPUTS[@]} inputs x ${#COMMANDS[@]} commands), $JOBS at a time, temp $TMP"
[ "$JOBS" -le "${#CASES[@]}" ] || JOBS=${#CASES[@]}
PIDS=()
for ((w = 0; w < JOBS; w++)); do
    worker "$w" &
    PIDS+=($!)
done
worker_failed=0
for p in "${PIDS[@]}"; do wait "$p" || worker_failed=1; done
[ "$worker_failed" = 0 ] || { note "a worker failed"; exit 2; }
PASSED=0
for ((w = 0; w < JOBS; w++)); do PASSED=$((PASSED + $(cat "$TMP/res/$w.passed"))); done
FAILED=0
if [ -d "$TMP/fail" ]; then
    for f in "$TMP"/fail/*; do
        [ -e "$f" ] || continue
        cat "$f"
        FAILED=$((FAILED + 1))
    done
fi
if [ -n "$TIMES" ]; then
    cat "$TMP"/res/*.times | awk '{ printf "%.3f\t%s\n", $2 - $1, $3 }' | sort -rn > "$TIMES"
fi
note "${#CASES[@]} cases in $((SECONDS - T0)) s"
echo "compare: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
