#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the build needs, then builds and runs
# every test twice: an optimised gcc build (ci-release), and a clang build under
# AddressSanitizer and UndefinedBehaviorSanitizer with thread-safety analysis (ci-sanitize;
# the browser and cluster suites, which test processes and services rather than code paths
# the sanitizers see differently, run in the release build only); then runs every libFuzzer
# target of the sanitizer build briefly (scripts/fuzz.sh, LAYERLAB_FUZZ_SECONDS each,
# default 20). Both builds are unity builds (a cold start compiles each header once per
# batch, not once per file). Exits non-zero on any failure.
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
  ctest --preset "$preset" -j "$jobs" --timeout 600
done
echo "== fuzz: every target for ${LAYERLAB_FUZZ_SECONDS:-20}s, $jobs at a time ($((SECONDS - start)) s)"
FUZZ_BUILD=0 FUZZ_BUILD_DIR=build/ci-sanitize FUZZ_JOBS="$jobs" \
  bash scripts/fuzz.sh "${LAYERLAB_FUZZ_SECONDS:-20}"
echo "== done in $((SECONDS - start)) s"
