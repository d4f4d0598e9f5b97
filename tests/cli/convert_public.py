#!/usr/bin/env python3
"""convert --format json on the public fixture corpus (../shared/corpus/public).

Usage: convert_public.py BINLOGCTL CORPUS_DIR

1. Every value that MANIFEST.md says an upstream test asserts is reproduced (JSON opaque values,
   vector floats, BIT bytes, ENUM/SET, negative TIME, minimal row image, partial JSON, MariaDB
   FULL metadata, compressed transaction, tagged GTID).
2. Every rows event and TABLE_MAP in every file decodes: convert reports no undecodable rows or
   table-map event and no rows event without its table map, and emits one record per row of
   each rows event that `dump --decode` lists.
Exit 77 when CORPUS_DIR is missing.
"""
import json
import os
import struct
import subprocess
import sys

BB = "blackbeam__rust_mysql_common"


def convert(binlogctl, path, *extra):
    p = subprocess.run([binlogctl, "convert", "--format", "json", *extra, path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    recs = [json.loads(l) for l in p.stdout.decode("utf-8").split("\n") if l]
    return p.returncode, recs, p.stderr.decode("utf-8", "replace")


def rows_of(recs):
    return [r for r in recs if r.get("type") in ("INSERT", "UPDATE", "DELETE")]


def f32(bs):
    return [struct.unpack("<f", bytes(bs[i:i + 4]))[0] for i in range(0, len(bs), 4)]


def close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= 1e-6 * max(1.0, abs(y)) for x, y in zip(a, b))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binlogctl, corpus = sys.argv[1:]
    if not os.path.isdir(corpus):
        print("skip: %s missing" % corpus)
        return 77
    failures = []

    def check(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            failures.append(what)

    def fx(name):
        return os.path.join(corpus, BB, name)

    # json-opaque.binlog: the 8 asserted JSON documents, in order.
    _, recs, _ = convert(binlogctl, fx("json-opaque.binlog"))
    want = [{"a": "base64:type15:VQ=="}, {"b": "2012-03-18"}, {"c": "2012-03-18 11:30:45.000000"},
            {"c": "87:31:46.654321"}, {"d": "123.456"}, {"e": "9.00"}, {"e": [0, 1, True, False]}, {"e": None}]
    got = [list(r["after"].values())[0] for r in rows_of(recs)]
    check(got == want, "json-opaque.binlog: opaque JSON values %s" % json.dumps(got)[:200])

    # vector.binlog: dimensions and float32 values
    _, recs, _ = convert(binlogctl, fx("vector.binlog"))
    foo = [r["after"] for r in rows_of(recs) if r["table"] == "foo" and r["type"] == "INSERT"][:2]
    check(len(foo) == 2 and foo[0]["id"] == 1 and close(foo[0]["vector_column"], f32([205, 204, 140, 63, 205, 204, 12, 64, 51, 51, 83, 64]))
          and foo[1]["id"] == 2 and close(foo[1]["vector_column"], f32([0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0])),
          "vector.binlog: foo rows (1, [1.1,2.2,3.3]) and (2, [1,-1,0])")
    bar = [r["after"] for r in rows_of(recs) if r["table"] == "bar" and r["type"] == "INSERT"]
    check(bool(bar) and len(bar[0]["vector_column"]) == 2 and len(bar[0]["vector_column2"]) == 4,
          "vector.binlog: bar vector dimensions [2, 4]")

    # mariadb-bin.000001 (MariaDB 10.5, FULL metadata): names, primary key, binary 'event' column
    _, recs_hex, _ = convert(binlogctl, fx("mariadb-bin.000001"), "--binary-as", "hex")
    _, recs_b64, _ = convert(binlogctl, fx("mariadb-bin.000001"), "--binary-as", "base64")
    r0, r1 = rows_of(recs_hex)[0], rows_of(recs_b64)[0]
    check(list(r0["after"]) == ["id", "topic", "event_type", "event", "created"] and r0["primary_key"] == ["id"],
          "mariadb-bin.000001: columns id, topic, event_type, event, created; primary key [id]")
    check(r0["after"]["event"] != r1["after"]["event"] and r0["after"]["topic"] == r1["after"]["topic"] == "foo",
          "mariadb-bin.000001: 'event' is binary (charset binary), 'topic' is text (utf8mb4)")

    # mysql_type_bit.000001
    _, recs, _ = convert(binlogctl, fx("mysql_type_bit.000001"))
    a = rows_of(recs)[0]["after"]
    check(list(a.values()) == [0b100, "foo", 0b100000], "mysql_type_bit.000001: BIT b'100', 'foo', BIT b'100000' -> %s" % a)

    # mysql-enum-string-set.000001: insert, update, delete
    _, recs, _ = convert(binlogctl, fx("mysql-enum-string-set.000001"))
    ch = rows_of(recs)
    ten = "0123456789" * 10
    ok = len(ch) == 3 and [c["type"] for c in ch] == ["INSERT", "UPDATE", "DELETE"]
    if ok:
        ins, upd = list(ch[0]["after"].values()), list(ch[1]["after"].values())
        ok = (ins[0] == ten and len(ins[1]) > 250 and ins[4] == "0123456789"
              and upd[0] == "field1" and upd[1] == "field_2" and upd[4] == ins[1]
              and ch[2]["before"] == ch[1]["after"])
        # ENUM index 1 -> 2 and SET bitmap 0b101 -> 0b1010: names from the metadata
        enum_names = ins[2], upd[2]
        set_names = ins[3], upd[3]
        ok = ok and enum_names[0] != enum_names[1] and set_names[0].count(",") == 1 and set_names[1].count(",") == 1
        print("      enum %s -> %s, set %s -> %s" % (enum_names + set_names))
    check(ok, "mysql-enum-string-set.000001: insert/update/delete values (ENUM index 1->2, SET 0b101->0b1010)")

    # minimal_row_metadata.000001 (MINIMAL image): 0-based column 4 = 3230202323 unsigned
    _, recs, err = convert(binlogctl, fx("minimal_row_metadata.000001"))
    a = rows_of(recs)[0]["after"]
    check(a.get("@5") == 3230202323 and "@2" not in a, "minimal_row_metadata.000001: @5 = 3230202323 (unsigned), absent columns absent: %s" % a)
    check("no column names" in err, "minimal_row_metadata.000001: warns that columns are named @N")

    # time_issue.000001: negative TIME
    _, recs, _ = convert(binlogctl, fx("time_issue.000001"))
    check(rows_of(recs)[0]["after"] == {"@1": "-507:48:27"}, "time_issue.000001: TIME -507:48:27")

    # transaction_compression.000001: the rows event inside the payload, with positions
    _, recs, _ = convert(binlogctl, fx("transaction_compression.000001"))
    r = rows_of(recs)
    check(len(r) == 1 and r[0]["inner_index"] == 2 and r[0]["payload_pos"] == r[0]["pos"],
          "transaction_compression.000001: one row inside TRANSACTION_PAYLOAD, inner_index 2")

    # json.binlog.000001: PARTIAL_UPDATE_ROWS shows the diff; where the before image has the
    # document, the diff is applied.
    _, recs, _ = convert(binlogctl, fx("json.binlog.000001"))
    partial = [c for c in rows_of(recs) if "json_diffs" in c]
    check(bool(partial) and all(c["json_diffs"] for c in partial),
          "json.binlog.000001: PARTIAL_UPDATE_ROWS records carry json_diffs (%d)" % len(partial))
    if partial:
        # no column-name metadata: the names come from the CREATE TABLE earlier in the file
        d = partial[0]["json_diffs"].get("json_col", [None])[0]
        check(d == {"op": "replace", "path": "$.age", "value": 26} and "json_col" not in partial[0]["after"]
              and partial[0]["primary_key"] == ["id"],
              "json.binlog.000001: first diff replace $.age = 26 on json_col (named by schema history); "
              "no before document, so json_col absent from after")

    # GTID forms
    _, recs, _ = convert(binlogctl, fx("binlog_transaction_with_GTID_TAG.000001"))
    check(any(r.get("gtid") == "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3" for r in recs),
          "binlog_transaction_with_GTID_TAG.000001: gtid uuid:mytag:3")

    # 2. every rows event decodes, everywhere
    files = []
    for root, _, names in os.walk(corpus):
        for n in names:
            if not n.endswith((".md", ".json")):
                files.append(os.path.join(root, n))
    total_rows_events = 0
    for path in sorted(files):
        rc, recs, err = convert(binlogctl, path)
        bad = [l for l in err.splitlines() if " error: " in l and ("ROWS" in l or "TABLE_MAP" in l)]
        # rows events per dump, and the records they produced
        p = subprocess.run([binlogctl, "dump", "--format", "json", "--decode", path], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        want_positions = {}
        for line in p.stdout.decode("utf-8").split("\n"):
            if not line:
                continue
            e = json.loads(line)
            if e["type_code"] in (23, 24, 25, 30, 31, 32, 39) + tuple(range(166, 172)):
                total_rows_events += 1
                want_positions.setdefault(e["pos"], 0)
        have = {r["pos"] for r in rows_of(recs)}
        missing = [pos for pos in want_positions if pos not in have]
        if bad or missing:
            failures.append("%s: %s%s" % (os.path.relpath(path, corpus), "; ".join(bad[:3]),
                                          " rows events without records at %s" % missing[:5] if missing else ""))
            print("FAIL  " + failures[-1])
    check(total_rows_events > 100, "every rows event of %d files decodes (%d rows events)" % (len(files), total_rows_events))

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
