#!/usr/bin/env python3
"""Seeds for fuzz_serve_protocol: writes DIR/seed-NN files (libFuzzer takes the directory).

    tests/fuzz/serve_seeds.py DIR

The queries are those the captures of real clients in testdata/serve/*.log show (COM_QUERY lines),
sent as mode 1 (an authenticated client's command stream) and mode 2 (every decoder on the bytes),
plus COM_REGISTER_SLAVE, COM_BINLOG_DUMP (file/position, flags 0 and 2) and MySQL's
COM_BINLOG_DUMP_GTID, and a handshake response for mode 0.
"""
import glob
import os
import re
import struct
import sys


def packet(seq, body):
    return len(body).to_bytes(3, "little") + bytes([seq]) + body


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    queries = set()
    for log in glob.glob(os.path.join(here, "..", "..", "testdata", "serve", "*.log")):
        for line in open(log, errors="replace"):
            m = re.search(r"COM_QUERY ['\"](.*)['\"]\s*$", line)
            if m:
                queries.add(m.group(1))
    queries = sorted(queries) or ["SELECT @@version", "SHOW BINARY LOGS"]
    register = b"\x15" + struct.pack("<I", 2) + b"\x00\x00\x00" + struct.pack("<HII", 3306, 0, 1)
    dump = b"\x12" + struct.pack("<IHI", 4, 0, 2) + b"bin.000001"
    dump_annot = b"\x12" + struct.pack("<IHI", 4, 2, 2) + b"bin.000001"
    sid = bytes(range(16))
    gtid_set = struct.pack("<Q", 1) + sid + struct.pack("<Q", 1) + struct.pack("<QQ", 1, 6)
    dump_gtid = b"\x1e" + struct.pack("<HI", 4, 2) + struct.pack("<I", 0) + struct.pack("<Q", 4) \
        + struct.pack("<I", len(gtid_set)) + gtid_set
    seeds = []
    stream = b"".join(packet(0, b"\x03" + q.encode()) for q in queries)
    seeds.append(b"\x01" + stream + packet(0, register) + packet(0, dump))
    seeds.append(b"\x01" + packet(0, b"\x03SET @mariadb_slave_capability=4") + packet(0, b"\x03SET @slave_connect_state='0-1-2'")
                 + packet(0, dump_annot))
    seeds.append(b"\x01" + packet(0, b"\x0e") + packet(0, dump_gtid) + packet(0, b"\x01"))
    for q in queries[:40]:
        seeds.append(b"\x02" + q.encode())
    for p in (register, dump, dump_annot, dump_gtid):
        seeds.append(b"\x02" + p[1:])
    caps = 0x200 | 0x8000 | 0x80000
    resp = struct.pack("<IIB", caps, 1 << 24, 45) + b"\0" * 23 + b"u\0" + bytes([20]) + bytes(20) + b"mysql_native_password\0"
    seeds.append(b"\x00" + packet(1, resp) + packet(0, b"\x03SELECT 1"))
    for i, s in enumerate(seeds):
        with open(os.path.join(out, "seed-%02d" % i), "wb") as f:
            f.write(s)
    print(f"{len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main()
