#!/usr/bin/env python3
"""Apply time of binlogctl's SQL against mariadb-binlog's, into the same fresh server (issue #35).

Usage: bench/apply_bench.py BINLOGCTL BINLOG_FILE... [--runs N] [--baseline OTHER_BINLOGCTL]

Starts a private mariadbd (tests/cli/mdb.py: own datadir, unix socket) with production durability
(log-bin, sync_binlog=1, innodb_flush_log_at_trx_commit=1, binlog_format=ROW), then per run and
per tool: drops the databases the files create, resets the binlog, and times

    mariadb-binlog FILES | mariadb                       (the reference)
    binlogctl convert --format sql FILES | mariadb       (defaults: GTIDs kept, multi-row INSERTs)

(and, with --baseline, the same with another binlogctl binary, e.g. an older commit's), all
writing the target's binlog as a restore would. The ways alternate, ABBA (the first of a
run is the second of the next), so that a loaded machine's drift weighs on both alike. Prints per
run the wall time, the server's CPU time (utime + stime of mariadbd from /proc) and the load
average, then the median and minimum of each and the ratio, and checks that both left the same
CHECKSUM TABLE of every table after every run.
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
    baseline = None
    if "--baseline" in args:
        i = args.index("--baseline")
        baseline = args[i + 1]
        del args[i:i + 2]
    binlogctl, files = args[0], args[1:]
    mdb.require_or_skip()
    root = tempfile.mkdtemp(prefix="binlogctl-apply-bench-")
    server = mdb.Server(root, ["--server-id=9", "--log-bin=" + os.path.join(root, "binlog"), "--binlog-format=ROW",
                               "--sync-binlog=1", "--innodb-flush-log-at-trx-commit=1",
                               "--innodb-buffer-pool-size=256M", "--innodb-log-file-size=256M"])
    server.start()
    pid = int(open(server.pidfile).read())

    def server_cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    tools = {
        "mariadb-binlog | mariadb": [mdb.find("mariadb-binlog"), "--no-defaults", *files],
        "binlogctl convert --format sql | mariadb": [binlogctl, "convert", "--format", "sql", *files],
    }
    if baseline:
        tools["baseline binlogctl convert --format sql | mariadb"] = [baseline, "convert", "--format", "sql", *files]
    times = {k: [] for k in tools}
    cpus = {k: [] for k in tools}
    sums = {}
    same = True
    try:
        for run in range(runs):
            order = list(tools.items()) if run % 2 == 0 else list(reversed(tools.items()))
            for name, producer in order:
                dbs = [r[0] for r in server.rows("SHOW DATABASES") if r[0] not in
                       ("mysql", "information_schema", "performance_schema", "sys")]
                server.sql("".join("DROP DATABASE `%s`;" % d for d in dbs) + "RESET MASTER;")
                load0 = os.getloadavg()[0]
                c0 = server_cpu()
                t0 = time.monotonic()
                prod = subprocess.Popen(producer, stdout=subprocess.PIPE)
                cons = subprocess.run(server.client_args(["--binary-mode"]), stdin=prod.stdout,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                prod.stdout.close()
                prod.wait()
                dt = time.monotonic() - t0
                cpu = server_cpu() - c0
                if cons.returncode != 0:
                    print("%s: the client failed: %s" % (name, cons.stderr.decode(errors="replace")[-500:]))
                times[name].append(dt)
                cpus[name].append(cpu)
                tables = server.rows("SELECT CONCAT('`', table_schema, '`.`', table_name, '`') FROM "
                                     "information_schema.tables WHERE table_schema NOT IN ('mysql', "
                                     "'information_schema', 'performance_schema', 'sys') ORDER BY 1")
                sums[name] = server.rows("CHECKSUM TABLE " + ", ".join(t[0] for t in tables)) if tables else []
                print("run %d %-42s %8.2f s wall, server CPU %7.2f s, load %.1f -> %.1f" %
                      (run + 1, name, dt, cpu, load0, os.getloadavg()[0]), flush=True)
            same = same and len(set(repr(v) for v in sums.values())) == 1
    finally:
        server.stop()
    (rn, ref), (on, ours) = ((k, times[k]) for k in list(tools)[:2])
    for k in tools:
        print("%-42s wall median %.2f min %.2f s; server CPU median %.2f min %.2f s" %
              (k, statistics.median(times[k]), min(times[k]), statistics.median(cpus[k]), min(cpus[k])))
    print("of %d runs: binlogctl %.2fx as fast by the medians, %.2fx by the minima (server CPU: %.2fx, %.2fx)" %
          (runs, statistics.median(ref) / statistics.median(ours), min(ref) / min(ours),
           statistics.median(cpus[rn]) / statistics.median(cpus[on]), min(cpus[rn]) / min(cpus[on])))
    if baseline:
        bn = list(tools)[2]
        print("baseline: %.2fx the pipe by the medians, %.2fx by the minima; binlogctl %.2fx as fast as the baseline "
              "by the medians (server CPU %.2fx)" %
              (statistics.median(ref) / statistics.median(times[bn]), min(ref) / min(times[bn]),
               statistics.median(times[bn]) / statistics.median(ours), statistics.median(cpus[bn]) / statistics.median(cpus[on])))
    print("same tables (CHECKSUM TABLE) after every way, every run: %s" % ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
