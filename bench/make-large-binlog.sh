#!/usr/bin/env bash
# Generates ONE large, real MariaDB binlog file for benchmarks, with a private
# throw-away server (same start/stop helpers as testdata/generate.sh).
#
#   bench/make-large-binlog.sh [--size-mb N] [--out DIR] [--seed S] [--no-stats]
#
#   --size-mb N   stop once the binlog file is at least N MiB (default 1024,
#                 at most 1024: the file must stay a single file and
#                 max_binlog_size is at most 1 GiB)
#   --out DIR     where to put it (default bench/work/mariadb-<N>mb, gitignored)
#   --seed S      seed of the generated workload (default 1)
#   --no-stats    skip the SHOW BINLOG EVENTS pass that counts events per type
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
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=testdata/lib-mariadb.sh
. "$ROOT/testdata/lib-mariadb.sh"

SIZE_MB=1024
OUT=
SEED=1
STATS=1
while [ $# -gt 0 ]; do
    case $1 in
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --size-mb=*) SIZE_MB=${1#*=}; shift ;;
    --out) OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --seed) SEED=$2; shift 2 ;;
    --seed=*) SEED=${1#*=}; shift ;;
    --no-stats) STATS=0; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $SIZE_MB in ''|*[!0-9]*) mdb_die "--size-mb wants a positive integer" ;; esac
if [ "$SIZE_MB" -lt 1 ] || [ "$SIZE_MB" -gt 1024 ]; then mdb_die "--size-mb must be 1..1024"; fi
[ -n "$OUT" ] || OUT=$HERE/work/mariadb-${SIZE_MB}mb

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

T0=$SECONDS
mdb_log "init + start (work dir $WORK)"
mdb_init "$WORK"
mdb_start "$WORK" "${OPTS[@]}"

mdb_log "streaming the workload until mariadb-bin.000001 >= $SIZE_MB MiB"
MDB_BINLOG="$WORK/data/mariadb-bin.000001" MDB_TARGET=$((SIZE_MB * 1024 * 1024)) MDB_SEED=$SEED \
python3 - <<'PY' | mdb_sql "$WORK" --batch > "$WORK/workload.out"
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
    except OSError:
        size = 0
    if size >= target or os.path.exists(binlog[:-6] + "000002"):
        break
    if n % 50000 == 0:
        print("  %d transactions generated, binlog %.1f MiB" % (n, size / 1048576.0), file=sys.stderr)
PY
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
mdb_log "shutdown"
mdb_stop "$WORK"
mv "$WORK/data/mariadb-bin.000001" "$OUT/mariadb-bin.000001"
echo "./mariadb-bin.000001" > "$OUT/mariadb-bin.index"
{
    echo "file	mariadb-bin.000001"
    echo "bytes	$(stat -c %s "$OUT/mariadb-bin.000001")"
    echo "server	$(mdb_version)"
    echo "options	${OPTS[*]}"
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
