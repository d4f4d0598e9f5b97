#!/usr/bin/env python3
"""Diagnostics in the right place (issue 36, item 8).

usage: diagnostics.py BINLOGCTL FIXTURE_DIR

  * gtid_gap is not reported across a missing file (binlogctl-verify(1)): the relay chain without
    hx-relay.000008 (whose next file carries no Gtid_list of its own) gives the file_sequence_gap
    and no gtid_gap; the real gaps of the basic chain are still found right after a missing file.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, stdin=subprocess.DEVNULL, **kw)


def jsonl(data):
    return [json.loads(x) for x in data.split(b"\n") if x.strip()]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    relay = os.path.join(fixture, "relay", "binlogs")
    basic = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-diag-")
    try:
        # --- gtid_gap across a missing file ---------------------------------------------------
        d = os.path.join(tmp, "relay-hole")
        os.mkdir(d)
        for n in sorted(os.listdir(relay)):
            if n.startswith("hx-relay.0") and n != "hx-relay.000008":
                shutil.copyfile(os.path.join(relay, n), os.path.join(d, n))
        p = run(binary, "verify", "--format", "json", d)
        found = jsonl(p.stdout)
        checks = [x.get("check") for x in found if "check" in x]
        check(checks == ["file_sequence_gap"], f"relay chain without 000008: findings {checks} {p.stdout[:600]!r}")
        check(p.returncode == 1, f"relay chain without 000008: exit {p.returncode}")

        d = os.path.join(tmp, "basic-hole")
        os.mkdir(d)
        for n in sorted(os.listdir(basic)):
            if n.startswith("mariadb-bin.0") and n != "mariadb-bin.000004":
                shutil.copyfile(os.path.join(basic, n), os.path.join(d, n))
        p = run(binary, "verify", "--format", "json", d)
        gaps = [x for x in jsonl(p.stdout) if x.get("check") == "gtid_gap"]
        check(len(gaps) == 2 and all(g["log_name"] == "mariadb-bin.000005" for g in gaps),
              f"basic chain without 000004: the gaps of 000005 are still found: {gaps}")

    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"diagnostics: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
