#!/usr/bin/env bash
# Throughput studies (issue 7, RQ3 and RQ4), each against its peer in the same run:
#  (a) sweep A with 1..N worker processes (N = cores), against the same 24 configurations
#      in plain PyTorch with a process pool of 1..N (../shared/peers/serial_sweep.py, the
#      2015 design's process-level parallelism without a broker): speed-up and efficiency;
#  (b) packs: 64 same-shape trials (bench/studies/pack_sweep.yaml) with one worker and
#      --pack 1, 16, 64;
#  (c) the 50,000-trial study end to end, then `layerlab report` on it.
# Writes bench/out/scaling.json; bench/report_scaling.py prints the table for
# docs/benchmarks.md.   bash bench/run_scaling.sh [--repeats R] [--skip-50k]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="$root/bench/out"
mkdir -p "$out"
PY=/usr/bin/python3
repeats=2
skip_50k=0
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --skip-50k) skip_50k=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bin="${LAYERLAB_BIN:-$root/build/release/src/cli/layerlab}"
if [ -z "${LAYERLAB_BIN:-}" ]; then
  cmake --preset release >/dev/null
  cmake --build build/release --target layerlab >/dev/null
fi
peers="${PEERS_DIR:-$root/../shared/peers}"
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
lines="$out/scaling.jsonl"
: > "$lines"

# run_study NAME STUDY FLAGS...: one `layerlab run` in a fresh store; a JSON line.
run_study() {
  local name="$1" study="$2"; shift 2
  local db="$work/$name.db"
  rm -f "$db"*
  local t0 t1; t0=$(now)
  "$bin" run "$study" --store "sqlite:$db" "$@" --json > "$work/out.json" 2>/dev/null
  t1=$(now)
  $PY - "$work/out.json" "$t0" "$t1" "$name" "$*" <<'PYEOF'
import json, sys
out = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(json.dumps({"bench": sys.argv[4], "flags": sys.argv[5], "wall_seconds": wall,
                  "complete": out["complete"]}))
PYEOF
}

echo "== (a) sweep A, 1..$cores workers vs PyTorch process pool" >&2
for r in $(seq "$repeats"); do
  for w in $(seq "$cores"); do
    run_study "sweepA_w$w" bench/studies/sweep_a.yaml --workers "$w" >> "$lines"
    t0=$(now)
    $PY "$peers/serial_sweep.py" --procs "$w" --out "$work/peer.json" > /dev/null
    t1=$(now)
    echo "{\"bench\": \"peer_sweepA_p$w\", \"wall_seconds\": $(echo "$t1 - $t0" | bc)}" >> "$lines"
  done
done

echo "== (b) packs: 64 same-shape trials, 1 worker" >&2
for r in $(seq "$repeats"); do
  for k in 1 16 64; do
    run_study "pack_k$k" bench/studies/pack_sweep.yaml --workers 1 --pack "$k" >> "$lines"
  done
done

if [ "$skip_50k" = 0 ]; then
  echo "== (c) 50,000 trials end to end, then the report" >&2
  run_study "small50k" bench/studies/small_50k.yaml --workers "$cores" >> "$lines"
  t0=$(now)
  "$bin" report small-50k --store "sqlite:$work/small50k.db" -o "$work/report.html" 2>/dev/null
  t1=$(now)
  echo "{\"bench\": \"report_50k\", \"wall_seconds\": $(echo "$t1 - $t0" | bc), \"bytes\": $(stat -c %s "$work/report.html")}" >> "$lines"
fi

$PY - "$lines" "$out/scaling.json" "$cores" <<'PYEOF'
import json, sys, datetime, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump({"date_utc": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
           "cores": int(sys.argv[3]), "load": os.getloadavg(), "runs": rows},
          open(sys.argv[2], "w"), indent=1)
PYEOF
$PY bench/report_scaling.py "$out/scaling.json"
