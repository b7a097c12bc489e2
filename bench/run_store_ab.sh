#!/usr/bin/env bash
# Two builds of the store side by side, alternating A B A B in one call, so that a change to
# src/store shows as a ratio rather than against figures of another day:
#   - embedded SQLite: `layerlab run bench/studies/small_50k.yaml --workers 2` (wall seconds,
#     a fresh file each run) and queue_bench's store queue (empty trials/s);
#   - PostgreSQL (a private server on loopback, a fresh database per run): queue_bench's store
#     queue, and the AMQP queue at prefetch 8 on a private RabbitMQ.
# Usage: bench/run_store_ab.sh OLD_DIR NEW_DIR [RUNS]   (each DIR holds layerlab and
# queue_bench). Prints one line per run: side, benchmark, figure. Run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
old="$1" new="$2" runs="${3:-3}"
work="$(mktemp -d /tmp/layerlab-ab.XXXXXX)"
chmod 755 "$work"  # the postgres user writes its data directory below it
pg_port=$((20000 + RANDOM % 20000)) rmq_port=$((40000 + RANDOM % 20000))
cleanup() {
  scripts/services/rabbitmq.sh stop "$work/rmq" >/dev/null 2>&1 || true
  scripts/services/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
pg_url="$(scripts/services/postgres.sh start "$work/pg" "$pg_port" | tail -n 1)"
rmq_url="$(LAYERLAB_RABBITMQ_OWNER_PID=$$ scripts/services/rabbitmq.sh start "$work/rmq" \
  "$rmq_port" | tail -n 1)"
export PGPASSWORD=layerlab
fresh_db() {  # name -> URL of a new, empty database
  psql -X -q -h 127.0.0.1 -p "$pg_port" -U layerlab -d layerlab -c "CREATE DATABASE $1" >/dev/null
  echo "postgresql://layerlab:layerlab@127.0.0.1:$pg_port/$1"
}
rate() { sed -n 's/.*"trials_per_second": *\([0-9.]*\).*/\1/p'; }
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) runs $runs"
for i in $(seq 1 "$runs"); do
  for side in old new; do
    dir="$old"
    [[ $side == new ]] && dir="$new"
    rm -f "$work/s.db"*
    start=$(date +%s.%N)
    "$dir/layerlab" run bench/studies/small_50k.yaml --workers 2 --store "sqlite:$work/s.db" \
      >/dev/null 2>&1
    echo "$side small_50k_seconds $(echo "$(date +%s.%N) - $start" | bc)"
    rm -rf "$work/qb"
    echo "$side store_queue_sqlite_per_s $("$dir/queue_bench" --trials 20000 --workers 2 \
      --dir "$work/qb" 2>/dev/null | rate)"
    echo "$side store_queue_pg_per_s $("$dir/queue_bench" --trials 2000 --workers 2 \
      --store "$(fresh_db "sq_${side}_$i")" 2>/dev/null | rate)"
    echo "$side amqp_pg_p8_per_s $("$dir/queue_bench" --trials 2000 --workers 2 --prefetch 8 \
      --timeout 500 --store "$(fresh_db "amqp_${side}_$i")" --broker "$rmq_url?queue=ab-$side-$i" 2>/dev/null |
      rate)"
  done
done
