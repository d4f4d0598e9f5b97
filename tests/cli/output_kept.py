#!/usr/bin/env python3
"""-o never destroys an existing output (issue 36, item 1).

usage: output_kept.py BINLOGCTL FIXTURE_DIR

  * a run that reads nothing (exit 2: a missing input) leaves an existing FILE byte for byte as
    it was, and makes no FILE where there was none;
  * a flashback that refuses (exit 1) leaves an existing FILE as it was and makes no new one;
  * a run over damaged data (exit 1) leaves an existing FILE as it was, writes a new one; verify,
    whose findings are its output, replaces FILE;
  * SIGTERM, SIGINT or SIGHUP while the output is being written leaves no temporary file beside
    FILE, FILE as it was, and the process ends by that signal (status -N here, 128+N in a shell).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    src = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-kept-")
    try:
        data = open(src, "rb").read()
        good = os.path.join(tmp, "good.000002")
        with open(good, "wb") as f:
            f.write(data)
        damaged = os.path.join(tmp, "damaged.000002")  # a torn tail: exit 1 everywhere
        with open(damaged, "wb") as f:
            f.write(data[:len(data) - 25])
        target = os.path.join(tmp, "out")
        precious = b"precious\n"

        def leftovers():
            return sorted(n for n in os.listdir(tmp) if "binlogctl-" in n)

        def reset():
            with open(target, "wb") as f:
                f.write(precious)

        # Nothing read (exit 2): the existing file stays; no new file is made.
        for cmd in (["dump"], ["convert"], ["convert", "--format", "sql"], ["convert", "--flashback"],
                    ["stats"], ["verify"], ["schema"]):
            reset()
            p = run(binary, *cmd, "-o", target, os.path.join(tmp, "nonexistent"))
            check(p.returncode == 2, f"{cmd} -o FILE MISSING: exit {p.returncode}, expected 2")
            check(open(target, "rb").read() == precious, f"{cmd} -o FILE MISSING: the existing FILE was changed")
            os.unlink(target)
            p = run(binary, *cmd, "-o", target, os.path.join(tmp, "nonexistent"))
            check(not os.path.exists(target), f"{cmd} -o NEWFILE MISSING: a file was made")
            check(not leftovers(), f"{cmd}: temporary files left: {leftovers()}")

        # A flashback that refuses (DDL in the range, exit 1): FILE as it was, no new file.
        ddl = os.path.join(tmp, "ddl.000001")
        shutil.copyfile(os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000001"), ddl)
        reset()
        p = run(binary, "convert", "--flashback", "-o", target, ddl)
        check(p.returncode == 1, f"flashback over DDL: exit {p.returncode}, expected 1: {p.stderr[-300:]!r}")
        check(open(target, "rb").read() == precious, "a refused flashback changed the existing FILE")
        check(b"left as it was" in p.stderr, f"flashback: stderr does not say FILE was kept: {p.stderr[-300:]!r}")
        os.unlink(target)
        p = run(binary, "convert", "--flashback", "-o", target, ddl)
        check(p.returncode == 1 and not os.path.exists(target), "a refused flashback made a new FILE")

        # Damaged data (exit 1): an existing FILE stays, a new one is written; verify replaces.
        for cmd in (["dump"], ["convert"], ["convert", "--format", "sql"], ["stats"]):
            reset()
            p = run(binary, *cmd, "-o", target, damaged)
            check(p.returncode == 1, f"{cmd} damaged: exit {p.returncode}, expected 1")
            check(open(target, "rb").read() == precious, f"{cmd} damaged: the existing FILE was changed")
            os.unlink(target)
            ref = run(binary, *cmd, damaged)
            p = run(binary, *cmd, "-o", target, damaged)
            check(p.returncode == 1 and os.path.exists(target) and open(target, "rb").read() == ref.stdout,
                  f"{cmd} damaged -o NEWFILE: not the output of the run")
        reset()
        ref = run(binary, "verify", damaged)
        p = run(binary, "verify", "-o", target, damaged)
        check(p.returncode == 1 and open(target, "rb").read() == ref.stdout and ref.stdout,
              "verify damaged -o FILE: the findings did not replace FILE")
        check(not leftovers(), f"temporary files left: {leftovers()}")

        # A signal while the output is written: no temporary file left, FILE as it was. The
        # input comes through a pipe held open, so the run is surely in the middle.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            for cmd in (["convert", "--format", "sql"], ["dump"]):
                reset()
                p = subprocess.Popen([binary, *cmd, "-o", target, "-"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                p.stdin.write(data[:len(data) // 2])
                p.stdin.flush()
                deadline = time.time() + 20
                while not leftovers() and time.time() < deadline:
                    time.sleep(0.02)
                check(bool(leftovers()), f"{cmd}: no temporary file seen while running")
                time.sleep(0.2)
                p.send_signal(sig)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                p.stdin.close()
                p.stderr.close()
                check(p.returncode == -sig, f"{cmd} {sig.name}: status {p.returncode}, expected {-sig}")
                check(not leftovers(), f"{cmd} {sig.name}: temporary file left: {leftovers()}")
                check(open(target, "rb").read() == precious, f"{cmd} {sig.name}: FILE was changed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"output_kept: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
