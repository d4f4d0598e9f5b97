#!/usr/bin/env python3
"""binlogctl serve (issue 31), proved with real clients: a real mariadbd replica, mariadb-binlog -R,
binlogctl -R and python-mysql-replication, all against `binlogctl serve`.

usage: serve.py BINLOGCTL [--primary]

One private source server (TCP on 127.0.0.1, free port, --log-bin, server-id 1, ROW, CRC32,
binlog_row_metadata=FULL) runs a workload over several binlog files (FLUSH BINARY LOGS): DDL, a
transaction of > 1 MiB of rows, XA transactions (committed, rolled back), a MyISAM table, a table
without a primary key, many small transactions; its closed binlog files are copied to a directory
and the source is stopped (its CHECKSUM TABLEs and gtid_binlog_pos kept). `binlogctl serve --port 0`
serves the copies; one private replica server (server-id 2, slave_parallel_threads=4) is used for
every replication check, reset between them. Checks:

  gtid        the replica replicates by GTID from an empty gtid_slave_pos: CHECKSUM TABLE of every
              table equals the source's, gtid_slave_pos equals the source's gtid_binlog_pos
  filepos     the same after a reset, by file and position (MASTER_USE_GTID=no, first file, 4)
  until       START SLAVE UNTIL master_gtid_pos=X stops exactly after X (gtid_slave_pos, table rows)
  raw         mariadb-binlog -R --raw --to-last-log writes files byte-identical to the served ones
  remote      binlogctl dump -R and convert -R (JSON) of each served file equal reading it locally
  pmr         python-mysql-replication reads the rows from serve: applied in order they give the
              source's table, values compared as text
  abuse       while a replica is connected: wrong password (1045), an unknown command (an ERR, the
              connection still answers COM_PING), garbage, a packet announced larger than anything
              sent, an oversized packet (80 MiB), a client that never authenticates and one that asks
              for a dump and never reads: each gets an error or is closed within a bound; afterwards
              the replica is still connected with no error, and serve still serves
  kill9       a replica caught up to the end of the files served so far waits in its dump; serve is
              killed with SIGKILL, the remaining files are added, serve restarts on the same port: the
              replica reconnects by itself (MASTER_CONNECT_RETRY=1) and ends identical to the source;
              then again with the replica mid-transfer (through a proxy at 1 MB/s, serve killed when
              half the bytes have gone down)
  live        (before the others, the source still running) serve on the directory that
              `binlogctl fetch --stop-never` writes from the source, .partial file included: a replica
              of serve gets two rows committed on the source after it connected, across a FLUSH
  damage      one byte flipped inside a row event of a copy: the replica stops with Last_IO_Error
              naming the file and an offset at or before the flipped byte; no transaction from the
              damaged one on is applied (the marker table's rows)

With --primary the same checks run against the source mariadbd itself instead of serve (the
harness's own proof: what a real primary does); damage does not apply there, kill9 kills and
restarts the source on its port. BINLOGCTL_SERVE_BREAK=name,... makes the named checks compare against
a wrong value (each check was seen to fail that way).

Exits 77 (skip) when mariadbd is absent or the binary has no serve subcommand.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import mdb
import support

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
PMR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "clients", "python-mysql-replication"))
BREAK = set(os.environ.get("BINLOGCTL_SERVE_BREAK", "").split(","))
USER, PW = "repl", "secret"
DB = "w"


def workload_sql():
    """The statements, in order; each string is one client call. Markers: rows of w.marks whose
    GTIDs the checks need are inserted alone, with SELECT @@last_gtid."""
    s = []
    s.append("""CREATE DATABASE w;
CREATE TABLE w.t1 (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4, price DECIMAL(10,2), made DATETIME(3));
CREATE TABLE w.big (id INT PRIMARY KEY AUTO_INCREMENT, b MEDIUMBLOB, n INT) ENGINE=InnoDB;
CREATE TABLE w.marks (id INT PRIMARY KEY, tag VARCHAR(40)) ENGINE=InnoDB;
CREATE TABLE w.nopk (a INT, b VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE w.my (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;
INSERT INTO w.t1 VALUES (1, 'one', 1.50, '2024-02-29 12:34:56.789'), (2, 'caf\u00e9 \U0001F600', NULL, NULL),
  (3, 'three', -3.33, '1999-12-31 23:59:59.000'), (4, '', 0.00, '2024-01-01 00:00:00.001');
UPDATE w.t1 SET price = 2.25 WHERE id = 2;
INSERT INTO w.nopk VALUES (1, 'a'), (1, 'a'), (2, 'b');
INSERT INTO w.my VALUES (1, 10), (2, 20);
FLUSH BINARY LOGS;""")
    # > 1 MiB of rows in one transaction, then a large update (before and after images).
    s.append("""BEGIN;
INSERT INTO w.big (b, n) SELECT REPEAT(CHAR(65 + seq % 26), 1000), seq FROM w.seq_1_to_1500;
UPDATE w.t1 SET name = 'one, in the big one' WHERE id = 1;
COMMIT;
UPDATE w.big SET n = n * 2, b = CONCAT(b, 'z') WHERE id % 3 = 0;
XA START 'xa1'; INSERT INTO w.t1 VALUES (5, 'xa committed', 5.00, NOW(3)); UPDATE w.my SET v = v + 1;
XA END 'xa1'; XA PREPARE 'xa1'; XA COMMIT 'xa1';
XA START 'xa2'; INSERT INTO w.t1 VALUES (6, 'xa rolled back', 6.00, NULL); XA END 'xa2'; XA PREPARE 'xa2'; XA ROLLBACK 'xa2';
XA START 'xa3'; DELETE FROM w.nopk WHERE a = 2; XA END 'xa3'; XA COMMIT 'xa3' ONE PHASE;
FLUSH BINARY LOGS;
ALTER TABLE w.nopk ADD COLUMN c DATETIME DEFAULT '2020-01-01 00:00:00';
INSERT INTO w.nopk (a, b) VALUES (3, 'c');""")
    small = []
    for i in range(1, 121):
        small.append(f"INSERT INTO w.marks VALUES ({i}, 'm{i}');")
        if i % 10 == 0:
            small.append(f"UPDATE w.t1 SET price = price + 1 WHERE id = 3; DELETE FROM w.marks WHERE id = {i - 5};")
        if i == 60:
            small.append("FLUSH BINARY LOGS;")
    s.append("\n".join(small))
    return s


class Fail(Exception):
    pass


# ---- a minimal client of the protocol, for the abuse checks ----------------------------------------

def read_packet(sock):
    head = b""
    while len(head) < 4:
        c = sock.recv(4 - len(head))
        if not c:
            raise EOFError("closed")
        head += c
    n = int.from_bytes(head[:3], "little")
    body = b""
    while len(body) < n:
        c = sock.recv(n - len(body))
        if not c:
            raise EOFError("closed mid-packet")
        body += c
    return head[3], body


def write_packet(sock, seq, payload):
    sock.sendall(len(payload).to_bytes(3, "little") + bytes([seq & 0xff]) + payload)


def native_scramble(password, salt):
    if not password:
        return b""
    h1 = hashlib.sha1(password.encode()).digest()
    h2 = hashlib.sha1(h1).digest()
    h3 = hashlib.sha1(salt + h2).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


def connect(port, user=USER, password=PW, timeout=10):
    """A logged-in socket (after the OK), or raises Fail with the server's ERR."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    seq, g = read_packet(s)
    if g[:1] == b"\xff":
        raise Fail(f"greeting is an error: {g!r}")
    end = g.index(b"\0", 1)
    i = end + 1 + 4
    salt = g[i:i + 8]
    i += 8 + 1
    caps = struct.unpack_from("<H", g, i)[0]
    i += 2 + 1 + 2
    caps |= struct.unpack_from("<H", g, i)[0] << 16
    i += 2
    alen = g[i]
    i += 1 + 10
    salt += g[i:i + max(13, alen - 8) - 1]
    resp = native_scramble(password, salt[:20])
    client_caps = 0x200 | 0x8000 | 0x80000 | 0x1 | 0x4 | 0x2000  # PROTOCOL_41 SECURE_CONNECTION PLUGIN_AUTH ...
    pkt = struct.pack("<IIB", client_caps, 1 << 24, 33) + b"\0" * 23 + user.encode() + b"\0" + bytes([len(resp)]) + resp \
        + b"mysql_native_password\0"
    write_packet(s, seq + 1, pkt)
    seq, r = read_packet(s)
    if r[:1] == b"\xfe":  # an auth switch: answer for the plugin named (native only)
        end = r.index(b"\0", 1)
        salt2 = r[end + 1:].rstrip(b"\0")
        write_packet(s, seq + 1, native_scramble(password, salt2[:20]))
        seq, r = read_packet(s)
    if r[:1] == b"\xff":
        s.close()
        raise Fail(f"ERR {struct.unpack_from('<H', r, 1)[0]} {r[3:]!r}")
    if r[:1] != b"\x00":
        raise Fail(f"unexpected auth reply {r[:40]!r}")
    return s


def command(s, payload):
    write_packet(s, 0, payload)
    return read_packet(s)[1]


def send_and_shut(s, data):
    """Sends data and closes the write side; a server that closed first is no error here."""
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def closed_or_error_within(s, seconds):
    """True when the server sends an ERR or closes the connection within `seconds`."""
    s.settimeout(seconds)
    deadline = time.time() + seconds
    try:
        while time.time() < deadline:
            s.settimeout(max(0.05, deadline - time.time()))
            data = s.recv(65536)
            if not data or b"\xff" in data[:5]:
                return True
    except socket.timeout:
        return False
    except OSError:
        return True
    return False


class SlowProxy(support.TcpProxy):
    """A TCP proxy to 127.0.0.1:target that passes what the server sends at `rate` bytes/s (so that a
    replica is mid-transfer for seconds); counts the bytes passed down (self.down)."""

    def __init__(self, target, rate):
        super().__init__(target, backlog=8)
        self.rate, self.down = rate, 0

    def pump(self, src, dst, slow):
        try:
            while True:
                data = src.recv(16384 if slow else 65536)
                if not data:
                    break
                dst.sendall(data)
                if slow:
                    self.down += len(data)
                    time.sleep(len(data) / self.rate)
        except OSError:
            pass
        finally:
            support.shut(src, dst)


# ---- servers ---------------------------------------------------------------------------------------

class Serve(support.Serve):
    """binlogctl serve on a directory; start() with port 0 learns the port from its stderr line."""

    def __init__(self, binary, root, name, args):
        super().__init__(binary, os.path.join(root, f"serve-{name}.err"), ["--server-id", "1", *args], USER, PW)
        self.name, self.root = name, root

    def start(self, port=None):
        try:
            super().start(port)
        except support.ServeStartError as e:
            raise Fail(f"serve {self.name}: {e}")


class PrimaryAsUpstream:
    """The source mariadbd itself in serve's place (--primary)."""

    def __init__(self, srv):
        self.srv, self.port, self.name = srv, srv.port, "primary"

    def start(self, port=None):
        self.srv.start("--port=%d" % self.port, *PRIMARY_ARGS)
        self.srv.port = self.port

    def alive(self):
        return self.srv.proc is not None and self.srv.proc.poll() is None

    def kill9(self):
        self.srv.proc.send_signal(signal.SIGKILL)
        self.srv.proc.wait(30)
        self.srv.proc = None

    def stop(self):
        self.srv.stop()
        return 0

    def stderr(self):
        return ""


PRIMARY_ARGS = ("--log-bin=mariadb-bin", "--binlog-format=ROW", "--binlog-checksum=CRC32", "--binlog-row-metadata=FULL",
                "--max-binlog-size=1M")


# ---- the test --------------------------------------------------------------------------------------

def python_with_pymysql():
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import pymysql, packaging"],
                                                        capture_output=True).returncode == 0:
            return py
    return None


PMR_SCRIPT = r"""
import json, sys
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent
port, first = int(sys.argv[1]), sys.argv[2]
r = BinLogStreamReader(connection_settings=dict(host="127.0.0.1", port=port, user="repl", passwd="secret"),
                       server_id=4242, blocking=False, log_file=first, log_pos=4, resume_stream=True,
                       only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent], only_tables=["t1"])
def text(v):
    if v is None: return None
    if hasattr(v, "isoformat"): return v.isoformat(sep=" ", timespec="microseconds")
    return str(v)
for ev in r:
    for row in ev.rows:
        kind = type(ev).__name__
        vals = row.get("after_values", row.get("values"))
        print(json.dumps({"kind": kind, "schema": ev.schema, "table": ev.table,
                          "values": {k: text(v) for k, v in vals.items()},
                          "before": {k: text(v) for k, v in row.get("before_values", {}).items()}}))
r.close()
"""


def main():
    binary = sys.argv[1]
    primary_mode = "--primary" in sys.argv[2:]
    for prog in ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog"):
        if mdb.find(prog) is None:
            print(f"skip: {prog} is not installed")
            return SKIP
    if not primary_mode:
        h = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True)
        if h.returncode != 0 or "--port" not in h.stdout:
            print("skip: this binlogctl has no serve subcommand")
            return SKIP
    t0 = time.time()
    failures, passed = [], []
    checks = [0]

    def check(cond, what):
        checks[0] += 1
        if not cond:
            failures.append(what)
            print("FAIL:", what, flush=True)
        return cond

    def step(name):
        print(f"[{time.time() - t0:6.1f}s] {name}", flush=True)

    tmp = tempfile.mkdtemp(prefix="binlogctl-serve-")
    src = mdb.Server(os.path.join(tmp, "source"), ["--server-id=1"], tcp=True)
    rep = mdb.Server(os.path.join(tmp, "replica"), ["--server-id=2"])
    os.makedirs(src.dir)
    os.makedirs(rep.dir)
    serves = []
    holders = []
    try:
        # -- the source and its workload -----------------------------------------------------------
        step("source: install, start, workload")
        src.start(*PRIMARY_ARGS)
        rep_thread = threading.Thread(target=lambda: rep.start("--slave-parallel-threads=4", "--relay-log=relay-bin",
                                                               "--slave-net-timeout=10"))
        rep_thread.start()
        src.sql(f"SET sql_log_bin=0; CREATE USER {USER}@'%' IDENTIFIED BY '{PW}';"
                f"GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO {USER}@'%';")
        for stmt in workload_sql():
            src.sql(stmt)

        def marker(i, tag):
            return src.query(f"INSERT INTO w.marks VALUES ({i}, CONCAT('{tag[:4]}', '{tag[4:]}')); SELECT @@last_gtid").strip()

        until_gtid = marker(1000, "until-target")
        after_until = marker(1001, "after-until")
        src.sql("FLUSH BINARY LOGS")
        marker(1002, "before-damage")
        damage_gtid = marker(1003, "DAMAGE-HERE")
        marker(1004, "after-damage-1")
        src.sql("INSERT INTO w.t1 VALUES (7, 'after damage', 7.00, NULL); FLUSH BINARY LOGS;")
        marker(1005, "after-damage-2")
        src.sql("FLUSH BINARY LOGS")
        files = src.binlogs()
        closed = files[:-1]
        check(len(closed) >= 6, f"the workload should make several files: {files}")
        gtid_pos = src.query("SELECT @@gtid_binlog_pos").strip()
        tables = [r[0] for r in src.rows(f"SELECT table_name FROM information_schema.tables WHERE table_schema='{DB}' "
                                         "ORDER BY table_name")]
        sums = {t: src.rows(f"CHECKSUM TABLE {DB}.{t}")[0][1] for t in tables}
        t1_rows = {r[0]: r for r in src.rows("SELECT id, name, price, DATE_FORMAT(made, '%Y-%m-%d %H:%i:%s.%f') FROM w.t1")}
        marks_rows = {int(r[0]) for r in src.rows("SELECT id FROM w.marks")}
        sizes = {f: os.path.getsize(os.path.join(src.data, f)) for f in closed}
        step(f"source: {len(closed)} closed files, {sum(sizes.values()) >> 10} KiB, gtid_binlog_pos {gtid_pos}")
        served = os.path.join(tmp, "served")
        os.makedirs(served)
        for f in closed:
            shutil.copy(os.path.join(src.data, f), served)
        served_files = [os.path.join(served, f) for f in closed]
        rep_thread.join()
        if rep.proc is None or rep.proc.poll() is not None:
            raise Fail("the replica did not start")

        # -- the upstream: serve, or the source itself ---------------------------------------------
        if primary_mode:
            up = PrimaryAsUpstream(src)
            local_dir = src.data
        else:
            capability_check(binary, tmp, src, served, closed, check, step)
            live_check(binary, tmp, src, rep, serves, check, step, gtid_pos)
            src.stop()
            up = Serve(binary, tmp, "main", [served])
            serves.append(up)
            up.start(0)
            local_dir = served
        step(f"upstream {up.name} on port {up.port}")

        def status():
            out = rep.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace")
            return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines()) if _}

        def reset_replica():
            rep.sql("STOP SLAVE", check_rc=False)
            for r in rep.rows("XA RECOVER"):
                rep.sql(f"XA ROLLBACK '{r[3]}'", check_rc=False)
            rep.sql(f"RESET SLAVE ALL; DROP DATABASE IF EXISTS {DB}; DROP DATABASE IF EXISTS live; SET GLOBAL gtid_slave_pos='';")

        def change_master(port, extra):
            rep.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='{USER}', "
                    f"MASTER_PASSWORD='{PW}', MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, {extra}")

        def wait_caught_up(target, what, timeout=90):
            deadline = time.time() + timeout
            st = {}
            while time.time() < deadline:
                pos = rep.query("SELECT @@gtid_slave_pos").strip()
                if pos == target:
                    return True
                st = status()
                if st.get("Last_SQL_Errno", "0") != "0" or st.get("Slave_SQL_Running") == "No":
                    break
                time.sleep(0.2)
            check(False, f"{what}: the replica did not reach {target}: gtid_slave_pos "
                         f"{rep.query('SELECT @@gtid_slave_pos').strip()}, IO {st.get('Slave_IO_Running')} "
                         f"{st.get('Last_IO_Error')!r}, SQL {st.get('Slave_SQL_Running')} {st.get('Last_SQL_Error')!r}")
            return False

        def same_as_source(what):
            want = dict(sums)
            if what in BREAK:
                want[tables[0]] = "0"
            got = {t: (rep.rows(f"CHECKSUM TABLE {DB}.{t}") or [[0, None]])[0][1] for t in tables}
            check(got == want, f"{what}: CHECKSUM TABLE differs from the source's: {got} != {want}")
            pos = rep.query("SELECT @@gtid_slave_pos").strip()
            check(pos == (gtid_pos if what not in BREAK else "0-1-1"),
                  f"{what}: gtid_slave_pos {pos} != the source's gtid_binlog_pos {gtid_pos}")

        # -- gtid ------------------------------------------------------------------------------------
        step("gtid: a replica by GTID from empty")
        reset_replica()
        change_master(up.port, "MASTER_USE_GTID=slave_pos")
        rep.sql("START SLAVE")
        if wait_caught_up(gtid_pos, "gtid"):
            same_as_source("gtid")

        # -- abuse, while that replica is connected ----------------------------------------------------
        step("abuse: bad clients while the replica is connected")
        never_auth = socket.create_connection(("127.0.0.1", up.port), timeout=10)
        never_auth_t = time.time()
        holders.append(never_auth)
        try:
            connect(up.port, password="wrong")
            check(False, "a wrong password was accepted")
        except Fail as e:
            check("ERR 1045" in str(e), f"wrong password: {e}")
        s = connect(up.port)
        r = command(s, b"\x7f")
        check(r[:1] == b"\xff", f"an unknown command 0x7f: {r[:60]!r}")
        r = command(s, b"\x0e")  # COM_PING: the connection still answers
        check(r[:1] == b"\x00" if "abuse" not in BREAK else r[:1] == b"\xff", f"COM_PING after the unknown command: {r[:60]!r}")
        r = command(s, b"\x03SELECT no_such_function_here(1) FROM nowhere")
        check(r[:1] == b"\xff", f"an unknown query: {r[:60]!r}")
        s.close()
        # garbage instead of a handshake response, then the client's write side closed
        g = socket.create_connection(("127.0.0.1", up.port), timeout=10)
        read_packet(g)
        send_and_shut(g, bytes((i * 37 + 11) & 0xff for i in range(300)))
        check(closed_or_error_within(g, 15), "garbage after the greeting: neither an error nor a close within 15 s")
        g.close()
        # garbage after login
        g = connect(up.port)
        send_and_shut(g, b"\x05\x00\x00\x00\x99garbage-after-login" + os.urandom(64))
        check(closed_or_error_within(g, 15), "garbage after login: neither an error nor a close within 15 s")
        g.close()
        # a handshake response announced at 16 MiB - 1 of which 10 bytes come: a bounded wait (checked
        # at the end). (After login, a real mariadbd waits wait_timeout, 8 hours, for the rest of a
        # command: not asked of serve either.)
        partial = socket.create_connection(("127.0.0.1", up.port), timeout=10)
        read_packet(partial)
        try:
            partial.sendall(b"\xff\xff\xff\x01\x05\xa2\x00\x00\x00\x00\x00\x01\x21\x00")  # kept open
        except OSError:
            pass
        partial_t = time.time()
        holders.append(partial)
        # an oversized query: 80 MiB in 16 MiB - 1 pieces; an ERR or a close before or after it is all sent
        big = connect(up.port)
        big.settimeout(30)
        sent, ok = 0, True
        piece = b"\x03" + b"S" * (0xffffff - 1)
        try:
            for k in range(5):
                big.sendall(b"\xff\xff\xff" + bytes([k]) + (piece if k == 0 else piece[:0xffffff]))
                sent += 0xffffff
            big.sendall(b"\x00\x00\x00\x05")
        except OSError:
            ok = False  # the server closed while we sent: that is an answer
        check(not ok or closed_or_error_within(big, 30), f"an 80 MiB packet: neither an error nor a close ({sent} bytes sent)")
        big.close()
        # a dump that is never read
        stuck = connect(up.port)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        command(stuck, b"\x03SET @master_binlog_checksum='CRC32'")
        write_packet(stuck, 0, b"\x12" + struct.pack("<IHI", 4, 0, 777) + closed[0].encode())
        holders.append(stuck)
        st = status()
        check(st.get("Slave_IO_Running") == "Yes" and st.get("Last_IO_Errno") == "0" and st.get("Last_SQL_Errno") == "0",
              f"abuse: the connected replica was affected: IO {st.get('Slave_IO_Running')} {st.get('Last_IO_Error')!r}")
        check(up.alive(), f"abuse: {up.name} died: {up.stderr()[-500:]}")

        # -- filepos, while the stuck dump holds its connection ----------------------------------------
        step("filepos: a replica by file and position")
        reset_replica()
        change_master(up.port, f"MASTER_USE_GTID=no, MASTER_LOG_FILE='{closed[0]}', MASTER_LOG_POS=4")
        rep.sql("START SLAVE")
        if wait_caught_up(gtid_pos, "filepos"):
            same_as_source("filepos")

        # -- until --------------------------------------------------------------------------------------
        step(f"until: START SLAVE UNTIL master_gtid_pos='{until_gtid}'")
        reset_replica()
        change_master(up.port, "MASTER_USE_GTID=slave_pos")
        rep.sql(f"START SLAVE UNTIL master_gtid_pos='{until_gtid if 'until' not in BREAK else after_until}'")
        deadline = time.time() + 60
        while time.time() < deadline and status().get("Slave_SQL_Running") != "No":
            time.sleep(0.2)
        pos = rep.query("SELECT @@gtid_slave_pos").strip()
        ids = {int(r[0]) for r in rep.rows("SELECT id FROM w.marks WHERE id >= 1000")}
        check(pos == until_gtid and ids == {1000}, f"until {until_gtid}: stopped at {pos}, marker rows {sorted(ids)}")
        st = status()
        check(st.get("Last_SQL_Errno") == "0", f"until: SQL error {st.get('Last_SQL_Error')!r}")

        # -- raw ----------------------------------------------------------------------------------------
        step("raw: mariadb-binlog -R --raw")
        rawdir = os.path.join(tmp, "raw")
        os.makedirs(rawdir)
        r = subprocess.run([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "-h", "127.0.0.1", "-P",
                            str(up.port), "-u", USER, "-p" + PW, "--to-last-log", "--result-file=" + rawdir + "/",
                            closed[0]], capture_output=True, timeout=120)
        check(r.returncode == 0, f"mariadb-binlog -R --raw: exit {r.returncode} {r.stderr[-400:]!r}")
        for f in closed:
            p = os.path.join(rawdir, f)
            a = open(p, "rb").read() if os.path.exists(p) else None
            b = open(os.path.join(local_dir, f), "rb").read()
            if "raw" in BREAK and f == closed[1]:
                b = b[:-1] + bytes([b[-1] ^ 1])
            check(a == b, f"raw: {f}: {None if a is None else len(a)} bytes, not the served file's {len(b)}")

        # -- remote: binlogctl dump -R / convert -R -----------------------------------------------------------
        step("remote: binlogctl dump/convert -R")
        tcp = ["-R", "--host", "127.0.0.1", "--port", str(up.port), "--user", USER, "--password=" + PW]
        for f in closed:
            for cmd in (["dump", "--format", "json"], ["convert", "--format", "json"]):
                ref = subprocess.run([binary, *cmd, os.path.join(local_dir, f)], capture_output=True, timeout=120)
                got = subprocess.run([binary, *cmd, *tcp, f], capture_output=True, timeout=120)
                want = ref.stdout if "remote" not in BREAK else ref.stdout + b"x"
                check(got.returncode == ref.returncode == 0 and got.stdout == want and len(want) > 0,
                      f"remote: {' '.join(cmd)} -R {f}: exit {got.returncode} (locally {ref.returncode}), "
                      f"same stdout {got.stdout == want}: {got.stderr[-300:]!r}")

        # -- pmr ----------------------------------------------------------------------------------------
        step("pmr: python-mysql-replication")
        py = python_with_pymysql()
        if py is None or not os.path.isdir(PMR):
            print("note: pmr not run (no python with pymysql and packaging, or no ../shared/clients)")
        else:
            r = subprocess.run([py, "-c", PMR_SCRIPT, str(up.port), closed[0]], capture_output=True, timeout=120,
                               env=dict(os.environ, PYTHONPATH=PMR))
            table = {}
            n = 0
            for line in r.stdout.decode().split("\n"):
                if not line:
                    continue
                ev = json.loads(line)
                if (ev["schema"], ev["table"]) != (DB, "t1"):
                    continue
                n += 1
                v = ev["values"]
                if "id" not in v:  # no column names: pmr did not learn the table's columns
                    check(False, f"pmr: a row without column names: {line[:300]}")
                    break
                key = v["id"] if ev["kind"] != "UpdateRowsEvent" else ev["before"]["id"]
                if ev["kind"] == "DeleteRowsEvent":
                    table.pop(key, None)
                else:
                    table.pop(key, None)
                    table[v["id"]] = [v["id"], v["name"], v["price"], v["made"]]
            want = {k: [None if x == "NULL" else x for x in row] for k, row in t1_rows.items()}
            # The XA transaction rolled back: its row is in the binlog (written at XA PREPARE), and
            # pmr, which does not follow XA ROLLBACK, reports it as any insert.
            want["6"] = ["6", "xa rolled back", "6.00", None]
            if "pmr" in BREAK:
                want["1"] = ["1", "one", "1.50", None]
            got = {k: [None if x is None else (x.replace("\\", "\\\\") if i == 1 else x) for i, x in enumerate(row)]
                   for k, row in table.items()}
            check(r.returncode == 0 and n >= 8 and got == want,
                  f"pmr: exit {r.returncode}, {n} row events of w.t1; table from pmr {got} != source {want}: "
                  f"{r.stderr.decode(errors='replace')[-600:]}")

        # -- the bad clients held open: each closed within a bound ---------------------------------------
        step("abuse: the held connections")
        for name, sock, t_open in (("a client that never authenticates", never_auth, never_auth_t),
                                   ("a handshake response announced larger than what came", partial, partial_t)):
            left = max(1.0, 45 - (time.time() - t_open))
            check(closed_or_error_within(sock, left), f"{name}: still open after 45 s")
        check(up.alive(), f"{up.name} died during the checks: {up.stderr()[-500:]}")
        stuck.close()

        # -- kill9 ----------------------------------------------------------------------------------------
        step("kill9: serve killed mid-stream, restarted on the same port")
        reset_replica()
        if primary_mode:
            up2 = up
            first_part_gtid = None
        else:
            part = os.path.join(tmp, "part")
            os.makedirs(part)
            half = len(closed) // 2
            for f in closed[:half]:
                shutil.copy(os.path.join(served, f), part)
            first_part_gtid = src_gtid_at_end_of(closed[half - 1], served, binary)
            up2 = Serve(binary, tmp, "kill9", [part])
            serves.append(up2)
            up2.start(0)
        change_master(up2.port, "MASTER_USE_GTID=slave_pos")
        rep.sql("START SLAVE")
        if first_part_gtid:
            wait_caught_up(first_part_gtid, "kill9 (first part)")
        time.sleep(0.5)
        connected = status().get("Slave_IO_Running")
        up2.kill9()
        if not primary_mode:
            for f in closed[half:]:
                shutil.copy(os.path.join(served, f), part)
        time.sleep(1.5)  # the replica notices and starts retrying
        up2.start(up2.port)
        if "kill9" in BREAK:
            rep.sql("STOP SLAVE IO_THREAD")
        if wait_caught_up(gtid_pos, "kill9"):
            same_as_source("kill9")
        st = status()
        check(connected == "Yes" and st.get("Slave_IO_Running") == "Yes",
              f"kill9: IO thread before {connected}, after {st.get('Slave_IO_Running')} {st.get('Last_IO_Error')!r}")
        if not primary_mode:
            up2.stop()

        # -- kill9 in the middle of a transfer: through a proxy at 1 MB/s, serve killed when half the
        # files have gone down (inside the large transaction or near it), restarted on its port.
        step("kill9: serve killed mid-transfer, restarted on the same port")
        reset_replica()
        total = sum(sizes.values())
        slow = SlowProxy(up.port, 1_000_000)
        slow.start()
        holders.append(slow.lsn)
        change_master(slow.port, "MASTER_USE_GTID=slave_pos")
        rep.sql("START SLAVE")
        deadline = time.time() + 60
        while time.time() < deadline and slow.down < total // 2:
            time.sleep(0.02)
        mid = rep.query("SELECT @@gtid_slave_pos").strip()
        down = slow.down
        up.kill9()
        time.sleep(1.5)
        up.start(up.port)
        if "kill9" in BREAK:
            rep.sql("STOP SLAVE IO_THREAD")
        check(down >= total // 2 and down < total and mid != gtid_pos,
              f"kill9 mid-transfer: killed after {down} of {total} bytes, the replica at {mid}")
        if wait_caught_up(gtid_pos, "kill9 mid-transfer"):
            same_as_source("kill9 mid-transfer")
        rep.sql("STOP SLAVE")
        slow.close()

        # -- damage ----------------------------------------------------------------------------------------
        if primary_mode:
            print("note: damage is not run against the primary (it serves its own files)")
        else:
            step("damage: one byte flipped in a served copy")
            bad = os.path.join(tmp, "damaged")
            os.makedirs(bad)
            for f in closed:
                shutil.copy(os.path.join(served, f), bad)
            hit = None
            for f in closed:
                data = bytearray(open(os.path.join(bad, f), "rb").read())
                i = data.find(b"DAMAGE-HERE")
                if i >= 0:
                    data[i + 3] ^= 0x20
                    open(os.path.join(bad, f), "wb").write(data)
                    hit = (f, i + 3)
                    break
            check(hit is not None, "damage: the marker is in none of the files")
            ev_start = event_start(os.path.join(served, hit[0]), hit[1])
            up3 = Serve(binary, tmp, "damaged", [bad])
            serves.append(up3)
            up3.start(0)
            reset_replica()
            change_master(up3.port, "MASTER_USE_GTID=slave_pos")
            rep.sql("START SLAVE")
            deadline = time.time() + 60
            st = status()
            while time.time() < deadline and not st.get("Last_IO_Error"):
                time.sleep(0.2)
                st = status()
            time.sleep(1)
            st = status()
            err = st.get("Last_IO_Error", "")
            nums = [int(x) for x in re.findall(r"\d+", err.replace(hit[0], ""))]
            expect_file = hit[0] if "damage" not in BREAK else "no-such-file"
            check(expect_file in err and any(ev_start <= x <= hit[1] for x in nums) and st.get("Slave_IO_Running") == "No",
                  f"damage at {hit[0]}:{hit[1]} (event at {ev_start}): IO {st.get('Slave_IO_Running')}, "
                  f"Last_IO_Error {err!r}")
            time.sleep(0.5)
            ids = {int(r[0]) for r in rep.rows("SELECT id FROM w.marks WHERE id >= 1000")}
            pos = rep.query("SELECT @@gtid_slave_pos").strip()
            d_seq = int(damage_gtid.split("-")[2])
            p_seq = int(pos.split("-")[2]) if pos.count("-") == 2 else -1
            check(ids == {1000, 1001, 1002} and p_seq == d_seq - 1 and not rep.rows("SELECT id FROM w.t1 WHERE id = 7"),
                  f"damage: applied marker rows {sorted(ids)} (want 1000-1002), gtid_slave_pos {pos} "
                  f"(the damaged transaction is {damage_gtid})")
            rep.sql("STOP SLAVE")
            up3.stop()

        # -- serve stops on SIGTERM with 0 ---------------------------------------------------------------
        if not primary_mode:
            rc = up.stop()
            check(rc == 0, f"serve: SIGTERM gave exit {rc}")
            for sv in serves:
                text = sv.stderr()
                for line in text.splitlines():
                    check(PW not in line, f"serve {sv.name} logged the password: {line!r}")
                check(not re.search(r"runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer", text),
                      f"serve {sv.name}: a sanitizer report: {text[-1500:]}")
    except (Fail, RuntimeError, OSError, subprocess.SubprocessError, ValueError) as e:
        failures.append(f"{type(e).__name__}: {e}")
        print("FAIL:", type(e).__name__, e)
    finally:
        for h in holders:
            try:
                h.close()
            except OSError:
                pass
        try:
            rep.sql("STOP SLAVE", check_rc=False)
        except Exception:
            pass
        for sv in serves:
            sv.stop()
        rep.stop()
        src.stop()
        if failures:
            for sv in serves:
                print(f"--- serve {sv.name} stderr (tail):\n{sv.stderr()[-2000:]}")
            print(f"--- replica error log (tail):\n{open(os.path.join(rep.dir, 'error.log'), errors='replace').read()[-2500:]}"
                  if os.path.exists(os.path.join(rep.dir, "error.log")) else "")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"serve: {checks[0] - len(failures)}/{checks[0]} checks passed in {time.time() - t0:.1f} s"
          + (" (against the real primary)" if primary_mode else ""))
    return 1 if failures else 0


def replica_helpers(rep):
    def status():
        out = rep.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace")
        return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines()) if _}
    return status


def live_check(binary, tmp, src, rep, serves, check, step, gtid_pos):
    """serve follows the directory that fetch --stop-never writes (its .partial file included): a
    replica of serve gets what the source commits after it connected, across a rotation."""
    step("live: serve on the directory fetch --stop-never is writing")
    status = replica_helpers(rep)
    livedir = os.path.join(tmp, "live")
    errf = open(os.path.join(tmp, "fetch-live.err"), "wb")
    fetch = subprocess.Popen([binary, "fetch", "--stop-never", "--result-dir", livedir, "--host", "127.0.0.1",
                              "--port", str(src.port), "--user", USER, "--password=" + PW],
                             stdout=subprocess.DEVNULL, stderr=errf)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not (os.path.isdir(livedir) and any(n.endswith(".partial") for n in os.listdir(livedir))):
            time.sleep(0.1)
        upl = Serve(binary, tmp, "live", [livedir])
        serves.append(upl)
        upl.start(0)
        rep.sql("STOP SLAVE; RESET SLAVE ALL; SET GLOBAL gtid_slave_pos='';"
                f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={upl.port}, MASTER_USER='{USER}', "
                f"MASTER_PASSWORD='{PW}', MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, MASTER_USE_GTID=slave_pos;"
                "START SLAVE")
        src.sql("CREATE DATABASE live; CREATE TABLE live.t (id INT PRIMARY KEY, v VARCHAR(20));"
                "INSERT INTO live.t VALUES (1, 'before the flush'); FLUSH BINARY LOGS;"
                "INSERT INTO live.t VALUES (2, 'after the flush');")
        target = src.query("SELECT @@gtid_binlog_pos").strip()
        deadline = time.time() + 60
        while time.time() < deadline and rep.query("SELECT @@gtid_slave_pos").strip() != target:
            st = status()
            if st.get("Slave_SQL_Running") == "No" or st.get("Slave_IO_Running") == "No":
                break
            time.sleep(0.2)
        st = status()
        got = rep.rows("SELECT id, v FROM live.t ORDER BY id") if rep.query(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='live'").strip() != "0" else []
        want = [["1", "before the flush"], ["2", "after the flush"]]
        if "live" in BREAK:
            want = want[:1]
        check(got == want and rep.query("SELECT @@gtid_slave_pos").strip() == target,
              f"live: the replica of serve on fetch's directory has {got} at "
              f"{rep.query('SELECT @@gtid_slave_pos').strip()} (the source is at {target}); IO "
              f"{st.get('Slave_IO_Running')} {st.get('Last_IO_Error')!r}, SQL {st.get('Last_SQL_Error')!r}; "
              f"files {sorted(os.listdir(livedir)) if os.path.isdir(livedir) else None}")
        rep.sql("STOP SLAVE")
        upl.stop()
    finally:
        fetch.send_signal(signal.SIGTERM)
        try:
            fetch.wait(30)
        except subprocess.TimeoutExpired:
            fetch.kill()
            fetch.wait()
    rep.sql("RESET SLAVE ALL; DROP DATABASE IF EXISTS live; DROP DATABASE IF EXISTS w; SET GLOBAL gtid_slave_pos='';")


def dump_events(port, first_file, last_file, capability, flags=0):
    """The event packets (bytes, without the 0x00 OK byte) of a COM_BINLOG_DUMP from first_file:4 with
    @mariadb_slave_capability=capability, up to and including the real ROTATE that ends last_file, or
    up to an error packet (its bytes, last in the list)."""
    s = connect(port, timeout=30)
    try:
        command(s, b"\x03SET @master_binlog_checksum=@@global.binlog_checksum")
        command(s, b"\x03SET @mariadb_slave_capability=%d" % capability)
        write_packet(s, 0, b"\x12" + struct.pack("<IHI", 4, flags, 0x7700 + capability) + first_file.encode())
        events, name = [], first_file
        while True:
            _, body = read_packet(s)
            if body[:1] == b"\xff":
                return events + [body]
            if body[:1] != b"\x00":
                raise Fail(f"capability {capability}: the dump ended with {body[:80]!r} after {len(events)} events")
            ev = body[1:]
            events.append(ev)
            if len(ev) >= 19 and ev[4] == 4:  # ROTATE
                log_pos = struct.unpack_from("<I", ev, 13)[0]
                if log_pos != 0 and name == last_file:
                    return events
                name = ev[19 + 8:len(ev) - 4].decode(errors="replace") if len(ev) > 19 + 8 + 4 else name
    finally:
        s.close()


def capability_check(binary, tmp, src, served, closed, check, step):
    """An old replica (@mariadb_slave_capability below 4: MySQL replicas and MariaDB before 10.0) gets
    what a real primary sends it: GTID events as BEGIN or dummy events, Gtid_list, checkpoint and
    Annotate_rows events replaced or left out, byte for byte as the source mariadbd serves the same files."""
    step("capability: old replicas (capability 0-3) get the primary's bytes")
    sv = Serve(binary, tmp, "capability", [served])
    sv.start(0)
    try:
        for cap in (0, 1, 2, 3):
            want = dump_events(src.port, closed[0], closed[-1], cap)
            got = dump_events(sv.port, closed[0], closed[-1], cap)
            if "capability" in BREAK:
                want = want[:-1]
            if got == want:
                check(True, "")
                continue
            i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))

            def shown(v):
                return None if i >= len(v) else v[i] if v[i][:1] == b"\xff" else v[i][:64]
            check(False, f"capability {cap}: serve sent {len(got)} packets, the primary {len(want)}; first difference "
                         f"at packet {i}: serve {shown(got)} primary {shown(want)}")
    finally:
        sv.stop()


def event_start(path, offset):
    """The position of the event that holds byte `offset` (walks the headers from 4)."""
    data = open(path, "rb").read()
    pos = 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        if pos <= offset < pos + size:
            return pos
        pos += size
    raise Fail(f"no event holds {path}:{offset}")


def src_gtid_at_end_of(name, directory, binary):
    """The last GTID in file `name` (of domain 0, server 1): from binlogctl dump of the file."""
    out = subprocess.run([binary, "dump", "--format", "json", os.path.join(directory, name)], capture_output=True).stdout
    last = None
    for line in out.split(b"\n"):
        if line:
            m = re.search(r"GTID (\d+-\d+-\d+)", json.loads(line).get("info", ""))
            if m:
                last = m.group(1)
    if last is None:
        raise Fail(f"no GTID in {name}")
    return last


if __name__ == "__main__":
    sys.exit(main())
