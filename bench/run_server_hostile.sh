#!/usr/bin/env bash
# The server under hostile clients (issue 13): `layerlab serve` with 2 local workers trains
# a study submitted over HTTP while bench/server/attackers.py holds 60 connections (30 idle,
# 30 slowloris) and 500 event streams from other loopback addresses. wrk reads /healthz and
# a trials page, paced at about 100 requests/s each, alternating quiet and attacked rounds
# (the figures are the ratio of the two). At the end the study must have finished with every
# trial exactly once. Writes bench/out/server_hostile.json.
#
#   bash bench/run_server_hostile.sh    (needs scripts/install-deps.sh all and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/src/cli/layerlab
work="$(mktemp -d /tmp/layerlab-hostile.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p bench/out
ulimit -n 8192 2>/dev/null || true

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

{
  echo "{\"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"machine\": \"$(nproc) cores\","
  echo " \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
  echo " \"attackers\": [$(cat "$work"/attack.*.json | paste -sd,)],"
  echo " \"study\": $check,"
  echo " \"rounds\": [$(IFS=,; echo "${results[*]}")]}"
} >"$work/result.json"
cat "$work/result.json" >&2
/usr/bin/python3 -m json.tool "$work/result.json" | tee bench/out/server_hostile.json
