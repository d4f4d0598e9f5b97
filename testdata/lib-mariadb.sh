# shellcheck shell=bash
# Common helpers for running a PRIVATE, throw-away MariaDB server (never the
# system service) to produce real binary logs.
#
# Sourced by testdata/generate.sh and bench/make-large-binlog.sh.
#
#   mdb_ensure_installed            install mariadb-server/-client from Debian if needed
#   mdb_init DIR                    create a fresh datadir under DIR (mariadb-install-db)
#   mdb_start DIR OPTS...           start mariadbd on DIR/data with socket DIR/sock
#   mdb_sql DIR [client args...]    run the mariadb client against that server
#   mdb_stop DIR                    kill $(cat pidfile) and wait for the server to exit
#   mdb_cleanup                     stop every server started here (for traps)
#
# The servers use --skip-networking (unix socket only) and --user=root, and
# keep everything (datadir, socket, pid file, error log) inside DIR. Opt-in:
# MDB_NETWORK="--port=N --bind-address=127.0.0.1" replaces --skip-networking
# (a server that replication clients reach over TCP).

MDB_STARTED_DIRS=()

mdb_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mdb_die() { mdb_log "ERROR: $*"; exit 1; }

mdb_ensure_installed() {
    if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
        [ "$(id -u)" = 0 ] || mdb_die "mariadbd is missing and we are not root: apt-get install mariadb-server mariadb-client"
        mdb_log "installing MariaDB from Debian (service start disabled by policy-rc.d)"
        local had_policy=0
        [ -e /usr/sbin/policy-rc.d ] && had_policy=1
        if [ "$had_policy" = 0 ]; then
            printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
            chmod 755 /usr/sbin/policy-rc.d
        fi
        local rc=0
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server mariadb-client; } >&2 || rc=$?
        [ "$had_policy" = 0 ] && rm -f /usr/sbin/policy-rc.d
        [ "$rc" = 0 ] || mdb_die "apt-get install mariadb-server mariadb-client failed ($rc)"
    fi
    export PATH="$PATH:/usr/sbin"
    # file_key_management (binlog encryption) ships inside mariadb-server on
    # Debian 12; no extra plugin package is needed.
    command -v python3 >/dev/null 2>&1 || mdb_die "python3 is required"
}

mdb_version() { mariadbd --no-defaults --version | sed -n 's/.*Ver \([^ ]*\).*/\1/p'; }

# mdb_init DIR: fresh datadir DIR/data.
mdb_init() {
    local dir=$1
    mkdir -p "$dir"
    rm -rf "$dir/data"
    mariadb-install-db --no-defaults --auth-root-authentication-method=normal \
        --user=root --datadir="$dir/data" --skip-test-db \
        >"$dir/install-db.log" 2>&1 || { cat "$dir/install-db.log" >&2; mdb_die "mariadb-install-db failed"; }
}

# mdb_start DIR OPTS...: start mariadbd on DIR/data. OPTS are appended to the
# fixed local options (socket, pid file, datadir, error log, user).
mdb_start() {
    local dir=$1; shift
    local net=(--skip-networking)
    [ -n "${MDB_NETWORK:-}" ] && read -r -a net <<< "$MDB_NETWORK"
    rm -f "$dir/sock" "$dir/mariadbd.pid"
    mariadbd --no-defaults "${net[@]}" --socket="$dir/sock" \
        --pid-file="$dir/mariadbd.pid" --datadir="$dir/data" --tmpdir="$dir" \
        --log-error="$dir/error.log" --user=root "$@" \
        >>"$dir/mariadbd.out" 2>&1 &
    local launcher=$!
    MDB_STARTED_DIRS+=("$dir")
    local _
    for _ in $(seq 1 600); do
        if [ -S "$dir/sock" ] && [ -s "$dir/mariadbd.pid" ] &&
           mariadb-admin --no-defaults --socket="$dir/sock" -uroot ping >/dev/null 2>&1; then
            return 0
        fi
        if ! kill -0 "$launcher" 2>/dev/null; then
            tail -n 30 "$dir/error.log" >&2 || true
            mdb_die "mariadbd exited during start-up (see $dir/error.log)"
        fi
        sleep 0.1
    done
    tail -n 30 "$dir/error.log" >&2 || true
    mdb_die "mariadbd did not come up within 60 s"
}

mdb_sql() {
    local dir=$1; shift
    mariadb --no-defaults --socket="$dir/sock" -uroot --default-character-set=utf8mb4 "$@"
}

# mdb_stop DIR: SIGTERM the server via its pid file and wait for it to exit.
mdb_stop() {
    local dir=$1 pid
    [ -s "$dir/mariadbd.pid" ] || return 0
    pid=$(cat "$dir/mariadbd.pid")
    kill "$pid" 2>/dev/null || true
    local _
    for _ in $(seq 1 1200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        mdb_log "server $pid did not stop in 120 s, killing it"
        kill -9 "$pid" 2>/dev/null || true
    fi
    # reap the background job if it is ours
    wait "$pid" 2>/dev/null || true
    rm -f "$dir/mariadbd.pid"
}

mdb_cleanup() {
    local d
    for d in "${MDB_STARTED_DIRS[@]}"; do
        [ -s "$d/mariadbd.pid" ] && mdb_stop "$d"
    done
    return 0
}

# mdb_dump_tables DIR OUTDIR: final contents of every user base table as
# OUTDIR/<db>.<table>.jsonl (one JSON object per row, keys in column order,
# rows ordered by every column) plus OUTDIR/tables.txt. Value rendering:
#   NULL -> null; integer types, YEAR, BIT -> integers; DECIMAL -> string as
#   the server prints it; DOUBLE -> shortest round-trip double (Python repr);
#   FLOAT -> shortest decimal that round-trips the float32; temporal -> string
#   (TIMESTAMP in the session time zone, +00:00); text/ENUM/SET/JSON -> UTF-8
#   string; binary/BLOB/geometry -> "x" + lowercase hex of the stored bytes;
#   UUID/INET4/INET6 -> canonical text.
mdb_dump_tables() {
    local dir=$1 out=$2
    mkdir -p "$out"
    MDB_SOCK="$dir/sock" MDB_OUT="$out" python3 - <<'PY'
import json, os, struct, subprocess, sys

sock, out = os.environ["MDB_SOCK"], os.environ["MDB_OUT"]

def q(sql):
    p = subprocess.run(
        ["mariadb", "--no-defaults", "--socket=" + sock, "-uroot",
         "--default-character-set=utf8mb4", "--batch", "--skip-column-names",
         "--raw", "-e", sql],
        check=True, stdout=subprocess.PIPE)
    rows = p.stdout.decode("ascii").split("\n")
    return [r.split("\t") for r in rows if r != ""]

def ident(s):
    return "`" + s.replace("`", "``") + "`"

INT = {"tinyint", "smallint", "mediumint", "int", "bigint"}
TEXT = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext",
        "enum", "set", "json"}
BIN = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob",
       "geometry", "point", "linestring", "polygon", "multipoint",
       "multilinestring", "multipolygon", "geometrycollection"}
TEMPORAL = {"date", "datetime", "timestamp", "time"}
NATIVE = {"uuid", "inet4", "inet6"}

def expr(col, dt):
    c = ident(col)
    if dt in INT or dt == "decimal" or dt in TEMPORAL or dt in NATIVE or dt == "double":
        e = "CAST(%s AS CHAR)" % c
    elif dt in ("year", "bit"):
        e = "CAST(%s + 0 AS CHAR)" % c
    elif dt == "float":
        e = "CAST(CAST(%s AS DOUBLE) AS CHAR)" % c
    elif dt in TEXT:
        e = "CONVERT(%s USING utf8mb4)" % c
    elif dt in BIN:
        return "IFNULL(CONCAT('v', HEX(%s)), 'n')" % c
    else:
        sys.exit("mdb_dump_tables: unsupported column type %r (%s)" % (dt, col))
    return "IFNULL(CONCAT('v', HEX(%s)), 'n')" % e

def f32_shortest(x):
    f = struct.unpack("<f", struct.pack("<f", x))[0]
    for p in range(1, 10):
        s = "%.*g" % (p, f)
        try:
            if struct.unpack("<f", struct.pack("<f", float(s)))[0] == f:
                return float(s)
        except OverflowError:  # rounded past FLT_MAX
            pass
    return f

def conv(dt, raw):
    if raw == "n":
        return None
    t = bytes.fromhex(raw[1:])
    if dt in BIN:
        return "x" + t.hex()
    s = t.decode("utf-8")
    if dt in INT or dt in ("year", "bit"):
        return int(s)
    if dt == "double":
        return float(s)
    if dt == "float":
        return f32_shortest(float(s))
    return s

tables = q("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
           "WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN "
           "('mysql', 'information_schema', 'performance_schema', 'sys') "
           "ORDER BY TABLE_SCHEMA, TABLE_NAME")
summary = []
for db, tbl in tables:
    cols = q("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
             "WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' ORDER BY ORDINAL_POSITION"
             % (db.replace("'", "''"), tbl.replace("'", "''")))
    sql = ("SET SESSION time_zone = '+00:00', max_sort_length = 65536, sort_buffer_size = 268435456; SELECT %s FROM %s.%s ORDER BY %s"
           % (", ".join(expr(c, dt) for c, dt in cols), ident(db), ident(tbl),
              ", ".join(ident(c) for c, _ in cols)))
    rows = q(sql)
    with open(os.path.join(out, "%s.%s.jsonl" % (db, tbl)), "w", encoding="utf-8") as fh:
        for r in rows:
            obj = {c: conv(dt, v) for (c, dt), v in zip(cols, r)}
            fh.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    summary.append("%s.%s\t%d\n" % (db, tbl, len(rows)))
with open(os.path.join(out, "tables.txt"), "w") as fh:
    fh.write("# <db>.<table> TAB rows (user base tables at the end of the workload)\n")
    fh.writelines(summary)
PY
}

# mdb_run_workload DIR SQLFILE LOG: feed SQLFILE to one `mariadb --batch`
# session, statement by statement (the same text the client would send when
# reading the file), and after every statement that moved the server to a new
# binlog file wait until that file holds its own Binlog_checkpoint event
# (nudging InnoDB with FLUSH LOCAL ENGINE LOGS from a second connection).
# Binlog_checkpoint events are written by a background thread once the
# previous file's transactions are durable; without this wait they land at
# run-dependent positions and positions/sizes would differ between runs.
# The client's output (warnings included) goes to LOG; a failing statement
# aborts. Extra statements can follow SQLFILE as more arguments.
mdb_run_workload() {
    local dir=$1 sql=$2 log=$3; shift 3
    MDB_SOCK="$dir/sock" MDB_SQL="$sql" MDB_LOG="$log" python3 - "$@" <<'PY'
import os, subprocess, sys, time

sock, sql_path, log_path = os.environ["MDB_SOCK"], os.environ["MDB_SQL"], os.environ["MDB_LOG"]

def split_sql(text):
    """Split on ';' outside quotes/comments; drop comment-only chunks."""
    out, cur, i, n = [], [], 0, len(text)
    has_code = False
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            cur.append(text[i:j + 1]); has_code = True; i = j + 1
        elif text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n") or c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j  # drop the comment, keep the newline
        elif text.startswith("/*", i) and not text.startswith("/*!", i) and not text.startswith("/*M!", i):
            j = text.find("*/", i + 2)
            if j < 0:
                sys.exit("unterminated comment")
            cur.append(" "); i = j + 2
        elif c == ";":
            if has_code:
                out.append("".join(cur).strip())
            cur, has_code = [], False; i += 1
        else:
            if not c.isspace():
                has_code = True
            cur.append(c); i += 1
    if has_code:
        out.append("".join(cur).strip())
    return out

class Client:
    def __init__(self, extra, log):
        self.p = subprocess.Popen(
            ["mariadb", "--no-defaults", "--socket=" + sock, "-uroot",
             "--default-character-set=utf8mb4", "--batch", "--unbuffered"] + extra,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.n, self.log = 0, log

    def run(self, stmt):
        self.n += 1
        mark = "@@binlogctl-sync-%d@@" % self.n
        self.p.stdin.write((stmt + ";\n\\! echo '" + mark + "'\n").encode("utf-8"))
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                self.log.write("".join(lines))
                self.log.write("-- client exited (%s) on statement:\n%s\n" % (self.p.wait(), stmt))
                self.log.flush()
                sys.exit("statement failed:\n%s\n%s" % (stmt[:2000], "".join(lines[-20:])))
            line = line.decode("utf-8", "replace")
            if line.rstrip("\n") == mark:
                break
            lines.append(line)
        if self.log:
            self.log.write("".join(lines))
        return [l.rstrip("\n").split("\t") for l in lines]

    def close(self):
        self.p.stdin.close()
        self.p.wait()

with open(sql_path, encoding="utf-8") as fh:
    stmts = split_sql(fh.read()) + sys.argv[1:]
log = open(log_path, "w", encoding="utf-8")
work = Client(["--show-warnings"], log)
work.run("DO 0")  # connected: the workload session gets the lower connection id, every run
check = Client(["--skip-column-names"], None)

def current_file():
    return check.run("SHOW MASTER STATUS")[0][0]

def has_own_checkpoint(f):
    for row in check.run("SHOW BINLOG EVENTS IN '%s' LIMIT 12" % f):
        if len(row) >= 6 and row[2] == "Binlog_checkpoint" and row[5] == f:
            return True
    return False

known = current_file()
rotations, waited = 0, 0.0
for s in stmts:
    work.run(s)
    f = current_file()
    if f == known:
        continue
    rotations += 1
    t0 = time.time()
    deadline = t0 + 10
    while not has_own_checkpoint(f):
        if time.time() > deadline:
            print("warning: no Binlog_checkpoint in %s after 10 s" % f, file=sys.stderr)
            break
        check.run("FLUSH LOCAL ENGINE LOGS")
        time.sleep(0.005)
    waited += time.time() - t0
    known = f
work.close(); check.close(); log.close()
print("%d statements, %d binlog rotations, %.2f s waiting for Binlog_checkpoint"
      % (len(stmts), rotations, waited), file=sys.stderr)
PY
}
