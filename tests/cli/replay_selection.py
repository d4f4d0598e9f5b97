#!/usr/bin/env python3
"""replay takes the selection of the other subcommands, and writes its files safely (issue
"honest at the edges", points 3 and 4).

usage: replay_selection.py BINLOGCTL FIXTURE_DIR

On the basic fixture chain:
  * --filter: only the selected tables' paths are replayed; commits stay;
  * --include-gtids / --exclude-gtids split the transactions: the source events of both add up
    to the whole run's, and every event of one GTID goes with it;
  * --start-position / --stop-position / --start-datetime narrow the events, as in convert;
  * an empty GTID set, start after stop: exit 2; a filter rule that matches nothing: a warning;
  * -o, --timeline and --plot naming an input: exit 2, the input untouched; --timeline writes
    the whole file (no temporary left beside it).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    chain = os.path.join(fixture, "basic", "binlogs")
    f2 = os.path.join(chain, "mariadb-bin.000004")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    def summary(*args, path=chain):
        p = run(binary, "replay", "--format", "json", "--policy", "none", *args, path)
        check(p.returncode == 0, f"replay {args}: exit {p.returncode} {p.stderr[-200:]!r}")
        try:
            return json.loads(p.stdout.strip().split(b"\n")[-1])["summary"]
        except (ValueError, KeyError, IndexError):
            check(False, f"replay {args}: no summary")
            return {"source_events": 0, "paths": []}

    def path_names(s):
        return {p["path"] if isinstance(p, dict) else p for p in s["paths"]}

    every = summary()
    names = path_names(every)
    check("shop.orders" in names and len(names) > 3, f"fixture paths: {sorted(names)}")

    only = summary("--filter", r"shop\.orders")
    got = path_names(only)
    check(got - {"(control)"} == {"shop.orders"}, f"--filter shop.orders: paths {sorted(got)}")
    check(0 < only["source_events"] < every["source_events"], "--filter: event count")

    inc = summary("--include-gtids", "..1-1011-23")
    exc = summary("--exclude-gtids", "..1-1011-23")
    check(0 < inc["source_events"] < every["source_events"], f"--include-gtids: {inc['source_events']} events")
    check(inc["source_events"] + exc["source_events"] == every["source_events"],
          f"include + exclude = {inc['source_events']} + {exc['source_events']} != {every['source_events']}")
    one = summary("--include-gtids", "1-1011-23")
    check(0 < one["source_events"] < inc["source_events"], f"one GTID: {one['source_events']} events")

    # Positions and times, against convert's selection of the same range.
    events = [json.loads(l) for l in run(binary, "dump", "--format", "json", f2).stdout.split(b"\n") if l]
    gtids = [e for e in events if e["event_type"] == "Gtid"]
    start, stop = gtids[1]["pos"], gtids[-1]["pos"]
    whole = summary(path=f2)
    part = summary("--start-position", str(start), "--stop-position", str(stop), path=f2)
    check(0 < part["source_events"] < whole["source_events"], f"positions: {part['source_events']} of {whole['source_events']}")
    late = summary("--start-datetime", "2099-01-01", path=f2)
    check(late["source_events"] == 0, f"--start-datetime 2099: {late['source_events']} events")

    for args, word in ((["--include-gtids", ""], b"--include-gtids"),
                       (["--start-position", "900", "--stop-position", "500"], b"--start-position"),
                       (["--start-datetime", "2021-02-30"], b"2021-02-30")):
        p = run(binary, "replay", *args, f2)
        check(p.returncode == 2 and word in p.stderr, f"replay {args}: exit {p.returncode} {p.stderr[:200]!r}")
    p = run(binary, "replay", "--filter", r"nowhere\..*", chain)
    check(p.returncode == 0 and b"nowhere" in p.stderr and b"matched no table" in p.stderr,
          f"unmatched filter: exit {p.returncode} {p.stderr[-200:]!r}")

    tmp = tempfile.mkdtemp(prefix="binlogctl-replaysel-")
    try:
        copy = os.path.join(tmp, "mariadb-bin.000004")
        shutil.copyfile(f2, copy)
        digest = hashlib.sha256(open(copy, "rb").read()).hexdigest()
        for opt in ("-o", "--timeline", "--plot"):
            p = run(binary, "replay", opt, copy, copy)
            check(p.returncode == 2 and b"one of the inputs" in p.stderr, f"replay {opt} INPUT: exit {p.returncode} {p.stderr[:200]!r}")
            check(hashlib.sha256(open(copy, "rb").read()).hexdigest() == digest, f"replay {opt} INPUT changed the input")
        tl = os.path.join(tmp, "t.jsonl")
        svg = os.path.join(tmp, "p.svg")
        out = os.path.join(tmp, "s.json")
        p = run(binary, "replay", "--format", "json", "--timeline", tl, "--plot", svg, "-o", out, copy)
        check(p.returncode == 0, f"replay --timeline/--plot/-o: exit {p.returncode} {p.stderr[-200:]!r}")
        lines = open(tl, "rb").read().split(b"\n")
        check(len(lines) >= 2 and lines[-1] == b"" and all(json.loads(l) is not None for l in lines if l), "timeline: not whole JSON Lines")
        check(open(svg, "rb").read().rstrip().endswith(b"</svg>"), "plot: not a whole SVG")
        check(b'"summary"' in open(out, "rb").read(), "-o: no summary")
        check(sorted(os.listdir(tmp)) == ["mariadb-bin.000004", "p.svg", "s.json", "t.jsonl"], f"left behind: {os.listdir(tmp)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"replay_selection: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
