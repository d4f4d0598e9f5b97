#!/usr/bin/env bash
# Set-up command 1: install dependencies, build, and run binlogctl dump on the bundled binlogs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target binlogctl
echo "== binlogctl dump testdata/mariadb-10.11/basic/binlogs/mariadb-bin.index (first 25 events)"
# (head closes the pipe early: binlogctl then ends by SIGPIPE, like cat would)
{ build/binlogctl dump testdata/mariadb-10.11/basic/binlogs/mariadb-bin.index || true; } | head -n 26
echo "== the same chain as JSON Lines, events counted by type"
build/binlogctl dump --format json testdata/mariadb-10.11/basic/binlogs | \
  python3 -c 'import sys, json, collections; c = collections.Counter(json.loads(l)["event_type"] for l in sys.stdin); print("\n".join(f"{n:6} {t}" for t, n in c.most_common()))'
echo "== binlogctl verify of the chain"
build/binlogctl verify testdata/mariadb-10.11/basic/binlogs/mariadb-bin.index
