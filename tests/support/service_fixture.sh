#!/usr/bin/env bash
# A ctest fixture: one private server (scripts/services/SERVICE.sh) shared by every test of
# a test binary in a ctest run (tests/CMakeLists.txt, layerlab_shared_service).
#   service_fixture.sh postgres|rabbitmq up DIR     a fresh server in DIR on a free port
#   service_fixture.sh postgres|rabbitmq down DIR   stop it and remove DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 postgres|rabbitmq up|down DIR" >&2; exit 2; }
service="$1" action="$2" dir="$3"
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/services/$service.sh"
[ -f "$script" ] || { echo "service_fixture.sh: no service '$service'" >&2; exit 2; }
export POSTGRES_FAST=1  # tests only: no fsync (see postgres.sh)
case "$action" in
  up)
    # A server left by an interrupted run is stopped; its data is not reused.
    bash "$script" stop "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    for _ in 1 2 3 4 5; do
      port=$((20000 + RANDOM % 25000))
      if bash "$script" start "$dir" "$port"; then exit 0; fi
      bash "$script" stop "$dir" >/dev/null 2>&1 || true
      rm -rf "$dir"
    done
    echo "service_fixture.sh: could not start $service in $dir" >&2
    exit 1
    ;;
  down)
    bash "$script" stop "$dir"
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 postgres|rabbitmq up|down DIR" >&2; exit 2 ;;
esac
