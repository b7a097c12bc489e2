#!/usr/bin/env bash
# The main job (README): installs dependencies, builds layerlab, runs the example depth
# sweep (126 trials on digits and wine) on the embedded default (a SQLite store in
# ./layerlab.db, one worker process per core) with its dashboard live while it runs, then
# serves the dashboard on the results until Ctrl-C (DEMO_SERVE=0: exit instead).
# DEMO_PORT (default 8080) picks the port.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh build
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target layerlab
port="${DEMO_PORT:-8080}"
bin=./build/release/src/cli/layerlab
echo "The dashboard is at http://127.0.0.1:$port/ while the study runs."
"$bin" run examples/depth_sweep.yaml --store sqlite:layerlab.db --dashboard="$port"
echo
echo "Results are in layerlab.db. Try:"
echo "  $bin status depth-sweep"
echo "  $bin trials depth-sweep --sort value --desc --limit 10"
echo "  $bin export depth-sweep --format csv -o depth-sweep.csv"
if [ "${DEMO_SERVE:-1}" != 0 ]; then
  echo
  echo "Serving the dashboard on the results: http://127.0.0.1:$port/ (Ctrl-C to stop)"
  exec "$bin" serve --store sqlite:layerlab.db --bind "127.0.0.1:$port"
fi
