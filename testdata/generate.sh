#!/usr/bin/env bash
# Regenerates the real-binlog fixtures under testdata/mariadb-10.11/ from the
# workloads kept next to them (<set>/workload.sql), each on its own private,
# throw-away MariaDB server (never the system service).
#
#   testdata/generate.sh            # all sets
#   testdata/generate.sh basic      # only the named set(s)
#
# Needs root only if MariaDB is not installed yet (it is then installed from
# Debian with the service start disabled). Takes a few seconds per set.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testdata/lib-mariadb.sh
. "$HERE/lib-mariadb.sh"

OUT=$HERE/mariadb-10.11
ALL_SETS=(basic nochecksum compressed encrypted schema metadata)
SETS=("$@")
[ ${#SETS[@]} -gt 0 ] || SETS=("${ALL_SETS[@]}")

export LC_ALL=C.UTF-8 TZ=UTC

mdb_ensure_installed

WORK=$(mktemp -d "${TMPDIR:-/tmp}/binlogctl-fixtures.XXXXXX")
on_exit() {
    local rc=$?
    mdb_cleanup
    if [ "$rc" = 0 ] || [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else mdb_log "work dir kept: $WORK"; fi
    return "$rc"
}
trap on_exit EXIT

# Options shared by every set (after the local --socket/--pid-file/--datadir/
# --tmpdir/--log-error/--user=root that lib-mariadb.sh adds).
COMMON_OPTS=(
    --log-bin=mariadb-bin
    --binlog-format=ROW
    --binlog-row-image=FULL
    --binlog-row-metadata=FULL
    --binlog-annotate-row-events=ON
    --character-set-server=utf8mb4
    --collation-server=utf8mb4_general_ci
    --default-time-zone=+00:00
    --innodb-flush-log-at-trx-commit=1
    --sync-binlog=0
    --innodb-buffer-pool-size=64M
    --max-allowed-packet=64M
)

# A fixed, public test key (AES-256) for the encrypted set: NOT a secret.
KEYFILE=$OUT/encrypted/keys.txt
write_keyfile() {
    mkdir -p "$(dirname "$KEYFILE")"
    {
        echo "# file_key_management key file for the 'encrypted' fixture set (public test key)"
        printf '1;%s\n' "$(printf 'binlogctl fixture key 1' | sha256sum | cut -c1-64)"
    } > "$KEYFILE"
}

set_opts() {
    case $1 in
    basic)      echo --server-id=1011 --gtid-domain-id=1 --binlog-checksum=CRC32 --max-binlog-size=16384 ;;
    nochecksum) echo --server-id=1012 --gtid-domain-id=2 --binlog-checksum=NONE --max-binlog-size=8192 ;;
    compressed) echo --server-id=1013 --gtid-domain-id=3 --binlog-checksum=CRC32 --max-binlog-size=16384 \
                     --log-bin-compress=ON --log-bin-compress-min-len=10 ;;
    encrypted)  echo --server-id=1014 --gtid-domain-id=4 --binlog-checksum=CRC32 --max-binlog-size=16384 \
                     --plugin-load-add=file_key_management --file-key-management-filename="$KEYFILE" \
                     --file-key-management-encryption-algorithm=AES_CBC --encrypt-binlog=ON ;;
    schema)     echo --server-id=1015 --gtid-domain-id=5 --binlog-checksum=CRC32 --max-binlog-size=16384 \
                     --binlog-row-metadata=NO_LOG ;;
    metadata)   echo --server-id=1016 --gtid-domain-id=6 --binlog-checksum=CRC32 --max-binlog-size=16384 ;;
    *) mdb_die "unknown set: $1" ;;
    esac
}

# Files listed in the server's binlog index, in order (basenames).
index_files() { sed 's|.*/||' "$1/data/mariadb-bin.index"; }

run_set() {
    local set=$1 t0=$SECONDS
    local w=$WORK/$set d=$OUT/$set
    local -a opts
    read -r -a opts <<<"$(set_opts "$set")"
    [ -f "$d/workload.sql" ] || mdb_die "missing $d/workload.sql"
    rm -rf "$d/binlogs" "$d/expected"
    mkdir -p "$d/binlogs" "$d/expected/show-binlog-events"
    local exp=$d/expected

    mdb_log "[$set] start"
    # a copy of the datadir made once by mariadb-install-db (saves seconds per set)
    mkdir -p "$w"
    cp -a "$WORK/template/data" "$w/data"
    mdb_start "$w" "${COMMON_OPTS[@]}" "${opts[@]}"

    mdb_log "[$set] workload"
    # statement by statement, waiting for Binlog_checkpoint after each rotation
    # (see lib-mariadb.sh); a last FLUSH BINARY LOGS closes every file but the
    # (empty) last one.
    mdb_run_workload "$w" "$d/workload.sql" "$w/workload.out" "FLUSH BINARY LOGS" \
        || { tail -n 20 "$w/workload.out" >&2; mdb_die "[$set] workload failed"; }
    if grep -q -E '^(Warning|Error)' "$w/workload.out"; then
        mdb_log "[$set] workload warnings:"; grep -E '^(Warning|Error)' "$w/workload.out" >&2
    fi

    mdb_log "[$set] ground truth"
    {
        mdb_sql "$w" --batch --skip-column-names -e \
            "SELECT CONCAT('gtid_binlog_pos=', @@gtid_binlog_pos), CONCAT('gtid_binlog_state=', @@gtid_binlog_state), CONCAT('gtid_current_pos=', @@gtid_current_pos)" \
            | tr '\t' '\n'
        echo "# per file: <file> TAB BINLOG_GTID_POS(file, 4), the GTID position at the start of that file (its Gtid_list)"
        local f
        for f in $(index_files "$w"); do
            printf '%s\t%s\n' "$f" "$(mdb_sql "$w" --batch --skip-column-names -e "SELECT BINLOG_GTID_POS('$f', 4)")"
        done
    } > "$exp/gtids.txt"
    mdb_dump_tables "$w" "$exp"
    if [ "$set" = schema ]; then  # the definitions a --schema file gives (mysqldump --no-data)
        mariadb-dump --no-defaults --socket="$w/sock" -uroot --no-data --skip-dump-date --databases sch \
            > "$exp/schema.sql"
    fi

    mdb_log "[$set] shutdown + copy"
    mdb_stop "$w"
    local -a files
    mapfile -t files < <(index_files "$w")
    for f in "${files[@]}"; do
        cp "$w/data/$f" "$d/binlogs/$f"
        echo "./$f"
    done > "$d/binlogs/mariadb-bin.index"

    # Restart on the same datadir so that SHOW BINLOG EVENTS sees the files
    # exactly as copied (closed, last one with its Stop event). The restart
    # opens one more binlog file, which is not part of the fixture.
    mdb_log "[$set] restart for SHOW BINLOG EVENTS"
    mdb_start "$w" "${COMMON_OPTS[@]}" "${opts[@]}"
    for f in "${files[@]}"; do
        mdb_sql "$w" --batch -e "SHOW BINLOG EVENTS IN '$f'" > "$exp/show-binlog-events/$f.tsv"
    done
    mdb_sql "$w" --batch -e "SHOW BINARY LOGS" |
        awk -F'\t' -v keep="$(printf '%s\n' Log_name "${files[@]}")" \
            'BEGIN { n = split(keep, k, "\n"); for (i = 1; i <= n; i++) want[k[i]] = 1 } want[$1]' \
        > "$exp/binary-logs.tsv"
    mdb_stop "$w"
    for f in "${files[@]}"; do
        cmp -s "$w/data/$f" "$d/binlogs/$f" || mdb_die "[$set] $f changed during the restart"
    done

    if [ "$set" != encrypted ]; then
        mdb_log "[$set] mariadb-binlog"
        mkdir -p "$exp/mariadb-binlog"
        : > "$exp/mariadb-binlog/exit-codes.txt"
        for f in "${files[@]}"; do
            local rc=0
            (cd "$d/binlogs" && mariadb-binlog --no-defaults --base64-output=decode-rows -vv "$f") \
                > "$exp/mariadb-binlog/$f.txt" 2>&1 || rc=$?
            printf '%s\t%s\n' "$f" "$rc" >> "$exp/mariadb-binlog/exit-codes.txt"
        done
    fi
    rm -rf "$w"
    mdb_log "[$set] done in $((SECONDS - t0)) s"
}

# --------------------------------------------------------------------- README
file_table() {
    local d=$1 f total=0 sz
    echo "| file | bytes |"
    echo "|---|---:|"
    for f in "$d"/binlogs/mariadb-bin.index "$d"/binlogs/mariadb-bin.[0-9]*; do
        sz=$(stat -c %s "$f")
        echo "| $(basename "$f") | $sz |"
        case $f in *.index) ;; *) total=$((total + sz)) ;; esac
    done
    echo
    echo "Total binlog bytes: $total."
}

event_counts() {
    local d=$1
    echo '```'
    tail -q -n +2 "$d"/expected/show-binlog-events/*.tsv | cut -f3 | sort | uniq -c | sort -s -k1,1nr
    echo '```'
}

server_cmd() {
    local set=$1
    local -a opts
    read -r -a opts <<<"$(set_opts "$set")"
    local s="mariadbd --no-defaults --skip-networking --socket=<tmp>/sock --pid-file=<tmp>/mariadbd.pid --datadir=<tmp>/data --tmpdir=<tmp> --log-error=<tmp>/error.log --user=root ${COMMON_OPTS[*]} ${opts[*]}"
    echo "${s//$OUT\//testdata/mariadb-10.11/}"
}

write_readme() {
    local version
    version=$(mdb_version)
    {
        cat <<EOF
# Real MariaDB binlog fixtures (\`mariadb-10.11\`)

Generated by \`testdata/generate.sh\` (helpers in \`testdata/lib-mariadb.sh\`) with real binary logs written
by a private \`mariadbd\` - server version **${version}-log** (Debian 12 package \`mariadb-server\`).
Each set has its own throw-away server (a fresh copy of a temporary datadir made by
\`mariadb-install-db --no-defaults --auth-root-authentication-method=normal --skip-test-db\`, unix socket only,
\`--user=root\`),
stopped with SIGTERM (\`kill \$(cat pidfile)\`) at the end; the system service is never touched.

Regenerate with \`testdata/generate.sh\` (all sets; or \`testdata/generate.sh basic ...\` for some of them).
If \`mariadbd\` is missing it runs \`apt-get update && apt-get install -y mariadb-server mariadb-client\` with a
\`/usr/sbin/policy-rc.d\` that exits 101 (so the service does not start). \`file_key_management\` is built into
\`mariadb-server\` on Debian 12, no extra plugin package is needed. It takes a few seconds per set.
\`bench/make-large-binlog.sh\` uses the same helpers to write one large binlog (default 1 GiB) into the
gitignored \`bench/work/\`.

## Layout (per set)

- \`workload.sql\`: the SQL fed to \`mariadb --batch\` (the script then issues one more \`FLUSH BINARY LOGS\`,
  so every file but the last is closed by a Rotate event and the last one holds only header events).
- \`binlogs/\`: the binlog files, copied after a clean shutdown (so the last file ends with a Stop event and no
  file has the in-use flag), and \`mariadb-bin.index\` rewritten with relative \`./mariadb-bin.NNNNNN\` entries.
- \`expected/show-binlog-events/<file>.tsv\`: \`SHOW BINLOG EVENTS IN '<file>'\` for every file, printed by
  \`mariadb --batch\` (tab-separated, header line; inside values a newline, tab, NUL and backslash are written as
  \`\\n\`, \`\\t\`, \`\\0\` and \`\\\\\`). The listings are taken from a restart of the same server on the same datadir
  after the shutdown, so they describe the files exactly as copied, including the Stop event of the last one
  (the script checks that the restart did not change the copied files; the file the restart opens is not kept).
- \`expected/binary-logs.tsv\`: \`SHOW BINARY LOGS\` for those files (same restart).
- \`expected/mariadb-binlog/<file>.txt\`: \`mariadb-binlog --no-defaults --base64-output=decode-rows -vv <file>\`
  (stdout+stderr, run in \`binlogs/\`) for every file; \`exit-codes.txt\` has its exit status per file.
  Not produced for \`encrypted\` (mariadb-binlog cannot read encrypted files).
- \`expected/gtids.txt\`: \`@@gtid_binlog_pos\`, \`@@gtid_binlog_state\`, \`@@gtid_current_pos\` at the end of the
  workload, then \`BINLOG_GTID_POS('<file>', 4)\` per file.
- \`expected/<db>.<table>.jsonl\` and \`expected/tables.txt\`: final contents of every user base table (taken before
  the shutdown), one JSON object per row, keys in column (ordinal) order, compact separators, UTF-8 (not \\u-escaped),
  rows ordered by \`ORDER BY\` every column in ordinal order (server collation, \`max_sort_length=65536\`).
  Value rendering (built from \`information_schema.COLUMNS\`):
  - NULL -> \`null\`; TINYINT..BIGINT (signed/unsigned), YEAR, BIT -> JSON integers (BIT as its unsigned value; YEAR 0 -> 0).
  - DECIMAL -> string exactly as the server prints it, full scale (\`"-0.01"\`, \`"1234.50"\`).
  - DOUBLE -> JSON number, shortest repr that round-trips the IEEE-754 double (Python \`repr\`).
  - FLOAT -> JSON number, shortest decimal that round-trips the float32 value.
  - DATE \`"YYYY-MM-DD"\`, DATETIME/TIMESTAMP \`"YYYY-MM-DD HH:MM:SS[.f]"\` with exactly the column's fsp digits
    (TIMESTAMP in UTC), TIME \`"[-]HH:MM:SS[.f]"\`; zero dates as \`"0000-00-00"\` / \`"0000-00-00 00:00:00"\`.
  - CHAR/VARCHAR/TEXT/ENUM/SET/JSON -> string (converted to UTF-8; CHAR trailing spaces stripped; SET as a comma
    list in definition order; JSON as the stored text).
  - BINARY/VARBINARY/BLOB and geometry -> \`"x"\` + lowercase hex of the stored bytes (BINARY(n) keeps its zero
    padding; geometry in MariaDB's internal form: 4-byte little-endian SRID + WKB).
  - UUID, INET4, INET6 -> canonical text form as SELECT prints it.

## Reproducibility

Every statement runs with a fixed \`SET timestamp\` and \`time_zone='+00:00'\`. The workload is fed statement by
statement through one \`mariadb --batch\` session, and after every statement that made the server switch to a new
binlog file the script waits until that file has received its Binlog_checkpoint event (written by a background
thread once the previous file's transactions are durable in InnoDB; it nudges InnoDB with
\`FLUSH LOCAL ENGINE LOGS\`, which is not binlogged). Without that wait the checkpoint events land at
run-dependent positions. So on the same server version the file sizes, event positions, GTIDs, row images,
\`show-binlog-events/\`, \`binary-logs.tsv\`, \`gtids.txt\` and the table contents are identical from run to run.
What still differs between runs (and so shows up in the binlog bytes and in \`mariadb-binlog/\`):
- \`exec_time\` of Query events (wall clock minus the fixed session timestamp) and hence the CRC32 of those events;
- the timestamps (and CRC32) of events not covered by the session timestamp: Format_desc/Gtid_list/Binlog_checkpoint
  of the first file (server start-up), Binlog_checkpoint events, the events of the script's final
  \`FLUSH BINARY LOGS\` and the Stop event;
- for \`encrypted\`, the nonce in each Start_encryption event and so every encrypted byte after it.
A different MariaDB version may change sizes and positions (e.g. the server version string in Format_desc).

## Common server options

\`\`\`
${COMMON_OPTS[*]}
\`\`\`

Session defaults of 10.11 otherwise (sql_mode STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,
NO_ENGINE_SUBSTITUTION; zero dates allowed; REPEATABLE READ). \`binlog_annotate_row_events=ON\`, so every ROW
statement is preceded by an Annotate_rows event. MariaDB 10.11 writes version-1 row events
(Write_rows_v1/Update_rows_v1/Delete_rows_v1, types 23-25) and, compressed, types 166-168.
EOF
        local set
        for set in "${ALL_SETS[@]}"; do
            [ -d "$OUT/$set/binlogs" ] || continue
            echo
            echo "## Set \`$set\`"
            echo
            case $set in
            basic) cat <<'EOF'
CRC32 checksums, `max_binlog_size=16384` plus FLUSH BINARY LOGS between the workload's parts.
Schemas `shop` (utf8mb4), `legacy` (latin1) and `typelab` (utf8mb4). The workload covers:
- DDL: CREATE DATABASE/TABLE, CREATE TABLE LIKE, ALTER (ADD/MODIFY/DROP COLUMN, ADD INDEX), RENAME TABLE,
  TRUNCATE, DROP TABLE, DROP TABLE IF EXISTS of a missing table, CREATE TABLE ... SELECT.
- DML: multi-row INSERT, INSERT ... SELECT of 400 rows from `seq_1_to_400` (several Write_rows events in one
  statement; a transaction larger than max_binlog_size, so that file overshoots), UPDATE, DELETE, REPLACE (insert
  and replace), INSERT ... ON DUPLICATE KEY UPDATE, DELETE ... LIMIT on a table without primary key.
- 36 small order transactions (single and multi-statement, BEGIN/START TRANSACTION), autocommit statements.
- ROLLBACK transactions (values 'ROLLED BACK n': must appear nowhere) and SAVEPOINT / ROLLBACK TO / RELEASE
  transactions (the rolled-back part is not in the binlog).
- XA: PREPARE + COMMIT, PREPARE + ROLLBACK (its row events ARE in the binlog, marked 'XA ROLLED BACK', and must
  not be applied), COMMIT ... ONE PHASE with an XID of gtrid/bqual/formatID.
- A `binlog_format=STATEMENT` session: Query events with Intvar (INSERT_ID, LAST_INSERT_ID), Rand (RAND() with
  fixed rand_seed1/rand_seed2, so the value is reproducible) and User_var events (string, int, real, decimal,
  NULL, unsigned int), also inside a BEGIN/COMMIT.
- MyISAM table (latin1) alone and inside an InnoDB transaction (logged as its own transaction).
- GTID: a second domain (11), a second server_id (2022) in it, gtid_seq_no jumps (domain 11 -> 100,
  home domain 1 -> 1000).
- `typelab.all_types`: TINYINT..BIGINT signed/unsigned, DECIMAL (incl. unsigned), FLOAT, DOUBLE, BIT(1/12/64),
  YEAR, DATE, TIME(0/3/6) incl. negative, DATETIME(0/2/6), TIMESTAMP(0/3/6), CHAR/VARCHAR in utf8mb4 and latin1,
  BINARY/VARBINARY/BLOB/TEXT/MEDIUMTEXT, ENUM, SET, JSON, GEOMETRY and POINT (with SRIDs), UUID, INET4, INET6:
  min/max/zero/NULL/typical rows, then UPDATEs (to/from NULL) and DELETEs.
- A final ALTER TABLE ... DROP COLUMN followed by row events for the changed table.
EOF
            ;;
            nochecksum) cat <<'EOF'
`--binlog-checksum=NONE` (events carry no CRC32 trailer; Format_desc says checksum alg 0), `max_binlog_size=8192`.
A short workload: DDL, multi-row INSERT, INSERT ... SELECT from sequences, UPDATE, DELETE, one multi-statement
transaction, ALTER TABLE ADD COLUMN followed by row events.
EOF
            ;;
            compressed) cat <<'EOF'
`--log-bin-compress=ON --log-bin-compress-min-len=10`: Query events and row events longer than 10 bytes are
written compressed (Query_compressed = 165, Write/Update/Delete_rows_compressed_v1 = 166..168; zlib, with a
one-byte header giving the length of the uncompressed-size field). A 120-row INSERT ... SELECT of compressible
text, UPDATE/DELETE of many rows, BLOB values up to 3000 bytes, a multi-statement transaction, ALTER TABLE.
EOF
            ;;
            encrypted) cat <<'EOF'
Binlog encryption: `--plugin-load-add=file_key_management --file-key-management-filename=... --encrypt-binlog=ON`
with the public test key in `encrypted/keys.txt` (key id 1, AES-256, `AES_CBC` as the plugin's algorithm).
Each file has a Start_encryption event (type 164) right after Format_desc; everything after it is encrypted on
disk. A tiny workload (a table, a few inserts/updates/deletes, a FLUSH BINARY LOGS, an INSERT ... SELECT).
Only `binlogs/`, `show-binlog-events/`, `binary-logs.tsv`, `gtids.txt` and the table contents are given
(no mariadb-binlog output: it cannot read encrypted binlogs).
EOF
            ;;
            schema) cat <<'EOF'
`--binlog-row-metadata=NO_LOG`: the TABLE_MAPs carry no column names, signedness, charsets or ENUM/SET
members, so everything convert says about columns comes from schema history (the DDL in the binlog, or
`expected/schema.sql`, the `mariadb-dump --no-data` of the final schema, given with `--schema`). Tables:
MariaDB's pre-10.0 high-precision temporals (created under `SET GLOBAL mysql56_temporal_format=OFF`: TIME /
DATETIME / TIMESTAMP with fsp 1..6 in the plain type codes without metadata), unsigned integers of every width,
FLOAT(7,3)/DOUBLE(12,4), latin1 and utf8mb4 text, ENUM/SET, BINARY/VARBINARY/BLOB, UUID/INET4/INET6, and a table
changed by ALTER TABLE (ADD ... AFTER/FIRST, DROP, CHANGE COLUMN) and RENAME TABLE between its row changes. The
last data file (after an explicit FLUSH BINARY LOGS) holds only DML on the final definitions.
EOF
            ;;
            metadata) cat <<'EOF'
`--binlog-row-metadata=FULL` on tables that mix YEAR, GEOMETRY, JSON, ENUM/SET, text and signed/unsigned
numbers in several orders: the optional-metadata fields count different subsets of the columns (SIGNEDNESS
has a bit for YEAR; MariaDB's DEFAULT_CHARSET / COLUMN_CHARSET count GEOMETRY), so a reader that miscounts
gives the columns after a YEAR or a GEOMETRY their neighbour's sign or charset. Both charset forms occur
(one collation per column, and a default with exceptions naming a GEOMETRY column after the JSON ones).
EOF
            ;;
            esac
            echo
            echo "Server command line:"
            echo
            echo '```'
            server_cmd "$set"
            echo '```'
            echo
            file_table "$OUT/$set"
            echo
            echo "Event types (from SHOW BINLOG EVENTS, all files):"
            echo
            event_counts "$OUT/$set"
        done
    } > "$OUT/README.md"
}

T0=$SECONDS
mkdir -p "$OUT"
mdb_log "mariadb-install-db"
mdb_init "$WORK/template"
for set in "${SETS[@]}"; do
    [ "$set" = encrypted ] && write_keyfile
    run_set "$set"
done
write_readme
mdb_log "all done in $((SECONDS - T0)) s; output in $OUT ($(du -sh "$OUT" | cut -f1))"
