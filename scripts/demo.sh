#!/usr/bin/env bash
# The main job (README): installs dependencies, builds layerlab, and trains a first network
# on the built-in digits dataset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh build
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target layerlab
./build/release/src/cli/layerlab train --dataset digits --hidden-layers 2 --units 64 \
  --activation relu --optimizer adam --learning-rate 1e-3 --epochs 20 --batch-size 32 --seed 0
echo
echo "layerlab is at build/release/src/cli/layerlab; try: layerlab train --help"
