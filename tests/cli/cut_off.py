#!/usr/bin/env python3
"""Transactions cut off by the end of a file (issue "honest at the edges", point 5).

usage: cut_off.py BINLOGCTL FIXTURE_DIR

On copies of a real fixture cut at an event boundary inside a transaction:
  * convert --format json ends the transaction with a CUT_OFF record, in order, and says so on
    stderr (transaction_structure); canal-json and stats say so on stderr too;
  * a closed file (format description without the in-use flag), alone or followed by the next
    file: an error, exit 1; the same bytes with the in-use flag set (a live binlog), or a
    --stop-position inside the transaction: a warning, exit 0; flagged in use and followed by the
    next file: a crash, a warning (verify finds that the next file's Gtid_list does not fit one);
  * an intact file: no CUT_OFF record, nothing on stderr.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(*args, stdin=None):
    return subprocess.run(list(args), capture_output=True, stdin=stdin or subprocess.DEVNULL)


def records(out):
    return [json.loads(l) for l in out.split(b"\n") if l]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    binlogs = os.path.join(fixture, "basic", "binlogs")
    src = os.path.join(binlogs, "mariadb-bin.000002")
    nxt = os.path.join(binlogs, "mariadb-bin.000003")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    events = records(run(binary, "dump", "--format", "json", src).stdout)
    # A multi-row transaction: the boundary after its first rows event, before its XID.
    cut = None
    for i, e in enumerate(events):
        if e["event_type"] == "Gtid" and e["info"].startswith("BEGIN GTID"):
            rows = [x for x in events[i + 1:i + 8] if x["event_type"].endswith("_rows_v1")]
            xid = next((x for x in events[i + 1:] if x["event_type"] == "Xid"), None)
            if rows and xid:
                cut = (rows[0]["end_log_pos"], e["info"].split("GTID ")[1])
                break
    if cut is None:
        print("FAIL: no transaction with rows in the fixture")
        return 1
    end, gtid = cut
    data = open(src, "rb").read()
    check(data[4 + 17] & 1 == 0, "fixture: the closed file's format description carries the in-use flag")

    tmp = tempfile.mkdtemp(prefix="binlogctl-cutoff-")
    try:
        closed = os.path.join(tmp, "closed", "mariadb-bin.000002")
        live = os.path.join(tmp, "live", "mariadb-bin.000002")
        for p, flag in ((closed, 0), (live, 1)):
            os.makedirs(os.path.dirname(p))
            b = bytearray(data[:end])
            b[4 + 17] |= flag  # LOG_EVENT_BINLOG_IN_USE_F; the FDE's CRC is computed without it
            open(p, "wb").write(b)

        def cut_record(out):
            recs = records(out)
            return recs[-1] if recs and recs[-1].get("type") == "CUT_OFF" else None

        for path, want_rc, sev in ((closed, 1, b"error"), (live, 0, b"warning")):
            name = os.path.basename(os.path.dirname(path))
            p = run(binary, "convert", path)
            check(p.returncode == want_rc, f"convert {name}: exit {p.returncode}, expected {want_rc}")
            r = cut_record(p.stdout)
            check(r is not None, f"convert {name}: no CUT_OFF record at the end: {p.stdout[-300:]!r}")
            if r:
                check(r["pos"] == end and r["gtid"] == gtid and r["log_name"] == "mariadb-bin.000002",
                      f"convert {name}: CUT_OFF record {r}")
                rows = [x for x in records(p.stdout) if x.get("type") in ("INSERT", "UPDATE", "DELETE")]
                check(rows and rows[-1]["txn_id"] == r["txn_id"], f"convert {name}: txn_id of the cut rows")
            check(b"transaction_structure" in p.stderr and b"cut off" in p.stderr and sev in p.stderr,
                  f"convert {name}: stderr {p.stderr[-300:]!r}")
            # stdin, as in the issue's `head -c N FILE | binlogctl convert -`
            with open(path, "rb") as fh:
                s = run(binary, "convert", "-", stdin=fh)
            check(s.returncode == want_rc and cut_record(s.stdout) is not None, f"convert - {name}: exit {s.returncode}")
            for cmd in (["convert", "--format", "canal-json"], ["stats"]):
                q = run(binary, *cmd, path)
                check(q.returncode == want_rc and b"cut off" in q.stderr,
                      f"{cmd} {name}: exit {q.returncode}, stderr {q.stderr[-200:]!r}")

        # A file still flagged in use followed by another in the chain: its server crashed inside
        # the transaction (it never closed the file, and began the next one on restart), a warning
        # that says so (cli.live_restart proves it on a real crash). verify, which also reads the
        # next file's Gtid_list, sees that this next file counts the cut-off transaction, which a
        # crashed server's recovery does not: the copy was cut, not crashed.
        p = run(binary, "convert", live, nxt)
        check(p.returncode == 0 and b"warning: transaction_structure" in p.stderr and b"cut off by a crash" in p.stderr,
              f"convert live+next: exit {p.returncode} {p.stderr[-300:]!r}")
        p = run(binary, "convert", closed, nxt)
        check(p.returncode == 1 and b"error: transaction_structure" in p.stderr, f"convert closed+next: exit {p.returncode}")
        v = run(binary, "verify", "--format", "json", live, nxt)
        found = [(x["check"], x["severity"]) for x in records(v.stdout) if "check" in x]
        check(v.returncode == 1 and ("server_crash", "warning") in found and ("gtid_list_mismatch", "error") in found,
              f"verify live+next: exit {v.returncode}, {found}")
        recs = records(p.stdout)
        at = [i for i, x in enumerate(recs) if x.get("type") == "CUT_OFF"]
        check(len(at) == 1 and recs[at[0] + 1]["log_name"] == "mariadb-bin.000003",
              "convert live+next: CUT_OFF not right before the next file's records")

        # A stop position inside the transaction: the user's cut, a warning.
        p = run(binary, "convert", "--stop-position", str(end), src)
        check(p.returncode == 0 and cut_record(p.stdout) is not None and b"warning: transaction_structure" in p.stderr,
              f"convert --stop-position {end}: exit {p.returncode}, stderr {p.stderr[-200:]!r}")

        # Intact files: no record, nothing said.
        for path in (src, nxt):
            p = run(binary, "convert", path)
            check(p.returncode == 0 and b"CUT_OFF" not in p.stdout and p.stderr == b"",
                  f"convert {path}: exit {p.returncode}, stderr {p.stderr[:200]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cut_off: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
