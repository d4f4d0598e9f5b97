"""Helpers shared by the end-to-end tests (tests/cli) and bench/serve_bench.py (which puts this
folder on sys.path): a free loopback port, a TCP proxy that subclasses shape, `binlogctl serve`
started on a free port, and the protobuf framing of canal-proto output.

Nothing here decides a test's outcome; each test keeps its own checks."""

import re
import signal
import socket
import subprocess
import threading
import time


def free_port():
    """A TCP port free on 127.0.0.1 now (closed again: whoever binds it next may race)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def shut(*socks):
    """Shuts both directions of each socket, ignoring the ones already gone."""
    for x in socks:
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class TcpProxy(threading.Thread):
    """127.0.0.1:port -> 127.0.0.1:target. Each accepted connection gets one upstream connection
    (with SO_RCVBUF `rcvbuf` when given; a client is closed when the target refuses) and two
    threads running pump(src, dst, down): down is True for what the server sends. The default pump
    copies; subclasses override it to slow, stall or alter the traffic. self.upstream lists every
    upstream connection in accept order; drop() cuts every connection made so far; close() also
    stops listening. start() the thread (or pass start=True)."""

    def __init__(self, target, backlog=8, rcvbuf=None, start=False):
        super().__init__(daemon=True)
        self.lsn = socket.socket()
        self.lsn.bind(("127.0.0.1", 0))
        self.lsn.listen(backlog)
        self.port = self.lsn.getsockname()[1]
        self.target, self.rcvbuf = target, rcvbuf
        self.conns = []     # both ends of every proxied connection (drop, close)
        self.upstream = []  # every connection to the target, in accept order
        self.lock = threading.Lock()
        if start:
            self.start()

    def accepted(self):
        with self.lock:
            return len(self.upstream)

    def accepting(self):
        """Whether the accept loop goes on (subclasses with a stop flag say no)."""
        return True

    def run(self):
        while self.accepting():
            try:
                c, _ = self.lsn.accept()
            except OSError:
                return
            try:
                u = socket.socket()
                if self.rcvbuf:
                    u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
                u.connect(("127.0.0.1", self.target))
            except OSError:
                u.close()
                c.close()  # the server is away: the client retries
                continue
            with self.lock:
                self.conns += [c, u]
                self.upstream.append(u)
            threading.Thread(target=self.pump, args=(c, u, False), daemon=True).start()
            threading.Thread(target=self.pump, args=(u, c, True), daemon=True).start()

    def pump(self, src, dst, down):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            shut(src, dst)

    def drop(self):
        """Cuts every connection made so far (the server or the network going away)."""
        with self.lock:
            conns, self.conns = self.conns, []
        shut(*conns)

    def close(self):
        self.lsn.close()
        self.drop()


LISTENING = re.compile(rb"binlogctl serve: listening on 127\.0\.0\.1:(\d+)")


class ServeStartError(Exception):
    pass


class Serve:
    """`binlogctl serve --port PORT --user USER --password=PW ARGS...` with stderr appended to
    `errlog`; start() (port 0: a free one) returns once serve has said where it listens and that
    port accepts connections, and sets self.port."""

    def __init__(self, binary, errlog, args, user="repl", password="secret", stdout=None, prefix=()):
        self.binary, self.errlog, self.args = binary, errlog, list(args)
        self.user, self.password, self.stdout, self.prefix = user, password, stdout, list(prefix)
        self.proc, self.port = None, 0

    def start(self, port=None, timeout=30, check_port=True):
        port = self.port if port is None else port
        with open(self.errlog, "ab") as err:
            self.proc = subprocess.Popen([*self.prefix, self.binary, "serve", "--port", str(port), "--user", self.user,
                                          "--password=" + self.password, *self.args],
                                         stdout=self.stdout if self.stdout is not None else subprocess.DEVNULL,
                                         stderr=err)
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = LISTENING.search(open(self.errlog, "rb").read())
            if m and (port == 0 or int(m.group(1)) == port) and (not check_port or self.listening(int(m.group(1)))):
                self.port = int(m.group(1))
                return self.port
            if self.proc.poll() is not None:
                raise ServeStartError(f"serve exited {self.proc.returncode} at start: {self.stderr()[-800:]}")
            time.sleep(0.05)
        raise ServeStartError(f"serve did not say it was listening within {timeout} s: {self.stderr()[-800:]}")

    @staticmethod
    def listening(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return True
        except OSError:
            return False

    def stderr(self):
        return open(self.errlog, "rb").read().decode(errors="replace")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self):
        """SIGTERM; the exit status (None when it had to be killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        rc = self.proc.returncode
        self.proc = None
        return rc


# ---- protobuf framing (canal-proto output: varint-length-delimited messages) --------------------

def varint(buf, i):
    """The base-128 varint at buf[i:]: (value, index after it); ValueError when buf ends inside it."""
    shift = v = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def split_stream(data):
    """The messages of a varint-length-delimited stream; ValueError when one runs past the end."""
    out, i = [], 0
    while i < len(data):
        n, i = varint(data, i)
        if i + n > len(data):
            raise ValueError(f"message at {i} runs past the end ({n} bytes)")
        out.append(data[i:i + n])
        i += n
    return out
