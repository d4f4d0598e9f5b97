#!/usr/bin/env python3
"""binlogctl serve --upstream (issue 33), the relay, proved with real parts.

usage: relay.py BINLOGCTL

One private upstream mariadbd (server-id 1, ROW, CRC32, 1 MiB binlogs) under a bounded write workload
(small transactions, and now and then one of ~150 KB, FLUSH BINARY LOGS now and then). `binlogctl serve
--upstream` fetches it into a directory over its unix socket and serves that directory with a small
--quota (256K) to three downstream clients, connected before the workload starts:

  replica   a private mariadbd replica (slave_parallel_threads=4) by GTID
  slow      mariadb-binlog -R --raw --stop-never through a proxy that reads at 600 KB/s
  stall     mariadb-binlog -R --raw --stop-never through a proxy that stops reading for 30 s (the
            issue's stall; the workload ends inside it) and then reads at full speed

Paths pause at 60% of the quota here (--path-pause 0.6 --path-resume 0.3): the relay stops feeding a
paused path at once (there is no control delay between the engine and the tail), so with the seed's 20%
three replicas could never take the tail to its area pause (80%) or its hard limit (150%).

Checks:
  - every raw client's files are byte-identical to the directory's and to the upstream's own files
    (every file the upstream closed);
  - the replica's tables equal the upstream's (CHECKSUM TABLE), gtid_slave_pos = gtid_binlog_pos;
  - the status file reports path pauses and resumes, an area pause and resume (fetch held), circuit
    breaks or stall releases, and resets, for the replicas that went through them;
  - the area's accounted peak stays under the hard limit plus the largest event (peak_pending), and
    serve's peak RSS (VmHWM) under the hard limit plus 64 MiB (the binary, its libraries, fetch's 1 MiB
    write buffer, per-session 1 MiB buffers and the file readers' chunks: measured ~16 MiB; not
    checked under AddressSanitizer, whose shadow memory takes it to ~165 MiB);
  - the timeline (--timeline) holds replay's records: pause_path, resume_path, pause_area, reset;
    --plot writes replay's SVG when serve stops.

BINLOGCTL_RELAY_BREAK=name,... makes a named check compare against a wrong value (raw, replica, status,
rss). Exits 77 when mariadbd or serve is absent.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import mdb
import support

SKIP = 77
USER, PW = "repl", "secret"
BREAK = set(os.environ.get("BINLOGCTL_RELAY_BREAK", "").split(","))
QUOTA = 256 * 1024
HARD = QUOTA * 3 // 2
UPSTREAM_ARGS = ("--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW", "--binlog-checksum=CRC32",
                 "--max-binlog-size=1M")


class Fail(Exception):
    pass


class Proxy(support.TcpProxy):
    """127.0.0.1:port -> 127.0.0.1:target; what comes back is read at `rate` bytes/s (0: no limit), and
    not at all from `stall_from` to `stall_from + stall` seconds after the first byte."""

    def __init__(self, target, rate=0, stall_from=None, stall=0):
        super().__init__(target, backlog=4, rcvbuf=32 * 1024)
        self.rate, self.stall_from, self.stall = rate, stall_from, stall
        self.stop = False
        self.stalled_seen = False
        self.start()

    def accepting(self):
        return not self.stop

    def pump(self, a, b, down):
        rate, stall_from = (self.rate, self.stall_from) if down else (0, None)
        t0 = None
        sent = 0
        try:
            while not self.stop:
                if t0 is not None and stall_from is not None and \
                        stall_from <= time.time() - t0 < stall_from + self.stall:
                    self.stalled_seen = True
                    time.sleep(0.05)
                    continue
                d = a.recv(16384)
                if not d:
                    break
                if t0 is None:
                    t0 = time.time()
                b.sendall(d)
                sent += len(d)
                if rate:
                    ahead = sent / rate - (time.time() - t0)
                    if ahead > 0:
                        time.sleep(ahead)
        except OSError:
            pass
        support.shut(a, b)


def workload(up, rounds):
    """Small transactions, a ~150 KB one every 10th round, a FLUSH BINARY LOGS every 40th."""
    parts = []
    for i in range(rounds):
        parts.append(f"INSERT INTO w.t (id, v, b) VALUES ({i * 10 + 1}, {i}, REPEAT('s', 200));")
        parts.append(f"BEGIN; UPDATE w.t SET v = v + 1 WHERE id = {i * 10 + 1}; "
                     f"INSERT INTO w.t (id, v, b) VALUES ({i * 10 + 2}, {i}, 'x'); COMMIT;")
        if i % 10 == 5:
            parts.append(f"INSERT INTO w.big (n, b) SELECT seq + {i * 1000}, REPEAT(CHAR(65 + seq % 26), 1000) "
                         f"FROM w.seq_1_to_150;")
        if i % 40 == 39:
            parts.append("FLUSH BINARY LOGS;")
        parts.append("DO SLEEP(0.03);")
    up.sql("\n".join(parts))


def vm_hwm(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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

    tmp = tempfile.mkdtemp(prefix="binlogctl-relay-")
    up = mdb.Server(os.path.join(tmp, "upstream"), UPSTREAM_ARGS)
    rep = mdb.Server(os.path.join(tmp, "replica"), ["--server-id=2"])
    os.makedirs(up.dir)
    os.makedirs(rep.dir)
    serve = None
    raws = []
    proxies = []
    try:
        step("upstream and replica: install, start")
        up.start()
        up.sql("CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, v INT, b VARCHAR(300)); "
               "CREATE TABLE w.big (n INT PRIMARY KEY, b VARCHAR(1000));")
        rep.start("--slave-parallel-threads=4", "--relay-log=relay-bin", "--slave-net-timeout=10")

        step("serve --upstream")
        result = os.path.join(tmp, "dir")
        status_file = os.path.join(tmp, "status.json")
        timeline = os.path.join(tmp, "timeline.jsonl")
        plot = os.path.join(tmp, "relay.svg")
        errlog = os.path.join(tmp, "serve.err")
        launcher = support.Serve(
            binary, errlog,
            ["--upstream", "localhost",
             "--upstream-socket", up.sock, "--upstream-user", "root", "--result-dir", result,
             "--quota", str(QUOTA), "--path-pause", "0.6", "--path-resume", "0.3", "--status-file", status_file,
             "--status-interval", "0.5", "--timeline", timeline, "--plot", plot],
            USER, PW, stdout=open(os.path.join(tmp, "serve.out"), "wb"))
        try:
            port = launcher.start(0, check_port=False)
        except support.ServeStartError as e:
            raise Fail(str(e))
        finally:
            serve = launcher.proc
        first = up.binlogs()[0]

        step("downstream: replica, slow raw client, stalling raw client")
        rep.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='{USER}', "
                f"MASTER_PASSWORD='{PW}', MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                f"MASTER_USE_GTID=slave_pos; START SLAVE;")
        slow = Proxy(port, rate=600 * 1024)
        stall = Proxy(port, stall_from=1.0, stall=30.0)
        proxies += [slow, stall]
        for name, px in (("slow", slow), ("stall", stall)):
            d = os.path.join(tmp, "raw-" + name)
            os.makedirs(d)
            p = subprocess.Popen([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "--stop-never",
                                  "-h", "127.0.0.1", "-P", str(px.port), "-u", USER, "-p" + PW,
                                  "--result-file=" + d + "/", first],
                                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, name + ".err"), "wb"))
            raws.append((name, p, d))

        step("workload")
        hwm = [0]
        sampling = [True]

        def sample():
            while sampling[0]:
                hwm[0] = max(hwm[0], vm_hwm(serve.pid))
                time.sleep(0.2)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        workload(up, 200)
        up.sql("FLUSH BINARY LOGS")
        files = up.binlogs()
        closed = files[:-1]
        gtid_pos = up.query("SELECT @@gtid_binlog_pos").strip()
        sums = {t: up.rows(f"CHECKSUM TABLE w.{t}")[0][1] for t in ("t", "big")}
        sizes = {f: os.path.getsize(os.path.join(up.data, f)) for f in closed}
        step(f"upstream: {len(closed)} closed files, {sum(sizes.values()) >> 10} KiB, gtid_binlog_pos {gtid_pos}")

        step("waiting for every client to reach the end")
        deadline = time.time() + 90

        def raw_done(d):
            return all(os.path.exists(os.path.join(d, f)) and os.path.getsize(os.path.join(d, f)) >= sizes[f]
                       for f in closed)
        while time.time() < deadline:
            pos = rep.query("SELECT @@gtid_slave_pos").strip()
            if pos == gtid_pos and all(raw_done(d) for _, _, d in raws):
                break
            time.sleep(0.5)
        time.sleep(1.5)  # one more status period
        sampling[0] = False
        hwm[0] = max(hwm[0], vm_hwm(serve.pid))
        check(stall.stalled_seen, "the stalling proxy never stalled")

        # -- raw clients: byte-identical to DIR and to the upstream's files ---------------------------------
        for name, p, d in raws:
            for f in closed:
                want = open(os.path.join(up.data, f), "rb").read()
                mine = open(os.path.join(result, f), "rb").read() if os.path.exists(os.path.join(result, f)) else None
                got = open(os.path.join(d, f), "rb").read() if os.path.exists(os.path.join(d, f)) else None
                if "raw" in BREAK and f == closed[-1]:
                    want = want[:-1] + bytes([want[-1] ^ 1])
                check(mine == want, f"{f}: the relay's copy ({None if mine is None else len(mine)} bytes) is not the "
                                    f"upstream's ({len(want)} bytes)")
                check(got == want, f"{name}: {f}: {None if got is None else len(got)} bytes, not the upstream's "
                                   f"{len(want)} bytes")

        # -- the replica ------------------------------------------------------------------------------------
        pos = rep.query("SELECT @@gtid_slave_pos").strip()
        check(pos == (gtid_pos if "replica" not in BREAK else "0-1-1"),
              f"replica: gtid_slave_pos {pos} != the upstream's gtid_binlog_pos {gtid_pos}")
        got = {t: (rep.rows(f"CHECKSUM TABLE w.{t}") or [[0, None]])[0][1] for t in ("t", "big")}
        if "replica" in BREAK:
            sums = dict(sums, t="0")
        check(got == sums, f"replica: CHECKSUM TABLE {got} != the upstream's {sums}")

        # -- the status file and the timeline ------------------------------------------------------------------
        st = json.load(open(status_file))
        relay = st.get("relay", {})
        reps = [r.get("relay", {}) for r in st.get("replicas", [])]
        step("status: relay " + json.dumps(relay))
        for r in st.get("replicas", []):
            step(f"status: replica {r.get('peer')} {r.get('server_id')} " + json.dumps(r.get("relay", {})))
        want_status = 0 if "status" not in BREAK else 10 ** 9
        check(len(reps) == 3 and all(reps), f"status: three replicas with their relay state: {st.get('replicas')}")
        check(sum(r.get("pauses", 0) for r in reps) > want_status, "status: no path paused")
        check(sum(r.get("resumes", 0) for r in reps) > 0, "status: no path resumed")
        check(sum(r.get("tail_events", 0) for r in reps) > 0, "status: no replica read from the tail")
        check(relay.get("pauses", 0) > 0 and relay.get("resumes", 0) > 0 and relay.get("upstream_waits", 0) > 0,
              f"status: the area never paused and resumed (fetch held): {relay}")
        check(relay.get("circuit_breaks", 0) + relay.get("releases", 0) > 0,
              f"status: neither a circuit break nor a stall release: {relay}")
        check(relay.get("resets", 0) > 0 and sum(r.get("resets", 0) for r in reps) == relay.get("resets"),
              f"status: resets: relay {relay.get('resets')}, replicas {[r.get('resets') for r in reps]}")
        check(relay.get("hard_limit_bytes") == HARD and relay.get("quota") == QUOTA,
              f"status: thresholds {relay.get('quota')} / {relay.get('hard_limit_bytes')}")
        max_event = 256 * 1024  # the largest event of the workload is ~150 KB of rows
        check(relay.get("peak_pending", 1 << 40) <= HARD + max_event,
              f"status: peak_pending {relay.get('peak_pending')} above the hard limit {HARD} + one event")
        kinds = {}
        for line in open(timeline, "rb").read().split(b"\n"):
            if line:
                k = json.loads(line).get("kind")
                kinds[k] = kinds.get(k, 0) + 1
        step(f"timeline: {kinds}")
        for k in ("pause_path", "resume_path", "pause_area", "resume_area", "reset", "sample"):
            check(kinds.get(k, 0) > 0, f"timeline: no {k} record")

        # -- memory ----------------------------------------------------------------------------------------------
        # Under AddressSanitizer (its shadow memory and quarantine) the bound does not apply.
        asan = b"libasan" in subprocess.run(["ldd", binary], capture_output=True).stdout
        bound = HARD + (64 << 20) if "rss" not in BREAK else 1 << 20
        if asan and "rss" not in BREAK:
            bound = 1 << 40
        step(f"serve's peak RSS (VmHWM) {hwm[0] >> 10} KiB; bound {bound >> 10} KiB; "
             f"tail peak held {relay.get('peak_held_bytes')} bytes")
        check(0 < hwm[0] <= bound, f"serve's peak RSS {hwm[0]} above {bound}")

        # -- stop ------------------------------------------------------------------------------------------------
        serve.send_signal(signal.SIGTERM)
        try:
            rc = serve.wait(30)
        except subprocess.TimeoutExpired:
            rc = None
        check(rc == 0, f"serve after SIGTERM: exit {rc}")
        svg = open(plot, "rb").read() if os.path.exists(plot) else b""
        check(svg.startswith(b"<svg") or b"<svg" in svg[:200], f"--plot: {plot} is not an SVG ({len(svg)} bytes)")
        check(b"pause" in svg and b"circuit_break" in svg, "--plot: the SVG shows no pause or no circuit break")
        err = open(errlog, "rb").read().decode(errors="replace")
        check("runtime error" not in err and "AddressSanitizer" not in err, f"serve's stderr: {err[-1500:]}")
        serve = None
    except Fail as e:
        failures.append(str(e))
        print("FAIL:", e, flush=True)
    finally:
        for px in proxies:
            px.stop = True
            px.close()
        for _, p, _ in raws:
            if p.poll() is None:
                p.kill()
                p.wait()
        if serve is not None and serve.poll() is None:
            serve.kill()
            serve.wait()
        try:
            rep.sql("STOP SLAVE", check_rc=False)
        except Exception:
            pass
        rep.stop()
        up.stop()
    step(f"{checks[0]} checks, {len(failures)} failed")
    if failures:
        print(f"kept {tmp} for inspection")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
