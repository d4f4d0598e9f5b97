#!/usr/bin/env python3
"""Run a command and check its exit status and output.

usage: expect_run.py [--rc N] [--stderr-contains S]... [--stdout-contains S]... [--stdin FILE]
                     [--same-stdout-as CMD...] -- CMD...
"""
import argparse
import shlex
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print("usage: expect_run.py [options] -- CMD...")
        return 2
    i = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--rc", type=int, default=0)
    ap.add_argument("--stderr-contains", action="append", default=[])
    ap.add_argument("--stdout-contains", action="append", default=[])
    ap.add_argument("--stdin")
    ap.add_argument("--same-stdout-as", help="a shell-quoted command whose stdout must be identical")
    ap.add_argument("--reference-sub", nargs=2, metavar=("OLD", "NEW"),
                    help="replace OLD by NEW in the reference command's stdout before comparing")
    opts = ap.parse_args(argv[:i])
    cmd = argv[i + 1:]
    stdin = open(opts.stdin, "rb") if opts.stdin else subprocess.DEVNULL
    p = subprocess.run(cmd, stdin=stdin, capture_output=True)
    out = p.stdout.decode("utf-8", errors="replace")
    err = p.stderr.decode("utf-8", errors="replace")
    ok = True
    if p.returncode != opts.rc:
        print(f"exit {p.returncode}, expected {opts.rc}")
        ok = False
    for s in opts.stderr_contains:
        if s not in err:
            print(f"stderr lacks {s!r}")
            ok = False
    for s in opts.stdout_contains:
        if s not in out:
            print(f"stdout lacks {s!r}")
            ok = False
    if opts.same_stdout_as:
        q = subprocess.run(shlex.split(opts.same_stdout_as), capture_output=True)
        ref = q.stdout
        if opts.reference_sub:
            ref = ref.replace(opts.reference_sub[0].encode(), opts.reference_sub[1].encode())
        if ref != p.stdout:
            print(f"stdout differs from that of: {opts.same_stdout_as}")
            ok = False
    if not ok:
        print("command:", " ".join(shlex.quote(c) for c in cmd))
        print("stderr:", err[:2000])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
