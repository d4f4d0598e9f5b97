#!/usr/bin/env python3
"""binlogctl serve --upstream A,C,B: the relay's failover (issue 33, item 3), with real servers.

usage: failover.py BINLOGCTL

  A  the upstream primary (server-id 1), under a bounded write workload, killed with SIGKILL in the
     middle of it;
  C  a server with a conflicting history: the same GTIDs (server-id 1, domain 0) for other rows;
  B  a replica of the relay itself (log_slave_updates): it holds what the relay's directory holds,
     and is promoted (STOP SLAVE, RESET SLAVE ALL) once the relay went on with it, then written to;
  D  a mariadbd replica of the relay (GTID, 4 parallel threads, log_slave_updates), and a
     `mariadb-binlog -R --raw --stop-never` client reading by file and position, both connected
     before the kill. Later D is stopped one transaction behind the relay, which is started again
     with --upstream A,D,C,B: D has the GTID before the directory's newest and never gets the
     newest (a replica of a dead primary), so it must be refused after --failover-wait, not waited
     for.

`serve --upstream A,C,B` lists C before B: when A dies the relay asks C, which it must refuse (its
copy of the directory's newest GTID does other things), then B, which goes on.

Checks: C is refused with a message naming the differing history, and B taken; D's tables equal B's
(CHECKSUM TABLE) and its gtid_slave_pos equals B's gtid_binlog_pos; the raw client's files are the
directory's, byte for byte, across the failover and the relay's own ROTATE; `binlogctl verify` finds the
directory's complete files sound (positions, checksums, GTID continuity); the status file names B as the
upstream after one failover; the directory's
.binlogctl-failover names B; D, behind, refused after the wait. BINLOGCTL_FAILOVER_BREAK=name,... makes
a named check compare against a wrong value (refused, replica, raw, verify, status, wait). Exits 77 without mariadbd or serve --upstream.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import mdb
import socket
from support import Serve, ServeStartError, TcpProxy, free_port, shut

SKIP = 77
USER, PW = "repl", "secret"
RELAY_USER, RELAY_PW = "relay", "relaypw"
BREAK = set(os.environ.get("BINLOGCTL_FAILOVER_BREAK", "").split(","))
COMMON = ("--binlog-format=ROW", "--binlog-checksum=CRC32", "--max-binlog-size=1M", "--gtid-domain-id=0")
SCHEMA = "CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, v INT, s VARCHAR(100));"


class Fail(Exception):
    pass


MARKER = b"cut-here-7f3a"


class CutProxy(TcpProxy):
    """127.0.0.1:port -> A. Cuts the connection (and refuses new ones, as a dead server does) 20,000
    bytes after the first MARKER it forwards from A: inside the transaction whose statement holds it."""

    def __init__(self, target):
        super().__init__(target)
        self.cut = False
        self.start()

    def accepting(self):
        return not self.cut

    def pump(self, src, dst, down):
        if not down:
            return super().pump(src, dst, down)
        tail = b""
        left = None
        try:
            while not self.cut:
                d = src.recv(65536)
                if not d:
                    break
                if left is None:
                    i = (tail + d).find(MARKER)
                    if i >= 0:
                        left = 20000 + len(tail) + len(d) - i
                    tail = d[-len(MARKER):]
                if left is not None and len(d) >= left:
                    dst.sendall(d[:left])
                    self.kill()
                    return
                if left is not None:
                    left -= len(d)
                dst.sendall(d)
        except OSError:
            pass
        finally:
            shut(src, dst)

    def kill(self):
        self.cut = True
        try:
            self.lsn.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
        except OSError:
            pass
        self.close()


def statements(base, n, tag):
    parts = []
    for i in range(n):
        k = base + i
        parts.append(f"INSERT INTO w.t VALUES ({k}, {i}, '{tag}-{i}');")
        if i % 3 == 2:
            parts.append(f"BEGIN; UPDATE w.t SET v = v + 1 WHERE id = {k - 1}; "
                         f"INSERT INTO w.t VALUES ({k + 500000}, {i}, '{tag}'); COMMIT;")
        parts.append("DO SLEEP(0.01);")
    return "\n".join(parts)


def main():
    binary = os.path.abspath(sys.argv[1])
    for prog in ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog"):
        if mdb.find(prog) is None:
            print(f"skip: {prog} is not installed")
            return SKIP
    h = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True)
    if h.returncode != 0 or "--upstream" not in h.stdout:
        print("skip: this binlogctl has no serve --upstream")
        return SKIP
    t0 = time.time()
    failures = []
    checks = [0]

    def check(cond, what):
        checks[0] += 1
        if not cond:
            failures.append(what)
            print("FAIL:", what, flush=True)
        return cond

    def step(name):
        print(f"[{time.time() - t0:6.1f}s] {name}", flush=True)

    tmp = tempfile.mkdtemp(prefix="binlogctl-failover-")
    a = mdb.Server(os.path.join(tmp, "a"), ("--server-id=1", "--log-bin=a-bin", *COMMON), tcp=True)
    c = mdb.Server(os.path.join(tmp, "c"), ("--server-id=1", "--log-bin=c-bin", *COMMON), tcp=True)
    b = mdb.Server(os.path.join(tmp, "b"), ("--server-id=2", "--log-bin=b-bin", "--log-slave-updates", *COMMON),
                   tcp=True)
    d = mdb.Server(os.path.join(tmp, "d"), ("--server-id=4", "--log-bin=d-bin", "--log-slave-updates", *COMMON),
                   tcp=True)
    proxy = None
    servers = (a, c, b, d)
    for s in servers:
        os.makedirs(s.dir)
    serve = None
    raw = None
    try:
        step("servers A, C, B, D: install, start")
        for s in servers:
            s.start()
        for s in (a, c, b):
            s.apply(f"CREATE USER {RELAY_USER}@'127.0.0.1' IDENTIFIED BY '{RELAY_PW}'; "
                    f"GRANT ALL ON *.* TO {RELAY_USER}@'127.0.0.1';".encode())
        # D's own history must be the relay's only: no GTID of its own
        d.apply(f"SET sql_log_bin=0; CREATE USER {RELAY_USER}@'127.0.0.1' IDENTIFIED BY '{RELAY_PW}'; "
                f"GRANT ALL ON *.* TO {RELAY_USER}@'127.0.0.1';".encode())
        a.sql(SCHEMA + "CREATE TABLE w.big (n INT PRIMARY KEY, b VARCHAR(200));" + statements(1, 30, "a"))
        proxy = CutProxy(a.port)
        # C: the same GTIDs as A will write, for other rows (more of them than A will have).
        c.sql(SCHEMA + statements(1, 600, "c").replace("DO SLEEP(0.01);", ""))

        step("serve --upstream A,C,B")
        result = os.path.join(tmp, "dir")
        errlog = os.path.join(tmp, "serve.err")
        ups = ",".join(f"127.0.0.1:{p}" for p in (proxy.port, c.port, b.port))
        port = free_port()
        status_file = os.path.join(tmp, "status.json")

        def start_serve(log, upstream=None, extra=()):
            sv = Serve(binary, log, ["--upstream", upstream or ups, "--upstream-user", RELAY_USER,
                                     "--upstream-password=" + RELAY_PW, "--result-dir", result,
                                     "--status-file", status_file, "--status-interval", "0.5", *extra],
                       user=USER, password=PW)
            try:
                sv.start(port)
            except ServeStartError as e:
                raise Fail(str(e))
            return sv
        step("an empty directory and the first server unreachable: the next one is read from its first file")
        dead = free_port()
        dir0 = os.path.join(tmp, "dir0")
        p0 = subprocess.Popen([binary, "serve", "--port", "0", "--user", USER, "--password=" + PW, "--upstream",
                               f"127.0.0.1:{dead},127.0.0.1:{c.port}", "--upstream-user", RELAY_USER,
                               "--upstream-password=" + RELAY_PW, "--result-dir", dir0],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "serve0.err"), "wb"))
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(os.path.join(dir0, "c-bin.000001.partial")):
            time.sleep(0.1)
        p0.send_signal(signal.SIGTERM)
        p0.wait(30)
        check(os.path.exists(os.path.join(dir0, "c-bin.000001.partial")),
              f"serve --upstream DEAD,C on an empty directory: {os.listdir(dir0) if os.path.isdir(dir0) else None}")

        serve = start_serve(errlog)

        step("downstream: B and D replicate from the relay; a raw client")
        for s in (b, d):
            s.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='{USER}', "
                  f"MASTER_PASSWORD='{PW}', MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                  f"MASTER_USE_GTID=slave_pos; SET GLOBAL slave_parallel_threads=4; START SLAVE;")
        rawdir = os.path.join(tmp, "raw")
        os.makedirs(rawdir)
        first = a.binlogs()[0]
        raw = subprocess.Popen([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "--stop-never",
                                "-h", "127.0.0.1", "-P", str(port), "-u", USER, "-p" + PW,
                                "--result-file=" + rawdir + "/", first],
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "raw.err"), "wb"))

        step("workload on A; its connection to the relay cut inside its last transaction; SIGKILL of A")
        # The last transaction (~1 MB of rows) holds the marker: the relay gets its first 20,000 bytes
        # after the marker, then A is gone. None of that transaction may reach D (a MariaDB GTID replica's
        # IO thread stops on an unfinished group), and it is not in B, which only has what the relay has.
        big = (f"INSERT INTO w.big (n, b) SELECT seq, CONCAT('{MARKER.decode()}', REPEAT('x', 150)) "
               f"FROM w.seq_1_to_6000;")
        work = threading.Thread(target=lambda: a.sql(statements(1000, 250, "a") + big, check_rc=False),
                                daemon=True)
        work.start()
        deadline = time.time() + 60
        while time.time() < deadline and not proxy.cut:
            time.sleep(0.05)
        check(proxy.cut, "the proxy never saw the last transaction's marker")
        a.proc.kill()
        a.proc.wait()
        work.join(30)
        step("A cut off and killed")

        step("waiting for the relay to go on with B")
        deadline = time.time() + 120
        err = ""
        while time.time() < deadline:
            err = open(errlog, "rb").read().decode(errors="replace")
            if re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID", err):
                break
            if not serve.alive():
                raise Fail(f"serve exited: {err[-1500:]}")
            time.sleep(0.2)
        m = re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID (\S+)", err)
        if not m:
            raise Fail(f"the relay did not go on with B within 120 s: {err[-2000:]}")
        step(f"relay: B goes on after GTID {m.group(1)}")
        refused = re.search(rf"server 127\.0\.0\.1:{c.port}: refused: its history differs", err)
        check(bool(refused) if "refused" not in BREAK else not refused,
              f"C was not refused for its history: {err[-2000:]}")
        check(not re.search(rf"server 127\.0\.0\.1:{c.port}: goes on", err), "the relay went on with C")
        log = open(os.path.join(result, ".binlogctl-failover")).read() if \
            os.path.exists(os.path.join(result, ".binlogctl-failover")) else ""
        check(f"127.0.0.1:{b.port} went on after GTID {m.group(1)}" in log, f".binlogctl-failover: {log!r}")

        time.sleep(1.0)  # one status period
        st = json.load(open(status_file)).get("relay", {}) if os.path.exists(status_file) else {}
        check(st.get("upstream") == f"127.0.0.1:{b.port}" and st.get("failovers") == (1 if "status" not in BREAK else 7),
              f"status: relay upstream {st.get('upstream')}, failovers {st.get('failovers')}")

        step("B promoted and written to; FLUSH BINARY LOGS on B")
        b.sql("STOP SLAVE; RESET SLAVE ALL;")
        b.sql(statements(5000, 150, "b") + " FLUSH BINARY LOGS; " + statements(9000, 20, "b2"))
        want_pos = b.query("SELECT @@gtid_binlog_pos").strip()
        want_sum = b.rows("CHECKSUM TABLE w.t")[0][1]
        step(f"B: gtid_binlog_pos {want_pos}")

        step("waiting for D and the raw client")
        deadline = time.time() + 90
        while time.time() < deadline:
            if d.query("SELECT @@gtid_slave_pos").strip() == want_pos:
                break
            time.sleep(0.5)
        finals = sorted(f for f in os.listdir(result) if re.fullmatch(r"a-bin\.\d+", f))
        while time.time() < deadline:
            if all(os.path.exists(os.path.join(rawdir, f)) and
                   os.path.getsize(os.path.join(rawdir, f)) >= os.path.getsize(os.path.join(result, f))
                   for f in finals):
                break
            time.sleep(0.5)
        time.sleep(1.0)

        pos = d.query("SELECT @@gtid_slave_pos").strip()
        got_sum = (d.rows("CHECKSUM TABLE w.t") or [[0, None]])[0][1]
        io = d.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace")
        m_io = re.search(r"Last_IO_Error: (.*)", io)
        check(m_io is not None and m_io.group(1).strip() == "", f"D's IO thread: {m_io.group(1) if m_io else io[-800:]}")
        check(d.rows("SELECT COUNT(*) FROM w.big")[0][0] == "0", "D has rows of A's unfinished transaction")
        if "replica" in BREAK:
            want_sum = "0"
        check(pos == want_pos, f"D: gtid_slave_pos {pos} != B's gtid_binlog_pos {want_pos}")
        check(got_sum == want_sum, f"D: CHECKSUM TABLE {got_sum} != B's {want_sum}")
        check(finals == ["a-bin.000001"] and os.path.exists(os.path.join(result, "a-bin.000002.partial")),
              f"the relay's own ROTATE after B's: {sorted(os.listdir(result))}")
        # From the relay's ROTATE on, its file is B's, byte for byte (B's own copy has its in-use flag).
        mine = open(os.path.join(result, "a-bin.000002.partial"), "rb").read()
        bfile = bytearray(open(os.path.join(b.data, b.binlogs()[-1]), "rb").read())
        bfile[21] &= 0xfe
        check(mine == bytes(bfile), f"a-bin.000002 ({len(mine)} bytes) is not B's {b.binlogs()[-1]} ({len(bfile)})")
        for f in finals:
            mine = open(os.path.join(result, f), "rb").read()
            got = open(os.path.join(rawdir, f), "rb").read() if os.path.exists(os.path.join(rawdir, f)) else None
            if "raw" in BREAK and f == finals[-1]:
                mine = mine[:-1]
            check(got == mine, f"raw client: {f}: {None if got is None else len(got)} bytes, not the directory's "
                               f"{len(mine)} bytes")
        v = subprocess.run([binary, "verify", *[os.path.join(result, f) for f in finals]],
                           capture_output=True, text=True)
        check((v.returncode == 0) if "verify" not in BREAK else v.returncode != 0,
              f"verify of the directory's files: exit {v.returncode}: {v.stdout[-1500:]} {v.stderr[-800:]}")

        def stop_serve(log):
            rc = serve.stop()
            check(rc == 0, f"serve after SIGTERM: exit {rc}")
            err = open(log, "rb").read().decode(errors="replace")
            check("runtime error" not in err and "AddressSanitizer" not in err, f"serve's stderr: {err[-1500:]}")
        step("D stopped; one more transaction on B, in the relay's directory")
        d.sql("STOP SLAVE")
        b.sql(statements(15000, 1, "lag"))
        lag_pos = b.query("SELECT @@gtid_binlog_pos").strip()
        bcur = os.path.join(b.data, b.binlogs()[-1])
        mine = os.path.join(result, "a-bin.000002.partial")
        deadline = time.time() + 30
        while time.time() < deadline and not (os.path.exists(mine) and
                                              os.path.getsize(mine) == os.path.getsize(bcur)):
            time.sleep(0.2)
        check(os.path.getsize(mine) == os.path.getsize(bcur),
              f"the relay's file: {os.path.getsize(mine)} bytes, B's {os.path.getsize(bcur)} after {lag_pos}")
        stop_serve(errlog)

        step("serve started again on the directory: it goes on by GTID (A gone, D behind, C refused, B taken)")
        errlog2 = os.path.join(tmp, "serve2.err")
        wait = 2 if "wait" not in BREAK else 600
        serve = start_serve(errlog2, ",".join(f"127.0.0.1:{p}" for p in (proxy.port, d.port, c.port, b.port)),
                            ("--failover-wait", str(wait)))
        deadline = time.time() + 30
        while time.time() < deadline and not re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID",
                                                       open(errlog2, "rb").read().decode(errors="replace")):
            time.sleep(0.2)
        err = open(errlog2, "rb").read().decode(errors="replace")
        refused = re.search(rf"server 127\.0\.0\.1:{d.port}: refused: it sent no copy of GTID "
                            rf"{re.escape(lag_pos)} within {wait} s", err)
        went_on = re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID {re.escape(lag_pos)}", err)
        if not (refused and went_on):
            raise Fail(f"D (behind the directory) is not refused after --failover-wait, or B does not go on: "
                       f"{err[-1500:]}")  # the phases after it need B
        checks[0] += 1
        d.sql("START SLAVE")
        b.sql(statements(20000, 30, "b3"))
        want_pos = b.query("SELECT @@gtid_binlog_pos").strip()
        want_sum = b.rows("CHECKSUM TABLE w.t")[0][1]
        deadline = time.time() + 90
        while time.time() < deadline and d.query("SELECT @@gtid_slave_pos").strip() != want_pos:
            time.sleep(0.5)
        pos = d.query("SELECT @@gtid_slave_pos").strip()
        check(pos == want_pos, f"after the restart: D's gtid_slave_pos {pos} != B's {want_pos}")
        check(d.rows("CHECKSUM TABLE w.t")[0][1] == want_sum, "after the restart: D's table is not B's")
        err = open(errlog2, "rb").read().decode(errors="replace")
        check(re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID", err) and
              not re.search(rf"server 127\.0\.0\.1:{c.port}: goes on", err),
              f"after the restart: B did not go on by GTID: {err[-1500:]}")

        step("serve stopped right after it began a file (the directory's current file holds its magic only)")
        b.sql("FLUSH BINARY LOGS")
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(os.path.join(result, "a-bin.000003.partial")):
            time.sleep(0.2)
        time.sleep(0.5)
        stop_serve(errlog2)
        os.truncate(os.path.join(result, "a-bin.000003.partial"), 4)
        errlog3 = os.path.join(tmp, "serve3.err")
        serve = start_serve(errlog3)
        b.sql(statements(30000, 30, "b4") + " FLUSH BINARY LOGS;")
        want_pos = b.query("SELECT @@gtid_binlog_pos").strip()
        want_sum = b.rows("CHECKSUM TABLE w.t")[0][1]
        deadline = time.time() + 90
        while time.time() < deadline and (d.query("SELECT @@gtid_slave_pos").strip() != want_pos or
                                          not os.path.exists(os.path.join(result, "a-bin.000004.partial"))):
            time.sleep(0.5)
        pos = d.query("SELECT @@gtid_slave_pos").strip()
        if not check(pos == want_pos, f"after the file cut back to its magic: D's gtid_slave_pos {pos} != B's {want_pos}"):
            print(d.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace"))
            print(open(errlog3, "rb").read().decode(errors="replace")[-3000:])
        check(d.rows("CHECKSUM TABLE w.t")[0][1] == want_sum, "after the file cut back to its magic: D is not B")
        finals = sorted(f for f in os.listdir(result) if re.fullmatch(r"a-bin\.\d+", f))
        v = subprocess.run([binary, "verify", *[os.path.join(result, f) for f in finals]],
                           capture_output=True, text=True)
        check(finals == ["a-bin.000001", "a-bin.000002", "a-bin.000003"] and v.returncode == 0,
              f"verify of {finals} after the file cut back to its magic: exit {v.returncode}: {v.stdout[-1500:]}")
        err = open(errlog3, "rb").read().decode(errors="replace")
        check(re.search(rf"server 127\.0\.0\.1:{b.port}: goes on after GTID \S+ \(a-bin\.000003 at 4\)", err),
              f"after the file cut back to its magic: not from a-bin.000003 at 4: {err[-1500:]}")
        dump = subprocess.run([binary, "dump", os.path.join(result, "a-bin.000003")], capture_output=True, text=True)
        heads = [ln.split("\t")[2] if "\t" in ln else ln for ln in dump.stdout.splitlines()[:4]]
        step(f"a-bin.000003 begins: {heads}")
        check("Gtid_list" in dump.stdout.split("\n", 3)[2] if dump.stdout.count("\n") > 3 else False,
              f"a-bin.000003 does not begin with a format description and a Gtid_list: {dump.stdout[:800]}")
        stop_serve(errlog3)
        serve = None
    except Fail as e:
        failures.append(str(e))
        print("FAIL:", e, flush=True)
    finally:
        if proxy is not None:
            proxy.kill()
        if raw is not None and raw.poll() is None:
            raw.kill()
            raw.wait()
        if serve is not None:
            serve.stop()
        for s in (b, d):
            try:
                s.sql("STOP SLAVE", check_rc=False)
            except Exception:
                pass
        for s in servers:
            s.stop()
    step(f"{checks[0]} checks, {len(failures)} failed")
    if failures:
        print(f"kept {tmp} for inspection")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
