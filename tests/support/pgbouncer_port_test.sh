#!/usr/bin/env bash
# pgbouncer.sh start on a port another process listens on fails, naming the port, and leaves
# no pooler behind. It used to take the other process's answer for its pooler's and print a
# URL that led there (ctest's fixtures pick random ports, so this happened in CI).
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/services/pgbouncer.sh"
dir="$(mktemp -d /tmp/llpgb.XXXXXX)"
trap 'bash "$script" stop "$dir/first" >/dev/null 2>&1 || true
      bash "$script" stop "$dir/second" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
chmod 755 "$dir"
fail() { echo "pgbouncer_port_test: $*" >&2; exit 1; }
poolers() { pgrep -f "pgbouncer -d $dir/$1/pgbouncer.ini" | wc -l; }

# The upstream port is never dialled: no client connects.
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 25000))
  bash "$script" start "$dir/first" "$port" 1 >/dev/null 2>&1 && break
  port=""
done
[ -n "$port" ] || fail "could not start the first pooler"
[ "$(poolers first)" = 1 ] || fail "the first pooler is not running"

if bash "$script" start "$dir/second" "$port" 1 >"$dir/out" 2>"$dir/err"; then
  fail "a second pooler on taken port $port was reported started: $(cat "$dir/out")"
fi
grep -q "not listening on 127.0.0.1:$port" "$dir/err" ||
  fail "the message does not name the port: $(cat "$dir/err")"
[ ! -s "$dir/out" ] || fail "a URL was printed for a pooler that is not there: $(cat "$dir/out")"
[ "$(poolers second)" = 0 ] || fail "the second pooler is still running"
[ "$(poolers first)" = 1 ] || fail "the first pooler went away"
echo "pgbouncer_port_test: ok"
