#!/usr/bin/env bash
# CLI test of `binlogctl verify` over the public corpus (../shared/corpus/public), with the
# expectations MANIFEST.md leads to: exit status and the JSON summary's check counts per file.
#
# Usage: verify_corpus.sh BINLOGCTL SHARED_DIR
#   BINLOGCTL   path to the binlogctl executable
#   SHARED_DIR  the shared directory (holds corpus/public); exit 77 (skipped) when it is absent
set -u
bin=${1:?usage: verify_corpus.sh BINLOGCTL SHARED_DIR}
shared=${2:?usage: verify_corpus.sh BINLOGCTL SHARED_DIR}
pub="$shared/corpus/public"
[ -f "$pub/MANIFEST.md" ] || { echo "skip: no $pub/MANIFEST.md"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 needed to read the JSON summary"; exit 77; }

fail=0
all_json=$(mktemp)
trap 'rm -f "$all_json"' EXIT
# expected "checks" of the summary per file (sorted code=count, comma-separated); others: none
declare -A expect=(
  [alibaba__canal/tsdb/mysql-bin.000001]="bad_magic=1"
  [blackbeam__rust_mysql_common/binlog_truncated_event.000001]="truncated_event=1"
  [blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001]="truncated_event=1"
  [blackbeam__rust_mysql_common/corrupt-relay-bin.000624]="bad_event_size=1"
  [blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001]="transaction_structure=2"
  [blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001]="transaction_structure=1"
  [Yelp__ybinlogp/mysql-bin.delayed-event]="timestamp_regression=1"
)
# files whose findings are warnings only (exit 0)
declare -A warn_only=([Yelp__ybinlogp/mysql-bin.delayed-event]=1)

summary_checks() {  # last line of JSON Lines output -> "code=count,..." (sorted)
  tail -n 1 | sed -n 's/^{"summary":.*"checks":{\([^}]*\)}.*/\1/p' | tr -d '"' | tr ',' '\n' |
    sed 's/:/=/' | sort | paste -sd, -
}

check() {  # name, expected exit, expected checks, args...
  local name=$1 want_rc=$2 want=$3
  shift 3
  local out rc got
  out=$("$bin" verify --format json --progress never "$@" 2>/dev/null)
  rc=$?
  printf '%s\n' "$out" >>"$all_json"
  got=$(printf '%s\n' "$out" | summary_checks)
  if [ "$rc" != "$want_rc" ] || [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $rc (want $want_rc), checks '$got' (want '$want')"
    fail=1
  fi
}

n=0
while IFS= read -r -d '' f; do
  rel=${f#"$pub"/}
  case $rel in *.md|*.json) continue ;; esac
  want=${expect[$rel]:-}
  rc=0
  if [ -n "$want" ] && [ -z "${warn_only[$rel]:-}" ]; then rc=1; fi
  check "$rel" "$rc" "$want" "$f"
  n=$((n + 1))
done < <(find "$pub" -type f -print0 | sort -z)

# mariadb-operator's domain_id_0 chain: 000003 and 000008 are absent
check "domain_id_0 chain" 1 "file_sequence_gap=2" "$pub/mariadb-operator__mariadb-poc/domain_id_0"
# canal's 5.7.19 pair (000002 ends with STOP) continues cleanly
check "canal tsdb pair" 0 "" "$pub/alibaba__canal/tsdb/mysql-bin.000002" "$pub/alibaba__canal/tsdb/mysql-bin.000003"
# --strict turns the delayed event's warning into an error
check "strict" 1 "timestamp_regression=1" --strict "$pub/Yelp__ybinlogp/mysql-bin.delayed-event"
# the shared MariaDB chain: executed GTID set = @@gtid_binlog_state
txn="$shared/corpus/mariadb/txn"
if [ -d "$txn/binlogs" ]; then
  want=$(sed -n 's/^gtid_binlog_state=//p' "$txn/expected/gtids.txt")
  got=$("$bin" verify --format json "$txn/binlogs/mariadb-bin.index" | tail -1 |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["mariadb_gtid_state"])')
  [ "$got" = "$want" ] || { echo "FAIL txn gtid state: '$got' (want '$want')"; fail=1; }
fi
# usage errors: exit 2
"$bin" verify "$pub/does-not-exist.000001" >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL missing input: exit status not 2"; fail=1; }
"$bin" verify --format yaml "$pub/MANIFEST.md" >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL bad option: exit status not 2"; fail=1; }
# text output: compiler-style lines
line=$("$bin" verify "$pub/alibaba__canal/tsdb/mysql-bin.000001" | head -1)
case $line in
  "$pub/alibaba__canal/tsdb/mysql-bin.000001:0: error: bad_magic: "*) ;;  # the path as given
  *) echo "FAIL text format: '$line'"; fail=1 ;;
esac

# every line printed above is one JSON object
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)' "$all_json" || { echo "FAIL: output is not JSON Lines"; fail=1; }
[ "$n" -ge 80 ] || { echo "FAIL only $n corpus files found"; fail=1; }
[ $fail = 0 ] && echo "ok: $n corpus files"
exit $fail
