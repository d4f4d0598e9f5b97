#!/usr/bin/env bash
# binlogctl serve benchmarks (issue 31, Speed): PITR four ways (mariadb-binlog | mariadb, binlogctl convert --format sql | mariadb, the
# relay-log trick, serve + a replica with slave_parallel_threads=4), mariadb-binlog -R --raw from
# mariadbd and from serve, serve's peak RSS with 8 replicas. See bench/serve_bench.py.
#
#   bench/serve.sh [--parts pitr,raw,rss,fanout] [--legs pipe,sql,relay,serve] [--repeat N] FILE...
#
# FILE...: a closed binlog chain, e.g. from bench/make-large-binlog.sh --size-mb 256.
# BINLOGCTL (environment) picks the binary (default build/binlogctl).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN=${BINLOGCTL:-$ROOT/build/binlogctl}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ $# -gt 0 ] || { sed -n '2,9p' "$0"; exit 2; }
mkdir -p "$ROOT/bench/work"
exec python3 "$HERE/serve_bench.py" "$BIN" "$ROOT/bench/work" "$@"
