#!/usr/bin/env python3
"""convert --format canal-json: Canal's FlatMessage key set and value types.

usage: canal_json.py BINLOGCTL BINLOGS

Every line must have exactly Canal's keys with Canal's JSON types; INSERT/UPDATE/DELETE/DDL each
must occur; per type the data/old shape must be Canal's; the rows must add up, per table and type,
to the row records of convert --format json.
"""
import collections
import json
import subprocess
import sys

KEYS = {"id", "database", "table", "pkNames", "isDdl", "type", "es", "ts", "sql", "sqlType", "mysqlType", "data",
        "old", "gtid"}
DDL_TYPES = {"CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX"}


def fail(n, msg, m):
    raise SystemExit(f"line {n}: {msg}: {json.dumps(m)[:400]}")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def row_ok(row):
    return isinstance(row, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str))
                                         for k, v in row.items())


def main():
    binlogctl, binlogs = sys.argv[1:3]
    p = subprocess.run([binlogctl, "convert", "--format", "canal-json", binlogs], capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"convert --format canal-json exited {p.returncode}: {p.stderr.decode()}")
    seen = collections.Counter()
    rows = collections.Counter()
    last_id = 0
    for n, line in enumerate(p.stdout.decode().splitlines(), 1):
        m = json.loads(line)
        if set(m) != KEYS:
            fail(n, f"keys {sorted(set(m) ^ KEYS)} differ", m)
        for k in ("id", "es", "ts"):
            if not is_int(m[k]):
                fail(n, f"{k} is not an integer", m)
        if m["id"] < last_id or m["id"] < 1:
            fail(n, "id goes backwards", m)
        last_id = m["id"]
        for k in ("database", "table", "type", "sql"):
            if not isinstance(m[k], str):
                fail(n, f"{k} is not a string", m)
        if not isinstance(m["isDdl"], bool):
            fail(n, "isDdl is not a boolean", m)
        if m["gtid"] is not None and not isinstance(m["gtid"], str):
            fail(n, "gtid is neither null nor a string", m)
        t = m["type"]
        if m["isDdl"]:
            if t not in DDL_TYPES:
                fail(n, "isDdl with a DML type", m)
            for k in ("data", "old", "sqlType", "mysqlType", "pkNames"):
                if m[k] is not None:
                    fail(n, f"DDL with {k} not null", m)
            if not m["sql"]:
                fail(n, "DDL without sql", m)
            seen["DDL"] += 1
            continue
        if not isinstance(m["sqlType"], dict) or not all(is_int(v) for v in m["sqlType"].values()):
            fail(n, "sqlType is not an object of integers", m)
        if not isinstance(m["mysqlType"], dict) or not all(isinstance(v, str) for v in m["mysqlType"].values()):
            fail(n, "mysqlType is not an object of strings", m)
        if m["pkNames"] is not None and (not m["pkNames"] or not all(isinstance(x, str) for x in m["pkNames"])):
            fail(n, "pkNames is neither null nor a non-empty array of strings", m)
        if m["sql"]:  # statement-based DML: no rows
            if m["data"] is not None:
                fail(n, "statement with data", m)
            continue
        if t not in ("INSERT", "UPDATE", "DELETE"):
            fail(n, f"unexpected type {t}", m)
        if not isinstance(m["data"], list) or not m["data"] or not all(row_ok(r) for r in m["data"]):
            fail(n, "data is not a non-empty array of objects of strings/null", m)
        for r in m["data"]:
            if set(r) - set(m["sqlType"]) or set(r) - set(m["mysqlType"]):
                fail(n, "a data column has no sqlType/mysqlType", m)
        if t == "UPDATE":
            if m["old"] is not None:
                if not isinstance(m["old"], list) or not all(row_ok(r) and r for r in m["old"]):
                    fail(n, "old is not an array of non-empty objects", m)
                if len(m["old"]) > len(m["data"]):
                    fail(n, "more old rows than data rows", m)
        elif m["old"] is not None:
            fail(n, f"{t} with old", m)
        seen[t] += 1
        rows[(m["database"], m["table"], t)] += len(m["data"])
    for t in ("INSERT", "UPDATE", "DELETE", "DDL"):
        if seen[t] == 0:
            raise SystemExit(f"no {t} message in the output")
    j = subprocess.run([binlogctl, "convert", "--format", "json", binlogs], capture_output=True, check=True)
    want = collections.Counter()
    for line in j.stdout.decode().splitlines():
        r = json.loads(line)
        if r["type"] in ("INSERT", "UPDATE", "DELETE"):
            want[(r["database"], r["table"], r["type"])] += 1
    if rows != want:
        raise SystemExit(f"row counts differ:\n canal-json {sorted(rows.items())}\n json {sorted(want.items())}")
    print(f"ok: {dict(seen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
