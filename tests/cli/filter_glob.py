#!/usr/bin/env python3
"""--filter '*' is blamed on what it is (issue 36, item 8: diagnostics in the wrong place).

usage: filter_glob.py BINLOGCTL FIXTURE_DIR

A rule whose *, + or ? has nothing before it to repeat (a glob written where a regular expression
is expected) is exit 2 with a message that says so and names the rule, in every subcommand that
takes --filter; never "unmatched ( or )". Valid rules such as 'shop\\..*' and '(?:shop)\\..*' pass.
"""
import os
import subprocess
import sys


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    f = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    for cmd in ("dump", "convert", "stats", "schema"):
        for rule, shown in (("*", b"rule '*'"), ("shop\\..*,*", b"rule '*'"), ("+x", b"rule '+x'"), ("a|*b", b"rule 'a|*b'")):
            p = subprocess.run([binary, cmd, "--filter", rule, f], capture_output=True)
            check(p.returncode == 2, f"{cmd} --filter {rule!r}: exit {p.returncode}")
            check(shown in p.stderr and b"nothing before it to repeat" in p.stderr and b"not a glob" in p.stderr
                  and b"unmatched" not in p.stderr, f"{cmd} --filter {rule!r}: {p.stderr[:300]!r}")
        for rule in ("shop\\..*", "(?:shop)\\..*"):
            p = subprocess.run([binary, cmd, "--filter", rule, f], capture_output=True)
            check(p.returncode == 0, f"{cmd} --filter {rule!r}: exit {p.returncode}: {p.stderr[:300]!r}")
    print(f"filter_glob: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
