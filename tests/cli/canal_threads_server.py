#!/usr/bin/env python3
"""Canal output on rendering threads keeps a one-thread run's order, against a real MariaDB server.

Usage: canal_threads_server.py BINLOGCTL

Starts one private mariadbd (tests/cli/mdb.py: own datadir and unix socket, no TCP) with
binlog_format=ROW and runs a bounded workload: rounds of a 1000-row INSERT (over 64 KiB of row
images, so that batches are in flight on the rendering threads) followed by an ALTER TABLE sent
by a latin1 client, whose statement text in the binlog is not valid UTF-8. Serializing that
statement's RowChange makes protobuf log the invalid string on stderr, so binlogctl writes such
an entry only after everything before it. `convert --format canal-proto` and `canal-json` with
`--threads 0` and `--threads 2` must give the same stdout, stderr and exit status, and the logs
must be there (one per ALTER).

Exit 77 (skip) when mariadbd or the mariadb client is absent.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdb  # noqa: E402

BIN = sys.argv[1]
mdb.require_or_skip()
FAILS = []
ROUNDS = 4


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(fmt, threads, logs):
    r = subprocess.run([BIN, "convert", "--format", fmt, "--threads", str(threads), *logs],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = r.stdout
    if fmt == "canal-json":  # "ts": the wall clock when the message was made
        out = re.sub(rb'"ts":[0-9]+,"type"', b'"ts":0,"type"', out)
    return r.returncode, out, r.stderr


with tempfile.TemporaryDirectory(prefix="binlogctl-canal-threads-") as root:
    server = mdb.Server(root, ["--server-id=1", "--log-bin=" + os.path.join(root, "binlog"), "--binlog-format=ROW"])
    try:
        server.start()
        server.sql("CREATE DATABASE c; CREATE TABLE c.t (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(200), d DOUBLE);")
        for i in range(ROUNDS):
            server.sql("INSERT INTO c.t (s, d) SELECT CONCAT(REPEAT('x', 100), seq), seq / 7 FROM c.seq_1_to_1000;")
            # latin1 bytes: 'caf\xe9' is not UTF-8
            server.sql(b"ALTER TABLE c.t COMMENT 'caf\xe9 %d';" % i, extra=("--default-character-set=latin1",))
        server.sql("FLUSH BINARY LOGS;")
        logs = [os.path.join(root, name) for name in server.binlogs()[:-1]]
    finally:
        server.stop()

    for fmt in ("canal-proto", "canal-json"):
        one = run(fmt, 0, logs)
        two = run(fmt, 2, logs)
        check(one[0] == 0, "%s --threads 0: exit status 0 (got %d: %s)" % (fmt, one[0], one[2][-300:]))
        check(len(one[1]) > 4 * 64 * 1024, "%s: output of more than a few batches (%d bytes)" % (fmt, len(one[1])))
        check(one[1] == two[1], "%s: the same output with --threads 0 and --threads 2" % fmt)
        check(one[2] == two[2], "%s: the same stderr with --threads 0 and --threads 2" % fmt)
        check(one[0] == two[0], "%s: the same exit status" % fmt)
        if fmt == "canal-proto":
            n = one[2].count(b"RowChange.sql' contains invalid UTF-8")
            check(n == ROUNDS, "canal-proto: protobuf's log for each latin1 ALTER (%d of %d)" % (n, ROUNDS))

if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("all checks passed")
