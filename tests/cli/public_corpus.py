#!/usr/bin/env python3
"""Walk every file of ../shared/corpus/public with `binlogctl dump --format json` and check what
MANIFEST.md says about it: the event count, the torn and corrupt files' findings and exit codes,
and the values upstream tests assert (PREVIOUS_GTIDS sets, GTID tags, payload contents).

usage: public_corpus.py BINLOGCTL CORPUS_DIR     (exit 77 = skipped: no corpus)
"""
import json
import os
import re
import subprocess
import sys

# Files whose MANIFEST row says they are damaged: the finding, where, and dump's exit status.
DAMAGED = {
    "blackbeam__rust_mysql_common/binlog_truncated_event.000001": ("truncated_event", 4, 1),
    "blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001": ("truncated_event", 120, 1),
    "alibaba__canal/tsdb/mysql-bin.000001": ("bad_magic", 0, 1),
    # Upstream documents these events as broken (MANIFEST per-source notes).
    "blackbeam__rust_mysql_common/corrupt-relay-bin.000624": ("undecodable_event", 91204, 1),
}
# Files with events that only an unreleased 5.2 development tree wrote (type codes shifted):
# framing and counts are right, some bodies do not decode; the exit status says so.
ODD_BODIES = {
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001",
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001",
}


def dump(exe, path, *extra):
    p = subprocess.run([exe, "dump", "--format", "json", *extra, path], capture_output=True)
    recs = [json.loads(l) for l in p.stdout.decode("utf-8").splitlines()]
    return p.returncode, recs, p.stderr.decode("utf-8", errors="replace")


def manifest_rows(corpus):
    rows = {}
    with open(os.path.join(corpus, "MANIFEST.md"), encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"\| `([^`]+)` \| [^|]+\| `[^`]+` \| \w+ \| ([^|]*)\| ([^|]*)\| ([^|]*)\|", line)
            if m:
                events = m.group(4).strip()
                rows[m.group(1)] = int(events) if events.isdigit() else None
    return rows


def main():
    exe, corpus = sys.argv[1:3]
    if not os.path.isfile(os.path.join(corpus, "MANIFEST.md")):
        print("skip: no public corpus")
        return 77
    rows = manifest_rows(corpus)
    failures = []
    checked = 0
    for rel, count in sorted(rows.items()):
        path = os.path.join(corpus, rel)
        if not os.path.exists(path):
            failures.append(f"{rel}: listed in MANIFEST.md but missing")
            continue
        rc, recs, err = dump(exe, path)
        top = [r for r in recs if "inner_index" not in r]
        checked += 1
        if rel in DAMAGED:
            check, pos, want_rc = DAMAGED[rel]
            needle = f":{pos}: error: {check}:"
            if rc != want_rc or needle not in err:
                failures.append(f"{rel}: expected {check} at {pos} and exit {want_rc}, got exit {rc}: {err.strip()}")
            if count is not None and len(top) != count:
                failures.append(f"{rel}: {len(top)} events, MANIFEST says {count}")
            continue
        expect_rc = 1 if rel in ODD_BODIES else 0
        if rc != expect_rc:
            failures.append(f"{rel}: exit {rc} (expected {expect_rc}): {err.strip()[:300]}")
        if count is not None and len(top) != count:
            failures.append(f"{rel}: {len(top)} events, MANIFEST says {count}")

    def info_of(rel, event_type):
        _, recs, _ = dump(exe, os.path.join(corpus, rel))
        return [r["info"] for r in recs if r["event_type"] == event_type]

    # Values upstream tests assert.
    asserted = [
        ("ikarishinjieva__mysql_binlog_utils/mysql-bin56.000002", "Previous_gtids",
         "7e23401a-c603-11e3-8e13-5e10e6a05cfb:1-5,\n8186fc1e-c5ff-11e3-8df9-e66ccf50db66:1-11,\n"
         "a6ce328c-c602-11e3-8e0d-e66ccf50db66:1-6,\nb7009920-c601-11e3-8e07-5e10e6a05cfb:1-6"),
        ("blackbeam__rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001", "Previous_gtids",
         "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2"),
        ("blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", "Previous_gtids",
         "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2"),
        ("blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", "Gtid_tagged_log_event",
         "SET @@SESSION.GTID_NEXT= '55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3'"),
    ]
    for rel, et, want in asserted:
        got = info_of(rel, et)
        if want not in got:
            failures.append(f"{rel}: {et} info {got!r}, upstream asserts {want!r}")
    # transaction_compression.000001: one ZSTD payload holding QUERY, TABLE_MAP, WRITE_ROWS, XID.
    _, recs, _ = dump(exe, os.path.join(corpus, "blackbeam__rust_mysql_common/transaction_compression.000001"))
    inner = [r["event_type"] for r in recs if "inner_index" in r]
    if inner != ["Query", "Table_map", "Write_rows", "Xid"]:
        failures.append(f"transaction_compression.000001: inner events {inner}")
    # mariadb-bin.000001: the ROTATE name must not carry extra bytes.
    rot = info_of("blackbeam__rust_mysql_common/mariadb-bin.000001", "Rotate")
    if any("\\x" in r or "\x00" in r for r in rot):
        failures.append(f"mariadb-bin.000001: rotate info {rot}")
    # The gzipped sakila binlog: 1462 events once gunzipped.
    rc, recs, _ = dump(exe, os.path.join(corpus, "osheroff__mysql-binlog-connector-java/mysql-bin.sakila.gz"))
    if rc != 0 or len(recs) != 1462:
        failures.append(f"mysql-bin.sakila.gz: exit {rc}, {len(recs)} events (expected 1462)")

    for f in failures:
        print("FAIL", f)
    print(f"{checked} files walked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
