#!/usr/bin/env bash
# Engine benchmark: layerlab against PyTorch on the same networks, in one run, plus the
# SGEMM ceiling. Writes bench/out/engine.json, torch.json and engine_table.md.
#   bash bench/run_engine.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
[ "${1:-}" = "--quick" ] && quick="--quick"
peers="${PEERS_DIR:-../shared/peers}"
mkdir -p bench/out
cmake --preset release >/dev/null
cmake --build build/release --target engine_bench >/dev/null
filter="."
[ -n "$quick" ] && filter="W(64|256|128)/|W1024/D4/B256"
./build/release/bench/engine_bench --benchmark_filter="$filter" --benchmark_out=bench/out/engine.json \
  --benchmark_out_format=json >/dev/null
/usr/bin/python3 bench/torch_steps.py --peers "$peers" --out bench/out/torch.json $quick
/usr/bin/python3 bench/report_engine.py bench/out/engine.json bench/out/torch.json | tee bench/out/engine_table.md
# Whether the machine's cores are independent right now: one copy of a one-thread row alone,
# then two at once. Where the virtual CPUs share a physical core (seen on 2-core VMs, on and
# off), each copy runs at about half speed and no two-thread row can gain.
one_row() {
  ./build/release/bench/engine_bench --benchmark_filter='^step/W256/D4/B32/I256/T1/' \
    --benchmark_format=json 2>/dev/null | /usr/bin/python3 -c \
    'import json,sys; print(round(json.load(sys.stdin)["benchmarks"][0]["steps_per_second"]))'
}
alone=$(one_row)
together=$( (one_row & one_row; wait) | tr '\n' ' ')
echo "cores check (W256/D4/B32/I256/T1, steps/s): alone $alone; two copies at once: $together" |
  tee -a bench/out/engine_table.md
