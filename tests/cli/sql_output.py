#!/usr/bin/env python3
"""convert --format sql / --flashback on the project's fixtures, without a server.

Usage: sql_output.py BINLOGCTL FIXTURES_DIR [SHARED_DIR]

- every fixture set: one SQL statement per row change of convert --format json (an UPDATE whose
  images are equal gives a "# (no column changed)" comment instead), one BEGIN per COMMIT/ROLLBACK;
- --sql-set all: the same statements, each UPDATE setting every column;
- --flashback over a range with DDL refuses (exit 1, nothing written); --flashback-skip-unsafe
  writes as many undo statements as there were row changes, INSERT <-> DELETE swapped, in
  reverse order;
- a damaged event: exit 1, a "# DAMAGE" comment, nothing of it as SQL;
- a table without column names (shared corpus, when present): exit 1, "# SKIPPED", the error
  says to give --schema;
- usage errors: --flashback with another format, --tmpdir without --flashback (exit 2).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

BIN, FIX = sys.argv[1], sys.argv[2]
SHARED = sys.argv[3] if len(sys.argv) > 3 else None
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(*args):
    p = subprocess.run([BIN, "convert", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


ROW = re.compile(r"^(INSERT INTO|UPDATE|DELETE FROM) ", re.M)


def row_kinds(sql, statements=()):
    """The row statements of `sql` in order; lines that begin a statement-logged statement of
    `statements` (convert --format json's QUERY records) are not row changes."""
    firsts = {q.split("\n")[0] for q in statements}
    out = []
    for line in sql.splitlines():
        if line in firsts or line.rstrip(";") in firsts:
            continue
        m = ROW.match(line)
        if m:
            out.append({"INSERT INTO": "INSERT", "UPDATE": "UPDATE", "DELETE FROM": "DELETE"}[m.group(1)])
        elif line == "# (no column changed)":
            out.append("UPDATE")
    return out


for name in sorted(os.listdir(FIX)):
    logs = os.path.join(FIX, name, "binlogs")
    if name == "encrypted" or not os.path.isdir(logs):
        continue
    rc, js, _ = run(logs)
    rc2, sql, err = run("--format", "sql", logs)
    records = [json.loads(l) for l in js.splitlines()]
    want = [r["type"] for r in records if r.get("type") in ("INSERT", "UPDATE", "DELETE")]
    queries = [r["sql"] for r in records if r.get("type") == "QUERY"]
    got = row_kinds(sql, queries)
    check(rc == rc2 == 0 and want == got and len(want) > 0,
          "%s: one statement per row change, in order (%d json, %d sql; rc %d/%d %s)" %
          (name, len(want), len(got), rc, rc2, err.strip()[:200]))
    begins = sql.count("\nBEGIN;\n") + sql.startswith("BEGIN;\n")
    ends = len(re.findall(r"^(COMMIT|ROLLBACK);", sql, re.M))
    check(begins == ends and begins > 0, "%s: every BEGIN is closed (%d BEGIN, %d COMMIT/ROLLBACK)" % (name, begins, ends))
    if name == "metadata":
        rc, all_sql, _ = run("--format", "sql", "--sql-set", "all", logs)
        check(rc == 0 and row_kinds(all_sql) == got and all_sql != sql and
              all(l.count("=") >= 2 for l in all_sql.splitlines() if l.startswith("UPDATE")),
              "metadata: --sql-set all sets every column")
        rc, fb, err = run("--flashback", logs)
        check(rc == 1 and fb == "" and "cannot be undone" in err, "metadata: --flashback refuses a range with DDL")
        rc, fb, err = run("--flashback", "--flashback-skip-unsafe", logs)
        undo = {"INSERT": "DELETE", "DELETE": "INSERT", "UPDATE": "UPDATE"}
        check(rc == 0 and row_kinds(fb) == [undo[k] for k in reversed(got)] and "# SKIPPED" in fb,
              "metadata: --flashback-skip-unsafe undoes every row change, last first (%d)" % len(row_kinds(fb)))

# a damaged event
src = os.path.join(FIX, "basic", "binlogs")
first = sorted(f for f in os.listdir(src) if not f.endswith(".index"))[0]
data = bytearray(open(os.path.join(src, first), "rb").read())
data[len(data) // 2] ^= 0xFF
with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, first)
    open(bad, "wb").write(data)
    rc, sql, err = run("--format", "sql", bad)
    rc_ok, sql_ok, _ = run("--format", "sql", os.path.join(src, first))
    check(rc == 1 and "# DAMAGE" in sql and len(row_kinds(sql)) < len(row_kinds(sql_ok)),
          "damaged event: exit 1, # DAMAGE, its rows not written (%d of %d)" %
          (len(row_kinds(sql)), len(row_kinds(sql_ok))))

# a table without column names
nonames = os.path.join(SHARED or "", "corpus/public/alibaba__canal/mysql-bin.000002")
if SHARED and os.path.exists(nonames):
    rc, sql, err = run("--format", "sql", nonames)
    check(rc == 1 and "# SKIPPED" in sql and "--schema" in err and not row_kinds(sql),
          "table without column names: refused, exit 1")

# usage
rc, _, err = run("--flashback", "--format", "json", src)
check(rc == 2, "--flashback --format json is a usage error")
rc, _, err = run("--format", "sql", "--tmpdir", "/tmp", src)
check(rc == 2, "--tmpdir without --flashback is a usage error")

print("%d check(s) failed" % len(FAILS) if FAILS else "all checks passed")
sys.exit(1 if FAILS else 0)
