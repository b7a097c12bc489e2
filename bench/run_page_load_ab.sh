#!/usr/bin/env bash
# Dashboard load time, one build against another (issue 18): the study page at 50,000+
# trials and the studies list with 100 studies, in headless Chromium
# (tests/browser/load_time.mjs, a fresh browser context per run), the two builds served
# side by side on copies of the same stores (no workers: the data stay the same), measured
# in alternating rounds A B A B...
#
#   bash bench/run_page_load_ab.sh OLD_LAYERLAB NEW_LAYERLAB [ROUNDS=3] [RUNS_PER_ROUND=3]
#
# The stores are made once with NEW_LAYERLAB (bench/studies/dashboard_50k.yaml stopped at
# 50,000 finished trials; then 99 studies of 4 trials each) and kept in
# bench/out/page_load/ (LAYERLAB_PAGE_LOAD_DIR): delete them to make new ones.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2") rounds=${3:-3} runs=${4:-3}
dir=${LAYERLAB_PAGE_LOAD_DIR:-bench/out/page_load}
mkdir -p "$dir"
work="$(mktemp -d /tmp/layerlab-page.XXXXXX)"
# The servers start in $(...) subshells, so they are not this shell's jobs: their pids go in a file.
trap 'kill $(jobs -p) $(cat "$work/pids" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

if [ ! -f "$dir/study50k.db" ]; then
  echo "== filling a store to 50,000 finished trials" >&2
  db="$work/fill.db"
  "$new" run bench/studies/dashboard_50k.yaml --store "sqlite:$db" -w 2 >/dev/null 2>"$work/fill.err" &
  pid=$!
  until [ "$(sqlite3 "$db" "SELECT COUNT(*) FROM trials WHERE status NOT IN ('queued', 'running')" 2>/dev/null || echo 0)" -ge 50000 ]; do sleep 1; done
  kill -INT "$pid"; wait "$pid" || true
  cp "$db" "$dir/study50k.db"
fi
if [ ! -f "$dir/studies100.db" ]; then
  echo "== adding 99 small studies (100 in all)" >&2
  cp "$dir/study50k.db" "$work/s100.db"
  for i in $(seq -w 2 100); do
    printf 'name: small-%s\ndatasets: [iris]\nmethod: grid\nparameters:\n  hidden_layers: {values: [1, 2]}\n  activation: {values: [relu, tanh]}\n  units: {value: 8}\n  epochs: {value: 2}\n' "$i" >"$work/small.yaml"
    "$new" run "$work/small.yaml" --store "sqlite:$work/s100.db" -w 1 >/dev/null 2>>"$work/small.err"
  done
  cp "$work/s100.db" "$dir/studies100.db"
fi

# serve NAME BINARY DB: starts `layerlab serve` on a copy of DB; prints its base URL.
serve() {
  mkdir -p "$work/$1"
  cp "$3" "$work/$1/s.db"
  "$2" serve --store "sqlite:$work/$1/s.db" --bind 127.0.0.1:0 >/dev/null 2>"$work/$1/err" </dev/null &
  echo $! >>"$work/pids"
  for _ in $(seq 300); do grep -qs "dashboard at" "$work/$1/err" && break; sleep 0.1; done
  local base
  base=$(grep -o "http://127.0.0.1:[0-9]*" "$work/$1/err" | head -1)
  # the first aggregate waits for the server's start-up load of the study
  curl -sf -o /dev/null "$base/api/v1/studies/1/summary?x=hidden_layers&y=value&group=activation"
  echo "$base"
}
old_study=$(serve old-study "$old" "$dir/study50k.db")
new_study=$(serve new-study "$new" "$dir/study50k.db")
old_list=$(serve old-list "$old" "$dir/studies100.db")
new_list=$(serve new-list "$new" "$dir/studies100.db")

echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; $(uptime)" >&2
for r in $(seq "$rounds"); do
  for side in old new; do
    s=${side}_study l=${side}_list
    echo "round $r $side study   $(node tests/browser/load_time.mjs --base "${!s}" --study 1 --runs "$runs")"
    echo "round $r $side studies $(node tests/browser/load_time.mjs --base "${!l}" --page studies --runs "$runs")"
  done
done
echo "after: $(uptime)" >&2
