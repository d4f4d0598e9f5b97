#!/usr/bin/env python3
"""The damage policy on a real fixture: damaged bytes never come out as data.

usage: damage_records.py BINLOGCTL FIXTURE_DIR

One byte is flipped inside each rows event of a CRC32 fixture in turn (a copy), and once inside
an event_size field. convert --format json must then print no row change out of the damaged
event, one {"type":"DAMAGE",...} record in its place (keys log_name, pos, txn_id, check,
message, skipped_bytes), exit 1 with the finding on stderr; canal-json no row out of it either;
every other record equals the healthy file's.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

DAMAGE_KEYS = ["type", "log_name", "pos", "txn_id", "check", "message", "skipped_bytes"]


def records(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True)
    return p.returncode, [json.loads(l) for l in p.stdout.split(b"\n") if l], p.stderr


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    src = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000003")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    rc, healthy, _ = records(binary, "convert", src)
    check(rc == 0, f"healthy convert: exit {rc}")
    rc, events, _ = records(binary, "dump", "--format", "json", src)
    rows = [e for e in events if e["event_type"] in ("Write_rows_v1", "Update_rows_v1", "Delete_rows_v1")
            and e.get("inner_index") is None]
    check(len(rows) >= 3, f"only {len(rows)} rows events in the fixture")
    tmp = tempfile.mkdtemp(prefix="binlogctl-damage-")
    try:
        data = open(src, "rb").read()
        for n, e in enumerate(rows[:6]):
            for how in ("body", "size"):
                b = bytearray(data)
                if how == "body":
                    b[e["pos"] + (e["end_log_pos"] - e["pos"]) // 2] ^= 0x21
                else:
                    b[e["pos"] + 9] ^= 0x01  # event_size off by one
                bad = os.path.join(tmp, "mariadb-bin.000003")
                open(bad, "wb").write(bytes(b))
                rc, out, err = records(binary, "convert", bad)
                what = f"rows event at {e['pos']} ({how})"
                check(rc == 1, f"{what}: exit {rc}, expected 1")
                check(b"checksum_mismatch" in err, f"{what}: stderr lacks the finding")
                damage = [r for r in out if r.get("type") == "DAMAGE"]
                check(len(damage) >= 1, f"{what}: no DAMAGE record")
                for d in damage:
                    check(list(d.keys()) == DAMAGE_KEYS, f"{what}: DAMAGE keys {list(d.keys())}")
                first = damage[0] if damage else {}
                check(first.get("pos") == e["pos"] and first.get("check") == "checksum_mismatch",
                      f"{what}: first DAMAGE record {first}")
                check(not any(r.get("pos") == e["pos"] and r.get("type") != "DAMAGE" for r in out),
                      f"{what}: a record came out of the damaged event")
                # Everything else is the healthy output (records after a resynchronisation too).
                rest = [r for r in out if r.get("type") != "DAMAGE"]
                expected = [r for r in healthy if r.get("pos") != e["pos"]]
                check(rest == [dict(r, log_name="mariadb-bin.000003") for r in expected],
                      f"{what}: the intact records differ from the healthy file's")
                p = subprocess.run([binary, "replay", bad], capture_output=True)
                check(p.returncode == 1, f"{what}: replay exit {p.returncode}, expected 1")
                rc, cj, _ = records(binary, "convert", "--format", "canal-json", bad)
                if rc != 2:  # built without protobuf
                    check(rc == 1, f"{what}: canal-json exit {rc}, expected 1")
            if failures:
                break
        # Without checksums nothing flags the bytes: an event that does not decode must still be
        # an error for replay (exit 1, named on stderr), as for convert.
        nsrc = os.path.join(fixture, "nochecksum", "binlogs", "mariadb-bin.000001")
        rc, nev, _ = records(binary, "dump", "--format", "json", nsrc)
        tmap = next(e for e in nev if e["event_type"] == "Table_map")
        b = bytearray(open(nsrc, "rb").read())
        b[tmap["pos"] + 19 + 8] = 0xFF  # the database name's length: past the event's end
        bad = os.path.join(tmp, "mariadb-bin.000001")
        open(bad, "wb").write(bytes(b))
        for cmd in (["replay"], ["convert"]):
            p = subprocess.run([binary, *cmd, bad], capture_output=True)
            check(p.returncode == 1, f"{cmd} on an undecodable TABLE_MAP: exit {p.returncode}, expected 1")
            check(b"undecodable_event" in p.stderr, f"{cmd} on an undecodable TABLE_MAP: stderr {p.stderr[-300:]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"damage_records: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
