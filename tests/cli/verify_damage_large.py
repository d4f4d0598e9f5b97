#!/usr/bin/env python3
"""verify on a real file of 3.7 MB with damage in the middle: each damage found, the rest read on.

usage: verify_damage_large.py BINLOGCTL CORPUS_PUBLIC_DIR     (exit 77 = skipped: no corpus)

The public corpus's mariadb-operator__mariadb-poc/domain_id_0/mariadb-repl-bin.000002 (a real MariaDB
11.8 file, CRC32, 26,594 events) is damaged in copies, and verify must report exactly what the
damage is:
  * one byte flipped in the body of two statements inside transactions (one early, one late):
    checksum_mismatch at each, with the stored and the computed CRC32 as Python's zlib sums the
    damaged bytes, and nothing else;
  * the size field of a statement inside a transaction made 8 bytes shorter: checksum_mismatch there
    and the reader back on its feet at the next event, the rest of the file checked (every event
    counted), no other finding. Before 835865f, the bytes after the short event were taken for an
    event whose size ran past the end of the file: truncated_event, and 1.8 MB of the file unread;
  * the sound file: no finding.
(Written for the CRC32s summed on a second thread, tried and reverted: bench/HISTORY.md, "CRC32s
ahead on the second core"; it holds verify's damage reports on a large real file all the same.)
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

REL = os.path.join("mariadb-operator__mariadb-poc", "domain_id_0", "mariadb-repl-bin.000002")


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, stdin=subprocess.DEVNULL)


def frame(data):
    out, pos = [], 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        out.append((pos, size))
        pos += size
    assert pos == len(data), "the corpus file does not frame"
    return out


def inner_query(data, events, near):
    """The index of the first QUERY event at or after `near` that follows another QUERY event: a
    statement inside a transaction, neither its GTID nor its BEGIN."""
    for i in range(max(near, 1), len(events)):
        if data[events[i][0] + 4] == 2 and data[events[i - 1][0] + 4] == 2:
            return i
    raise SystemExit("no statement inside a transaction in the corpus file")


def findings(binary, path):
    p = run(binary, "verify", "--format", "json", path)
    rows = [json.loads(x) for x in p.stdout.split(b"\n") if x.strip()]
    return p.returncode, [r for r in rows if "check" in r], [r for r in rows if "summary" in r]


def main():
    binary, corpus = sys.argv[1], sys.argv[2]
    src = os.path.join(corpus, REL)
    if not os.path.exists(src):
        print("skipped: no public corpus at", corpus)
        return 77
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    data = open(src, "rb").read()
    events = frame(data)
    tmp = tempfile.mkdtemp(prefix="binlogctl-damage-large-")
    try:
        rc, found, _ = findings(binary, src)
        check(rc == 0 and not found, f"the sound file: exit {rc}, findings {found[:3]}")

        # Two flipped bytes, in the bodies of an early and a late event.
        bad = bytearray(data)
        hit = []
        for i in (inner_query(data, events, len(events) // 10), inner_query(data, events, len(events) * 9 // 10)):
            pos, size = events[i]
            bad[pos + 19 + (size - 23) // 2] ^= 0x10
            hit.append((pos, struct.unpack_from("<I", bad, pos + size - 4)[0],
                        zlib.crc32(bytes(bad[pos:pos + size - 4])) & 0xFFFFFFFF))
        path = os.path.join(tmp, "mariadb-repl-bin.000002")
        open(path, "wb").write(bad)
        rc, found, _ = findings(binary, path)
        check(rc == 1, f"flipped bytes: exit {rc}")
        got = [(f.get("pos"), f.get("check"), f.get("message")) for f in found]
        want = [(pos, "checksum_mismatch", f"stored 0x{stored:08x}, computed 0x{computed:08x}")
                for pos, stored, computed in hit]
        check(got == want, f"flipped bytes: findings {got}, want {want}")

        # A shorter size field, in the middle: found there, the rest read again.
        bad = bytearray(data)
        k = inner_query(data, events, len(events) // 2)
        pos, size = events[k]
        struct.pack_into("<I", bad, pos + 9, size - 8)
        open(path, "wb").write(bad)
        rc, found, summary = findings(binary, path)
        check(rc == 1, f"a shorter size field: exit {rc}")
        got = [(f.get("pos"), f.get("check"), f.get("message")) for f in found]
        stored = struct.unpack_from("<I", bad, pos + size - 8 - 4)[0]
        computed = zlib.crc32(bytes(bad[pos:pos + size - 8 - 4])) & 0xFFFFFFFF
        want = [(pos, "checksum_mismatch", f"stored 0x{stored:08x}, computed 0x{computed:08x}; "
                                           f"resynchronised at {pos + size} after skipping {size} bytes")]
        check(got == want, f"a shorter size field: findings {got[:4]}, want {want}")
        n = summary[0]["summary"].get("events") if summary else None
        check(n == len(events), f"a shorter size field: {n} events counted, the file has {len(events)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
