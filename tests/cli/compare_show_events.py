#!/usr/bin/env python3
"""Compare `binlogctl dump --format json` with SHOW BINLOG EVENTS output, field for field.

usage: compare_show_events.py BINLOGCTL BINLOG_DIR TSV_DIR [DUMP_ARGS...]

For every <file>.tsv in TSV_DIR (the mariadb client's --batch output of
SHOW BINLOG EVENTS IN '<file>'), dumps BINLOG_DIR/<file> and compares Log_name, Pos,
Event_type, Server_id, End_log_pos and Info. The listing is taken while the server runs, so the
dump may have exactly one more event at the end: the Stop event written at shutdown.
DUMP_ARGS go to every dump (the encrypted set's --key-file: the server listed the events it
decrypts, binlogctl decrypts the files). Exits 1 on the first difference (printed), 77 when the directories are missing (skip).
"""
import json
import os
import subprocess
import sys


def client_view(s):
    """In the captured listings, the Info of Query events (built by MariaDB's Query_log_event::
    pack_info through a 3-byte utf8 String) shows every character outside the BMP as four '?';
    the bytes in the binlog are the real characters, which binlogctl prints."""
    return "".join("????" if ord(c) > 0xFFFF else c for c in s)


def batch_escape(s):
    return (s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\0", "\\0"))


def main():
    exe, bdir, tdir = sys.argv[1:4]
    extra = sys.argv[4:]
    if not os.path.isdir(bdir) or not os.path.isdir(tdir):
        print(f"skip: {bdir} or {tdir} missing")
        return 77
    tsvs = sorted(f for f in os.listdir(tdir) if f.endswith(".tsv"))
    if not tsvs:
        print(f"no .tsv files in {tdir}")
        return 1
    total = 0
    for t in tsvs:
        name = t[:-4]
        with open(os.path.join(tdir, t), encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().split("\n")
        rows = [l.split("\t") for l in lines[1:] if l]
        out = subprocess.run([exe, "dump", "--format", "json", *extra, os.path.join(bdir, name)],
                             capture_output=True)
        if out.returncode != 0:
            print(f"{name}: binlogctl exited {out.returncode}: {out.stderr.decode(errors='replace')}")
            return 1
        got = [json.loads(l) for l in out.stdout.decode("utf-8").splitlines()]
        got = [g for g in got if "inner_index" not in g]
        if len(got) == len(rows) + 1 and got[-1]["event_type"] == "Stop":
            got = got[:-1]
        if len(got) != len(rows):
            print(f"{name}: {len(got)} events, SHOW BINLOG EVENTS lists {len(rows)}")
            return 1
        for g, r in zip(got, rows):
            mine = [g["log_name"], str(g["pos"]), g["event_type"], str(g["server_id"]),
                    str(g["end_log_pos"]), batch_escape(client_view(g["info"]) if g["event_type"] == "Query" else g["info"])]
            if len(r) > 6:  # Info may itself hold no tab (escaped), but be safe
                r = r[:5] + ["\t".join(r[5:])]
            if mine != r:
                print(f"{name}: mismatch at pos {r[1]}:\n  server:    {r}\n  binlogctl: {mine}")
                return 1
        total += len(rows)
    print(f"{total} events in {len(tsvs)} files match SHOW BINLOG EVENTS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
