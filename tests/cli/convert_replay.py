#!/usr/bin/env python3
"""Server-replay proof for `binlogctl convert --format json`.

Usage: convert_replay.py BINLOGCTL BINLOG_DIR EXPECTED_DIR

Runs convert over a corpus directory and replays its row changes into an in-memory table per
(schema, table): INSERT adds the after image, UPDATE finds the row equal to the full before image
and replaces it, DELETE finds it and removes it. The DDL the corpora use is applied too (TRUNCATE,
DROP TABLE/DATABASE, RENAME TABLE, ALTER TABLE ADD/DROP/MODIFY COLUMN). The result must equal the
server's final table contents (EXPECTED_DIR/<db>.<table>.jsonl, rendering rules in the corpus
README) for every table whose changes were all logged as rows.

Tables that statement-based DML touched (convert emits those statements as "QUERY" records; they
cannot be replayed without executing SQL) are reported and skipped. KNOWN lists tables that are
expected to differ, with the reason; the test fails if one of them starts to match (update the
list) or if any other table differs. Exit 77 (skip) when the directories are missing.
"""
import collections
import decimal
import json
import os
import re
import subprocess
import sys

# db.table -> reason. Each must differ (or fail to decode) for the reason given.
KNOWN = {}
# Files whose rows events may fail to decode, and the KNOWN table that explains it.
KNOWN_ERROR_FILES = {}


def canon(row):
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def run(binlogctl, binlog_dir, binary_as):
    p = subprocess.run([binlogctl, "convert", "--format", "json", "--binary-as", binary_as, binlog_dir],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def split_top(s, sep=","):
    """Splits at `sep` outside quotes and parentheses."""
    out, depth, quote, cur = [], 0, None, []
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def ident(s):
    s = s.strip()
    return s[1:-1] if s.startswith("`") and s.endswith("`") else s


def qualify(db, name):
    name = name.strip()
    if "." in name:
        d, t = name.split(".", 1)
        return ident(d), ident(t)
    return db, ident(name)


class Model:
    def __init__(self):
        self.tables = {}  # (db, table) -> Counter of canonical rows
        self.statement_tables = collections.Counter()
        self.problems = collections.defaultdict(list)
        self.changes = collections.Counter()
        self.xa = {}  # xid -> [(key, removed canon or None, added canon or None)] of a prepared XA

    def table(self, key):
        return self.tables.setdefault(key, collections.Counter())

    def row_change(self, rec):
        key = (rec["database"], rec["table"])
        t = self.table(key)
        self.changes[key] += 1
        undo = self.xa.setdefault(rec["xid"], []) if "xid" in rec else None
        if rec["type"] == "INSERT":
            t[canon(rec["after"])] += 1
            if undo is not None:
                undo.append((key, None, canon(rec["after"])))
            return
        before = rec["before"]
        c = canon(before)
        if t[c] > 0:
            found = c
        else:  # partial before image: match on the columns present
            found = None
            for cand, n in t.items():
                if n > 0 and all(json.loads(cand).get(k, object()) == v for k, v in before.items()):
                    found = cand
                    break
        if found is None:
            self.problems[key].append("%s at %s:%s: no row equals the before image %s" %
                                      (rec["type"], rec["log_name"], rec["pos"], c[:200]))
            return
        t[found] -= 1
        if t[found] == 0:
            del t[found]
        added = None
        if rec["type"] == "UPDATE":
            row = json.loads(found)
            row.update(rec["after"])
            added = canon(row)
            t[added] += 1
        if undo is not None:
            undo.append((key, found, added))

    def xa_outcome(self, rec):
        changes = self.xa.pop(rec["xid"], [])
        if rec["type"] != "XA_ROLLBACK":
            return
        for key, removed, added in reversed(changes):
            t = self.table(key)
            if added is not None:
                t[added] -= 1
                if t[added] <= 0:
                    del t[added]
            if removed is not None:
                t[removed] += 1

    def transform(self, key, fn):
        t = self.tables.get(key)
        if t is None:
            return
        new = collections.Counter()
        for c, n in t.items():
            new[canon(fn(json.loads(c)))] += n
        self.tables[key] = new

    def statement(self, rec):
        db, sql = rec["database"], rec["sql"]
        words = set(re.findall(r"[A-Za-z0-9_$]+", sql))
        for (d, t) in list(self.tables):
            if t in words and (d == db or d in words):
                self.statement_tables[(d, t)] += 1
        # tables only ever written by statements
        for m in re.finditer(r"(?i)\b(?:INSERT\s+(?:IGNORE\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+([`\w.]+)", sql):
            self.statement_tables[qualify(db, m.group(1))] += 1

    def ddl(self, rec):
        db, sql = rec["database"], " ".join(rec["sql"].split())
        m = re.match(r"(?i)TRUNCATE\s+(?:TABLE\s+)?([`\w.]+)", sql)
        if m:
            key = qualify(db, m.group(1))
            self.tables[key] = collections.Counter()
            return
        m = re.match(r"(?i)DROP\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?(.*)", sql)
        if m:
            for name in split_top(re.sub(r"/\*.*?\*/", "", m.group(1))):
                self.tables.pop(qualify(db, name.split()[0]), None)
            return
        m = re.match(r"(?i)DROP\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?([`\w]+)", sql)
        if m:
            d = ident(m.group(1))
            for key in [k for k in self.tables if k[0] == d]:
                del self.tables[key]
            return
        m = re.match(r"(?i)RENAME\s+TABLE\s+(.*)", sql)
        if m:
            for pair in split_top(m.group(1)):
                a, b = re.split(r"(?i)\s+TO\s+", pair)
                ka, kb = qualify(db, a), qualify(db, b)
                if ka in self.tables:
                    self.tables[kb] = self.tables.pop(ka)
            return
        m = re.match(r"(?i)ALTER\s+TABLE\s+([`\w.]+)\s+(.*)", sql)
        if m:
            key = qualify(db, m.group(1))
            for spec in split_top(m.group(2)):
                self.alter(key, spec)

    def alter(self, key, spec):
        m = re.match(r"(?i)ADD\s+(?:COLUMN\s+)?([`\w]+)\s+(.*)", spec)
        if m and m.group(1).upper() not in ("INDEX", "KEY", "UNIQUE", "PRIMARY", "CONSTRAINT", "FULLTEXT", "SPATIAL", "FOREIGN"):
            col, rest = ident(m.group(1)), m.group(2)
            d = re.search(r"(?i)\bDEFAULT\s+('(?:[^']|'')*'|[-\w.]+)", rest)
            value = None
            if d:
                lit = d.group(1)
                if lit.startswith("'"):
                    value = lit[1:-1].replace("''", "'")
                elif lit.upper() != "NULL":
                    value = json.loads(lit) if re.fullmatch(r"-?\d+(\.\d+)?", lit) else lit
            self.transform(key, lambda r: {**r, col: value})
            return
        m = re.match(r"(?i)CHANGE\s+(?:COLUMN\s+)?([`\w]+)\s+([`\w]+)\s", spec)
        if m:  # a rename; the workloads keep the values' rendering
            old, new = ident(m.group(1)), ident(m.group(2))
            self.transform(key, lambda r: {(new if k == old else k): v for k, v in r.items()})
            return
        m = re.match(r"(?i)DROP\s+(?:COLUMN\s+)?([`\w]+)\s*$", spec)
        if m and m.group(1).upper() not in ("INDEX", "KEY", "PRIMARY", "FOREIGN", "CONSTRAINT"):
            col = ident(m.group(1))
            self.transform(key, lambda r: {k: v for k, v in r.items() if k != col})
            return
        m = re.match(r"(?i)MODIFY\s+(?:COLUMN\s+)?([`\w]+)\s+DECIMAL\s*\(\s*\d+\s*,\s*(\d+)\s*\)", spec)
        if m:
            col, scale = ident(m.group(1)), int(m.group(2))
            q = decimal.Decimal(1).scaleb(-scale)

            def redo(r):
                if r.get(col) is not None:
                    r = dict(r)
                    r[col] = str(decimal.Decimal(r[col]).quantize(q))
                return r
            self.transform(key, redo)


def merge_binary(hex_recs, b64_recs):
    """Binary columns are those whose values differ between the hex and the base64 run; their
    values become 'x' + hex (the corpus' rendering of binary columns), empty ones included."""
    binary = set()
    for h, b in zip(hex_recs, b64_recs):
        for side in ("before", "after"):
            hv, bv = h.get(side), b.get(side)
            for k, v in (hv or {}).items():
                if isinstance(v, str) and bv.get(k) != v:
                    binary.add((h["database"], h["table"], k))
    for h in hex_recs:
        for side in ("before", "after"):
            for k, v in (h.get(side) or {}).items():
                if isinstance(v, str) and (h["database"], h["table"], k) in binary:
                    h[side][k] = "x" + v


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    binlogctl, binlog_dir, expected_dir = sys.argv[1:]
    if not os.path.isdir(binlog_dir) or not os.path.isdir(expected_dir):
        print("skip: %s or %s missing" % (binlog_dir, expected_dir))
        return 77
    rc, out_hex, err = run(binlogctl, binlog_dir, "hex")
    rc2, out_b64, _ = run(binlogctl, binlog_dir, "base64")
    failures = []
    if rc != rc2:
        failures.append("exit status differs between --binary-as hex (%d) and base64 (%d)" % (rc, rc2))
    # stderr: errors only where KNOWN_ERROR_FILES explains them
    allowed_tables = set()
    for line in err.splitlines():
        m = re.match(r"binlogctl: ([^:]+):(\d+): (error|warning): (\w+): (.*)", line)
        if m and m.group(3) == "error" and m.group(1) in KNOWN_ERROR_FILES and m.group(4) == "undecodable_event":
            allowed_tables.add(KNOWN_ERROR_FILES[m.group(1)])
            continue
        if m and m.group(3) == "warning":
            continue
        failures.append("unexpected diagnostic: " + line)
    if rc not in (0, 1) or (rc == 1 and not allowed_tables):
        failures.append("convert exited with %d" % rc)
    try:
        hex_recs = [json.loads(l) for l in out_hex.split("\n") if l]
        b64_recs = [json.loads(l) for l in out_b64.split("\n") if l]
    except ValueError as e:
        print("FAIL: output is not JSON Lines: %s" % e)
        return 1
    if len(hex_recs) != len(b64_recs):
        failures.append("record count differs between the hex and base64 runs")
    merge_binary(hex_recs, b64_recs)

    model = Model()
    txn_ids = []
    for rec in hex_recs:
        txn_ids.append(rec["txn_id"])
        t = rec["type"]
        if t in ("INSERT", "UPDATE", "DELETE"):
            model.row_change(rec)
        elif t == "DDL":
            model.ddl(rec)
        elif t == "QUERY":
            model.statement(rec)
        elif t in ("XA_COMMIT", "XA_ROLLBACK"):
            model.xa_outcome(rec)
        else:
            failures.append("unknown record type %r" % t)
    if txn_ids != sorted(txn_ids):
        failures.append("txn_id is not monotonic")

    expected_tables = {}
    for name in sorted(os.listdir(expected_dir)):
        if not name.endswith(".jsonl"):
            continue
        db, table = name[:-len(".jsonl")].split(".", 1)
        with open(os.path.join(expected_dir, name), encoding="utf-8") as fh:
            rows = [json.loads(l) for l in fh if l.strip()]
        expected_tables[(db, table)] = collections.Counter(canon(r) for r in rows)

    matched = 0
    for key, exp in sorted(expected_tables.items()):
        name = "%s.%s" % key
        got = model.tables.get(key, collections.Counter())
        same = got == exp and not model.problems.get(key)
        n_exp = sum(exp.values())
        if key in model.statement_tables:
            print("skip  %-32s statement-based changes (%d statements); %d row changes replayed" %
                  (name, model.statement_tables[key], model.changes[key]))
            continue
        if name in KNOWN:
            if same:
                failures.append("%s matches now: remove it from KNOWN (%s)" % (name, KNOWN[name]))
            else:
                print("known %-32s differs as expected: %s" % (name, KNOWN[name]))
            continue
        if same:
            matched += 1
            print("ok    %-32s %d rows, %d row changes" % (name, n_exp, model.changes[key]))
            continue
        missing = exp - got
        extra = got - exp
        msg = "%s: %d rows expected, %d replayed; %d missing, %d unexpected" % (
            name, n_exp, sum(got.values()), sum(missing.values()), sum(extra.values()))
        for c in list(missing)[:2]:
            msg += "\n    missing:    " + c[:400]
        for c in list(extra)[:2]:
            msg += "\n    unexpected: " + c[:400]
        for p in model.problems.get(key, [])[:3]:
            msg += "\n    " + p
        failures.append(msg)
    for name in sorted(allowed_tables):
        if name not in KNOWN:
            failures.append("decode errors attributed to %s, which is not a known exception" % name)
    # Tables the replay built that the server does not have (must have been dropped or be empty).
    for key, t in sorted(model.tables.items()):
        if key not in expected_tables and sum(t.values()) > 0 and key not in model.statement_tables:
            failures.append("%s.%s: %d rows replayed for a table the server does not have" %
                            (key[0], key[1], sum(t.values())))
    if matched == 0:
        failures.append("no table matched: nothing was proven")
    for f in failures:
        print("FAIL  " + f)
    print("%d tables match, %d failures" % (matched, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
