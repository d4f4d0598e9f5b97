#!/usr/bin/env python3
"""mysqlbinlog's habits (issue 36, item 6).

usage: mysqlbinlog_habits.py BINLOGCTL FIXTURE_DIR

  * mysqlbinlog's names with binlogctl's meaning are aliases: -r/--result-file (-o),
    --ignore-server-ids (--exclude-server-ids), dump -H (--hexdump): the same output;
  * the others are a usage error (exit 2) that says what binlogctl does instead, never CLI11's
    bare "The following argument was not expected";
  * -o with a bare number (mysqlbinlog's --offset) is refused, --output=./5 writes ./5;
  * a GTID given to --start-position/--stop-position gets a hint;
  * --start-datetime takes mysqlbinlog's forms: seconds omitted, '/' between the date's parts,
    YYYYMMDDHHMMSS, and seconds since the epoch (@N or a 10-digit number), with the same
    selection as the canonical form.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def run(*args, cwd=None):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL, cwd=cwd)


def main():
    binary, fixture = os.path.abspath(sys.argv[1]), sys.argv[2]
    f = os.path.abspath(os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002"))
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-habits-")
    try:
        ref = run(binary, "dump", f).stdout
        for opt in (["-r"], ["--result-file"]):
            out = os.path.join(tmp, "r.txt")
            p = run(binary, "dump", *opt, out, f)
            check(p.returncode == 0 and open(out, "rb").read() == ref, f"dump {opt} FILE: {p.returncode} {p.stderr[:200]!r}")
        a = run(binary, "dump", "--exclude-server-ids", "1011", f)
        b = run(binary, "dump", "--ignore-server-ids", "1011", f)
        check(a.returncode == 0 and a.stdout == b.stdout, "--ignore-server-ids differs from --exclude-server-ids")
        a = run(binary, "dump", "--hexdump", f)
        b = run(binary, "dump", "-H", f)
        check(b.returncode == 0 and a.stdout == b.stdout, "dump -H differs from --hexdump")

        for cmd, args, word in (
            ("dump", ["-v"], b"binlogctl convert"), ("dump", ["-vv"], b"binlogctl convert"),
            ("dump", ["--verbose"], b"binlogctl convert"),
            ("convert", ["--base64-output=DECODE-ROWS"], b"--format sql"),
            ("dump", ["--raw"], b"binlogctl fetch"), ("dump", ["--to-last-log"], b"-R"),
            ("dump", ["--skip-gtids"], b"convert --format sql --skip-gtids"), ("dump", ["-s"], b"binlogctl dump"),
            ("dump", ["--short-form"], b"binlogctl dump"),
            ("convert", ["-T", "orders"], b"--filter"), ("convert", ["--table=orders"], b"--filter"),
            ("dump", ["--offset=5"], b"--start-position"), ("convert", ["--stop-gtid=1-1011-30"], b"--include-gtids"),
            ("convert", ["-H"], b"dump --hexdump"), ("stats", ["--flashback"], b"convert --flashback"),
            ("dump", ["--print-table-metadata"], b"--decode"), ("dump", ["--force-read"], b"damage"),
        ):
            p = run(binary, cmd, *args, f)
            check(p.returncode == 2, f"{cmd} {args}: exit {p.returncode}, expected 2")
            check(word in p.stderr and b"not expected" not in p.stderr, f"{cmd} {args}: stderr {p.stderr[:300]!r}")
            check(p.stdout == b"", f"{cmd} {args}: wrote on stdout")

        # -o 5: mysqlbinlog's --offset; --output=./5 is a file.
        p = run(binary, "dump", "-o", "5", f, cwd=tmp)
        check(p.returncode == 2 and b"--offset" in p.stderr, f"dump -o 5: {p.returncode} {p.stderr[:300]!r}")
        check(not os.path.exists(os.path.join(tmp, "5")), "dump -o 5 wrote a file named 5")
        p = run(binary, "dump", "--output=./5", f, cwd=tmp)
        check(p.returncode == 0 and open(os.path.join(tmp, "5"), "rb").read() == ref, "dump --output=./5 failed")

        # A GTID given as a position.
        for opt, word in (("--start-position", b"--exclude-gtids ..1-1011-5"), ("--stop-position", b"--include-gtids ..1-1011-5")):
            p = run(binary, "convert", opt, "1-1011-5", f)
            check(p.returncode == 2 and word in p.stderr, f"{opt} GTID: {p.returncode} {p.stderr[:300]!r}")

        # mysqlbinlog's date-time forms: the same selection as the canonical one.
        canon = run(binary, "dump", "--start-datetime", "2024-02-01 00:00:00", f)
        check(canon.returncode == 0, f"canonical datetime: {canon.returncode} {canon.stderr[:200]!r}")
        for form in ("2024-02-01 00:00", "2024/02/01 00:00:00", "20240201000000", "@1706745600", "1706745600"):
            p = run(binary, "dump", "--start-datetime", form, f)
            check(p.returncode == 0 and p.stdout == canon.stdout, f"--start-datetime {form!r}: {p.returncode} {p.stderr[:200]!r}")
        later = run(binary, "dump", "--start-datetime", "2030-01-01 00:00:00", f)
        for form in ("2030/01/01 00:00", "@1893456000"):
            p = run(binary, "dump", "--start-datetime", form, f)
            check(p.stdout == later.stdout, f"--start-datetime {form!r} differs from 2030-01-01 00:00:00")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"mysqlbinlog_habits: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
