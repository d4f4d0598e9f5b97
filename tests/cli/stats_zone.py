#!/usr/bin/env python3
"""stats text says the zone of its times (issue 36, item 8, part).

usage: stats_zone.py BINLOGCTL FIXTURE_DIR

With --timezone other than UTC the text report's first line names the zone its times are in,
and the times are those of the zone (the UTC report's times shifted by its offset); with UTC
(the default) the report is as before, with no such line.
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

    utc = subprocess.run([binary, "stats", f], capture_output=True).stdout.decode()
    for zone, shown in (("Asia/Shanghai", "08:00:30"), ("+05:30", "05:30:30")):
        p = subprocess.run([binary, "stats", "--timezone", zone, f], capture_output=True)
        text = p.stdout.decode()
        check(p.returncode == 0, f"--timezone {zone}: exit {p.returncode}")
        check(text.startswith(f"Times in {zone} (--timezone)\n"), f"--timezone {zone}: first line {text[:80]!r}")
        check(f"2024-02-01 {shown}" in text, f"--timezone {zone}: no time {shown} in the zone")
    check(not utc.startswith("Times in") and "2024-02-01 00:00:30" in utc, "the UTC report changed")
    print(f"stats_zone: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
