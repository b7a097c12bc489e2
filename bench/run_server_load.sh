#!/usr/bin/env bash
# Server load benchmark (issue 4). A study is run until 50,000 of its 70,000 trials are
# finished (with their epochs); then `layerlab serve` takes it over with one local worker,
# so it is still running, its trials finishing and invalidating the server's caches every
# poll, while wrk reads the trials page and the plot aggregates: paced at about 200
# requests/s (p50/p90/p99), then unpaced (the most it serves). Then the study page's load
# time in headless Chromium. Writes bench/out/server_load.json.
#
#   bash bench/run_server_load.sh     (needs scripts/install-deps.sh all and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/src/cli/layerlab
work="$(mktemp -d /tmp/layerlab-load.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
db="$work/load.db"
mkdir -p bench/out
finished() {
  sqlite3 "$db" "SELECT COUNT(*) FROM trials WHERE status NOT IN ('queued', 'running')" 2>/dev/null ||
    echo 0
}

echo "== filling the store to 50,000 finished trials (bench/studies/dashboard_50k.yaml)" >&2
start=$(date +%s%N)
"$bin" run bench/studies/dashboard_50k.yaml --store "sqlite:$db" -w 2 >/dev/null 2>"$work/fill.err" &
run_pid=$!
until [ "$(finished)" -ge 50000 ]; do sleep 0.5; done
kill -INT "$run_pid"
wait "$run_pid" || true  # 130: interrupted, the study stays running
fill_s=$(( ($(date +%s%N) - start) / 1000000000 ))

"$bin" serve --store "sqlite:$db" --bind 127.0.0.1:0 --workers 1 2>"$work/serve.err" &
for _ in $(seq 100); do grep -q "dashboard at" "$work/serve.err" && break; sleep 0.1; done
base=$(grep -o "http://127.0.0.1:[0-9]*" "$work/serve.err" | head -1)
id=1
# The server warms its cache at start (loading 50,000 trials); time the first aggregate
# (it waits for that load).
cold_ms=$(curl -s -o /dev/null -w "%{time_total}" \
  "$base/api/v1/studies/$id/summary?x=hidden_layers&y=value&group=activation" |
  awk '{printf "%.1f", $1 * 1000}')
at_start=$(finished)

paths="/api/v1/studies/$id/trials?limit=50&sort=value&order=desc"
paths+=" /api/v1/studies/$id/trials?limit=50&offset=25000"
paths+=" /api/v1/studies/$id/summary?x=hidden_layers&y=value&group=activation"
paths+=" /api/v1/studies/$id/summary?x=hidden_layers&y=seconds"
paths+=" /api/v1/studies/$id/columns?fields=number,value"
paths+=" /api/v1/studies/$id"
export PATHS="$paths"
# One request each first: a dashboard asks for each once and then follows; the first
# computation of each (up to ~50 ms at 50,000 trials) is not what is measured here.
for p in $paths; do curl -sf -o /dev/null "$base$p"; done

echo "== paced: 10 connections x 20 requests/s = about 200 requests/s, 20 s" >&2
PACE_MS=50 wrk -t2 -c10 -d20s -s bench/server/paced.lua "$base" >"$work/paced.txt"
echo "== unpaced: 16 connections, 15 s" >&2
PACE_MS=0 wrk -t2 -c16 -d15s -s bench/server/paced.lua "$base" >"$work/max.txt"
echo "== per endpoint, paced at about 200 requests/s, 8 s each" >&2
endpoint_json="{"
for p in $paths; do
  PATHS="$p" PACE_MS=50 wrk -t2 -c10 -d8s -s bench/server/paced.lua "$base" >"$work/one.txt"
  endpoint_json+="\"$p\": $(grep '^JSON' "$work/one.txt" | cut -c6-),"
done
endpoint_json="${endpoint_json%,}}"

echo "== browser: study page load time" >&2
page=$(node tests/browser/load_time.mjs --base "$base" --study "$id" --runs 5)
at_end=$(finished)

cat >"$work/result.json" <<JSON
{"date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "machine": "$(nproc) cores, $(uname -m)",
 "fill_seconds": $fill_s, "finished_at_start": $at_start, "finished_at_end": $at_end,
 "epochs": $(sqlite3 "$db" "SELECT COUNT(*) FROM epochs"),
 "first_summary_ms": $cold_ms,
 "paced_200rps": $(grep '^JSON' "$work/paced.txt" | cut -c6-),
 "unpaced": $(grep '^JSON' "$work/max.txt" | cut -c6-),
 "per_endpoint_paced": $endpoint_json,
 "page_load": $page}
JSON
/usr/bin/python3 -m json.tool "$work/result.json" | tee bench/out/server_load.json
