#!/usr/bin/env bash
# The cluster quickstart (README): distributed mode on one machine. Starts a private
# PostgreSQL (the store) and RabbitMQ (the broker) on loopback under CLUSTER_DIR (default
# /tmp/layerlab-cluster), `layerlab serve` (API, dashboard, coordinator) and 3 workers,
# submits the example depth sweep, waits for it, prints the leaderboard and stops
# everything. On real machines run the same `layerlab worker --store ... --broker ...` on
# each host (see deploy/ for Docker, Kubernetes and Slurm).
#   bash scripts/cluster_demo.sh [STUDY.yaml]
set -euo pipefail
cd "$(dirname "$0")/.."
study="${1:-examples/depth_sweep.yaml}"
dir="${CLUSTER_DIR:-/tmp/layerlab-cluster}"
port="${DEMO_PORT:-8080}"
bash scripts/install-deps.sh test
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target layerlab
bin=./build/release/src/cli/layerlab
mkdir -p "$dir"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash scripts/services/rabbitmq.sh stop "$dir/rabbitmq" >/dev/null 2>&1 || true
  bash scripts/services/postgres.sh stop "$dir/postgres" >/dev/null 2>&1 || true
}
trap cleanup EXIT

store=$(bash scripts/services/postgres.sh start "$dir/postgres" 55432 | tail -n 1)
broker=$(bash scripts/services/rabbitmq.sh start "$dir/rabbitmq" 55672 | tail -n 1)
echo "store:  $store"
echo "broker: $broker"

"$bin" serve --store "$store" --broker "$broker" --bind "127.0.0.1:$port" 2>"$dir/serve.log" &
pids+=($!)
for i in 1 2 3; do
  "$bin" worker --store "$store" --broker "$broker" 2>"$dir/worker$i.log" &
  pids+=($!)
done
for _ in $(seq 1 100); do
  grep -q "dashboard at" "$dir/serve.log" 2>/dev/null && break
  sleep 0.1
done
echo "dashboard: http://127.0.0.1:$port/ (workers page: 3 workers)"
"$bin" submit "$study" --server "http://127.0.0.1:$port"
name=$(sed -n 's/^name: *//p' "$study" | head -n 1)
until "$bin" status "$name" --store "$store" --json | grep -q '"status": *"finished"'; do
  "$bin" status "$name" --store "$store" | head -n 2
  sleep 5
done
"$bin" trials "$name" --store "$store" --sort value --desc --limit 10
echo "logs in $dir; stopping the workers, the server and both services"
