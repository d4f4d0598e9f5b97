#!/usr/bin/env python3
"""dump --filter, the common table selection (issue 36, item 9).

usage: dump_filter.py BINLOGCTL FIXTURE_DIR

On a real chain: dump --filter RULE lists exactly the unfiltered listing without the TABLE_MAPs
of tables RULE does not match and the rows events that use their ids (JSON and text alike, the
events of payloads and -d combined); a rule that matches no table is a warning, exit 0; a rule
that does not compile is exit 2.
"""
import json
import os
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def events(p):
    return [json.loads(x) for x in p.stdout.split(b"\n") if x]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    chain = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    everything = events(run(binary, "dump", "--format", "json", "--decode", chain))
    for rule, match in ((r"shop\.orders", lambda d, t: d == "shop" and t == "orders"),
                        (r"shop\..*,typelab\.all_types", lambda d, t: d == "shop" or (d, t) == ("typelab", "all_types"))):
        expected, out_ids = [], set()
        for e in everything:
            body = e.get("body") or {}
            if e["event_type"] == "Table_map":
                if match(body["database"], body["table"]):
                    out_ids.discard(body["table_id"])
                else:
                    out_ids.add(body["table_id"])
                    continue
            elif re.match(r"(Write|Update|Delete)_rows", e["event_type"]) and body.get("table_id") in out_ids:
                continue
            expected.append((e["log_name"], e["pos"], e.get("inner_index")))
        p = run(binary, "dump", "--format", "json", "--decode", "--filter", rule, chain)
        got = [(e["log_name"], e["pos"], e.get("inner_index")) for e in events(p)]
        check(p.returncode == 0, f"--filter {rule}: exit {p.returncode}: {p.stderr[:300]!r}")
        check(got == expected, f"--filter {rule}: {len(got)} events, expected {len(expected)}")
        check(len(got) < len(everything), f"--filter {rule}: nothing left out")
        t = run(binary, "dump", "--filter", rule, chain)
        check(len(t.stdout.split(b"\n")) - 2 == len(expected), f"--filter {rule} (text): another count")
    p = run(binary, "dump", "--filter", r"nosuch\.table", chain)
    check(p.returncode == 0 and b"matched no table" in p.stderr, f"unmatched rule: {p.returncode} {p.stderr[:200]!r}")
    p = run(binary, "dump", "--filter", "shop\\.(", chain)
    check(p.returncode == 2 and p.stdout == b"", f"bad rule: exit {p.returncode}")
    print(f"dump_filter: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
