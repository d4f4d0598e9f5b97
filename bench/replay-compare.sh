#!/usr/bin/env bash
# Runs two binlogctl binaries through the same `replay` cases and compares what each writes
# byte for byte: the summary (stdout), stderr, the exit status, the timeline (--timeline) and
# the plot (--plot). The proof that speed work on the replay engine and its checks changed no
# output (issue #32: "replay output otherwise byte-identical").
#
#   bench/replay-compare.sh OLD NEW [BENCH_FILE...]
#
# Inputs: the shared corpus `txn` chain (../shared/corpus/mariadb/txn/binlogs, skipped when
# absent), a copy of it with mariadb-bin.000008 removed (a source_context violation, exit 1),
# and each BENCH_FILE read up to --stop-position 64 MiB (e.g. both 1 GiB bench files:
# /work/bench1g/mariadb-bin.000001, /work/benchwide/mariadb-bin.000001). Cases per input: the
# four policies at their defaults; doc, ticdc and blocking under a small quota with slow sinks
# (pauses, resumes, the circuit breaker, releases, resets); doc with injected drops; doc with
# --path-by hash:8 and with --path-by schema and other thresholds; the audit's exemption run
# (#32 point 3). Every case writes a JSON summary and a timeline; two write the text summary
# and a plot. Prints one FAIL line per difference, then "replay-compare: N runs, M differ".
# Exit status 0 when nothing differs.
set -euo pipefail

OLD=$(readlink -f "${1:?usage: bench/replay-compare.sh OLD NEW [BENCH_FILE...]}")
NEW=$(readlink -f "${2:?usage: bench/replay-compare.sh OLD NEW [BENCH_FILE...]}")
shift 2
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TXN=$ROOT/../shared/corpus/mariadb/txn/binlogs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

INPUTS=() NAMES=() EXTRA=()
if [ -d "$TXN" ]; then
    INPUTS+=("$TXN") NAMES+=(txn) EXTRA+=("")
    mkdir "$WORK/gap"
    for f in "$TXN"/mariadb-bin.0*; do
        [ "$(basename "$f")" = mariadb-bin.000008 ] || cp "$f" "$WORK/gap/"
    done
    grep -v 'mariadb-bin.000008' "$TXN/mariadb-bin.index" > "$WORK/gap/mariadb-bin.index"
    INPUTS+=("$WORK/gap") NAMES+=(txn-gap) EXTRA+=("")
else
    echo "replay-compare: no shared corpus at $TXN, its cases skipped" >&2
fi
for b in "$@"; do
    INPUTS+=("$(readlink -f "$b")") NAMES+=("$(basename "$(dirname "$b")")") EXTRA+=("--stop-position=67108864")
done
[ ${#INPUTS[@]} -gt 0 ] || { echo "replay-compare: no input" >&2; exit 2; }

CASES=(
    "doc|--policy doc"
    "ticdc|--policy ticdc"
    "none|--policy none"
    "blocking|--policy blocking"
    "doc-slow|--policy doc --quota 256K --sink .*=latency:5ms,cap:1MB/s"
    "doc-tight|--policy doc --quota 64K --source-rate 2MB/s --control-delay 50ms --sink .*=latency:2ms,cap:400KB/s"
    "ticdc-tight|--policy ticdc --quota 64K --sink .*=latency:5ms,cap:200KB/s"
    "blocking-tight|--policy blocking --quota 64K --sink .*=cap:300KB/s"
    "doc-drops|--policy doc --quota 512K --drop-rate 0.01 --sink .*=latency:1ms,cap:2MB/s"
    "doc-hash|--policy doc --path-by hash:8 --quota 128K --sink .*=latency:2ms,cap:800KB/s"
    "doc-schema|--policy doc --path-by schema --quota 96K --path-pause 0.3 --path-resume 0.15 --area-pause 0.7 --area-resume 0.4 --sink .*=cap:500KB/s"
    "doc-exempt|--policy doc --quota 16K --source-rate 1MB/s --control-delay 1s --sink \\(control\\)=latency:1s,cap:100/s"
)
PLOTTED="doc-slow doc-exempt"

runs=0 diffs=0
run_one() {  # BIN OUTDIR INPUT EXTRA OPTS... (the output file names are the same for both)
    local bin=$1 out=$2 in=$3 extra=$4
    shift 4
    mkdir -p "$out"
    local rc=0
    (cd "$out" && "$bin" replay "$@" ${extra:+"$extra"} "$in" > stdout 2> stderr) || rc=$?
    echo "$rc" > "$out/status"
}
for i in "${!INPUTS[@]}"; do
    for c in "${CASES[@]}"; do
        name=${c%%|*}
        read -r -a opts <<< "${c#*|}"
        for fmt in json text; do
            if [ "$fmt" = text ] && [[ " $PLOTTED " != *" $name "* ]]; then continue; fi
            if [ "$fmt" = json ]; then
                args=(--format json --timeline timeline.jsonl "${opts[@]}")
            else
                args=(--format text --plot plot.svg "${opts[@]}")
            fi
            id="${NAMES[$i]}.$name.$fmt"
            run_one "$OLD" "$WORK/old/$id" "${INPUTS[$i]}" "${EXTRA[$i]}" "${args[@]}"
            run_one "$NEW" "$WORK/new/$id" "${INPUTS[$i]}" "${EXTRA[$i]}" "${args[@]}"
            runs=$((runs + 1))
            if ! diff -r -q "$WORK/old/$id" "$WORK/new/$id" > "$WORK/diff" 2>&1; then
                diffs=$((diffs + 1))
                echo "FAIL $id: $(tr '\n' ' ' < "$WORK/diff")"
            fi
        done
    done
done
echo "replay-compare: $runs runs, $diffs differ"
[ "$diffs" -eq 0 ]
