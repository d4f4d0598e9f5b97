#!/usr/bin/env python3
"""A rows event that says it has more columns than its TABLE_MAP: every consumer reports it.

usage: rows_width.py BINLOGCTL FIXTURE_DIR (testdata/mariadb-10.11)

The first WRITE_ROWS event of the basic fixture's mariadb-bin.000001 (a real MariaDB 10.11 file) is
given one more column than its table has: the column count goes up by one and the new column's bit
is set in the columns-present bitmap (same bitmap size, same row bytes), the CRC32 recomputed. No
server writes such an event; a damaged or foreign file can hold one, and the row bytes can then not
be read column by column. convert --format json, canal-json, canal-proto, sql and stats must each
report it as the undecodable event it is ("rows event has more columns than its TABLE_MAP", with
the file and offset), keep the other events, and exit as they do for any damage: none may read the
row with the table's columns and go on as if nothing happened (Canal did, before its row walk
checked the count).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

WRITE_ROWS_V1 = 23


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, stdin=subprocess.DEVNULL)


def first_write_rows(data):
    """(offset, size) of the first WRITE_ROWS_EVENT_V1 whose column count leaves room in its bitmap."""
    pos = 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        if size < 19:
            break
        # Post-header: table id (6 bytes), flags (2); then the column count (packed, 1 byte here)
        # and the columns-present bitmap.
        if data[pos + 4] == WRITE_ROWS_V1 and data[pos + 27] < 251 and data[pos + 27] % 8 != 0:
            return pos, size
        pos += size
    raise SystemExit("no WRITE_ROWS event with a column count below a multiple of 8 in the fixture")


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    src = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000001")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-width-")
    try:
        bad = os.path.join(tmp, "mariadb-bin.000001")
        shutil.copyfile(src, bad)
        with open(bad, "r+b") as f:
            data = bytearray(f.read())
            pos, size = first_write_rows(data)
            width = data[pos + 27]
            data[pos + 27] = width + 1
            data[pos + 28 + width // 8] |= 1 << (width % 8)
            crc = zlib.crc32(bytes(data[pos:pos + size - 4])) & 0xFFFFFFFF
            struct.pack_into("<I", data, pos + size - 4, crc)
            f.seek(0)
            f.write(data)
        print(f"patched the WRITE_ROWS event at {pos}: {width} -> {width + 1} columns")

        v = run(binary, "verify", bad)
        check(v.returncode == 0, f"verify should see a sound file (the damage is in the row layout): "
                                 f"exit {v.returncode} {v.stdout[:300]!r}")
        want = b"mariadb-bin.000001"
        for args in (["convert", "--format", "json"], ["convert", "--format", "canal-json"],
                     ["convert", "--format", "canal-proto"], ["convert", "--format", "sql"],
                     ["stats", "--format", "json"]):
            name = " ".join(args)
            good = run(binary, *args, src)
            check(good.returncode == 0, f"{name} on the fixture: exit {good.returncode} {good.stderr[:300]!r}")
            p = run(binary, *args, bad)
            err = p.stderr.decode(errors="replace")
            check(p.returncode == 1, f"{name}: exit {p.returncode}, want 1 (damage reported) {err[:400]!r}")
            check("rows event has more columns than its TABLE_MAP" in err,
                  f"{name}: the wide rows event is not reported: {err[:400]!r}")
            check(want in p.stderr and str(pos).encode() in p.stderr,
                  f"{name}: the report does not name the file and the event's offset {pos}: {err[:400]!r}")
            check(len(p.stdout) > 0, f"{name}: the other events' output is missing")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
