#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the build needs, then builds and runs
# every test twice: an optimised build, and a debug build under AddressSanitizer and
# UndefinedBehaviorSanitizer; then runs every libFuzzer target briefly (scripts/fuzz.sh,
# LAYERLAB_FUZZ_SECONDS each, default 20). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
jobs="$(nproc)"
for preset in release debug; do
  echo "== $preset: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: tests"
  ctest --preset "$preset" -j "$jobs" --timeout 600
done
echo "== fuzz: every target for ${LAYERLAB_FUZZ_SECONDS:-20}s, $jobs at a time"
FUZZ_JOBS="$jobs" bash scripts/fuzz.sh "${LAYERLAB_FUZZ_SECONDS:-20}"
