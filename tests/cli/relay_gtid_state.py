#!/usr/bin/env python3
"""verify's MariaDB GTID state on a relay-log chain (issue 36, item 2).

usage: relay_gtid_state.py BINLOGCTL FIXTURE_DIR

testdata/mariadb-10.11/relay (testdata/generate_relay.py) is a real replica's relay logs: the
primary wrote its only domain-31 transactions into the first files. The state verify gives
(summary.gtid_state / mariadb_gtid_state, JSON and text) must be the primary's
@@gtid_binlog_state for the whole chain, for a chain that starts at a later file (the domain-31
GTIDs are then known only from the Gtid_list the primary sent, which a relay log carries) and for
the last file alone.
"""
import json
import os
import subprocess
import sys


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    d = os.path.join(fixture, "relay", "binlogs")
    expected = dict(line.strip().split("=", 1) for line in open(os.path.join(fixture, "relay", "expected", "gtid.txt")))
    state = expected["primary_gtid_binlog_state"]
    files = sorted(n for n in os.listdir(d) if n.startswith("hx-relay.0"))
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    # The later files: from the first that holds a Gtid_list after the domain-31 transactions.
    starts = [files, files[len(files) // 2:], files[-1:]]
    for chain in starts:
        args = [os.path.join(d, n) for n in chain]
        p = subprocess.run([binary, "verify", "--format", "json", *args], capture_output=True)
        lines = [json.loads(x) for x in p.stdout.split(b"\n") if x.strip()]
        s = lines[-1]["summary"] if lines else {}
        what = f"verify {chain[0]}..{chain[-1]}"
        check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[:300]!r}")
        check(s.get("gtid_state") == state, f"{what}: gtid_state {s.get('gtid_state')!r}, the server had {state!r}")
        check(s.get("mariadb_gtid_state") == state, f"{what}: mariadb_gtid_state {s.get('mariadb_gtid_state')!r}")
        t = subprocess.run([binary, "verify", *args], capture_output=True)
        check(f"summary: mariadb_gtid_state: {state}\n".encode() in t.stdout, f"{what} (text): {t.stdout[-300:]!r}")
    print(f"relay_gtid_state: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
