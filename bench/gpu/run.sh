#!/usr/bin/env bash
# GPU benchmark of issue 6: layerlab's CUDA backend against PyTorch on the same device, in one
# run, with the ratios against the targets (combine.py).
#   bash bench/gpu/run.sh [--device cuda|cpu] [--build DIR] [--out FILE] [--threads N] [--skip-tests]
# --device cuda (default), on a machine with an NVIDIA GPU, CUDA and PyTorch: the peers' GPU
#   anchor's sizes. --build DIR uses a prebuilt build (made elsewhere, then
#   `bash bench/gpu/bundle.sh DIR` to carry its shared libraries in DIR/lib); without it, the
#   script configures and builds build/gpu-bench (needs Debian's -dev packages). It runs the
#   CUDA backend tests (ctest -R '^Cuda/' in a build made here, else the test binary with
#   --gtest_filter), then gpu_bench and torch_bench, each part stopping after its time cap and
#   each program after a hard timeout, so the whole run (prebuilt) stays under 10 minutes.
# --device cpu: small sizes (packs 1/8/64, a 512-wide large MLP, fp32 only) and PyTorch on the
#   CPU, --threads threads each (default 1): checks the scripts end to end, gives CPU figures.
# Writes FILE (default $OUT/gpu_bench.json, else bench/out/gpu_bench.json); exits non-zero if
# the tests or a benchmark failed (what ran is still written).
set -uo pipefail
cd "$(dirname "$0")/../.."
device=cuda build="" out="" threads=1 skip_tests=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --skip-tests) skip_tests=1; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-${OUT:-bench/out}/gpu_bench.json}
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=""

py=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$candidate" -c 'import torch' 2>/dev/null; then py=$candidate; break; fi
done
[ -n "$py" ] || { echo "run.sh: no python3 with torch (set PYTHON)" >&2; exit 1; }

if [ -n "$build" ]; then
  build=$(cd "$build" && pwd) || exit 1
  export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"
else
  build=$PWD/build/gpu-bench
  mode=$([ "$device" = cpu ] && echo AUTO || echo ON)
  echo "== building $build (LAYERLAB_CUDA=$mode)"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAYERLAB_CUDA="$mode" >/dev/null &&
    cmake --build "$build" --target gpu_bench backend_unit_tests >/dev/null || exit 1  # + the module
fi

# The CUDA backend is a module loaded at run time; the test binary and gpu_bench do not sit
# beside it (the layerlab binary does), and a build carried here has another path.
if [ -z "${LAYERLAB_CUDA_MODULE:-}" ] && [ -f "$build/src/cli/liblayerlab_cuda.so" ]; then
  export LAYERLAB_CUDA_MODULE="$build/src/cli/liblayerlab_cuda.so"
fi

if [ "$skip_tests" = 0 ]; then
  filter=$([ "$device" = cpu ] && echo Cpu/ || echo Cuda/)
  echo "== backend tests ($filter)"
  if grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$PWD" "$build/CMakeCache.txt" 2>/dev/null; then
    timeout 180 ctest --test-dir "$build" -R "^$filter" --output-on-failure >"$work/tests.txt" 2>&1
  else
    timeout 180 "$build/tests/unit/backend/backend_unit_tests" --gtest_filter="$filter*" \
      >"$work/tests.txt" 2>&1
  fi
  status=$?
  tail -n 25 "$work/tests.txt"
  [ $status = 0 ] || failed="$failed tests(rc=$status)"
fi

if [ "$device" = cpu ]; then
  sizes=(--threads "$threads" --packs 1,8,64 --single-reps 3 --pack-reps 1 --large-width 512
    --large-depth 2 --large-batch 256 --large-classes 10 --large-steps 5 --large-epochs 3
    --precisions fp32 --time-cap 60)
else
  sizes=(--time-cap 60)  # the anchor's sizes are the programs' defaults
fi
echo "== gpu_bench --device $device ${sizes[*]}"
timeout 200 "$build/bench/gpu/gpu_bench" --device "$device" "${sizes[@]}" >"$work/layerlab.json"
status=$?
[ $status = 0 ] || failed="$failed gpu_bench(rc=$status)"
echo "== torch_bench.py --device $device ${sizes[*]}"
timeout 200 "$py" bench/gpu/torch_bench.py --device "$device" "${sizes[@]}" >"$work/torch.json"
status=$?
[ $status = 0 ] || failed="$failed torch_bench(rc=$status)"

note="run.sh --device $device on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$failed" ] && note="$note; FAILED:$failed"
"$py" bench/gpu/combine.py "$work/layerlab.json" "$work/torch.json" --note "$note" >"$out" ||
  exit 1
"$py" - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("== " + r["note"])
for name, group in r["ratios"].items():
    for item in group if isinstance(group, list) else [group]:
        key = {k: v for k, v in item.items() if k in ("pack", "precision")}
        print(f"{name} {key or ''}: {item['ratio']} (target {item['target']}, met {item['met']})")
PY
echo "== wrote $out"
[ -z "$failed" ]
