#!/usr/bin/env bash
# Generates ONE large, real MariaDB binlog file for benchmarks, with a private
# throw-away server (same start/stop helpers as testdata/generate.sh).
#
#   bench/make-large-binlog.sh [--shape mixed|wide] [--size-mb N] [--out DIR] [--seed S] [--no-stats]
#
#   --shape S     the workload (default mixed, described below; wide: see WIDE; oltp: see OLTP)
#   --size-mb N   stop once the binlog file is at least N MiB (default 1024,
#                 at most 1024: the file must stay a single file and
#                 max_binlog_size is at most 1 GiB)
#   --out DIR     where to put it (default bench/work/mariadb-<N>mb for mixed,
#                 bench/work/mariadb-<shape>-<N>mb for wide and oltp; bench/work is gitignored)
#   --seed S      seed of the generated workload (default 1)
#   --no-stats    skip the SHOW BINLOG EVENTS pass that counts events per type
#   --encrypt     encrypt_binlog=ON with file_key_management (a random 256-bit key id 1 in
#                 DIR/keys.txt, AES_CBC; --encrypt=AES_CTR for the other algorithm); the file is
#                 closed with FLUSH BINARY LOGS and its decrypted copy, as the server sends it
#                 (mariadb-binlog -R --raw), goes to DIR/plain/mariadb-bin.000001: the same events,
#                 for the speed of reading it encrypted against in the clear
#
# Output: DIR/mariadb-bin.000001 (closed by a clean shutdown: ends with a Stop
# event), DIR/mariadb-bin.index (./mariadb-bin.000001) and DIR/stats.txt.
#
# Server: ROW format, CRC32, binlog_row_image=FULL, binlog_row_metadata=FULL,
# binlog_annotate_row_events=ON, max_binlog_size=1 GiB. Workload: ~12 tables of
# mixed column types; mostly small transactions (1-4 statements, single rows)
# streamed through ONE client connection from a generated SQL stream, plus now
# and then a transaction of thousands of rows (INSERT ... SELECT from the
# SEQUENCE engine's seq_1_to_N, big UPDATEs and DELETEs). Shape per GiB: roughly
# 400k+ transactions and 3M+ events (see stats.txt).
#
# WIDE (--shape wide), same server options: 12 tables (wide.w00..w11) of 20-40
# columns each (BIGINT primary key, then a seeded mix of INT/INT UNSIGNED/
# TINYINT/BIGINT/BIGINT UNSIGNED/DECIMAL(18,4)/DECIMAL(30,10)/DOUBLE/FLOAT/
# DATETIME(6)/TIMESTAMP(3)/DATE/VARCHAR/CHAR/TEXT/MEDIUMTEXT/JSON/ENUM/SET/BLOB/
# VARBINARY, every table with a TEXT, a JSON and a MEDIUMTEXT or BLOB column,
# 8% NULLs); larger values (TEXT 200-2000 bytes, JSON documents 100-1500 bytes,
# BLOBs up to 600 bytes); transactions of mostly 1-5 rows (55% INSERT, 33%
# UPDATE of 2-5 columns by primary key, 12% DELETE; 15% of them BEGIN/COMMIT
# with 2-3 statements), and 1 in 1000 a transaction of 1000-3000 rows
# (INSERT ... SELECT from seq_0_to_N, or an UPDATE of an id range).
#
# OLTP (--shape oltp, issue 38), same server options: the type mix of an OLTP application, one
# database (oltp) of 12 tables: users (utf8 names and emails, a status word, DECIMAL balance,
# DATETIME(6), TIMESTAMP(3), BIT(8), JSON), orders (DECIMAL, DATETIME, DATE, utf8 notes),
# order_items (composite primary key), events (short words, utf8 text up to 200 characters,
# TIMESTAMP(6), TIME(3)), metrics (DOUBLE, FLOAT, DATETIME(3)), blobs (BLOB up to 2000 bytes,
# BINARY(20)), sessions (ASCII CHAR(32) key, VARBINARY, TIMESTAMP), audit_log (no primary key:
# INSERTs, and UPDATE/DELETE ... LIMIT by a non-key column), counters (upserts), places (POINT),
# wide41 (41 columns: id and 40 of 20 types, INT to ENUM, every kind of date and time, BIT,
# DECIMAL, DOUBLE, FLOAT, YEAR, VARCHAR, CHAR; updates of 2-4 columns, 10% NULLs) and kv (ASCII
# key, VARBINARY value, upserts and deletes). Preloaded by INSERT ... SELECT (50k users, 10k
# wide41 rows, 20k keys, ...), then rounds of 1,000 small transactions, each one business
# operation (1 in 5: two in one BEGIN/COMMIT) of 1 to 20 row changes: a new order (order, 1-12
# items, balance update, maybe an event), order status updates (1-5 rows), user touches (1-8
# rows, a few columns with full images), profile edits (utf8 + JSON), event and metric batches
# (1-10, 5-20 rows), sessions (insert, expire 1-3), audit rows, counter and kv upserts, place,
# wide41 and blob updates, order deletes (items then order); and one bulk transaction per round
# of 2,000-6,000 rows, in turn: INSERT ... SELECT into metrics, a range UPDATE of users, INSERT
# ... SELECT into events, a range UPDATE of wide41, INSERT ... SELECT into audit_log (no key),
# DELETE of old metrics. One client statement per operation (multi-row VALUES, IN lists), the
# bulk work server-side: no round trip per row.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=testdata/lib-mariadb.sh
. "$ROOT/testdata/lib-mariadb.sh"

SHAPE=mixed
SIZE_MB=1024
OUT=
SEED=1
STATS=1
ENCRYPT=
while [ $# -gt 0 ]; do
    case $1 in
    --shape) SHAPE=$2; shift 2 ;;
    --shape=*) SHAPE=${1#*=}; shift ;;
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --size-mb=*) SIZE_MB=${1#*=}; shift ;;
    --out) OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --seed) SEED=$2; shift 2 ;;
    --seed=*) SEED=${1#*=}; shift ;;
    --no-stats) STATS=0; shift ;;
    --encrypt) ENCRYPT=AES_CBC; shift ;;
    --encrypt=*) ENCRYPT=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $SIZE_MB in ''|*[!0-9]*) mdb_die "--size-mb wants a positive integer" ;; esac
if [ "$SIZE_MB" -lt 1 ] || [ "$SIZE_MB" -gt 1024 ]; then mdb_die "--size-mb must be 1..1024"; fi
case $SHAPE in mixed|wide|oltp) ;; *) mdb_die "--shape wants mixed, wide or oltp" ;; esac
if [ -z "$OUT" ]; then
    if [ "$SHAPE" = mixed ]; then OUT=$HERE/work/mariadb-${SIZE_MB}mb; else OUT=$HERE/work/mariadb-$SHAPE-${SIZE_MB}mb; fi
fi

export LC_ALL=C.UTF-8 TZ=UTC
mdb_ensure_installed

mkdir -p "$HERE/work"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/binlogctl-large.XXXXXX")
on_exit() {
    local rc=$?
    mdb_cleanup
    rm -rf "$WORK"
    return "$rc"
}
trap on_exit EXIT

OPTS=(
    --log-bin=mariadb-bin
    --server-id=901
    --gtid-domain-id=9
    --binlog-format=ROW
    --binlog-checksum=CRC32
    --binlog-row-image=FULL
    --binlog-row-metadata=FULL
    --binlog-annotate-row-events=ON
    --max-binlog-size=1073741824
    --character-set-server=utf8mb4
    --collation-server=utf8mb4_general_ci
    --default-time-zone=+00:00
    --innodb-flush-log-at-trx-commit=0
    --sync-binlog=0
    --innodb-doublewrite=0
    --innodb-buffer-pool-size=1G
    --innodb-log-file-size=512M
    --binlog-cache-size=1M
    --max-allowed-packet=64M
)

if [ -n "${ENCRYPT:-}" ]; then
    printf '# file_key_management key file of the bench binlog (random)\n1;%s\n' "$(openssl rand -hex 32)" > "$WORK/keys.txt"
    OPTS+=(--plugin-load-add=file_key_management --file-key-management-filename="$WORK/keys.txt"
           --file-key-management-encryption-algorithm="$ENCRYPT" --encrypt-binlog=ON)
fi

T0=$SECONDS
mdb_log "init + start (work dir $WORK)"
mdb_init "$WORK"
mdb_start "$WORK" "${OPTS[@]}"

# The generators write the SQL stream to stdout and stop once MDB_BINLOG reaches MDB_TARGET bytes.
workload_mixed() {
    cat <<'PY'
import os, random, sys, time

binlog = os.environ["MDB_BINLOG"]
target = int(os.environ["MDB_TARGET"])
r = random.Random(int(os.environ["MDB_SEED"]))
out = sys.stdout
ts = 1706745600

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu café naïve 東京 Ωmega straße ünïcode 😀").split()
HOSTS = ["web-%02d" % i for i in range(40)]
METRICS = ["cpu", "mem", "disk", "net_in", "net_out", "latency"]
TAGS = ["red", "green", "blue", "hot", "cold", "new"]
N_ACCT, N_SKU, N_DOC = 20000, 5000, 2000

def words(n):
    return " ".join(r.choice(WORDS) for _ in range(n))

def q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"

def w(s):
    out.write(s)
    out.write("\n")

# ---------------------------------------------------------------- schema
w("SET SESSION time_zone = '+00:00';")
w("SET timestamp = %d;" % ts)
w("CREATE DATABASE bench DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;")
w("USE bench;")
w("""CREATE TABLE accounts (id INT NOT NULL PRIMARY KEY, owner VARCHAR(40) NOT NULL,
  balance DECIMAL(14,2) NOT NULL, flags SMALLINT UNSIGNED NOT NULL DEFAULT 0, updated DATETIME(6) NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE ledger (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, acct INT NOT NULL,
  delta DECIMAL(14,2) NOT NULL, memo VARCHAR(100) NULL, at TIMESTAMP(3) NULL, KEY k_acct (acct)) ENGINE=InnoDB;""")
w("""CREATE TABLE sessions (sid UUID NOT NULL PRIMARY KEY, user_id INT UNSIGNED NOT NULL, ip INET6 NULL,
  ip4 INET4 NULL, started DATETIME NOT NULL, data JSON NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE metrics (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, host VARCHAR(32) NOT NULL,
  metric ENUM('cpu','mem','disk','net_in','net_out','latency') NOT NULL, value DOUBLE NOT NULL,
  fval FLOAT NULL, at DATETIME(3) NOT NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE events (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, kind TINYINT UNSIGNED NOT NULL,
  payload BLOB NULL, tags SET('red','green','blue','hot','cold','new') NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE inventory (sku CHAR(12) NOT NULL PRIMARY KEY, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL,
  bits BIT(16) NULL, yr YEAR NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE documents (id INT NOT NULL PRIMARY KEY, title VARCHAR(200) NOT NULL, body TEXT NULL,
  lang CHAR(2) CHARACTER SET latin1 NOT NULL DEFAULT 'en', rev SMALLINT NOT NULL DEFAULT 0) ENGINE=InnoDB;""")
w("""CREATE TABLE geo (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, pt POINT NULL, label VARCHAR(50) NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE times (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, d DATE NULL, t TIME(3) NULL,
  dt DATETIME(6) NULL, ts TIMESTAMP(6) NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE counters (name VARCHAR(64) NOT NULL PRIMARY KEY, n BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE audit_nopk (who VARCHAR(32) NULL, what VARCHAR(64) NULL, at DATETIME NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE numbers (id INT NOT NULL PRIMARY KEY, d DECIMAL(30,10) NULL, u BIGINT UNSIGNED NULL,
  i8 TINYINT NULL, f DOUBLE NULL) ENGINE=InnoDB;""")
w("INSERT INTO accounts SELECT seq, CONCAT('owner-', seq), seq * 3.25, seq %% 65536, NOW(6) FROM seq_1_to_%d;" % N_ACCT)
w("INSERT INTO inventory SELECT CONCAT('SKU-', LPAD(seq, 8, '0')), seq %% 1000, seq / 7, seq %% 65536, 1901 + seq %% 255 FROM seq_1_to_%d;" % N_SKU)
w("INSERT INTO documents (id, title, body) SELECT seq, CONCAT('doc ', seq), REPEAT('lorem ipsum ', 1 + seq %% 30) FROM seq_1_to_%d;" % N_DOC)
w("INSERT INTO numbers SELECT seq, seq / 3, seq * 1000003, seq % 128, seq / 7e0 FROM seq_1_to_1000;")

metric_lo, metric_hi = 1, 0     # live id range in metrics (approx.)
ledger_lo, ledger_hi = 1, 0

# ---------------------------------------------------------------- transactions
# One statement of a small transaction; each touches one table.
def op():
    global ledger_lo, ledger_hi, metric_hi
    x = r.random()
    if x < 0.22:        # 1-3 ledger rows
        k = r.randint(1, 3)
        ledger_hi += k
        w("INSERT INTO ledger (acct, delta, memo, at) VALUES %s;" % ", ".join(
            "(%d, %.2f, %s, NOW(3))" % (r.randint(1, N_ACCT), r.uniform(-500, 500), q(words(r.randint(3, 12))[:100]))
            for _ in range(k)))
    elif x < 0.40:      # balance change
        w("UPDATE accounts SET balance = balance %s %.2f, updated = NOW(6) WHERE id = %d;"
          % (r.choice("+-"), r.uniform(1, 100), r.randint(1, N_ACCT)))
    elif x < 0.50:      # metric samples
        k = r.randint(2, 12)
        metric_hi += k
        w("INSERT INTO metrics (host, metric, value, fval, at) VALUES %s;" % ", ".join(
            "(%s, '%s', %r, %.3f, NOW(3))" % (q(r.choice(HOSTS)), r.choice(METRICS), r.random() * 100, r.random())
            for _ in range(k)))
    elif x < 0.58:      # stock change
        w("UPDATE inventory SET qty = qty + %d, price = price * 1.01 WHERE sku = 'SKU-%08d';"
          % (r.randint(-5, 5), r.randint(1, N_SKU)))
    elif x < 0.65:      # session start (UUID, INET6, INET4, JSON)
        w("INSERT INTO sessions VALUES ('%08x-%04x-4%03x-%x%03x-%012x', %d, '2001:db8::%x', '10.%d.%d.%d', FROM_UNIXTIME(%d), %s);"
          % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(12), r.randint(8, 11), r.getrandbits(12), r.getrandbits(48),
             r.randint(1, 10**6), r.getrandbits(16), r.randint(0, 255), r.randint(0, 255), r.randint(0, 255), ts,
             q('{"ua": "%s", "lang": "%s", "n": %d, "path": "/%s"}'
               % (words(4), r.choice(WORDS), r.randint(0, 99), "/".join(words(r.randint(1, 6)).split())))))
    elif x < 0.72:      # event with a blob and a SET
        k = r.randint(8, 200)
        w("INSERT INTO events (kind, payload, tags) VALUES (%d, x'%0*x', '%s');"
          % (r.randint(0, 255), 2 * k, r.getrandbits(8 * k), ",".join(r.sample(TAGS, r.randint(0, 3)))))
    elif x < 0.78:      # document revision (TEXT before and after image)
        w("UPDATE documents SET body = %s, rev = rev + 1 WHERE id = %d;" % (q(words(r.randint(10, 80))), r.randint(1, N_DOC)))
    elif x < 0.83:      # counter upsert
        w("INSERT INTO counters VALUES (%s, 1) ON DUPLICATE KEY UPDATE n = n + 1;" % q("c-" + r.choice(WORDS) + "-" + r.choice(WORDS)))
    elif x < 0.87:
        w("INSERT INTO times (d, t, dt, ts) VALUES (FROM_UNIXTIME(%d), '%s%d:%02d:%02d.%03d', NOW(6), NOW(6));"
          % (ts - r.randint(0, 10**8), r.choice(["", "-"]), r.randint(0, 838), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999)))
    elif x < 0.90:
        w("INSERT INTO geo (pt, label) VALUES (POINT(%.5f, %.5f), %s);" % (r.uniform(-180, 180), r.uniform(-90, 90), q(words(2))))
    elif x < 0.94:
        w("INSERT INTO audit_nopk VALUES (%s, %s, NOW());" % (q(r.choice(WORDS)), q(words(6)[:64])))
    elif x < 0.98:
        w("UPDATE numbers SET d = d + %.4f, u = u + 1, i8 = %d, f = f * 1.5 WHERE id = %d;"
          % (r.uniform(-1, 1), r.randint(-128, 127), r.randint(1, 1000)))
    else:               # delete a few old rows
        if ledger_hi - ledger_lo > 1000:
            w("DELETE FROM ledger WHERE id BETWEEN %d AND %d;" % (ledger_lo, ledger_lo + 2))
            ledger_lo += 3
        else:
            w("DELETE FROM audit_nopk WHERE who = %s LIMIT 1;" % q(r.choice(WORDS)))

# 1-4 statements; more than one in BEGIN/COMMIT (sometimes START TRANSACTION)
N_STMTS = [1, 1, 1, 1, 2, 2, 2, 3, 4]
def small():
    k = r.choice(N_STMTS)
    if k == 1:
        op()
        return
    w("BEGIN;" if r.random() < 0.8 else "START TRANSACTION;")
    for _ in range(k):
        op()
    w("COMMIT;")

def big():
    global metric_lo, metric_hi
    x = r.random()
    if x < 0.4:
        n = r.randint(2000, 8000)
        metric_hi += n
        w("INSERT INTO metrics (host, metric, value, fval, at) SELECT CONCAT('web-', LPAD(seq %% 40, 2, '0')), "
          "1 + seq %% 6, seq * %.5f, seq / 3, NOW(3) FROM seq_1_to_%d;" % (r.random(), n))
    elif x < 0.7:
        lo = r.randint(1, N_ACCT - 5000)
        w("UPDATE accounts SET flags = flags ^ 1, updated = NOW(6) WHERE id BETWEEN %d AND %d;" % (lo, lo + r.randint(1500, 5000)))
    else:
        if metric_hi - metric_lo > 8000:
            n = r.randint(1500, 6000)
            w("BEGIN;")
            w("DELETE FROM metrics WHERE id < %d;" % (metric_lo + n))
            w("INSERT INTO audit_nopk VALUES ('purge', 'metrics', NOW());")
            w("COMMIT;")
            metric_lo += n
        else:
            w("UPDATE inventory SET yr = 1901 + (yr + 1) % 255 WHERE sku <= 'SKU-00002000';")

BIG_P = 0.009
n = 0
while True:
    for _ in range(500):
        n += 1
        if n % 50 == 0:
            ts += 1
            w("SET timestamp = %d;" % ts)
        if r.random() < BIG_P:
            big()
        else:
            small()
    out.flush()
    try:
        size = os.path.getsize(binlog)
    except OSError as e:  # the server writes it from its start: its absence ends the run
        sys.exit("make-large-binlog: %s: %s (is the server running?)" % (binlog, e.strerror))
    if size >= target or os.path.exists(binlog[:-6] + "000002"):
        break
    if n % 50000 == 0:
        print("  %d transactions generated, binlog %.1f MiB" % (n, size / 1048576.0), file=sys.stderr)
PY
}

workload_wide() {
    cat <<'PY'
import os, random, sys

binlog = os.environ["MDB_BINLOG"]
target = int(os.environ["MDB_TARGET"])
r = random.Random(int(os.environ["MDB_SEED"]))
out = sys.stdout
ts = 1706745600

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu café naïve 東京 Ωmega straße ünïcode 😀 \"quoted\" back\\slash tab\there").split(" ")
ENUM_VALS = ["new", "active", "suspended", "closed", "archived", "deleted"]
KEYS = ["k%d" % i for i in range(40)] + ["name", "value", "when", "who", "clé", "名前"]
SET_VALS = ["a", "b", "c", "d", "e", "f", "g", "h"]

def words(n):
    return " ".join(r.choice(WORDS) for _ in range(n))

def q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"

def w(s):
    out.write(s)
    out.write("\n")

def json_value(depth=0):
    x = r.random()
    if depth < 2 and x < 0.25:
        return "{" + ", ".join('"%s": %s' % (r.choice(KEYS), json_value(depth + 1))
                               for _ in range(r.randint(1, 6))) + "}"
    if depth < 2 and x < 0.45:
        return "[" + ", ".join(json_value(depth + 1) for _ in range(r.randint(0, 8))) + "]"
    if x < 0.6:
        return str(r.randint(-10**9, 10**9))
    if x < 0.7:
        return repr(r.uniform(-1e6, 1e6))
    if x < 0.75:
        return r.choice(["true", "false", "null"])
    s = words(r.randint(1, 12)).replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return '"' + s + '"'

def json_doc():
    # 100-1500 bytes: an object of a few keys, nested arrays and objects
    keys = ["id", "name", "tags", "attrs", "history", "geo", "note", "flags", "score", "items"]
    parts = []
    for k in r.sample(keys, r.randint(4, 10)):
        parts.append('"%s": %s' % (k, json_value()))
    return "{" + ", ".join(parts) + "}"

def dt6():
    t = ts - r.randint(0, 10**8)
    return "FROM_UNIXTIME(%d.%06d)" % (t, r.randint(0, 999999))

# column kinds: (SQL type, literal generator, expression of seq for INSERT ... SELECT)
KINDS = {
    "int":      ("INT", lambda: str(r.randint(-2**31, 2**31 - 1)), "CAST(seq * 7919 % 2147483647 AS SIGNED) - 1073741823"),
    "uint":     ("INT UNSIGNED", lambda: str(r.randint(0, 2**32 - 1)), "seq * 104729 % 4294967295"),
    "tinyint":  ("TINYINT", lambda: str(r.randint(-128, 127)), "CAST(seq % 256 AS SIGNED) - 128"),
    "bigint":   ("BIGINT", lambda: str(r.randint(-2**63, 2**63 - 1)), "seq * 1000000007"),
    "ubigint":  ("BIGINT UNSIGNED", lambda: str(r.randint(0, 2**64 - 1)), "seq * 998244353"),
    "dec":      ("DECIMAL(18,4)", lambda: "%.4f" % r.uniform(-1e13, 1e13), "seq * 12345.6789 - 1e9"),
    "dec30":    ("DECIMAL(30,10)", lambda: "%.10f" % r.uniform(-1e15, 1e15), "seq / 7"),
    "double":   ("DOUBLE", lambda: repr(r.uniform(-1e12, 1e12)), "seq * 3.14159265358979e0"),
    "float":    ("FLOAT", lambda: "%.5g" % r.uniform(-1e6, 1e6), "seq / 3e0"),
    "dt6":      ("DATETIME(6)", dt6, "FROM_UNIXTIME(1700000000 + seq * 37) + INTERVAL seq % 1000000 MICROSECOND"),
    "ts3":      ("TIMESTAMP(3) NULL", lambda: "FROM_UNIXTIME(%d.%03d)" % (ts - r.randint(0, 10**7), r.randint(0, 999)), "FROM_UNIXTIME(1700000000 + seq)"),
    "date":     ("DATE", lambda: "DATE(FROM_UNIXTIME(%d))" % (ts - r.randint(0, 10**9)), "FROM_DAYS(730000 + seq % 10000)"),
    "vc":       ("VARCHAR(255)", lambda: q(words(r.randint(2, 30))[:255]), "CONCAT('v-', seq, '-', REPEAT('xyz', seq % 60))"),
    "vc40":     ("VARCHAR(40)", lambda: q(words(r.randint(1, 5))[:40]), "CONCAT('name-', seq)"),
    "char":     ("CHAR(16)", lambda: q(r.choice(WORDS)[:16]), "LPAD(seq, 16, '0')"),
    "text":     ("TEXT", lambda: q(words(r.randint(30, 300))), "REPEAT(CONCAT('lorem ipsum ', seq, ' dolor sit amet '), 1 + seq % 20)"),
    "mtext":    ("MEDIUMTEXT", lambda: q(words(r.randint(100, 600))), "REPEAT(CONCAT('consectetur ', seq, ' adipiscing '), 2 + seq % 30)"),
    "json":     ("JSON", lambda: q(json_doc()), "JSON_OBJECT('id', seq, 'name', CONCAT('n', seq), 'tags', JSON_ARRAY('a', seq % 7, seq * 1.5), 'attrs', JSON_OBJECT('x', seq % 100, 'note', REPEAT('j', seq % 100)))"),
    "enum":     ("ENUM('new','active','suspended','closed','archived','deleted')", lambda: q(r.choice(ENUM_VALS)), "1 + seq % 6"),
    "set":      ("SET('a','b','c','d','e','f','g','h')", lambda: q(",".join(r.sample(SET_VALS, r.randint(0, 4)))), "seq % 256"),
    "blob":     ("BLOB", lambda: "x'%s'" % r.randbytes(r.randint(16, 600)).hex(), "REPEAT(UNHEX(SHA2(seq, 256)), 1 + seq % 6)"),
    "vbin":     ("VARBINARY(64)", lambda: "x'%s'" % r.randbytes(r.randint(1, 64)).hex(), "UNHEX(MD5(seq))"),
}
# weights of the kinds in a table beyond the fixed TEXT and JSON columns
WEIGHTS = [("int", 6), ("uint", 2), ("tinyint", 2), ("bigint", 5), ("ubigint", 1), ("dec", 4), ("dec30", 1),
           ("double", 4), ("float", 1), ("dt6", 4), ("ts3", 1), ("date", 2), ("vc", 5), ("vc40", 3),
           ("char", 1), ("text", 2), ("json", 1), ("enum", 2), ("set", 2), ("blob", 2), ("vbin", 1)]
KIND_NAMES = [k for k, n in WEIGHTS for _ in range(n)]

N_TABLES = 12
tables = []   # (name, [(col, kind)], next id, live low id)
w("SET SESSION time_zone = '+00:00';")
w("SET timestamp = %d;" % ts)
w("CREATE DATABASE wide DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;")
w("USE wide;")
for t in range(N_TABLES):
    ncols = r.randint(20, 40)
    kinds = ["text", "json", "mtext" if t % 3 == 0 else "blob"] + [r.choice(KIND_NAMES) for _ in range(ncols - 4)]
    r.shuffle(kinds)
    cols = [("c%02d_%s" % (i + 1, k), k) for i, k in enumerate(kinds)]
    defs = ["id BIGINT NOT NULL PRIMARY KEY"]
    for c, k in cols:
        defs.append("%s %s%s" % (c, KINDS[k][0], "" if "NULL" in KINDS[k][0] else " NULL"))
    name = "w%02d" % t
    w("CREATE TABLE %s (%s) ENGINE=InnoDB;" % (name, ", ".join(defs)))
    tables.append([name, cols, 1, 1])

def row_values(cols):
    return ", ".join("NULL" if r.random() < 0.08 else KINDS[k][1]() for _, k in cols)

def ins(tb, k):
    name, cols, nid, _ = tb
    rows = []
    for i in range(k):
        rows.append("(%d, %s)" % (nid + i, row_values(cols)))
    tb[2] = nid + k
    w("INSERT INTO %s VALUES %s;" % (name, ", ".join(rows)))

def upd(tb, k):
    name, cols, nid, lo = tb
    if nid - lo < 10:
        return ins(tb, k)
    ids = sorted(set(r.randint(lo, nid - 1) for _ in range(k)))
    sets = r.sample(cols, r.randint(2, 5))
    w("UPDATE %s SET %s WHERE id IN (%s);" % (name, ", ".join("%s = %s" % (c, KINDS[kd][1]()) for c, kd in sets),
                                             ", ".join(map(str, ids))))

def dele(tb, k):
    name, cols, nid, lo = tb
    if nid - lo < 200:
        return ins(tb, k)
    w("DELETE FROM %s WHERE id BETWEEN %d AND %d;" % (name, lo, lo + k - 1))
    tb[3] = lo + k

ROWS = [1, 1, 1, 1, 2, 2, 3, 4, 5]
def stmt():
    tb = r.choice(tables)
    k = r.choice(ROWS)
    x = r.random()
    if x < 0.55:
        ins(tb, k)
    elif x < 0.88:
        upd(tb, k)
    else:
        dele(tb, min(k, 3))

def small():
    if r.random() < 0.85:
        stmt()
        return
    w("BEGIN;")
    for _ in range(r.randint(2, 3)):
        stmt()
    w("COMMIT;")

def big():
    tb = r.choice(tables)
    name, cols, nid, lo = tb
    n = r.randint(1000, 3000)
    x = r.random()
    if x < 0.6 or nid - lo < n:
        exprs = ", ".join(KINDS[k][2] for _, k in cols)
        w("INSERT INTO %s SELECT %d + seq, %s FROM seq_0_to_%d;" % (name, nid, exprs, n - 1))
        tb[2] = nid + n
    else:
        num = [(c, k) for c, k in cols if k in ("int", "bigint", "dec", "double", "tinyint")]
        dt = [c for c, k in cols if k == "dt6"]
        # integers halved (c + 1 can overflow: strict mode refuses the whole UPDATE)
        sets = [("%s = %s + 1" if k in ("dec", "double") else "%s = %s DIV 2") % (c, c) for c, k in num[:1]]
        sets += ["%s = NOW(6)" % c for c in dt[:1]]
        if not sets:
            sets = ["%s = %s" % (cols[0][0], cols[0][0])]
        lo2 = r.randint(lo, nid - n)
        w("UPDATE %s SET %s WHERE id BETWEEN %d AND %d;" % (name, ", ".join(sets), lo2, lo2 + n - 1))

BIG_P = 0.001
n = 0
MAX_TRX = 20000000   # bound: the loop ends by size, this only guards against a stuck binlog
while n < MAX_TRX:
    for _ in range(200):
        n += 1
        if n % 20 == 0:
            ts += 1
            w("SET timestamp = %d;" % ts)
        if r.random() < BIG_P:
            big()
        else:
            small()
    out.flush()
    try:
        size = os.path.getsize(binlog)
    except OSError as e:  # the server writes it from its start: its absence ends the run
        sys.exit("make-large-binlog: %s: %s (is the server running?)" % (binlog, e.strerror))
    if size >= target or os.path.exists(binlog[:-6] + "000002"):
        break
    if n % 10000 == 0:
        print("  %d transactions generated, binlog %.1f MiB" % (n, size / 1048576.0), file=sys.stderr)
PY
}

workload_oltp() {
    cat <<'PY'
import hashlib, os, random, sys

binlog = os.environ["MDB_BINLOG"]
target = int(os.environ["MDB_TARGET"])
r = random.Random(int(os.environ["MDB_SEED"]))
out = sys.stdout
ts = 1709251200

WORDS = ("the a of and to in is for on with order paid ship late soon ok fine thanks please "
         "café naïve crème brûlée 東京 大阪 Ωmega straße ünïcode Zürich Łódź Ελλάδα Москва 😀 👍 "
         "\"quoted\" back\\slash it's").split(" ")
FIRST = ("Anna José Zoë Søren Łukasz Ελένη Дмитрий 李 明 Ana Chloé Björn Renée Ngozi Aiko "
         "Mohammed Fatima Olga Jürgen Siobhán Tomás Ines Kenji Priya").split()
LAST = ("Smith García Müller Nowak Δημητρίου Иванов 王 佐藤 O'Brien Dubois Rossi Kowalski "
        "Núñez Öztürk Hansen Björk Silva Kim Nguyen Ødegaard").split()
DOMAINS = ["example.com", "mail.example.org", "exämple.de", "corp.example.net"]
USTATUS = ["active", "idle", "away", "pending", "locked", "closed"]
OSTATUS = ["new", "paid", "packed", "shipped", "delivered", "cancelled", "returned"]
EKINDS = ["login", "logout", "view", "click", "search", "cart", "purchase", "error", "rate", "share"]
HOSTS = ["db-%02d" % i for i in range(24)] + ["web-%02d" % i for i in range(40)]
MNAMES = ["cpu", "mem", "disk_r", "disk_w", "net_in", "net_out", "p99_ms", "qps", "conns"]
MIMES = ["image/png", "image/jpeg", "application/pdf", "application/octet-stream", "text/plain"]
PKINDS = ["cafe", "shop", "park", "station", "school", "museum", "hotel"]
N_USERS, N_PLACES, N_BLOBS, N_WIDE, N_KV, N_CNT = 50000, 5000, 2000, 10000, 20000, 600

def words(n):
    return " ".join(r.choice(WORDS) for _ in range(n))

def q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"

def w(s):
    out.write(s)
    out.write("\n")

def person():
    return "%s %s" % (r.choice(FIRST), r.choice(LAST))

def email(uid):
    return "%s.%d@%s" % (r.choice(FIRST).lower(), uid, r.choice(DOMAINS))

def dt(back, frac):
    t = ts - r.randint(0, back)
    if frac:
        return "FROM_UNIXTIME(%d.%0*d)" % (t, frac, r.randint(0, 10**frac - 1))
    return "FROM_UNIXTIME(%d)" % t

def time3():
    return "'%s%d:%02d:%02d.%03d'" % (r.choice(["", "", "-"]), r.randint(0, 838), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999))

def prefs():
    return q('{"lang": "%s", "theme": "%s", "notify": %s, "tags": [%s], "nick": "%s", "score": %d}'
             % (r.choice(["en", "fr", "de", "ja", "pl", "el"]), r.choice(["dark", "light"]), r.choice(["true", "false"]),
                ", ".join('"%s"' % r.choice(EKINDS) for _ in range(r.randint(0, 4))),
                r.choice(FIRST), r.randint(0, 10**6)))

# 40 columns of the wide41 table (with id: 41): SQL type, literal, expression of seq (bulk)
WTYPES = [
    ("INT", lambda: str(r.randint(-2**31, 2**31 - 1)), "CAST(seq * 7919 % 2147483647 AS SIGNED) - 1073741823"),
    ("BIGINT", lambda: str(r.randint(-2**63, 2**63 - 1)), "seq * 1000000007"),
    ("SMALLINT", lambda: str(r.randint(-32768, 32767)), "CAST(seq % 65536 AS SIGNED) - 32768"),
    ("TINYINT UNSIGNED", lambda: str(r.randint(0, 255)), "seq % 256"),
    ("MEDIUMINT", lambda: str(r.randint(-2**23, 2**23 - 1)), "CAST(seq % 16777216 AS SIGNED) - 8388608"),
    ("DECIMAL(10,2)", lambda: "%.2f" % r.uniform(-1e7, 1e7), "seq * 1.25"),
    ("DECIMAL(20,6)", lambda: "%.6f" % r.uniform(-1e13, 1e13), "seq / 7"),
    ("DOUBLE", lambda: repr(r.uniform(-1e9, 1e9)), "seq * 3.14159e0"),
    ("FLOAT", lambda: "%.5g" % r.uniform(-1e6, 1e6), "seq / 3e0"),
    ("DATE", lambda: "DATE(%s)" % dt(10**9, 0), "FROM_DAYS(730000 + seq % 10000)"),
    ("DATETIME", lambda: dt(10**8, 0), "FROM_UNIXTIME(1700000000 + seq * 37)"),
    ("DATETIME(3)", lambda: dt(10**8, 3), "FROM_UNIXTIME(1700000000.123 + seq * 41)"),
    ("TIMESTAMP(6) NULL", lambda: dt(10**7, 6), "FROM_UNIXTIME(1700000000.000001 * 1 + seq)"),
    ("TIME(3)", time3, "SEC_TO_TIME(seq % 86400)"),
    ("YEAR", lambda: str(r.randint(1901, 2155)), "1901 + seq % 255"),
    ("VARCHAR(32)", lambda: q(words(r.randint(1, 4))[:32]), "CONCAT('w', seq)"),
    ("VARCHAR(200)", lambda: q(words(r.randint(3, 30))[:200]), "CONCAT('text ', seq, ' café ', REPEAT('ab', seq % 50))"),
    ("CHAR(8)", lambda: q(r.choice(WORDS)[:8]), "LPAD(seq % 100000, 8, '0')"),
    ("BIT(8)", lambda: str(r.randint(0, 255)), "seq % 256"),
    ("ENUM('a','b','c','d')", lambda: q(r.choice("abcd")), "1 + seq % 4"),
]
WCOLS = [("c%02d" % (i + 1), WTYPES[i % len(WTYPES)]) for i in range(40)]

# ---------------------------------------------------------------- schema
w("SET SESSION time_zone = '+00:00';")
w("SET timestamp = %d;" % ts)
w("CREATE DATABASE oltp DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;")
w("USE oltp;")
w("""CREATE TABLE users (id INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(80) NOT NULL, email VARCHAR(120) NOT NULL,
  status VARCHAR(12) NOT NULL, balance DECIMAL(12,2) NOT NULL DEFAULT 0, created DATETIME(6) NOT NULL,
  last_seen TIMESTAMP(3) NULL, flags BIT(8) NOT NULL DEFAULT b'0', prefs JSON NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE orders (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, user_id INT UNSIGNED NOT NULL, total DECIMAL(12,2) NOT NULL,
  placed DATETIME NOT NULL, ship_date DATE NULL, status VARCHAR(12) NOT NULL, notes VARCHAR(255) NULL, KEY k_user (user_id)) ENGINE=InnoDB;""")
w("""CREATE TABLE order_items (order_id BIGINT UNSIGNED NOT NULL, line SMALLINT UNSIGNED NOT NULL, sku CHAR(10) NOT NULL,
  qty SMALLINT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line)) ENGINE=InnoDB;""")
w("""CREATE TABLE events (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, kind VARCHAR(16) NOT NULL,
  user_id INT UNSIGNED NULL, body VARCHAR(200) NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), took TIME(3) NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE metrics (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, host VARCHAR(32) NOT NULL,
  name VARCHAR(32) NOT NULL, value DOUBLE NOT NULL, fval FLOAT NULL, at DATETIME(3) NOT NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE blobs (id INT UNSIGNED NOT NULL PRIMARY KEY, mime VARCHAR(40) NOT NULL, data BLOB NOT NULL,
  sha1 BINARY(20) NOT NULL, updated DATETIME NOT NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE sessions (token CHAR(32) CHARACTER SET ascii NOT NULL PRIMARY KEY, user_id INT UNSIGNED NOT NULL,
  ip VARBINARY(16) NULL, started DATETIME(6) NOT NULL, expires TIMESTAMP NULL, data VARCHAR(255) NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE audit_log (user_id INT UNSIGNED NULL, action VARCHAR(32) NOT NULL, detail VARCHAR(120) NULL,
  at DATETIME(6) NOT NULL) ENGINE=InnoDB;""")
w("""CREATE TABLE counters (name VARCHAR(64) NOT NULL PRIMARY KEY, n BIGINT NOT NULL,
  updated TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP) ENGINE=InnoDB;""")
w("""CREATE TABLE places (id INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(80) NOT NULL, pt POINT NOT NULL,
  kind VARCHAR(16) NOT NULL, rating TINYINT UNSIGNED NULL) ENGINE=InnoDB;""")
w("CREATE TABLE wide41 (id INT UNSIGNED NOT NULL PRIMARY KEY, %s) ENGINE=InnoDB;"
  % ", ".join("%s %s%s" % (c, t[0], "" if "NULL" in t[0] else " NULL") for c, t in WCOLS))
w("""CREATE TABLE kv (k VARCHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY, v VARBINARY(512) NOT NULL,
  ver INT UNSIGNED NOT NULL, ttl DATETIME NULL) ENGINE=InnoDB;""")
w("INSERT INTO users SELECT seq, CONCAT(ELT(1 + seq % 6, 'José', 'Zoë', 'Søren', 'Ελένη', 'Дмитрий', '李'), ' ', seq), "
  "CONCAT('u', seq, '@example.com'), ELT(1 + seq % 6, 'active', 'idle', 'away', 'pending', 'locked', 'closed'), seq / 10, "
  "FROM_UNIXTIME(1600000000.5 + seq * 97), NULL, seq % 256, JSON_OBJECT('lang', ELT(1 + seq % 4, 'en', 'fr', 'de', 'ja'), 'n', seq) "
  "FROM seq_1_to_" + str(N_USERS) + ";")
w("INSERT INTO places SELECT seq, CONCAT('place ', seq, ' Straße'), POINT(CAST(seq % 360 AS SIGNED) - 180, CAST(seq % 180 AS SIGNED) - 90), "
  "ELT(1 + seq % 7, 'cafe', 'shop', 'park', 'station', 'school', 'museum', 'hotel'), seq % 6 FROM seq_1_to_" + str(N_PLACES) + ";")
w("INSERT INTO blobs SELECT seq, 'application/octet-stream', REPEAT(UNHEX(SHA2(seq, 256)), 1 + seq % 8), UNHEX(SHA1(seq)), "
  "FROM_UNIXTIME(1700000000 + seq) FROM seq_1_to_" + str(N_BLOBS) + ";")
w("INSERT INTO wide41 SELECT seq, %s FROM seq_1_to_%d;" % (", ".join(t[2] for _, t in WCOLS), N_WIDE))
w("INSERT INTO kv SELECT CONCAT('key:', seq), UNHEX(MD5(seq)), 1, NULL FROM seq_1_to_" + str(N_KV) + ";")
w("INSERT INTO counters (name, n) SELECT CONCAT('ctr.', seq), 0 FROM seq_1_to_" + str(N_CNT) + ";")

order_lo, order_hi = 1, 0        # live order ids
order_lines = {}                 # order id -> number of items (live orders only)
metric_lo, metric_hi = 1, 0      # metrics ids (approximate live range)
sessions = []                    # live session tokens
rows = 0                         # row changes of the current transaction (informational)

# ---------------------------------------------------------------- small transactions
def new_order():
    global order_hi
    order_hi += 1
    oid, uid, k = order_hi, r.randint(1, N_USERS), r.randint(1, 12)
    items = [(i + 1, "SKU%07d" % r.randint(1, 99999), r.randint(1, 9), r.uniform(0.5, 300)) for i in range(k)]
    total = sum(qn * p for _, _, qn, p in items)
    order_lines[oid] = k
    w("INSERT INTO orders VALUES (%d, %d, %.2f, NOW(), NULL, 'new', %s);"
      % (oid, uid, total, "NULL" if r.random() < 0.6 else q(words(r.randint(2, 25))[:255])))
    w("INSERT INTO order_items VALUES %s;" % ", ".join("(%d, %d, '%s', %d, %.2f)" % (oid, ln, sku, qn, p) for ln, sku, qn, p in items))
    w("UPDATE users SET balance = balance - %.2f, last_seen = NOW(3) WHERE id = %d;" % (min(total, 9999), uid))
    if r.random() < 0.5:
        w("INSERT INTO events (kind, user_id, body, at, took) VALUES ('purchase', %d, %s, NOW(6), %s);" % (uid, q("order %d" % oid), time3()))
    return 2

def order_update():
    if order_hi - order_lo < 10:
        return new_order()
    ids = sorted(set(r.randint(max(order_lo, order_hi - 5000), order_hi) for _ in range(r.randint(1, 5))))
    st = r.choice(OSTATUS)
    w("UPDATE orders SET status = '%s', ship_date = %s WHERE id IN (%s);"
      % (st, "DATE(NOW())" if st in ("shipped", "delivered") else "ship_date", ", ".join(map(str, ids))))
    return 1

def order_delete():
    global order_lo
    if order_hi - order_lo < 20000:
        return new_order()
    oid = order_lo
    order_lo += 1
    order_lines.pop(oid, None)
    w("DELETE FROM order_items WHERE order_id = %d;" % oid)
    w("DELETE FROM orders WHERE id = %d;" % oid)
    return 2

def user_touch():
    ids = sorted(set(r.randint(1, N_USERS) for _ in range(r.randint(1, 8))))
    w("UPDATE users SET last_seen = NOW(3), status = '%s', flags = flags ^ %d WHERE id IN (%s);"
      % (r.choice(USTATUS), 1 << r.randint(0, 7), ", ".join(map(str, ids))))
    return 1

def user_edit():
    uid = r.randint(1, N_USERS)
    w("UPDATE users SET name = %s, email = %s, prefs = %s WHERE id = %d;" % (q(person()), q(email(uid)), prefs(), uid))
    return 1

def events():
    k = r.randint(1, 10)
    w("INSERT INTO events (kind, user_id, body, at, took) VALUES %s;" % ", ".join(
        "('%s', %s, %s, NOW(6), %s)" % (r.choice(EKINDS), "NULL" if r.random() < 0.1 else r.randint(1, N_USERS),
                                       "NULL" if r.random() < 0.2 else q(words(r.randint(1, 40))[:200]),
                                       "NULL" if r.random() < 0.3 else time3()) for _ in range(k)))
    return 1

def metrics():
    global metric_hi
    k = r.randint(5, 20)
    metric_hi += k
    h = r.choice(HOSTS)
    w("INSERT INTO metrics (host, name, value, fval, at) VALUES %s;" % ", ".join(
        "('%s', '%s', %r, %s, NOW(3))" % (h, r.choice(MNAMES), r.random() * 1000, "NULL" if r.random() < 0.1 else "%.4f" % r.random())
        for _ in range(k)))
    return 1

def session():
    tok = "%032x" % r.getrandbits(128)
    ip = "x'%08x'" % r.getrandbits(32) if r.random() < 0.7 else "x'%032x'" % r.getrandbits(128)
    w("INSERT INTO sessions VALUES ('%s', %d, %s, NOW(6), FROM_UNIXTIME(%d), %s);"
      % (tok, r.randint(1, N_USERS), ip, ts + 3600, "NULL" if r.random() < 0.5 else q('{"ua": "%s"}' % words(3))))
    sessions.append(tok)
    n = 1
    if len(sessions) > 5000:
        k = r.randint(1, 3)
        w("DELETE FROM sessions WHERE token IN (%s);" % ", ".join("'%s'" % t for t in sessions[:k]))
        del sessions[:k]
        n += 1
    return n

def audit():
    x = r.random()
    if x < 0.75:
        w("INSERT INTO audit_log VALUES %s;" % ", ".join(
            "(%d, '%s', %s, NOW(6))" % (r.randint(1, 500), r.choice(EKINDS), q(words(r.randint(1, 12))[:120])) for _ in range(r.randint(1, 4))))
    elif x < 0.9:   # UPDATE and DELETE without a key: the server logs whatever rows it finds
        w("UPDATE audit_log SET detail = %s WHERE user_id = %d LIMIT 2;" % (q(words(3)), r.randint(1, 500)))
    else:
        w("DELETE FROM audit_log WHERE user_id = %d LIMIT 3;" % r.randint(1, 500))
    return 1

def counters():
    names = sorted(set("ctr.%d" % r.randint(1, N_CNT + 100) for _ in range(r.randint(1, 5))))
    w("INSERT INTO counters (name, n) VALUES %s ON DUPLICATE KEY UPDATE n = n + VALUES(n);"
      % ", ".join("('%s', %d)" % (n, r.randint(1, 10)) for n in names))
    return 1

def places():
    pid = r.randint(1, N_PLACES)
    if r.random() < 0.5:
        w("UPDATE places SET pt = POINT(%.6f, %.6f), rating = %s WHERE id = %d;"
          % (r.uniform(-180, 180), r.uniform(-90, 90), "NULL" if r.random() < 0.2 else r.randint(0, 5), pid))
    else:
        w("UPDATE places SET name = %s, kind = '%s' WHERE id = %d;" % (q(words(r.randint(1, 4))[:80]), r.choice(PKINDS), pid))
    return 1

def wide():
    ids = sorted(set(r.randint(1, N_WIDE) for _ in range(r.randint(1, 3))))
    cols = r.sample(WCOLS, r.randint(2, 4))
    w("UPDATE wide41 SET %s WHERE id IN (%s);"
      % (", ".join("%s = %s" % (c, "NULL" if r.random() < 0.1 else t[1]()) for c, t in cols), ", ".join(map(str, ids))))
    return 1

def kv():
    x = r.random()
    if x < 0.8:
        keys = sorted(set(r.randint(1, N_KV + 2000) for _ in range(r.randint(1, 6))))
        w("INSERT INTO kv VALUES %s ON DUPLICATE KEY UPDATE v = VALUES(v), ver = ver + 1, ttl = VALUES(ttl);" % ", ".join(
            "('key:%d', x'%s', 1, %s)" % (k, r.randbytes(r.randint(4, 200)).hex(), "NULL" if r.random() < 0.7 else "FROM_UNIXTIME(%d)" % (ts + 86400))
            for k in keys))
    else:
        w("DELETE FROM kv WHERE k IN (%s);" % ", ".join("'key:%d'" % r.randint(1, N_KV + 2000) for _ in range(r.randint(1, 2))))
    return 1

def blob():
    data = r.randbytes(r.randint(32, 2000))
    w("UPDATE blobs SET mime = '%s', data = x'%s', sha1 = x'%s', updated = NOW() WHERE id = %d;"
      % (r.choice(MIMES), data.hex(), hashlib.sha1(data).hexdigest(), r.randint(1, N_BLOBS)))
    return 1

OPS = [(new_order, 20), (order_update, 10), (order_delete, 3), (user_touch, 12), (user_edit, 4), (events, 10),
       (metrics, 8), (session, 7), (audit, 6), (counters, 6), (places, 3), (wide, 5), (kv, 8), (blob, 2)]
OP_LIST = [f for f, n in OPS for _ in range(n)]

def small():
    # one business operation, now and then two in the same transaction
    n = 2 if r.random() < 0.2 else 1
    body = []
    global out
    real = out
    class Buf:
        def write(self, s):
            body.append(s)
    out = Buf()
    stmts = 0
    for _ in range(n):
        stmts += r.choice(OP_LIST)()
    out = real
    text = "".join(body)
    if stmts > 1:
        w("BEGIN;")
        out.write(text)
        w("COMMIT;")
    else:
        out.write(text)

# ---------------------------------------------------------------- one bulk transaction per round
def bulk(i):
    global metric_lo, metric_hi
    n = r.randint(2000, 6000)
    x = i % 6
    if x == 0:
        metric_hi += n
        w("INSERT INTO metrics (host, name, value, fval, at) SELECT CONCAT('web-', LPAD(seq %% 40, 2, '0')), "
          "ELT(1 + seq %% 9, 'cpu', 'mem', 'disk_r', 'disk_w', 'net_in', 'net_out', 'p99_ms', 'qps', 'conns'), "
          "seq * %.6f, seq / 7, NOW(3) FROM seq_1_to_%d;" % (r.random(), n))
    elif x == 1:
        lo = r.randint(1, N_USERS - n)
        w("UPDATE users SET balance = balance + 1.25, flags = flags ^ 128 WHERE id BETWEEN %d AND %d;" % (lo, lo + n - 1))
    elif x == 2:
        w("INSERT INTO events (kind, user_id, body, at, took) SELECT ELT(1 + seq %% 10, 'login', 'logout', 'view', 'click', "
          "'search', 'cart', 'purchase', 'error', 'rate', 'share'), 1 + seq %% %d, CONCAT('batch ', seq, ' Grüße 😀'), NOW(6), "
          "SEC_TO_TIME(seq %% 3600 + 0.5) FROM seq_1_to_%d;" % (N_USERS, n))
    elif x == 3:
        lo = r.randint(1, N_WIDE - n)
        a, b = r.sample(WCOLS[:8], 2)
        w("UPDATE wide41 SET %s = %s, c11 = NOW() WHERE id BETWEEN %d AND %d;" % (a[0], b[0] if a[1] == b[1] else "NULL", lo, lo + n - 1))
    elif x == 4:
        w("INSERT INTO audit_log SELECT 1 + seq %% 500, 'batch', CONCAT('nightly job ', seq), NOW(6) FROM seq_1_to_%d;" % n)
    else:
        if metric_hi - metric_lo > n + 10000:
            w("DELETE FROM metrics WHERE id < %d;" % (metric_lo + n))
            metric_lo += n
        else:
            w("UPDATE kv SET ver = ver + 1, ttl = NOW() WHERE k BETWEEN 'key:1' AND 'key:3';")

n = 0
rnd = 0
MAX_ROUNDS = 100000   # bound: the loop ends by size, this only guards against a stuck binlog
while rnd < MAX_ROUNDS:
    for _ in range(1000):
        n += 1
        if n % 50 == 0:
            ts += 1
            w("SET timestamp = %d;" % ts)
        small()
    bulk(rnd)
    rnd += 1
    out.flush()
    try:
        size = os.path.getsize(binlog)
    except OSError as e:  # the server writes it from its start: its absence ends the run
        sys.exit("make-large-binlog: %s: %s (is the server running?)" % (binlog, e.strerror))
    if size >= target or os.path.exists(binlog[:-6] + "000002"):
        break
    if rnd % 20 == 0:
        print("  %d rounds, binlog %.1f MiB" % (rnd, size / 1048576.0), file=sys.stderr)
PY
}

"workload_$SHAPE" > "$WORK/workload.py"
mdb_log "streaming the $SHAPE workload until mariadb-bin.000001 >= $SIZE_MB MiB"
MDB_BINLOG="$WORK/data/mariadb-bin.000001" MDB_TARGET=$((SIZE_MB * 1024 * 1024)) MDB_SEED=$SEED \
python3 "$WORK/workload.py" | mdb_sql "$WORK" --batch > "$WORK/workload.out"
mdb_log "workload done in $((SECONDS - T0)) s"

size=$(stat -c %s "$WORK/data/mariadb-bin.000001")
[ "$size" -ge $((SIZE_MB * 1024 * 1024)) ] || mdb_die "binlog only $size bytes after the workload"
[ ! -e "$WORK/data/mariadb-bin.000002" ] || mdb_log "note: the server rotated past 1 GiB; keeping only mariadb-bin.000001"

rm -rf "$OUT"
mkdir -p "$OUT"
if [ "$STATS" = 1 ]; then
    mdb_log "counting events (SHOW BINLOG EVENTS)"
    mdb_sql "$WORK" --batch --quick --skip-column-names -e "SHOW BINLOG EVENTS IN 'mariadb-bin.000001'" |
        awk -F'\t' '{ n[$3]++; if ($3 == "Gtid") trx++ } END { for (t in n) printf "%s\t%d\n", t, n[t]; printf "#transactions (Gtid events)\t%d\n", trx }' |
        sort > "$WORK/counts.txt"
fi
if [ -n "${ENCRYPT:-}" ]; then
    mdb_log "closing the file and copying it decrypted (mariadb-binlog -R --raw)"
    mdb_sql "$WORK" -e "FLUSH BINARY LOGS"
    mkdir -p "$OUT/plain"
    mariadb-binlog --no-defaults -R --raw --socket="$WORK/sock" -uroot --result-file="$OUT/plain/" mariadb-bin.000001
    cp "$WORK/keys.txt" "$OUT/keys.txt"
fi
mdb_log "shutdown"
mdb_stop "$WORK"
mv "$WORK/data/mariadb-bin.000001" "$OUT/mariadb-bin.000001"
echo "./mariadb-bin.000001" > "$OUT/mariadb-bin.index"
{
    echo "file	mariadb-bin.000001"
    echo "bytes	$(stat -c %s "$OUT/mariadb-bin.000001")"
    echo "server	$(mdb_version)"
    echo "options	${OPTS[*]}"
    echo "shape	$SHAPE"
    echo "seed	$SEED"
    echo "generated_in_seconds	$((SECONDS - T0))"
    if [ -f "$WORK/counts.txt" ]; then
        if grep -q '^Rotate' "$WORK/counts.txt"; then
            echo "# events per type from SHOW BINLOG EVENTS (the file ends with a Rotate event: the server rotated past max_binlog_size)"
        else
            echo "# events per type from SHOW BINLOG EVENTS before shutdown (the file then got one Stop event more)"
        fi
        cat "$WORK/counts.txt"
        awk -F'\t' '!/^#/ { s += $2 } END { printf "#events\t%d\n", s }' "$WORK/counts.txt"
    fi
} > "$OUT/stats.txt"
mdb_log "done in $((SECONDS - T0)) s: $OUT/mariadb-bin.000001 ($(du -h "$OUT/mariadb-bin.000001" | cut -f1))"
cat "$OUT/stats.txt" >&2
