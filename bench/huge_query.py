#!/usr/bin/env python3
"""A valid binlog with one huge QUERY event, grown from a real one (issue 36, item 10).

usage: huge_query.py [--size-mb N] [--utf8] [--compressed] [--source BINLOG] OUTPUT

Copies BINLOG (default: the repository's testdata/mariadb-10.11/basic/binlogs/mariadb-bin.000005,
written by MariaDB 10.11) to OUTPUT, with its first statement-format INSERT (a QUERY event:
`INSERT INTO stmt_log (msg) VALUES ('first')`) grown to about N MiB by a SQL comment appended to
the statement (`... /* binlogctl huge statement ... */`, still a statement a server accepts):
the event's size, its end_log_pos and CRC32, and the end_log_pos and CRC32 of every event after it
are fixed, so that `binlogctl verify OUTPUT` finds the file as clean as BINLOG. Written in pieces:
the script itself holds a few MiB whatever N. --compressed: the grown event is written as MariaDB's
QUERY_COMPRESSED_EVENT (type 165; the statement as MariaDB's binlog_buf_compress stores it: a
header byte 0x80|lenlen, the length big-endian, the zlib stream); the script then holds the
compressed statement.
"""
import argparse
import os
import struct
import sys
import zlib

HEADER = 19
QUERY = 2
QUERY_COMPRESSED = 165
FDE = 15


def events(data):
    pos = 4
    while pos + HEADER <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        yield pos, size
        pos += size


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--source", default=os.path.join(here, "..", "testdata", "mariadb-10.11", "basic", "binlogs",
                                                     "mariadb-bin.000005"))
    ap.add_argument("--utf8", action="store_true",
                    help="a comment with 2-, 3- and 4-byte UTF-8 characters, so that pieces of the text end inside them")
    ap.add_argument("--compressed", action="store_true",
                    help="write the grown event as a QUERY_COMPRESSED_EVENT (MariaDB, zlib)")
    ap.add_argument("output")
    a = ap.parse_args()
    with open(a.source, "rb") as f:
        data = f.read()
    assert data[:4] == b"\xfebin", "not a binlog"
    checksum = False
    target = None
    for pos, size in events(data):
        t = data[pos + 4]
        if t == FDE:
            # binlog version 2, server version 50, create timestamp 4, header length 1, the
            # post-header lengths, then the checksum algorithm (1 = CRC32) and the CRC itself.
            checksum = data[pos + size - 5] == 1
        elif t == QUERY and target is None:
            body = data[pos + HEADER:pos + size - (4 if checksum else 0)]
            db_len = body[8]
            status_len = struct.unpack_from("<H", body, 11)[0]
            query = body[13 + status_len + db_len + 1:]
            if query.startswith(b"INSERT"):
                target = (pos, size)
    if target is None:
        sys.exit("no statement-format INSERT in " + a.source)
    tpos, tsize = target
    tail = 4 if checksum else 0
    filler_unit = b"binlogctl huge statement, grown from a real QUERY event; "
    if a.utf8:
        filler_unit = "binlogctl énorme Anweisung ✓ 巨大な文 😀; ".encode()
    total_filler = max(0, a.size_mb * 1024 * 1024 - tsize)
    n_units = total_filler // len(filler_unit)
    extra = b" /* " + b"" + b" */"
    delta = len(extra) + n_units * len(filler_unit)
    tmp = a.output + ".tmp"
    body = data[tpos + HEADER:tpos + tsize - tail]
    db_len = body[8]
    qstart = 13 + struct.unpack_from("<H", body, 11)[0] + db_len + 1
    chunk = filler_unit * max(1, (4 << 20) // len(filler_unit))
    per_chunk = len(chunk) // len(filler_unit)

    def statement_pieces():
        yield body[qstart:]
        yield b" /* "
        left = n_units
        while left > 0:
            k = min(left, per_chunk)
            yield chunk if k == per_chunk else filler_unit * k
            left -= k
        yield b" */"

    compressed = None
    if a.compressed:
        z = zlib.compressobj()
        parts = [z.compress(p) for p in statement_pieces()]
        parts.append(z.flush())
        plain = len(body) - qstart + delta
        lenlen = 1 if plain < 1 << 8 else 2 if plain < 1 << 16 else 3 if plain < 1 << 24 else 4
        compressed = bytes([0x80 | lenlen]) + plain.to_bytes(lenlen, "big") + b"".join(parts)
        delta = len(compressed) - (len(body) - qstart)
    with open(tmp, "wb") as out:
        out.write(data[:tpos])
        # The grown event: header with the new size and end_log_pos, body, comment, CRC32.
        hdr = bytearray(data[tpos:tpos + HEADER])
        new_size = tsize + delta
        if new_size > 0xFFFFFFFF:
            sys.exit("too large for an event")
        struct.pack_into("<I", hdr, 9, new_size)
        struct.pack_into("<I", hdr, 13, struct.unpack_from("<I", hdr, 13)[0] + delta)
        if compressed is not None:
            hdr[4] = QUERY_COMPRESSED
        crc = zlib.crc32(bytes(hdr))
        out.write(hdr)
        crc = zlib.crc32(body[:qstart], crc)
        out.write(body[:qstart])
        for piece in [compressed] if compressed is not None else statement_pieces():
            crc = zlib.crc32(piece, crc)
            out.write(piece)
        if checksum:
            out.write(struct.pack("<I", crc & 0xFFFFFFFF))
        # Every event after it: end_log_pos moves by delta, and its CRC32 with it.
        for pos, size in events(data):
            if pos <= tpos:
                continue
            ev = bytearray(data[pos:pos + size])
            lp = struct.unpack_from("<I", ev, 13)[0]
            if lp != 0:
                struct.pack_into("<I", ev, 13, lp + delta)
            if checksum:
                struct.pack_into("<I", ev, size - 4, zlib.crc32(bytes(ev[:size - 4])) & 0xFFFFFFFF)
            out.write(ev)
    os.replace(tmp, a.output)
    kind = "QUERY_COMPRESSED" if compressed is not None else "QUERY"
    print(f"{a.output}: QUERY event at {tpos} grown from {tsize} to {tsize + delta} bytes ({kind})")


if __name__ == "__main__":
    main()
