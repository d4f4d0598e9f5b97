#!/usr/bin/env python3
"""Proof of `binlogctl convert --format sql` and `--flashback` against a real MariaDB server.

Usage: sql_server.py BINLOGCTL [MARIADB_CORPUS_DIR]

Starts one private mariadbd (own datadir and unix socket under a temporary directory, no TCP,
--no-defaults, stopped by its pid) with binlog_format=ROW, binlog_row_image=FULL and
binlog_row_metadata=FULL, and on it:

1. creates the starting schema with sql_log_bin=0 (not in the binlog), runs phase 1 of a bounded
   workload over many column types (NULLs, empty strings, invalid UTF-8 in binary columns,
   latin1 and utf8mb4 text with quotes, backslashes and emoji, JSON, negative TIME,
   DECIMAL(65,30), zero dates, BIT(64), ENUM/SET, GEOMETRY with SRIDs, UUID/INET4/INET6, a table
   without a primary key holding duplicate rows) with DDL, a statement-logged transaction and a
   large transaction; captures every table (HEX() / exact text of every column, rows sorted) and
   the binlog position; runs phase 2 (row changes only) and captures the final state;
2. forward: drops the databases, recreates the starting schema, pipes `convert --format sql` of
   the binlogs into the `mariadb` client (sql_log_bin=0): every table equals the final state;
3. flashback: pipes `convert --flashback --start-position P` (P = the captured position; range
   whose DDL acts only on tables whose rows it does not change, or on no table) into the client with a 64 KiB --flashback-memory, so that phase 2's large
   transaction spills to --tmpdir: every table equals the state captured at P, and no spill
   file is left behind;
4. refusal: --flashback over the whole range (DDL on changed tables, a statement-logged
   transaction) exits 1 and writes nothing; with --flashback-skip-unsafe it exits 0, warns and
   marks the skipped parts with "# SKIPPED"; restricted with --filter to one table, an ALTER
   after its rows and a CREATE TABLE before them are each refused by name and position;
5. the corpora MARIADB_CORPUS_DIR/types and /txn (../shared/corpus/mariadb), when present: their
   binlogs (DDL, statement-logged transactions, XA, savepoints included) converted to SQL are
   accepted by the client, and every table then equals the corpus's expected/ file;
6. parse check of the MySQL 8/9 files of the public corpus (MARIADB_CORPUS_DIR/../public, the
   files its MANIFEST.md gives a server version 8.x or 9.x): their --format sql and --flashback
   --flashback-skip-unsafe output goes to the same server through the client (--force) as a user
   without any privilege, so that no statement runs: a statement that parses fails with an access
   error (1044, 1142, 1227, ...), one that does not with ER_PARSE_ERROR 1064. Every statement
   binlogctl writes must parse, with one stated substitution: MariaDB has no CAST(... AS JSON)
   (MySQL's documented syntax for a JSON value), which is fed as CAST(... AS CHAR). Statements
   passed through as MySQL logged them (its DDL, e.g. generated columns with ->>) may use
   MySQL-only syntax: their 1064s are listed, not counted.

   Phase 1 also changes many rows per rows event in tables keyed by integers (bulk UPDATE and
   DELETE statements: composite keys near 2^64, a unique key shifted from the top and a
   self-referencing foreign key deleted from its leaves, which only the source's row order
   allows; MINIMAL and NOBLOB images; values that must go a row at a time) and by text, bytes
   or a nullable unique key (a row at a time); after step 2, the forms of those statements are
   checked (bulk_forms).

7. point-in-time recovery: a workload in database pitr over two GTID domains and three files (DDL, a
   table without primary key, a multi-row insert, updates, deletes), a logical dump taken in its
   middle (mariadb-dump --master-data=2 --gtid), the tables' CHECKSUM TABLE and the GTID position
   captured at a time T, more changes after T; then the server made fresh (pitr dropped, RESET
   MASTER, gtid_binlog_state set to the dump's position), the dump loaded unlogged, and
   `convert --format sql --start-position P --stop-datetime T` of the files from the dump's
   file applied logged: every table's CHECKSUM TABLE equals the source's at T, gtid_binlog_pos
   equals the source's at T, and the session's server_id and gtid_domain_id are its own again
   after the output; with --skip-gtids the same restore's gtid_binlog_pos differs (the check can
   fail); the whole range with --rewrite-db pitr->pitr_b -D restores pitr's tables at T as
   pitr_b's and leaves the target's binlog as it was (without -D, into pitr_c, it grows);

8. one query a transaction (--sql-queries transaction, the default): the forward SQL of step 2
   sends its transactions as one query each (the queries read as the client reads DELIMITER
   lines); with --sql-batch-bytes 3000 the queries are split before they would pass 3000 bytes
   and the tables still equal the final state; an error (duplicate key) in the second statement
   of a three-transaction range's second transaction stops the client there: the first
   transaction committed, the second rolled back whole, the error's line number is the first
   line of the second transaction's query; with --force the third is applied too; with
   --sql-queries statement (the control) the error names the failing statement's own line and
   --force keeps the rest of its transaction.

Exit 77 (skip) when mariadbd or the mariadb client is absent.
"""
import json
import os
import re
import struct
import shutil
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
CORPUS = sys.argv[2] if len(sys.argv) > 2 else None  # ../shared/corpus/mariadb


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdb  # noqa: E402  (the private server, shared by the server tests)

mdb.require_or_skip()

FAILS = []
LOGS, FINAL = [], []  # the workload's binlogs and final state (main)


def check(cond, what):
    if cond:
        print("ok   " + what)
    else:
        print("FAIL " + what)
        FAILS.append(what)


def Server(root):
    return mdb.Server(root, ["--server-id=1", "--log-bin=" + os.path.join(root, "binlog"), "--binlog-format=ROW",
                             "--binlog-row-image=FULL", "--binlog-row-metadata=FULL"])


DBS = ("sqltest", "sqltest2")

SCHEMA = r"""
SET sql_log_bin=0;
SET sql_mode='';
CREATE DATABASE sqltest DEFAULT CHARACTER SET utf8mb4;
CREATE DATABASE sqltest2 DEFAULT CHARACTER SET latin1;
USE sqltest;
CREATE TABLE t_types (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  ti TINYINT, uti TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, i INT, bi BIGINT, ubi BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, f2 FLOAT(7,3),
  dec65 DECIMAL(65,30), dneg DECIMAL(10,2), d0 DECIMAL(5,0) UNSIGNED,
  bt BIT(64), b1 BIT(1), b5 BIT(5), y YEAR,
  dt DATE, tm TIME(6), tm0 TIME, dtm DATETIME(6), dtm0 DATETIME, ts TIMESTAMP(6) NULL DEFAULT NULL, ts0 TIMESTAMP NULL DEFAULT NULL,
  e ENUM('a','b','c d','é'), s SET('x','y','z','ü'),
  j JSON, g GEOMETRY, pt POINT REF_SYSTEM_ID=4326,
  u UUID, i6 INET6, i4 INET4,
  vb VARBINARY(64), bn BINARY(8), bl BLOB, lb LONGBLOB,
  latin VARCHAR(50) CHARACTER SET latin1, utf VARCHAR(80) CHARACTER SET utf8mb4, tx TEXT, ch CHAR(10),
  chb CHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
);
CREATE TABLE t_nopk (a INT, b VARCHAR(10), c DOUBLE, d DATETIME(3));
CREATE TABLE `we``ird tä` (`c``1` INT PRIMARY KEY, `ü` VARCHAR(10));
CREATE TABLE t_cpk (a INT NOT NULL, b VARCHAR(20) NOT NULL, v INT, PRIMARY KEY (b, a));
CREATE TABLE t_bulk (a INT NOT NULL, b BIGINT UNSIGNED NOT NULL, u INT, d DECIMAL(12,3), s VARCHAR(20),
  ls VARCHAR(20) CHARACTER SET latin1, bn VARBINARY(8), f DOUBLE, dt DATETIME(3), bl BLOB,
  PRIMARY KEY (a, b), UNIQUE KEY (u));
CREATE TABLE t_tree (id INT NOT NULL PRIMARY KEY, parent INT NULL, v INT, FOREIGN KEY (parent) REFERENCES t_tree (id));
CREATE TABLE t_ci (k VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT);
CREATE TABLE t_vbk (k VARBINARY(8) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE t_unull (a INT NULL, v INT, UNIQUE KEY (a));
USE sqltest2;
CREATE TABLE l1 (id INT PRIMARY KEY, name VARCHAR(40), note TEXT, c CHAR(3)) DEFAULT CHARSET=latin1;
"""

PHASE1 = r"""
SET sql_mode='NO_AUTO_VALUE_ON_ZERO';
SET time_zone='+02:00';
USE sqltest;
INSERT INTO t_types (ti, uti, si, mi, i, bi, ubi, f, d, f2, dec65, dneg, d0, bt, b1, b5, y, dt, tm, tm0, dtm, dtm0, ts, ts0,
  e, s, j, g, pt, u, i6, i4, vb, bn, bl, lb, latin, utf, tx, ch, chb) VALUES
 (-128, 255, -32768, 16777215, -2147483648, -9223372036854775808, 18446744073709551615,
  0.1, 0.1, 1234.567, '-12345678901234567890123456789012345.123456789012345678901234567890', -0.01, 99999,
  b'1111111111111111111111111111111111111111111111111111111111111111', b'1', b'10101', 2155,
  '0000-00-00', '-838:59:59.000000', '-00:00:01', '0000-00-00 00:00:00.000000', '9999-12-31 23:59:59', '2038-01-19 05:14:07.999999', '1970-01-01 02:00:01',
  'c d', 'x,z,ü', '{"a": [1, 2.5, "x\\"y"], "b": null, "ü": true}', ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))'),
  ST_GeomFromText('POINT(45.5 -120.25)', 4326), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '::ffff:1.2.3.4', '10.0.0.1',
  X'FF00FE80C0', X'0102', X'', X'00FFC3', 'Français ''quoted'' €', 'emoji 😀 and \\ backslash', 'line1\nline2\ttab', 'ch ', 'Zz'),
 (0, 0, 0, 0, 0, 0, 0, 3.4028235e38, 1.7976931348623157e308, -0.001, '0.000000000000000000000000000001', 0, 0,
  b'0', b'0', b'0', 0, '2024-02-29', '00:00:00.5', '838:59:59', '1000-01-01 00:00:00.000001', '1000-01-01 00:00:00', '1970-01-01 02:00:01.000001', NULL,
  '', '', '[]', ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'), ST_GeomFromText('POINT(0 0)', 4326),
  '00000000-0000-0000-0000-000000000000', '::', '0.0.0.0', X'', X'0000000000000000', X'00', NULL, '', '', '', '', ''),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (1, 2, 3, 4, 5, 6, 7, -1.17549435e-38, 5e-324, 0.5, '1.5', 12345678.99, 1, b'1000000000000000000000000000000000000000000000000000000000000001', b'1', b'11111', 1901,
  '2000-01-01', '12:34:56.789', '-12:00:00', '2000-01-01 12:00:00.5', '2000-01-01 12:00:00', NULL, '2000-06-01 12:00:00',
  'é', 'y', '"just a string with \'quotes\' and \\\\ backslash"', ST_GeomFromText('MULTIPOINT(1 2,3 4)', 3857), NULL,
  'ffffffff-ffff-ffff-ffff-ffffffffffff', '2001:db8::1', '255.255.255.255', X'5C27225C', X'27', X'5C', X'0D0A00', 'ÿ', 'it''s', CONCAT('big ', REPEAT('x', 3000)), 'a''b', 'ü');
INSERT INTO t_types (id, ti) VALUES (0, 9);
INSERT INTO t_nopk VALUES (1, 'dup', 1.5, '2020-01-01 00:00:00.123'), (1, 'dup', 1.5, '2020-01-01 00:00:00.123'), (NULL, NULL, NULL, NULL), (2, '', -0.0, NULL);
INSERT INTO `we``ird tä` VALUES (1, 'ä'), (2, NULL);
INSERT INTO t_cpk VALUES (1, 'k1', 10), (2, 'k1', 20), (1, 'k2', 30);
INSERT INTO sqltest2.l1 VALUES (1, 'café', 'naïve\\text', 'abc'), (2, 'Ø€‚', NULL, ''), (3, '', '', NULL);
-- DDL inside the range, with rows changed on both sides of it
ALTER TABLE t_cpk ADD COLUMN extra VARCHAR(10) DEFAULT 'dflt';
UPDATE t_cpk SET extra = 'set', v = v + 1 WHERE a = 1;
CREATE TABLE t_new (id INT PRIMARY KEY, v VARCHAR(10));
INSERT INTO t_new VALUES (1, 'one'), (2, 'two');
RENAME TABLE t_new TO t_renamed;
UPDATE t_renamed SET v = 'uno' WHERE id = 1;
-- a trigger (a statement with ';' inside; idempotent, since the replayed INSERT fires it again)
DELIMITER $$
CREATE TRIGGER trg BEFORE INSERT ON t_renamed FOR EACH ROW BEGIN SET @fired = 1; SET NEW.v = UPPER(NEW.v); END$$
DELIMITER ;
INSERT INTO t_renamed VALUES (5, 'trigger');
DROP TRIGGER trg;
-- a statement-logged transaction with session context
SET SESSION binlog_format = 'STATEMENT';
SET @uv = 'user var ü', @n = 42;
INSERT INTO t_renamed VALUES (3, @uv);
INSERT INTO t_renamed VALUES (@n, 'n');
SET SESSION binlog_format = 'ROW';
-- an XA transaction, prepared then committed
XA START 'xa1', 'b1', 7;
INSERT INTO t_renamed VALUES (10, 'xa row');
UPDATE t_renamed SET v = 'xa upd' WHERE id = 2;
XA END 'xa1', 'b1', 7;
XA PREPARE 'xa1', 'b1', 7;
XA COMMIT 'xa1', 'b1', 7;
XA START 'xa2';
INSERT INTO t_renamed VALUES (11, 'rolled back');
XA END 'xa2';
XA PREPARE 'xa2';
XA ROLLBACK 'xa2';
BEGIN;
UPDATE t_types SET utf = 'updated 😀', j = JSON_SET(j, '$.b', 5), tm = '-01:02:03.000004', bt = b'0' WHERE id = 1;
UPDATE t_types SET f = 0.30000001192092896, d = 0.30000000000000004 WHERE id = 2;
DELETE FROM t_types WHERE id = 3;
COMMIT;
-- rows events that update and delete many rows (bulk statements by an integer key, or a row at
-- a time): a composite key near 2^64, runs that must keep their order (a unique key shifted from
-- the top, a self-referencing foreign key deleted from the leaves), values CASE keeps exactly or
-- that go a row at a time (DOUBLE, latin1 text with a backslash), rows setting different columns,
-- MINIMAL and NOBLOB images (before the flashback's range: it needs FULL images), keys that are text, bytes, or a nullable unique key without primary key
INSERT INTO t_bulk SELECT seq DIV 10, 18446744073709551605 + seq MOD 10, seq, seq * 1.5, CONCAT('s', seq),
  'plain', UNHEX(HEX(seq)), seq / 7, '2024-01-01 00:00:00.5', REPEAT('b', seq) FROM seq_0_to_79;
UPDATE t_bulk SET u = u + 1 ORDER BY u DESC;
UPDATE t_bulk SET d = -d / 4, s = CONCAT(s, ' ü''q'), bn = X'00FF' WHERE a < 3;
UPDATE t_bulk SET f = f / 3 WHERE a = 3;
UPDATE t_bulk SET ls = IF(b % 3 = 0, 'x\\y', 'Ünï') WHERE a = 4;
UPDATE t_bulk SET dt = IF(b % 2 = 0, dt, '1999-12-31 23:59:59.999'), s = 'same' WHERE a = 5;
UPDATE t_bulk SET b = b - 20 WHERE a = 6;
SET SESSION binlog_row_image = 'MINIMAL';
UPDATE t_bulk SET d = d + 1, bl = NULL WHERE a = 1;
DELETE FROM t_bulk WHERE a = 2;
SET SESSION binlog_row_image = 'NOBLOB';
UPDATE t_bulk SET d = d + 1, u = u + 1000 WHERE a = 0;
SET SESSION binlog_row_image = 'FULL';
DELETE FROM t_bulk WHERE a >= 6 ORDER BY a DESC, b DESC;
INSERT INTO t_tree VALUES (1, NULL, 0);
INSERT INTO t_tree SELECT seq, seq - 1, seq FROM seq_2_to_30;
UPDATE t_tree SET v = v * 2 WHERE id > 10;
DELETE FROM t_tree WHERE id > 5 ORDER BY id DESC;
INSERT INTO t_ci VALUES ('a', 1), ('B', 2), ('c ', 3), ('É', 4);
UPDATE t_ci SET v = v + 10;
DELETE FROM t_ci WHERE v < 13;
INSERT INTO t_vbk VALUES (X'00', 1), (X'0000', 2), (X'FF', 3);
UPDATE t_vbk SET v = v + 10;
DELETE FROM t_vbk WHERE v < 13;
INSERT INTO t_unull VALUES (NULL, 1), (NULL, 1), (1, 2), (2, 3);
UPDATE t_unull SET v = v + 10;
DELETE FROM t_unull WHERE v < 13;
"""

PHASE2 = r"""
SET sql_mode='';
SET time_zone='-05:00';
USE sqltest;
BEGIN;
UPDATE t_types SET latin = 'Ünïcödé', vb = X'FFFE', dec65 = '-0.000000000000000000000000000001', ts = '2001-02-03 04:05:06.7', e = 'a', s = 'x,y' WHERE id = 1;
UPDATE t_types SET g = ST_GeomFromText('LINESTRING(1 1,2 2,3 3)'), u = '12345678-1234-1234-1234-123456789abc', i6 = 'fe80::1', bl = NULL WHERE id = 4;
DELETE FROM t_types WHERE id = 0;
INSERT INTO t_types (id, utf, tm, dt) VALUES (100, 'phase 2 ''row''', '-00:00:00.000001', '0000-01-00');
COMMIT;
UPDATE t_nopk SET b = 'one dup' WHERE b = 'dup' LIMIT 1;
-- DDL inside the flashback range, between row changes: on tables whose rows the range does not
-- change and on no table (the flashback passes over it), and gone again by the end
CREATE DATABASE sqltest_side;
CREATE TABLE sqltest_side.s (id INT PRIMARY KEY);
ALTER TABLE sqltest_side.s ADD COLUMN v INT;
CREATE TABLE sqltest2.side (a INT);
RENAME TABLE sqltest2.side TO sqltest2.side2;
DROP TABLE sqltest2.side2;
DROP DATABASE sqltest_side;
DELETE FROM t_nopk WHERE a IS NULL;
INSERT INTO t_nopk VALUES (5, 'five', 5e-5, '2021-01-01');
UPDATE `we``ird tä` SET `ü` = 'ö' WHERE `c``1` = 2;
UPDATE t_cpk SET v = 99 WHERE b = 'k2';
DELETE FROM t_cpk WHERE a = 2;
UPDATE sqltest2.l1 SET name = 'ÀÉÎ', note = 'x''y' WHERE id = 2;
DELETE FROM sqltest2.l1 WHERE id = 3;
XA START 'xa3';
UPDATE t_renamed SET v = 'xa3' WHERE id = 10;
DELETE FROM t_renamed WHERE id = 11;
XA END 'xa3';
XA PREPARE 'xa3';
XA COMMIT 'xa3';
XA START 'xa4';
DELETE FROM t_renamed WHERE id = 10;
XA END 'xa4';
XA PREPARE 'xa4';
XA ROLLBACK 'xa4';
-- a large transaction (spilled by the flashback with a small --spill size)
BEGIN;
INSERT INTO t_renamed SELECT seq + 1000, CONCAT('row ', seq) FROM seq_1_to_3000;
UPDATE t_renamed SET v = CONCAT(v, '!') WHERE id > 1000 AND id % 3 = 0;
DELETE FROM t_renamed WHERE id > 1000 AND id % 5 = 0;
COMMIT;
"""


def corpus_rows(server, db, table):
    """Rows of db.table rendered as the corpus README's expected/ files render them (values in
    column order), read through HEX() so that no byte is lost to the client's escaping."""
    cols = server.query("SELECT column_name, data_type, column_type FROM information_schema.columns WHERE "
                        "table_schema='%s' AND table_name='%s' ORDER BY ordinal_position" % (db, table))
    spec, exprs = [], []
    for line in cols.splitlines():
        name, dtype, ctype = line.split("\t")
        c = q_ident(name)
        if dtype == "bit":
            e, kind = "CONCAT(%s + 0)" % c, "int"
        elif dtype in ("tinyint", "smallint", "mediumint", "int", "bigint", "year"):
            e, kind = "CONCAT(%s)" % c, "int"
        elif dtype == "decimal":
            e, kind = "CONCAT(%s)" % c, "str"
        elif dtype == "float":
            e, kind = "CONCAT(%s + 0e0)" % c, "float32"
        elif dtype == "double" and "," in ctype:  # DOUBLE(M,D): as SELECT prints it, D decimals
            e, kind = "CONCAT(%s)" % c, "float64"
        elif dtype == "double":
            e, kind = "CONCAT(%s + 0e0)" % c, "float64"
        elif dtype in ("date", "datetime", "timestamp", "time", "uuid", "inet4", "inet6"):
            e, kind = "HEX(CAST(%s AS CHAR))" % c, "hexstr"
        elif dtype in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point",
                       "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                       "geometrycollection"):
            e, kind = "HEX(%s)" % c, "bin"
        else:  # text, enum, set, JSON (a LONGTEXT)
            e, kind = "HEX(CONVERT(%s USING utf8mb4))" % c, "hexstr"
        spec.append(kind)
        exprs.append("IFNULL(%s, 'NULL')" % e)
    out = server.query("SET time_zone='+00:00'; SELECT %s FROM %s.%s" % (", ".join(exprs), q_ident(db), q_ident(table)))
    rows = []
    for line in out.splitlines():
        vals = []
        for kind, v in zip(spec, line.split("\t")):
            if v == "NULL":
                vals.append(None)
            elif kind == "int":
                vals.append(int(v))
            elif kind == "float32":
                vals.append(struct.pack("<f", float(v)))
            elif kind == "float64":
                vals.append(float(v))
            elif kind == "hexstr":
                vals.append(bytes.fromhex(v).decode("utf-8", "replace"))
            elif kind == "bin":
                vals.append("x" + v.lower())
            else:
                vals.append(v)
        rows.append(vals)
    return spec, rows


def corpus_expected(path, spec):
    rows = []
    for line in open(path, encoding="utf-8"):
        vals = list(json.loads(line).values())
        for i, kind in enumerate(spec):
            if vals[i] is None:
                continue
            if kind == "float32":
                vals[i] = struct.pack("<f", float(vals[i]))
            elif kind == "float64":
                vals[i] = float(vals[i])
            elif kind == "str" or kind == "hexstr":
                vals[i] = str(vals[i])
        rows.append(vals)
    return rows


def canon_rows(rows):
    return sorted(repr(r) for r in rows)


def tables(server):
    out = server.query("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN "
                       "('sqltest','sqltest2') AND table_type='BASE TABLE' ORDER BY 1, 2")
    return [tuple(line.split("\t")) for line in out.splitlines() if line]


def q_ident(s):
    return "`" + s.replace("`", "``") + "`"


def snapshot(server):
    """{db.table: sorted rows}, every column as HEX() (numbers and temporals as exact text)."""
    snap = {}
    for db, t in tables(server):
        cols = server.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema='%s' "
                            "AND table_name='%s' ORDER BY ordinal_position" % (db, t.replace("'", "''")))
        exprs = []
        for line in cols.splitlines():
            name, dtype = line.split("\t")
            c = q_ident(name)
            if dtype in ("float", "double"):
                e = "CONCAT(%s + 0e0)" % c
            elif dtype in ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "year", "date", "time",
                           "datetime", "timestamp"):
                e = "CONCAT(%s)" % c
            else:
                e = "HEX(%s)" % c
            exprs.append("IFNULL(%s, 'NULL')" % e)
        rows = server.query("SET time_zone='+00:00'; SELECT CONCAT_WS('|', %s) FROM %s.%s" %
                            (", ".join(exprs), q_ident(db), q_ident(t)))
        snap[db + "." + t] = sorted(rows.splitlines())
    return snap


def diff(a, b):
    lines = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            ra, rb = a.get(k), b.get(k)
            if ra is None or rb is None:
                lines.append("  %s: only on one side" % k)
                continue
            only_a = [r[:400] for r in ra if r not in rb][:3]
            only_b = [r[:400] for r in rb if r not in ra][:3]
            lines.append("  %s: %d vs %d rows; expected-only %s; got-only %s" % (k, len(ra), len(rb), only_a, only_b))
    return "\n".join(lines)


def binlogs(root):
    return sorted(os.path.join(root, f) for f in os.listdir(root) if f.startswith("binlog.") and f[7:].isdigit())


def convert(args):
    p = subprocess.run([BIN, "convert", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


PARSE_USER = "binlogctl_parse"
# What binlogctl writes for a MySQL JSON value (sql.h): a string literal cast to JSON
JSON_CAST = re.compile(rb"CAST\((_utf8mb4(?:'(?:[^']|'')*'| X'[0-9A-F]*')) AS JSON\)")


def mysql8_files(public):
    """The MySQL 8.x/9.x files of the public corpus, from the version column of its MANIFEST.md."""
    out = []
    for line in open(os.path.join(public, "MANIFEST.md"), encoding="utf-8"):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[1].startswith("`") and re.match(r"(8|9)\.", cells[5]):
            path = os.path.join(public, cells[1].strip("`"))
            if os.path.exists(path):
                out.append(path)
    return out


def parse_check(server, path, args):
    """Feeds convert's output for `path` to the server as PARSE_USER. Returns (statements fed,
    1064s in binlogctl's own statements, 1064s in passed-through statements, CASTs rewritten)."""
    rc, out, err = convert([*args, path])
    rc_json, js, _ = convert([path])
    passed = set()  # the lines of the statements convert passes through as the server logged them
    for line in js.splitlines():
        rec = json.loads(line)
        if rec.get("type") in ("QUERY", "DDL"):
            passed.update(rec["sql"].encode("utf-8", "surrogateescape").splitlines())
    fed, casts = JSON_CAST.subn(rb"CAST(\1 AS CHAR)", out)
    r = server.sql(fed, extra=("--force", "--binary-mode", "-u" + PARSE_USER, "-D" + PARSE_USER),
                   check_rc=False)
    lines = fed.splitlines()
    own, theirs = [], []
    for code, at in re.findall(r"ERROR (\d+) \(\w+\) at line (\d+)", r.stderr.decode(errors="replace")):
        if code != "1064":
            continue
        text = lines[int(at) - 1] if 0 < int(at) <= len(lines) else b""
        for end in (b"/*!*/;", b";"):  # the terminator convert adds
            if text.endswith(end) and text[:-len(end)] in passed:
                text = text[:-len(end)]
                break
        (theirs if text in passed else own).append("line %s: %s" % (at, text[:200].decode(errors="replace")))
    statements = len(re.findall(rb";\n", fed))
    return statements, own, theirs, casts


def ddl_position(forward_sql, stmt):
    """'log:pos' of the statement starting with `stmt` in convert --format sql output (the
    position comment before it), or None."""
    i = forward_sql.find(b"\n" + stmt)
    if i < 0:
        return None
    for line in reversed(forward_sql[:i].split(b"\n")):
        if line.startswith(b"# binlog."):
            return line[2:].split(b" ")[0].decode()
    return None


def reset_schema(server):
    server.sql("SET sql_log_bin=0; DROP DATABASE IF EXISTS sqltest; DROP DATABASE IF EXISTS sqltest2;" + SCHEMA)


# 7. point-in-time recovery (section 7 of the docstring)
PITR_A = r"""
CREATE DATABASE pitr;
FLUSH BINARY LOGS;
USE pitr;
CREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(40), n DECIMAL(10,2), ts DATETIME(3));
CREATE TABLE t2 (a INT, b TEXT);
INSERT INTO t1 VALUES (1, 'one', 1.5, '2020-01-01 00:00:00.001'), (2, 'two \'q\'', 2.5, NULL), (3, 'three', NULL, NULL);
INSERT INTO t2 VALUES (1, 'x'), (1, 'x'), (2, NULL);
SET gtid_domain_id=2;
INSERT INTO t1 VALUES (10, 'domain 2', 10, NULL);
SET gtid_domain_id=0;
"""
PITR_B = r"""
USE pitr;
UPDATE t1 SET v = 'uno' WHERE id = 1;
SET gtid_domain_id=2;
INSERT INTO t1 SELECT seq + 100, CONCAT('row ', seq), seq / 7, NULL FROM seq_1_to_500;
SET gtid_domain_id=0;
FLUSH BINARY LOGS;
ALTER TABLE t1 ADD COLUMN extra INT DEFAULT 7;
BEGIN; UPDATE t1 SET extra = id * 2 WHERE id > 300; DELETE FROM t2 WHERE a = 2; COMMIT;
UPDATE t2 SET b = 'y' WHERE a = 1 LIMIT 1;
SET SESSION server_id=77;
INSERT INTO t1 (id, v) VALUES (1000, 'from server 77');
SET SESSION server_id=1;
DELETE FROM t1 WHERE id BETWEEN 200 AND 250;
FLUSH BINARY LOGS;
INSERT INTO t2 VALUES (3, 'before T');
"""
PITR_C = r"""
USE pitr;
INSERT INTO t1 (id, v) VALUES (2000, 'after T');
DELETE FROM t2;
SET gtid_domain_id=2;
UPDATE t1 SET v = 'after T' WHERE id < 50;
"""


def checksums(server, db):
    names = [r[0] for r in server.rows("SELECT table_name FROM information_schema.tables WHERE table_schema='%s' "
                                       "ORDER BY 1" % db)]
    if not names:
        return {}
    rows = server.rows("CHECKSUM TABLE " + ", ".join("%s.%s" % (q_ident(db), q_ident(n)) for n in names))
    return {r[0].split(".", 1)[1]: r[1] for r in rows}


def gtid_state(server):
    return tuple(server.rows("SELECT @@global.gtid_binlog_pos, @@global.gtid_binlog_state")[0])


def pitr(server, root):
    server.sql(PITR_A)
    dump = subprocess.run([mdb.find("mariadb-dump"), "--no-defaults", "--socket=" + server.sock, "-uroot",
                           "--single-transaction", "--master-data=2", "--gtid", "--databases", "pitr"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
    m = re.search(rb"MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+)", dump)
    g = re.search(rb"SET GLOBAL gtid_slave_pos='([^']*)'", dump)
    check(m is not None and g is not None, "pitr: the dump names its binlog position and GTID position")
    dump_file, dump_pos, dump_gtid = m.group(1).decode(), int(m.group(2)), g.group(1).decode()
    server.sql(PITR_B)
    time.sleep(1.05 - (time.time() % 1))  # every event of PITR_B is before T, every one of PITR_C at or after it
    t = int(time.time())
    at_t, gtid_at_t = checksums(server, "pitr"), gtid_state(server)
    server.sql(PITR_C)
    check(checksums(server, "pitr") != at_t and gtid_state(server) != gtid_at_t, "pitr: changes after T")
    server.sql("FLUSH BINARY LOGS")
    names = server.binlogs()
    archive = os.path.join(root, "pitr-archive")
    os.mkdir(archive)
    for n in names[names.index(dump_file):]:
        shutil.copy(os.path.join(root, n), archive)
    files = [os.path.join(archive, n) for n in names[names.index(dump_file):]]
    check(len(files) >= 3, "pitr: the range spans %d files" % len(files))
    stop = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))

    def restore(extra):
        server.sql("SET sql_log_bin=0; DROP DATABASE IF EXISTS pitr; RESET MASTER; SET GLOBAL gtid_binlog_state='%s'" %
                   dump_gtid)
        server.sql(dump, extra=("--init-command=SET sql_log_bin=0",))
        rc, out, err = convert(["--format", "sql", *extra, "--start-position", str(dump_pos), "--stop-datetime", stop,
                                *files])
        check(rc == 0, "pitr %s: convert exits 0 (%d: %s)" % (extra, rc, err.strip()[:300]))
        r = server.sql(out + b"SELECT @@session.server_id, @@session.gtid_domain_id;\n",
                       extra=("--binary-mode", "-N", "-B"), check_rc=False)
        check(r.returncode == 0, "pitr %s: the client accepts the SQL (%s)" % (extra, r.stderr.decode(errors="replace")[:500]))
        return out, r.stdout.decode().split("\n")[-2] if r.stdout else ""

    out, session = restore([])
    check(b"gtid_seq_no=" in out and b"@@session.server_id=77" in out, "pitr: the SQL sets the transactions' GTIDs")
    got = checksums(server, "pitr")
    check(got == at_t, "pitr: every table's CHECKSUM TABLE equals the source's at T (%s vs %s)" % (got, at_t))
    got_gtid = gtid_state(server)
    check(got_gtid == gtid_at_t, "pitr: gtid_binlog_pos and gtid_binlog_state equal the source's at T (%s vs %s)" %
          (got_gtid, gtid_at_t))
    check(session == "1\t0", "pitr: after the SQL the session's server_id and gtid_domain_id are its own (%r)" % session)
    out, _ = restore(["--skip-gtids"])
    check(b"gtid_seq_no" not in out and checksums(server, "pitr") == at_t and gtid_state(server)[0] != gtid_at_t[0],
          "pitr --skip-gtids: the same tables, the target's own GTIDs (%s)" % (gtid_state(server),))

    # --rewrite-db: the whole range (from the file where pitr's tables were created) restored as
    # database pitr_b, -D: without a trace in the target's binlog; without -D (pitr_c) the binlog
    # grows, so the check can fail
    for db, extra in (("pitr_b", ["-D"]), ("pitr_c", ["--skip-gtids"])):
        server.sql("SET sql_log_bin=0; DROP DATABASE IF EXISTS %s; CREATE DATABASE %s" % (db, db))
        before = server.rows("SHOW MASTER STATUS")[0][:2], gtid_state(server)
        rc, out, err = convert(["--format", "sql", "--rewrite-db", "pitr->" + db, *extra, "--stop-datetime", stop, *files])
        r = server.sql(out, extra=("--binary-mode",), check_rc=False)
        check(rc == 0 and r.returncode == 0, "--rewrite-db pitr->%s %s: applied (%s %s)" %
              (db, extra, err.strip()[:200], r.stderr.decode(errors="replace")[:300]))
        got = checksums(server, db)
        check(got == at_t, "--rewrite-db pitr->%s: every table equals pitr's at T (%s vs %s)" % (db, got, at_t))
        after = server.rows("SHOW MASTER STATUS")[0][:2], gtid_state(server)
        if "-D" in extra:
            check(after == before, "-D: the target's binlog has nothing of it (%s vs %s)" % (before, after))
        else:
            check(after != before, "without -D the target binlogs it (%s vs %s)" % (before, after))


def client_queries(sql):
    """The queries the mariadb client sends for `sql` (its DELIMITER lines, whole-line comments and
    quotes as the client reads them; enough for binlogctl's own output): a list of (first line
    number, text)."""
    out, delim, buf, start, quote = [], ";", "", 0, None
    for n, line in enumerate(sql.split("\n"), 1):
        if quote is None and not buf.strip() and line.startswith("DELIMITER "):
            delim = line.split()[1]
            continue
        if quote is None and (line.startswith("#") or line.startswith("-- ")):
            continue
        i = 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == quote:
                    quote = None
            elif c in "'`\"":
                quote = c
            elif c == "#":
                break
            elif line.startswith(delim, i):
                if buf.strip():
                    out.append((start, buf))
                buf = ""
                i += len(delim)
                continue
            if not buf.strip() and not c.isspace():
                start = n
            buf += c
            i += 1
        buf += "\n"
    return out


def transaction_queries(server, root, forward):
    """--sql-queries transaction (the default): a transaction of row changes is one query for the
    client, up to --sql-batch-bytes; an error inside one stops the apply there: the transactions
    before it stay committed, it is rolled back whole, and the client's error names its line."""
    queries = client_queries(forward.decode("utf-8", "replace"))
    commits = [q for _, q in queries if q.rstrip().endswith("COMMIT") and "\nBEGIN;" in q]
    check(len(commits) > 20 and forward.count(b"\nCOMMIT;;\n") >= len(commits),
          "queries: the forward SQL sends %d transactions as one query each (%d queries in all)" %
          (len(commits), len(queries)))
    # small queries: split before they would pass the bound, the tables still equal
    rc, out, err = convert(["--format", "sql", "--sql-batch-bytes", "3000", *LOGS])
    check(rc == 0, "queries: --sql-batch-bytes 3000 exits 0 (%s)" % err.strip()[:300])
    small = client_queries(out.decode("utf-8", "replace"))
    # a query over the bound is one statement alone (a row larger than the bound)
    # (with the SET lines of its session, which go with it)
    over = [q for _, q in small if len(q.encode()) > 3000 and
            sum(1 for ln in q.split("\n") if ln.strip() and not ln.startswith(("SET ", "/*M!"))) > 1]
    check(not over and sum(1 for _, q in small if len(q.encode()) > 2000) > 5 and out.count(b"\n;;\n") > 5,
          "queries: --sql-batch-bytes 3000: %d queries, %d split before the bound, none of several statements "
          "over it (%s)" % (len(small), out.count(b"\n;;\n"), [q[:200] for q in over[:2]]))
    reset_schema(server)
    r = server.apply(out)
    check(r.returncode == 0, "queries: the client accepts the split queries (%s)" % r.stderr.decode(errors="replace")[:300])
    check(snapshot(server) == FINAL[0], "queries: after the split queries every table equals the final state")


def query_errors(server, root):
    """An error in the middle of a transaction's query (after the other steps: it writes the
    server's binlog)."""
    server.sql("CREATE DATABASE qerr; CREATE TABLE qerr.t (id INT PRIMARY KEY, v VARCHAR(10))")
    f, pos = server.query("SHOW MASTER STATUS").split("\t")[:2]
    server.sql("INSERT INTO qerr.t VALUES (1, 'one');"
               "BEGIN; INSERT INTO qerr.t VALUES (2, 'two'); INSERT INTO qerr.t VALUES (3, 'three'), (5, 'five'); COMMIT;"
               "INSERT INTO qerr.t VALUES (4, 'four');")
    server.sql("FLUSH BINARY LOGS")
    for mode in ("transaction", "statement"):
        rc, out, err = convert(["--format", "sql", "--sql-queries", mode, "--start-position", pos,
                                os.path.join(root, f)])
        for force in ((), ("--force",)):
            server.sql("SET sql_log_bin=0; DELETE FROM qerr.t; INSERT INTO qerr.t VALUES (3, 'there')")
            r = server.sql(out, extra=("--binary-mode", "--init-command=SET sql_log_bin=0", *force), check_rc=False)
            got = [tuple(x) for x in server.rows("SELECT id, v FROM qerr.t ORDER BY id")]
            m = re.findall(r"ERROR 1062 \(23000\) at line (\d+)", r.stderr.decode(errors="replace"))
            lines = out.decode().split("\n")
            at = int(m[0]) if len(m) == 1 else 0
            named = lines[at - 2] if at > 1 else ""
            what = "queries %s%s: rc %d, rows %s, error at line %d (%r, %r)" % (
                mode, " --force" if force else "", r.returncode, got, at, named, lines[at - 1] if at else "")
            tx = [i for i, ln in enumerate(lines) if ln.startswith("# transaction ")]
            second = len(tx) == 3 and at - 2 == tx[1] and lines[at - 1] == "ROLLBACK;"  # (lines[at - 1]: line `at`)
            if force:  # (the client's exit status is 0 with --force)
                r.returncode = 1 if m else 0
            if mode == "statement":  # the control: the error names the statement, --force leaves out only it
                check(r.returncode != 0 and lines[at - 1].startswith("INSERT INTO `qerr`.`t` (`id`,`v`) VALUES (3,")
                      and got == ([("1", "one"), ("2", "two"), ("3", "there"), ("4", "four")] if force else
                                  [("1", "one"), ("3", "there")]), what)
            elif not force:  # stopped at the second transaction: the first committed, the second rolled back
                check(r.returncode != 0 and second and got == [("1", "one"), ("3", "there")], what)
            else:  # the failing transaction rolled back whole, the apply went on
                check(r.returncode != 0 and second and got == [("1", "one"), ("3", "there"), ("4", "four")], what)
    server.sql("DROP DATABASE qerr")


def bulk_forms(sql):
    """The forward SQL's statements for the bulk tables of PHASE2 (applied above: the tables equal
    the source's): bulk by key where the key is integers, a row at a time elsewhere."""
    lines = sql.split("\n")

    def of(table, prefix):
        return [ln for ln in lines if ln.startswith(prefix + " `sqltest`.`%s`" % table)]
    bulk = [ln for ln in of("t_bulk", "UPDATE") + of("t_bulk", "DELETE FROM") if " IN ((" in ln]
    shift = [ln for ln in bulk if ln.startswith("UPDATE `sqltest`.`t_bulk` SET `u`=CASE WHEN `a`=7 AND `b`=18446744073709551614 THEN 80 ")]
    check(len(shift) == 1 and shift[0].endswith(" ORDER BY `a` DESC,`b` DESC;"),
          "bulk: the unique key shifted from the top as one UPDATE in descending key order (%s)" % [x[:200] for x in shift])
    doubles = [ln for ln in of("t_bulk", "UPDATE") if ln.startswith("UPDATE `sqltest`.`t_bulk` SET `f`=")]
    check(len(doubles) == 10 and " IN " not in "".join(doubles), "bulk: DOUBLE values a row at a time (%d)" % len(doubles))
    latin = [ln for ln in of("t_bulk", "UPDATE") if ln.startswith("UPDATE `sqltest`.`t_bulk` SET `ls`=")]
    check(len(latin) > 4 and any("CASE" in ln for ln in latin) and any("_latin1 X'" in ln and "CASE" not in ln
                                                                        for ln in latin),
          "bulk: latin1 text with a backslash alone, the others in CASE (%d statements)" % len(latin))
    renames = [ln for ln in of("t_bulk", "UPDATE") if ln.startswith("UPDATE `sqltest`.`t_bulk` SET `b`=")]
    check(len(renames) == 10, "bulk: an UPDATE of the key a row at a time (%d)" % len(renames))
    minimal = [ln for ln in of("t_bulk", "DELETE FROM") if " IN ((2," in ln]
    noblob = [ln for ln in bulk if ln.startswith("UPDATE `sqltest`.`t_bulk` SET `d`=CASE WHEN `a`=0 AND ")]
    check(len(minimal) == 1 and len(noblob) == 1, "bulk: MINIMAL and NOBLOB images by key too (%d, %d)" %
          (len(minimal), len(noblob)))
    desc = [ln for ln in of("t_bulk", "DELETE FROM") if " IN ((" in ln and ln.endswith(" ORDER BY `a` DESC,`b` DESC;")]
    tree = [ln for ln in of("t_tree", "DELETE FROM") if ln.endswith(" IN (30,29,28,27,26,25,24,23,22,21,20,19,18,17,16,"
                                                                    "15,14,13,12,11,10,9,8,7,6) ORDER BY `id` DESC;")]
    check(len(desc) == 1 and len(tree) == 1, "bulk: DELETEs in descending key order, the foreign key's leaves first "
          "(%d, %d)" % (len(desc), len(tree)))
    alone = {t: len(of(t, "UPDATE") + of(t, "DELETE FROM")) for t in ("t_ci", "t_vbk", "t_unull")}
    check(alone == {"t_ci": 6, "t_vbk": 5, "t_unull": 7} and not any(" IN (" in ln for t in alone for ln in
                                                                     of(t, "UPDATE") + of(t, "DELETE FROM")),
          "bulk: text, byte and nullable unique keys a row at a time (%s)" % alone)


def main():
    root = tempfile.mkdtemp(prefix="binlogctl-sql-")
    server = Server(root)
    try:
        server.start()
        server.sql(SCHEMA)
        server.sql("FLUSH BINARY LOGS")
        server.sql(PHASE1)
        mid = snapshot(server)
        status = server.query("SHOW MASTER STATUS").split("\t")
        mid_file, mid_pos = status[0], int(status[1])
        server.sql(PHASE2)
        final = snapshot(server)
        server.sql("FLUSH BINARY LOGS")
        logs = [f for f in binlogs(root)]
        logs = logs[1:]  # the first file holds the start-up only; the workload starts after FLUSH
        check(len(final.get("sqltest.t_types", [])) == 4 and len(final.get("sqltest.t_renamed", [])) > 2000,
              "workload made the expected tables")

        # 1. forward
        rc, out, err = convert(["--format", "sql", *logs])
        check(rc == 0, "convert --format sql exits 0 (%d: %s)" % (rc, err.strip()[:300]))
        forward = out
        reset_schema(server)
        r = server.apply(out)
        check(r.returncode == 0, "the client accepts the forward SQL (%s)" % r.stderr.decode(errors="replace")[:500])
        got = snapshot(server)
        check(got == final, "forward: every table equals the original final state\n" + diff(final, got))
        bulk_forms(forward.decode("utf-8", "replace"))
        LOGS[:] = logs
        FINAL[:] = [final]
        transaction_queries(server, root, forward)  # (restores the final state)

        # 2. flashback of the range after the mid point (no DDL in it); spills forced
        spill = os.path.join(root, "spill")
        os.mkdir(spill)
        start = logs.index(os.path.join(root, mid_file))
        env_logs = logs[start:]
        rc, out, err = convert(["--flashback", "--tmpdir", spill, "--flashback-memory", "65536", "--start-position", str(mid_pos), *env_logs])
        check(rc == 0, "--flashback exits 0 (%d: %s)" % (rc, err.strip()[:300]))
        check(os.listdir(spill) == [], "--flashback leaves no spill file behind")
        r = server.apply(out)
        check(r.returncode == 0, "the client accepts the flashback SQL (%s)" % r.stderr.decode(errors="replace")[:500])
        got = snapshot(server)
        check(got == mid, "flashback: every table equals its state at the chosen point\n" + diff(mid, got))
        text = out.decode("utf-8", "replace")
        check("CREATE DATABASE (DDL that acts on no table; not undone)" in text and
              "ALTER TABLE on sqltest_side.s (DDL on tables whose rows the range does not change; not undone)" in text
              and "DROP DATABASE on every table of database sqltest_side (DDL on tables" in text,
              "--flashback passes over DDL on other tables with a comment")

        # 3. what cannot be undone is refused, or skipped on request
        rc, out, err = convert(["--flashback", *logs])
        check(rc == 1 and out == b"" and "cannot be undone" in err,
              "--flashback over DDL and statement-logged changes refuses (rc %d, %d bytes out)" % (rc, len(out)))
        rc, out, err = convert(["--flashback", "--flashback-skip-unsafe", *logs])
        check(rc == 0 and b"# SKIPPED" in out and "skipped" in err,
              "--flashback-skip-unsafe skips them with a warning (rc %d)" % rc)
        # DDL on a table whose rows the range changes, after the rows (ALTER) and before them
        # (CREATE): refused, the statement named by its position and table
        for table, stmt, verb in (("t_cpk", b"ALTER TABLE t_cpk ADD COLUMN", "ALTER TABLE"),
                                  ("t_new", b"CREATE TABLE t_new", "CREATE TABLE")):
            at = ddl_position(forward, stmt)
            rc, out, err = convert(["--flashback", "--filter", "sqltest\\." + table, *logs])
            named = [ln for ln in err.splitlines() if at and (at + ": error: ") in ln and
                     ("--flashback: %s on sqltest.%s, whose rows the range changes" % (verb, table)) in ln and
                     ln.endswith("cannot be undone")]
            check(rc == 1 and out == b"" and len(named) == 1,
                  "--flashback refuses %s on %s, a table the range changes (rc %d, %s)" % (verb, table, rc, err.strip()[:400]))
            rc, out, err = convert(["--flashback", "--flashback-skip-unsafe", "--filter", "sqltest\\." + table, *logs])
            check(rc == 0 and ("# SKIPPED %s: %s on sqltest.%s, whose rows" % (at, verb, table)).encode() in out and
                  "warning" in err, "--flashback-skip-unsafe: %s on %s skipped with a warning and a comment (rc %d)" %
                  (verb, table, rc))

        # 4. the MariaDB corpora: their binlogs (DDL included) converted, applied to the same
        # server and compared with their expected/ tables
        for corpus in ("types", "txn"):
            cdir = os.path.join(CORPUS, corpus) if CORPUS else ""
            if not (CORPUS and os.path.isdir(os.path.join(cdir, "binlogs"))):
                print("skip %s corpus (not present)" % corpus)
                continue
            corpus_logs = sorted(os.path.join(cdir, "binlogs", f) for f in os.listdir(os.path.join(cdir, "binlogs"))
                                 if not f.endswith(".index"))
            rc, out, err = convert(["--format", "sql", *corpus_logs])
            check(rc == 0, "%s corpus: convert --format sql exits 0 (%s)" % (corpus, err.strip()[:300]))
            r = server.apply(out)
            check(r.returncode == 0, "%s corpus: the client accepts every statement (%s)" %
                  (corpus, r.stderr.decode(errors="replace")[:500]))
            expected_dir = os.path.join(cdir, "expected")
            for fn in sorted(os.listdir(expected_dir)):
                if not fn.endswith(".jsonl"):
                    continue
                db, table = fn[:-len(".jsonl")].split(".", 1)
                spec, got_rows = corpus_rows(server, db, table)
                want_rows = corpus_expected(os.path.join(expected_dir, fn), spec)
                same = canon_rows(got_rows) == canon_rows(want_rows)
                detail = ""
                if not same:
                    g, w = canon_rows(got_rows), canon_rows(want_rows)
                    detail = "\n  expected-only %s\n  got-only %s" % ([x[:300] for x in w if x not in g][:2],
                                                                      [x[:300] for x in g if x not in w][:2])
                check(same, "%s corpus: %s.%s equals expected/ (%d rows)%s" % (corpus, db, table, len(want_rows), detail))

        # 6. the MySQL 8/9 files of the public corpus: what binlogctl writes parses
        public = os.path.join(os.path.dirname(os.path.abspath(CORPUS)), "public") if CORPUS else ""
        if public and os.path.exists(os.path.join(public, "MANIFEST.md")):
            # a default database the user may enter (LOCK TABLES, nothing else): the parser needs
            # one for unqualified table names, and USE of the logged databases is denied
            server.sql("SET sql_log_bin=0; CREATE USER %s@localhost; CREATE DATABASE %s; GRANT LOCK TABLES ON %s.* TO "
                       "%s@localhost;" % (PARSE_USER, PARSE_USER, PARSE_USER, PARSE_USER))
            # the check itself, once: a statement that does not parse is found
            n, own, theirs, _ = 0, [], [], 0
            r = server.sql(b"SELECT 1;\nINSERT INTO `d`.`t` (`a`) VALUES (1,;\nDELETE FROM `d`.`t` WHERE `a`=1;\n"
                           b"CREATE TABLE t (a INT);\n",
                           extra=("--force", "-u" + PARSE_USER, "-D" + PARSE_USER), check_rc=False)
            errs = re.findall(r"ERROR (\d+) \(\w+\) at line (\d+)", r.stderr.decode(errors="replace"))
            check(errs == [("1064", "2"), ("1142", "3"), ("1142", "4")], "parse check: the server as %s tells a parse error (1064) "
                  "from a statement that parses (%s)" % (PARSE_USER, errs))
            total, total_casts = 0, 0
            for path in mysql8_files(public):
                for args in (["--format", "sql"], ["--flashback", "--flashback-skip-unsafe"]):
                    n, own, theirs, casts = parse_check(server, path, args)
                    total += n
                    total_casts += casts
                    name = os.path.relpath(path, public)
                    check(not own, "parse check %s %s: %d statements, none of binlogctl's is a parse error %s" %
                          (name, args[0], n, own[:3]))
                    for t in theirs:
                        print("note %s %s: passed-through MySQL statement MariaDB does not parse: %s" % (name, args[0], t))
            check(total > 100 and total_casts > 0, "parse check: %d statements fed, %d CAST(... AS JSON) among them" %
                  (total, total_casts))
        else:
            print("skip the MySQL parse check (public corpus not present)")

        # 7. point-in-time recovery
        pitr(server, root)
        # 8. (continued) an error inside a transaction's query
        query_errors(server, root)
    except Exception:  # say what the server said, for a failure seen only in CI
        import traceback
        traceback.print_exc()
        log = os.path.join(root, "error.log")
        if os.path.exists(log):
            print("--- tail of the server's error.log ---")
            print(open(log, errors="replace").read()[-3000:])
        FAILS.append("exception")
    finally:
        server.stop()
        if not FAILS:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print("kept " + root)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
