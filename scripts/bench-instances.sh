#!/usr/bin/env bash
# Runs "dtekit bench" against "dtekit serve --demo" on SQLite, on PostgreSQL
# with one instance and on PostgreSQL with three instances sharing the
# database, and prints a Markdown table of the figures (the README's table
# under "Running several instances" comes from it).
#
#   scripts/bench-instances.sh [DURATION] [CONCURRENCY]    (default 30s, 8)
#
# PostgreSQL is a throwaway cluster the script starts and removes: initdb in
# a temporary directory, a unix socket only, PostgreSQL's default durability
# (fsync and synchronous_commit on), from the newest
# /usr/lib/postgresql/*/bin or $DTEKIT_PG_BIN. The bench client, the servers
# and PostgreSQL share the machine: the table says which.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-30s}
conc=${2:-8}
work=$(mktemp -d /tmp/dtekit-bench.XXXXXX)
pg=$(mktemp -d /tmp/dtekit-bench-pg.XXXXXX) # apart: PostgreSQL's user must reach it
pids=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
PG_BIN=${DTEKIT_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  as_pg "$PG_BIN/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work" "$pg"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench: building dtekit" >&2
go build -o "$work/dtekit" ./cmd/dtekit

# serve NAME DATA [VAR=VALUE...]: starts "dtekit serve --demo" on a free
# loopback port; sets BASE and PID.
serve() {
  local name=$1 data=$2
  shift 2
  env "$@" "$work/dtekit" serve --demo --data "$data" --addr 127.0.0.1:0 --rate-limit -1 \
    >"$work/$name.out" 2>"$work/$name.err" &
  PID=$!
  pids+=("$PID")
  for _ in $(seq 1200); do
    BASE=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/$name.out")
    [ -n "$BASE" ] && return 0
    kill -0 "$PID" 2>/dev/null || { cat "$work/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench: $name did not start within 2 minutes" >&2
  exit 1
}
stop() { for p in "$@"; do kill "$p"; wait "$p" || true; done; }
key() { sed -n 's/.*"api_key": "\(dtk_[^"]*\)".*/\1/p' "$1/demo.json" | head -1; }

rows=()
# run LABEL URLS PIDS DATA: one bench, one row of the table.
run() {
  echo "bench: $1 ($dur, $conc workers)" >&2
  "$work/dtekit" bench --url "$2" --pid "$3" --key "$(key "$4")" --duration "$dur" --concurrency "$conc" --json >"$work/run.json"
  rows+=("$(python3 -c '
import json, sys
r = json.load(open(sys.argv[2]))
print("| %s | %.0f | %.1f | %.1f | %d | %.2f |" % (sys.argv[1], r["documents_per_second"], r["p50_ms"], r["p99_ms"],
      r["errors"], r["server_cpu_ms_per_document"]))' "$1" "$work/run.json")")
}

# SQLite.
serve sqlite "$work/sqlite"
run "SQLite, one instance" "$BASE" "$PID" "$work/sqlite"
stop "$PID"

# PostgreSQL.
echo "bench: starting a throwaway PostgreSQL" >&2
[ "$(id -u)" != 0 ] || chown postgres: "$pg"
as_pg "$PG_BIN/initdb" -D "$pg/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -t 120 \
  -o "-c listen_addresses='' -c unix_socket_directories=$pg -p 5432 -c max_connections=200" start >/dev/null
pgurl() { echo "postgres://postgres@/postgres?host=$pg&port=5432&sslmode=disable&search_path=$1"; }
for s in one three; do as_pg "$PG_BIN/psql" -q -h "$pg" -U postgres -d postgres -c "CREATE SCHEMA $s" >/dev/null; done
kek=$(openssl rand -hex 32)

serve pg1 "$work/pg1" DTEKIT_DATABASE_URL="$(pgurl one)" DTEKIT_KEK="$kek"
run "PostgreSQL, one instance" "$BASE" "$PID" "$work/pg1"
stop "$PID"

# Three instances: the first provisions the demo, the others share its
# data directory (the demo's keys) and the database.
urls=() ids=()
for i in 1 2 3; do
  serve "pg3-$i" "$work/pg3" DTEKIT_DATABASE_URL="$(pgurl three)" DTEKIT_KEK="$kek"
  urls+=("$BASE")
  ids+=("$PID")
done
run "PostgreSQL, three instances" "$(IFS=,; echo "${urls[*]}")" "$(IFS=,; echo "${ids[*]}")" "$work/pg3"
stop "${ids[@]}"

echo
echo "| setup | documents/s | p50 ms | p99 ms | errors | server CPU ms per document |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $dur at $conc workers, bench and servers on the same machine; $(date -u +%Y-%m-%d)"
