#!/usr/bin/env bash
# Distributed-mode benchmarks (RabbitMQ broker + PostgreSQL store), each against its peer
# in the same run on a private RabbitMQ node and a private PostgreSQL server (loopback,
# started here by scripts/services/*.sh and stopped on exit):
#  (a) empty trials per second, 2 worker processes: bench/queue_bench with the AMQP queue on
#      PostgreSQL at prefetch 2 (`layerlab worker --prefetch 2`) and at the worker's default
#      (one per slot and pack member, raised to 32 while trials are short), the AMQP queue on
#      SQLite at prefetch 2 (to separate broker and store costs) and the store queue on SQLite
#      and on PostgreSQL, against Celery's no-op tasks (../shared/peers celery_sweep/driver.py
#      noop) on the same broker;
#  (b) sweep A (bench/studies/sweep_a.yaml, 24 configurations) with
#      `layerlab run --workers 2` over RabbitMQ + PostgreSQL (a new database and queue each
#      run, and a standing one: migrated and declared once, a new study each run), against
#      the Celery + RabbitMQ + PyTorch peer (driver.py sweep) on the same broker; layerlab
#      on SQLite for reference;
#  (c) the cost per trial of the distributed path: bench/studies/cluster_small.yaml
#      (2,000 tiny iris trials) with `run --workers 2` on SQLite against RabbitMQ + PostgreSQL;
#  (d) scaling: empty trials per second (SCALE_N trials) with 2, 4, 8 and 16 worker processes
#      (queue_bench --workers W) for the AMQP queue + PostgreSQL (the worker's default
#      prefetch, 1 raised to 32) and the store
#      queue on PostgreSQL, and both again behind PgBouncer in transaction mode (POOL_SIZE
#      server connections per database, `?pool_mode=transaction`). While each of these runs, bench/cluster/sample_waits.py samples
#      PostgreSQL's own view of that run's database every WAIT_SAMPLE_MS (one long-lived
#      psql): active backends and their wait events (pg_stat_activity), and the ungranted
#      locks (pg_locks) whenever a backend waits on a Lock -- is there one lock every commit
#      waits on?
# RUNS runs of each (default 3), the systems alternating within a round; medians.
# Writes bench/out/cluster/*.json (raw; (d) also *.waits.jsonl, one line per sample),
# bench/out/cluster.json (all figures, machine, date, revision) and
# bench/out/cluster_table.md (printed too).
#
#   bash bench/run_cluster.sh            (needs `scripts/install-deps.sh all`: rabbitmq-server,
#                                          postgresql, python3-celery, python3-torch)
# Environment:
#   RUNS (3)              runs (rounds) of every measurement
#   N (2000)              empty trials per run in (a)
#   SCALE_N (20000)       empty trials per run in (d): at 4,000, a third of a 16-worker run
#                         was the workers' start-up, and a queue that fell to one trial
#                         per claim under load did not show (2026-12-02)
#   SCALE_WORKERS ("2 4 8 16")  worker process counts in (d); ratios are to the smallest
#   WAIT_SAMPLE_MS (20)   the lock sampler's interval in (d); 0: no sampling
#   SKIP_SWEEPS=1         skip (b) and (c) (the slow part) for a quicker run
#   RMQ_PORT / PG_PORT    default: free ports found here
#   PEERS_DIR (../shared/peers), BUILD_DIR (build/bench-cluster)
#   POSTGRES_FAST=1       passed to postgres.sh: no fsync; recorded in the output; default off
#   POOL_SIZE (4)         PgBouncer's server connections per database in (d)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
PY=/usr/bin/python3
RUNS="${RUNS:-3}"
N="${N:-2000}"
SCALE_N="${SCALE_N:-20000}"
SCALE_WORKERS="${SCALE_WORKERS:-2 4 8 16}"
WAIT_SAMPLE_MS="${WAIT_SAMPLE_MS:-20}"
SKIP_SWEEPS="${SKIP_SWEEPS:-0}"
build="${BUILD_DIR:-build/bench-cluster}"
out="$root/bench/out"
raw="$out/cluster"
mkdir -p "$out"
rm -rf "$raw"
mkdir -p "$raw"

log() { echo "== $*" >&2; }
now() { date +%s.%N; }

if pgrep -x ninja >/dev/null 2>&1; then
  log "note: a build (ninja) is running on this machine; figures will be noisier"
fi
loadavg_start="$(cut -d' ' -f1-3 /proc/loadavg)"

log "build ($build)"
timeout 3600 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
timeout 3600 cmake --build "$build" --target layerlab queue_bench >/dev/null
bin="$root/$build/src/cli/layerlab"
qbench="$root/$build/bench/queue_bench"

# Everything of this run lives here (short: PostgreSQL's socket path must fit in 107 bytes).
work="$(mktemp -d /tmp/llcluster.XXXXXX)"
chmod 755 "$work"  # the rabbitmq and postgres users must reach their directories
rmq_dir="$work/rabbitmq"
pg_dir="$work/pg"
peers="$work/peers"
pgb_dir="$work/pgbouncer"
rmq_started=0 pg_started=0 pgb_started=0 celery_started=0 sampler="" waits_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  [ -z "$waits_pid" ] || kill "$waits_pid" 2>/dev/null || true
  if [ "$celery_started" = 1 ]; then
    timeout 60 "$peers/celery_sweep/worker.sh" stop >/dev/null 2>&1 || true
  fi
  if [ "$rmq_started" = 1 ]; then
    timeout 90 scripts/services/rabbitmq.sh stop "$rmq_dir" >/dev/null 2>&1 || true
  fi
  if [ "$pgb_started" = 1 ]; then
    timeout 90 scripts/services/pgbouncer.sh stop "$pgb_dir" >/dev/null 2>&1 || true
  fi
  if [ "$pg_started" = 1 ]; then
    timeout 90 scripts/services/postgres.sh stop "$pg_dir" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A free port in [lo, hi) whose +20000 (RabbitMQ's distribution port) is free too when $3=1.
pick_port() {
  local lo=$1 hi=$2 dist=$3 p i
  for i in $(seq 1 200); do
    p=$((lo + RANDOM % (hi - lo)))
    port_free "$p" || continue
    [ "$dist" = 1 ] && ! port_free $((p + 20000)) && continue
    echo "$p"
    return 0
  done
  echo "run_cluster.sh: no free port in [$lo, $hi)" >&2
  return 1
}
rmq_port="${RMQ_PORT:-$(pick_port 5700 9000 1)}"
pg_port="${PG_PORT:-$(pick_port 55000 59000 0)}"
pgb_port="$(pick_port 59000 61000 0)"

log "services: RabbitMQ on 127.0.0.1:$rmq_port, PostgreSQL on 127.0.0.1:$pg_port"
rmq_started=1
# The watchdog stops the node even if this script is killed with SIGKILL.
rmq_url="$(LAYERLAB_RABBITMQ_OWNER_PID=$$ timeout 120 scripts/services/rabbitmq.sh start \
  "$rmq_dir" "$rmq_port" | tail -n 1)"
pg_started=1
pg_url="$(timeout 120 scripts/services/postgres.sh start "$pg_dir" "$pg_port" | tail -n 1)"
pgb_started=1
POOL_SIZE="${POOL_SIZE:-4}" timeout 60 scripts/services/pgbouncer.sh start "$pgb_dir" "$pgb_port" \
  "$pg_port" >/dev/null
log "broker $rmq_url, store server ${pg_url%/*}/ (a fresh database per run), PgBouncer on $pgb_port"
export PGPASSWORD=layerlab
psql_() { timeout 60 psql -X -q -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U layerlab "$@"; }
# A fresh database per run, so that every run starts from empty tables (as a new SQLite file
# does) and no study is resumed.
pg_db() {  # name -> URL
  psql_ -d layerlab -c "CREATE DATABASE $1" >/dev/null
  echo "postgresql://layerlab:layerlab@127.0.0.1:$pg_port/$1"
}
# Removes a run's queues from the broker (outside the timing), so no idle queue is left.
drop_queues() {
  local q
  for q in "$1" "$1.dead" "$1.dead.store"; do
    timeout 60 scripts/services/rabbitmq.sh ctl "$rmq_dir" delete_queue "$q" >/dev/null 2>&1 || true
  done
}
broker_for() { echo "$rmq_url?queue=$1"; }
# The URL of a database made by pg_db, through PgBouncer.
pooled() { echo "postgresql://layerlab:layerlab@127.0.0.1:$pgb_port/${1##*/}?pool_mode=transaction"; }

# The Celery peer on the same broker. The peers' folder may be read-only: work on a copy.
cp -r "${PEERS_DIR:-$root/../shared/peers}" "$peers"
chmod -R u+w "$peers"
rm -rf "$peers/results" "$peers/run"
mkdir -p "$peers/results" "$peers/run"
export PEERS_BROKER="amqp://guest:guest@127.0.0.1:$rmq_port//"
export PEERS_DB="$peers/results/celery_sweep.sqlite"
export PEERS_REJECT_ON_WORKER_LOST=1
celery_started=1
timeout 120 "$peers/celery_sweep/worker.sh" start 1 >&2

# Trial statuses of a store (of one study if named) as JSON ({"completed": 2000, ...}).
statuses() {  # store-URL [study-name]
  local where=""
  [ -z "${2:-}" ] || where="WHERE study_id = (SELECT id FROM studies WHERE name = '$2')"
  case "$1" in
  sqlite:*)
    $PY -c 'import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print(json.dumps(dict(con.execute(
    "SELECT status, count(*) FROM trials %s GROUP BY status" % sys.argv[2]))))' \
      "${1#sqlite:}" "$where"
    ;;
  *)
    psql_ -d "${1##*/}" -F ' ' -c "SELECT status, count(*) FROM trials $where GROUP BY status" |
      $PY -c 'import json, sys
print(json.dumps({l.split()[0]: int(l.split()[1]) for l in sys.stdin if l.strip()}))'
    ;;
  esac
}

# `layerlab run STUDY` on a store (and broker); writes one JSON object to $3. With a study
# name, the statuses are that study's (a store that holds others).
layerlab_run() {  # study-file store-url out-file [broker-url [study-name]]
  local study=$1 store=$2 dest=$3 broker=${4:-} name=${5:-}
  local args=(run "$study" --workers 2 --store "$store" --json)
  [ -z "$broker" ] || args+=(--broker "$broker")
  local t0 t1 rc=0
  t0=$(now)
  timeout 900 "$bin" "${args[@]}" >"$dest.out" 2>"$dest.err" || rc=$?
  t1=$(now)
  local st
  st="$(statuses "$store" "$name" 2>/dev/null)" || st='{}'

  $PY - "$dest.out" "$t0" "$t1" "$rc" "$st" "$store" "$broker" >"$dest" <<'PYEOF'
import json, sys
path, t0, t1, rc, st, store, broker = sys.argv[1:8]
try:
    res = json.load(open(path))
except Exception:
    res = {}
wall = float(t1) - float(t0)
board = res.get("leaderboard") or [{}]
print(json.dumps({"wall_seconds": wall, "exit_code": int(rc), "complete": res.get("complete"),
                  "statuses": json.loads(st), "best": board[0].get("value"),
                  "store": store.split(":")[0], "broker": bool(broker)}))
PYEOF
  rm -f "$dest.out"
  if [ "$rc" = 0 ]; then
    rm -f "$dest.err"
  else
    log "layerlab run $study exited with $rc (see $dest.err)"
  fi
}

# The machine's load while measuring (1-minute load average every 5 s): others' builds on a
# shared machine show up here.
(while :; do cut -d' ' -f1 /proc/loadavg; sleep 5; done) >"$raw/loadavg.txt" 2>/dev/null &
sampler=$!

# One queue_bench run on the AMQP queue (fresh queue, dropped afterwards).
qbench_amqp() {  # name store-url prefetch workers trials out-file [max-prefetch]
  local q="bench-$1-$$"
  timeout 600 "$qbench" --trials "$5" --workers "$4" --prefetch "$3" --timeout 500 \
    --max-prefetch "${7:-0}" \
    --store "$2" --broker "$(broker_for "$q")" >"$6" 2>>"$raw/queue_bench.err" ||
    log "queue_bench $1 failed (see $raw/queue_bench.err)"
  drop_queues "$q"
}

log "(a) empty trials per second, N=$N, 2 workers, AMQP at prefetch 2 and 1 raised to 32"
for i in $(seq 1 "$RUNS"); do
  timeout 600 $PY "$peers/celery_sweep/driver.py" noop --n "$N" --timeout 500 \
    --out "$raw/noop_celery_$i.json" >/dev/null || log "celery noop run $i failed"
  qbench_amqp "amqp-pg-p2-$i" "$(pg_db "qb_amqp_p2_$i")" 2 2 "$N" "$raw/noop_amqp_pg_p2_$i.json"
  qbench_amqp "amqp-sqlite-p2-$i" "sqlite:$work/qb_amqp_p2_$i.db" 2 2 "$N" \
    "$raw/noop_amqp_sqlite_p2_$i.json"
  timeout 600 "$qbench" --trials "$N" --workers 2 --dir "$work/qb_store_$i" \
    >"$raw/noop_store_sqlite_$i.json" 2>>"$raw/queue_bench.err" ||
    log "queue_bench noop_store_sqlite run $i failed (see $raw/queue_bench.err)"
  qbench_amqp "amqp-pg-adaptive-$i" "$(pg_db "qb_amqp_adaptive_$i")" 1 2 "$N" \
    "$raw/noop_amqp_pg_adaptive_$i.json" 32
  timeout 600 "$qbench" --trials "$N" --workers 2 --store "$(pg_db "qb_store_$i")" \
    >"$raw/noop_store_pg_$i.json" 2>>"$raw/queue_bench.err" ||
    log "queue_bench noop_store_pg run $i failed (see $raw/queue_bench.err)"
done

# (d) One queue_bench run on PostgreSQL with the lock sampler on its database meanwhile:
# OUT.json (queue_bench's line), OUT.waits.jsonl (the samples, then one line with the run's
# wall-clock start and end, so that the report keeps the samples of the consuming phase).
sampled_qbench() {  # db out-base queue_bench-args...
  local db=$1 dest=$2 t0 t1
  shift 2
  if [ "$WAIT_SAMPLE_MS" != 0 ]; then
    $PY bench/cluster/sample_waits.py --port "$pg_port" --db "$db" \
      --interval-ms "$WAIT_SAMPLE_MS" --out "$dest.waits.jsonl" 2>>"$raw/sample_waits.err" &
    waits_pid=$!
    # Until its first sample is in (connected), at most 10 s.
    for _ in $(seq 1 500); do
      [ -s "$dest.waits.jsonl" ] && break
      kill -0 "$waits_pid" 2>/dev/null || break
      sleep 0.02
    done
    [ -s "$dest.waits.jsonl" ] ||
      log "lock sampler for $db did not start (see $raw/sample_waits.err)"
  fi
  t0=$(now)
  timeout 600 "$qbench" "$@" >"$dest.json" 2>>"$raw/queue_bench.err" ||
    log "queue_bench $(basename "$dest") failed (see $raw/queue_bench.err)"
  t1=$(now)
  if [ -n "$waits_pid" ]; then
    kill -TERM "$waits_pid" 2>/dev/null || true
    wait "$waits_pid" 2>/dev/null || log "lock sampler for $db exited with an error"
    waits_pid=""
    echo "{\"run\": {\"start\": $t0, \"end\": $t1}}" >>"$dest.waits.jsonl"
  fi
}

if [ "$SKIP_SWEEPS" = 1 ]; then
  log "(b) and (c) skipped (SKIP_SWEEPS=1)"
else
  log "(b) sweep A, 2 workers"
  # Also on a standing database and queue, as the Celery peer's broker queue and a
  # deployment's store are: migrated and declared once (an untimed first study), then each
  # run a study of its own name (the same 24 configurations).
  standing_store="$(pg_db sweep_a_standing)"
  standing_q="sweep-a-standing-$$"
  standing_study() { sed "s/^name: .*/name: sweep-a-standing-$1/" bench/studies/sweep_a.yaml; }
  standing_study 0 >"$work/sweep_a_standing_0.yaml"
  layerlab_run "$work/sweep_a_standing_0.yaml" "$standing_store" "$raw/standing_warmup.json" \
    "$(broker_for "$standing_q")" sweep-a-standing-0
  for i in $(seq 1 "$RUNS"); do
    q="sweep-a-$i-$$"
    layerlab_run bench/studies/sweep_a.yaml "$(pg_db "sweep_a_$i")" \
      "$raw/sweep_layerlab_pg_$i.json" "$(broker_for "$q")"
    drop_queues "$q"
    timeout 600 $PY "$peers/celery_sweep/driver.py" sweep --sweep-id "A-cluster-$i" --timeout 540 \
      --out "$raw/sweep_celery_$i.json" >/dev/null || log "celery sweep run $i failed"
    layerlab_run bench/studies/sweep_a.yaml "sqlite:$work/sweep_a_$i.db" \
      "$raw/sweep_layerlab_sqlite_$i.json"
    standing_study "$i" >"$work/sweep_a_standing_$i.yaml"
    layerlab_run "$work/sweep_a_standing_$i.yaml" "$standing_store" \
      "$raw/sweep_standing_pg_$i.json" "$(broker_for "$standing_q")" "sweep-a-standing-$i"
  done
  drop_queues "$standing_q"

  log "(c) bench/studies/cluster_small.yaml, 2 workers"
  for i in $(seq 1 "$RUNS"); do
    layerlab_run bench/studies/cluster_small.yaml "sqlite:$work/small_$i.db" \
      "$raw/small_sqlite_$i.json"
    q="cluster-small-$i-$$"
    layerlab_run bench/studies/cluster_small.yaml "$(pg_db "small_$i")" "$raw/small_pg_$i.json" \
      "$(broker_for "$q")"
    drop_queues "$q"
  done
fi

log "(d) scaling, N=$SCALE_N, workers $SCALE_WORKERS, lock sampler every ${WAIT_SAMPLE_MS} ms"
for i in $(seq 1 "$RUNS"); do
  for w in $SCALE_WORKERS; do
    db="sc_amqp_w${w}_$i"
    q="scale-amqp-w$w-$i-$$"
    url="$(pg_db "$db")"
    sampled_qbench "$db" "$raw/scale_amqp_pg_w${w}_$i" --trials "$SCALE_N" --workers "$w" \
      --prefetch 1 --max-prefetch 32 --timeout 500 --store "$url" --broker "$(broker_for "$q")"
    drop_queues "$q"
    db="sc_store_w${w}_$i"
    url="$(pg_db "$db")"
    sampled_qbench "$db" "$raw/scale_store_pg_w${w}_$i" --trials "$SCALE_N" --workers "$w" \
      --store "$url"
    db="sc_amqp_pgb_w${w}_$i"
    q="scale-amqp-pgb-w$w-$i-$$"
    url="$(pooled "$(pg_db "$db")")"
    sampled_qbench "$db" "$raw/scale_amqp_pgbouncer_w${w}_$i" --trials "$SCALE_N" --workers "$w" \
      --prefetch 1 --max-prefetch 32 --timeout 500 --store "$url" --broker "$(broker_for "$q")"
    drop_queues "$q"
    db="sc_store_pgb_w${w}_$i"
    url="$(pooled "$(pg_db "$db")")"
    sampled_qbench "$db" "$raw/scale_store_pgbouncer_w${w}_$i" --trials "$SCALE_N" \
      --workers "$w" --store "$url"
  done
done

loadavg_end="$(cut -d' ' -f1-3 /proc/loadavg)"
timeout 120 $PY bench/report_cluster.py "$raw" --out "$out/cluster.json" \
  --meta "rabbitmq_port=$rmq_port" "postgres_port=$pg_port" "runs=$RUNS" "n=$N" \
  "scale_n=$SCALE_N" "scale_workers=$SCALE_WORKERS" "wait_sample_ms=$WAIT_SAMPLE_MS" \
  "skip_sweeps=$SKIP_SWEEPS" \
  "postgres_fast=${POSTGRES_FAST:-0}" "pool_size=${POOL_SIZE:-4}" "loadavg_start=$loadavg_start" "loadavg_end=$loadavg_end" |
  tee "$out/cluster_table.md"
