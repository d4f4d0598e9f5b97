#!/usr/bin/env python3
"""Reading a live server (issue "Read from a live server"): -R on every subcommand.

usage: remote.py BINLOGCTL

Starts one private mariadbd (own datadir and unix socket in a temporary directory, TCP on
127.0.0.1 and a free port, --log-bin with CRC32, max_binlog_size 4096 so that it rotates, a
replication user), runs a short bounded workload (a stretch of it with binlog_checksum NONE), then:

  * dump (text, JSON with --hexdump: every byte), verify (text, JSON), convert --format json and
    stats of each closed file read with -R equal the same subcommand on the server's own file, byte
    for byte on stdout, same exit status; over TCP and over the socket (password from MYSQL_PWD);
  * verify -R of the whole closed chain equals verify of the files; dump -R with no names reads
    every file SHOW BINARY LOGS lists;
  * --stop-never follows the live end through a rotation, and through a dropped connection
    (reconnected with fetch's backoff, going on right after the last event read);
  * --start-gtid (MariaDB @slave_connect_state): convert -R equals the local convert with
    --exclude-gtids ..POSITION; dump -R gives the files' own events at their own positions, all but
    the transactions up to the position; verify -R finds nothing in the gaps but does find a byte
    flipped by a proxy after the start; a position past the binlogs, a file name with it and fetch
    with it are refused;
  * fetch: after FLUSH BINARY LOGS every closed file in the backup equals the server's; partial files
    cut at random offsets are truncated and completed; 10 SIGKILLs during a workload and a SIGTERM,
    then a resume, still give the server's files; a byte flipped by a TCP proxy is reported as
    checksum_mismatch with the file and position, exit 1, and the damaged event is not on disk;
  * TLS: --ssl-mode REQUIRED refused without TLS; over TLS (a test CA made with openssl) REQUIRED
    reads as before, VERIFY_CA refuses a certificate for another host name, another CA is refused;
  * errors: wrong password, unknown host, nothing listening, no REPLICATION SLAVE privilege, a file
    the server does not have (listed or not), purged files, binary logging off: exit 2 and a
    message naming the server and the reason.

Exits 77 (skip) when mariadbd is not installed or binlogctl was built without libmariadb.
"""
import json
import os
import pty
import re
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import mdb
import support

SKIP = 77


find = mdb.find


def wait_dumping(srv, proxy, before, timeout=30):
    """Until the client behind `proxy` is streaming: the server has a Binlog Dump thread on one of
    the connections the proxy accepted after the first `before` (a fixed sleep left the drop before
    the connection on a loaded machine; an earlier client's connection, closed but still listed by
    the server until its dump thread next writes, must not count)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with proxy.lock:
            ports = [x.getsockname()[1] for x in proxy.upstream[before:]]
        if ports:
            hosts = " OR ".join(f"HOST LIKE '%:{p}'" for p in ports)
            n = srv.rows(f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump' AND ({hosts})")
            if n and n[0][0] != "0":
                return True
        time.sleep(0.05)
    return False


class FlipProxy(support.TcpProxy):
    """A TCP proxy to the server that flips one byte of the first occurrence of `marker` in what
    the server sends (so one event's bytes no longer match its CRC32). self.upstream (every
    connection to the server, in accept order) serves wait_dumping."""

    def __init__(self, port, marker):
        super().__init__(port, backlog=4)
        self.marker, self.flipped = marker, False

    def pump(self, src, dst, flip):
        held = b""
        try:
            while True:
                r, _, _ = select.select([src], [], [], 0.05)
                if not r:  # idle: what is held goes out
                    if held:
                        dst.sendall(held)
                        held = b""
                    continue
                data = src.recv(65536)
                if not data:
                    break
                held += data
                if flip and self.marker and not self.flipped and self.marker in held:
                    i = held.index(self.marker)
                    held = held[:i] + bytes([held[i] ^ 0x01]) + held[i + 1:]
                    self.flipped = True
                keep = len(self.marker) if flip and self.marker and not self.flipped else 0  # a marker split across reads
                if len(held) > keep:
                    dst.sendall(held[:len(held) - keep])
                    held = held[len(held) - keep:]
        except OSError:
            pass
        finally:
            support.shut(src, dst)


WORKLOAD = """
CREATE DATABASE shop;
CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(40), price DECIMAL(10,2),
  made DATETIME(3), data BLOB, doc JSON, flags SET('a','b','c'), f DOUBLE, u BIGINT UNSIGNED);
INSERT INTO shop.items (name, price, made, data, doc, flags, f, u) VALUES
  ('caf\u00e9', 12.50, '2024-02-29 12:34:56.789', x'00ff10', '{"k": [1, 2, "x"]}', 'a,c', -1.5, 18446744073709551615),
  (NULL, NULL, NULL, NULL, NULL, '', NULL, NULL);
BEGIN;
INSERT INTO shop.items (name, data) VALUES ('big', REPEAT('x', 9000));
INSERT INTO shop.items (name, data) VALUES ('big2', REPEAT('y', 5000));
COMMIT;
UPDATE shop.items SET price = price * 2 WHERE id = 1;
DELETE FROM shop.items WHERE name IS NULL;
ALTER TABLE shop.items ADD COLUMN note TEXT;
INSERT INTO shop.items (name, note) VALUES ('after alter', 'n');
"""


def main():
    binary = sys.argv[1]
    for prog in ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin"):
        if find(prog) is None:
            print(f"skip: {prog} is not installed")
            return SKIP
    helptext = subprocess.run([binary, "dump", "--help"], capture_output=True, text=True).stdout
    if "--read-from-remote-server" not in helptext:
        print("skip: binlogctl was built without libmariadb")
        return SKIP
    t0 = time.time()
    failures = []
    checks = [0]

    def check(cond, what):
        checks[0] += 1
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-remote-")
    srv = mdb.Server(tmp, ["--server-id=1"], tcp=True)
    try:
        srv.install()
        srv.start("--log-bin=mariadb-bin", "--binlog-format=ROW", "--binlog-checksum=CRC32",
                  "--max-binlog-size=4096", "--binlog-annotate-row-events=ON", "--max-allowed-packet=64M")
        srv.rows("CREATE USER repl@'%' IDENTIFIED BY 'secret'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%';"
                "CREATE USER nopriv@'%' IDENTIFIED BY 'x'; GRANT BINLOG MONITOR ON *.* TO nopriv@'%';"
                "CREATE USER dumper@'%' IDENTIFIED BY 'x'; GRANT REPLICATION SLAVE ON *.* TO dumper@'%';")
        srv.rows(WORKLOAD)
        # An event past 16 MiB: the protocol splits it into several packets.
        srv.rows("CREATE TABLE shop.huge (id INT PRIMARY KEY, b LONGBLOB); INSERT INTO shop.huge VALUES (1, REPEAT('h', 17000000))")
        srv.rows("SET GLOBAL binlog_checksum = NONE;" + WORKLOAD.replace("shop", "shop2") + "SET GLOBAL binlog_checksum = CRC32;"
                "INSERT INTO shop.items (name) VALUES ('crc again'); FLUSH BINARY LOGS;")
        files = srv.binlogs()
        closed = files[:-1]
        check(len(closed) >= 5, f"the workload should rotate a few times: {files}")
        tcp = ["-R", "--host", "127.0.0.1", "--port", str(srv.port), "--user", "repl", "--password=secret"]
        sock = ["-R", "--socket", srv.sock, "--user", "repl"]
        env_pw = dict(os.environ, MYSQL_PWD="secret")

        def run(args, env=None):
            return subprocess.run([binary, *args], capture_output=True, env=env, timeout=60)

        # 1. Every subcommand: a closed file read from the server == the server's own file.
        commands = [["dump"], ["dump", "--format", "json", "--hexdump", "--decode"], ["verify"],
                    ["verify", "--format", "json"], ["convert", "--format", "json"], ["stats", "--format", "json"]]
        for f in closed:
            local = os.path.join(srv.data, f)
            for cmd in commands:
                ref = run([*cmd, local])
                check(ref.returncode == 0, f"{cmd} {f} locally: exit {ref.returncode} {ref.stderr[:300]!r}")
                got = run([*cmd, *tcp, f])
                check(got.returncode == ref.returncode, f"{cmd} -R {f}: exit {got.returncode}, locally {ref.returncode}: {got.stderr[:300]!r}")
                check(got.stdout == ref.stdout, f"{cmd} -R {f}: stdout differs from the local run")
        for cmd in (["dump", "--format", "json", "--hexdump"], ["verify"], ["replay", "--format", "json"]):
            ref = run([*cmd, *[os.path.join(srv.data, f) for f in closed]])
            got = run([*cmd, *sock, *closed], env=env_pw)
            check(got.returncode == ref.returncode and got.stdout == ref.stdout,
                  f"{cmd} -R over the socket of the closed chain: exit {got.returncode} {got.stderr[:300]!r}")
        # --password alone asks on the terminal (a pseudo-terminal here); without one it is a usage error.
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(binary, [binary, "dump", "-R", "--socket", srv.sock, "--user", "repl", "--password", closed[0]])
        out, deadline = b"", time.time() + 20
        while time.time() < deadline and b"Enter password" not in out:
            out += os.read(fd, 4096)
        os.write(fd, b"secret\n")
        while time.time() < deadline:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        check(b"Enter password for " + srv.sock.encode() in out and b": secret" not in out
              and os.waitstatus_to_exitcode(status) == 0 and b"Format_desc" in out,
              f"--password prompt: status {status}, output {out[:300]!r}")
        p = subprocess.run([binary, "dump", "-R", "--socket", srv.sock, "--user", "repl", "--password", closed[0]],
                           stdin=subprocess.DEVNULL, capture_output=True, start_new_session=True)
        check(p.returncode == 2 and b"no terminal" in p.stderr, f"--password without a terminal: {p.returncode} {p.stderr!r}")
        # Selection applies as for files.
        ref = run(["dump", "--start-position", "300", os.path.join(srv.data, closed[0])])
        got = run(["dump", "--start-position", "300", *tcp, closed[0]])
        check(got.stdout == ref.stdout and len(ref.stdout.splitlines()) > 1, "dump --start-position -R")
        # No names: every file the server lists.
        got = run(["dump", "--format", "json", *tcp])
        names = {line.split(b'"log_name":"')[1].split(b'"')[0].decode() for line in got.stdout.splitlines()}
        check(got.returncode == 0 and names == set(files), f"dump -R without names read {sorted(names)}, server has {files}")

        # 2. --stop-never follows the live end through a rotation.
        follow = subprocess.Popen([binary, "dump", *tcp, "--stop-never", files[-1]],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.3)
        srv.rows("INSERT INTO shop.items (name) VALUES ('live 1'); FLUSH BINARY LOGS; INSERT INTO shop.items (name) VALUES ('live 2');")
        newest = srv.binlogs()[-1]
        seen, deadline = b"", time.time() + 10
        os.set_blocking(follow.stdout.fileno(), False)
        while time.time() < deadline and not (newest.encode() in seen and seen.count(b"Xid") >= 2):
            chunk = follow.stdout.read()
            if chunk:
                seen += chunk
            time.sleep(0.05)
        follow.send_signal(signal.SIGTERM)
        follow.wait(10)
        check(newest.encode() in seen and seen.count(b"Xid") >= 2,
              f"--stop-never did not show the new file {newest} and both inserts: {seen[-400:]!r}")

        # 2b. MariaDB --start-gtid: the server picks the file and leaves out the transactions up to
        # the position. The gaps that makes are not damage; what is sent is the local files' own
        # events at their own positions, and the output is the local one with those transactions
        # left out (--exclude-gtids ..POSITION). Damage after the start is still reported.
        srv.rows("INSERT INTO shop.items (name) VALUES ('GTIDFLIP-marker'); FLUSH BINARY LOGS;")
        files = srv.binlogs()
        gtids, alter = [], None  # (file, pos, seq) of every GTID event of the closed files
        for f in files[:-1]:
            for r in srv.rows(f"SHOW BINLOG EVENTS IN '{f}'"):
                if r[2] == "Gtid":
                    gtids.append((f, int(r[1]), int(re.search(r"GTID 0-1-(\d+)", r[5]).group(1))))
                elif r[2] == "Query" and "ALTER TABLE shop.items" in r[5] and alter is None:
                    alter = len(gtids) - 1
        # Start after shop.items' last DDL (convert -R gets its definition from --schema; the
        # tables made later have their DDL in what is sent). Transactions before it in its file
        # are left out too.
        state = f"0-1-{gtids[alter][2]}"
        schema = os.path.join(tmp, "items.sql")
        with open(schema, "w") as fh:
            fh.write(srv.rows("SHOW CREATE TABLE shop.items")[0][1].replace("\\n", "\n")
                     .replace("CREATE TABLE `items`", "CREATE TABLE `shop`.`items`") + ";\n")
        gtid_tcp = [*tcp, "--start-gtid", state]
        got = gdump = run(["dump", "--format", "json", *gtid_tcp])
        check(got.returncode == 0 and got.stdout, f"dump -R --start-gtid: exit {got.returncode} {got.stderr[:300]!r}")
        sfile = json.loads(got.stdout.splitlines()[0])["log_name"]
        loc = [os.path.join(srv.data, f) for f in files[files.index(sfile):]]
        ref = run(["dump", "--format", "json", *loc])
        at = lambda line: (json.loads(line)["log_name"], json.loads(line)["pos"])
        local = {at(line): line for line in ref.stdout.splitlines()}
        sent = [at(line) for line in got.stdout.splitlines()]
        # The open file's format description has the in-use flag, cleared in what the server sends.
        check(sent and all(local.get(at(line)) == line for line in got.stdout.splitlines() if at(line)[0] != files[-1]),
              "dump -R --start-gtid: every event is the file's own, at its own position")
        # Left out: the transactions of the start file before the position; the Binlog_checkpoint
        # events between them are not in a transaction and are sent.
        first_in_file = min((g[1] for g in gtids if g[0] == sfile), default=0)
        expect_out = sorted(k for k, line in local.items() if k[0] == sfile and first_in_file <= k[1] < gtids[alter + 1][1]
                            and json.loads(line)["event_type"] != "Binlog_checkpoint")
        left_out = sorted(k for k in local if k not in set(sent) and k[0] != files[-1])  # the open file may grow
        check(left_out == expect_out and (sfile, gtids[alter + 1][1]) in sent and len(left_out) > 5,
              f"dump -R --start-gtid {state} from {sfile}: left out {sorted(set(left_out) ^ set(expect_out))} "
              f"unexpectedly, {len(left_out)} in all")
        # convert: the same records as the local run of the whole chain with --exclude-gtids ..POSITION
        # (transaction numbers aside: -R counts from the first transaction it reads). The left-out
        # DDL of shop.items is given with --schema.
        ref = run(["convert", "--format", "json", "--exclude-gtids", ".." + state, *[os.path.join(srv.data, f) for f in files]])
        got = run(["convert", "--format", "json", "--schema", schema, *gtid_tcp])
        no_txn = lambda out: [re.sub(rb'"txn_id":\d+,', b"", line) for line in out.splitlines()]
        check(ref.returncode == 0 and got.returncode == 0 and no_txn(got.stdout) == no_txn(ref.stdout)
              and len(no_txn(got.stdout)) > 5 and b'"txn_id":1,' in got.stdout,
              f"convert -R --start-gtid {state}: exit {got.returncode} (local {ref.returncode}), same output "
              f"{no_txn(got.stdout) == no_txn(ref.stdout)}: {got.stderr[:300]!r}")
        first_gtid = next((json.loads(line) for line in gdump.stdout.splitlines()
                           if json.loads(line)["event_type"] == "Gtid"), None)
        check(first_gtid is not None and f"GTID 0-1-{gtids[alter + 1][2]}" in first_gtid["info"],
              f"dump -R --start-gtid {state}: the first GTID is {first_gtid}, expected 0-1-{gtids[alter + 1][2]}")
        p = run(["verify", *gtid_tcp])
        check(p.returncode == 0 and b"0 errors, 0 warnings" in p.stdout,
              f"verify -R --start-gtid: the server's gaps are not findings: exit {p.returncode} {p.stdout[-400:]!r}")
        proxy = FlipProxy(srv.port, b"GTIDFLIP-mark")
        proxy.start()
        p = run(["verify", "-R", "--host", "127.0.0.1", "--port", str(proxy.port), "--user", "repl", "--password=secret",
                 "--start-gtid", state])
        proxy.close()
        check(proxy.flipped and p.returncode == 1 and b"checksum_mismatch" in p.stdout,
              f"verify -R --start-gtid through a flipped byte: exit {p.returncode} {p.stdout[-300:]!r}")
        p = run(["dump", *tcp, "--start-gtid", "0-1-99999999"])
        check(p.returncode == 2 and f"127.0.0.1:{srv.port}".encode() in p.stderr and not p.stdout,
              f"--start-gtid past the binlogs: exit {p.returncode} {p.stderr[:300]!r}")
        p = run(["dump", *gtid_tcp, sfile])
        check(p.returncode == 2 and b"--start-gtid" in p.stderr, f"--start-gtid with a file name: {p.returncode} {p.stderr[:200]!r}")
        # With --stop-never: from the position on, through a rotation, into what is written next.
        follow = subprocess.Popen([binary, "dump", "--format", "json", *gtid_tcp, "--stop-never"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.3)
        srv.rows("INSERT INTO shop.items (name) VALUES ('gtid live 1'); FLUSH BINARY LOGS;"
                "INSERT INTO shop.items (name) VALUES ('gtid live 2');")
        seen, deadline = b"", time.time() + 10
        os.set_blocking(follow.stdout.fileno(), False)
        while time.time() < deadline and b"gtid live 2" not in seen:
            chunk = follow.stdout.read()
            if chunk:
                seen += chunk
            time.sleep(0.05)
        follow.send_signal(signal.SIGTERM)
        follow.wait(10)
        check(b"gtid live 1" in seen and b"gtid live 2" in seen and seen.startswith(gdump.stdout.split(b"\n")[0]),
              f"dump -R --start-gtid --stop-never: {seen[-300:]!r}")
        p = run(["fetch", "--result-dir", os.path.join(tmp, "nogtid"), *gtid_tcp[1:]])
        check(p.returncode == 2 and b"byte for byte" in p.stderr and not os.path.exists(os.path.join(tmp, "nogtid")),
              f"fetch --start-gtid is refused: {p.returncode} {p.stderr[:200]!r}")

        # 3. fetch: a byte-identical backup; resumed after kills; a clean stop on SIGTERM.
        def same_as_server(d, what, partial_too=False):
            names = srv.binlogs()
            got = sorted(os.listdir(d))
            for n in names[:-1]:
                check(n in got, f"{what}: {n} missing from the backup ({got})")
                if n in got:
                    a, b = open(os.path.join(d, n), "rb").read(), open(os.path.join(srv.data, n), "rb").read()
                    check(a == b, f"{what}: {n}: {len(a)} bytes differ from the server's {len(b)}")
            if partial_too:
                last = names[-1] + ".partial"
                check(last in got, f"{what}: {last} missing ({got})")
                if last in got:
                    a = open(os.path.join(d, last), "rb").read()
                    b = bytearray(open(os.path.join(srv.data, names[-1]), "rb").read()[:len(a)])
                    b[21] &= 0xFE  # LOG_EVENT_BINLOG_IN_USE_F: set in the server's open file, cleared in what it sends
                    check(a == bytes(b) and len(a) > 4, f"{what}: {last} ({len(a)} bytes) is not the server's file up to there")
            check(not [n for n in got if n.endswith(".partial") and n[:-8] in names[:-1]],
                  f"{what}: a closed file left as .partial: {got}")

        bk = os.path.join(tmp, "backup")
        p = run(["fetch", "--result-dir", bk, *tcp[1:]])
        check(p.returncode == 0 and b"0 errors" in p.stdout, f"fetch: exit {p.returncode} {p.stdout[-300:]!r} {p.stderr[:300]!r}")
        same_as_server(bk, "fetch", partial_too=True)
        srv.rows("INSERT INTO shop.items (name) VALUES ('after fetch'); FLUSH BINARY LOGS;")
        p = run(["fetch", "--format", "json", "--fsync-interval", "0", "--result-dir", bk, *tcp[1:]])
        check(p.returncode == 0 and b'"errors":0' in p.stdout, f"fetch resumed: exit {p.returncode} {p.stdout[-300:]!r} {p.stderr[:300]!r}")
        same_as_server(bk, "fetch after FLUSH BINARY LOGS")
        ref = run(["verify", "--closed", *[os.path.join(bk, n) for n in sorted(os.listdir(bk)) if not n.endswith(".partial")]])
        check(ref.returncode == 0, f"verify --closed of the backup: {ref.stdout[-300:]!r}")

        # A byte flipped on the way (a proxy): the damaged event is reported as verify reports it
        # (checksum_mismatch, the server file and position), not written; exit 1.
        srv.rows("FLUSH BINARY LOGS; INSERT INTO shop.items (name) VALUES ('FLIPME-damaged-on-the-wire');")
        target = srv.binlogs()[-1]
        proxy = FlipProxy(srv.port, b"FLIPME-damaged")
        proxy.start()
        d = os.path.join(tmp, "flipped")
        p = run(["fetch", "--result-dir", d, "--host", "127.0.0.1", "--port", str(proxy.port), "--user", "repl",
                 "--password=secret", target])
        proxy.close()
        out = p.stdout.decode("utf-8", "replace")
        m = re.search(re.escape(target) + r":(\d+): error: checksum_mismatch", out)
        check(proxy.flipped and p.returncode == 1 and m is not None,
              f"flipped byte: exit {p.returncode}, flipped {proxy.flipped}, output {out[:400]!r} {p.stderr[:200]!r}")
        if m:
            on_disk = open(os.path.join(d, target + ".partial"), "rb").read()
            server = bytearray(open(os.path.join(srv.data, target), "rb").read())
            server[21] &= 0xFE
            check(len(on_disk) <= int(m.group(1)) and on_disk == bytes(server[:len(on_disk)]) and b"FLIPME" not in on_disk,
                  f"flipped byte: {len(on_disk)} bytes on disk, the damaged event is at {m.group(1)}")

        # --stop-never through a connection that drops: reconnects (reported on stderr), goes on.
        proxy = FlipProxy(srv.port, None)
        proxy.start()
        d = os.path.join(tmp, "reconnect")
        before = proxy.accepted()
        f = subprocess.Popen([binary, "fetch", "--stop-never", "--result-dir", d, "--host", "127.0.0.1",
                              "--port", str(proxy.port), "--user", "repl", "--password=secret", target],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(wait_dumping(srv, proxy, before), "reconnect: fetch never started its dump through the proxy")
        time.sleep(0.2)
        proxy.drop()
        srv.rows("INSERT INTO shop.items (name) VALUES ('while away'); FLUSH BINARY LOGS; INSERT INTO shop.items (name) VALUES ('back');")
        deadline = time.time() + 15
        newest = srv.binlogs()[-1]
        while time.time() < deadline and not os.path.exists(os.path.join(d, srv.binlogs()[-2])):
            time.sleep(0.1)
        time.sleep(0.3)
        f.send_signal(signal.SIGTERM)
        out, err = f.communicate(timeout=20)
        proxy.close()
        err = err.decode("utf-8", "replace")
        check(f.returncode == 0 and "reconnecting in 1 s" in err and "reconnected, going on from" in err,
              f"reconnect: exit {f.returncode}: {err[:400]}")
        got = sorted(os.listdir(d))
        check(target in got and newest + ".partial" in got, f"reconnect: the backup holds {got}")
        for n in got:
            server = bytearray(open(os.path.join(srv.data, n.replace(".partial", "")), "rb").read())
            mine = open(os.path.join(d, n), "rb").read()
            if n.endswith(".partial"):
                server[21] &= 0xFE
                server = server[:len(mine)]
            check(mine == bytes(server) and len(mine) > 4, f"reconnect: {n} differs from the server's file")

        # A connection lost under -R --stop-never: reconnected with fetch's backoff (reported on
        # stderr), the read goes on right after the last event it had, through a rotation, with
        # nothing twice and nothing missing.
        proxy = FlipProxy(srv.port, None)
        proxy.start()
        for i, cmd in enumerate((["dump", "--format", "json"], ["convert", "--format", "json"])):
            start = srv.binlogs()[-1]
            before = proxy.accepted()
            f = subprocess.Popen([binary, *cmd, "-R", "--stop-never", "--host", "127.0.0.1", "--port", str(proxy.port),
                                  "--user", "repl", "--password=secret", start],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            check(wait_dumping(srv, proxy, before), f"{cmd} -R --stop-never never started its dump through the proxy")
            time.sleep(0.2)
            proxy.drop()
            srv.rows(f"INSERT INTO shop.items (name) VALUES ('away {i}'); FLUSH BINARY LOGS;"
                    f"INSERT INTO shop.items (name) VALUES ('back {i}');")
            out, deadline = b"", time.time() + 15
            os.set_blocking(f.stdout.fileno(), False)
            while time.time() < deadline and f"back {i}".encode() not in out:
                chunk = f.stdout.read()
                if chunk:
                    out += chunk
                time.sleep(0.05)
            f.send_signal(signal.SIGTERM)
            rest, err = f.communicate(timeout=20)
            out += rest or b""
            err = err.decode("utf-8", "replace")
            missing = [w for w, ok in ((f"away {i} in stdout", f"away {i}".encode() in out),
                                       (f"back {i} in stdout", f"back {i}".encode() in out),
                                       ("'reconnecting in 1 s'", "reconnecting in 1 s" in err),
                                       (f"'reconnected, going on from {start} at'", f"reconnected, going on from {start} at" in err),
                                       ("'Lost connection'", "Lost connection" in err)) if not ok]
            check(not missing, f"{cmd} -R --stop-never through a dropped connection: missing {missing}; "
                  f"stderr {err[-1500:]!r}; stdout {out[-1500:]!r}")
            if cmd[0] == "dump":
                seen = [(json.loads(x)["log_name"], json.loads(x)["pos"]) for x in out.splitlines()]
                ref = run(["dump", "--format", "json", *[os.path.join(srv.data, n) for n in srv.binlogs()[srv.binlogs().index(start):-1]]])
                want = [(json.loads(x)["log_name"], json.loads(x)["pos"]) for x in ref.stdout.splitlines()]
                check(seen[:len(want)] == want, f"dump -R --stop-never across the reconnect: {len(seen)} events, "
                      f"first difference at {next((k for k, (x, y) in enumerate(zip(seen, want)) if x != y), None)}")
        proxy.close()

        # Torn tails: a partial file cut at random offsets (inside events, inside transactions) is
        # truncated back to its last complete transaction and completed from the server.
        rnd = random.Random(int(os.environ.get("BINLOGCTL_TEST_SEED", "16")))
        biggest = max(srv.binlogs()[:-1], key=lambda n: os.path.getsize(os.path.join(srv.data, n)))
        whole = open(os.path.join(srv.data, biggest), "rb").read()
        for k in range(6):
            cut = rnd.randint(5, len(whole) - 1)
            d = os.path.join(tmp, f"torn{k}")
            os.mkdir(d)
            open(os.path.join(d, biggest + ".partial"), "wb").write(whole[:cut])
            p = run(["fetch", "--result-dir", d, *tcp[1:]])
            got = open(os.path.join(d, biggest), "rb").read() if os.path.exists(os.path.join(d, biggest)) else b""
            check(p.returncode == 0 and got == whole,
                  f"{biggest} cut at {cut} of {len(whole)} and resumed: exit {p.returncode}, {len(got)} bytes {p.stderr[:300]!r}")

        # Killed (SIGKILL) at random moments while a workload runs, resumed each time.
        stmts = []
        for i in range(120):
            if i % 10 == 3:
                stmts.append(f"INSERT INTO shop.items (name, data) VALUES ('k{i}', REPEAT('z', {rnd.randint(3000, 12000)}))")
            elif i % 10 == 7:
                stmts.append(f"BEGIN; INSERT INTO shop.items (name) VALUES ('a{i}'); INSERT INTO shop.items (name) VALUES ('b{i}'); COMMIT")
            else:
                stmts.append(f"INSERT INTO shop.items (name, price) VALUES ('n{i}', {i})")
            stmts.append("DO SLEEP(0.015)")
        load = subprocess.Popen([find("mariadb"), "--no-defaults", "--socket=" + srv.sock, "-uroot", "-e", ";".join(stmts)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        bk2 = os.path.join(tmp, "backup2")
        kills = 0
        while load.poll() is None and kills < 10:
            f = subprocess.Popen([binary, "fetch", "--stop-never", "--fsync-interval", "0", "--result-dir", bk2, *tcp[1:]],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rnd.uniform(0.05, 0.4))
            f.kill()
            f.wait()
            kills += 1
        load.wait(60)
        check(load.returncode == 0, f"workload failed: {load.stderr.read()[:300]!r}")
        check(kills >= 3, f"only {kills} kills during the workload")
        # Followed to the end, then stopped with SIGTERM: complete events on disk, exit 0.
        f = subprocess.Popen([binary, "fetch", "--stop-never", "--result-dir", bk2, *tcp[1:]],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)
        srv.rows("INSERT INTO shop.items (name) VALUES ('before term')")

        def caught_up():
            names = srv.binlogs()
            have = set(os.listdir(bk2)) if os.path.isdir(bk2) else set()
            last = os.path.join(bk2, names[-1] + ".partial")
            return all(n in have for n in names[:-1]) and os.path.exists(last) and \
                os.path.getsize(last) >= os.path.getsize(os.path.join(srv.data, names[-1]))
        # the SIGTERM is for a fetch that follows the live end: wait (bounded) until it is there,
        # however loaded the machine (a fixed 0.5 s left it mid-catch-up on a busy machine)
        deadline = time.time() + 60
        while time.time() < deadline and f.poll() is None and not caught_up():
            time.sleep(0.1)
        time.sleep(0.2)
        f.send_signal(signal.SIGTERM)
        out, err = f.communicate(timeout=20)
        check(f.returncode == 0, f"fetch --stop-never after SIGTERM: exit {f.returncode} {err[:300]!r} {out[-300:]!r}")
        same_as_server(bk2, f"after {kills} kills and a SIGTERM", partial_too=True)
        srv.rows("FLUSH BINARY LOGS")
        p = run(["fetch", "--result-dir", bk2, *tcp[1:]])
        check(p.returncode == 0, f"fetch after the kills: exit {p.returncode} {p.stderr[:300]!r}")
        same_as_server(bk2, f"after {kills} kills, resumed")

        # 4. Errors: exit 2, a message naming the server and the reason.
        label = f"127.0.0.1:{srv.port}"
        dead = socket.socket()
        dead.bind(("127.0.0.1", 0))
        dead_port = dead.getsockname()[1]
        dead.close()
        cases = [
            ("wrong password", [*tcp[:-1], "--password=wrong", closed[0]], [label, "Access denied"]),
            ("unknown host", ["-R", "--host", "no-such-host.invalid", "--user", "repl", "--password=secret"],
             ["no-such-host.invalid", "Unknown server host"]),
            ("nothing listening", ["-R", "--host", "127.0.0.1", "--port", str(dead_port), "--user", "repl", "--password=secret"],
             [f"127.0.0.1:{dead_port}", "Can't connect"]),
            ("no REPLICATION SLAVE", ["-R", "--host", "127.0.0.1", "--port", str(srv.port), "--user", "nopriv", "--password=x", closed[-1]],
             [label, "REPLICATION SLAVE"]),
            ("no listing privilege, no names", ["-R", "--host", "127.0.0.1", "--port", str(srv.port), "--user", "dumper", "--password=x"],
             [label, "SHOW BINARY LOGS"]),
            ("missing file (listed)", [*tcp, "mariadb-bin.999999"], [label, "mariadb-bin.999999: no such binary log"]),
            ("missing file (unlisted)", ["-R", "--host", "127.0.0.1", "--port", str(srv.port), "--user", "dumper", "--password=x",
                                         "mariadb-bin.999999"], [label, "mariadb-bin.999999", "Could not find first log file"]),
            ("a path with -R", [*tcp, "/tmp/x"], ["binlog names on the server"]),
        ]
        srv.rows(f"PURGE BINARY LOGS TO '{closed[2]}'")
        cases.append(("purged file", [*tcp, closed[0]], [label, closed[0], "purged"]))
        # fetch into a directory that cannot be made: exit 2, the directory named.
        blocker = os.path.join(tmp, "a-file")
        open(blocker, "w").close()
        p = run(["fetch", "--result-dir", os.path.join(blocker, "sub"), *tcp[1:]])
        check(p.returncode == 2 and b"a-file/sub" in p.stderr, f"fetch into an impossible directory: {p.returncode} {p.stderr!r}")
        # fetch into a directory whose next file the server has purged: exit 2, even with --stop-never.
        d = os.path.join(tmp, "purged")
        os.mkdir(d)
        open(os.path.join(d, closed[0] + ".partial"), "wb").write(open(os.path.join(bk, closed[0]), "rb").read()[:300])
        p = run(["fetch", "--stop-never", "--result-dir", d, *tcp[1:]])
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 2 and closed[0] in err and "Could not find first log file" in err,
              f"fetch of a purged file: exit {p.returncode}: {err[:300]}")
        for what, args, needles in cases:
            for cmd in ("dump", "verify"):
                p = run([cmd, *args])
                err = p.stderr.decode("utf-8", "replace")
                check(p.returncode == 2, f"{what} ({cmd}): exit {p.returncode}, expected 2: {err[:300]}")
                check(all(n in err for n in needles), f"{what} ({cmd}): stderr {err[:300]!r} lacks {needles}")
                check(p.stdout == b"" or cmd == "dump", f"{what} ({cmd}): output {p.stdout[:200]!r}")
        # TLS: REQUIRED against a server without TLS is refused; with TLS, REQUIRED and VERIFY_CA
        # (the right CA) read as before, VERIFY_CA with another CA is refused.
        p = run(["dump", *tcp, "--ssl-mode", "REQUIRED", closed[-1]])
        check(p.returncode == 2 and b"not encrypted" in p.stderr, f"--ssl-mode REQUIRED without TLS: {p.returncode} {p.stderr!r}")
        if find("openssl"):
            certs = os.path.join(tmp, "certs")
            os.mkdir(certs)

            def ossl(*args):
                subprocess.run([find("openssl"), *args], cwd=certs, check=True, capture_output=True)

            ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            ossl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=binlogctl test CA")
            ossl("req", "-x509", *ec, "-keyout", "other.key", "-out", "other.pem", "-days", "2", "-subj", "/CN=another CA")
            # The server's certificate names another host than the 127.0.0.1 we connect to: only a
            # check of the name (VERIFY_*) refuses it.
            ossl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=binlogctl-test.invalid")
            open(os.path.join(certs, "san"), "w").write("subjectAltName=DNS:binlogctl-test.invalid\n")
            ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.pem", "-days", "2", "-extfile", "san")
            srv.stop()
            srv.start("--log-bin=mariadb-bin", "--binlog-format=ROW", "--max-binlog-size=4096",
                      "--ssl-ca=" + os.path.join(certs, "ca.pem"), "--ssl-cert=" + os.path.join(certs, "server.pem"),
                      "--ssl-key=" + os.path.join(certs, "server.key"))
            tls = ["-R", "--host", "127.0.0.1", "--port", str(srv.port), "--user", "repl", "--password=secret"]
            f = srv.binlogs()[-2]
            ref = run(["dump", "--format", "json", "--hexdump", os.path.join(srv.data, f)])
            ca, other = os.path.join(certs, "ca.pem"), os.path.join(certs, "other.pem")
            for mode in (["--ssl-mode", "REQUIRED"], ["--ssl-mode", "REQUIRED", "--ssl-ca", ca]):
                p = run(["dump", "--format", "json", "--hexdump", *tls, *mode, f])
                check(p.returncode == 0 and p.stdout == ref.stdout, f"TLS {mode}: exit {p.returncode} {p.stderr[:300]!r}")
            for what, mode in (("the host name", ["--ssl-mode", "VERIFY_CA", "--ssl-ca", ca]),
                               ("another CA", ["--ssl-mode", "REQUIRED", "--ssl-ca", other])):
                p = run(["dump", *tls, *mode, f])
                check(p.returncode == 2 and f"127.0.0.1:{srv.port}".encode() in p.stderr,
                      f"TLS, {what} does not match: exit {p.returncode} {p.stderr[:300]!r}")
        else:
            print("note: openssl is not installed: the TLS checks with a server certificate are skipped")
        # Binary logging off.
        srv.stop()
        srv.start("--skip-log-bin")
        p = run(["dump", "-R", "--socket", srv.sock, "--user", "root"])
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 2 and srv.sock in err and "binary logging is disabled" in err,
              f"binlog off: exit {p.returncode}: {err[:300]}")
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"remote: {checks[0]} checks, {len(failures)} failures, {time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
