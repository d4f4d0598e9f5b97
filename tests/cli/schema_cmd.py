#!/usr/bin/env python3
"""`binlogctl schema` on the project's fixtures and the shared MariaDB corpora, without a server.

Usage: schema_cmd.py BINLOGCTL FIXTURE_DIR [MARIADB_CORPUS_DIR]

1. Mid-chain reuse (the `schema` set: binlog_row_metadata=NO_LOG, so names come from schema
   history only): for every transaction start P of the first file, `schema --stop-position P`
   written to a file and given as --schema to `convert --start-position P` gives exactly the
   records that the whole chain's convert gives from P on (txn_id aside), with no warning.
2. --history (json) of the `schema` set: the versions of evolve/evolved in chain order are
   CREATE, ALTER, ALTER, renamed away, RENAME, ALTER, each at the position of its statement as
   convert lists the DDL; the text form of --history, given as --schema, gives the same final
   definitions as the chain.
3. Undefined tables: the last file of the `schema` set alone (no DDL, no names) lists each
   table it maps with defined:false and its column types; with --schema expected/schema.sql
   each is defined, from the schema file.
4. FULL metadata: the `metadata` set read from after its last DDL defines every table from its
   TABLE_MAP: names, nullability and primary key equal the DDL-defined ones of the whole chain.
5. Shared corpora (types, txn): the defined tables at the end are exactly the corpus's final
   tables (expected/tables.txt: dropped and renamed-away tables gone, TRUNCATE keeps one), each
   with the columns of its final rows (expected/*.jsonl), in order.
6. -o naming a --schema file is refused (exit 2); a missing input exits 2 with nothing on stdout.
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def jsonl(text):
    return [json.loads(line) for line in text.split("\n") if line]


def records(text):
    out = []
    for r in jsonl(text):
        r.pop("txn_id", None)
        out.append(r)
    return out


def main():
    b, fix = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else None
    tmp = tempfile.mkdtemp(prefix="schema_cmd.")
    sset = os.path.join(fix, "schema", "binlogs")
    files = sorted(os.path.join(sset, f) for f in os.listdir(sset) if not f.endswith(".index"))

    # ---- 1. mid-chain reuse
    rc, out, err = run([b, "convert", "--binary-as", "hex"] + files)
    check(rc == 0, "schema set: convert of the chain exits 0")
    full = records(out)
    rc, out, err = run([b, "dump", "--format", "json", files[0]])
    starts = [e["pos"] for e in jsonl(out) if e["event_type"] == "Gtid"]
    check(len(starts) >= 10, "schema set: %d transaction starts in the first file" % len(starts))
    bad = []
    for p in starts:
        s = os.path.join(tmp, "at%d.sql" % p)
        rc, _, err = run([b, "schema", "--stop-position", str(p), "-o", s, files[0]])
        if rc != 0:
            bad.append("%d: schema exit %d %s" % (p, rc, err[:200]))
            continue
        rc, out, err = run([b, "convert", "--binary-as", "hex", "--schema", s, "--start-position", str(p)] + files)
        want = [r for r in full if r["log_name"] != os.path.basename(files[0]) or r["pos"] >= p]
        got = records(out)
        if rc != 0 or "warning" in err or got != want:
            bad.append("%d: rc %d, %d records vs %d, stderr %s" % (p, rc, len(got), len(want), err[:200]))
    check(not bad, "schema set: --schema from `schema --stop-position P` reproduces the chain from P on "
          "(%d positions) %s" % (len(starts), bad[:2]))

    # ---- 2. --history
    rc, out, err = run([b, "schema", "--history", "--format", "json"] + files)
    check(rc == 0, "history: exit 0")
    versions = jsonl(out)
    check(all(v["kind"] == "version" for v in versions), "history: only versions (no undefined table)")
    ev = [(v["table"], v.get("change"), v["pos"]) for v in versions if v["table"] in ("evolve", "evolved")]
    ddl = {r["pos"]: r["sql"] for r in full if r["type"] == "DDL"}
    shape = [(t, c) for t, c, _ in ev]
    check(shape == [("evolve", "defined"), ("evolve", "defined"), ("evolve", "defined"), ("evolve", "removed"),
                    ("evolved", "defined"), ("evolved", "defined")], "history: evolve's versions %s" % shape)
    check([ddl.get(p, "").split(" ")[0] for _, _, p in ev] == ["CREATE", "ALTER", "ALTER", "RENAME", "RENAME", "ALTER"],
          "history: each version at its statement's position")
    names = [c["name"] for c in versions[-1]["columns"]] if versions else []
    check(versions and versions[-1]["table"] == "evolved" and names == ["u", "id", "name", "c"],
          "history: evolved ends as u, id, name, c: %s" % names)
    removed = [v for v in versions if v.get("change") == "removed"]
    check(len(removed) == 1 and removed[0]["reason"] == "renamed" and removed[0]["create"] is None,
          "history: the rename's removal says renamed")
    hist_sql = os.path.join(tmp, "history.sql")
    rc, _, err = run([b, "schema", "--history", "-o", hist_sql] + files)
    rc2, out2, _ = run([b, "schema", "--format", "json", "--schema", hist_sql, files[-1]])
    rc3, out3, _ = run([b, "schema", "--format", "json"] + files)

    def defs(text):
        return {(t["database"], t["table"]): (t["columns"], t["primary_key"], t["default_charset"])
                for t in jsonl(text) if t["kind"] == "table" and t["defined"]}
    check(rc == 0 and rc2 == 0 and defs(out2) == defs(out3) and len(defs(out3)) == 4,
          "history: the text history as --schema gives the chain's %d final definitions" % len(defs(out3)))

    # ---- 3. undefined tables, then defined by --schema (the last file with rows: only DML)
    last = [f for f in files if os.path.basename(f) in {r["log_name"] for r in full if "table" in r}][-1]
    rc, out, err = run([b, "schema", "--format", "json", last])
    tables = jsonl(out)
    mapped = {(r["database"], r["table"]) for r in full if r["log_name"] == os.path.basename(last) and "table" in r}
    undefined = {(t["database"], t["table"]): t for t in tables if t["kind"] == "table" and not t["defined"]}
    check(rc == 0 and set(undefined) == mapped and len(mapped) >= 3,
          "undefined: every table the last file maps is listed as undefined (%d)" % len(mapped))
    check(all(t["column_count"] == len(t["column_types"]) > 0 and "never defined" in t["message"]
              for t in undefined.values()), "undefined: column types and the reason given")
    rc, out, err = run([b, "schema", last])
    check(rc == 0 and out.count("columns never defined") == len(mapped) and "\nCREATE TABLE" not in out,
          "undefined (text): one comment per table, no CREATE TABLE")
    rc, out, err = run([b, "schema", "--format", "json", "--schema",
                        os.path.join(fix, "schema", "expected", "schema.sql"), last])
    tables = jsonl(out)
    check(rc == 0 and tables and all(t["defined"] and t["source"] == "schema_file" for t in tables),
          "--schema: every table defined from the schema file")

    # ---- 4. FULL metadata: definitions from the TABLE_MAPs
    mset = os.path.join(fix, "metadata", "binlogs")
    mfiles = sorted(os.path.join(mset, f) for f in os.listdir(mset) if not f.endswith(".index"))
    rc, out, _ = run([b, "schema", "--format", "json"] + mfiles)
    chain = {(t["database"], t["table"]): t for t in jsonl(out)}
    # From the first transaction after the set's last DDL on: only DML.
    _, mconv, _ = run([b, "convert", mfiles[0]])
    last_ddl = max(r["pos"] for r in jsonl(mconv) if r["type"] == "DDL")
    _, mdump, _ = run([b, "dump", "--format", "json", mfiles[0]])
    after = min(e["pos"] for e in jsonl(mdump) if e["event_type"] == "Gtid" and e["pos"] > last_ddl)
    rc2, out2, _ = run([b, "schema", "--format", "json", "--start-position", str(after), mfiles[0]])
    alone = {(t["database"], t["table"]): t for t in jsonl(out2)}
    check(rc == 0 and rc2 == 0 and alone and all(t["source"] == "table_map" for t in alone.values()),
          "metadata set: the last file alone defines %d tables from their TABLE_MAPs" % len(alone))

    def shape_of(t):
        return [(c["name"], c["nullable"], c["primary_key"]) for c in t["columns"]]
    diffs = [k for k in alone if k not in chain or shape_of(alone[k]) != shape_of(chain[k])]
    check(not diffs, "metadata set: names, nullability and keys equal the DDL's %s" % diffs[:2])

    # ---- 5. shared corpora
    if corpus and os.path.isdir(corpus):
        for name in ("types", "txn"):
            d = os.path.join(corpus, name, "binlogs")
            exp = os.path.join(corpus, name, "expected")
            if not os.path.isdir(d):
                continue
            rc, out, err = run([b, "schema", "--format", "json", d])
            got = {"%s.%s" % (t["database"], t["table"]): t for t in jsonl(out) if t["kind"] == "table" and t["defined"]}
            # The corpus's final tables (tables.txt) and the column order of their rows.
            want = [line.split("\t")[0] for line in open(os.path.join(exp, "tables.txt")) if line.strip()]
            check(rc == 0 and sorted(got) == sorted(want),
                  "corpus %s: the tables at the end are the corpus's %d (dropped, renamed away gone)" % (name, len(want)))
            wrong = []
            for t in want:
                with open(os.path.join(exp, t + ".jsonl")) as f:
                    first = f.readline()
                if not first.strip() or t not in got:
                    continue
                cols = list(json.loads(first).keys())
                mine = [c["name"] for c in got[t]["columns"]]
                if [c.lower() for c in mine] != [c.lower() for c in cols]:
                    wrong.append("%s: %s vs %s" % (t, mine, cols))
            check(not wrong, "corpus %s: every table's columns in the order of its final rows %s" % (name, wrong[:1]))

    # ---- 6. errors
    seed = os.path.join(tmp, "seed.sql")
    with open(seed, "w") as f:
        f.write("CREATE TABLE d.t (a INT);\n")
    rc, out, err = run([b, "schema", "--schema", seed, "-o", seed, files[0]])
    check(rc == 2 and open(seed).read() == "CREATE TABLE d.t (a INT);\n", "-o naming the --schema file: refused")
    rc, out, err = run([b, "schema", os.path.join(tmp, "missing.000001")])
    check(rc == 2 and out == "", "missing input: exit 2, nothing on stdout")

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)


main()
