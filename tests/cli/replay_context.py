#!/usr/bin/env python3
"""replay checks the source's context and names every transaction (issue #32 points 1 and 2).

usage: replay_context.py BINLOGCTL TXN_CHAIN_DIR

On a copy of the shared MariaDB corpus `txn` chain (skipped, exit 77, when it is absent):
  * a break of the source's context is an invariant violation `source_context`, exit 1, naming
    the file and the offset verify names: the chain with mariadb-bin.000008 and its index line
    removed (file_sequence_gap), an end_log_pos patched by +1000 with its CRC32 recomputed
    (log_pos_mismatch), the files given out of order (file_sequence_gap); the intact copy is ok;
  * every timeline action that concerns an event names it: its RDP id (convert's txn_id for
    the same transaction, with the same GTID), its file and its start position (an event that
    dump lists there); every sample names where the upstream reads; RDP ids never go down
    along the source.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, chain = sys.argv[1], sys.argv[2]
    if not os.path.isdir(chain):
        print("skip: no shared corpus")
        return 77
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    def replay(*args):
        p = run(binary, "replay", "--format", "json", *args)
        try:
            s = json.loads(p.stdout.strip().split(b"\n")[-1])["summary"]
        except (ValueError, KeyError, IndexError):
            s = None
        return p, s

    def expect_break(what, args, log_name, pos, check_code):
        p, s = replay(*args)
        check(p.returncode == 1, f"{what}: exit {p.returncode}, want 1 ({p.stderr[-300:]!r})")
        if s is None:
            check(False, f"{what}: no summary")
            return
        vs = s["invariants"]["violations"]
        check(not s["invariants"]["ok"] and vs, f"{what}: no violation")
        if not vs:
            return
        v = vs[0]
        check(v["check"] == "source_context", f"{what}: first violation {v['check']}: {v['message']}")
        check(v.get("log_name") == log_name and v.get("pos") == pos,
              f"{what}: violation at {v.get('log_name')}:{v.get('pos')}, want {log_name}:{pos}")
        check(check_code in v["message"], f"{what}: message lacks {check_code}: {v['message']}")

    with tempfile.TemporaryDirectory() as tmp:
        # The intact copy: no break.
        whole = os.path.join(tmp, "whole")
        shutil.copytree(chain, whole)
        p, s = replay(whole)
        check(p.returncode == 0 and s and s["invariants"]["ok"], f"intact chain: exit {p.returncode}")

        # 1. A file removed, with its index line.
        gap = os.path.join(tmp, "gap")
        shutil.copytree(chain, gap)
        os.remove(os.path.join(gap, "mariadb-bin.000008"))
        idx = os.path.join(gap, "mariadb-bin.index")
        with open(idx) as f:
            lines = [ln for ln in f if "mariadb-bin.000008" not in ln]
        with open(idx, "w") as f:
            f.writelines(lines)
        v = run(binary, "verify", "--format", "json", idx)
        check(b"file_sequence_gap" in v.stdout, "verify does not see the removed file")
        expect_break("file removed", [idx], "mariadb-bin.000008", 0, "file_sequence_gap")

        # 2. An end_log_pos patched by +1000 (CRC32 recomputed: only the position is wrong).
        bad = os.path.join(tmp, "logpos")
        shutil.copytree(chain, bad)
        target = os.path.join(bad, "mariadb-bin.000003")
        d = run(binary, "dump", "--format", "json", target)
        evs = [json.loads(x) for x in d.stdout.split(b"\n") if x.strip()]
        mid = [e for e in evs if e["event_type"] in ("Query", "Write_rows", "Xid", "Table_map")]
        check(len(mid) > 3, "no event to patch")
        ev = mid[len(mid) // 2]
        with open(target, "r+b") as f:
            f.seek(ev["pos"])
            size = struct.unpack("<I", f.read(13)[9:13])[0]
            f.seek(ev["pos"])
            body = bytearray(f.read(size))
            old = struct.unpack_from("<I", body, 13)[0]
            struct.pack_into("<I", body, 13, old + 1000)
            struct.pack_into("<I", body, size - 4, zlib.crc32(bytes(body[: size - 4])) & 0xFFFFFFFF)
            f.seek(ev["pos"])
            f.write(body)
        v = run(binary, "verify", "--format", "json", bad)
        check(b"log_pos_mismatch" in v.stdout and b"checksum_mismatch" not in v.stdout,
              "verify does not see the patched position (or sees a checksum)")
        expect_break("end_log_pos + 1000", [bad], "mariadb-bin.000003", ev["pos"], "log_pos_mismatch")

        # 3. Files out of order.
        names = sorted(n for n in os.listdir(whole) if n[-6:].isdigit())
        order = [os.path.join(whole, n) for n in names]
        order[1], order[2] = order[2], order[1]
        expect_break("out of order", order, names[1], 0, "file_sequence_gap")

        # Identities: timeline records against convert's transactions and dump's events.
        tl = os.path.join(tmp, "t.jsonl")
        p, s = replay("--quota", "64K", "--source-rate", "1MB/s", "--control-delay", "1s",
                      "--sink", ".*=cap:40K/s", "--timeline", tl, whole)
        check(p.returncode == 0, f"pressure run: exit {p.returncode}")
        conv = run(binary, "convert", "--format", "json", whole)
        gtid_of = {}
        for x in conv.stdout.split(b"\n"):
            if x.strip():
                r = json.loads(x)
                if "txn_id" in r:
                    gtid_of[r["txn_id"]] = r.get("gtid")
        d = run(binary, "dump", "--format", "json", whole)
        starts = set()
        for x in d.stdout.split(b"\n"):
            if x.strip():
                e = json.loads(x)
                starts.add((e["log_name"], e["pos"]))
        kinds = {}
        with open(tl) as f:
            records = [json.loads(x) for x in f.read().split("\n") if x.strip()]
        last_read = 0
        for r in records:
            k = r["kind"]
            if k == "sample":
                rd = r.get("reading")
                if rd:
                    check(rd["rdp_id"] >= last_read, f"reading goes back: {r}")
                    last_read = rd["rdp_id"]
                continue
            kinds[k] = kinds.get(k, 0) + 1
            if "path" not in r and k not in ("pause_area", "resume_area"):
                continue
            if k in ("resume_path", "resume_area") and "rdp_id" not in r:
                continue  # a lazy resume sent by the timer concerns no event
            if k in ("pause_area", "resume_area") and "rdp_id" not in r:
                check(False, f"{k} without an event: {r}")
                continue
            check("rdp_id" in r and "log_name" in r and "pos" in r, f"{k} without identity: {r}")
            if "rdp_id" not in r:
                continue
            if r["rdp_id"] in gtid_of:
                check(gtid_of[r["rdp_id"]] == r["gtid"],
                      f"{k}: RDP id {r['rdp_id']} has GTID {r['gtid']}, convert says {gtid_of[r['rdp_id']]}")
            check((r["log_name"], r["pos"]) in starts, f"{k}: no event starts at {r['log_name']}:{r['pos']}")
        for k in ("pause_path", "circuit_break", "reset", "reset_applied"):
            check(kinds.get(k, 0) > 0, f"the pressure run has no {k} ({kinds})")
        check(last_read > 0, "no sample names the upstream's position")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
