#!/usr/bin/env bash
# Runs the paper-reproduction studies (RQ1, RQ2) on this machine and writes their reports:
#   bash examples/paper/run.sh [STORE_URL] [WORKERS]
# Default store: sqlite:paper.db in the current directory; workers: the number of cores.
# Reports: paper-rq1-depth-width.html / .json and paper-rq2-plateau.html / .json.
# On a cluster, submit the large variant instead (examples/paper/large/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${LAYERLAB_BIN:-layerlab}"
store="${1:-sqlite:paper.db}"
workers="${2:-$(nproc)}"
for study in rq1_depth_width rq2_plateau; do
  name="paper-${study//_/-}"
  start=$(date +%s)
  "$bin" run "$here/$study.yaml" --store "$store" --workers "$workers"
  echo "$name: $(( $(date +%s) - start )) s" >&2
  "$bin" report "$name" --store "$store" -o "$name.html"
  "$bin" report "$name" --store "$store" --format json -o "$name.json"
done
