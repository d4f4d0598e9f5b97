#!/usr/bin/env python3
"""binlogctl serve's protocol side, end to end with clients this project did not write (the big
replica suites are serve*.py): one serve on --port 0 over the basic fixture, then
  - the `listening on` line gives the port;
  - a wrong password gets ERROR 1045 from the mariadb client, an unknown user too;
  - garbage and an oversized packet get an error or a close, and serve goes on serving;
  - a client that connects and says nothing is dropped after --connect-timeout;
  - `mariadb-binlog -R --raw` writes files byte-identical to the served ones (every file);
  - the status file lists a connected replica; SIGTERM ends serve with status 0;
  - with --require-ssl: a query and a raw dump over TLS, a plain client refused with 1045.
usage: protocol_checks.py BINLOGCTL SOURCE_DIR"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

exe, src = sys.argv[1:3]
binlogs = os.path.join(src, "testdata", "mariadb-10.11", "basic", "binlogs")
client = shutil.which("mariadb")
mbinlog = shutil.which("mariadb-binlog")
if not client or not mbinlog:
    print("SKIP: mariadb or mariadb-binlog not installed")
    sys.exit(77)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


tmp = tempfile.mkdtemp(prefix="serve_protocol_")
status_file = os.path.join(tmp, "status.json")
err = open(os.path.join(tmp, "stderr"), "w+b")
proc = subprocess.Popen([exe, "serve", "--port", "0", "--user", "repl", "--password=s3cret:x", "--connect-timeout", "2",
                         "--status-file", status_file, os.path.join(binlogs, "mariadb-bin.index")],
                        stderr=err, stdout=subprocess.DEVNULL)
port = None
deadline = time.time() + 30
while time.time() < deadline and port is None:
    err.seek(0)
    for line in err.read().decode(errors="replace").split("\n"):
        if line.startswith("binlogctl serve: listening on 127.0.0.1:"):
            port = int(line.rsplit(":", 1)[1])
    if proc.poll() is not None:
        break
    time.sleep(0.05)
if port is None:
    err.seek(0)
    sys.exit("serve did not start: " + err.read().decode(errors="replace"))
check(True, "listening on 127.0.0.1:%d" % port)


def mariadb(user, password, sql):
    return subprocess.run([client, "--no-defaults", "-h127.0.0.1", "-P%d" % port, "-u" + user, "-p" + password,
                           "-N", "-B", "-e", sql], capture_output=True, text=True, timeout=30)


r = mariadb("repl", "wrong", "SELECT 1")
check(r.returncode != 0 and "ERROR 1045" in r.stderr, "wrong password -> 1045: " + r.stderr.strip())
r = mariadb("nobody", "s3cret:x", "SELECT 1")
check(r.returncode != 0 and "ERROR 1045" in r.stderr, "unknown user -> 1045")
r = mariadb("repl", "s3cret:x", "SELECT @@version_comment, @@GLOBAL.server_id")
check(r.returncode == 0 and r.stdout.strip().split("\t")[0] == "binlogctl serve", "right password, a query: " + r.stdout.strip())
r = mariadb("repl", "s3cret:x", "SHOW BINARY LOGS")
names = [line.split("\t")[0] for line in r.stdout.strip().split("\n")]
want = sorted(f for f in os.listdir(binlogs) if not f.endswith(".index"))
check(names == want, "SHOW BINARY LOGS lists the files")
r = mariadb("repl", "s3cret:x", "DROP TABLE t")
check("ERROR 1064" in r.stderr, "a statement serve does not answer -> 1064")


def raw_connection():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    hdr = s.recv(4)
    n = hdr[0] | hdr[1] << 8 | hdr[2] << 16
    body = b""
    while len(body) < n:
        body += s.recv(n - len(body))
    return s, body


def read_to_close(s):
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return data, True
            data += d
    except ConnectionResetError:  # closed with our bytes unread: a reset
        return data, True
    except socket.timeout:
        return data, False


s, hs = raw_connection()
check(hs[0] == 10 and b"5.5.5-10.11" in hs, "handshake v10 with the 5.5.5- prefix")
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 10)
data, closed = read_to_close(s)
check(closed, "garbage -> closed (%d bytes of answer)" % len(data))
s.close()

s, hs = raw_connection()
s.sendall(struct.pack("<I", 0xffffff | (1 << 24)) + b"\x00" * 1000)  # a 16 MiB packet announced
data, closed = read_to_close(s)
check(closed and len(data) > 7 and data[4] == 0xff and struct.unpack("<H", data[5:7])[0] == 1153,
      "oversized packet -> 1153 and a close")
s.close()

s, hs = raw_connection()
t0 = time.time()
data, closed = read_to_close(s)
check(closed and time.time() - t0 < 9, "a silent client is dropped after --connect-timeout (%.1f s)" % (time.time() - t0))
s.close()

r = mariadb("repl", "s3cret:x", "SELECT 1")
check(r.returncode == 0, "still serving after the bad clients")

out = os.path.join(tmp, "raw") + os.sep
os.makedirs(out)
r = subprocess.run([mbinlog, "--no-defaults", "-R", "--raw", "-h127.0.0.1", "-P%d" % port, "-urepl", "-ps3cret:x",
                    "--to-last-log", "--result-file=" + out, want[0]], capture_output=True, text=True, timeout=120)
check(r.returncode == 0, "mariadb-binlog -R --raw --to-last-log: rc %d %s" % (r.returncode, r.stderr.strip()[-300:]))
for name in want:
    got = os.path.join(out, name)
    same = os.path.exists(got) and open(got, "rb").read() == open(os.path.join(binlogs, name), "rb").read()
    check(same, "byte-identical " + name)

# A replica that waits at the end: listed in the status file while connected.
w = subprocess.Popen([mbinlog, "--no-defaults", "-R", "--raw", "--stop-never", "--stop-never-slave-server-id=4242",
                      "-h127.0.0.1", "-P%d" % port, "-urepl", "-ps3cret:x", "--result-file=" + os.path.join(tmp, "w-"),
                      want[-1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
listed = False
deadline = time.time() + 15
while time.time() < deadline and not listed:
    time.sleep(0.3)
    try:
        st = json.load(open(status_file))
        listed = any(x["server_id"] == 4242 and x["state"] == "waiting" and x["file"] == want[-1] for x in st["replicas"])
    except (OSError, ValueError):
        pass
check(listed, "the status file lists the waiting client")
w.terminate()
w.wait()

# TLS: a second serve that requires it (a throw-away self-signed certificate).
openssl = shutil.which("openssl")
if openssl:
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=127.0.0.1"], capture_output=True, check=True)
    terr = open(os.path.join(tmp, "tls-stderr"), "w+b")
    tproc = subprocess.Popen([exe, "serve", "--port", "0", "--user", "repl", "--password=s3cret:x", "--ssl-cert", cert,
                              "--ssl-key", key, "--require-ssl", binlogs], stderr=terr, stdout=subprocess.DEVNULL)
    tport = None
    deadline = time.time() + 30
    while time.time() < deadline and tport is None and tproc.poll() is None:
        terr.seek(0)
        for line in terr.read().decode(errors="replace").split("\n"):
            if line.startswith("binlogctl serve: listening on 127.0.0.1:"):
                tport = int(line.rsplit(":", 1)[1])
        time.sleep(0.05)
    check(tport is not None, "serve with --require-ssl starts")
    if tport is not None:
        base = [client, "--no-defaults", "-h127.0.0.1", "-P%d" % tport, "-urepl", "-ps3cret:x", "-N", "-B"]
        r = subprocess.run(base + ["--ssl", "-e", "SELECT @@version_comment"], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and r.stdout.strip() == "binlogctl serve", "a query over TLS")
        r = subprocess.run(base + ["--skip-ssl", "-e", "SELECT 1"], capture_output=True, text=True, timeout=30)
        check("ERROR 1045" in r.stderr, "--require-ssl refuses a plain connection with 1045")
        tout = os.path.join(tmp, "tls") + os.sep
        os.makedirs(tout)
        r = subprocess.run([mbinlog, "--no-defaults", "-R", "--raw", "--ssl", "--to-last-log", "-h127.0.0.1",
                            "-P%d" % tport, "-urepl", "-ps3cret:x", "--result-file=" + tout, want[-2]],
                           capture_output=True, text=True, timeout=60)
        same = all(os.path.exists(tout + n) and open(tout + n, "rb").read() == open(os.path.join(binlogs, n), "rb").read()
                   for n in want[-1:])
        check(r.returncode == 0 and same, "mariadb-binlog --raw over TLS, byte for byte")
        tproc.send_signal(signal.SIGTERM)
        check(tproc.wait(20) == 0, "the TLS serve stops on SIGTERM")

proc.send_signal(signal.SIGTERM)
try:
    rc = proc.wait(20)
except subprocess.TimeoutExpired:
    proc.kill()
    rc = "hung"
check(rc == 0, "SIGTERM -> exit 0 (%s)" % rc)
err.seek(0)
log = err.read().decode(errors="replace")
check("s3cret" not in log, "the password is never logged")
check(log.count("listening on") == 1, "exactly one listening line")
shutil.rmtree(tmp)
if failures:
    sys.exit("%d failed" % len(failures))
