#!/usr/bin/env python3
"""Streams at the edges (issue "honest at the edges", points 1 and 5).

usage: streams.py BINLOGCTL FIXTURE_DIR

  * files concatenated into one stream (stdin, or one file) are read as the chain they are: the
    same verify summary as the files given one by one, each file under the name its predecessor's
    ROTATE gives, positions from 4 again;
  * verify's executed GTID sets and states count only transactions that end (a file cut inside
    its last transaction does not count that GTID);
  * a magic-only file is reported; verify --closed wants the last file closed;
  * resynchronising on a stream over a long run of garbage keeps memory flat (peak RSS of the
    child, not a time).
"""
import os
import subprocess
import sys
import tempfile

RSS_CHILD = r"""
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.write(p.stderr.decode("utf-8", "replace")[-2000:])
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    d = os.path.join(fixture, "basic", "binlogs")
    files = [os.path.join(d, "mariadb-bin.00000%d" % i) for i in (1, 2, 3, 4)]
    data = b"".join(open(f, "rb").read() for f in files)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    ref = subprocess.run([binary, "verify", *files], capture_output=True)
    check(ref.returncode == 0, f"verify of the files: exit {ref.returncode}")
    got = subprocess.run([binary, "verify", "-"], input=data, capture_output=True)
    check(got.returncode == 0, f"verify - of the concatenation: exit {got.returncode}: {got.stderr[:300]!r}")
    check(got.stdout == ref.stdout, f"verify - summary {got.stdout[-300:]!r} != {ref.stdout!r}")
    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "all.bin")
        open(one, "wb").write(data)
        got = subprocess.run([binary, "verify", one], capture_output=True)
        check(got.stdout == ref.stdout, f"verify of one concatenated file: {got.stdout[-300:]!r}")

    dump_ref = subprocess.run([binary, "dump", "--format", "json", *files], capture_output=True)
    dump_got = subprocess.run([binary, "dump", "--format", "json", "-"], input=data, capture_output=True)
    check(dump_got.returncode == 0, f"dump -: exit {dump_got.returncode}")
    ref_lines = dump_ref.stdout.split(b"\n")
    got_lines = dump_got.stdout.split(b"\n")
    check(len(ref_lines) == len(got_lines), f"dump -: {len(got_lines)} lines, files give {len(ref_lines)}")
    # The first file is "-"; the others are named by the ROTATE before them, as the files are.
    first = b'"log_name":"mariadb-bin.000001"'
    same = sum(1 for a, b in zip(ref_lines, got_lines) if a == b)
    differ_only_in_name = sum(1 for a, b in zip(ref_lines, got_lines)
                              if a != b and a.replace(first, b'"log_name":"-"') == b)
    check(same + differ_only_in_name == len(ref_lines),
          f"dump -: {len(ref_lines) - same - differ_only_in_name} records differ beyond the first file's name")
    check(same > 0 and differ_only_in_name > 0, f"dump -: {same} equal, {differ_only_in_name} renamed")

    # 126 bytes of a real file, then 200 MiB of zeros, on a pipe: one resynchronisation that
    # finds nothing; before, every skipped byte stayed buffered (peak RSS ~ the garbage).
    head = open(files[0], "rb").read()[:126]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "feed.sh")
        with open(script, "w") as fh:
            fh.write('#!/bin/sh\n{ head -c 126 "$1"; head -c 209715200 /dev/zero; } | "$2" verify - >&2\n')
        os.chmod(script, 0o755)
        p = subprocess.run([sys.executable, "-c", RSS_CHILD, script, files[0], binary],
                           capture_output=True, timeout=600)
        rc, rss_kib = (int(x) for x in p.stdout.split())
        check(rc == 1, f"verify of a file followed by zeros: exit {rc}, expected 1")
        check(b"no valid event in the remaining" in p.stderr, f"zeros: stderr {p.stderr[-300:]!r}")
        check(rss_kib < 120 * 1024, f"zeros: peak RSS {rss_kib} KiB, expected flat (< 120 MiB)")
    del head

    # A file cut inside its last transaction (before the XID): that transaction's GTID is not
    # executed (a replica resuming from the set would skip it); the state is the Gtid_list's.
    with tempfile.TemporaryDirectory() as tmp:
        whole = open(os.path.join(d, "mariadb-bin.000002"), "rb").read()
        cut = os.path.join(tmp, "mariadb-bin.000002")
        open(cut, "wb").write(whole[:13721])
        p = subprocess.run([binary, "verify", "--format", "json", cut], capture_output=True)
        summ = __import__("json").loads(p.stdout.split(b"\n")[-2])["summary"]
        check(p.returncode == 1, f"cut transaction: verify exit {p.returncode}")
        check(summ["mariadb_gtid_executed"] == "" and summ["mariadb_gtid_state"] == "1-1011-23",
              f"cut transaction: executed {summ['mariadb_gtid_executed']!r}, state {summ['mariadb_gtid_state']!r}")

    # A file of the magic number alone is reported; --closed wants the last file closed by ROTATE
    # or STOP (a copy cut at an event boundary verifies clean without it).
    with tempfile.TemporaryDirectory() as tmp:
        magic = os.path.join(tmp, "mariadb-bin.000009")
        open(magic, "wb").write(b"\xfebin")
        p = subprocess.run([binary, "verify", magic], capture_output=True)
        check(p.returncode == 1 and b"missing_format_description" in p.stdout, f"magic only: exit {p.returncode} {p.stdout!r}")
        whole = open(os.path.join(d, "mariadb-bin.000002"), "rb").read()
        cut = os.path.join(tmp, "mariadb-bin.000002")
        open(cut, "wb").write(whole[:13752])  # before the ROTATE: an event boundary
        p = subprocess.run([binary, "verify", cut], capture_output=True)
        check(p.returncode == 0, f"cut at a boundary, without --closed: exit {p.returncode}")
        p = subprocess.run([binary, "verify", "--closed", cut], capture_output=True)
        check(p.returncode == 1 and b"rotate_mismatch" in p.stdout, f"--closed, cut: exit {p.returncode} {p.stdout!r}")
        p = subprocess.run([binary, "verify", "--closed", files[0], files[1]], capture_output=True)
        check(p.returncode == 0, f"--closed on closed files: exit {p.returncode} {p.stdout!r}")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
