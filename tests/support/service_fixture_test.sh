#!/usr/bin/env bash
# service_fixture.sh after an interrupted run: a second `up` over the first one's server and
# pooler (as when ctest is killed before its `down`) leaves exactly one of each, and `down`
# leaves none. Until the `up` stopped the old pooler, it removed the directory that held its
# pid file and the pooler ran on for good.
set -euo pipefail
fixture="$(cd "$(dirname "$0")" && pwd)/service_fixture.sh"
dir="$(mktemp -d /tmp/llfxt.XXXXXX)"
trap 'bash "$fixture" postgres down "$dir" with-pgbouncer >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
chmod 755 "$dir"
poolers() { pgrep -f "pgbouncer -d $dir/pgbouncer/pgbouncer.ini" | wc -l; }
servers() { pgrep -f "postgres -D $dir/data" | wc -l; }
fail() { echo "service_fixture_test: $*" >&2; exit 1; }

bash "$fixture" postgres up "$dir" with-pgbouncer >/dev/null
[ "$(poolers)" = 1 ] || fail "after the first up: $(poolers) poolers, want 1"
bash "$fixture" postgres up "$dir" with-pgbouncer >/dev/null
[ "$(poolers)" = 1 ] || fail "after an up over a left-over run: $(poolers) poolers, want 1"
[ "$(servers)" = 1 ] || fail "after an up over a left-over run: $(servers) servers, want 1"
bash "$fixture" postgres down "$dir" with-pgbouncer >/dev/null
[ "$(poolers)" = 0 ] || fail "after down: $(poolers) poolers left"
[ "$(servers)" = 0 ] || fail "after down: $(servers) servers left"
echo "service_fixture_test: ok"
