#!/usr/bin/env python3
"""A huge QUERY event is rendered in pieces (issue 36, item 10).

usage: huge_statement.py BINLOGCTL FIXTURE_DIR BENCH_DIR [PROTOC PROTO_DIR]

bench/huge_query.py grows the real statement-format INSERT of the basic fixture's
mariadb-bin.000005 to a 64 MiB statement (a comment of 2-, 3- and 4-byte UTF-8 characters, so
that the pieces end inside characters). Then, measured by GNU time's maximum resident set size
(kB, the binary alone), against the same commands on the original file:

  * verify: no more than 16 MiB above (independent of the statement's size: the event's CRC32 is
    summed in pieces whose mapped pages are let go);
  * dump (text and JSON, with --decode and --hexdump), convert (JSON, SQL, canal-json,
    canal-proto): no more than 1.25 times the statement above plus 16 MiB (the file is mapped: the
    event's pages count once; the rendered text is written out in pieces, never held whole);
  * canal-proto --canal-packets: 2.25 times the statement + 16 MiB (a packet's length comes
    first, so the batch holding the statement's entry is kept, one copy, until it is complete);
  * the same event as MariaDB's QUERY_COMPRESSED_EVENT (bench/huge_query.py --compressed): dump
    and convert (JSON, canal-json) within 2.25 times the statement + 16 MiB (it is inflated into
    memory, the buffer growing with what zlib gives; a few hundred kB of compressed bytes);

and the output holds the whole statement, byte for byte as the file has it (text: escaped as
dump escapes; JSON: the same string; SQL: the statement itself; canal-json: the FlatMessage's
"sql"; canal-proto: RowChange.sql). With PROTOC: on a 2 MiB statement (past the 1 MiB from which
the statement is written in pieces), the canal-proto Entry and its RowChange are what protobuf
itself encodes from their decoded text (protoc --decode, then --encode). Not a timing test.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from support import split_stream, varint

SIZE_MB = 32


def peak_kb(cmd, stdout=subprocess.DEVNULL):
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=stdout, stderr=subprocess.PIPE)
    lines = p.stderr.decode(errors="replace").strip().split("\n")
    return p.returncode, int(lines[-1]) if lines and lines[-1].strip().isdigit() else -1, p.stderr


PKG = "com.alibaba.otter.canal.protocol"


def fields(msg):
    """Top-level (field number, value) of a protobuf message (varint and length-delimited)."""
    i, res = 0, []
    while i < len(msg):
        key, i = varint(msg, i)
        if key & 7 == 0:
            v, i = varint(msg, i)
        elif key & 7 == 2:
            n, i = varint(msg, i)
            v = msg[i:i + n]
            i += n
        else:
            raise ValueError(f"wire type {key & 7}")
        res.append((key >> 3, v))
    return res


def statement_entry(stream, stmt):
    """The canal-proto Entry whose RowChange.sql is `stmt`, and that RowChange's fields."""
    for e in split_stream(stream):
        store = dict(fields(e)).get(3, b"")
        if stmt[:64] in store[:4096]:
            rc = fields(store)
            if dict(rc).get(11) == stmt:
                return e, rc
    return None, None


def protoc_roundtrip(protoc, proto_dir, typ, msg):
    """What protobuf encodes from protoc's text of `msg`."""
    run = lambda args, data: subprocess.run([protoc, f"--proto_path={proto_dir}", *args, "EntryProtocol.proto"],
                                            input=data, capture_output=True, check=True).stdout
    return run([f"--encode={PKG}.{typ}"], run([f"--decode={PKG}.{typ}"], msg))


def grown(bench, src, out, size_mb, *extra):
    subprocess.run([sys.executable, os.path.join(bench, "huge_query.py"), "--size-mb", str(size_mb), *extra,
                    "--source", src, out], check=True, stdout=subprocess.DEVNULL)


def main():
    binary, fixture, bench = sys.argv[1], sys.argv[2], sys.argv[3]
    protoc, proto_dir = (sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else (None, None)
    if not os.path.exists("/usr/bin/time"):
        print("SKIP: no /usr/bin/time")
        return 77
    src = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000005")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-huge-")
    try:
        big = os.path.join(tmp, "mariadb-bin.000005")
        grown(bench, src, big, SIZE_MB, "--utf8")
        zbig = os.path.join(tmp, "compressed", "mariadb-bin.000005")
        os.mkdir(os.path.dirname(zbig))
        grown(bench, src, zbig, SIZE_MB, "--compressed")
        with open(big, "rb") as f:
            data = f.read()
        # The grown event: the first QUERY whose statement is the INSERT, found by its text.
        at = data.index(b"INSERT INTO stmt_log (msg) VALUES ('first') /* ")
        end = data.index(b" */", at + 40) + 3
        stmt = data[at:end]
        check(len(stmt) > SIZE_MB * 1024 * 1024 - 4096, f"statement of {len(stmt)} bytes")
        limit_kb = int(1.25 * len(stmt) / 1024) + 16 * 1024
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        sanitized = "libasan" in ldd
        if sanitized:
            print("note: an ASan build: the peaks are printed, not checked; the outputs are")
        copy_kb = int(2.25 * len(stmt) / 1024) + 16 * 1024  # one copy of the statement held
        cases = [("verify", [], 16 * 1024), ("dump", [], limit_kb), ("dump", ["--format", "json"], limit_kb),
                 ("convert", [], limit_kb), ("convert", ["--format", "sql"], limit_kb),
                 ("dump", ["--decode", "--hexdump"], limit_kb),
                 ("dump", ["--format", "json", "--decode", "--hexdump"], limit_kb)]
        if protoc:
            cases += [("convert", ["--format", "canal-json"], limit_kb), ("convert", ["--format", "canal-proto"], limit_kb),
                      ("convert", ["--format", "canal-proto", "--canal-packets"], copy_kb)]
        zcases = [("dump", [], copy_kb), ("convert", [], copy_kb)]
        if protoc:
            zcases += [("convert", ["--format", "canal-json"], copy_kb)]
        outputs = {}
        output = lambda *key: open(outputs[key], "rb").read()
        for cmd, extra, limit, f in [c + (big,) for c in cases] + [c + (zbig,) for c in zcases]:
            # (under ASan only the outputs are checked: the original's run is left out)
            rc0, small, _ = peak_kb([binary, cmd] + extra + [src]) if not sanitized else (0, 1, b"")
            path = os.path.join(tmp, f"out{len(outputs)}")  # kept for the checks below
            with open(path, "wb") as o:
                rc1, large, err = peak_kb([binary, cmd] + extra + [f], o)
            outputs[(cmd, *extra, f)] = path
            check(rc0 == rc1 and large > 0 and small > 0, f"{cmd} {extra}: exit {rc0}/{rc1}: {err[-300:]!r}")
            what = "compressed " if f == zbig else ""
            print(f"{cmd} {' '.join(extra)}: {small} kB on the original, {large} kB with a {len(stmt) >> 20} MiB "
                  f"{what}statement (limit +{limit} kB)")
            if sanitized:
                continue  # ASan's shadow memory and quarantine are no measure of the tool's memory
            check(large - small <= limit, f"{cmd} {extra} {what}: peak {large} kB, {large - small} kB above the original's")

        # The output holds the statement whole.
        text = output("dump", big)
        want = stmt.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\t", b"\\t")
        check(b"use `shop`; " + want + b"\n" in text, "dump: the statement is not whole in the text output")
        js = output("dump", "--format", "json", big)
        infos = [json.loads(x)["info"] for x in js.split(b"\n") if x.strip()]
        check(("use `shop`; " + stmt.decode()) in infos, "dump --format json: the statement is not whole")
        conv = output("convert", big)
        sqls = [json.loads(x).get("sql") for x in conv.split(b"\n") if x.strip()]
        check(stmt.decode() in sqls, "convert: the QUERY record does not hold the statement")
        sql = output("convert", "--format", "sql", big)
        # (the comment holds ';': the statement goes between DELIMITER lines, as mysqlbinlog writes it)
        check(b"\nDELIMITER /*!*/;\n" + stmt + b"/*!*/;\nDELIMITER ;\n" in sql,
              "convert --format sql: the statement is not whole")
        js = output("dump", "--format", "json", "--decode", "--hexdump", big)
        recs = [json.loads(x) for x in js.split(b"\n") if x.strip()]
        rec = [r for r in recs if r.get("event_size", 0) > len(stmt)]
        check(len(rec) == 1 and rec[0]["body"]["sql"] == stmt.decode() and
              bytes.fromhex(rec[0]["hex"]) == data[rec[0]["pos"]:rec[0]["pos"] + rec[0]["event_size"]],
              "dump --format json --decode --hexdump: the body's sql or the hex is not whole")
        del js, recs
        # dump --decode --hexdump (text): the body line, and the hexdump's last line of the event.
        body = json.dumps({"sql": stmt.decode()}, ensure_ascii=False, separators=(",", ":"))[1:-1]
        pos, size = (rec[0]["pos"], rec[0]["event_size"]) if rec else (0, 0)
        last = f"\n  {pos + (size - 1) // 16 * 16:08x} ".encode()
        txt = output("dump", "--decode", "--hexdump", big)
        found_body, found_last, lines = body.encode() in txt, last in txt, txt.count(b"\n")
        del txt
        check(found_body, "dump --decode: the body's sql is not whole")
        check(found_last and lines > size // 16, f"dump --hexdump: the event's lines are missing ({lines} lines)")
        zconv = output("convert", zbig)
        zstmt = b"INSERT INTO stmt_log (msg) VALUES ('first') /* "
        check(any((json.loads(x).get("sql") or "").startswith(zstmt.decode()) and len(json.loads(x)["sql"]) > len(stmt) // 2
                  for x in zconv.split(b"\n") if x.strip()), "convert: the compressed statement is not whole")
        if protoc:
            cj = output("convert", "--format", "canal-json", big)
            msgs = [json.loads(x) for x in cj.split(b"\n") if x.strip()]
            check(any(m.get("sql") == stmt.decode() and m.get("type") == "INSERT" and m.get("database") == "shop"
                      for m in msgs), "convert --format canal-json: the FlatMessage does not hold the statement")
            e, rc = statement_entry(output("convert", "--format", "canal-proto", big), stmt)
            check(e is not None and [n for n, _ in rc] == [2, 10, 11, 14] and dict(rc)[14] == b"shop",
                  f"convert --format canal-proto: no RowChange{{eventType, isDdl, sql, ddlSchemaName}} holds the "
                  f"statement: {rc and [n for n, _ in rc]}")
            # The packets hold the same entries (4-byte length, Packet{..., body = Messages}).
            pk, i, entries = output("convert", "--format", "canal-proto", "--canal-packets", big), 0, []
            while i + 4 <= len(pk):
                n = int.from_bytes(pk[i:i + 4], "big")
                body = dict(fields(pk[i + 4:i + 4 + n])).get(5, b"")
                entries += [v for k, v in fields(body) if k == 2]
                i += 4 + n
            check(i == len(pk) and entries == split_stream(output("convert", "--format", "canal-proto", big)),
                  "convert --canal-packets: the packets do not hold the canal-proto entries")
            # On a 2 MiB statement: what protobuf encodes from the decoded text, byte for byte.
            mid = os.path.join(tmp, "mid", "mariadb-bin.000005")
            os.mkdir(os.path.dirname(mid))
            grown(bench, src, mid, 2, "--utf8")
            with open(mid, "rb") as f:
                mdata = f.read()
            m_at = mdata.index(b"INSERT INTO stmt_log (msg) VALUES ('first') /* ")
            mstmt = mdata[m_at:mdata.index(b" */", m_at) + 3]
            cp = subprocess.run([binary, "convert", "--format", "canal-proto", mid], capture_output=True).stdout
            e, rc = statement_entry(cp, mstmt)
            check(e is not None and protoc_roundtrip(protoc, proto_dir, "Entry", e) == e and
                  protoc_roundtrip(protoc, proto_dir, "RowChange", dict(fields(e))[3]) == dict(fields(e))[3],
                  "convert --format canal-proto: the 2 MiB statement's Entry is not what protobuf encodes")
        ok = subprocess.run([binary, "verify", "--format", "json", big], capture_output=True)
        ref = subprocess.run([binary, "verify", "--format", "json", src], capture_output=True)
        checks = lambda p: [json.loads(x).get("check") for x in p.stdout.split(b"\n") if x.strip()]
        check(ok.returncode == ref.returncode and checks(ok) == checks(ref),
              f"verify: {checks(ok)} (exit {ok.returncode}), the original {checks(ref)} (exit {ref.returncode})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"huge_statement: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
