#!/usr/bin/env python3
"""verify --cover-from against the archives of a real primary and its replica.

Usage: cover.py BINLOGCTL

Starts a private primary (127.0.0.1, a free port) and a replica of it (unix socket only,
log_slave_updates, its own binlog, relay logs of at most 4 KiB so that a large transaction is split
across two relay-log files), runs a bounded workload on the primary with FLUSH BINARY LOGS at some
points, and on the replica at other points. The backup position is the primary's gtid_binlog_pos
before the workload. Then:

1. the primary's archive covers the backup position to its end: exit 0, the JSON summary says
   covered with the first and last GTID;
2. the primary's archive with its middle file removed: exit 1, a coverage_gap finding that names
   the first GTID of the removed file; --cover-to a GTID before the hole: exit 0; after it: 1;
3. the same archive merged with the replica's binlogs (rotated elsewhere): exit 0;
4. the replica's relay logs, where a transaction runs from one file into the next: exit 0 (the
   split transaction is not a gap) and it is counted once;
5. --cover-to a time after the archives' last event: exit 1 (coverage_end);
6. a chain holding a GTID of the primary's archive again with other content (gtid_seq_no reused on
   the primary): coverage_mismatch against the primary's copy, exit 1.

Exit 77 (skip) when mariadbd or the mariadb client is absent.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdb  # noqa: E402

mdb.require_or_skip()
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def verify(*args):
    p = subprocess.run([BIN, "verify", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def copy_files(server_dir, names, dest):
    os.makedirs(dest)
    for n in names:
        shutil.copy(os.path.join(server_dir, n), dest)
    return dest


def file_gtids(path):
    """The GTIDs of a binlog file in order (binlogctl dump --format json)."""
    p = subprocess.run([BIN, "dump", "--format", "json", path], stdout=subprocess.PIPE, check=False)
    out = []
    for line in p.stdout.decode().split("\n"):
        if line:
            rec = json.loads(line)
            if rec.get("event_type") == "Gtid":
                out.append(rec["info"].split()[-1] if " " in rec["info"] else rec["info"])
    return out


def first_content_event(path):
    """The first event of a file that is not about the file itself."""
    p = subprocess.run([BIN, "dump", "--format", "json", path], stdout=subprocess.PIPE, check=False)
    for line in p.stdout.decode().split("\n"):
        if line:
            t = json.loads(line).get("event_type")
            if t not in ("Format_desc", "Rotate", "Gtid_list", "Binlog_checkpoint", "Start_encryption"):
                return t
    return None


WORKLOAD = [
    "CREATE TABLE cov.t (id INT PRIMARY KEY, v VARCHAR(200))",
    "INSERT INTO cov.t VALUES (1, 'a'), (2, 'b')",
    "UPDATE cov.t SET v = 'c' WHERE id = 1",
    "FLUSH BINARY LOGS",
    "INSERT INTO cov.t SELECT seq + 10, REPEAT('x', 150) FROM seq_1_to_80",  # > 4 KiB: split in the relay log
    "DELETE FROM cov.t WHERE id = 2",
    "R:FLUSH BINARY LOGS",
    "INSERT INTO cov.t VALUES (3, 'mid')",
    "FLUSH BINARY LOGS",
    "UPDATE cov.t SET v = 'late' WHERE id > 50",
    "R:FLUSH BINARY LOGS",
    "INSERT INTO cov.t VALUES (4, 'last')",
    "FLUSH BINARY LOGS",
]


def main():
    root = tempfile.mkdtemp(prefix="binlogctl-cover-")
    pdir, rdir = os.path.join(root, "p"), os.path.join(root, "r")
    os.mkdir(pdir)
    os.mkdir(rdir)
    common = ["--binlog-format=ROW", "--gtid-strict-mode=0", "--innodb-buffer-pool-size=16M"]
    primary = mdb.Server(pdir, ["--server-id=1", "--log-bin=" + os.path.join(pdir, "binlog"), *common], tcp=True)
    replica = mdb.Server(rdir, ["--server-id=2", "--log-bin=" + os.path.join(rdir, "binlog"), "--log-slave-updates",
                                "--relay-log=" + os.path.join(rdir, "relay"), "--max-relay-log-size=4096", "--relay-log-purge=0", *common])
    try:
        primary.start()
        replica.start()
        primary.sql("CREATE USER repl@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1';"
                    "CREATE DATABASE cov;")
        backup = primary.query("SELECT @@gtid_binlog_pos").strip()
        replica.sql("SET sql_log_bin=0; CREATE DATABASE cov")  # the backup's content
        replica.sql("SET GLOBAL gtid_slave_pos='%s'; CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, "
                    "MASTER_USER='repl', MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos; START SLAVE;" %
                    (backup, primary.port))
        for stmt in WORKLOAD:
            if stmt.startswith("R:"):
                pos = primary.query("SELECT @@gtid_binlog_pos").strip()
                replica.query("SELECT MASTER_GTID_WAIT('%s', 60)" % pos)
                replica.sql(stmt[2:])
            else:
                primary.sql("USE cov; " + stmt)
        pos = primary.query("SELECT @@gtid_binlog_pos").strip()
        waited = replica.query("SELECT MASTER_GTID_WAIT('%s', 60)" % pos).strip()
        check(waited == "0", "the replica caught up with the primary (%s)" % waited)
        replica.sql("STOP SLAVE; FLUSH BINARY LOGS")

        pnames = primary.binlogs()
        rnames = replica.binlogs()
        parch = copy_files(pdir, pnames, os.path.join(root, "parch"))
        rarch = copy_files(rdir, rnames, os.path.join(root, "rarch"))
        relay_names = sorted(f for f in os.listdir(rdir) if f.startswith("relay.") and f[6:].isdigit())
        relays = copy_files(rdir, relay_names, os.path.join(root, "relays"))

        # 1. the whole primary archive
        rc, out, err = verify("--cover-from", backup, "--format", "json", parch)
        summary = json.loads(out.strip().split("\n")[-1]).get("coverage", {}) if out.strip() else {}
        check(rc == 0 and summary.get("covered") is True and summary.get("missing") == 0 and summary.get("present", 0) >= 8,
              "the primary's archive covers %s to its end (rc %d, %s %s)" % (backup, rc, summary, err.strip()[:300]))

        # 2. the middle file removed
        files = sorted(os.listdir(parch))
        files = [f for f in files if f[len("binlog."):].isdigit()]
        gtids = [(f, file_gtids(os.path.join(parch, f))) for f in files]
        with_tx = [f for f, g in gtids if g]
        middle = with_tx[len(with_tx) // 2]
        lost = dict(gtids)[middle]
        holed = copy_files(parch, [f for f in files if f != middle], os.path.join(root, "holed"))
        rc, out, err = verify("--cover-from", backup, holed)
        print(out)
        check(rc == 1 and "coverage_gap" in out and lost[0] in out,
              "without %s: exit 1, the first missing GTID %s named (rc %d)" % (middle, lost[0], rc))
        before = [g for f, gs in gtids if f < middle for g in gs]
        rc, _, _ = verify("--cover-from", backup, "--cover-to", before[-1], holed)
        check(rc == 0, "--cover-to %s, before the hole: exit 0 (rc %d)" % (before[-1], rc))
        rc, out, _ = verify("--cover-from", backup, "--cover-to", lost[-1], holed)
        check(rc == 1 and lost[0] in out, "--cover-to %s, in the hole: exit 1 (rc %d)" % (lost[-1], rc))

        # 3. merged with the replica's archive
        rc, out, err = verify("--cover-from", backup, holed, rarch)
        check(rc == 0 and "coverage: complete" in out, "the holed primary archive with the replica's: exit 0 (rc %d: %s%s)" %
              (rc, out[-600:], err[-300:]))

        # 4. relay logs with a transaction split across two files
        split = [f for f in relay_names if first_content_event(os.path.join(relays, f)) not in (None, "Gtid")]
        check(len(split) > 0, "precondition: a relay-log file starts inside a transaction (%s)" % split)
        rc, out, err = verify("--cover-from", backup, "--format", "json", relays)
        s = json.loads(out.strip().split("\n")[-1]).get("coverage", {}) if out.strip() else {}
        rc_p, out_p, _ = verify("--cover-from", backup, "--format", "json", parch)
        sp = json.loads(out_p.strip().split("\n")[-1]).get("coverage", {}) if out_p.strip() else {}
        check(rc == 0 and s.get("present") == sp.get("present"),
              "the relay logs cover the same transactions, the split one once (rc %d, %s vs %s; %s)" %
              (rc, s.get("present"), sp.get("present"), err.strip()[:300]))

        # 5. a target time after the archives' end
        later = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 3600))
        rc, out, _ = verify("--cover-from", backup, "--cover-to", later, parch)
        check(rc == 1 and "coverage_end" in out, "--cover-to a time after the archives: exit 1, coverage_end (rc %d)" % rc)

        # 6. a GTID of the archive again, with other content
        reused = dict(gtids)[with_tx[-1]][-1]
        d, sid, seq = reused.split("-")
        primary.sql("SET gtid_domain_id=%s, server_id=%s, gtid_seq_no=%s; INSERT INTO cov.t VALUES (999, 'other'); "
                    "FLUSH BINARY LOGS" % (d, sid, seq))
        last = primary.binlogs()[-2]
        other = copy_files(pdir, [last], os.path.join(root, "other"))
        rc, out, _ = verify("--cover-from", backup, parch, other)
        check(rc == 1 and "coverage_mismatch" in out and reused in out,
              "GTID %s with other content in another chain: coverage_mismatch, exit 1 (rc %d)" % (reused, rc))
    except Exception:
        import traceback
        traceback.print_exc()
        FAILS.append("exception")
    finally:
        replica.stop()
        primary.stop()
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
