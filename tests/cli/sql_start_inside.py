#!/usr/bin/env python3
"""SQL output that starts inside a transaction says what it skipped (issue 36, item 5).

usage: sql_start_inside.py BINLOGCTL FIXTURE_DIR

On a real file, a --start-position that falls inside a transaction after its TABLE_MAP: convert --format sql exits 1, names each rows event it could
not write in a '# SKIPPED log:pos' line of the SQL and on stderr; --flashback refuses (exit 1);
a start at the transaction's GTID event writes its rows and exits 0.
"""
import json
import os
import subprocess
import sys


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    f = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    events = [json.loads(x) for x in run(binary, "dump", "--format", "json", f).stdout.split(b"\n") if x]
    gtid = next(e for e in events if e["event_type"] == "Gtid")
    rows = [e for e in events if e["event_type"].startswith(("Delete_rows", "Write_rows", "Update_rows"))]
    tmap = next(e for e in events if e["event_type"] == "Table_map")
    inside = rows[0]["pos"]  # after the TABLE_MAP: its rows cannot be decoded
    assert tmap["pos"] < inside
    p = run(binary, "convert", "--format", "sql", "--start-position", str(inside), f)
    check(p.returncode == 1, f"sql --start-position {inside}: exit {p.returncode}, expected 1")
    for r in rows:
        tag = f"# SKIPPED mariadb-bin.000002:{r['pos']}: ".encode()
        check(tag in p.stdout, f"sql --start-position {inside}: no {tag!r} in the SQL: {p.stdout[:400]!r}")
        check(f":{r['pos']}: error: transaction_structure".encode() in p.stderr, f"no error for {r['pos']}: {p.stderr[:400]!r}")
    p = run(binary, "convert", "--flashback", "--start-position", str(inside), f)
    check(p.returncode == 1, f"flashback --start-position {inside}: exit {p.returncode}, expected 1")
    # A start at the transaction's GTID event: its rows, exit 0.
    p = run(binary, "convert", "--format", "sql", "--start-position", str(gtid["pos"]), f)
    check(p.returncode == 0 and b"SKIPPED" not in p.stdout and b"DELETE FROM" in p.stdout,
          f"sql from the GTID event: exit {p.returncode}: {p.stderr[:300]!r}")
    print(f"sql_start_inside: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
