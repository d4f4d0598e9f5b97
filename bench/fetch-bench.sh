#!/usr/bin/env bash
# binlogctl fetch against mariadb-binlog --read-from-remote-server --raw, on the same server, the
# same binlog, in the same run (issue "Read from a live server", Speed).
#
#   bench/fetch-bench.sh BINLOG [REPEAT] [BINLOGCTL]
#
# BINLOG: a closed MariaDB binlog (e.g. bench/work/mariadb-1024mb/mariadb-bin.000001 from
# bench/make-large-binlog.sh). A private server (fresh datadir, unix socket and 127.0.0.1 on a free
# port) is started with BINLOG as the first file of its binlog index (hard-linked into its datadir,
# copied when that is another filesystem); both clients then read that file over TCP, REPEAT times
# each (default 3, the two alternating), into a fresh directory. Prints the median wall time as
# MB/s and GNU time's maximum resident set size, and checks that both copies equal BINLOG byte for
# byte.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=testdata/lib-mariadb.sh
. "$ROOT/testdata/lib-mariadb.sh"

BINLOG=$(readlink -f "${1:?usage: bench/fetch-bench.sh BINLOG [REPEAT] [BINLOGCTL]}")
REPEAT=${2:-3}
BIN=$(readlink -f "${3:-$ROOT/build/binlogctl}")
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
mdb_ensure_installed
NAME=$(basename "$BINLOG")
SIZE=$(stat -c %s "$BINLOG")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/binlogctl-fetch-bench.XXXXXX")
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() { mdb_cleanup; rm -rf "$WORK"; }
trap cleanup EXIT

mdb_init "$WORK"
# The server looks its files up in its own directory: a hard link (a copy across filesystems).
ln "$BINLOG" "$WORK/data/$NAME" 2>/dev/null || cp "$BINLOG" "$WORK/data/$NAME"
printf './%s\n' "$NAME" > "$WORK/data/${NAME%.*}.index"
# mdb_start keeps the server off the network unless MDB_NETWORK is set (see lib-mariadb.sh).
MDB_NETWORK="--port=$PORT --bind-address=127.0.0.1" mdb_start "$WORK" --server-id=1 \
    --log-bin="${NAME%.*}" --binlog-checksum=CRC32 --max-allowed-packet=1G
mdb_sql "$WORK" -e "CREATE USER bench@'%' IDENTIFIED BY 'bench'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO bench@'%'"
cat "$BINLOG" > /dev/null  # warm the page cache

# One timed run: label, output dir, command... (wall seconds and peak RSS appended to WORK/t.label)
once() {
  local label=$1 out=$2; shift 2
  rm -rf "$out"; mkdir -p "$out"
  /usr/bin/time -o "$WORK/time" -f '%e %M' "$@" > /dev/null 2> "$WORK/stderr" || { cat "$WORK/stderr" >&2; exit 1; }
  cat "$WORK/time" >> "$WORK/t.$label"
  cmp "$out/$NAME" "$BINLOG" || { echo "$label: the copy differs from $BINLOG" >&2; exit 1; }
}

report() {  # label: median wall time, MB/s, peak RSS over the runs
  sort -n "$WORK/t.$1" | awk -v l="$1" -v s="$SIZE" \
    '{ t[NR] = $1; if ($2 > r) r = $2 } END { m = t[int((NR + 1) / 2)]; if (m < 0.01) m = 0.01;
       printf "%-16s %8.2f s %9.1f MB/s %8.1f MiB peak RSS\n", l, m, s / 1e6 / m, r / 1024; print m > "/dev/stderr" }' 2> "$WORK/med.$1"
}

echo "$NAME: $SIZE bytes; medians of $REPEAT, runs alternating; $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
for _ in $(seq 1 "$REPEAT"); do
  once mariadb-binlog "$WORK/raw" mariadb-binlog --no-defaults --read-from-remote-server --raw \
      --host=127.0.0.1 --port="$PORT" --user=bench --password=bench --result-file="$WORK/raw/" "$NAME"
  # fetch reads on to the server's current end: after BINLOG, the server's new, small file.
  once binlogctl-fetch "$WORK/fetch" "$BIN" fetch --host 127.0.0.1 --port "$PORT" --user bench --password=bench \
      --result-dir "$WORK/fetch" "$NAME"
done
report mariadb-binlog
report binlogctl-fetch
awk -v a="$(cat "$WORK/med.mariadb-binlog")" -v b="$(cat "$WORK/med.binlogctl-fetch")" \
  'BEGIN { printf "fetch / mariadb-binlog --raw rate: %.0f%%\n", 100 * a / b }'
