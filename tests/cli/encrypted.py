#!/usr/bin/env python3
"""Encrypted MariaDB binlogs (issue 34): encrypt_binlog=ON with file_key_management.

usage: encrypted.py BINLOGCTL

One private mariadbd (own datadir and unix socket), started three times on the same datadir:

  phase A: key file A (key id 1: 256 bits), AES_CBC;
  phase B: key file B (key id 1: 128 bits, another key: a key rotation, which file_key_management
           allows only this way: key 1 changed between restarts), given to the server encrypted
           (file_key_management_filekey=FILE:...), AES_CBC;
  phase C: key file B, AES_CTR.

Each phase writes a bounded workload over two files (FLUSH BINARY LOGS) and, while the server can
still decrypt them (it cannot after its key or algorithm changed), records the output of dump
(text, json --hexdump), verify, convert (json, canal-json, sql), stats and schema read with -R.
Then, offline, with --key-file A --key-file B (B the encrypted variant with --key-file-key
FILE:...): the same subcommands on the server's encrypted files print the same bytes, exit status
0; verify of the whole chain is clean. In phase C fetch backs up the server's files: exit 0, one
warning that the backup is stored unencrypted, the backup verifies clean, mariadb-binlog reads it,
and its bytes (dump --hexdump) equal the encrypted files read with the key.

Errors, exit status 1 and the documented check: no --key-file (unsupported_format), a wrong key
and a key file without key id 1 (decryption_failed, naming the file, offset, key id and key file),
a truncated file (truncated_event) and a flipped byte in an encrypted event (checksum_mismatch,
and convert prints no row of that event); a wrong --key-file-key and a malformed key file: exit 2.

Exits 77 (skip) when mariadbd or the file_key_management plugin is missing, or binlogctl was
built without libmariadb.
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

BIN = os.path.abspath(sys.argv[1])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, cwd=None, env=None):
    r = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


KEY_A = "1;a7addd9adea9978fda19f21e6be987880e68ac92632ca052e5bb42b1a506939a\n2;49c16acc2dffe616710c9ba9a10b9494\n"
KEY_B = "# rotated\n  1;F5502320F8429037B8DAEF761B189D12 trailing text is ignored\n\n7;770A8A65DA156D24EE2A093277530142770A8A65DA156D24\n"

# (name, subcommand arguments): each run on one file, with -R and offline.
VIEWS = [
    ("dump", ["dump"]),
    ("dump-json", ["dump", "--format", "json", "--hexdump", "--decode"]),
    ("verify", ["verify"]),
    ("convert-json", ["convert", "--format", "json"]),
    ("canal-json", ["convert", "--format", "canal-json"]),
    ("sql", ["convert", "--format", "sql"]),
    ("stats", ["stats", "--format", "json"]),
    ("schema", ["schema"]),
]


def normalized(view, out):
    """Canal flat JSON's "ts" is the time the line was made, not data: left out of the comparison."""
    if view == "canal-json":
        return re.sub(rb',"ts":\d+', b"", out)
    return out


def workload(server, phase, n):
    server.sql(
        "CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE IF NOT EXISTS shop.t%s (id INT PRIMARY KEY, v VARCHAR(200), "
        "d DECIMAL(10,2), b BLOB);" % phase)
    stmts = []
    for i in range(n):
        stmts.append("INSERT INTO shop.t%s VALUES (%d, '%s', %d.25, REPEAT('x', %d));" % (phase, i, "é" * (i % 37), i, i * 13 % 300))
    stmts.append("UPDATE shop.t%s SET v = CONCAT(v, 'u') WHERE id %% 3 = 0;" % phase)
    stmts.append("FLUSH BINARY LOGS;")
    stmts.append("DELETE FROM shop.t%s WHERE id %% 5 = 0;" % phase)
    stmts.append("FLUSH BINARY LOGS;")
    server.sql("".join(stmts))


def big_workload(server):
    """One file of about 20 MiB, alone (the workload ended with FLUSH BINARY LOGS): a row event of 9 MiB,
    larger than what the decrypting input runs ahead of its reader, and a transaction of 120 rows
    of 100 kB (an event each), so that the decrypted memory is recycled many times over. Returns
    its name."""
    name = server.binlogs()[-1]
    server.sql("CREATE TABLE shop.big (id INT PRIMARY KEY, b LONGBLOB);"
               "INSERT INTO shop.big VALUES (0, REPEAT('y', 9437184));"
               "INSERT INTO shop.big SELECT seq, REPEAT(CHAR(65 + seq % 26), 100000) FROM shop.seq_1_to_120;"
               "FLUSH BINARY LOGS;")
    return name


# What is compared on the large file: little output per byte of input (its blobs in hex would be
# megabytes of output).
BIG_VIEWS = [("dump", ["dump"]), ("verify", ["verify"]), ("stats", ["stats", "--format", "json"])]


def raw_from_middle(sock, user, password, name, outdir):
    """mariadb-binlog -R --raw from the middle of `name` (the 20th event's position, asked of the
    server with binlogctl dump -R): (position, the bytes it stored)."""
    auth = ["--user", user] + (["--password=" + password] if password else [])
    rc, out, err = run(["dump", "--format", "json", "-R", "--socket", sock] + auth + [name])
    check(rc == 0, f"dump -R of {name} for a start position: exit {rc}: {err[-300:]}")
    events = [json.loads(l) for l in out.split(b"\n") if l]
    pos = events[min(20, len(events) - 1)]["pos"] if events else 4
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([mdb.find("mariadb-binlog"), "--no-defaults", "-R", "--raw", "--socket", sock, "--user", user]
                       + (["--password=" + password] if password else []) +
                       ["--start-position=%d" % pos, "--result-file=" + outdir + "/", name],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(r.returncode == 0, f"mariadb-binlog -R --raw --start-position={pos} {name}: exit {r.returncode}: {r.stderr[-300:]!r}")
    path = os.path.join(outdir, name)
    return pos, open(path, "rb").read() if os.path.exists(path) else b""


class Served:
    """binlogctl serve on a unix socket (the files in `cwd`), stopped by its pid."""

    def __init__(self, args, cwd, tmp, tag):
        self.sock = os.path.join(tmp, f"s{tag}.sock")
        self.errlog = os.path.join(tmp, f"serve-{tag}.err")
        self.proc = subprocess.Popen([BIN, "serve", "--socket", self.sock, "--user", "repl", "--password=pw"] + args,
                                     cwd=cwd, stdout=subprocess.DEVNULL, stderr=open(self.errlog, "wb"))
        deadline = time.time() + 30
        while time.time() < deadline and b"listening on" not in open(self.errlog, "rb").read():
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        check(self.proc.poll() is None and os.path.exists(self.sock), f"serve {tag} did not start: {self.stderr()[-500:]}")

    def stderr(self):
        return open(self.errlog, "rb").read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def serve(data, files, remote, big, keyopts, key_a, tmp, mid):
    """binlogctl serve --key-file on the encrypted files: what readers of the replication protocol
    get equals what the encrypting server sent (dump -R, byte for byte with --hexdump; a start
    in the middle of a file read by mariadb-binlog -R --raw); with a wrong key, an error that
    names the file and the offset."""
    s = Served(keyopts + files, data, tmp, "keys")
    auth = ["--socket", s.sock, "--user", "repl", "--password=pw"]
    try:
        for name in sorted(remote):
            for view, sub in (BIG_VIEWS[:2] if name == big else VIEWS[:2]):
                rc, out, err = run(sub + ["-R"] + auth + [name])
                check(rc == 0 and out == remote[name][view][1],
                      f"serve --key-file, {view} -R {name}: exit {rc}, {len(out)} bytes against the server's "
                      f"{len(remote[name][view][1])}: {err[-300:]}")
        pos, want = mid
        got = raw_from_middle(s.sock, "repl", "pw", files[0], os.path.join(tmp, "mid-serve"))
        check(got[0] == pos and got[1] == want and len(want) > 4,
              f"serve --key-file, mariadb-binlog -R --raw --start-position={pos} {files[0]}: {len(got[1])} bytes, "
              f"the server sent {len(want)}")
    finally:
        s.stop()
    check("stored" not in s.stderr() and "error" not in s.stderr(), f"serve --key-file said: {s.stderr()[-500:]}")
    # A key that does not decrypt the file: the replica gets an error naming the file and offset.
    wrong = os.path.join(tmp, "wrong-serve.txt")
    open(wrong, "w").write("1;00112233445566778899aabbccddeeff\n")
    s = Served(["--key-file", wrong, files[0]], data, tmp, "wrong")
    try:
        rc, out, err = run(["dump", "-R", "--socket", s.sock, "--user", "repl", "--password=pw", files[0]])
        check(rc != 0 and re.search(r"%s.*offset \d+" % re.escape(files[0]), err) and "key id 1" in err,
              f"serve with a wrong key: exit {rc}: {err[-500:]!r}")
    finally:
        s.stop()


def main():
    mdb.require_or_skip()
    plugin_dir = "/usr/lib/mysql/plugin"
    if not os.path.exists(os.path.join(plugin_dir, "file_key_management.so")):
        print("SKIP: the file_key_management plugin is not installed")
        sys.exit(77)
    code, _, err = run(["dump", "-R", "--socket", "/nonexistent", "x"])
    if "without libmariadb" in err:
        print("SKIP: binlogctl built without libmariadb")
        sys.exit(77)

    tmp = tempfile.mkdtemp(prefix="binlogctl-enc-")
    try:
        keys = os.path.join(tmp, "keys")
        os.makedirs(keys)
        key_a = os.path.join(keys, "a.txt")
        open(key_a, "w").write(KEY_A)
        key_b_plain = os.path.join(keys, "b.txt")
        open(key_b_plain, "w").write(KEY_B)
        secret = os.path.join(keys, "secret")
        open(secret, "w").write("s3cret phrase\n")
        key_b = os.path.join(keys, "b.enc")
        subprocess.run(["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass", "pass:s3cret phrase", "-in", key_b_plain,
                        "-out", key_b], check=True, stderr=subprocess.DEVNULL)
        os.unlink(key_b_plain)

        srv = mdb.Server(os.path.join(tmp, "srv"), extra_args=[
            "--log-bin=mariadb-bin", "--server-id=1", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
            "--plugin-dir=" + plugin_dir, "--plugin-load-add=file_key_management", "--encrypt-binlog=ON"])
        remote = {}  # file -> view -> (rc, out)
        phases = [("A", [f"--file-key-management-filename={key_a}", "--file-key-management-encryption-algorithm=AES_CBC"]),
                  ("B", [f"--file-key-management-filename={key_b}", f"--file-key-management-filekey=FILE:{secret}",
                         "--file-key-management-encryption-algorithm=AES_CBC"]),
                  ("C", [f"--file-key-management-filename={key_b}", f"--file-key-management-filekey=FILE:{secret}",
                         "--file-key-management-encryption-algorithm=AES_CTR"])]
        backup = os.path.join(tmp, "backup")
        listed = set()
        phase_files = {}
        for phase, args in phases:
            srv.start(*args)
            try:
                workload(srv, phase, 60)
                if phase == "C":
                    big = big_workload(srv)
                names = srv.binlogs()
                # The files this phase wrote and closed (the first one the restart opened; the one
                # still open is closed by the shutdown, and read offline only).
                mine = [n for n in names[:-1] if n not in listed]
                listed |= set(names)
                phase_files[phase] = [n for n in names if n not in sum(phase_files.values(), [])]
                if phase == "A":
                    mid = raw_from_middle(srv.sock, "root", "", mine[0], os.path.join(tmp, "mid-server"))
                for name in mine:
                    remote[name] = {}
                    for view, sub in (BIG_VIEWS if phase == "C" and name == big else VIEWS):
                        rc, out, err = run(sub + ["-R", "--socket", srv.sock, "--user", "root", name])
                        check(rc == 0, f"{view} -R {name}: exit {rc}: {err[-500:]}")
                        remote[name][view] = (rc, out)
                if phase == "C":
                    rc, out, err = run(["fetch", "--result-dir", backup, "--socket", srv.sock, "--user", "root", mine[0]])
                    check(rc == 0, f"fetch: exit {rc}: {err[-800:]}")
                    warnings = [l for l in err.splitlines() if "stored unencrypted" in l]
                    check(len(warnings) == 1, f"fetch: one warning that the backup is unencrypted, got: {err!r}")
                    fetched = sorted(n for n in os.listdir(backup) if not n.endswith(".partial"))
                    check(fetched == mine, f"fetch: closed files {fetched}, expected {mine}")
            finally:
                srv.stop()

        data = srv.data
        files = sum(phase_files.values(), [])
        print("files:", phase_files)
        keyopts = ["--key-file", key_a, "--key-file", key_b, "--key-file-key", "FILE:" + secret]
        for name in sorted(remote):
            for view, sub in (BIG_VIEWS if name == big else VIEWS):
                rc, out, err = run(sub + keyopts + [name], cwd=data)
                check(rc == 0, f"{view} --key-file {name}: exit {rc}: {err[-500:]}")
                want = normalized(view, remote[name][view][1])
                out = normalized(view, out)
                check(out == want, f"{view} {name}: --key-file output differs from -R ({len(out)} vs {len(want)} bytes)")
        rc, out, err = run(["verify"] + keyopts + files, cwd=data)
        check(rc == 0 and b": error:" not in out and b": warning:" not in out and b"summary: 10 files" in out, f"verify of the chain with the keys: exit {rc}: {out[-800:]!r} {err[-300:]}")
        # The secret given inline works as FILE: does.
        rc, out, _ = run(["verify", "--key-file", key_b, "--key-file-key", "s3cret phrase", files[-1]], cwd=data)
        check(rc == 0, f"verify with --key-file-key SECRET: exit {rc}")

        # The backup: verifies clean, read by mariadb-binlog, the same events as the decrypted files.
        for name in sorted(os.listdir(backup)):
            if name.endswith(".partial"):
                continue
            path = os.path.join(backup, name)
            rc, out, err = run(["verify", path])
            check(rc == 0, f"verify of the fetched {name}: exit {rc}: {out[-500:]!r}")
            if name == big:  # its events, not its megabytes of rows
                rc1, a, _ = run(["dump", path])
                rc2, b, _ = run(["dump"] + keyopts + [name], cwd=data)
                check(rc1 == 0 and rc2 == 0 and a == b, f"fetched {name}: its events differ from the decrypted file's")
                continue
            r = subprocess.run([mdb.find("mariadb-binlog"), "--no-defaults", "-vv", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            check(r.returncode == 0 and b"Start_encryption" in r.stdout and re.search(rb"### (INSERT INTO|DELETE FROM) `shop`", r.stdout),
                  f"mariadb-binlog on the fetched {name}: exit {r.returncode}: {r.stderr[-300:]!r}")
            rc1, a, _ = run(["dump", "--format", "json", "--hexdump", path])
            rc2, b, _ = run(["dump", "--format", "json", "--hexdump"] + keyopts + [name], cwd=data)
            check(rc1 == 0 and rc2 == 0 and a == b, f"fetched {name}: its bytes differ from the decrypted file's")

        serve(data, files, remote, big, keyopts, key_a, tmp, mid)
        errors(data, files, len(phase_files["A"]), key_a, key_b, secret, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("encrypted: all checks passed")


def errors(data, files, n_a, key_a, key_b, secret, tmp):
    first = files[0]  # phase A: key file A, AES_CBC
    rc, out, err = run(["verify", first], cwd=data)
    check(rc == 1 and b"unsupported_format" in out and b"--key-file" in out, f"no key: exit {rc}: {out!r}")

    wrong = os.path.join(tmp, "wrong.txt")
    open(wrong, "w").write("1;00112233445566778899aabbccddeeff\n")
    rc, out, err = run(["verify", "--key-file", wrong, first], cwd=data)
    m = re.search(rb"^%s:(\d+): error: decryption_failed: (.*)$" % re.escape(first.encode()), out, re.M)
    check(rc == 1 and m and b"key id 1" in m.group(2) and wrong.encode() in m.group(2),
          f"wrong key: exit {rc}: {out!r}")
    rc, out2, err = run(["convert", "--format", "json", "--key-file", wrong, first], cwd=data)
    check(rc == 1 and out2 == b"" and "decryption_failed" in err, f"convert, wrong key: exit {rc}, {len(out2)} bytes out, {err!r}")

    noid = os.path.join(tmp, "noid.txt")
    open(noid, "w").write("2;00112233445566778899aabbccddeeff\n")
    rc, out, err = run(["dump", "--key-file", noid, first], cwd=data)
    check(rc == 1 and "decryption_failed" in err and "no key id 1" in err and noid in err, f"no key id 1: exit {rc}: {err!r}")

    # Only the key of the later files: the older ones do not decrypt, the later ones do.
    rc, out, err = run(["verify", "--key-file", key_b, "--key-file-key", "FILE:" + secret] + files, cwd=data)
    check(rc == 1 and out.count(b"decryption_failed") == n_a, f"rotated key alone: exit {rc}, {n_a} files of key A: {out!r}")

    # Damage: a truncated copy, and one byte flipped inside an encrypted row event.
    blob = open(os.path.join(data, first), "rb").read()
    rc, ref, _ = run(["dump", "--format", "json", "--key-file", key_a, first], cwd=data)
    events = [json.loads(l) for l in ref.split(b"\n") if l]
    rows = [e for e in events if e["event_type"] in ("Write_rows_v1", "Write_rows")]
    check(rows, "the workload wrote row events")
    cut = os.path.join(tmp, "cut.000001")
    victim = rows[len(rows) // 2]
    open(cut, "wb").write(blob[:victim["pos"] + 30])
    rc, out, _ = run(["verify", "--key-file", key_a, cut])
    check(rc == 1 and b"truncated_event" in out, f"truncated: exit {rc}: {out[-400:]!r}")
    os.makedirs(os.path.join(tmp, "flip"))
    flip = os.path.join(tmp, "flip", first)  # same log name: the rows compare as they are
    b = bytearray(blob)
    b[(victim["pos"] + victim["end_log_pos"]) // 2] ^= 0x10
    open(flip, "wb").write(bytes(b))
    rc, out, _ = run(["verify", "--key-file", key_a, flip])
    check(rc == 1 and (b":%d: error: checksum_mismatch" % victim["pos"]) in out, f"flipped byte: exit {rc}: {out[-400:]!r}")
    rc, good, _ = run(["convert", "--format", "json", "--key-file", key_a, first], cwd=data)
    rc2, bad, err = run(["convert", "--format", "json", "--key-file", key_a, flip])
    good_rows = [l for l in good.split(b"\n") if l]
    damage = [l for l in bad.split(b"\n") if b'"type":"DAMAGE"' in l]
    bad_rows = [l for l in bad.split(b"\n") if l and l not in damage]
    # The damaged event's row is replaced by a DAMAGE record; every other row is as it was.
    check(rc2 == 1 and "checksum_mismatch" in err and len(damage) == 1 and b'"pos":%d' % victim["pos"] in damage[0]
          and set(bad_rows) <= set(good_rows) and len(bad_rows) == len(good_rows) - 1,
          f"convert of the flipped file: exit {rc2}, {len(bad_rows)} rows of {len(good_rows)}, "
          f"not in the good ones: {sorted(set(bad_rows) - set(good_rows))[:3]!r}, stderr {err[-300:]!r}")

    # Key file problems: usage errors (exit 2) that name the file and never print a key.
    rc, _, err = run(["verify", "--key-file", key_b, "--key-file-key", "not the secret", first], cwd=data)
    check(rc == 2 and key_b in err and "file key" in err, f"wrong --key-file-key: exit {rc}: {err!r}")
    bad_file = os.path.join(tmp, "bad.txt")
    open(bad_file, "w").write("# ok\n1;abc\n")
    rc, _, err = run(["verify", "--key-file", bad_file, first], cwd=data)
    check(rc == 2 and bad_file + ":2:" in err and "abc" not in err.replace(bad_file, ""), f"malformed key file: exit {rc}: {err!r}")
    rc, _, err = run(["verify", "--key-file", key_a, first, "-R", "--socket", "/nonexistent"])
    check(rc == 2 and "key-file" in err and "connect" not in err, f"--key-file with -R: exit {rc}: {err!r}")


if __name__ == "__main__":
    main()
