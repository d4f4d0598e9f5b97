#!/usr/bin/env python3
"""Schema history and --schema, on the `schema` fixture (binlog_row_metadata=NO_LOG).

Usage: convert_schema.py BINLOGCTL SET_DIR

1. The chain read from its start: the DDL in the binlog names every column (no @N name, no
   warning about missing names) and every rows event decodes (exit 0).
2. The last data file alone with `--schema SET_DIR/expected/schema.sql` (mariadb-dump --no-data of
   the final schema) gives the same records as (1) gives for that file, txn_id aside.
3. The same file alone without --schema: columns are @1, @2, ... with one warning per table, and
   the pre-10.0 high-precision temporals cannot be split into columns (undecodable_event, exit 1).
4. A --schema file that does not exist is a usage error (exit 2).
"""
import json
import os
import subprocess
import sys


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def records(text):
    out = []
    for line in text.splitlines():
        r = json.loads(line)
        r.pop("txn_id", None)
        out.append(r)
    return out


def main():
    binlogctl, set_dir = sys.argv[1:3]
    binlogs = os.path.join(set_dir, "binlogs")
    schema = os.path.join(set_dir, "expected", "schema.sql")
    failures = []

    rc, out, err = run([binlogctl, "convert", "--binary-as", "hex", binlogs])
    full = records(out)
    if rc != 0:
        failures.append("chain: exit %d: %s" % (rc, err.strip()[:500]))
    if "no column names" in err:
        failures.append("chain: warned about missing names: " + err.strip()[:300])
    rows = [r for r in full if r["type"] in ("INSERT", "UPDATE", "DELETE")]
    if not rows:
        failures.append("chain: no row changes")
    for r in rows:
        for side in ("before", "after"):
            if r[side] and any(k.startswith("@") for k in r[side]):
                failures.append("chain: @N name in %s:%s" % (r["log_name"], r["pos"]))
                break
    files = sorted({r["log_name"] for r in rows})
    last = files[-1]
    want = [r for r in full if r["log_name"] == last]

    rc, out, err = run([binlogctl, "convert", "--binary-as", "hex", "--schema", schema,
                        os.path.join(binlogs, last)])
    got = records(out)
    if rc != 0:
        failures.append("--schema: exit %d: %s" % (rc, err.strip()[:500]))
    if got != want:
        failures.append("--schema: %d records differ from the chain's %d for %s" % (len(got), len(want), last))
        for a, b in zip(got, want):
            if a != b:
                failures.append("  first difference:\n    --schema %s\n    chain    %s" % (json.dumps(a), json.dumps(b)))
                break

    rc, out, err = run([binlogctl, "convert", "--binary-as", "hex", os.path.join(binlogs, last)])
    if rc != 1:
        failures.append("no schema: exit %d, expected 1 (legacy temporals cannot be split)" % rc)
    if "undecodable_event" not in err:
        failures.append("no schema: no undecodable_event reported")
    warned = err.count("no column names")
    tables = {(r["database"], r["table"]) for r in want if "table" in r}
    if warned != len(tables):
        failures.append("no schema: %d name warnings for %d tables" % (warned, len(tables)))
    anon = [r for r in records(out) if r["type"] in ("INSERT", "UPDATE", "DELETE")]
    if not anon or not all(k.startswith("@") for r in anon for k in (r["after"] or r["before"])):
        failures.append("no schema: expected @N names on every decoded row")

    rc, _, err = run([binlogctl, "convert", "--schema", os.path.join(set_dir, "no-such.sql"), binlogs])
    if rc != 2 or "no-such.sql" not in err:
        failures.append("missing --schema file: exit %d, stderr %r" % (rc, err.strip()))

    for f in failures:
        print("FAIL " + f)
    print("%d records checked, %d failures" % (len(want), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
