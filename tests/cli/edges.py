#!/usr/bin/env python3
"""The edges of the command line on a real fixture (issue "honest at the edges").

usage: edges.py BINLOGCTL FIXTURE_DIR

  * -o naming one of the inputs is refused (exit 2) and the input is left as it was;
  * -o writes beside the target and renames at the end: no temporary file is left, an existing
    target is replaced whole, and a run refused by its options leaves the target untouched;
  * -o onto what is not a regular file writes through it and leaves it as it was: a character
    device (a copy of /dev/null's, when mknod is allowed), a FIFO (read by cat), a symbolic link
    (the file it names gets the output, the link stays a link); -o /proc/self/fd/1 appends to
    the file the caller opened (>>) and fills a pipe; -o naming a directory: exit 2;
  * --start-position inside an event starts at the next event boundary (as if the boundary had
    been given), for dump, convert and stats;
  * impossible selections are usage errors (exit 2) that say what is wrong: start after stop,
    an empty GTID set, a date that does not exist.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile


def run(*args, stdin=None):
    return subprocess.run(list(args), capture_output=True, stdin=stdin or subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    src = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-edges-")
    try:
        copy = os.path.join(tmp, "mariadb-bin.000002")
        shutil.copyfile(src, copy)
        digest = hashlib.sha256(open(copy, "rb").read()).hexdigest()

        # -o naming an input: refused, nothing touched.
        for cmd in (["convert"], ["dump"], ["stats"], ["verify"], ["convert", "--format", "canal-json"]):
            p = run(binary, *cmd, "-o", copy, copy)
            check(p.returncode == 2, f"{cmd} -o INPUT: exit {p.returncode}, expected 2")
            check(b"one of the inputs" in p.stderr, f"{cmd} -o INPUT: stderr {p.stderr[:200]!r}")
            check(hashlib.sha256(open(copy, "rb").read()).hexdigest() == digest, f"{cmd} -o INPUT changed the input")
        # ... also through another path to the same file (a hard link), and through its directory.
        link = os.path.join(tmp, "link.000002")
        os.link(copy, link)
        p = run(binary, "dump", "-o", link, tmp)
        check(p.returncode == 2, f"dump -o HARDLINK DIR: exit {p.returncode}, expected 2")
        check(hashlib.sha256(open(copy, "rb").read()).hexdigest() == digest, "dump -o HARDLINK changed the input")
        os.unlink(link)

        # -o to a new file and over an old one: the whole output, no temporary left behind.
        out = os.path.join(tmp, "out.jsonl")
        ref = run(binary, "convert", copy)
        check(ref.returncode == 0, f"convert: exit {ref.returncode}")
        with open(out, "w") as f:
            f.write("old contents\n")
        os.chmod(out, 0o640)
        p = run(binary, "convert", "-o", out, copy)
        check(p.returncode == 0, f"convert -o: exit {p.returncode}")
        check(open(out, "rb").read() == ref.stdout, "convert -o: the file differs from stdout")
        check(sorted(os.listdir(tmp)) == ["mariadb-bin.000002", "out.jsonl"], f"left behind: {os.listdir(tmp)}")
        # a run refused by its options leaves the target as it was
        before = open(out, "rb").read()
        p = run(binary, "convert", "-o", out, "--start-position", "900", "--stop-position", "500", copy)
        check(p.returncode == 2, f"convert -o with start > stop: exit {p.returncode}")
        check(open(out, "rb").read() == before, "a refused run touched the -o target")
        check(sorted(os.listdir(tmp)) == ["mariadb-bin.000002", "out.jsonl"], f"left behind: {os.listdir(tmp)}")

        # -o onto a device, a FIFO or a symbolic link: written through, left as it was (a
        # temporary file renamed over /dev/null replaced the device with a regular file).
        special = os.path.join(tmp, "special")
        os.mkdir(special)
        dev = os.path.join(special, "null")
        try:
            os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError:
            dev = None  # not root, or a nodev file system: the FIFO and the link still run
        if dev is not None:
            for cmd in (["convert"], ["dump"], ["convert", "--format", "canal-proto"]):
                p = run(binary, *cmd, "-o", dev, copy)
                check(p.returncode == 0, f"{cmd} -o CHARDEV: exit {p.returncode}: {p.stderr[:200]!r}")
                check(stat.S_ISCHR(os.lstat(dev).st_mode), f"{cmd} -o CHARDEV replaced the device")
                if not stat.S_ISCHR(os.lstat(dev).st_mode):
                    os.unlink(dev)
                    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        fifo = os.path.join(special, "fifo")
        os.mkfifo(fifo)
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        p = run(binary, "convert", "-o", fifo, copy)
        check(p.returncode == 0, f"convert -o FIFO: exit {p.returncode}: {p.stderr[:200]!r}")
        try:
            got, _ = reader.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            reader.kill()
            got, _ = reader.communicate()
        check(got == ref.stdout, f"convert -o FIFO: the reader got {len(got)} bytes, expected {len(ref.stdout)}")
        check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "convert -o FIFO replaced the FIFO")
        real = os.path.join(special, "real.jsonl")
        with open(real, "w") as f:
            f.write("old contents\n")
        sym = os.path.join(special, "sym.jsonl")
        os.symlink("real.jsonl", sym)
        p = run(binary, "convert", "-o", sym, copy)
        check(p.returncode == 0, f"convert -o SYMLINK: exit {p.returncode}: {p.stderr[:200]!r}")
        check(os.path.islink(sym), "convert -o SYMLINK replaced the link with a file")
        check(open(real, "rb").read() == ref.stdout, "convert -o SYMLINK: the linked file lacks the output")
        left = sorted(n for n in os.listdir(special) if "binlogctl-" in n)
        check(not left, f"-o special files: temporary files left behind: {left}")
        # -o /proc/self/fd/1 (what /dev/stdout names) onto a file the caller opened for
        # appending: appended to, not truncated; onto a pipe: the whole output.
        appended = os.path.join(special, "appended.jsonl")
        with open(appended, "wb") as f:
            f.write(b"first line\n")
        with open(appended, "ab") as f:
            p = subprocess.run([binary, "convert", "-o", "/proc/self/fd/1", copy], stdout=f,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        check(p.returncode == 0, f"convert -o /proc/self/fd/1 >>FILE: exit {p.returncode}: {p.stderr[:200]!r}")
        check(open(appended, "rb").read() == b"first line\n" + ref.stdout,
              "convert -o /proc/self/fd/1 >>FILE: not appended to the file")
        p = run(binary, "convert", "-o", "/proc/self/fd/1", copy)
        check(p.returncode == 0 and p.stdout == ref.stdout, f"convert -o /proc/self/fd/1 |: exit {p.returncode}")
        p = run(binary, "convert", "-o", special, copy)
        check(p.returncode == 2 and b"directory" in p.stderr, f"convert -o DIR: exit {p.returncode}: {p.stderr[:200]!r}")
        shutil.rmtree(special)

        # --start-position inside an event == the next event boundary.
        events = [json.loads(line) for line in run(binary, "dump", "--format", "json", copy).stdout.split(b"\n") if line]
        tops = [e["pos"] for e in events if e.get("inner_index") is None]
        mid = tops[len(tops) // 2]
        nxt = next(p for p in tops if p > mid)
        inside = mid + 7
        for cmd in (["dump"], ["dump", "--format", "json"], ["convert"], ["stats", "--format", "json"]):
            a = run(binary, *cmd, "--start-position", str(inside), copy)
            b = run(binary, *cmd, "--start-position", str(nxt), copy)
            check(a.returncode == 0, f"{cmd} --start-position {inside}: exit {a.returncode}: {a.stderr[:300]!r}")
            check(a.stdout == b.stdout and a.stderr == b.stderr,
                  f"{cmd} --start-position {inside} differs from the next boundary {nxt}")

        # Impossible selections: exit 2 with a word on what is wrong.
        for args, word in (
            (["--start-position", "900", "--stop-position", "500"], b"--start-position"),
            (["--start-datetime", "2024-02-02 00:00:00", "--stop-datetime", "2024-02-01 00:00:00"], b"--start-datetime"),
            (["--start-datetime", "2021-02-30"], b"2021-02-30"),
            (["--stop-datetime", "2024-13-01 00:00:00"], b"2024-13-01"),
            (["--start-datetime", "2024-02-01 24:00:00"], b"24:00:00"),
        ):
            for cmd in ("dump", "convert", "stats"):
                p = run(binary, cmd, *args, copy)
                check(p.returncode == 2, f"{cmd} {args}: exit {p.returncode}, expected 2")
                check(word in p.stderr, f"{cmd} {args}: stderr lacks {word!r}: {p.stderr[:200]!r}")
        for cmd in ("convert", "stats"):
            for opt in ("--include-gtids", "--exclude-gtids"):
                p = run(binary, cmd, opt, "", copy)
                check(p.returncode == 2, f"{cmd} {opt} '': exit {p.returncode}, expected 2")
                check(b"empty" in p.stderr, f"{cmd} {opt} '': stderr {p.stderr[:200]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"edges: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
