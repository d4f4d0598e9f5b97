#!/usr/bin/env python3
"""Reading a live server across a crash and a restart (issue 36, item 11).

usage: live_restart.py BINLOGCTL

One private mariadbd (unix socket, --log-bin, small max_binlog_size). `fetch --stop-never`,
`dump -R --stop-never` and `verify -R --stop-never` follow it from its first file while a bounded
load runs; the server is killed (SIGKILL) in the middle of the load and started again on the same
datadir, written to, then stopped cleanly (SIGTERM: STOP event) and started again, written to and
rotated. Then each follower gets SIGTERM. Checked:

  a. fetch: every file the server has closed is in the backup under its final name, byte for byte
     the server's file, the file the crash left open included (its in-use flag as on the server);
     no NAME.partial but the last; verify of the backup exits 0 and reports the crash as
     server_crash (warning) on that file, nothing else; a backup left as fetch used to leave it
     (the crashed file as NAME.partial in the middle of the chain) is repaired by running fetch.
  b. dump -R: every event under its server file's real name (no "NAME#2"), the same events at the
     same positions as dump of the server's files.
  c. the lost-connection messages name the file being read when the server died and an offset in it.
  d. SIGTERM under --stop-never: dump, verify, stats and fetch stop after the last complete event
     and exit 0, their output complete (dump's last line whole JSON, verify's summary and stats'
     tables printed).
  e. verify -R across the crash reports server_crash (from the server going on past the file's
     end), not rotate_mismatch: followed (--stop-never), and with the crashed file and the next
     one named.
  f. a crash inside a transaction (the file's tail cut inside it while the server is down, as a
     crash during its write leaves it): the server rolls it back and reuses its GTID; verify
     (local and -R) reports one server_crash warning naming it, no error; convert ends it
     (ROLLBACK / CUT_OFF) with a warning, exit 0; mariadb-binlog -R --raw gets the same bytes from
     serve as from the server.
  When the kill lands between a file's closing ROTATE and its close (the in-use flag still set on
  the server, cleared in what the server sends), the chain is whole: nobody reports a crash, and
  the backup is the server's file with the flag cleared.

Exits 77 (skip) when mariadbd is not installed or binlogctl was built without libmariadb.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import mdb

SKIP = 77


def main():
    binary = sys.argv[1]
    for prog in ("mariadbd", "mariadb-install-db", "mariadb"):
        if mdb.find(prog) is None:
            print(f"skip: {prog} is not installed")
            return SKIP
    if "--read-from-remote-server" not in subprocess.run([binary, "dump", "--help"], capture_output=True,
                                                         text=True).stdout:
        print("skip: binlogctl was built without libmariadb")
        return SKIP
    t0 = time.time()
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-live-")
    srv = mdb.Server(tmp, ["--server-id=1", "--log-bin=src-bin", "--binlog-format=ROW", "--binlog-checksum=CRC32",
                           "--max-binlog-size=65536", "--sync-binlog=0"])
    procs = []
    try:
        srv.start()
        srv.rows("CREATE USER repl@localhost IDENTIFIED BY 'secret';"
                 "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@localhost;"
                 "CREATE DATABASE shop; CREATE TABLE shop.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(300));"
                 "INSERT INTO shop.t (v) VALUES ('first'); FLUSH BINARY LOGS;")
        first = srv.binlogs()[0]
        env = dict(os.environ, MYSQL_PWD="secret")
        remote = ["-R", "--socket", srv.sock, "--user", "repl"]
        bk = os.path.join(tmp, "backup")

        def follow(args, name):
            out = open(os.path.join(tmp, name + ".out"), "wb")
            err = open(os.path.join(tmp, name + ".err"), "wb")
            p = subprocess.Popen([binary, *args], stdout=out, stderr=err, env=env)
            procs.append(p)
            return p

        fetch = follow(["fetch", "--stop-never", "--fsync-interval", "0", "--result-dir", bk, *remote[1:]], "fetch")
        dump = follow(["dump", "--format", "json", *remote, "--stop-never", first], "dump")
        verify = follow(["verify", "--format", "json", *remote, "--stop-never", first], "verify")
        stats = follow(["stats", "--format", "json", *remote, "--stop-never", first], "stats")

        # A bounded load, killed in its middle: the server dies while it writes a binlog.
        load_sql = "".join(f"INSERT INTO shop.t (v) VALUES (REPEAT('load {i} ', 20));\n" for i in range(4000))
        load = subprocess.Popen(srv.client_args(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        load.stdin.write(load_sql.encode())
        load.stdin.close()
        deadline = time.time() + 30
        while time.time() < deadline and len(srv.binlogs()) < 4:
            time.sleep(0.05)
        srv.proc.kill()  # kill -9 mariadbd
        srv.proc.wait()
        load.wait(30)
        srv.proc = None
        time.sleep(1)
        srv.start()
        srv.rows("INSERT INTO shop.t (v) VALUES ('after the crash'); FLUSH BINARY LOGS;"
                 "INSERT INTO shop.t (v) VALUES ('before the restart');")
        srv.stop()  # a clean shutdown: the file ends with STOP
        srv.start()
        srv.rows("INSERT INTO shop.t (v) VALUES ('after the restart'); FLUSH BINARY LOGS;"
                 "INSERT INTO shop.t (v) VALUES ('the end');")
        files = srv.binlogs()
        sizes = {n: os.path.getsize(os.path.join(srv.data, n)) for n in files}
        last = files[-1]
        crashed = [n for n in files[:-1] if open(os.path.join(srv.data, n), "rb").read(22)[21] & 1]
        check(len(crashed) == 1, f"the server should have left exactly one file open: {crashed} of {files}")
        # The kill can land after the server wrote a file's closing ROTATE and before it cleared the
        # file's in-use flag (a rotation for max_binlog_size). The file is then complete and its
        # ROTATE names the file the server began on restart: nothing was lost and the chain is whole,
        # so nobody reports a crash there; only the flag, which the server clears in what it sends,
        # tells of it. A follower may have been reading either file when the connection went.
        after_rotate = False
        if crashed:
            tail = subprocess.run([binary, "dump", "--format", "json", os.path.join(srv.data, crashed[0])],
                                  capture_output=True).stdout.rstrip(b"\n").split(b"\n")[-1]
            after_rotate = json.loads(tail)["event_type"] == "Rotate"
            if after_rotate:
                print(f"note: the kill came between {crashed[0]}'s ROTATE and its close")
        want_crash = [] if after_rotate else [("server_crash", crashed[0] if crashed else "")]

        def flag_cleared(n):
            b = bytearray(open(os.path.join(srv.data, n), "rb").read())
            if after_rotate and n == crashed[0]:
                b[21] &= 0xFE
            return bytes(b)

        def dump_reached():
            try:
                lines = open(os.path.join(tmp, "dump.out"), "rb").read().split(b"\n")
            except OSError:
                return False
            for line in reversed(lines):
                if b'"log_name":"%s"' % last.encode() in line:
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    return e["pos"] + e["event_size"] >= sizes[last]
            return False

        def fetch_reached():
            try:
                return os.path.getsize(os.path.join(bk, last + ".partial")) >= sizes[last]
            except OSError:
                return False

        deadline = time.time() + 60
        while time.time() < deadline and not (dump_reached() and fetch_reached()):
            time.sleep(0.2)
        check(dump_reached(), "dump -R --stop-never did not reach the server's end")
        check(fetch_reached(), f"fetch --stop-never did not reach the server's end: {sorted(os.listdir(bk))}")
        time.sleep(0.5)  # verify has read as far (it reads as fast as dump)
        for p in (fetch, dump, verify, stats):
            p.send_signal(signal.SIGTERM)
        rcs = {}
        for p, name in ((fetch, "fetch"), (dump, "dump"), (verify, "verify"), (stats, "stats")):
            try:
                rcs[name] = p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                rcs[name] = "hung"
        out = {n: open(os.path.join(tmp, n + ".out"), "rb").read() for n in ("fetch", "dump", "verify", "stats")}
        err = {n: open(os.path.join(tmp, n + ".err"), "rb").read().decode("utf-8", "replace")
               for n in ("fetch", "dump", "verify", "stats")}

        # d. SIGTERM under --stop-never: a clean stop, exit 0, output complete.
        check(rcs["fetch"] == 0, f"fetch after SIGTERM: exit {rcs['fetch']}: {err['fetch'][-600:]}")
        check(rcs["dump"] == 0, f"dump -R --stop-never after SIGTERM: exit {rcs['dump']}: {err['dump'][-400:]}")
        check(out["dump"].endswith(b"}\n"), f"dump -R --stop-never after SIGTERM: the output ends {out['dump'][-80:]!r}")
        check(rcs["verify"] == 0 and b'"summary"' in out["verify"].split(b"\n")[-2:][0],
              f"verify -R --stop-never after SIGTERM: exit {rcs['verify']}, ends {out['verify'][-200:]!r}")
        # stats writes its tables at the end of the input: a signal must leave them written.
        kinds = {json.loads(x).get("kind") for x in out["stats"].split(b"\n") if x}
        check(rcs["stats"] == 0 and "table" in kinds, f"stats -R --stop-never after SIGTERM: exit {rcs['stats']}, "
              f"kinds {sorted(k for k in kinds if k)}: {err['stats'][-300:]}")

        # b. dump -R: real file names, the same events as dump of the server's own files.
        seen = []
        for line in out["dump"].split(b"\n"):
            if line:
                e = json.loads(line)
                seen.append((e["log_name"], e["pos"]))
        names = sorted({n for n, _ in seen})
        check(not [n for n in names if "#" in n], f"dump -R --stop-never named files {names}")
        ref = subprocess.run([binary, "dump", "--format", "json", *[os.path.join(srv.data, n) for n in files]],
                             capture_output=True)
        want = [(json.loads(x)["log_name"], json.loads(x)["pos"]) for x in ref.stdout.split(b"\n") if x]
        check(seen == want, f"dump -R --stop-never: {len(seen)} events, the server's files {len(want)}; first "
              f"difference at {next((k for k, (x, y) in enumerate(zip(seen, want)) if x != y), None)}")

        # c. The lost-connection messages name the file being read and an offset in it.
        for n in ("fetch", "dump", "verify"):
            lost = [line for line in err[n].split("\n") if "reconnecting in" in line]
            check(lost, f"{n}: no reconnect reported: {err[n][:300]}")
            if lost and crashed:
                # The file the follower was reading when the server died: the one the server was
                # writing, or one before it (a follower may lag: fetch syncs every transaction,
                # and on a loaded machine dump and verify fall behind too; the test asserts no
                # speed); not the first, on which every connection started.
                m = re.search(r"reading (\S+) at (\d+)", lost[0])
                at = m.group(1) if m else ""
                nxt = files[files.index(crashed[0]) + 1] if after_rotate else crashed[0]
                check(m is not None and at in files and at != first and at <= nxt and
                      4 <= int(m.group(2)) <= sizes[at],
                      f"{n}: the lost connection is reported as {lost[0]!r}; the server died in {crashed[0]}")

        # e. verify -R: the crash seen from the server going on past the file's end.
        found = [json.loads(x) for x in out["verify"].split(b"\n") if x and b'"check"' in x]
        check([(f["check"], f["log_name"]) for f in found] == want_crash,
              f"verify -R --stop-never across the crash found {[(f['check'], f['log_name'], f['pos']) for f in found]}")

        # e. Without --stop-never: the crashed file and the next one named.
        if crashed:
            nxt = files[files.index(crashed[0]) + 1]
            p = subprocess.run([binary, "verify", "--format", "json", *remote, crashed[0], nxt], capture_output=True,
                               env=env, timeout=60)
            found = [json.loads(x) for x in p.stdout.split(b"\n") if x and b'"check"' in x]
            check(p.returncode == 0 and [(f["check"], f["log_name"]) for f in found] == want_crash,
                  f"verify -R {crashed[0]} {nxt}: exit {p.returncode}, {found}")

        # a. fetch: the backup is the server's files, the crashed one complete; verify finds the crash.
        got = sorted(os.listdir(bk))
        check(got == sorted(files[:-1] + [last + ".partial"]), f"the backup holds {got}; the server {files}")
        for n in files[:-1]:
            if n in got:
                a, b = open(os.path.join(bk, n), "rb").read(), flag_cleared(n)
                check(a == b, f"backup {n}: {len(a)} bytes differ from the server's {len(b)}")
        check(("the server never closed it" in err["fetch"]) != after_rotate,
              f"fetch on the crash (after its ROTATE: {after_rotate}): {err['fetch'][:600]}")
        local = subprocess.run([binary, "verify", "--format", "json", bk], capture_output=True)
        found = [json.loads(x) for x in local.stdout.split(b"\n") if x and b'"check"' in x]
        check(local.returncode == 0 and [(f["check"], f["severity"], f["log_name"]) for f in found]
              == [(c, "warning", n) for c, n in want_crash],
              f"verify of the backup: exit {local.returncode}, {found}")
        on_server = subprocess.run([binary, "verify", "--format", "json", *[os.path.join(srv.data, n) for n in files[:-1]]],
                                   capture_output=True)
        check(on_server.stdout == local.stdout, "verify of the server's files and of the backup differ:\n"
              f"{on_server.stdout[-400:]!r}\n{local.stdout[-400:]!r}")

        # a. A backup as fetch used to leave it: the crashed file as NAME.partial mid-chain (its
        # in-use flag cleared, as the server sent it), later files complete. fetch repairs it.
        old = os.path.join(tmp, "old-backup")
        os.mkdir(old)
        for n in files[:-1]:
            b = bytearray(open(os.path.join(srv.data, n), "rb").read())
            if crashed and n == crashed[0]:
                b[21] &= 0xFE
                open(os.path.join(old, n + ".partial"), "wb").write(b)
            else:
                open(os.path.join(old, n), "wb").write(b)
        b = bytearray(open(os.path.join(srv.data, last), "rb").read())
        b[21] &= 0xFE
        open(os.path.join(old, last + ".partial"), "wb").write(b[:len(b) // 2])
        p = subprocess.run([binary, "fetch", "--format", "json", "--result-dir", old, *remote[1:]], capture_output=True,
                           env=env, timeout=60)
        got = sorted(os.listdir(old))
        check(p.returncode == 0 and got == sorted(files[:-1] + [last + ".partial"]),
              f"fetch on the old backup: exit {p.returncode}, holds {got}: {p.stderr[-400:]!r}")
        for n in files[:-1]:
            if n in got:
                check(open(os.path.join(old, n), "rb").read() == flag_cleared(n),
                      f"repaired backup: {n} differs from the server's")
        again = subprocess.run([binary, "verify", "--format", "json", old], capture_output=True)
        check(again.returncode == 0 and again.stdout == local.stdout,
              f"verify of the repaired backup: exit {again.returncode} {again.stdout[-300:]!r}")

        # f. A crash inside a transaction: the server had written part of it when it died (a kill
        # during the write of a large transaction, or a power loss with sync_binlog=0 losing the
        # file's tail: here the tail is cut at an event boundary inside the last transaction
        # while the server is down). On restart it rolls the transaction back and gives its GTID
        # to the next one. That is the server's rule, not damage: verify, local and -R, reports
        # one server_crash warning naming the rolled-back transaction, and serve hands replicas
        # the file as the server does.
        srv.rows("CREATE TABLE shop.m (id INT PRIMARY KEY, v INT); INSERT INTO shop.m VALUES (1, 1), (2, 2);"
                 "BEGIN; INSERT INTO shop.m VALUES (3, 3); UPDATE shop.m SET v = v + 10 WHERE id = 1;"
                 "DELETE FROM shop.m WHERE id = 2; COMMIT;")
        cut_file = srv.binlogs()[-1]
        srv.proc.kill()
        srv.proc.wait()
        srv.proc = None
        cut_path = os.path.join(srv.data, cut_file)
        evs = [json.loads(x) for x in subprocess.run([binary, "dump", "--format", "json", cut_path],
                                                    capture_output=True).stdout.split(b"\n") if x]
        g = max(i for i, e in enumerate(evs) if e["event_type"] == "Gtid")
        w = next(i for i in range(g, len(evs)) if evs[i]["event_type"].startswith("Write_rows"))
        cut_at, open_gtid = evs[w + 1]["pos"], evs[g]["info"].split()[-1]
        with open(cut_path, "r+b") as fh:
            fh.truncate(cut_at)
        srv.start()
        srv.rows("INSERT INTO shop.m VALUES (4, 4);")
        chain = srv.binlogs()
        after = chain[chain.index(cut_file) + 1:]
        # The engine may have committed the transaction before the kill (its binlog tail is what
        # was lost then); either way the server's binlog state leaves it out and reuses its GTID.
        left = srv.rows("SELECT id, v FROM shop.m ORDER BY id")
        reused = subprocess.run([binary, "dump", "--format", "json", os.path.join(srv.data, after[0])],
                                capture_output=True).stdout
        check(f"BEGIN GTID {open_gtid}".encode() in reused, f"f: the server should have reused {open_gtid}")
        print(f"note: after the crash inside {open_gtid}, the server's table holds {left}")
        span = [cut_file] + after[:1]
        want = [("server_crash", "warning", cut_file)]
        for how, args in (("local", [os.path.join(srv.data, n) for n in span]), ("-R", [*remote, *span])):
            p = subprocess.run([binary, "verify", "--format", "json", *args], capture_output=True, env=env, timeout=60)
            found = [json.loads(x) for x in p.stdout.split(b"\n") if x and b'"check"' in x]
            check(p.returncode == 0 and [(f["check"], f["severity"], f["log_name"]) for f in found] == want and
                  f"{open_gtid}) begun at {evs[g]['pos']} has no COMMIT" in found[0]["message"],
                  f"f: verify {how} of {span} across a crash inside {open_gtid}: exit {p.returncode}, {found}")
        # convert (and stats) end the cut-off transaction (ROLLBACK, a CUT_OFF record) with a warning
        # that names the crash: exit 0, not the error of a file that lost its tail. (The whole chain:
        # its DDL gives the SQL its column names.)
        upto = chain[:chain.index(after[0]) + 1]
        for how, args in (("local", [os.path.join(srv.data, n) for n in upto]), ("-R", [*remote, *upto])):
            for fmt_, mark in (("sql", b"ROLLBACK; # cut off: "), ("json", b'"type":"CUT_OFF"')):
                p = subprocess.run([binary, "convert", "--format", fmt_, *args], capture_output=True, env=env, timeout=60)
                check(p.returncode == 0 and p.stdout.count(mark) == 1 and b"warning: transaction_structure" in p.stderr
                      and b"cut off by a crash of its server" in p.stderr,
                      f"f: convert --format {fmt_} {how} across a crash inside {open_gtid}: exit {p.returncode}, "
                      f"{p.stderr[-300:]!r}")
        # serve: a copy of the server's files, read with mariadb-binlog -R --raw from both servers.
        served = os.path.join(tmp, "served")
        os.mkdir(served)
        for n in chain:
            shutil.copyfile(os.path.join(srv.data, n), os.path.join(served, n))
        ssock = os.path.join(tmp, "serve.sock")
        serr = open(os.path.join(tmp, "serve.err"), "wb")
        sv = subprocess.Popen([binary, "serve", "--socket", ssock, "--user", "repl", "--password=secret",
                               "--server-id", "1", served], stderr=serr)
        procs.append(sv)
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(ssock):
            time.sleep(0.05)
        raws = {}
        for who, sock in (("server", srv.sock), ("serve", ssock)):
            d = os.path.join(tmp, "raw-" + who)
            os.mkdir(d)
            r = subprocess.run([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "--socket=" + sock,
                                "-u", "repl", "-psecret", "--to-last-log", "--result-file=" + d + "/", cut_file],
                               capture_output=True, timeout=60)
            check(r.returncode == 0, f"f: mariadb-binlog -R --raw from {who}: exit {r.returncode} {r.stderr[-300:]!r}")
            raws[who] = {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}
        check(raws["server"] and raws["server"] == raws["serve"],
              f"f: mariadb-binlog -R --raw across the crash: the server sent "
              f"{ {n: len(b) for n, b in raws['server'].items()} }, serve "
              f"{ {n: len(b) for n, b in raws['serve'].items()} }: {open(os.path.join(tmp, 'serve.err'), 'rb').read()[-300:]!r}")
        sv.send_signal(signal.SIGTERM)
        sv.wait(30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        srv.stop()
        if not failures:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"live_restart: {len(failures)} failures, {time.time() - t0:.1f} s" + ("" if not failures else f" (kept {tmp})"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
