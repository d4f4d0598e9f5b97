#!/usr/bin/env python3
"""convert --format canal-proto --canal-packets: Canal server frames.

usage: canal_packets.py BINLOGCTL PROTOC PROTO_DIR BINLOGS BATCH_SIZE none|zlib|gzip

Reads the frames (4-byte big-endian length + Packet), decodes each Packet with protoc
(type MESSAGES, version 1, compression as asked), inflates the body when compressed, and checks
that the Messages' batch_ids run 1, 2, ..., that every batch but the last holds BATCH_SIZE entries,
and that the entries, concatenated, are byte for byte the entries of the plain canal-proto stream.
"""
import gzip
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from canal_protoc import fields  # noqa: E402
from support import split_stream  # noqa: E402

PKG = "com.alibaba.otter.canal.protocol"


def main():
    binlogctl, protoc, proto_dir, binlogs, batch_size, comp = sys.argv[1:7]
    batch_size = int(batch_size)
    cmd = [binlogctl, "convert", "--format", "canal-proto", "--canal-packets", "--batch-size", str(batch_size),
           "--compression", comp, binlogs]
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} exited {p.returncode}: {p.stderr.decode()}")
    plain = subprocess.run([binlogctl, "convert", "--format", "canal-proto", binlogs], capture_output=True, check=True)
    want = split_stream(plain.stdout)
    data, i, got, batches = p.stdout, 0, [], []
    while i < len(data):
        if i + 4 > len(data):
            raise SystemExit("truncated frame header")
        n = int.from_bytes(data[i:i + 4], "big")
        pkt = data[i + 4:i + 4 + n]
        if len(pkt) != n:
            raise SystemExit(f"frame at {i} runs past the end")
        i += 4 + n
        d = subprocess.run([protoc, f"--proto_path={proto_dir}", f"--decode={PKG}.Packet", "CanalProtocol.proto"],
                           input=pkt, capture_output=True)
        if d.returncode != 0:
            raise SystemExit(f"protoc --decode=Packet: {d.stderr.decode()}")
        text = d.stdout.decode(errors="replace")
        for needle in ("version: 1", "type: MESSAGES"):
            if needle not in text:
                raise SystemExit(f"packet lacks {needle!r}")
        want_comp = {"none": None, "zlib": "compression: ZLIB", "gzip": "compression: GZIP"}[comp]
        if want_comp and want_comp not in text:
            raise SystemExit(f"packet lacks {want_comp!r}")
        if not want_comp and "compression:" in text:
            raise SystemExit("uncompressed packet with a compression field")
        body = [v for num, wt, v in fields(pkt) if num == 5][0]
        if comp == "zlib":
            body = zlib.decompress(body)
        elif comp == "gzip":
            body = gzip.decompress(body)
        f = fields(body)
        batch_id = [v for num, wt, v in f if num == 1]
        msgs = [v for num, wt, v in f if num == 2]
        batches.append((batch_id[0] if batch_id else 0, len(msgs)))
        got.extend(msgs)
    if [b for b, _ in batches] != list(range(1, len(batches) + 1)):
        raise SystemExit(f"batch ids {[b for b, _ in batches]}")
    if any(n != batch_size for _, n in batches[:-1]) or not 0 < batches[-1][1] <= batch_size:
        raise SystemExit(f"batch sizes {[n for _, n in batches]}")
    if got != want:
        raise SystemExit(f"entries differ from the canal-proto stream ({len(got)} vs {len(want)})")
    print(f"ok: {len(batches)} packets, {len(got)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
