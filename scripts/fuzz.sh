#!/usr/bin/env bash
# Builds the libFuzzer targets (the `sanitize` preset: clang, ASan + UBSan) and runs each for
# SECONDS (default 20) on its seed corpus. Exits non-zero when any target crashes (a
# sanitizer report, a signal, an exception other than layerlab::Error, a leak, an input
# slower than 10 s or an allocation over the memory limit), naming the input that did it.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: study csv libsvm idx gzip safetensors http store_url
#
# Environment:
#   FUZZ_JOBS=N      targets run N at a time (default 1)
#   FUZZ_BUILD=0     skip configure and build (use the build directory as it is)
#   FUZZ_BUILD_DIR=D the build directory (default build/sanitize; scripts/test.sh uses
#                    build/ci-sanitize)
#   FUZZ_FRESH=1     start every corpus from the seeds again (default: keep what earlier
#                    runs found in BUILD/work/corpus/TARGET)
#   FUZZ_NICE=N      run the fuzzers under `nice -n N` (default 0)
#   FUZZ_ARGS="..."  extra libFuzzer flags for every target
#
# Each run first replays tests/fuzz/regressions/TARGET (every crash found so far), then
# fuzzes a scratch corpus under BUILD/work/corpus/TARGET made from the committed seeds
# (tests/data, examples/, tests/fuzz/seeds/TARGET): the repository is never written. Logs
# and crashing inputs go to BUILD/work/{logs,artifacts}/TARGET. The summary gives per
# target the executions, executions per second, edge coverage (cov) and features (ft).
#
# A crash: reproduce with `build/sanitize/tests/fuzz/TARGET_fuzzer FILE`, minimise with
# `build/sanitize/tests/fuzz/TARGET_fuzzer -minimize_crash=1 -runs=100000 FILE`, and add the
# minimised file under tests/fuzz/regressions/TARGET/ (tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

seconds="${1:-20}"
shift || true
all_targets=(study csv libsvm idx gzip safetensors http store_url)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (${all_targets[*]})" >&2; exit 2; }
done

build="$root/${FUZZ_BUILD_DIR:-build/sanitize}"
work="$build/work"
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  echo "== fuzz: configure and build (preset sanitize, target layerlab_fuzzers)"
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize -j "$(nproc)" --target layerlab_fuzzers
fi

# Seeds besides tests/fuzz/seeds/TARGET (the same lists as tests/fuzz/CMakeLists.txt).
seed_paths() {
  case "$1" in
    study) ls tests/data/studies/*.yaml examples/*.yaml examples/paper/*.yaml ;;
    csv) ls tests/data/*.csv tests/data/*.csv.gz ;;
    libsvm) ls tests/data/*.libsvm ;;
    gzip) ls tests/data/*.gz ;;
    *) ;;
  esac 2>/dev/null || true
}
max_len() {
  case "$1" in
    study) echo 32768 ;;
    gzip) echo 16384 ;;
    *) echo 8192 ;;
  esac
}

# Runs one target; writes its summary line to $work/summary/TARGET.
run_target() {
  local t="$1" bin="$build/tests/fuzz/$1_fuzzer"
  local corpus="$work/corpus/$t" logs="$work/logs/$t" artifacts="$work/artifacts/$t/"
  [ -x "$bin" ] || { echo "fuzz: $bin is missing (build the sanitize preset)" >&2; return 1; }
  [ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$corpus"
  mkdir -p "$corpus" "$logs" "$artifacts" "$work/summary"
  local f
  while read -r f; do [ -n "$f" ] && cp -p "$f" "$corpus/seed-$(basename "$f")"; done < <(seed_paths "$t")
  [ -d "tests/fuzz/seeds/$t" ] && for f in tests/fuzz/seeds/"$t"/*; do cp -p "$f" "$corpus/seed-$(basename "$f")"; done
  chmod -R u+w "$corpus"

  local status=ok
  if [ -d "tests/fuzz/regressions/$t" ]; then
    local regressions=()
    while IFS= read -r f; do regressions+=("$f"); done < <(find "tests/fuzz/regressions/$t" -type f ! -name '*.md' | sort)
    if [ ${#regressions[@]} -gt 0 ] &&
       ! nice -n "${FUZZ_NICE:-0}" "$bin" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" >"$logs/regressions.log" 2>&1; then
      status="REGRESSION"
    fi
  fi

  local dict=() log="$logs/fuzz.log"
  [ -f "tests/fuzz/dicts/$t.dict" ] && dict=(-dict="tests/fuzz/dicts/$t.dict")
  local rc=0
  # shellcheck disable=SC2086
  nice -n "${FUZZ_NICE:-0}" "$bin" "$corpus" "${dict[@]}" -max_total_time="$seconds" \
    -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts" ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || status="CRASH"

  # Figures from libFuzzer's last status line (#N DONE/pulse cov: C ft: F corp: ...) and
  # its final stats.
  local last execs eps cov ft corp
  last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  execs="$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || true)"
  eps="$(grep -oE 'stat::average_exec_per_sec: [0-9]+' "$log" | grep -oE '[0-9]+$' || true)"
  [ -n "$execs" ] || execs="$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")"
  [ -n "$eps" ] || eps="$(sed -nE 's/.* exec\/s: ([0-9]+).*/\1/p' <<<"$last")"
  cov="$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")"
  ft="$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")"
  corp="$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/p' <<<"$last")"
  printf '%-12s %6ss %12s %8s %7s %7s %14s  %s\n' "$t" "$seconds" "${execs:-?}" "${eps:-?}" \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "$status" >"$work/summary/$t"
  if [ "$status" != ok ]; then
    {
      echo "== fuzz: $t: $status"
      if [ "$status" = REGRESSION ]; then
        grep -E 'ERROR|SUMMARY|Running:|terminate|deadly' "$logs/regressions.log" | head -20
        echo "   (log: $logs/regressions.log)"
      else
        grep -E '==[0-9]+==ERROR|SUMMARY:|terminate called|what\(\)|deadly signal|Test unit written|#[0-9]+ in ' "$log" | head -25
        echo "   (log: $log)"
      fi
    } >&2
    return 1
  fi
}

rm -rf "$work/summary"
echo "== fuzz: ${targets[*]} for ${seconds}s each (${FUZZ_JOBS:-1} at a time)"
failed=0
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "${FUZZ_JOBS:-1}" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done

printf '%-12s %7s %12s %8s %7s %7s %14s  %s\n' target time executions exec/s cov ft corpus result
for t in "${targets[@]}"; do cat "$work/summary/$t" 2>/dev/null || printf '%-12s (no result)\n' "$t"; done
if [ "$failed" != 0 ]; then
  echo "fuzz: FAILED (crashing inputs under $work/artifacts/; see tests/fuzz/README.md)" >&2
  exit 1
fi
echo "fuzz: no crash"
