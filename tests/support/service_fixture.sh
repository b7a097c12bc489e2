#!/usr/bin/env bash
# A ctest fixture: one private server (scripts/services/SERVICE.sh) shared by every test of
# a test binary in a ctest run (tests/CMakeLists.txt, layerlab_shared_service).
#   service_fixture.sh postgres|rabbitmq up DIR     a fresh server in DIR on a free port
#   service_fixture.sh postgres|rabbitmq down DIR   stop it and remove DIR
#   service_fixture.sh postgres up DIR with-pgbouncer
#       also a PgBouncer in DIR/pgbouncer in front of it (a pool of one server connection per
#       database, as tests/support/pgbouncer_service.h starts one), found there by the tests
set -euo pipefail
usage() { echo "usage: $0 postgres|rabbitmq up|down DIR [with-pgbouncer]" >&2; exit 2; }
[ $# -eq 3 ] || { [ $# -eq 4 ] && [ "$1" = postgres ] && [ "$4" = with-pgbouncer ]; } || usage
service="$1" action="$2" dir="$3" pooler="${4:-}"
services="$(cd "$(dirname "$0")/../.." && pwd)/scripts/services"
script="$services/$service.sh" pgbouncer_script="$services/pgbouncer.sh"
[ -f "$script" ] || { echo "service_fixture.sh: no service '$service'" >&2; exit 2; }
export POSTGRES_FAST=1  # tests only: no fsync (see postgres.sh)
case "$action" in
  up)
    # A server (and its pooler) left by an interrupted run is stopped; its data is not
    # reused. The pooler first: once the directory is gone nothing could find it.
    [ "$service" != postgres ] ||
      bash "$pgbouncer_script" stop "$dir/pgbouncer" >/dev/null 2>&1 || true
    bash "$script" stop "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    for _ in 1 2 3 4 5; do
      port=$((20000 + RANDOM % 25000))
      if bash "$script" start "$dir" "$port"; then
        [ -n "$pooler" ] || exit 0
        if POOL_SIZE=1 bash "$pgbouncer_script" start "$dir/pgbouncer" \
          $((20000 + RANDOM % 25000)) "$port"; then exit 0; fi
        bash "$pgbouncer_script" stop "$dir/pgbouncer" >/dev/null 2>&1 || true
      fi
      bash "$script" stop "$dir" >/dev/null 2>&1 || true
      rm -rf "$dir"
    done
    echo "service_fixture.sh: could not start $service in $dir" >&2
    exit 1
    ;;
  down)
    [ -z "$pooler" ] || bash "$pgbouncer_script" stop "$dir/pgbouncer"
    bash "$script" stop "$dir"
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
