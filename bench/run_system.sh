#!/usr/bin/env bash
# System benchmarks of the studies issue, each against its peer in the same run:
#  (a) sweep A (24 configurations on digits) end to end with `layerlab run --workers 2`,
#      against Celery + RabbitMQ + PyTorch and Optuna (../shared/peers), 3 runs each;
#  (b) empty trials per second through the store-backed queue, against Celery's no-op tasks;
#  (c) 50,000 small trials end to end: time, trials per second, store size;
#  (d) an adaptive study (tpe, 1,000 tiny trials) against Optuna's TPESampler
#      (bench/optuna_tpe.py, PyTorch training the same networks), 2 runs each.
# Needs `scripts/install-deps.sh all`. Writes bench/out/system.json and system_table.md.
#   bash bench/run_system.sh [--skip-50k]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="$root/bench/out"
mkdir -p "$out"
PY=/usr/bin/python3
cmake --preset release >/dev/null
cmake --build build/release --target layerlab queue_bench >/dev/null
bin="$root/build/release/src/cli/layerlab"

# The peers' folder may be read-only: work on a copy.
peers=/tmp/layerlab-peers
rm -rf "$peers"
cp -r "${PEERS_DIR:-$root/../shared/peers}" "$peers"
chmod -R u+w "$peers"
mkdir -p "$peers/results" "$peers/run"
cleanup() {
  "$peers/celery_sweep/worker.sh" stop >/dev/null 2>&1 || true
  "$peers/celery_sweep/rabbitmq.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

now() { date +%s.%N; }
results=()
layerlab_study() {  # STUDY_FILE: one `run` on a new store; a JSON line
  local dir; dir=$(mktemp -d)
  local t0; t0=$(now)
  "$bin" run "$1" --workers 2 --store "sqlite:$dir/s.db" --json > "$dir/out.json" 2>/dev/null
  local t1; t1=$(now)
  $PY - "$dir/out.json" "$t0" "$t1" <<'PYEOF'
import json, sys
out = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(json.dumps({"peer": "layerlab", "wall_seconds": wall,
                  "best": out["leaderboard"][0]["value"], "complete": out["complete"]}))
PYEOF
  rm -rf "$dir"
}

echo "== (a) sweep A" >&2
export PEERS_REJECT_ON_WORKER_LOST=1
"$peers/celery_sweep/rabbitmq.sh" start >&2
"$peers/celery_sweep/worker.sh" start 1 >&2
for i in 1 2 3; do
  layerlab_study bench/studies/sweep_a.yaml > "$out/sweep_layerlab_$i.json"
  timeout 600 $PY "$peers/celery_sweep/driver.py" sweep --sweep-id "A-bench-$i" --timeout 540 \
    --out "$out/sweep_celery_$i.json" > /dev/null
  rm -f "$out/optuna_$i.sqlite"
  timeout 600 $PY "$peers/optuna_sweep.py" --workers 2 --db "$out/optuna_$i.sqlite" \
    --out "$out/sweep_optuna_$i.json" > /dev/null
done

echo "== (b) queue overhead" >&2
timeout 400 $PY "$peers/celery_sweep/driver.py" noop --n 2000 --timeout 300 --out "$out/celery_noop.json" > /dev/null
for i in 1 2 3; do
  ./build/release/bench/queue_bench --trials 20000 --workers 2 > "$out/queue_$i.json"
done
cleanup

if [ "${1:-}" != "--skip-50k" ]; then
  echo "== (c) 50,000 small trials, without and with a pruner" >&2
  for study in small_50k pruned_50k; do
    dir=$(mktemp -d)
    t0=$(now)
    "$bin" run "bench/studies/$study.yaml" --workers 2 --store "sqlite:$dir/s.db" --json > "$dir/out.json" 2>/dev/null
    t1=$(now)
    $PY - "$dir" "$t0" "$t1" > "$out/$study.json" <<'PYEOF'
import json, os, sqlite3, sys
d = sys.argv[1]
wall = float(sys.argv[3]) - float(sys.argv[2])
con = sqlite3.connect(os.path.join(d, "s.db"))
status = dict(con.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
epochs = con.execute("SELECT count(*) FROM epochs").fetchone()[0]
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("s.db"))
print(json.dumps({"trials": sum(status.values()), "status": status, "epoch_rows": epochs,
                  "wall_seconds": wall, "trials_per_second": sum(status.values()) / wall,
                  "store_bytes": size}))
PYEOF
    rm -rf "$dir"
  done
fi
echo "== (d) an adaptive study against Optuna's TPESampler" >&2
for i in 1 2; do
  layerlab_study bench/studies/tpe_1000.yaml > "$out/tpe_layerlab_$i.json"
  timeout 900 $PY bench/optuna_tpe.py --peers "$peers" --trials 1000 \
    --db "$peers/run/optuna_tpe.sqlite" > "$out/tpe_optuna_$i.json"
done
$PY bench/report_system.py "$out" | tee "$out/system_table.md"
