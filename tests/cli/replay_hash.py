#!/usr/bin/env python3
"""replay --path-by hash:N dispatches rows by their key (issue #15 point 7).

usage: replay_hash.py BINLOGCTL FIXTURE_DIR [TXN_CHAIN]

On the fixtures `schema` (no primary key in the TABLE_MAPs: it comes from schema history) and
`basic`, and on the shared MariaDB corpus `txn` when it is there:
  * exact: for the tables whose primary key is made of integer columns, the bucket of every row
    is computed here, independently, from `convert --format json` (the key values) and
    `dump --format json --decode` (the TABLE_MAP column types, hence the bytes of each key
    column in the row image), with the hash binlogctl-replay(1) defines. Each path "#k" must
    have as many source events as there are rows events with at least one row in bucket k
    (a rows event is split into one sub-event per bucket its rows reach);
  * (txn) the whole corpus at hash:64: every one of the 64 buckets is used (there are thousands of
    distinct keys; with K keys the chance that one of 64 buckets stays empty is below
    64 * (63/64)^K), where hashing the table name gave at most one bucket per table;
  * the bytes are the same whatever the grouping (a rows event's bytes are shared among its
    sub-events), and so are the control path's events;
  * (txn) every invariant holds under pressure (doc and ticdc runs where the circuit breaker or the
    release fires, resets and re-delivery happen).
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

M64 = (1 << 64) - 1
INT_SIZES = {"TINY": 1, "SHORT": 2, "INT24": 3, "LONG": 4, "LONGLONG": 8}


def fnv(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & M64
    return h


def finish(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def key_hash(db, table, raws):
    """binlogctl-replay(1), --path-by: FNV-1a 64 of db NUL table NUL, then per key column the
    tag 2 (a value), its length in 4 bytes little-endian and its bytes; splitmix64's finalizer."""
    data = db.encode() + b"\0" + table.encode() + b"\0"
    for raw in raws:
        data += b"\x02" + len(raw).to_bytes(4, "little") + raw
    return finish(fnv(0xCBF29CE484222325, data))


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def rows_of(binary, chain, check):
    """Every row of the chain: ((log_name, pos) of its event, (db, table), the bytes of its
    integer key columns or None), and the distinct (table, key) pairs."""
    # The TABLE_MAP in force for each rows event: (log_name, pos) -> column types.
    dump = run(binary, "dump", "--format", "json", "--decode", chain)
    check(dump.returncode == 0, f"dump {chain}: exit {dump.returncode}")
    types_at = {}
    maps = {}
    for line in dump.stdout.splitlines():
        ev = json.loads(line)
        body = ev.get("body") or {}
        if ev.get("event_type") == "Table_map":
            maps[(ev["log_name"], body["table_id"])] = body["column_types"]
        elif "rows_bytes" in body:
            types_at[(ev["log_name"], ev["pos"])] = maps.get((ev["log_name"], body["table_id"]))
    conv = run(binary, "convert", "--format", "json", chain)
    check(conv.returncode == 0, f"convert {chain}: exit {conv.returncode}")
    rows = []
    keys = set()  # distinct (table, key), or (table, whole image) without a key
    for line in conv.stdout.splitlines():
        r = json.loads(line)
        if r.get("type") not in ("INSERT", "UPDATE", "DELETE"):
            continue
        image = r["before"] if r["type"] == "DELETE" else r["after"]
        pk = r.get("primary_key") or []
        ident = (r["database"], r["table"])
        keys.add((ident, tuple(image[c] for c in pk) if pk else json.dumps(image, sort_keys=True)))
        event = (r["log_name"], r["pos"])
        types = types_at.get(event)
        raws = None
        if pk and types is not None:
            names = list(image)
            raws = []
            for c in pk:
                t = types[names.index(c)]
                if t not in INT_SIZES or not isinstance(image[c], int):
                    raws = None
                    break
                n = INT_SIZES[t]
                raws.append((image[c] & ((1 << (8 * n)) - 1)).to_bytes(n, "little"))
        rows.append((event, ident, raws))
    return rows, keys


def exact_check(binary, chain, rows, buckets_list, min_tables, min_rows, check, summary):
    """The tables every row of which has an integer key: their buckets computed here must be
    replay's, path by path."""
    exact = {ident for _, ident, _ in rows}
    exact -= {ident for _, ident, raws in rows if raws is None}
    check(len(exact) >= min_tables, f"{chain}: tables with integer keys: {sorted(exact)}")
    exact_rows = [(ev, ident, raws) for ev, ident, raws in rows if ident in exact]
    check(len(exact_rows) >= min_rows, f"{chain}: rows of those tables: {len(exact_rows)}")
    filt = ",".join(re.escape(db) + r"\." + re.escape(t) for db, t in sorted(exact))
    for n in buckets_list:
        buckets = defaultdict(set)  # event -> buckets of its rows
        for ev, (db, t), raws in exact_rows:
            buckets[ev].add(key_hash(db, t, raws) % n)
        want = Counter(b for bs in buckets.values() for b in bs)
        s = summary(chain, "--policy", "none", "--path-by", f"hash:{n}", "--filter", filt)
        got = {p["path"]: p["source_events"] for p in s["paths"]}
        control = got.pop("(control)", 0)
        got_buckets = {int(k[1:]): v for k, v in got.items()}
        check(got_buckets == dict(want),
              f"{chain} hash:{n}: per-bucket events differ from the independent computation: "
              f"{len(got_buckets)} paths against {len(want)}; first differences "
              f"{sorted(set(got_buckets.items()) ^ set(want.items()))[:6]}")
        by_table = summary(chain, "--policy", "none", "--filter", filt)
        tpaths = {p["path"]: p["source_events"] for p in by_table["paths"]}
        check(control == tpaths.get("(control)"),
              f"{chain} hash:{n}: control events {control} vs {tpaths.get('(control)')}")
        check(s["source_bytes"] == by_table["source_bytes"],
              f"{chain} hash:{n}: bytes {s['source_bytes']} vs {by_table['source_bytes']} per table")
        print(f"{chain} hash:{n} on {len(exact)} tables with integer keys: computed {len(want)} buckets, "
              f"{sum(want.values())} sub-events of {len(buckets)} rows events; replay: {len(got_buckets)} "
              f"paths, {sum(got_buckets.values())} events")


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    txn = sys.argv[3] if len(sys.argv) > 3 and os.path.isdir(sys.argv[3]) else None
    schema_chain = os.path.join(fixture, "schema", "binlogs")
    basic_chain = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    def summary(chain, *args):
        p = run(binary, "replay", "--format", "json", *args, chain)
        check(p.returncode == 0, f"replay {args}: exit {p.returncode} {p.stderr[-300:]!r}")
        try:
            return json.loads(p.stdout.strip().split(b"\n")[-1])["summary"]
        except (ValueError, KeyError, IndexError):
            check(False, f"replay {args}: no summary")
            return {"source_events": 0, "source_bytes": 0, "paths": [], "invariants": {"ok": False}}

    # Exact, on the fixture whose TABLE_MAPs carry no primary key (it comes from the schema
    # history the binlog's DDL builds, across ALTER TABLE and RENAME), on the basic one (FULL
    # metadata), and on the corpus.
    for chain, ns, min_tables, min_rows in ((schema_chain, (64,), 3, 20), (basic_chain, (64,), 3, 50),
                                            (txn, (64, 4096), 5, 10000)):
        if chain is None:
            print("note: the shared corpus txn is absent: its checks are skipped")
            break
        rows, keys = rows_of(binary, chain, check)
        exact_check(binary, chain, rows, ns, min_tables, min_rows, check, summary)
    if txn is not None:
        whole_corpus(txn, rows, keys, check, summary)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


def whole_corpus(txn, rows, keys, check, summary):
    # The whole corpus (keys of every kind, tables without a key by their whole image).
    check(len(keys) >= 1000, f"distinct keys: {len(keys)}")
    tables = {ident for _, ident, _ in rows}
    s = summary(txn, "--policy", "none", "--path-by", "hash:64")
    used = {p["path"] for p in s["paths"]} - {"(control)"}
    check(used == {f"#{k}" for k in range(64)}, f"hash:64: {len(used)} buckets used of 64 ({len(keys)} keys)")
    check(len(used) > len(tables), f"hash:64: {len(used)} paths, not more than the {len(tables)} tables")
    base = summary(txn, "--policy", "none")
    check(s["source_bytes"] == base["source_bytes"], "hash:64: bytes differ from --path-by table")
    print(f"hash:64: {len(used)} buckets for {len(keys)} distinct keys of {len(tables)} tables "
          f"(by table: {len(base['paths']) - 1} paths)")

    # Pressure: the breaker, the release and the drop markers fire; every invariant holds.
    for args, what in (
        (["--policy", "doc", "--quota", "64K", "--source-rate", "1MB/s", "--control-delay", "1s",
          "--sink", ".*=cap:4K/s"], "circuit_breaks"),
        (["--policy", "ticdc", "--quota", "64K", "--source-rate", "1MB/s", "--sink", ".*=cap:4K/s"], "resets"),
        (["--policy", "doc", "--quota", "256K", "--drop-rate", "0.01"], "drop_markers"),
    ):
        s = summary(txn, "--path-by", "hash:64", *args)
        check(s["invariants"]["ok"], f"hash:64 {args}: {s['invariants']}")
        check(s.get(what, 0) > 0 and s.get("resets", 0) > 0, f"hash:64 {args}: no {what} or no reset")
        check(s.get("redelivered", 0) > 0 or what == "drop_markers", f"hash:64 {args}: nothing re-delivered")
        print(f"hash:64 {' '.join(args)}: {what} {s.get(what)}, resets {s.get('resets')}, "
              f"redelivered {s.get('redelivered')}, invariants ok")


if __name__ == "__main__":
    sys.exit(main())
