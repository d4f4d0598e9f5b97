"""A private MariaDB server for the CLI tests: own datadir and unix socket under a temporary
directory, --no-defaults, stopped by its pid (SIGTERM, then SIGKILL after 60 s). No TCP, or
with tcp=True a free port on 127.0.0.1 only (server.port).

    server = Server(root, extra_args=[...]); server.start(); ...; server.stop()
    server.start(*more_args) again after stop() restarts it on the same datadir.

find() locates the programs; a test exits 77 (ctest skip) when they are absent.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time


def find(prog):
    p = shutil.which(prog)
    if p:
        return p
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
        if os.path.exists(os.path.join(d, prog)):
            return os.path.join(d, prog)
    return None


MARIADBD = find("mariadbd")
CLIENT = find("mariadb")
INSTALL_DB = find("mariadb-install-db")


def require_or_skip():
    if not (MARIADBD and CLIENT and INSTALL_DB):
        print("SKIP: mariadbd, mariadb or mariadb-install-db not installed")
        sys.exit(77)


class Server:
    def __init__(self, root, extra_args=(), tcp=False):
        self.dir = root
        self.data = os.path.join(root, "data")
        self.sock = os.path.join(root, "sock")
        self.pidfile = os.path.join(root, "mariadbd.pid")
        self.extra = list(extra_args)
        self.tcp = tcp
        self.port = None
        self.installed = False
        self.proc = None

    def install(self):
        if self.installed:
            return
        r = subprocess.run([INSTALL_DB, "--no-defaults", "--auth-root-authentication-method=normal", "--user=root",
                            "--datadir=" + self.data, "--skip-test-db"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            sys.exit("mariadb-install-db failed:\n" + r.stdout.decode(errors="replace"))
        self.installed = True

    def start(self, *more_args):
        self.install()
        if self.tcp:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
            s.close()
            net = ["--port=%d" % self.port, "--bind-address=127.0.0.1"]
        else:
            net = ["--skip-networking"]
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        log = open(os.path.join(self.dir, "mariadbd.out"), "ab")
        self.proc = subprocess.Popen([MARIADBD, "--no-defaults", *net, "--socket=" + self.sock,
                                      "--pid-file=" + self.pidfile, "--datadir=" + self.data, "--tmpdir=" + self.dir,
                                      "--log-error=" + os.path.join(self.dir, "error.log"), "--user=root",
                                      "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
                                      "--max-allowed-packet=64M", *self.extra, *more_args],
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit("mariadbd exited during start-up:\n" + open(os.path.join(self.dir, "error.log")).read()[-3000:])
            if os.path.exists(self.sock):
                r = subprocess.run(self.client_args() + ["-e", "SELECT 1"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                if r.returncode == 0:
                    return
            time.sleep(0.1)
        sys.exit("mariadbd did not come up within 60 s")

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def client_args(self, extra=()):
        return [CLIENT, "--no-defaults", "--socket=" + self.sock, "-uroot", "--default-character-set=utf8mb4",
                *extra]

    def sql(self, text, extra=(), check_rc=True):
        r = subprocess.run(self.client_args(extra), input=text.encode() if isinstance(text, str) else text,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check_rc and r.returncode != 0:
            raise RuntimeError("client failed: " + r.stderr.decode(errors="replace")[-2000:])
        return r

    def apply(self, sql_bytes):
        """Feeds statements to the client without logging them (the test's own binlog stays as it was)."""
        return self.sql(sql_bytes, extra=("--binary-mode", "--init-command=SET sql_log_bin=0"), check_rc=False)

    def query(self, text):
        return self.sql(text, extra=("-N", "-B")).stdout.decode("utf-8", "replace")

    def rows(self, text):
        """The result rows of `text` (batch mode: tab-separated, newlines in values as \\n)."""
        return [line.split("\t") for line in self.query(text).split("\n") if line]

    def binlogs(self):
        return [r[0] for r in self.rows("SHOW BINARY LOGS")]
