#!/usr/bin/env python3
"""binlogctl serve benchmarks (issue 31, Speed); run through bench/serve.sh.

usage: serve_bench.py BINLOGCTL OUT_DIR FILE... [--parts pitr,raw,rss,fanout] [--legs pipe,sql,relay,serve (in that order)] [--repeat N]

FILE...: closed MariaDB binlog files of one chain, in order (e.g. bench/work/mariadb-256mb/
mariadb-bin.000001 from bench/make-large-binlog.sh --size-mb 256). Everything runs on private
servers (tests/cli/mdb.py: own datadir and socket, TCP on 127.0.0.1 at free ports).

pitr  Point-in-time recovery of the whole chain into a fresh server (same template datadir, same
      options for all: innodb_flush_log_at_trx_commit=1, sync_binlog=1, log-bin with
      log_slave_updates, 1 GiB buffer pool, server-id 2), three ways in the same run:
        pipe    mariadb-binlog FILE... | mariadb           (wall time of the pipe)
        relay   the files copied in as the server's relay logs, CHANGE MASTER TO RELAY_LOG_FILE,
                RELAY_LOG_POS=4, MASTER_LOG_FILE, MASTER_LOG_POS=4 (named, see the issue),
                slave_parallel_threads=4, START SLAVE SQL_THREAD    (START to the last GTID applied)
        serve   binlogctl serve FILE...; CHANGE MASTER TO its port, MASTER_USE_GTID=slave_pos,
                slave_parallel_threads=4, START SLAVE                (START to the last GTID applied)
      The CHECKSUM TABLE of every table must be the same after all three.
raw   mariadb-binlog -R --raw of the first file from a real mariadbd (the file hard-linked as its
      binlog) and from serve, REPEAT times each, alternating; the copies must equal the file.
rss   serve's peak RSS (/usr/bin/time -f %M) while 8 real replicas (mariadbd, IO thread only, so
      that the 8 only receive) each read the whole chain into their relay logs.
fanout  (issue 33) a real mariadbd upstream holding the chain as its binlogs (hard-linked); 8
      `mariadb-binlog -R --raw --stop-never` clients at once read the whole chain, REPEAT rounds,
      the two ways alternating: from the upstream itself, and through `binlogctl serve --upstream`
      (started with the clients: it fetches the chain into a fresh --result-dir while it fans it
      out, default --quota). Per way: wall time until all 8 copies are whole (each compared with
      the file), CPU seconds of the upstream mariadbd and of serve (utime+stime from /proc), and
      serve's peak RSS (VmHWM).
"""
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import mdb  # noqa: E402
import support  # noqa: E402

HAVE_SERVE = True
TARGET_ARGS = ["--server-id=2", "--innodb-flush-log-at-trx-commit=1", "--sync-binlog=1", "--log-bin=target-bin",
               "--log-slave-updates=ON", "--innodb-buffer-pool-size=1G", "--innodb-log-file-size=512M",
               "--slave-parallel-threads=4", "--max-allowed-packet=1G", "--relay-log=relay-bin",
               "--skip-slave-start"]


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


STARTED = []  # every process started here, killed on the way out whatever happens
_mdb_start = mdb.Server.start


def _start_and_track(self, *args):
    _mdb_start(self, *args)
    STARTED.append(self.proc)


mdb.Server.start = _start_and_track


class Serve(support.Serve):
    """binlogctl serve --port 0 on `files` (or with `args` instead), stderr in ROOT/serve.err; when
    timed, under /usr/bin/time for its peak RSS (stop() returns it). Exits the bench when serve does
    not start."""

    def __init__(self, binary, files, root, timed=False, args=None):
        os.makedirs(root, exist_ok=True)
        self.err = os.path.join(root, "serve.err")
        self.timefile = os.path.join(root, "serve.time")
        open(self.err, "wb").close()  # a fresh log: start() reads the port from it
        super().__init__(binary, self.err, ["--server-id", "1", *files] if args is None else args,
                         prefix=["/usr/bin/time", "-o", self.timefile, "-f", "%M"] if timed else [])
        try:
            self.start(0, timeout=60, check_port=False)
        except support.ServeStartError as e:
            if self.proc is not None:
                STARTED.append(self.proc)
            sys.exit(str(e))
        STARTED.append(self.proc)

    def stop(self):
        # under /usr/bin/time: signal serve itself (time dies of SIGTERM before writing its figure)
        kids = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout.split()
        for k in kids or [str(self.proc.pid)]:
            os.kill(int(k), signal.SIGTERM)
        self.proc.wait(60)
        if os.path.exists(self.timefile):
            return int(open(self.timefile).read().split()[-1])
        return None


def last_gtid(binary, files):
    r = subprocess.run([binary, "verify", "--format", "json", *files], capture_output=True, timeout=3600)
    for line in r.stdout.decode().split("\n"):
        if '"summary"' in line:
            return json.loads(line)["summary"]["gtid_executed"]
    sys.exit("verify gave no summary: " + r.stderr.decode()[-500:])


def checksums(srv):
    dbs = [r[0] for r in srv.rows("SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN "
                                  "('mysql','information_schema','performance_schema','sys')")]
    out = {}
    for d in dbs:
        for (t,) in srv.rows(f"SELECT table_name FROM information_schema.tables WHERE table_schema='{d}'"):
            out[f"{d}.{t}"] = srv.rows(f"CHECKSUM TABLE `{d}`.`{t}`")[0][1]
    return out


def wait_gtid(srv, target, what, limit=7200):
    deadline = time.time() + limit
    while time.time() < deadline:
        pos = srv.query("SELECT @@gtid_slave_pos").strip()
        if pos == target:
            return time.time()
        st = srv.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace")
        if re.search(r"Last_SQL_Errno: [1-9]", st) or re.search(r"Slave_SQL_Running: No", st):
            sys.exit(f"{what}: the replica stopped:\n{st}")
        time.sleep(0.25)
    sys.exit(f"{what}: not done in {limit} s")


def fresh_target(template, root, name):
    d = os.path.join(root, name)
    os.makedirs(d)
    shutil.copytree(template, os.path.join(d, "data"), symlinks=True)
    srv = mdb.Server(d, TARGET_ARGS)
    srv.installed = True
    return srv


def pitr(binary, files, root, gtid, legs):
    log("pitr: template datadir")
    tpl = mdb.Server(os.path.join(root, "template"))
    os.makedirs(tpl.dir)
    tpl.install()
    results, sums = {}, {}

    def piped(name, what, producer):
        srv = fresh_target(tpl.data, root, name)
        srv.start()
        log(f"pitr: {what} FILES | mariadb")
        t = time.time()
        prod = subprocess.Popen(producer, stdout=subprocess.PIPE)
        client = subprocess.run(srv.client_args(["--binary-mode"]), stdin=prod.stdout, capture_output=True)
        prod.wait()
        results[name] = time.time() - t
        if client.returncode or prod.returncode:
            sys.exit(f"{name} failed: " + client.stderr.decode()[-1000:])
        return srv

    def leg_pipe():
        return piped("pipe", "mariadb-binlog", [mdb.find("mariadb-binlog"), "--no-defaults", *files])

    def leg_sql():
        return piped("sql", "binlogctl convert --format sql", [binary, "convert", "--format", "sql", *files])

    def leg_relay():
        srv = fresh_target(tpl.data, root, "relay")
        names = []
        for i, f in enumerate(files, 1):
            n = f"relay-bin.{i:06d}"
            try:
                os.link(f, os.path.join(srv.data, n))
            except OSError:
                shutil.copy(f, os.path.join(srv.data, n))
            names.append(n)
        with open(os.path.join(srv.data, "relay-bin.index"), "w") as fh:
            fh.write("".join(f"./{n}\n" for n in names))
        srv.start()
        srv.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=1, MASTER_USER='none', "
                f"RELAY_LOG_FILE='{names[0]}', RELAY_LOG_POS=4, MASTER_LOG_FILE='{os.path.basename(files[0])}', "
                "MASTER_LOG_POS=4")
        log("pitr: relay-log trick")
        t = time.time()
        srv.sql("START SLAVE SQL_THREAD")
        results["relay"] = wait_gtid(srv, gtid, "relay") - t
        return srv

    def leg_serve():
        srv = fresh_target(tpl.data, root, "serve")
        srv.start()
        sv = Serve(binary, files, os.path.join(root, "serve"))
        srv.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={sv.port}, MASTER_USER='repl', "
                "MASTER_PASSWORD='secret', MASTER_USE_GTID=slave_pos")
        log("pitr: serve + replica")
        t = time.time()
        srv.sql("START SLAVE")
        results["serve"] = wait_gtid(srv, gtid, "serve") - t
        sv.stop()
        return srv

    ways = {"pipe": leg_pipe, "sql": leg_sql, "relay": leg_relay, "serve": leg_serve}
    for name in legs:  # in the order given
        leg = ways[name]
        if name == "serve" and not HAVE_SERVE:
            continue
        srv = leg()
        sums[name] = checksums(srv)
        srv.stop()
        shutil.rmtree(srv.data)
    vals = list(sums.values())
    same = all(v == vals[0] for v in vals) and len(vals[0]) > 0
    return results, same, len(vals[0])


def raw(binary, files, root, repeat):
    f = files[0]
    name = os.path.basename(f)
    d = os.path.join(root, "rawsrv")
    os.makedirs(d)
    srv = mdb.Server(d, ["--server-id=1"], tcp=True)
    srv.install()
    try:
        os.link(f, os.path.join(srv.data, name))
    except OSError:
        shutil.copy(f, os.path.join(srv.data, name))
    stem = name.rsplit(".", 1)[0]
    with open(os.path.join(srv.data, stem + ".index"), "w") as fh:
        fh.write(f"./{name}\n")
    srv.start(f"--log-bin={stem}", "--binlog-checksum=CRC32", "--max-allowed-packet=1G")
    srv.sql("CREATE USER repl@'%' IDENTIFIED BY 'secret'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%'")
    sv = Serve(binary, [f], os.path.join(root, "rawserve")) if HAVE_SERVE else None
    times = {"mariadbd": [], "serve": []} if HAVE_SERVE else {"mariadbd": []}
    rss = {"mariadbd": 0, "serve": 0}
    for _ in range(repeat):
        for who, port in (("mariadbd", srv.port), ("serve", sv.port if sv else 0))[:len(times)]:
            out = os.path.join(root, "rawout")
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            tf = os.path.join(root, "raw.time")
            t = time.time()
            r = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%M", mdb.find("mariadb-binlog"), "--no-defaults",
                                "-R", "--raw", "-h", "127.0.0.1", "-P", str(port), "-u", "repl", "-psecret",
                                "--result-file=" + out + "/", name], capture_output=True)
            times[who].append(time.time() - t)
            if r.returncode or subprocess.run(["cmp", os.path.join(out, name), f]).returncode:
                sys.exit(f"raw from {who}: exit {r.returncode}, or the copy differs: {r.stderr.decode()[-500:]}")
    srv.stop()
    if sv:
        sv.stop()
    size = os.path.getsize(f)
    return {k: (statistics.median(v), size / 1e6 / statistics.median(v)) for k, v in times.items()}, size


def last_counted_end(path):
    """Where a replica's Read_Master_Log_Pos ends for a closed file: its size, or the start of the
    STOP event that ends a file closed by a shutdown (a replica's IO thread does not count it)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        for stop_size in (23, 19):  # with and without CRC32
            if size >= 4 + stop_size:
                f.seek(size - stop_size)
                h = f.read(19)
                if h[4] == 3 and struct.unpack_from("<I", h, 9)[0] == stop_size:
                    return size - stop_size
    return size


def rss(binary, files, root, n=8):
    sv = Serve(binary, files, os.path.join(root, "rss"), timed=True)
    reps = []
    short = tempfile.mkdtemp(prefix="bsr-")  # unix socket paths must stay short
    for i in range(n):
        r = mdb.Server(os.path.join(short, f"r{i}"), [f"--server-id={10 + i}", "--relay-log=relay-bin",
                                                        "--skip-slave-start", "--innodb-buffer-pool-size=16M"])
        os.makedirs(r.dir)
        reps.append(r)
    for r in reps:  # one after the other: eight mariadbd starting at once time out on two cores
        r.start()
    total = sum(os.path.getsize(f) for f in files)
    t0 = time.time()
    for r in reps:
        r.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={sv.port}, MASTER_USER='repl', "
              f"MASTER_PASSWORD='secret', MASTER_LOG_FILE='{os.path.basename(files[0])}', MASTER_LOG_POS=4; "
              "START SLAVE IO_THREAD")
    last = os.path.basename(files[-1])
    want = last_counted_end(files[-1])
    deadline = time.time() + 3600
    while time.time() < deadline:
        done = 0
        for r in reps:
            st = r.sql("SHOW SLAVE STATUS\\G").stdout.decode(errors="replace")
            m = re.search(r"Master_Log_File: (\S+)", st)
            p = re.search(r"Read_Master_Log_Pos: (\d+)", st)
            if m and p and m.group(1) == last and int(p.group(1)) >= want:
                done += 1
        if done == n:
            break
        time.sleep(0.5)
    elapsed = time.time() - t0
    peak = sv.stop()
    for r in reps:
        r.stop()
    shutil.rmtree(short, ignore_errors=True)
    return peak, elapsed, total, done


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (/proc/PID/stat)."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def vm_hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def fanout(binary, files, root, repeat, n=8):
    d = os.path.join(root, "upstream")
    os.makedirs(d)
    up = mdb.Server(d, ["--server-id=1"], tcp=True)
    up.install()
    names = [os.path.basename(f) for f in files]
    for f, name in zip(files, names):
        try:
            os.link(f, os.path.join(up.data, name))
        except OSError:
            shutil.copy(f, os.path.join(up.data, name))
    stem = names[0].rsplit(".", 1)[0]
    with open(os.path.join(up.data, stem + ".index"), "w") as fh:
        fh.writelines(f"./{x}\n" for x in names)
    up.start(f"--log-bin={stem}", "--binlog-checksum=CRC32", "--max-allowed-packet=1G")
    up.sql("CREATE USER repl@'%' IDENTIFIED BY 'secret'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%'")
    sizes = {name: os.path.getsize(f) for f, name in zip(files, names)}
    res = {"mariadbd": [], "relay": []}

    def leg(way):
        out = os.path.join(root, "fanout")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        serve, peak, serve_cpu = None, 0, 0.0
        port = up.port
        cpu0 = cpu_seconds(up.proc.pid)
        t0 = time.time()
        if way == "relay":
            relay = Serve(binary, [], out,
                          args=["--upstream", f"127.0.0.1:{up.port}", "--upstream-user", "repl",
                                "--upstream-password=secret", "--result-dir", os.path.join(out, "dir")])
            serve, port = relay.proc, relay.port
        clients = []
        for i in range(n):
            cd = os.path.join(out, f"c{i}")
            os.makedirs(cd)
            p = subprocess.Popen([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "--stop-never",
                                  "-h", "127.0.0.1", "-P", str(port), "-u", "repl", "-psecret",
                                  f"--stop-never-slave-server-id={100 + i}", "--result-file=" + cd + "/", names[0]],
                                 stdout=subprocess.DEVNULL, stderr=open(cd + ".err", "wb"))
            STARTED.append(p)
            clients.append((p, cd))
        deadline = time.time() + 3600
        while time.time() < deadline:
            if serve is not None:
                peak = max(peak, vm_hwm(serve.pid))
            if all(all(os.path.exists(os.path.join(cd, x)) and os.path.getsize(os.path.join(cd, x)) >= sizes[x]
                       for x in names) for _, cd in clients):
                break
            for p, cd in clients:
                if p.poll() is not None:
                    sys.exit(f"fanout ({way}): a client exited {p.returncode}: {open(cd + '.err').read()[-500:]}")
            time.sleep(0.05)
        elapsed = time.time() - t0
        up_cpu = cpu_seconds(up.proc.pid) - cpu0
        if serve is not None:
            peak = max(peak, vm_hwm(serve.pid))
            serve_cpu = cpu_seconds(serve.pid)
            serve.send_signal(signal.SIGTERM)
            serve.wait(60)
        for p, _ in clients:
            p.kill()
            p.wait()
        for _, cd in clients:
            for f, x in zip(files, names):
                if subprocess.run(["cmp", "-n", str(sizes[x]), os.path.join(cd, x), f],
                                  stdout=subprocess.DEVNULL).returncode:
                    sys.exit(f"fanout ({way}): {cd}/{x} differs from {f}")
        shutil.rmtree(out, ignore_errors=True)
        return elapsed, up_cpu, serve_cpu, peak

    for _ in range(repeat):
        for way in ("mariadbd", "relay"):
            res[way].append(leg(way))
            log(f"fanout {way}: {res[way][-1]}")
    up.stop()
    return res, sum(sizes.values())


def main():
    args = sys.argv[1:]
    parts, repeat, legs = {"pitr", "raw", "rss"}, 3, ["pipe", "sql", "relay", "serve"]
    if "--legs" in args:
        i = args.index("--legs")
        legs = [w for w in args[i + 1].split(",") if w]
        if any(w not in ("pipe", "sql", "relay", "serve") for w in legs):
            sys.exit("--legs: pipe, sql, relay, serve")
        del args[i:i + 2]
    if "--parts" in args:
        i = args.index("--parts")
        parts = set(args[i + 1].split(","))
        del args[i:i + 2]
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i:i + 2]
    binary, out, files = os.path.abspath(args[0]), args[1], [os.path.abspath(f) for f in args[2:]]
    global HAVE_SERVE
    HAVE_SERVE = subprocess.run([binary, "serve", "--help"], capture_output=True).returncode == 0
    if not HAVE_SERVE:
        print("note: this binlogctl has no serve: only the legs without it are run")
    os.makedirs(out, exist_ok=True)
    root = tempfile.mkdtemp(prefix="binlogctl-serve-bench-", dir=out)
    total = sum(os.path.getsize(f) for f in files)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"input: {' '.join(files)} ({total} bytes); {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{os.cpu_count()} x {cpu}; load {open('/proc/loadavg').read().split()[0]}; "
          f"{subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.strip()}")
    for f in files:
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL)
    try:
        if "pitr" in parts:
            gtid = last_gtid(binary, files)
            res, same, ntables = pitr(binary, files, root, gtid, legs)
            print(f"pitr to {gtid} ({ntables} tables, CHECKSUM TABLE equal after each way: {same}):")
            for k in res:
                print(f"  {k:6} {res[k]:8.1f} s  {total / 1e6 / res[k]:7.1f} MB/s")
            if "serve" in res and "pipe" in res and "relay" in res:
                print(f"  serve vs pipe: {res['pipe'] / res['serve']:.2f}x faster; serve vs relay-log trick: "
                      f"{100 * (res['serve'] / res['relay'] - 1):+.0f}% time")
            if "sql" in res and "pipe" in res:
                print(f"  binlogctl convert --format sql | mariadb vs pipe: {res['pipe'] / res['sql']:.2f}x faster")
        if "raw" in parts:
            res, size = raw(binary, files, root, repeat)
            print(f"mariadb-binlog -R --raw of {os.path.basename(files[0])} ({size} bytes), medians of {repeat}:")
            for k, (t, mbs) in res.items():
                print(f"  from {k:8} {t:7.2f} s  {mbs:7.1f} MB/s")
            if HAVE_SERVE:
                print(f"  serve / mariadbd rate: {100 * res['mariadbd'][0] / res['serve'][0]:.0f}%")
        if "fanout" in parts and HAVE_SERVE:
            res, size = fanout(binary, files, root, repeat)
            mb = 8 * size / 1e6
            print(f"8 clients (mariadb-binlog -R --raw) each reading {size} bytes, medians of {repeat} "
                  f"(wall s, MB/s delivered, upstream CPU s, serve CPU s, CPU ms per MB delivered, serve peak RSS):")
            for way, rows in res.items():
                w = statistics.median(r[0] for r in rows)
                uc = statistics.median(r[1] for r in rows)
                sc = statistics.median(r[2] for r in rows)
                pk = max(r[3] for r in rows)
                print(f"  from {way:8} {w:7.2f} s {mb / w:8.1f} MB/s  upstream {uc:6.2f} s  serve {sc:6.2f} s  "
                      f"{1000 * (uc + sc) / mb:6.2f} ms/MB  " + (f"RSS {pk / 2**20:.1f} MiB" if pk else ""))
            m, r = statistics.median(x[0] for x in res["mariadbd"]), statistics.median(x[0] for x in res["relay"])
            print(f"  relay / mariadbd throughput: {100 * m / r:.0f}%; every round: "
                  + ", ".join(f"{a[0]:.1f}/{b[0]:.1f} s" for a, b in zip(res["mariadbd"], res["relay"])))
        if "rss" in parts and HAVE_SERVE:
            peak, elapsed, total2, done = rss(binary, files, root)
            print(f"8 replicas (IO thread) reading {total2} bytes each: {done}/8 done in {elapsed:.1f} s; "
                  f"serve peak RSS {peak / 1024 if peak else float('nan'):.1f} MiB")
    finally:
        for p in STARTED:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
