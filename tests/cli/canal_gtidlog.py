#!/usr/bin/env python3
"""GTIDLOG entries as Canal's LogEventConvert writes them.

Usage: canal_gtidlog.py BINLOGCTL PROTOC PROTO_DIR FIXTURE_BINLOGS PUBLIC_CORPUS

- MySQL 5.7+ GTID events (with a logical clock): storeValue is ONE Pair {sequenceNumber, n}:
  Canal sets key/value on a single Pair builder three times (gtid, lastCommitted,
  sequenceNumber) and sends the last. MySQL 5.6 GTID events: {gtid, uuid:gno}.
- MariaDB GTID events: {gtid, domain-server-seq}; GTID_LIST events (file starts): {gtid, list}.
The public corpus part is skipped (exit 77 when nothing else ran) without ../shared.
"""
import os
import subprocess
import sys

from support import split_stream, varint


def entries(binlogctl, path):
    data = subprocess.run([binlogctl, "convert", "--format", "canal-proto", path],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return split_stream(data)


def decode(protoc, proto_dir, msg, raw):
    p = subprocess.run([protoc, "--decode=com.alibaba.otter.canal.protocol." + msg, "-I", proto_dir,
                        os.path.join(proto_dir, "EntryProtocol.proto")], input=raw, stdout=subprocess.PIPE,
                       check=True)
    return p.stdout.decode()


def gtidlog_pairs(binlogctl, protoc, proto_dir, path):
    """(key, value) of every GTIDLOG entry's storeValue Pair."""
    pairs = []
    for e in entries(binlogctl, path):
        text = decode(protoc, proto_dir, "Entry", e)
        if "entryType: GTIDLOG" not in text:
            continue
        # storeValue (field 3, length-delimited) taken from the raw Entry, then decoded as a Pair
        j = 0
        store = b""
        while j < len(e):
            key, j = varint(e, j)
            field, wt = key >> 3, key & 7
            if wt == 0:
                _, j = varint(e, j)
            elif wt == 2:
                n, j = varint(e, j)
                if field == 3:
                    store = e[j:j + n]
                j += n
            else:
                raise ValueError("unexpected wire type %d" % wt)
        pair = decode(protoc, proto_dir, "Pair", store)
        k = v = ""
        for line in pair.splitlines():
            line = line.strip()
            if line.startswith("key:"):
                k = line[5:].strip().strip('"')
            elif line.startswith("value:"):
                v = line[7:].strip().strip('"')
        pairs.append((k, v))
    return pairs


def main():
    binlogctl, protoc, proto_dir, fixture, corpus = sys.argv[1:6]
    failures = []
    pairs = gtidlog_pairs(binlogctl, protoc, proto_dir, fixture)
    lists = [p for p in pairs if "," in p[1] or p[1] == ""]
    singles = [p for p in pairs if p not in lists]
    if not singles or any(k != "gtid" or v.count("-") != 2 for k, v in singles):
        failures.append("MariaDB GTID entries should be {gtid, d-s-n}: %r" % singles[:5])
    if not any("," in v for _, v in lists):
        failures.append("no GTIDLOG entry for a multi-domain GTID_LIST: %r" % lists[:5])
    for _, v in lists:
        doms = [int(x.split("-")[0]) for x in v.split(",") if x]
        if doms != sorted(doms) or len(set(doms)) != len(doms):  # small domains: HashMap order = ascending
            failures.append("GTID_LIST text not one entry per domain in HashMap order: %s" % v)
    pub = os.path.join(corpus, "blackbeam__rust_mysql_common")
    if os.path.isdir(pub):
        p8 = gtidlog_pairs(binlogctl, protoc, proto_dir, os.path.join(pub, "binlog_transaction_with_GTID_TAG.000001"))
        if not p8 or any(k != "sequenceNumber" for k, _ in p8):
            failures.append("8.4 GTID events should give {sequenceNumber, n}: %r" % p8)
        p56 = gtidlog_pairs(binlogctl, protoc, proto_dir, os.path.join(pub, "binlog_transaction_with_GTID.000001"))
        if not p56 or any(k != "gtid" or ":" not in v for k, v in p56):
            failures.append("5.6 GTID events should give {gtid, uuid:gno}: %r" % p56)
    else:
        print("public corpus missing: MySQL part skipped")
    for f in failures:
        print("FAIL " + f)
    print("%d GTIDLOG entries checked, %d failures" % (len(pairs), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
