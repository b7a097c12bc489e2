#!/usr/bin/env bash
# The server under hostile clients (issue 13): `layerlab serve` with 2 local workers trains
# a study submitted over HTTP while bench/server/attackers.py holds 60 connections (30 idle,
# 30 slowloris) and 500 event streams from other loopback addresses. wrk reads /healthz and
# a trials page, paced at about 100 requests/s each, alternating quiet and attacked rounds
# (the figures are the ratio of the two). At the end the study must have finished with every
# trial exactly once.
# Then amplification (issue 52): `serve` over a store holding a 50,000-trial study and a
# kept model of about 17 MB, while bench/server/amplifiers.py runs 40 clients sending
# expensive requests (repeated fields, a cache key per request, new sort names, 30,000-
# character keys) and 60 clients that ask for the model and never read; wrk reads /healthz
# paced at about 100 requests/s, in quiet and attacked rounds, and serve's resident memory
# is sampled every 0.2 s (its peak, VmHWM, is read at the end). Writes
# bench/out/server_hostile.json.
#
#   bash bench/run_server_hostile.sh    (needs scripts/install-deps.sh all and a release build)
#   AMPLIFICATION_ONLY=1 bash bench/run_server_hostile.sh   (the amplification rounds alone)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/src/cli/layerlab
work="$(mktemp -d /tmp/layerlab-hostile.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p bench/out
ulimit -n 8192 2>/dev/null || true

fill_store() {  # DB: 50,000 finished trials of dashboard_50k and a kept model of about 17 MB
  local db="$1"
  echo "== amplification: filling a store to 50,000 finished trials" >&2
  "$bin" run bench/studies/dashboard_50k.yaml --store "sqlite:$db" -w 2 >/dev/null 2>"$work/fill.err" &
  local fill=$!
  until [ "$(sqlite3 "$db" "SELECT COUNT(*) FROM trials WHERE status NOT IN ('queued', 'running')" \
    2>/dev/null || echo 0)" -ge 50000 ]; do sleep 1; done
  kill -INT "$fill"; wait "$fill" || true
  cat >"$work/model.yaml" <<'YAML'
name: kept-model
datasets: [digits]
method: grid
keep_weights: {top: 1}
parameters:
  hidden_layers: {value: 2}
  units: {value: 2048}
  epochs: {value: 1}
YAML
  "$bin" run "$work/model.yaml" --store "sqlite:$db" -w 1 >/dev/null
}

amplification() {  # prints one JSON object
  # The store is made once and kept in bench/out/hostile/ (LAYERLAB_HOSTILE_DIR): delete it
  # to make a new one.
  local dir=${LAYERLAB_HOSTILE_DIR:-bench/out/hostile} db="$work/big.db"
  mkdir -p "$dir"
  if [ ! -f "$dir/big.db" ]; then
    fill_store "$work/fill.db"
    cp "$work/fill.db" "$dir/big.db"
  fi
  cp "$dir/big.db" "$db"
  local trial
  trial=$(sqlite3 "$db" "SELECT trial_id FROM trial_weights LIMIT 1")
  "$bin" serve --store "sqlite:$db" --bind 127.0.0.1:0 --workers 0 2>"$work/serve2.err" &
  local serve=$!
  for _ in $(seq 300); do grep -q "dashboard at" "$work/serve2.err" && break; sleep 0.1; done
  local base2 port2
  base2=$(grep -o "http://127.0.0.1:[0-9]*" "$work/serve2.err" | head -1)
  port2=${base2##*:}
  curl -sf "$base2/api/v1/studies/dashboard-50k/summary" >/dev/null  # the views are built once
  local rounds=() rss_base
  rss_base=$(awk '/VmRSS/ {print $2}' "/proc/$serve/status")
  for r in 1 2; do
    echo "== amplification round $r: quiet" >&2
    rounds+=("{\"round\": \"quiet\", \"wrk\": $(PATHS=/healthz PACE_MS=50 wrk -t1 -c5 -d10s \
      -s bench/server/paced.lua "$base2" | grep '^JSON' | cut -c6-)}")
    echo "== amplification round $r: 40 amplifiers + 60 non-reading model downloads" >&2
    /usr/bin/python3 bench/server/amplifiers.py --port "$port2" --study dashboard-50k \
      --model-trial "$trial" >"$work/amp.$r.json" &
    local amp=$!
    sleep 3
    rounds+=("{\"round\": \"attacked\", \"wrk\": $(PATHS=/healthz PACE_MS=50 wrk -t1 -c5 \
      -d20s --timeout 30s -s bench/server/paced.lua "$base2" | grep '^JSON' | cut -c6-)}")
    kill -TERM "$amp"; wait "$amp" || true
    cat "$work/amp.$r.json" >&2
  done
  local hwm
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$serve/status")
  kill -TERM "$serve"; wait "$serve" || true
  echo "{\"trials\": 50000, \"rss_start_kib\": $rss_base, \"rss_peak_kib\": $hwm,"
  echo " \"attackers\": [$(cat "$work"/amp.*.json | paste -sd,)],"
  echo " \"rounds\": [$(IFS=,; echo "${rounds[*]}")]}"
}

# AMPLIFICATION_ONLY=1: the amplification rounds alone (bench/out/server_amplification.json).
if [ "${AMPLIFICATION_ONLY:-0}" = 1 ]; then
  { echo "{\"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"machine\": \"$(nproc) cores\","
    echo " \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"amplification\": $(amplification)}"
  } | /usr/bin/python3 -m json.tool | tee bench/out/server_amplification.json
  exit 0
fi

cat >"$work/study.yaml" <<'YAML'
name: under-attack
datasets: [iris, wine, breast_cancer]
method: grid
seeds: [0, 1, 2, 3]
parameters:
  hidden_layers: {values: [1, 2, 3, 4]}
  units: {values: [8, 16, 32]}
  activation: {values: [relu, tanh]}
  epochs: {value: 10}
YAML
"$bin" serve --store "sqlite:$work/store.db" --bind 127.0.0.1:0 --workers 2 2>"$work/serve.err" &
for _ in $(seq 100); do grep -q "dashboard at" "$work/serve.err" && break; sleep 0.1; done
base=$(grep -o "http://127.0.0.1:[0-9]*" "$work/serve.err" | head -1)
port=${base##*:}
curl -sf -H 'Content-Type: application/yaml' --data-binary @"$work/study.yaml" \
  "$base/api/v1/studies" >/dev/null
until [ "$(curl -s "$base/api/v1/studies/under-attack" | /usr/bin/python3 -c \
  'import json,sys; print(json.load(sys.stdin)["counts"].get("completed", 0))')" -ge 20 ]; do
  sleep 0.5
done

round() {  # NAME: wrk on /healthz and a trials page, 10 s each, ~100 requests/s each
  for p in /healthz "/api/v1/studies/under-attack/trials?limit=50&sort=value&order=desc"; do
    PATHS="$p" PACE_MS=50 wrk -t1 -c5 -d10s -s bench/server/paced.lua "$base" |
      grep '^JSON' | cut -c6- | sed "s|^|{\"round\": \"$1\", \"path\": \"${p//&/\\&}\", \"wrk\": |; s|\$|}|"
  done
}

results=()
for r in 1 2; do
  echo "== round $r: quiet" >&2
  while read -r line; do results+=("$line"); done < <(round quiet)
  echo "== round $r: 60 held connections + 500 event streams" >&2
  /usr/bin/python3 bench/server/attackers.py --port "$port" --idle 30 --slow 30 --sse 500 \
    >"$work/attack.$r.json" &
  attack=$!
  sleep 5  # every socket open and every stream answered before measuring
  while read -r line; do results+=("$line"); done < <(round attacked)
  kill -TERM "$attack"
  wait "$attack" || true
  cat "$work/attack.$r.json" >&2
  sleep 12  # the server notices closed event streams at their next pings (every 5 s)
done

echo "== waiting for the study to finish" >&2
until curl -s "$base/api/v1/studies/under-attack" | grep -q '"status":"finished"'; do sleep 1; done
check=$(curl -s "$base/api/v1/studies/under-attack/trials?limit=1000" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)
numbers = [x["number"] for x in t["trials"]]
print(json.dumps({"total": t["total"], "distinct": len(set(numbers)),
                  "completed": sum(x["status"] == "completed" for x in t["trials"])}))')
amplified=$(amplification)

{
  echo "{\"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"machine\": \"$(nproc) cores\","
  echo " \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
  echo " \"attackers\": [$(cat "$work"/attack.*.json | paste -sd,)],"
  echo " \"study\": $check,"
  echo " \"rounds\": [$(IFS=,; echo "${results[*]}")],"
  echo " \"amplification\": $amplified}"
} >"$work/result.json"
cat "$work/result.json" >&2
/usr/bin/python3 -m json.tool "$work/result.json" | tee bench/out/server_hostile.json
