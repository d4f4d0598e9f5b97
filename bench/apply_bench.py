#!/usr/bin/env python3
"""Apply time of binlogctl's SQL against mariadb-binlog's, into the same fresh server (issue #35).

Usage: bench/apply_bench.py BINLOGCTL BINLOG_FILE... [--runs N]

Starts a private mariadbd (tests/cli/mdb.py: own datadir, unix socket) with production durability
(log-bin, sync_binlog=1, innodb_flush_log_at_trx_commit=1, binlog_format=ROW), then per run and
per tool: drops the databases the files create, resets the binlog, and times

    mariadb-binlog FILES | mariadb                       (the reference)
    binlogctl convert --format sql FILES | mariadb       (defaults: GTIDs kept, multi-row INSERTs)

both writing the target's binlog as a restore would. Prints the wall time of each (median of
--runs) and the ratio, and checks that both left the same CHECKSUM TABLE of every table.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import mdb  # noqa: E402


def main():
    args = sys.argv[1:]
    runs = 1
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    binlogctl, files = args[0], args[1:]
    mdb.require_or_skip()
    root = tempfile.mkdtemp(prefix="binlogctl-apply-bench-")
    server = mdb.Server(root, ["--server-id=9", "--log-bin=" + os.path.join(root, "binlog"), "--binlog-format=ROW",
                               "--sync-binlog=1", "--innodb-flush-log-at-trx-commit=1",
                               "--innodb-buffer-pool-size=256M", "--innodb-log-file-size=256M"])
    server.start()
    tools = {
        "mariadb-binlog | mariadb": [mdb.find("mariadb-binlog"), *files],
        "binlogctl convert --format sql | mariadb": [binlogctl, "convert", "--format", "sql", *files],
    }
    times = {k: [] for k in tools}
    sums = {}
    try:
        for _ in range(runs):
            for name, producer in tools.items():
                dbs = [r[0] for r in server.rows("SHOW DATABASES") if r[0] not in
                       ("mysql", "information_schema", "performance_schema", "sys")]
                server.sql("".join("DROP DATABASE `%s`;" % d for d in dbs) + "RESET MASTER;")
                t0 = time.monotonic()
                prod = subprocess.Popen(producer, stdout=subprocess.PIPE)
                cons = subprocess.run(server.client_args(["--binary-mode"]), stdin=prod.stdout,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                prod.stdout.close()
                prod.wait()
                dt = time.monotonic() - t0
                if cons.returncode != 0:
                    print("%s: the client failed: %s" % (name, cons.stderr.decode(errors="replace")[-500:]))
                times[name].append(dt)
                tables = server.rows("SELECT CONCAT('`', table_schema, '`.`', table_name, '`') FROM "
                                     "information_schema.tables WHERE table_schema NOT IN ('mysql', "
                                     "'information_schema', 'performance_schema', 'sys') ORDER BY 1")
                sums[name] = server.rows("CHECKSUM TABLE " + ", ".join(t[0] for t in tables)) if tables else []
                print("%-45s %8.2f s" % (name, dt), flush=True)
    finally:
        server.stop()
    ref, ours = (statistics.median(times[k]) for k in tools)
    print("median of %d: mariadb-binlog %.2f s, binlogctl %.2f s: binlogctl %.2fx as fast" % (runs, ref, ours, ref / ours))
    same = len(set(repr(v) for v in sums.values())) == 1
    print("same tables (CHECKSUM TABLE) after both: %s" % ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
