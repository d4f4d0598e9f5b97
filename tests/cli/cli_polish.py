#!/usr/bin/env python3
"""The command line as DBAs expect it (issue "the command line as DBAs expect it", and the
selection part of "honest at the edges"), on a real fixture.

usage: cli_polish.py BINLOGCTL FIXTURE_DIR

  1. a bare call and a mistyped subcommand print the usage with the subcommands (and "did you
     mean"), exit 2;
  2. --server-id / --exclude-server-ids select events by the server that wrote them (dump,
     convert, stats), the file's own events (Format_desc, Rotate, Gtid_list, ...) always kept;
  3. text dump escapes every C0 control byte and DEL (no raw control byte on stdout);
  4. dump --decode in text mode prints the decoded body under each event;
  5. messages name the file by the path the user gave;
  6. an empty file and a text file are both "not a binlog": exit 1; no input could be opened:
     exit 2 and nothing on stdout;
 12. a bad --filter rule is quoted, with the reason; a rule that matched no table in the whole
     run is named in a warning at the end;
 11. verify --format json: summary.gtid_executed / gtid_state hold the MariaDB sets on a MariaDB
     chain, the mariadb_* keys still there;
  7. stats text is readable: KiB sizes, Longest not repeating Largest, interval from the span,
     times of transactions only;
  8. transaction ids are per run: stats' position of a transaction, given to convert
     --start-position, shows it as txn_id 1 with the same rows (binlogctl(1) TRANSACTION IDS);
  9. progress shows bytes read on stdin, the file N of M and the events done;
  *  --timezone on dump, convert and stats: --start/--stop-datetime are read in it;
  *  dump --include-gtids / --exclude-gtids list the selected transactions' events only, and every
     event outside a transaction.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    f2 = os.path.join(fixture, "basic", "binlogs", "mariadb-bin.000002")
    chain = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    # 1. usage on a bare call and a typo
    for args, want in (([], b"a subcommand is required"), (["dumpp", "x"], b"Did you mean 'dump'?")):
        p = run(binary, *args)
        check(p.returncode == 2, f"{args}: exit {p.returncode}, expected 2")
        check(want in p.stderr, f"{args}: stderr lacks {want!r}: {p.stderr[:300]!r}")
        for sub in (b"dump", b"convert", b"verify", b"replay", b"stats"):
            check(b"\n  " + sub + b" " in p.stderr, f"{args}: subcommand {sub!r} not listed")
    p = run(binary, "zzzzzz", "x")
    check(p.returncode == 2 and b"Did you mean" not in p.stderr, f"far miss: {p.returncode} {p.stderr[:200]!r}")

    def dump_json(*extra, path=f2):
        p = run(binary, "dump", "--format", "json", *extra, path)
        check(p.returncode == 0, f"dump {extra}: exit {p.returncode} {p.stderr[:200]!r}")
        return [json.loads(l) for l in p.stdout.splitlines()]

    # 2. server ids
    every = dump_json(path=chain)
    ids = {e["server_id"] for e in every}
    check(len(ids) >= 2, f"fixture server ids {ids}: expected two servers")
    keep_types = {"Format_desc", "Rotate", "Stop", "Gtid_list", "Binlog_checkpoint", "Previous_gtids"}
    own = [e for e in every if e["event_type"] in keep_types]
    for opt in (["--server-id", "7"], ["--exclude-server-ids", ",".join(str(i) for i in sorted(ids))]):
        got = dump_json(*opt, path=chain)
        check(got == own, f"dump {opt}: {[e['event_type'] for e in got][:8]}")
        p = run(binary, "convert", *opt, chain)
        check(p.returncode == 0 and p.stdout == b"", f"convert {opt}: exit {p.returncode}, {len(p.stdout)} bytes")
        p = run(binary, "stats", "--format", "json", *opt, chain)
        summ = [json.loads(l) for l in p.stdout.splitlines()][-1]
        check(p.returncode == 0 and summ["rows"] == 0 and summ["transactions"] == 0, f"stats {opt}: {summ}")
    for sid in sorted(ids):
        want = [e for e in every if e["server_id"] == sid or e["event_type"] in keep_types]
        check(dump_json("--server-id", str(sid), path=chain) == want, f"dump --server-id {sid}")
        rest = [e for e in every if e["server_id"] != sid or e["event_type"] in keep_types]
        check(dump_json("--exclude-server-ids", f"5,{sid}", path=chain) == rest, f"dump --exclude-server-ids 5,{sid}")
        rows = [json.loads(l) for l in run(binary, "convert", "--server-id", str(sid), chain).stdout.splitlines()]
        check(rows and all(r["pos"] in {e["pos"] for e in want if e["log_name"] == r["log_name"]} for r in rows),
              f"convert --server-id {sid}: rows from another server")
    check(len(dump_json("--exclude-server-ids", "5", path=chain)) == len(every), "--exclude-server-ids 5 dropped events")

    tmp = tempfile.mkdtemp(prefix="binlogctl-polish-")
    try:
        # 3. control bytes in a statement (an Annotate_rows text), checksum off since it changed
        data = bytearray(open(f2, "rb").read())
        at = data.find(b"DELETE FROM event_log")
        check(at > 0, "fixture statement not found")
        data[at + 6] = 0x07
        data[at + 7] = 0x7F
        data[at + 8] = 0x15
        ctl = os.path.join(tmp, "ctl.000002")
        open(ctl, "wb").write(bytes(data))
        p = run(binary, "dump", "--no-verify-checksum", ctl)
        check(p.returncode == 0, f"dump ctl: exit {p.returncode} {p.stderr[:200]!r}")
        check(b"DELETE\\x07\\x7f\\x15OM" in p.stdout, f"dump ctl: {p.stdout[:0]!r}{[l for l in p.stdout.splitlines() if b'DELETE' in l]}")
        bad = [c for c in p.stdout if (c < 0x20 and c != 0x0A) or c == 0x7F]
        check(not bad, f"dump ctl: raw control bytes on stdout: {bad[:5]}")

        # 5. ... also in the messages of the subcommands' own checks (not only the framing's):
        # a copy cut inside a transaction, where verify, convert, canal-json and stats each say
        # something about the open transaction.
        events = dump_json()
        xid = next(e for e in events if e["event_type"] == "Xid")
        cut = os.path.join(tmp, "cut.000002")
        open(cut, "wb").write(open(f2, "rb").read()[:xid["pos"]])
        for cmd in (["verify"], ["convert"], ["convert", "--format", "canal-json"], ["stats"]):
            p = run(binary, *cmd, cut)
            out = p.stderr + p.stdout
            check(b"transaction_structure" in out, f"{cmd} cut: no transaction_structure finding")
            lines = [l for l in out.split(b"\n") if b"transaction_structure" in l]
            check(all((cut + ":").encode() in l for l in lines), f"{cmd} cut: message without the path: {lines[:1]}")

        # 6. not a binlog = 1 (empty or text); nothing readable = 2 and no stdout
        empty = os.path.join(tmp, "empty.000001")
        open(empty, "wb").close()
        text = os.path.join(tmp, "text.000001")
        open(text, "w").write("hello, not a binlog\n")
        for cmd in (["dump"], ["convert"], ["stats"], ["verify"]):
            for path in (empty, text):
                p = run(binary, *cmd, path)
                check(p.returncode == 1 and b"bad_magic" in p.stderr + p.stdout, f"{cmd} {os.path.basename(path)}: exit {p.returncode}")
                # 5. the message names the path as given, not the basename alone
                check((path + ":0: error: bad_magic").encode() in p.stderr + p.stdout, f"{cmd}: message without the path {path}")
            p = run(binary, *cmd, os.path.join(tmp, "missing.000001"))
            check(p.returncode == 2, f"{cmd} missing: exit {p.returncode}")
            if cmd != ["verify"]:  # verify's summary says how many files were missing
                check(p.stdout == b"", f"{cmd} missing: stdout {p.stdout[:100]!r}")
    finally:
        for n in os.listdir(tmp):
            os.unlink(os.path.join(tmp, n))
        os.rmdir(tmp)

    # 12. a bad filter rule is quoted with its reason
    p = run(binary, "convert", "--filter", r"shop\..*, crm.(users", f2)
    check(p.returncode == 2, f"bad filter: exit {p.returncode}")
    check(b"'crm.(users'" in p.stderr and b"unmatched (" in p.stderr, f"bad filter: {p.stderr[:300]!r}")

    # 4. --decode in text mode: a body line under each event, the same object as in JSON
    p = run(binary, "dump", "--decode", f2)
    lines = p.stdout.decode().splitlines()
    bodies = [l[len("    body: "):] for l in lines if l.startswith("    body: ")]
    jbodies = [e["body"] for e in dump_json("--decode")]
    check(p.returncode == 0 and len(bodies) == len(jbodies) == len(lines) - 1 - len(bodies),
          f"dump --decode text: {len(bodies)} body lines, {len(jbodies)} events")
    check(all(b.startswith("{") and json.loads(b) == j for b, j in zip(bodies, jbodies) if j is not None),
          "dump --decode text: body lines differ from the JSON bodies")

    # 7. stats for people: sizes in KiB, no Longest table of zero durations, the interval from
    # the span, the span of transactions (not of the files' own events)
    p = run(binary, "stats", chain)
    out = p.stdout.decode()
    check(p.returncode == 0 and " KiB" in out, "stats: byte counts not in KiB")
    check("Longest transactions: every transaction took under a second" in out, "stats: Longest repeats Largest")
    js = [json.loads(l) for l in run(binary, "stats", "--format", "json", chain).stdout.splitlines()]
    summ = js[-1]
    check(isinstance(summ["bytes"], int), "stats json: bytes not an integer")
    txn_times = [e["timestamp"] for e in every if e["event_type"] in ("Gtid", "Xid", "Query", "Write_rows_v1")]
    check(summ["last_timestamp"] == datetime.datetime.fromtimestamp(max(txn_times), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"), f"stats: last_timestamp {summ['last_timestamp']} from a file event")
    secs = {j["seconds"] for j in js if j["kind"] == "interval"}
    check(secs == {60}, f"stats: a 45-minute span in {secs}-second intervals")
    # a span of days (a FDE time far from the rest must not stretch it; the rows' times do)
    p = run(binary, "stats", "--format", "json", "--interval", "7", chain)
    check({j["seconds"] for j in [json.loads(l) for l in p.stdout.splitlines()] if j["kind"] == "interval"} == {7},
          "stats --interval 7 not kept")

    # 9. progress: on stdin the bytes read and the rate (not 0.0 MB), on a chain the file N of M
    # and the events done
    with open(f2, "rb") as fh:
        p = subprocess.run([binary, "dump", "--progress", "always", "-"], stdin=fh, capture_output=True)
    last = p.stderr.replace(b"\r", b"\n").strip().splitlines()[-1]
    size_mb = f"{os.path.getsize(f2) / 1e6:.1f} MB read".encode()
    check(size_mb in last and b" events" in last, f"progress on stdin: {last!r} (want {size_mb!r})")
    p = run(binary, "stats", "--progress", "always", chain)
    last = p.stderr.replace(b"\r", b"\n").strip().splitlines()[-1]
    nfiles = sum(1 for n in os.listdir(chain) if n[-6:].isdigit())
    check(f"file {nfiles}/{nfiles}".encode() in last and f"{len(every)} events".encode() in last,
          f"progress on a chain: {last!r}")

    # 8. transaction ids are per run; the position given with each one takes back to it
    st = [json.loads(l) for l in run(binary, "stats", "--format", "json", chain).stdout.splitlines()]
    big = next(j for j in st if j["kind"] == "transaction" and j["rank"] == "largest" and j["txn_id"] > 1)
    p = run(binary, "convert", "--start-position", str(big["pos"]), os.path.join(chain, big["log_name"]))
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    check(recs and recs[0]["txn_id"] == 1 and recs[0]["log_name"] == big["log_name"],
          f"convert --start-position {big['pos']}: first record {recs[:1]}")
    check(sum(1 for r in recs if r["txn_id"] == 1 and r["type"] in ("INSERT", "UPDATE", "DELETE")) == big["rows"],
          f"convert --start-position: txn 1 has not the {big['rows']} rows stats gave")

    # a --filter rule that matched no table in the whole run: a warning at the end, exit 0
    for cmd in (["convert"], ["convert", "--format", "canal-json"], ["stats"]):
        p = run(binary, *cmd, "--filter", r"shop\..*, shop\.event_log,crm\.users", chain)
        check(p.returncode == 0, f"{cmd} --filter: exit {p.returncode}")
        check(p.stderr.count(b"matched no table") == 1 and b"'crm\\.users' matched no table" in p.stderr,
              f"{cmd} --filter: stderr {p.stderr[-300:]!r}")

    # --timezone: the same instant given in UTC and in +02:00 / a zone name selects the same
    ts = sorted({e["timestamp"] for e in every if e["timestamp"]})
    mid = ts[len(ts) // 2]
    def wall(t, off):
        return datetime.datetime.fromtimestamp(t + off, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    for cmd in ("dump", "convert", "stats"):
        ref = run(binary, cmd, "--start-datetime", wall(mid, 0), chain)
        check(ref.returncode == 0 and ref.stdout, f"{cmd} UTC start: exit {ref.returncode}")
        for tz, off in (("+02:00", 7200), ("-05:30", -19800)):
            p = run(binary, cmd, "--timezone", tz, "--start-datetime", wall(mid, off), chain)
            check(p.returncode == 0 and p.stdout == ref.stdout, f"{cmd} --timezone {tz}: exit {p.returncode}, same={p.stdout == ref.stdout}")
        if os.path.exists("/usr/share/zoneinfo/Asia/Shanghai"):
            p = run(binary, cmd, "--timezone", "Asia/Shanghai", "--start-datetime", wall(mid, 8 * 3600), chain)
            check(p.returncode == 0 and p.stdout == ref.stdout, f"{cmd} --timezone Asia/Shanghai differs")
        p = run(binary, cmd, "--timezone", "Mars/Olympus", chain)
        check(p.returncode == 2 and b"--timezone" in p.stderr, f"{cmd} bad zone: exit {p.returncode}")
    sel = dump_json("--timezone", "+02:00", "--start-datetime", wall(mid, 7200), path=chain)
    check(sel and min(e["timestamp"] for e in sel if e["event_type"] != "Format_desc") >= mid, "dump --timezone: early events")

    # dump's GTID selection
    gtids = [e for e in every if e["event_type"] == "Gtid"]
    check(len(gtids) >= 2, "fixture has fewer than 2 GTIDs")
    g = gtids[1]["info"].split("GTID ")[-1]  # "d-s-n"
    d, s, n = g.split("-")
    inc = dump_json("--include-gtids", f"{d}-{s}-{n}", path=chain)
    exc = dump_json("--exclude-gtids", f"{d}-{s}-{n}", path=chain)
    check(len(inc) + len(exc) > len(every), "include + exclude do not cover the chain")
    check(any(e["info"].endswith("GTID " + g) for e in inc), f"include {g}: its GTID event is missing")
    check(not any(e["info"].endswith("GTID " + g) for e in exc), f"exclude {g}: its GTID event is listed")
    later = [e for e in gtids if int(e["info"].split("-")[-1]) > int(n)]
    check(later and not any(e in inc for e in later), "include: later transactions listed")
    # d-s-n is that one GTID (issue 14: it used to mean seq 1..n); ..d-s-n and d-s:1-n are the
    # binlog-state meaning; a list may name the same domain-server twice.
    check(sum(1 for e in inc if e["event_type"] == "Gtid") == 1, f"include {g}: not exactly one GTID")
    upto = [e for e in gtids if e["info"].split("GTID ")[-1].startswith(f"{d}-{s}-") and int(e["info"].split("-")[-1]) <= int(n)]
    state = dump_json("--include-gtids", f"..{d}-{s}-{n}", path=chain)
    check(sum(1 for e in state if e["event_type"] == "Gtid") == len(upto) >= 2, f"include ..{g}: {len(upto)} GTIDs expected")
    check(dump_json("--include-gtids", f"{d}-{s}:1-{n}", path=chain) == state, f"include {d}-{s}:1-{n} differs from ..{g}")
    first = gtids[0]["info"].split("GTID ")[-1]
    two = dump_json("--include-gtids", f"{first}, {g}", path=chain)
    check(sum(1 for e in two if e["event_type"] == "Gtid") == 2, f"include {first},{g}: not two GTIDs")
    for bad in (f"{d}-{s}:5-3", f"{d}-{s}", f"{d}-{s}-{n},"):
        p = run(binary, "dump", "--include-gtids", bad, f2)
        check(p.returncode == 2 and b"--include-gtids" in p.stderr, f"dump --include-gtids {bad!r}: exit {p.returncode}")
    check(all(e in inc and e in exc for e in every if e["event_type"] in keep_types), "non-transaction events dropped")
    p = run(binary, "dump", "--include-gtids", "", f2)
    check(p.returncode == 2, f"dump --include-gtids '': exit {p.returncode}")

    # 2b. -d/--database as mysqlbinlog: statements by their default database, table maps and
    # their rows events by the table's database; transaction keywords and other events kept.
    def is_rows(e):
        return e["event_type"].endswith("_rows_v1") or e["event_type"].endswith("_rows")
    tables = {}  # (log_name, table_id) -> db, in order
    dbs = {(e["log_name"], e["pos"]): e["body"].get("database") for e in dump_json("--decode", path=chain)
           if e["event_type"] == "Query"}
    want = []
    for e in every:
        t = e["event_type"]
        if t == "Table_map":
            db = e["info"].split("(")[1].split(".")[0]
            tables[(e["log_name"], e["info"].split()[1])] = db
            if db == "shop": want.append(e)
        elif is_rows(e):
            tid = e["info"].split()[1] if e["info"].startswith("table_id:") else None
            if tables.get((e["log_name"], tid), "shop") == "shop": want.append(e)
        elif t == "Query":
            info = e["info"]
            kw = info.split("; ")[-1].split()[0].upper() if info else ""
            if kw in ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "XA"): want.append(e)
            elif dbs.get((e["log_name"], e["pos"])) == "shop": want.append(e)  # the event's own database
        else:
            want.append(e)
    for opt in ("-d", "--database"):
        got = dump_json(opt, "shop", path=chain)
        check(got == want, f"dump {opt} shop: {len(got)} events, expected {len(want)}")
    check(any(e["event_type"] == "Query" and e["info"].startswith("use `typelab`") for e in every) and
          len(want) < len(every), "fixture: no statement of another database")
    rows = [json.loads(l) for l in run(binary, "convert", "-d", "shop", chain).stdout.split(b"\n") if l]
    allrows = [json.loads(l) for l in run(binary, "convert", chain).stdout.split(b"\n") if l]
    check(rows and all(r["database"] == "shop" for r in rows), "convert -d shop: other databases' records")
    check(rows == [r for r in allrows if r["database"] == "shop"], "convert -d shop: records of shop missing")

    # 11. verify's summary.gtid_executed holds the chain's set on MariaDB too (old keys kept)
    p = run(binary, "verify", "--format", "json", chain)
    summ = json.loads(p.stdout.splitlines()[-1])["summary"]
    check(summ["mariadb_gtid_executed"] != "", f"verify: mariadb_gtid_executed empty: {summ}")
    check(summ["gtid_executed"] == summ["mariadb_gtid_executed"], f"verify: gtid_executed {summ['gtid_executed']!r}")
    check(summ["gtid_state"] == summ["mariadb_gtid_state"], f"verify: gtid_state {summ['gtid_state']!r}")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
