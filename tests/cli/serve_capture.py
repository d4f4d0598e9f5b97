#!/usr/bin/env python3
"""Captures what real replication clients send to a real MariaDB primary and what it answers, as
readable packet logs (serve_wire.LogProxy), for `binlogctl serve` (issue 31). Not a test: run it by
hand to redo testdata/serve/.

usage: serve_capture.py OUTDIR [BINLOGCTL]

Starts a private primary (mdb.Server, tcp=True, --log-bin, server-id 1, ROW, CRC32,
binlog_row_metadata=FULL) and a private replica (server-id 2), runs a small workload over three
binlog files (DDL, inserts, an XA transaction), and puts a logging proxy between the primary and:

  replica-gtid.log        CHANGE MASTER ... MASTER_USE_GTID=slave_pos (empty gtid_slave_pos),
                          MASTER_HEARTBEAT_PERIOD=1, START SLAVE, caught up, 2.5 s idle, STOP SLAVE
  replica-filepos.log     the same after RESET SLAVE ALL and dropping the data, MASTER_USE_GTID=no,
                          MASTER_LOG_FILE=first, MASTER_LOG_POS=4
  replica-until.log       MASTER_USE_GTID=slave_pos, START SLAVE UNTIL master_gtid_pos='0-1-K'
  replica-reconnect.log   a GTID replica caught up, then the proxy cuts the connection: what it
                          sends when it reconnects (MASTER_CONNECT_RETRY=1)
  mariadb-binlog-raw.log  mariadb-binlog -R --raw --to-last-log FIRST
  mariadb-binlog-stop-never.log  mariadb-binlog -R --stop-never FIRST (stopped after 2.5 s)
  pmr-filepos.log         python-mysql-replication BinLogStreamReader from FIRST:4, non-blocking
  pmr-gtid.log            the same with is_mariadb=True, auto_position='0-1-2'
  mariadb-client-errors.log  wrong password, an unknown command byte, a query a server refuses
  binlogctl-dump-R.log    (with BINLOGCTL) binlogctl dump -R FIRST, and with no file name
  binlogctl-fetch.log     (with BINLOGCTL) binlogctl fetch --result-dir DIR
and writes workload.sql, SHOW BINLOG EVENTS of each file (show-binlog-events-FILE.tsv) and the
GTID state beside them.
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import mdb
import serve_wire

HERE = os.path.dirname(os.path.abspath(__file__))
PMR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "clients", "python-mysql-replication"))

WORKLOAD = """
CREATE DATABASE cap;
CREATE TABLE cap.t (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), made DATETIME(3));
INSERT INTO cap.t VALUES (1, 'one', 1.50, '2024-02-29 12:34:56.789'), (2, 'caf\u00e9', NULL, NULL);
UPDATE cap.t SET price = 3.00 WHERE id = 2;
FLUSH BINARY LOGS;
CREATE TABLE cap.u (id INT PRIMARY KEY AUTO_INCREMENT, b BLOB) ENGINE=InnoDB;
BEGIN; INSERT INTO cap.u (b) VALUES (REPEAT('x', 300)); INSERT INTO cap.t VALUES (3, 'three', 3.33, NOW(3)); COMMIT;
XA START 'xa1'; INSERT INTO cap.t VALUES (4, 'xa', 4.00, NULL); XA END 'xa1'; XA PREPARE 'xa1'; XA COMMIT 'xa1';
DELETE FROM cap.t WHERE id = 1;
FLUSH BINARY LOGS;
INSERT INTO cap.t VALUES (5, 'last', 5.55, NULL);
"""

PMR_SCRIPT = r"""
import json, sys
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent
port, mode, first = int(sys.argv[1]), sys.argv[2], sys.argv[3]
kw = dict(log_file=first, log_pos=4, resume_stream=True) if mode == "filepos" else dict(is_mariadb=True, auto_position=sys.argv[4])
r = BinLogStreamReader(connection_settings=dict(host="127.0.0.1", port=port, user="repl", passwd="secret"),
                       server_id=4242, blocking=False, only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent], **kw)
for ev in r:
    for row in ev.rows:
        print(type(ev).__name__, ev.schema, ev.table, json.dumps(row, default=str, sort_keys=True))
r.close()
"""


def python_with_pymysql():
    for py in (sys.executable, "/usr/bin/python3"):
        if py and subprocess.run([py, "-c", "import pymysql"], capture_output=True).returncode == 0:
            return py
    return None


def wait(cond, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    sys.exit(f"timed out: {what}")


def main():
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    mdb.require_or_skip()
    tmp = tempfile.mkdtemp(prefix="binlogctl-serve-capture-")
    prim = mdb.Server(os.path.join(tmp, "primary"), ["--server-id=1"], tcp=True)
    repl = mdb.Server(os.path.join(tmp, "replica"), ["--server-id=2"])
    os.makedirs(prim.dir)
    os.makedirs(repl.dir)
    proxies = []
    try:
        prim.start("--log-bin=mariadb-bin", "--binlog-format=ROW", "--binlog-checksum=CRC32",
                   "--binlog-row-metadata=FULL", "--gtid-strict-mode=ON")
        repl.start("--slave-parallel-threads=4", "--relay-log=relay-bin")
        prim.sql("SET sql_log_bin=0; CREATE USER repl@'%' IDENTIFIED BY 'secret';"
                 "GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO repl@'%';")
        prim.sql(WORKLOAD)
        with open(os.path.join(out, "workload.sql"), "w") as fh:
            fh.write(WORKLOAD.lstrip())
        files = prim.binlogs()
        first = files[0]
        state = prim.query("SELECT @@gtid_binlog_pos").strip()
        with open(os.path.join(out, "gtid-state.txt"), "w") as fh:
            fh.write(f"primary gtid_binlog_pos: {state}\nbinlog files: {' '.join(files)}\n"
                     f"SHOW MASTER STATUS: {prim.rows('SHOW MASTER STATUS')}\n")
        for f in files:
            with open(os.path.join(out, f"show-binlog-events-{f}.tsv"), "w") as fh:
                fh.write("\n".join("\t".join(r) for r in prim.rows(f"SHOW BINLOG EVENTS IN '{f}'")) + "\n")

        def proxy(label):
            p = serve_wire.LogProxy(prim.port, label)
            p.start()
            proxies.append(p)
            return p

        def save(p, name, head):
            time.sleep(0.3)
            with open(os.path.join(out, name), "w") as fh:
                fh.write(f"# {head}\n# client -> proxy 127.0.0.1:{p.port} -> MariaDB {prim.query('SELECT VERSION()').strip()}"
                         f" primary (server_id 1). Times in seconds from the proxy's start.\n\n" + p.text())
            p.close()

        def replica_status():
            r = repl.sql("SHOW SLAVE STATUS\\G").stdout.decode()
            return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in r.splitlines()) if v}

        def reset_replica():
            repl.sql("STOP SLAVE; RESET SLAVE ALL; DROP DATABASE IF EXISTS cap; SET GLOBAL gtid_slave_pos='';")

        # (a1) GTID
        p = proxy("replica-gtid")
        repl.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={p.port}, MASTER_USER='repl', "
                 "MASTER_PASSWORD='secret', MASTER_USE_GTID=slave_pos, MASTER_HEARTBEAT_PERIOD=1, "
                 "MASTER_CONNECT_RETRY=1; START SLAVE;")
        wait(lambda: repl.query("SELECT @@gtid_slave_pos").strip() == state, "replica-gtid catching up")
        time.sleep(2.5)
        repl.sql("STOP SLAVE")
        save(p, "replica-gtid.log", "mariadbd 10.11 replica: CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos, "
             "MASTER_HEARTBEAT_PERIOD=1 from an empty gtid_slave_pos; START SLAVE; caught up; 2.5 s idle; STOP SLAVE")

        # (a2) file and position
        reset_replica()
        p = proxy("replica-filepos")
        repl.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={p.port}, MASTER_USER='repl', "
                 f"MASTER_PASSWORD='secret', MASTER_USE_GTID=no, MASTER_LOG_FILE='{first}', MASTER_LOG_POS=4, "
                 "MASTER_HEARTBEAT_PERIOD=1; START SLAVE;")
        wait(lambda: repl.query("SELECT @@gtid_slave_pos").strip() == state, "replica-filepos catching up")
        time.sleep(1.5)
        repl.sql("STOP SLAVE")
        save(p, "replica-filepos.log", f"mariadbd 10.11 replica: CHANGE MASTER TO ... MASTER_USE_GTID=no, "
             f"MASTER_LOG_FILE='{first}', MASTER_LOG_POS=4; START SLAVE; caught up; STOP SLAVE")

        # (a3) UNTIL
        reset_replica()
        until = "0-1-5"
        p = proxy("replica-until")
        repl.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={p.port}, MASTER_USER='repl', "
                 f"MASTER_PASSWORD='secret', MASTER_USE_GTID=slave_pos; START SLAVE UNTIL master_gtid_pos='{until}';")
        wait(lambda: replica_status().get("Slave_SQL_Running") == "No", "replica-until stopping")
        got = repl.query("SELECT @@gtid_slave_pos").strip()
        repl.sql("STOP SLAVE")
        save(p, "replica-until.log", f"mariadbd 10.11 replica: MASTER_USE_GTID=slave_pos from empty; "
             f"START SLAVE UNTIL master_gtid_pos='{until}' (it stopped at gtid_slave_pos {got})")

        # (a4) reconnect after a dropped connection
        reset_replica()
        p = proxy("replica-reconnect")
        repl.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={p.port}, MASTER_USER='repl', "
                 "MASTER_PASSWORD='secret', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE;")
        wait(lambda: repl.query("SELECT @@gtid_slave_pos").strip() == state, "replica-reconnect catching up")
        for x in p.socks:
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        p.log(f"{p.stamp()} ---- the proxy cut the connection here ----")
        wait(lambda: p.nconn >= 2 and "COM_BINLOG_DUMP" in p.text().split("cut the connection")[1], "the replica reconnecting", 20)
        time.sleep(1)
        repl.sql("STOP SLAVE")
        save(p, "replica-reconnect.log", "mariadbd 10.11 replica (GTID, MASTER_CONNECT_RETRY=1) caught up; the proxy "
             "cuts the connection; the replica reconnects by itself")
        reset_replica()

        # (b) mariadb-binlog
        binlog = mdb.find("mariadb-binlog")
        rawdir = os.path.join(tmp, "raw")
        os.makedirs(rawdir)
        p = proxy("mariadb-binlog-raw")
        cmd = [binlog, "--no-defaults", "-R", "--raw", "-h", "127.0.0.1", "-P", str(p.port), "-u", "repl",
               "-psecret", "--to-last-log", "--result-file=" + rawdir + "/", first]
        r = subprocess.run(cmd, capture_output=True, timeout=60)
        same = all(open(os.path.join(rawdir, f), "rb").read() == open(os.path.join(prim.data, f), "rb").read()
                   for f in files[:-1])
        save(p, "mariadb-binlog-raw.log", f"mariadb-binlog --no-defaults -R --raw -h 127.0.0.1 -P PORT -u repl -p... "
             f"--to-last-log --result-file=DIR/ {first} (exit {r.returncode}; closed files byte-identical: {same})")
        p = proxy("mariadb-binlog-stop-never")
        proc = subprocess.Popen([binlog, "--no-defaults", "-R", "--stop-never", "-h", "127.0.0.1", "-P", str(p.port),
                                 "-u", "repl", "-psecret", first], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(2.5)
        proc.terminate()
        proc.wait(10)
        save(p, "mariadb-binlog-stop-never.log", f"mariadb-binlog --no-defaults -R --stop-never -h 127.0.0.1 -P PORT "
             f"-u repl -p... {first} (killed with SIGTERM after 2.5 s)")

        # (c) python-mysql-replication
        py = python_with_pymysql()
        if py and os.path.isdir(PMR):
            env = dict(os.environ, PYTHONPATH=PMR)
            for mode in ("filepos", "gtid"):
                p = proxy("pmr-" + mode)
                r = subprocess.run([py, "-c", PMR_SCRIPT, str(p.port), mode, first, "0-1-2"], capture_output=True,
                                   env=env, timeout=60)
                rows = r.stdout.decode(errors="replace")
                save(p, f"pmr-{mode}.log", f"python-mysql-replication BinLogStreamReader(blocking=False, "
                     + ("log_file=FIRST, log_pos=4, resume_stream=True" if mode == "filepos" else
                        "is_mariadb=True, auto_position='0-1-2'") + f") exit {r.returncode}; rows read:\n# "
                     + rows.replace("\n", "\n# ") + r.stderr.decode(errors="replace")[-1500:].replace("\n", "\n# "))
        else:
            print("note: no python with pymysql or no python-mysql-replication: pmr captures skipped")

        # (d) errors from the server: wrong password, unknown command, refused query
        p = proxy("errors")
        client = mdb.CLIENT
        subprocess.run([client, "--no-defaults", "-h", "127.0.0.1", "-P", str(p.port), "-urepl", "-pwrong", "-e",
                        "SELECT 1"], capture_output=True, timeout=30)
        subprocess.run([client, "--no-defaults", "-h", "127.0.0.1", "-P", str(p.port), "-urepl", "-psecret", "-e",
                        "SELECT * FROM no_such_db.t"], capture_output=True, timeout=30)
        # an unknown command byte, by hand after a real login (pymysql if there)
        if py:
            subprocess.run([py, "-c", "import pymysql,sys\nc=pymysql.connect(host='127.0.0.1',port=int(sys.argv[1]),"
                            "user='repl',password='secret')\nc._execute_command(0x7f,b'')\ntry:\n c._read_packet()\n"
                            "except Exception as e: print(e)\n", str(p.port)], capture_output=True, timeout=30)
        save(p, "mariadb-client-errors.log", "mariadb client: wrong password; a query the server refuses; "
             "(pymysql) command byte 0x7f")
        # (e) binlogctl's own client
        if len(sys.argv) > 2:
            bc = os.path.abspath(sys.argv[2])
            tcp = ["--host", "127.0.0.1", "--user", "repl", "--password=secret"]
            p = proxy("binlogctl-dump")
            r1 = subprocess.run([bc, "dump", "-R", "--port", str(p.port), *tcp, first], capture_output=True, timeout=60)
            r2 = subprocess.run([bc, "dump", "-R", "--port", str(p.port), *tcp], capture_output=True, timeout=60)
            save(p, "binlogctl-dump-R.log", f"binlogctl dump -R ... {first} (exit {r1.returncode}), then binlogctl "
                 f"dump -R ... without a file name (exit {r2.returncode})")
            p = proxy("binlogctl-fetch")
            r = subprocess.run([bc, "fetch", "--port", str(p.port), *tcp, "--result-dir", os.path.join(tmp, "fetch")],
                               capture_output=True, timeout=60)
            save(p, "binlogctl-fetch.log", f"binlogctl fetch ... --result-dir DIR (exit {r.returncode})")
    finally:
        for p in proxies:
            p.close()
        repl.stop()
        prim.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
