#!/usr/bin/env bash
# The main job (README): installs dependencies, builds layerlab, and runs the example depth
# sweep (126 trials on digits and wine) on the embedded default: a SQLite store in
# ./layerlab.db and one worker process per core.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh build
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target layerlab
./build/release/src/cli/layerlab run examples/depth_sweep.yaml --store sqlite:layerlab.db
echo
echo "Results are in layerlab.db. Try:"
echo "  build/release/src/cli/layerlab status depth-sweep"
echo "  build/release/src/cli/layerlab trials depth-sweep --sort value --desc --limit 10"
echo "  build/release/src/cli/layerlab export depth-sweep --format csv -o depth-sweep.csv"
