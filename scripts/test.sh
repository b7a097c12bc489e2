#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the build needs, then builds and runs
# every test twice: an optimised gcc build (ci-release), and a clang build under
# AddressSanitizer and UndefinedBehaviorSanitizer with thread-safety analysis (ci-sanitize;
# the browser and cluster suites, which test processes and services rather than code paths
# the sanitizers see differently, are built and run in the release build only); then runs every libFuzzer
# target of the sanitizer build briefly (scripts/fuzz.sh, LAYERLAB_FUZZ_SECONDS each,
# default 20). Where nvcc is, the CUDA module is compiled too (no GPU needed). Both builds
# are unity builds (a cold start compiles each header once per batch, not once per file).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
jobs="$(nproc)"
start=$SECONDS
for preset in ci-release ci-sanitize; do
  echo "== $preset: configure and build ($((SECONDS - start)) s)"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: tests ($((SECONDS - start)) s)"
  # Two tests per core: most of a test's time is spent waiting on the processes, servers and
  # browsers it starts, so the cores stay busy only with more tests than cores.
  ctest --preset "$preset" -j "$((jobs * 2))" --timeout 600
done
# The CUDA module is built only when asked (LAYERLAB_CUDA=ON): compile it once here, no GPU
# needed, wherever nvcc is (CI machines without CUDA skip it).
nvcc="$(command -v nvcc || true)"
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; fi
if [ -n "$nvcc" ]; then
  echo "== cuda: compile the module with $nvcc ($((SECONDS - start)) s)"
  cmake -S . -B build/ci-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAYERLAB_WERROR=ON \
    -DLAYERLAB_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DLAYERLAB_BUILD_TESTS=OFF \
    -DLAYERLAB_BUILD_BENCH=OFF >/dev/null
  cmake --build build/ci-cuda -j "$jobs" --target layerlab_cuda
else
  echo "== cuda: no nvcc here; the CUDA module is not compiled"
fi
echo "== fuzz: every target for ${LAYERLAB_FUZZ_SECONDS:-20}s, $jobs at a time ($((SECONDS - start)) s)"
FUZZ_BUILD=0 FUZZ_BUILD_DIR=build/ci-sanitize FUZZ_JOBS="$jobs" \
  bash scripts/fuzz.sh "${LAYERLAB_FUZZ_SECONDS:-20}"
echo "== done in $((SECONDS - start)) s"
