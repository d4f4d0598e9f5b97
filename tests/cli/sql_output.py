#!/usr/bin/env python3
"""convert --format sql / --flashback on the project's fixtures, without a server.

Usage: sql_output.py BINLOGCTL FIXTURES_DIR [SHARED_DIR]

- every fixture set: one SQL statement per row change of convert --format json (an UPDATE whose
  images are equal gives a "# (no column changed)" comment instead), one BEGIN per COMMIT/ROLLBACK;
- --sql-set all: the same statements, each UPDATE setting every column;
- --flashback over a range with DDL on the tables it changes refuses (exit 1, nothing written); --flashback-skip-unsafe
  writes as many undo statements as there were row changes, INSERT <-> DELETE swapped, in
  reverse order;
- a damaged event: exit 1, a "# DAMAGE" comment, nothing of it as SQL;
- a table without column names (shared corpus, when present): exit 1, "# SKIPPED", the error
  says to give --schema;
- every row statement's values equal convert --format json's images: an INSERT's values and an
  UPDATE's SET the after image, the WHERE of an UPDATE or DELETE the before image (fixtures, the
  MariaDB types corpus, the MySQL 5.7 file and every MySQL 8.0/9 file of the public corpus that
  has rows with column names);
- usage errors: --flashback with another format, --tmpdir without --flashback (exit 2).
The checks above run with --sql-batch-bytes 0 --sql-comments row (one statement per row, each under
its position comment); those of issue #35 run the defaults:
- multi-row INSERTs hold the same rows in the same order as one INSERT per row, by default and with
  a small --sql-batch-bytes (no multi-row statement over it); so do bulk UPDATEs and DELETEs by
  key (each expanded into the statements of one row it stands for, its ORDER BY following its
  keys; some by a composite key); one comment per transaction, none per row statement;
  --sql-comments none writes no comment line;
- MariaDB GTIDs: SET gtid_domain_id/server_id/gtid_seq_no for every transaction, in the order and
  with the values of convert --format json's gtid, before its BEGIN; the session's own server_id
  and domain saved once and set back last; --skip-gtids and --flashback write none;
- MySQL GTIDs (public corpus): GTID_NEXT='uuid:tag:n' (9.6 tagged) and 'ANONYMOUS' (8.0) before
  each transaction, 'AUTOMATIC' last; --skip-gtids writes none;
- --rewrite-db (twice, spaces around names) rewrites table names and USE and nothing else; -d
  compares the rewritten name; -D wraps the output in sql_log_bin=0 and back;
- --with-statement: each row change carries its ANNOTATE_ROWS text, DDL its thread_id; without it
  neither key; usage errors for the new options in the wrong format or malformed.
"""
import json
import struct
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
    if ("sql" in args or "--flashback" in args) and "--sql-batch-bytes" not in args:
        args = ("--sql-batch-bytes", "0", "--sql-comments", "row", *args)  # one statement per row
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


POS = re.compile(r"^# \S+:\d+ .* UTC$")


def row_positions(sql):
    """The position comment line in effect at each row statement of `sql`, in order."""
    out, pos = [], None
    for line in sql.splitlines():
        if POS.match(line):
            pos = line
        elif ROW.match(line) or line == "# (no column changed)":
            out.append(pos)
    return out


def value_at(s, j):
    """The literal at s[j] as a Python value: numbers as ("num", text), strings decoded (charset
    introducers honoured), X'..' as ("bin", hex), b'..' as int, CAST(.. AS JSON) as ("json",
    parsed), ST_GeomFromWKB(X'w', srid) as ("bin", hex(srid LE + wkb)), a JSON_...(...)
    expression (a partial JSON update without its before image) as ("expr", text)."""
    n = len(s)

    def string_at(j):  # '...' with '' doubled; returns (text, next index)
        assert s[j] == "'"
        j += 1
        buf = []
        while True:
            c = s[j]
            if c == "'":
                if j + 1 < n and s[j + 1] == "'":
                    buf.append("'")
                    j += 2
                    continue
                return "".join(buf), j + 1
            buf.append(c)
            j += 1

    if s.startswith("NULL", j):
        return None, j + 4
    if s.startswith("JSON_", j):
        depth, k = 0, j
        while True:
            if s[k] == "'":
                _, k = string_at(k)
                continue
            if s[k] == "(":
                depth += 1
            elif s[k] == ")":
                depth -= 1
                if depth == 0:
                    return ("expr", s[j:k + 1]), k + 1
            k += 1
    if s.startswith("CAST(", j):
        v, j = value_at(s, j + 5)
        assert s.startswith(" AS JSON)", j), s[j:j + 20]
        return ("json", json.loads(v)), j + 9
    if s.startswith("ST_GeomFromWKB(", j):
        wkb, j = value_at(s, j + 15)
        assert s.startswith(", ", j)
        k = s.index(")", j)
        srid = int(s[j + 2:k])
        return ("bin", srid.to_bytes(4, "little").hex() + wkb[1]), k + 1
    if s.startswith("X'", j):
        k = s.index("'", j + 2)
        return ("bin", s[j + 2:k].lower()), k + 1
    if s.startswith("b'", j):
        k = s.index("'", j + 2)
        return int(s[j + 2:k], 2), k + 1
    if s[j] == "_":
        k = j + 1
        while s[k].isalnum():
            k += 1
        cs = s[j + 1:k]
        if s.startswith(" X'", k):
            raw, k = value_at(s, k + 1)
            data = bytes.fromhex(raw[1])
            pycs = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "latin1": "cp1252", "ascii": "ascii",
                    "utf16": "utf-16-be", "ucs2": "utf-16-be", "utf16le": "utf-16-le",
                    "utf32": "utf-32-be"}.get(cs, "utf-8")
            return data.decode(pycs, "backslashreplace").replace("\\x", "\\\\x"), k
        return string_at(k)
    if s[j] == "'":
        return string_at(j)
    k = j
    while k < n and s[k] not in ",) ;":
        k += 1
    return ("num", s[j:k]), k


def literals(values_sql, start=0):
    """The literals of a VALUES (...) list (value_at)."""
    out = []
    assert values_sql[start] == "("
    i = start + 1
    while True:
        v, i = value_at(values_sql, i)
        out.append(v)
        if values_sql[i] == ")":
            return out
        assert values_sql[i] == ",", values_sql[i:i + 20]
        i += 1


def ident_at(s, j):
    """`name` at s[j] (backticks doubled inside): (name, next index)."""
    assert s[j] == "`", s[j:j + 20]
    k, buf = j + 1, []
    while True:
        if s[k] == "`":
            if s.startswith("``", k):
                buf.append("`")
                k += 2
                continue
            return "".join(buf), k + 1
        buf.append(s[k])
        k += 1


def pairs(s, j, sep):
    """`c`=value or `c` IS NULL terms separated by `sep`: ([(name, value)], next index)."""
    out = []
    while True:
        name, j = ident_at(s, j)
        if s.startswith(" IS NULL", j):
            out.append((name, None))
            j += 8
        else:
            assert s[j] == "=", s[j:j + 20]
            v, j = value_at(s, j + 1)
            out.append((name, v))
        if not s.startswith(sep, j):
            return out, j
        j += len(sep)


def same_value(sql_v, json_v):
    if isinstance(sql_v, tuple) and sql_v[0] == "bin":
        if isinstance(json_v, list):  # VECTOR: JSON has the float32 values
            return sql_v[1] == b"".join(struct.pack("<f", x) for x in json_v).hex()
        return sql_v[1] == json_v
    if isinstance(sql_v, tuple) and sql_v[0] == "json":
        return sql_v[1] == json_v
    if isinstance(sql_v, tuple) and sql_v[0] == "num":
        t = sql_v[1]
        if isinstance(json_v, str):  # DECIMAL
            return t == json_v
        if isinstance(json_v, bool) or json_v is None:
            return False
        if isinstance(json_v, int) and re.fullmatch(r"-?\d+", t):
            return int(t) == json_v
        x = float(t)  # FLOAT: SQL has the widened double, JSON the float32's shortest digits
        return x == float(json_v) or struct.pack("<f", x) == struct.pack("<f", float(json_v))
    return sql_v == json_v


def check_values(path):
    """Every row statement's values equal convert --format json's images (binary as hex): an
    INSERT's values the after image, an UPDATE's SET the after image and its WHERE the before
    image, a DELETE's WHERE the before image. Returns (rc, statements, json row records,
    mismatches, partial JSON expressions not compared)."""
    rc, js, _ = run("--binary-as", "hex", path)
    rc2, sql, _ = run("--format", "sql", path)
    records = [json.loads(l) for l in js.splitlines()]
    rows = [r for r in records if r.get("type") in ("INSERT", "UPDATE", "DELETE")]
    passed = {l for r in records if r.get("type") in ("QUERY", "DDL") for l in r["sql"].splitlines()}
    # (kind, offset in sql) of each row statement (text values may hold newlines: statements are
    # parsed in the whole text), or (UPDATE, None) for the comment an unchanged UPDATE gives
    stmts = []
    for m in re.finditer(r"^(INSERT INTO `|UPDATE `|DELETE FROM `|# \(no column changed\)$)", sql, re.M):
        line = sql[m.start():sql.find("\n", m.start())]
        if line in passed or line.rstrip(";") in passed:
            continue
        kind = {"I": "INSERT", "U": "UPDATE", "D": "DELETE", "#": "UPDATE"}[m.group(1)[0]]
        stmts.append((kind, None if m.group(1)[0] == "#" else m.start()))
    bad, exprs = [], 0

    def compare(terms, image, what):
        nonlocal exprs
        for c, v in terms:
            jv = image.get(c)
            if isinstance(v, tuple) and v[0] == "expr":
                exprs += 1
                continue
            if isinstance(jv, str) and jv.startswith("base64:"):
                continue
            if not same_value(v, jv):
                bad.append("%s %s: %r vs json %r" % (what, c, v, jv))

    for rec, (kind, at) in zip(rows, stmts):
        if kind != rec["type"]:
            bad.append("%s statement for a %s record" % (kind, rec["type"]))
            continue
        if at is None:
            continue
        if kind == "INSERT":
            v_at = sql.index(" VALUES (", at)
            cols = [c.replace("``", "`") for c in re.findall(r"`((?:[^`]|``)*)`", sql[at:v_at])[2:]]
            compare(zip(cols, literals(sql, v_at + 8)), rec["after"], "INSERT")
            continue
        j = at + (len("UPDATE ") if kind == "UPDATE" else len("DELETE FROM "))
        _, j = ident_at(sql, j)
        assert sql[j] == "."
        _, j = ident_at(sql, j + 1)
        if kind == "UPDATE":
            assert sql.startswith(" SET ", j)
            sets, j = pairs(sql, j + 5, ",")
            compare(sets, rec["after"], "UPDATE SET")
        assert sql.startswith(" WHERE ", j), sql[j:j + 20]
        where, j = pairs(sql, j + 7, " AND ")
        compare(where, rec["before"], kind + " WHERE")
    return rc2, len(stmts), len(rows), bad[:3], exprs


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
        check(rc == 1 and fb == "" and "cannot be undone" in err, "metadata: --flashback refuses a range with DDL on the tables it changes")
        rc, fb, err = run("--flashback", "--flashback-skip-unsafe", logs)
        undo = {"INSERT": "DELETE", "DELETE": "INSERT", "UPDATE": "UPDATE"}
        check(rc == 0 and row_kinds(fb) == [undo[k] for k in reversed(got)] and "# SKIPPED" in fb,
              "metadata: --flashback-skip-unsafe undoes every row change, last first (%d)" % len(row_kinds(fb)))
        # Each undo row has its own position comment (the row change's, as forward writes it) and
        # each undo UPDATE the original time (ON UPDATE CURRENT_TIMESTAMP columns), with any spill.
        lines = fb.splitlines()
        ts_ok = all(i > 0 and lines[i - 1].startswith("SET TIMESTAMP=") for i, l in enumerate(lines)
                    if l.startswith("UPDATE "))
        for extra in ([], ["--flashback-memory", "4096"]):
            rc, fb2, _ = run("--flashback", "--flashback-skip-unsafe", *extra, logs)
            check(rc == 0 and fb2 == fb and ts_ok and "UPDATE " in fb and
                  row_positions(fb2) == list(reversed(row_positions(sql))) and None not in row_positions(fb2),
                  "metadata: --flashback%s: each undo row under its row change's position comment, "
                  "each undo UPDATE after SET TIMESTAMP" % (" (spilling)" if extra else ""))

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

# a damaged rows event inside a transaction: the transaction is rolled back, not committed
events = [json.loads(l) for l in subprocess.run([BIN, "dump", "--format", "json", os.path.join(src, first)],
                                                stdout=subprocess.PIPE).stdout.decode().splitlines()]
# a rows event after another rows event of its transaction (so that the transaction has begun)
rows_ev, seen = [], False
for ev in events:
    if ev["event_type"] in ("Gtid", "Xid"):
        seen = False
    elif ev["type_code"] in (23, 24, 25, 30, 31, 32):  # WRITE/UPDATE/DELETE_ROWS v1, v2
        if seen:
            rows_ev.append(ev)
        seen = True
check(rows_ev != [], "the fixture has a transaction of several rows events")
if rows_ev:
    e = rows_ev[len(rows_ev) // 2]
    data = bytearray(open(os.path.join(src, first), "rb").read())
    data[e["pos"] + e["event_size"] - 6] ^= 0x01  # a byte of the body, before the checksum
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, first)
        open(bad, "wb").write(data)
        rc, sql, err = run("--format", "sql", bad)
        mark = "# DAMAGE %s:%d" % (first, e["pos"])
        check(rc == 1 and mark in sql and "ROLLBACK; # incomplete" in sql[sql.index(mark):] if mark in sql else False,
              "a damaged rows event: exit 1, its transaction ends with ROLLBACK (rc %d, %s)" % (rc, mark))

# a file cut inside a transaction: the finding every consumer reports, and ROLLBACK in the output
if rows_ev:
    e = rows_ev[len(rows_ev) // 2]
    data = open(os.path.join(src, first), "rb").read()[:e["pos"] + e["event_size"]]
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, first)
        open(cut, "wb").write(data)
        rc, sql, err = run("--format", "sql", "--skip-gtids", cut)
        check(rc == 1 and sql.rstrip().splitlines()[-1].startswith("ROLLBACK; # cut off") and "transaction_structure" in err,
              "a file cut inside a transaction: exit 1, the transaction rolled back (rc %d)" % rc)
        rc, fb, err = run("--flashback", "--flashback-skip-unsafe", cut)
        committed = row_kinds(sql[:sql.rindex("\nBEGIN;\n")])  # the forward rows before the cut transaction
        undo = {"INSERT": "DELETE", "DELETE": "INSERT", "UPDATE": "UPDATE"}
        check("transaction_structure" in err and row_kinds(fb) == [undo[k] for k in reversed(committed)],
              "a file cut inside a transaction: flashback leaves the cut transaction out (%d undone)" % len(row_kinds(fb)))

# -d/--database: only that database's rows and statements
rc, sql, err = run("--format", "sql", "-d", "nosuchdb", os.path.join(src, first))
check(rc == 0 and row_kinds(sql) == [] and "CREATE" not in sql, "-d another database: nothing")

# damaged and cut copies never crash or hang: exit 0 or 1 (2 only for an unreadable input)
import random
rnd = random.Random(17)
clean_files = [os.path.join(FIX, d, "binlogs", f) for d in ("basic", "metadata", "compressed")
               for f in sorted(os.listdir(os.path.join(FIX, d, "binlogs"))) if not f.endswith(".index")]
with tempfile.TemporaryDirectory() as tmp:
    worst = []
    for n in range(24):
        path = clean_files[n % len(clean_files)]
        data = bytearray(open(path, "rb").read())
        if n % 3 == 0:
            data = data[:rnd.randrange(4, len(data))]
        else:
            for _ in range(1 + n % 4):
                data[rnd.randrange(4, len(data))] = rnd.randrange(256)
        cut = os.path.join(tmp, "x%02d.bin" % n)
        open(cut, "wb").write(data)
        for args in (["--format", "sql"], ["--flashback", "--flashback-skip-unsafe", "--flashback-memory", "4096",
                                          "--tmpdir", tmp]):
            try:
                p = subprocess.run([BIN, "convert", *args, cut], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=60)
                if p.returncode not in (0, 1) or b"Sanitizer" in p.stderr:
                    worst.append("%s %s: rc %d" % (cut, args[0], p.returncode))
            except subprocess.TimeoutExpired:
                worst.append("%s %s: timeout" % (cut, args[0]))
    check(not worst, "24 damaged or cut copies: exit 0 or 1, no crash %s" % worst[:3])
    check(sorted(os.listdir(tmp)) == ["x%02d.bin" % n for n in range(24)], "no spill file left in --tmpdir")

# a table without column names
nonames = os.path.join(SHARED or "", "corpus/public/alibaba__canal/mysql-bin.000002")
if SHARED and os.path.exists(nonames):
    rc, sql, err = run("--format", "sql", nonames)
    check(rc == 1 and "# SKIPPED" in sql and "--schema" in err and not row_kinds(sql),
          "table without column names: refused, exit 1")

# SQL values equal JSON values, statement by statement: the fixtures, and the shared corpus's files
# (MySQL 5.7/8.0/9 included: no MySQL server runs here, so this is their check)
value_files = [os.path.join(FIX, d, "binlogs") for d in sorted(os.listdir(FIX))
               if d != "encrypted" and os.path.isdir(os.path.join(FIX, d, "binlogs"))]
if SHARED:
    pub = os.path.join(SHARED, "corpus/public")
    for f in ("blackbeam__rust_mysql_common/json.binlog.000001", "blackbeam__rust_mysql_common/json-opaque.binlog",
              "blackbeam__rust_mysql_common/vector.binlog", "blackbeam__rust_mysql_common/binlog-invisible-columns.000001",
              "blackbeam__rust_mysql_common/mysql-enum-string-set.000001", "blackbeam__rust_mysql_common/mysql_type_bit.000001",
              "rust-us__mysql-cdc-rs/5.7/30_write_rows_v2/log.bin"):
        if os.path.exists(os.path.join(pub, f)):
            value_files.append(os.path.join(pub, f))
    if os.path.isdir(os.path.join(SHARED, "corpus/mariadb/types/binlogs")):
        value_files.append(os.path.join(SHARED, "corpus/mariadb/types/binlogs"))
for path in value_files:
    rc, n_sql, n_json, bad, exprs = check_values(path)
    check(n_sql == n_json and n_sql > 0 and not bad,
          "values of %s: %d row statements equal the JSON images%s %s" %
          (os.path.relpath(path), n_sql, " (%d partial JSON expressions not compared)" % exprs if exprs else "", bad))

# LOAD DATA logged as a statement: not written, an error
load = os.path.join(SHARED or "", "corpus/public/rust-us__mysql-cdc-rs/5.7/17_18_load/log.bin")
if SHARED and os.path.exists(load):
    rc, sql, err = run("--format", "sql", load)
    check(rc == 1 and "# SKIPPED" in sql and "LOAD DATA" in err and
          not re.search(r"^LOAD DATA", sql, re.M | re.I), "statement-logged LOAD DATA: skipped with an error")

# ---- issue #35: GTIDs kept, replay options, multi-row INSERTs, comments, --with-statement -------
# (the checks above run with --sql-batch-bytes 0 --sql-comments row: one statement per row, each
# under its position comment; these run the defaults)


def values_end(s, start):
    """The index after the (...) value list at s[start]."""
    assert s[start] == "("
    i = start + 1
    while True:
        _, i = value_at(s, i)
        if s[i] == ")":
            return i + 1
        i += 1


IDENT = r"`(?:[^`]|``)*`"
KEYED_TAIL = re.compile(r" WHERE (%s|\((?:%s)(?:,%s)+\)) IN \(([-0-9,()]+)\) ORDER BY ([^;]+);$" % (IDENT, IDENT, IDENT))
KEYED_STATS = {"statements": 0, "rows": 0, "desc": 0, "composite": 0, "bad": []}


def expand_keyed(line):
    """A bulk UPDATE or DELETE by an integer key (sql_convert.cpp, keyed_statement) as the
    statements of one row each that it stands for, in its order, as --sql-batch-bytes 0 writes
    them; None for any other line. Checks that its ORDER BY follows its keys (strictly, one way)
    and that every CASE names the IN list's keys in the same order."""
    m = KEYED_TAIL.search(line)
    if not m or not (line.startswith("UPDATE `") or line.startswith("DELETE FROM `")):
        return None
    names = re.findall(IDENT, m.group(1))
    tuples = [[int(x) for x in t.split(",")] for t in re.findall(r"\(([-0-9,]+)\)", m.group(2))] \
        if len(names) > 1 else [[int(x)] for x in m.group(2).split(",")]
    order = [o.strip() for o in m.group(3).split(",")]
    desc = all(o.endswith(" DESC") for o in order)
    ok = [o[:-5] if desc else o for o in order] == names and len(tuples) > 1
    ok = ok and all((a > b) if desc else (a < b) for a, b in zip(tuples, tuples[1:]))
    where = [" AND ".join("%s=%d" % (n, v) for n, v in zip(names, t)) for t in tuples]
    head = line[:m.start()]
    KEYED_STATS["statements"] += 1
    KEYED_STATS["rows"] += len(tuples)
    KEYED_STATS["desc"] += desc
    KEYED_STATS["composite"] += len(names) > 1
    if head.startswith("DELETE FROM "):
        if not ok:
            KEYED_STATS["bad"].append(line[:300])
        return ["%s WHERE %s;" % (head, w) for w in where]
    t = re.match(r"UPDATE %s\.%s SET " % (IDENT, IDENT), head)
    i, sets = t.end(), []
    while i < len(head):
        c = re.match(IDENT + "=CASE", head[i:])
        i += c.end()
        col, vals = c.group(0)[:-5], []
        if len(names) == 1:
            assert head.startswith(" " + names[0], i)
            i += 1 + len(names[0])
        for w in where:
            cond = " WHEN %s THEN " % (w.split("=", 1)[1] if len(names) == 1 else w)
            ok = ok and head.startswith(cond, i)
            i += len(cond)
            _, e = value_at(head, i)
            vals.append(head[i:e])
            i = e
        ok = ok and head.startswith(" END", i)
        i += 4
        sets.append((col, vals))
        if i < len(head):
            ok = ok and head[i] == ","
            i += 1
    if not ok:
        KEYED_STATS["bad"].append(line[:300])
    return ["%s SET %s WHERE %s;" % (head[:t.end() - 5], ",".join("%s=%s" % (c, v[r]) for c, v in sets), w)
            for r, w in enumerate(where)]


def row_tuples(sql, statements=()):
    """Every row of every INSERT as (head, values text), and the other row statements' lines, in
    order: the same list for one INSERT per row and for multi-row INSERTs (and bulk UPDATEs and
    DELETEs by key: expand_keyed)."""
    passed = {l for q in statements for l in q.splitlines()}
    out = []
    for m in re.finditer(r"^(INSERT INTO `|UPDATE `|DELETE FROM `)", sql, re.M):
        line = sql[m.start():sql.find("\n", m.start())]
        if line in passed or line.rstrip(";") in passed:
            continue
        if m.group(1) != "INSERT INTO `":
            rows = expand_keyed(line)
            out.extend(rows if rows is not None else [line])
            continue
        v = sql.index(") VALUES (", m.start()) + 9
        head = sql[m.start():v]
        while True:
            e = values_end(sql, v)
            out.append((head, sql[v:e]))
            if sql[e] != ",":
                assert sql.startswith(";\n", e), sql[e:e + 20]
                break
            v = e + 1
    return out


def raw(*args):
    p = subprocess.run([BIN, "convert", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


for name in ("basic", "metadata", "compressed"):
    logs = os.path.join(FIX, name, "binlogs")
    _, js, _ = raw(logs)
    queries = [json.loads(l)["sql"] for l in js.splitlines() if json.loads(l).get("type") in ("QUERY", "DDL")]
    rc1, one, _ = run("--format", "sql", logs)
    rc2, multi, err = raw("--format", "sql", logs)
    rc3, small, _ = raw("--format", "sql", "--sql-batch-bytes", "300", logs)
    t1, t2, t3 = row_tuples(one, queries), row_tuples(multi, queries), row_tuples(small, queries)
    n1, n2, n3 = (len(re.findall(r"^INSERT INTO `", x, re.M)) for x in (one, multi, small))
    check(rc1 == rc2 == rc3 == 0 and t1 == t2 == t3 and n2 < n1 and n2 <= n3 <= n1,
          "%s: multi-row INSERTs hold the same rows in the same order (%d INSERT statements per row, %d by "
          "default, %d with --sql-batch-bytes 300; %s)" % (name, n1, n2, n3, err.strip()[:200]))
    long_multi = [s for s in re.findall(r"^INSERT INTO `.*?\);$", small, re.M | re.S)
                  if "),(" in s and len(s.encode()) > 300]
    check(not long_multi, "%s: --sql-batch-bytes 300: no multi-row INSERT over 300 bytes %s" % (name, long_multi[:1]))
    long_keyed = [l for l in small.split("\n") if KEYED_TAIL.search(l) and len(l.encode()) > 300]
    check(not long_keyed, "%s: --sql-batch-bytes 300: no bulk UPDATE or DELETE over 300 bytes %s" % (name, long_keyed[:1]))
    # comments: one per transaction by default, none with --sql-comments none
    per_txn = len(re.findall(r"^# transaction \d+", multi, re.M))
    begins = len(re.findall(r"^(BEGIN|XA START .*);$", multi, re.M))
    check(per_txn == begins and not re.search(r"^# \S+:\d+ .* UTC\n(INSERT INTO|UPDATE|DELETE FROM) `", multi, re.M),
          "%s: one comment per transaction, none per row statement (%d, %d BEGIN)" % (name, per_txn, begins))
    rc, none, _ = raw("--format", "sql", "--sql-comments", "none", logs)
    check(rc == 0 and not re.search(r"^# (transaction|\S+:\d+ )", none, re.M) and row_tuples(none, queries) == t2,
          "%s: --sql-comments none: no comment lines, the same statements" % name)

# Bulk UPDATEs and DELETEs by key (compared row by row with --sql-batch-bytes 0 above): some, one
# way or the other, a composite key among them, each ORDER BY following its keys
check(KEYED_STATS["statements"] > 0 and KEYED_STATS["composite"] > 0 and not KEYED_STATS["bad"],
      "bulk UPDATE/DELETE by key: %d statements for %d rows (%d by a composite key, %d descending), the keys of "
      "each in its ORDER BY's order %s" % (KEYED_STATS["statements"], KEYED_STATS["rows"], KEYED_STATS["composite"],
                                           KEYED_STATS["desc"], KEYED_STATS["bad"][:2]))

# MariaDB GTIDs: before each transaction's BEGIN (or its one statement), the session set back at the end
logs = os.path.join(FIX, "basic", "binlogs")
rc, sql, _ = raw("--format", "sql", logs)
lines = sql.split("\n")
_, js, _ = raw(logs)
want = []
for l in js.split("\n"):
    g = json.loads(l).get("gtid") if l else None
    if g and (not want or want[-1] != g):
        want.append(g)
got, cur, bad = [], {}, []
not_kept = 0
for i, l in enumerate(lines):
    m = re.match(r"# GTID (\S+) not kept: MariaDB sets no GTID in a session holding a prepared XA transaction$", l)
    if m and lines[i + 1].startswith("XA COMMIT ") or m and lines[i + 1].startswith("XA ROLLBACK "):
        got.append(m.group(1))  # the XA COMMIT of an XA PREPARE earlier in the output
        not_kept += 1
        continue
    m = re.match(r"/\*M!100001 SET (@@session\..*gtid_seq_no=\d+)\*/;$", l)
    if not m:
        continue
    for part in m.group(1).split(", "):
        k, v = part.split("=")
        cur[k] = v
    got.append("%s-%s-%s" % (cur.get("@@session.gtid_domain_id"), cur.get("@@session.server_id"),
                             cur["@@session.gtid_seq_no"]))
    if i > 0 and lines[i - 1].startswith("# transaction ") and not re.match(r"(BEGIN|XA START .*);$", lines[i + 1]):
        bad.append(lines[i - 1:i + 2])
saves = [l for l in lines if l.startswith("/*M!100001 SET @binlogctl_server_id=@@session.server_id")]
check(rc == 0 and got == want and len(got) > 3 and not bad and len(saves) == 1 and
      lines[-2] == "/*M!100001 SET @@session.server_id=@binlogctl_server_id, @@session.gtid_domain_id=@binlogctl_gtid_domain_id*/;",
      "MariaDB: each transaction's GTID set before its BEGIN, the session's own set back at the end "
      "(%d of %d transactions, %d XA COMMITs after their XA PREPARE without; %s %s)" %
      (len(got), len(want), not_kept, bad[:2], [x for x in zip(got, want) if x[0] != x[1]][:2]))
ddl = re.findall(r"/\*M!100001 SET [^\n]*gtid_seq_no=\d+\*/;\n(?:SET [^\n]*\n|USE [^\n]*\n)*CREATE ", sql)
check(len(ddl) > 0, "MariaDB: a DDL statement's GTID set before it (%d)" % len(ddl))
rc, skip, _ = raw("--format", "sql", "--skip-gtids", logs)
check(rc == 0 and "gtid_seq_no" not in skip and "binlogctl_server_id" not in skip and
      row_tuples(skip) == row_tuples(sql), "--skip-gtids: no GTID, the same statements")
rc, fb, _ = raw("--flashback", "--flashback-skip-unsafe", logs)
check(rc == 0 and "gtid_seq_no" not in fb and "GTID_NEXT" not in fb, "--flashback never sets a GTID")

# MySQL GTIDs (public corpus): GTID_NEXT before BEGIN, tagged and anonymous, AUTOMATIC at the end
if SHARED:
    pub = os.path.join(SHARED, "corpus/public/blackbeam__rust_mysql_common")
    for f, want in (("binlog_transaction_with_GTID_TAG.000001", "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3"),
                    ("json.binlog.000001", "ANONYMOUS")):
        path = os.path.join(pub, f)
        if not os.path.exists(path):
            continue
        schema = os.path.join(tempfile.gettempdir(), "binlogctl-sql-output-%d.sql" % os.getpid())
        with open(schema, "w") as fh:  # the tagged file's table has no column names in its TABLE_MAP
            fh.write("CREATE TABLE test.orders (id INT, qty INT, amount DECIMAL(10,2));\n")
        rc, sql, err = raw("--format", "sql", "--schema", schema, path)
        rc_skip, skip, _ = raw("--format", "sql", "--skip-gtids", "--schema", schema, path)
        os.unlink(schema)
        ls = sql.rstrip("\n").split("\n")
        sets = [i for i, l in enumerate(ls) if l.startswith("SET @@SESSION.GTID_NEXT='") and "AUTOMATIC" not in l]
        ok = sets and all(ls[i] == "SET @@SESSION.GTID_NEXT='%s';" % want and
                          (ls[i + 1] == "BEGIN;" or not ls[i + 1].startswith("#")) for i in sets)
        check(rc == 0 and ok and ls[-1] == "SET @@SESSION.GTID_NEXT='AUTOMATIC';",
              "MySQL %s: SET @@SESSION.GTID_NEXT='%s' before each transaction, AUTOMATIC at the end (%d; %s)" %
              (f, want, len(sets), err.strip()[:200]))
        check(rc_skip == 0 and "GTID_NEXT" not in skip, "MySQL %s: --skip-gtids leaves GTID_NEXT out" % f)

# --rewrite-db and -D
rc, sql, _ = raw("--format", "sql", logs)
rc2, rw, err = raw("--format", "sql", "--rewrite-db", "shop->shop_b", "--rewrite-db", " legacy -> legacy_b ", logs)
check(rc2 == 0 and "`shop`." not in rw and "`shop_b`." in rw and "`legacy_b`." in rw and "USE `shop_b`;" in rw and
      "`legacy`." not in rw and rw.replace("shop_b", "shop").replace("legacy_b", "legacy") == sql,
      "--rewrite-db: table names and USE rewritten, nothing else (%s)" % err.strip()[:200])
rc3, only, _ = raw("--format", "sql", "--rewrite-db", "shop->shop_b", "-d", "shop_b", logs)
check(rc3 == 0 and "`shop_b`." in only and "`legacy" not in only, "-d compares the rewritten name")
rc, d, _ = raw("--format", "sql", "-D", logs)
dl = d.rstrip("\n").split("\n")
check(rc == 0 and dl[0] == "SET @binlogctl_sql_log_bin=@@session.sql_log_bin, @@session.sql_log_bin=0;" and
      dl[-1] == "SET @@session.sql_log_bin=@binlogctl_sql_log_bin;" and "\n".join(dl[1:-1]) + "\n" == sql,
      "-D: sql_log_bin=0 first, set back last, the rest unchanged")
for args in (["--format", "sql", "--rewrite-db", "shop"], ["--format", "sql", "--rewrite-db", "->x"],
             ["--skip-gtids"], ["--format", "sql", "--with-statement"], ["--rewrite-db", "a->b"], ["-D"]):
    rc, _, err = raw(*args, logs)
    check(rc == 2, "usage error: %s (rc %d)" % (" ".join(args), rc))

# --with-statement: each row change with the statement that made it (MariaDB ANNOTATE_ROWS)
rc, js, _ = raw("--with-statement", logs)
recs = [json.loads(l) for l in js.split("\n") if l]
rowrecs = [r for r in recs if r.get("type") in ("INSERT", "UPDATE", "DELETE")]
ddlrecs = [r for r in recs if r.get("type") == "DDL"]
dump = [json.loads(l) for l in subprocess.run([BIN, "dump", "--format", "json", logs], stdout=subprocess.PIPE)
        .stdout.decode().split("\n") if l]
annotations = {e["info"] for e in dump if e["event_type"] == "Annotate_rows"}
check(rc == 0 and rowrecs and all(r.get("statement") in annotations for r in rowrecs) and
      all(isinstance(r.get("thread_id"), int) for r in ddlrecs) and ddlrecs,
      "--with-statement: every row change carries its ANNOTATE_ROWS statement, DDL its thread_id (%d rows, %d "
      "statements)" % (len(rowrecs), len(annotations)))
rc, plain, _ = raw(logs)
check(rc == 0 and '"statement"' not in plain and '"thread_id"' not in plain, "without --with-statement: no new keys")

# usage
rc, _, err = run("--flashback", "--format", "json", src)
check(rc == 2, "--flashback --format json is a usage error")
rc, _, err = run("--format", "sql", "--tmpdir", "/tmp", src)
check(rc == 2, "--tmpdir without --flashback is a usage error")

print("%d check(s) failed" % len(FAILS) if FAILS else "all checks passed")
sys.exit(1 if FAILS else 0)
