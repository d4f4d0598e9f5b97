#!/usr/bin/env python3
"""End-to-end check of `binlogctl stats --format json` against the other subcommands.

usage: stats_check.py [--verify-transactions] [--args "OPTIONS"] BINLOGCTL INPUT...

For each INPUT (a binlog file or a directory/index, read as one chain):
  * every stdout line is UTF-8, a JSON object with a known `kind`, in the order
    table*, event_type*, transaction*, interval*, then exactly one summary line, last;
    each kind has the keys the man page promises;
  * per table, inserts/updates/deletes equal the row changes `binlogctl convert --format json`
    prints for that table (UPDATE: one record per before/after pair), and no table is missing;
  * per event type, count and bytes equal the records and summed event_size of
    `binlogctl dump --format json` (inner events of TRANSACTION_PAYLOAD included); the summary's
    events and bytes (top-level event_size) agree with dump too;
  * each listed transaction has as many rows as convert prints for its txn_id; the rankings are
    ordered, bounded by --top, and --top 3 lists the first three of a run with a large --top;
  * the intervals add up to the summary;
  * with --verify-transactions, the summary's transactions equal verify's;
  * the text format exits with the same status and has its sections.
--args gives selection options (e.g. "--start-datetime '2024-02-01 00:20:00'") passed to stats,
convert and dump alike.
Exit 77 (skip) when an input is missing (the shared corpus is optional).
"""
import collections
import json
import os
import shlex
import subprocess
import sys

KEYS = {
    "table": ["database", "table", "inserts", "updates", "deletes", "rows", "bytes", "events", "transactions"],
    "event_type": ["event_type", "type_code", "count", "bytes"],
    "transaction": ["rank", "txn_id", "gtid", "log_name", "pos", "bytes", "events", "rows", "duration_s",
                    "first_timestamp", "last_timestamp", "timestamp", "complete"],
    "interval": ["start", "seconds", "transactions", "events", "bytes", "rows", "inserts", "updates", "deletes"],
    "summary": ["files", "events", "inner_events", "bytes", "transactions", "tables", "rows", "inserts", "updates",
                "deletes", "uncounted_rows_events", "first_timestamp", "last_timestamp", "errors", "warnings"],
}
ORDER = ["table", "event_type", "transaction", "interval", "summary"]

failures = []
extra_args = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(exe, args):
    p = subprocess.run([exe] + args[:1] + extra_args + args[1:], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def json_lines(raw, what):
    try:
        text = raw.decode("utf-8")  # strict: the output must be valid UTF-8
    except UnicodeDecodeError as e:
        fail(f"{what}: output is not UTF-8: {e}")
        return []
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail(f"{what}: line {n} is not JSON: {e}: {line[:200]}")
    return out


def check_input(exe, inp, verify_transactions):
    rc, raw, err = run(exe, ["stats", "--format", "json", "--top", "1000000", inp])
    lines = json_lines(raw, f"stats {inp}")
    if rc not in (0, 1):
        fail(f"stats {inp}: exit {rc}: {err}")
        return
    # Shape and order.
    last = -1
    by_kind = collections.defaultdict(list)
    for i, rec in enumerate(lines):
        kind = rec.get("kind") if isinstance(rec, dict) else None
        if kind not in KEYS:
            fail(f"{inp}: line {i + 1} has no known kind: {rec}")
            continue
        missing = [k for k in KEYS[kind] if k not in rec]
        if missing:
            fail(f"{inp}: {kind} line lacks {missing}")
        if ORDER.index(kind) < last:
            fail(f"{inp}: {kind} line after a {ORDER[last]} line")
        last = ORDER.index(kind)
        by_kind[kind].append(rec)
    if len(by_kind["summary"]) != 1 or not lines or lines[-1].get("kind") != "summary":
        fail(f"{inp}: not exactly one summary line, last")
        return
    summary = by_kind["summary"][0]

    # Rows per table against convert.
    crc, craw, cerr = run(exe, ["convert", "--format", "json", inp])
    if crc != rc:
        fail(f"{inp}: convert exit {crc}, stats exit {rc}")
    want = collections.Counter()
    txn_rows = collections.Counter()
    for r in json_lines(craw, f"convert {inp}"):
        if r.get("type") in ("INSERT", "UPDATE", "DELETE"):
            want[(r["database"], r["table"], r["type"])] += 1
            txn_rows[r["txn_id"]] += 1
    got = collections.Counter()
    for t in by_kind["table"]:
        for key, op in (("inserts", "INSERT"), ("updates", "UPDATE"), ("deletes", "DELETE")):
            if t[key]:
                got[(t["database"], t["table"], op)] += t[key]
        if t["rows"] != t["inserts"] + t["updates"] + t["deletes"]:
            fail(f"{inp}: table {t['database']}.{t['table']}: rows is not the sum of its kinds")
    if got != want:
        fail(f"{inp}: rows per table differ from convert: stats only {dict(got - want)}, "
             f"convert only {dict(want - got)}")
    for key in ("inserts", "updates", "deletes"):
        if summary[key] != sum(t[key] for t in by_kind["table"]):
            fail(f"{inp}: summary {key} is not the sum over tables")
    if summary["tables"] != len(by_kind["table"]):
        fail(f"{inp}: summary tables {summary['tables']} != {len(by_kind['table'])} table lines")

    # Event types against dump.
    drc, draw, _ = run(exe, ["dump", "--format", "json", inp])
    if drc != rc:
        fail(f"{inp}: dump exit {drc}, stats exit {rc}")
    dump = json_lines(draw, f"dump {inp}")
    want_types = collections.Counter()
    want_bytes = collections.Counter()
    for r in dump:
        want_types[(r["event_type"], r["type_code"])] += 1
        want_bytes[(r["event_type"], r["type_code"])] += r["event_size"]
    got_types = collections.Counter({(e["event_type"], e["type_code"]): e["count"] for e in by_kind["event_type"]})
    got_bytes = collections.Counter({(e["event_type"], e["type_code"]): e["bytes"] for e in by_kind["event_type"]})
    if got_types != want_types or got_bytes != want_bytes:
        fail(f"{inp}: event types differ from dump: counts stats-only {dict(got_types - want_types)} "
             f"dump-only {dict(want_types - got_types)}; bytes stats-only {dict(got_bytes - want_bytes)} "
             f"dump-only {dict(want_bytes - got_bytes)}")
    if summary["events"] != len(dump):
        fail(f"{inp}: summary events {summary['events']} != {len(dump)} dump records")
    inner = sum(1 for r in dump if "payload_pos" in r)
    if summary["inner_events"] != inner:
        fail(f"{inp}: summary inner_events {summary['inner_events']} != {inner}")
    top_bytes = sum(r["event_size"] for r in dump if "payload_pos" not in r)
    if summary["bytes"] != top_bytes:
        fail(f"{inp}: summary bytes {summary['bytes']} != {top_bytes} (dump, top-level)")

    # Transactions.
    largest = [t for t in by_kind["transaction"] if t["rank"] == "largest"]
    longest = [t for t in by_kind["transaction"] if t["rank"] == "longest"]
    if len(largest) != summary["transactions"] or len(longest) != summary["transactions"]:
        fail(f"{inp}: with a large --top every transaction is listed in each ranking "
             f"({len(largest)}, {len(longest)} of {summary['transactions']})")
    for t in largest:
        if t["rows"] != txn_rows.get(t["txn_id"], 0):
            fail(f"{inp}: transaction {t['txn_id']} has {t['rows']} rows, convert prints {txn_rows.get(t['txn_id'], 0)}")
    if [t["bytes"] for t in largest] != sorted((t["bytes"] for t in largest), reverse=True):
        fail(f"{inp}: largest transactions not ordered by bytes")
    if [t["duration_s"] for t in longest] != sorted((t["duration_s"] for t in longest), reverse=True):
        fail(f"{inp}: longest transactions not ordered by duration")
    if sum(t["rows"] for t in largest) != summary["rows"]:
        fail(f"{inp}: transactions' rows do not add up to the summary")
    _, raw3, _ = run(exe, ["stats", "--format", "json", "--top", "3", inp])
    top3 = [r for r in json_lines(raw3, f"stats --top 3 {inp}") if r.get("kind") == "transaction"]
    for rank, full in (("largest", largest), ("longest", longest)):
        ids = [t["txn_id"] for t in top3 if t["rank"] == rank]
        if ids != [t["txn_id"] for t in full[:3]]:
            fail(f"{inp}: --top 3 {rank} is {ids}, not the first three of the full ranking")

    # Intervals.
    iv = by_kind["interval"]
    for key in ("transactions", "rows"):
        if sum(i[key] for i in iv) != summary[key]:
            fail(f"{inp}: intervals' {key} do not add up to the summary")
    if sum(i["events"] for i in iv) > summary["events"]:
        fail(f"{inp}: intervals hold more events than the summary")
    if [i["start"] for i in iv] != sorted(i["start"] for i in iv):
        fail(f"{inp}: intervals not in time order")

    if verify_transactions:
        _, vraw, _ = run(exe, ["verify", "--format", "json", inp])
        vs = [r["summary"] for r in json_lines(vraw, f"verify {inp}") if "summary" in r]
        if not vs or vs[0]["transactions"] != summary["transactions"]:
            fail(f"{inp}: summary transactions {summary['transactions']}, verify says {vs[0]['transactions'] if vs else '?'}")

    trc, traw, _ = run(exe, ["stats", inp])
    text = traw.decode("utf-8", "replace")
    if trc != rc:
        fail(f"{inp}: text exit {trc}, json exit {rc}")
    for title in ("Tables (", "Event types", "Largest transactions", "Longest transactions", "Timeline", "Summary"):
        if title not in text:
            fail(f"{inp}: text output lacks the section {title!r}")
    print(f"{inp}: {len(by_kind['table'])} tables, {summary['events']} events, "
          f"{summary['transactions']} transactions, {summary['rows']} rows")


def main():
    args = sys.argv[1:]
    verify_transactions = "--verify-transactions" in args
    args = [a for a in args if a != "--verify-transactions"]
    if "--args" in args:
        i = args.index("--args")
        extra_args.extend(shlex.split(args[i + 1]))
        del args[i:i + 2]
    if len(args) < 2:
        print(__doc__)
        return 2
    exe, inputs = args[0], args[1:]
    missing = [i for i in inputs if not os.path.exists(i)]
    if missing:
        print("skipped: missing", missing)
        return 77
    for inp in inputs:
        check_input(exe, inp, verify_transactions)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
