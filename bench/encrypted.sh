#!/usr/bin/env bash
# verify and convert --format json on an encrypted binlog (--key-file) against the same events
# in the clear, interleaved in one run (issue 34's target: encrypted >= 80% of the speed in the
# clear).
#
#   bench/make-large-binlog.sh --size-mb 1024 --encrypt --out bench/work/enc-1024mb --no-stats
#   bench/encrypted.sh [DIR] [RUNS]
#
# DIR (default bench/work/enc-1024mb) holds what make-large-binlog.sh --encrypt leaves: the
# server's encrypted mariadb-bin.000001, its key file keys.txt, and plain/mariadb-bin.000001, the
# same file as the server sends it decrypted (mariadb-binlog -R --raw). First checks that both
# read as the same events (verify's output, dump --format json --hexdump's digest), then runs
# each command RUNS times (default 7), clear and encrypted one after the other, output to
# /dev/null, and prints min and median wall time, the speed ratio (clear time / encrypted time)
# of both, CPU time (user + system) and GNU time's maximum RSS. With BINLOGCTL_BASE=OTHER-BINARY
# (an older build, copied aside) the same runs of that binary are interleaved with them, for an
# A/B of a change in the same minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-bench/work/enc-1024mb}
RUNS=${2:-7}
BIN=${BINLOGCTL:-build/binlogctl}
BASE=${BINLOGCTL_BASE:-}
ENC=$DIR/mariadb-bin.000001
CLEAR=$DIR/plain/mariadb-bin.000001
KEYS=$DIR/keys.txt
for f in "$ENC" "$CLEAR" "$KEYS"; do
    [ -f "$f" ] || { echo "no $f: run bench/make-large-binlog.sh --encrypt --out $DIR first" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -c /dev/null ] || { echo "/dev/null is not a character device: results would be wrong" >&2; exit 2; }

echo "input: $ENC ($(stat -c %s "$ENC") bytes) and $CLEAR, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "binlogctl: $($BIN --version), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$BASE" ] || echo "base (A/B): $BASE"
cat "$ENC" "$CLEAR" > /dev/null  # warm the page cache
a=$("$BIN" verify --progress never "$CLEAR" | md5sum)
b=$("$BIN" verify --progress never --key-file "$KEYS" "$ENC" | md5sum)
[ "$a" = "$b" ] || { echo "verify's output differs between the two files" >&2; exit 1; }
a=$("$BIN" dump --progress never --format json --hexdump "$CLEAR" | md5sum)
b=$("$BIN" dump --progress never --format json --hexdump --key-file "$KEYS" "$ENC" | md5sum)
[ "$a" = "$b" ] || { echo "the two files' events differ (dump --format json --hexdump)" >&2; exit 1; }
echo "same events: verify's output and dump --format json --hexdump identical"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
one() {  # label, command...
    local label=$1; shift
    /usr/bin/time -o "$TMP/t" -f '%e %U %S %M' "$@" > /dev/null 2>/dev/null || true
    tail -n 1 "$TMP/t" >> "$TMP/$label"
}
for _ in $(seq "$RUNS"); do
    one verify-clear "$BIN" verify --progress never "$CLEAR"
    one verify-enc "$BIN" verify --progress never --key-file "$KEYS" "$ENC"
    one convert-clear "$BIN" convert --progress never --format json "$CLEAR"
    one convert-enc "$BIN" convert --progress never --format json --key-file "$KEYS" "$ENC"
    if [ -n "$BASE" ]; then
        one base-verify-clear "$BASE" verify --progress never "$CLEAR"
        one base-verify-enc "$BASE" verify --progress never --key-file "$KEYS" "$ENC"
        one base-convert-clear "$BASE" convert --progress never --format json "$CLEAR"
        one base-convert-enc "$BASE" convert --progress never --format json --key-file "$KEYS" "$ENC"
    fi
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stat_of() {  # file -> "min median cpu_median rss_max"
    echo "$(sort -n "$1" | head -n 1 | cut -d' ' -f1) $(cut -d' ' -f1 "$1" | median)" \
         "$(awk '{ print $2 + $3 }' "$1" | median) $(awk '$4 > r { r = $4 } END { printf "%.1f", r / 1024 }' "$1")"
}
printf '%-24s %22s %22s %18s %18s %16s\n' command "clear min/median s" "encrypted min/median" "ratio min/median" "cpu s clear/enc" "RSS MiB clear/enc"
for cmd in verify convert ${BASE:+base-verify base-convert}; do
    read -r cmin cmed ccpu crss <<<"$(stat_of "$TMP/$cmd-clear")"
    read -r emin emed ecpu erss <<<"$(stat_of "$TMP/$cmd-enc")"
    label=${cmd/convert/convert --format json}
    awk -v l="$label" -v a="$cmin" -v b="$cmed" -v c="$emin" -v d="$emed" -v e="$ccpu" -v f="$ecpu" -v g="$crss" -v h="$erss" \
        'BEGIN { printf "%-24s %10.2f / %-9.2f %10.2f / %-9.2f %7.0f%% / %-6s %8.2f / %-7.2f %7.1f / %-6.1f\n",
                 l, a, b, c, d, 100 * a / c, sprintf("%.0f%%", 100 * b / d), e, f, g, h }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
