#!/usr/bin/env python3
"""Proof of `binlogctl schema` against a real MariaDB server.

Usage: schema_server.py BINLOGCTL

Starts one private mariadbd (tests/cli/mdb.py: own datadir and unix socket, no TCP) with
binlog_format=ROW and binlog_row_metadata=FULL, and runs a bounded DDL workload: CREATE TABLE over
many types, ALTER ... ADD (FIRST/AFTER) / DROP / MODIFY / CHANGE / RENAME COLUMN, ALTER ... CONVERT
TO CHARACTER SET, RENAME TABLE, CREATE TABLE ... LIKE, TRUNCATE, DROP TABLE, CREATE/DROP DATABASE,
an INVISIBLE column, a composite primary key, a system-versioned table, and a table created with
sql_log_bin=0 (so only its TABLE_MAP can define it). The columns of every table
(information_schema.COLUMNS: name, order, COLUMN_TYPE, nullability, charset, collation, primary
key, invisibility; and which tables are system-versioned) are captured at a mid point P and at
the end. Then, with the databases dropped each time:

1. `schema` of the binlogs, fed to the `mariadb` client, recreates every table as it was at the end;
2. `schema --stop-position P` recreates them as they were at P;
3. `schema --history` (every version, DROP + CREATE each) recreates the end state too;
4. `schema --format json` names, for every table, the columns, nullability and primary key that
   the server reports.

Exit 77 (skip) when mariadbd or the mariadb client is absent.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdb  # noqa: E402

BIN = sys.argv[1]
mdb.require_or_skip()
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


PART1 = r"""
CREATE DATABASE s1 DEFAULT CHARACTER SET utf8mb4;
CREATE DATABASE s2 DEFAULT CHARACTER SET latin1;
USE s1;
CREATE TABLE a (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2) NOT NULL DEFAULT 0,
  created DATETIME(3), flag TINYINT(1), kind ENUM('x','y z','ü'), tags SET('p','q'), note TEXT CHARACTER SET latin1,
  bin VARBINARY(16), f FLOAT, d DOUBLE, y YEAR, bt BIT(5), j JSON, g POINT, u UUID, ts TIMESTAMP(6) NULL);
INSERT INTO a (name) VALUES ('one');
ALTER TABLE a ADD COLUMN extra INT UNSIGNED NOT NULL DEFAULT 3 AFTER name, ADD COLUMN first_col SMALLINT FIRST;
ALTER TABLE a DROP COLUMN flag;
ALTER TABLE a MODIFY name VARCHAR(80) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
ALTER TABLE a CHANGE COLUMN note memo MEDIUMTEXT;
ALTER TABLE a RENAME COLUMN extra TO extra2;
INSERT INTO a (name, memo) VALUES ('two', 'm');
CREATE TABLE gone (id INT PRIMARY KEY);
"""

PART2 = r"""
USE s1;
RENAME TABLE a TO a2;
CREATE TABLE b LIKE a2;
INSERT INTO b (name) VALUES ('b');
TRUNCATE TABLE b;
INSERT INTO gone VALUES (1);
DROP TABLE gone;
CREATE TABLE cpk (r VARCHAR(16) NOT NULL, n BIGINT UNSIGNED NOT NULL, v INT INVISIBLE, PRIMARY KEY (n, r));
INSERT INTO cpk (r, n, v) VALUES ('x', 1, 2);
CREATE TABLE ver (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING;
INSERT INTO ver VALUES (1, 1);
UPDATE ver SET x = 2;
USE s2;
CREATE TABLE l (id INT PRIMARY KEY, t VARCHAR(10), c CHAR(3) CHARACTER SET utf8mb4, e ENUM('à','b'));
INSERT INTO l VALUES (1, 'é', 'ü', 'à');
CREATE TABLE conv (id INT PRIMARY KEY, t VARCHAR(10), tx TEXT);
ALTER TABLE conv CONVERT TO CHARACTER SET utf8mb4;
CREATE TABLE nopk (a INT, b VARCHAR(5));
CREATE DATABASE s3;
CREATE TABLE s3.t (id INT);
DROP DATABASE s3;
SET sql_log_bin = 0;
CREATE TABLE s1.hidden (
  id INT UNSIGNED NOT NULL PRIMARY KEY, v VARCHAR(20), e ENUM('a','b') CHARACTER SET latin1, d DECIMAL(12,4),
  dt DATETIME(6), bl BLOB, tx TEXT CHARACTER SET latin1, j JSON, p POINT, bn BINARY(4), y YEAR, bi BIT(9),
  big BIGINT, t TIME(2), s SET('r','g') NOT NULL, m MEDIUMINT UNSIGNED, fl FLOAT, vb VARBINARY(7));
SET sql_log_bin = 1;
INSERT INTO s1.hidden (id, v, s) VALUES (1, 'x', 'r');
"""

DBS = ("s1", "s2", "s3")


def snapshot(server):
    cols = server.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, "
        "IFNULL(CHARACTER_SET_NAME,''), IFNULL(COLLATION_NAME,''), IF(COLUMN_KEY='PRI','PRI',''), "
        "IF(EXTRA LIKE '%INVISIBLE%','INVISIBLE','') FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA IN ('s1','s2','s3') ORDER BY 1, 2, 3")
    tables = server.query("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
                          "WHERE TABLE_SCHEMA IN ('s1','s2','s3') ORDER BY 1, 2")
    return cols.splitlines() + ["--"] + tables.splitlines()


def diff(a, b):
    out = []
    for x, y in zip(a, b):
        if x != y:
            out.append("  want %s\n  got  %s" % (x, y))
    if len(a) != len(b):
        out.append("  %d lines vs %d" % (len(a), len(b)))
    return "\n".join(out[:6])


def drop_all(server):
    server.apply(("SET sql_log_bin=0;" + "".join("DROP DATABASE IF EXISTS %s;" % d for d in DBS)).encode())


def run(args):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def main():
    root = tempfile.mkdtemp(prefix="binlogctl-schema-")
    server = mdb.Server(root, ["--server-id=1", "--log-bin=" + os.path.join(root, "binlog"), "--binlog-format=ROW",
                               "--binlog-row-image=FULL", "--binlog-row-metadata=FULL",
                               "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci"])
    try:
        server.start()
        server.sql(PART1)
        mid = snapshot(server)
        status = server.query("SHOW MASTER STATUS").split("\t")
        mid_file, mid_pos = status[0], int(status[1])
        server.sql(PART2)
        final = snapshot(server)
        server.sql("FLUSH BINARY LOGS")
        index = os.path.join(root, "binlog.index")
        check(any("SYSTEM VERSIONED" in line for line in final) and any("s1\thidden" in line for line in final),
              "workload made the expected tables")

        def recreate(what, args, want):
            rc, out, err = run(args)
            check(rc == 0 and out, "%s: exit 0 (%d %s)" % (what, rc, err.strip()[:300]))
            drop_all(server)
            r = server.apply(out)
            check(r.returncode == 0, "%s: the client accepts the output (%s)" % (what, r.stderr.decode(errors="replace")[:400]))
            got = snapshot(server)
            check(got == want, "%s: every table as the server had it\n%s" % (what, diff(want, got)))

        recreate("end", ["schema", index], final)
        logs = [os.path.join(root, f) for f in sorted(os.listdir(root)) if f.startswith("binlog.0")]
        upto = [f for f in logs if os.path.basename(f) <= mid_file]
        recreate("stop-position", ["schema", "--stop-position", str(mid_pos)] + upto, mid)
        recreate("history", ["schema", "--history", index], final)

        rc, out, err = run(["schema", "--format", "json", index])
        got = {}
        for line in out.decode().split("\n"):
            if line:
                t = json.loads(line)
                if t["kind"] != "table" or not t["defined"]:
                    got[line] = None  # nothing but defined tables is expected here
                    continue
                got["%s.%s" % (t["database"], t["table"])] = [
                    (c["name"], "NO" if not c["nullable"] else "YES", "PRI" if c["primary_key"] else "")
                    for c in t["columns"] if not (c["invisible"] and c["name"] in ("row_start", "row_end"))]
        want = {}
        for line in final[:final.index("--")]:
            f = line.split("\t")
            if f[9] == "INVISIBLE" and f[3] in ("row_start", "row_end"):
                continue  # system versioning's hidden columns: WITH SYSTEM VERSIONING in the CREATE
            want.setdefault("%s.%s" % (f[0], f[1]), []).append((f[3], f[5], f[8]))
        wrong = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        check(rc == 0 and not wrong, "json: columns, nullability and keys of %d tables as the server has them %s" % (
            len(want), [(k, want.get(k), got.get(k)) for k in wrong[:2]]))
    finally:
        server.stop()
    if FAILS:
        print("%d check(s) failed; server files in %s" % (len(FAILS), root))
        sys.exit(1)
    subprocess.run(["rm", "-rf", root])


main()
