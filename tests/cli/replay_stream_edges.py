#!/usr/bin/env python3
"""replay reads row changes as convert does (one row stream, issue #37 item 1): two damaged
inputs where its own reader used to differ.

usage: replay_stream_edges.py BINLOGCTL FIXTURE_DIR

On copies of real fixture files, damaged on purpose (positions and CRC32s made whole again, so
only the damage itself is wrong):
  * a TABLE_MAP whose header decodes but whose column metadata is one byte short: replay
    reports "TABLE_MAP event does not decode" at the event's offset and exits 1, as convert
    does (it used to key the rows by the map's name and exit 0), with or without
    --path-by hash:N;
  * a rows event whose TABLE_MAP was removed, the table id's map known only from the
    transaction before it, excluded by --exclude-gtids: replay keys the rows by that map's name
    (shop.orders), the table convert names for them, with the bytes of every rows event of the
    path (it used to make a path "table_id.31" of the one event).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

TABLE_MAP = 19


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def events(data):
    pos = 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        yield pos, data[pos + 4], size
        pos += size


def shift_after(data, at, delta):
    """end_log_pos of the events from `at` on moved by delta, their CRC32 recomputed."""
    for pos, _, size in events(data):
        if pos < at:
            continue
        struct.pack_into("<I", data, pos + 13, struct.unpack_from("<I", data, pos + 13)[0] + delta)
        struct.pack_into("<I", data, pos + size - 4, zlib.crc32(bytes(data[pos:pos + size - 4])) & 0xFFFFFFFF)


def short_metadata(src, dst):
    """The first TABLE_MAP's column metadata one byte short, its length saying so. Returns the
    event's offset."""
    data = bytearray(open(src, "rb").read())
    for pos, code, size in events(data):
        if code != TABLE_MAP:
            continue
        b = pos + 19 + 8  # post-header: table id, flags
        b += 1 + data[b] + 1  # database name, NUL
        b += 1 + data[b] + 1  # table name, NUL
        n = data[b]
        assert n < 251
        b += 1 + n  # column types
        ml = data[b]
        assert 1 < ml < 251
        data[b] = ml - 1
        del data[b + ml]
        struct.pack_into("<I", data, pos + 9, size - 1)
        shift_after(data, pos, -1)  # this event's end_log_pos too
        open(dst, "wb").write(data)
        return pos
    raise SystemExit("no TABLE_MAP in " + src)


def drop_event(src, dst, at):
    data = bytearray(open(src, "rb").read())
    assert data[at + 4] == TABLE_MAP, "not a TABLE_MAP at %d" % at
    size = struct.unpack_from("<I", data, at + 9)[0]
    del data[at:at + size]
    shift_after(data, at, -size)
    open(dst, "wb").write(data)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    chain = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    with tempfile.TemporaryDirectory() as tmp:
        # 1. A TABLE_MAP whose metadata does not decode.
        bad = os.path.join(tmp, "mariadb-bin.000002")
        at = short_metadata(os.path.join(chain, "mariadb-bin.000002"), bad)
        want = "mariadb-bin.000002:%d: error: undecodable_event: TABLE_MAP event does not decode" % at
        conv = run(binary, "convert", "--format", "json", bad)
        check(conv.returncode == 1 and want in conv.stderr.decode(),
              "convert: %d %r" % (conv.returncode, conv.stderr.decode()[:300]))
        for extra in ([], ["--path-by", "hash:4"]):
            r = run(binary, "replay", *extra, bad)
            err = r.stderr.decode()
            check(r.returncode == 1, "replay %s: exit %d, want 1" % (extra, r.returncode))
            check(err.count(want) == 1, "replay %s: %r" % (extra, err[:300]))

        # 2. A rows event whose map comes from an excluded transaction. mariadb-bin.000003: GTID
        # 1-1011-25 maps table 31 (shop.orders), 1-1011-26 maps it again at the TABLE_MAP
        # removed here.
        src = os.path.join(chain, "mariadb-bin.000003")
        listing = run(binary, "dump", "--format", "json", src)
        maps = [json.loads(l) for l in listing.stdout.decode().split("\n") if l]
        maps = [e for e in maps if e["event_type"] == "Table_map" and "shop.orders" in e["info"]]
        check(len(maps) >= 2, "fixture: two TABLE_MAPs of shop.orders in %s" % src)
        if len(maps) >= 2:
            nomap = os.path.join(tmp, "mariadb-bin.000003")
            drop_event(src, nomap, maps[1]["pos"])
            rows = run(binary, "convert", "--format", "json", "--exclude-gtids", "1-1011-25", nomap)
            first = json.loads(rows.stdout.decode().split("\n")[0])
            check(first["gtid"] == "1-1011-26" and (first["database"], first["table"]) == ("shop", "orders"),
                  "convert names the rows: %r" % first)
            r = run(binary, "replay", "--format", "json", "--exclude-gtids", "1-1011-25", nomap)
            check(r.returncode == 0, "replay exit %d: %r" % (r.returncode, r.stderr.decode()[:300]))
            text = r.stdout.decode()
            check("table_id.31" not in text, "replay keys a path table_id.31")
            whole = run(binary, "replay", "--format", "json", "--exclude-gtids", "1-1011-25",
                        os.path.join(chain, "mariadb-bin.000003"))

            def orders(out):
                found = []

                def walk(x):
                    if isinstance(x, dict):
                        if x.get("path") == "shop.orders":
                            found.append(x)
                        for v in x.values():
                            walk(v)
                    elif isinstance(x, list):
                        for v in x:
                            walk(v)
                walk(json.loads(out))
                return found

            got, base = orders(text), orders(whole.stdout.decode())
            check(len(got) == 1 and len(base) == 1, "one shop.orders path: %d / %d" % (len(got), len(base)))
            if len(got) == 1 and len(base) == 1:
                # The same rows events as on the intact file (the removed map's bytes aside).
                check(got[0]["source_events"] == base[0]["source_events"],
                      "shop.orders events %r, intact file %r" % (got[0]["source_events"], base[0]["source_events"]))

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
