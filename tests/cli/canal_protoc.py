#!/usr/bin/env python3
"""convert --format canal-proto, checked with protoc and against convert --format json.

usage: canal_protoc.py BINLOGCTL PROTOC PROTO_DIR BINLOGS

Splits the varint-delimited stream into Entry messages (the stream must end exactly at a message
boundary), decodes every Entry with `protoc --decode=com.alibaba.otter.canal.protocol.Entry`, and
every ROWDATA storeValue with `--decode=...RowChange`, and checks:
  * each decodes; headers carry version 1, serverenCode "UTF-8", sourceType MYSQL, the file name;
  * TRANSACTIONBEGIN / TRANSACTIONEND pair up (no nesting, no END without BEGIN);
  * per ROWDATA entry of a rows event, the rowsCount prop == the number of rowDatas, and the
    rows add up, per table and type, to the row records of convert --format json;
  * statement entries (DDL, statement DML, XA COMMIT/ROLLBACK) match the records of
    convert --format json that carry "sql", in order, and the DDL ones are exactly isDdl.
"""
import collections
import json
import re
import subprocess
import sys

from support import split_stream, varint

PKG = "com.alibaba.otter.canal.protocol"


def fields(msg):
    """Top-level (field number, wire type, value) of a protobuf message."""
    i, res = 0, []
    while i < len(msg):
        key, i = varint(msg, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(msg, i)
        elif wt == 2:
            n, i = varint(msg, i)
            v = msg[i:i + n]
            i += n
        elif wt == 1:
            v = msg[i:i + 8]
            i += 8
        elif wt == 5:
            v = msg[i:i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        res.append((num, wt, v))
    return res


def decode(protoc, proto_dir, typ, msg):
    p = subprocess.run([protoc, f"--proto_path={proto_dir}", f"--decode={PKG}.{typ}", "EntryProtocol.proto"],
                       input=msg, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"protoc --decode={typ} failed: {p.stderr.decode(errors='replace')}")
    return p.stdout.decode("utf-8", errors="replace")


def field_text(text, name):
    m = re.search(r"^\s*" + name + r": (.*)$", text, re.M)
    return m.group(1) if m else None


def main():
    binlogctl, protoc, proto_dir, binlogs = sys.argv[1:5]
    p = subprocess.run([binlogctl, "convert", "--format", "canal-proto", binlogs], capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"convert --format canal-proto exited {p.returncode}: {p.stderr.decode()}")
    entries = split_stream(p.stdout)
    if not entries:
        raise SystemExit("no entries")
    j = subprocess.run([binlogctl, "convert", "--format", "json", binlogs], capture_output=True, check=True)
    records = [json.loads(l) for l in j.stdout.decode().splitlines()]

    want_rows = collections.Counter((r["database"], r["table"], r["type"]) for r in records
                                    if r["type"] in ("INSERT", "UPDATE", "DELETE"))
    want_ddl = [(r["type"] == "DDL", r["sql"]) for r in records if "sql" in r]
    got_rows = collections.Counter()
    got_ddl = []
    open_txn = False
    kinds = collections.Counter()
    for n, e in enumerate(entries):
        text = decode(protoc, proto_dir, "Entry", e)
        et = field_text(text, "entryType")
        kinds[et] += 1
        for needle in ("version: 1", 'serverenCode: "UTF-8"', "sourceType: MYSQL", 'logfileName: "'):
            if needle not in text:
                raise SystemExit(f"entry {n}: header lacks {needle!r}:\n{text}")
        if et == "TRANSACTIONBEGIN":
            if open_txn:
                raise SystemExit(f"entry {n}: TRANSACTIONBEGIN inside an open transaction")
            open_txn = True
        elif et == "TRANSACTIONEND":
            if not open_txn:
                raise SystemExit(f"entry {n}: TRANSACTIONEND without TRANSACTIONBEGIN")
            open_txn = False
        elif et == "ROWDATA":
            store = [v for num, wt, v in fields(e) if num == 3]
            if len(store) != 1:
                raise SystemExit(f"entry {n}: ROWDATA without storeValue")
            rc = decode(protoc, proto_dir, "RowChange", store[0])
            header = [v for num, wt, v in fields(e) if num == 1][0]
            schema = table = ""
            rows_count = None
            for num, wt, v in fields(header):
                if num == 8:
                    schema = v.decode()
                elif num == 9:
                    table = v.decode()
                elif num == 12:
                    kv = {k: val for k, _, val in fields(v)}
                    if kv.get(1) == b"rowsCount":
                        rows_count = int(kv[2])
            sql = [v for num, wt, v in fields(store[0]) if num == 11]
            if sql:
                # DDL and statements: isDdl set exactly for what convert calls DDL (CREATE
                # DATABASE and the like are isDdl with eventType QUERY; statement DML is not).
                is_ddl = "isDdl: true" in rc
                if is_ddl != (field_text(rc, "eventType") not in ("INSERT", "UPDATE", "DELETE", "XACOMMIT", "XAROLLBACK")):
                    raise SystemExit(f"entry {n}: isDdl does not follow eventType:\n{rc}")
                if "rowDatas {" in rc:
                    raise SystemExit(f"entry {n}: statement entry with rowDatas")
                got_ddl.append((field_text(rc, "eventType") not in ("INSERT", "UPDATE", "DELETE", "XACOMMIT", "XAROLLBACK", "QUERY") or (is_ddl and field_text(rc, "eventType") == "QUERY"), sql[0].decode()))
            elif field_text(rc, "eventType") in ("INSERT", "UPDATE", "DELETE"):
                n_rows = rc.count("rowDatas {")
                if rows_count != n_rows:
                    raise SystemExit(f"entry {n}: rowsCount {rows_count} but {n_rows} rowDatas")
                got_rows[(schema, table, field_text(rc, "eventType"))] += n_rows
        elif et != "GTIDLOG":
            raise SystemExit(f"entry {n}: unexpected entryType {et}")
    if got_rows != want_rows:
        raise SystemExit(f"row counts differ:\n canal {sorted(got_rows.items())}\n json  {sorted(want_rows.items())}")
    if got_ddl != want_ddl:
        raise SystemExit(f"DDL differ:\n canal {got_ddl}\n json  {want_ddl}")
    if kinds["TRANSACTIONBEGIN"] == 0 or kinds["TRANSACTIONBEGIN"] != kinds["TRANSACTIONEND"]:
        raise SystemExit(f"unbalanced transactions: {dict(kinds)}")
    print(f"ok: {len(entries)} entries {dict(kinds)}, {sum(got_rows.values())} rows, {len(got_ddl)} DDL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
