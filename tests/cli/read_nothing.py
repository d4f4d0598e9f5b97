#!/usr/bin/env python3
"""No input read is never a clean verdict (issue 36, item 3).

usage: read_nothing.py BINLOGCTL FIXTURE_DIR

  * an index file that names no binlog, given as the input: exit 2, saying so, for verify (even
    with --closed --strict: no summary is printed) as for dump, convert and stats;
  * a directory whose only index file is empty (a stray one): its binlogs are read by their
    numbers, as without the index, with a warning naming the index;
  * an index that names only some of the binlogs beside it (given itself, or as its directory's
    index): the others are named in a warning on stderr, and not read;
  * verify of a file given on the command line that does not exist: exit 2 and no summary.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def summary(p):
    lines = [json.loads(x) for x in p.stdout.split(b"\n") if x.strip()]
    return lines[-1].get("summary") if lines else None


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    src = os.path.join(fixture, "basic", "binlogs")
    names = sorted(n for n in os.listdir(src) if n.startswith("mariadb-bin.0"))
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-nothing-")
    try:
        # An empty index given as the input.
        empty = os.path.join(tmp, "empty.index")
        open(empty, "w").close()
        for cmd in (["verify"], ["verify", "--closed", "--strict"], ["verify", "--format", "json"], ["dump"],
                    ["convert"], ["stats"]):
            p = run(binary, *cmd, empty)
            check(p.returncode == 2, f"{cmd} EMPTY.index: exit {p.returncode}, expected 2")
            check(b"names no binlog" in p.stderr, f"{cmd} EMPTY.index: stderr {p.stderr[:300]!r}")
            check(p.stdout == b"", f"{cmd} EMPTY.index: output {p.stdout[:200]!r}")

        # A directory of binlogs with a stray empty .index: read as without it, with a warning.
        d = os.path.join(tmp, "stray")
        os.mkdir(d)
        for n in names:
            shutil.copyfile(os.path.join(src, n), os.path.join(d, n))
        ref = run(binary, "verify", "--format", "json", "--closed", "--strict", d)
        open(os.path.join(d, "stray.index"), "w").close()
        p = run(binary, "verify", "--format", "json", "--closed", "--strict", d)
        s = summary(p)
        check(s is not None and s["files"] == len(names), f"stray empty index: summary {s}")
        check(p.returncode == ref.returncode, f"stray empty index: exit {p.returncode}, without it {ref.returncode}")
        check(b"warning" in p.stderr and b"stray.index" in p.stderr, f"stray empty index: stderr {p.stderr[:300]!r}")

        # An index naming 1 of the files beside it: a warning names the others.
        d2 = os.path.join(tmp, "partial")
        os.mkdir(d2)
        for n in names[:3]:
            shutil.copyfile(os.path.join(src, n), os.path.join(d2, n))
        idx = os.path.join(d2, "mariadb-bin.index")
        with open(idx, "w") as f:
            f.write("./" + names[0] + "\n")
        for arg in (idx, d2):
            for cmd in (["verify"], ["dump"]):
                p = run(binary, *cmd, arg)
                check(p.returncode == 0, f"{cmd} partial index via {arg}: exit {p.returncode}: {p.stderr[:300]!r}")
                check(all(n.encode() in p.stderr for n in names[1:3]) and b"warning" in p.stderr,
                      f"{cmd} partial index via {arg}: the unnamed files are not named: {p.stderr[:300]!r}")
        # ... and an index naming them all: no warning.
        with open(idx, "w") as f:
            f.write("".join("./" + n + "\n" for n in names[:3]))
        p = run(binary, "verify", d2)
        check(p.returncode == 0 and b"warning" not in p.stderr, f"complete index: {p.returncode} {p.stderr[:300]!r}")

        # A missing file: exit 2, no summary.
        for fmt in ("text", "json"):
            p = run(binary, "verify", "--format", fmt, os.path.join(tmp, "nonexistent.000001"))
            check(p.returncode == 2, f"verify MISSING ({fmt}): exit {p.returncode}")
            check(p.stdout == b"", f"verify MISSING ({fmt}): a summary was printed: {p.stdout[:200]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"read_nothing: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
