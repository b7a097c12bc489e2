#!/usr/bin/env bash
# A private PgBouncer in transaction pooling mode, in one directory, in front of a
# PostgreSQL server started by postgres.sh (tests, benchmarks, trying a pooled store).
#
#   pgbouncer.sh start DIR PORT UPSTREAM_PORT   write DIR/pgbouncer.ini and start; the last
#                                               line on stdout is the store URL:
#     postgresql://layerlab:layerlab@127.0.0.1:PORT/layerlab?pool_mode=transaction
#   pgbouncer.sh stop DIR                       stop it (no-op when it is not running)
#   pgbouncer.sh status DIR                     prints the URL and exits 0 while running;
#                                               3 when stopped
#
# It listens on 127.0.0.1:PORT only and passes any database name through to the server on
# 127.0.0.1:UPSTREAM_PORT as role `layerlab` (password `layerlab`, postgres.sh's role), each
# (database, role) with a pool of POOL_SIZE server connections that the clients' transactions
# take turns on. layerlab needs `?pool_mode=transaction` in such a URL (docs/cluster.md).
# Log: DIR/pgbouncer.log. As root it runs as the `postgres` user (PgBouncer refuses root).
#
# Environment:
#   POOL_SIZE=N       server connections per database (default 4)
#   PGBOUNCER_WAIT=S  seconds to wait for start and stop (default 30)
set -euo pipefail

usage() {
  echo "usage: $0 start DIR PORT UPSTREAM_PORT | stop DIR | status DIR" >&2
  exit 2
}
die() {
  echo "pgbouncer.sh: $*" >&2
  exit 1
}

[ $# -ge 2 ] || usage
cmd="$1"
case "$cmd" in
  start) [ $# -eq 4 ] || usage ;;
  stop | status) [ $# -eq 2 ] || usage ;;
  *) usage ;;
esac
for n in "${@:3}"; do
  case "$n" in
    '' | *[!0-9]*) die "bad port '$n'" ;;
  esac
done
pool_size="${POOL_SIZE:-4}"
case "$pool_size" in
  '' | *[!0-9]* | 0) die "bad POOL_SIZE '$pool_size' (a positive number)" ;;
esac
wait_s="${PGBOUNCER_WAIT:-30}"

if [ "$cmd" = start ]; then
  mkdir -p "$2" 2>/dev/null || die "cannot create directory '$2'"
elif [ ! -d "$2" ]; then
  [ "$cmd" = stop ] && exit 0
  echo "pgbouncer.sh: no pooler running in $2" >&2
  exit 3
fi
dir="$(cd "$2" && pwd)"
pid_file="$dir/pgbouncer.pid"
port_file="$dir/port"
log="$dir/pgbouncer.log"

url() {
  echo "postgresql://layerlab:layerlab@127.0.0.1:$1/layerlab?pool_mode=transaction"
}

running() {
  [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

start() {
  local port="$1" upstream="$2"
  if running; then
    [ "$port" = "$(cat "$port_file")" ] ||
      die "the pooler in $dir is running on port $(cat "$port_file"), not $port; stop it first"
    url "$port"
    return
  fi
  command -v pgbouncer >/dev/null 2>&1 ||
    die "no pgbouncer on PATH; run scripts/install-deps.sh test"
  rm -f "$pid_file"
  echo '"layerlab" "layerlab"' >"$dir/users.txt"
  chmod 600 "$dir/users.txt"  # a password
  cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$upstream
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/users.txt
pool_mode = transaction
default_pool_size = $pool_size
max_client_conn = 1000
logfile = $log
pidfile = $pid_file
EOF
  echo "$port" >"$port_file"
  touch "$log"
  local as=()
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' user"
    chown -R postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  # Ready when this start's part of the log says so. The port answering is not enough: the
  # daemon forks before it binds, and a port another process holds answers too, while ours
  # logs "nowhere to listen on" and exits.
  local from
  from=$(($(stat -c %s "$log") + 1))
  "${as[@]}" pgbouncer -d "$dir/pgbouncer.ini" >>"$log" 2>&1 ||
    { tail -n 5 "$log" >&2; die "pgbouncer did not start (log: $log)"; }
  local waited lines
  for ((waited = 0; ; waited++)); do
    lines="$(tail -c "+$from" "$log")"
    [[ "$lines" != *"process up:"* ]] || break
    if [[ "$lines" == *FATAL* ]] || [ "$waited" -ge $((wait_s * 10)) ]; then
      tail -n 5 <<<"$lines" >&2
      die "not listening on 127.0.0.1:$port (log: $log)"
    fi
    sleep 0.1
  done
  running || die "pgbouncer exited after starting (log: $log)"
  url "$port"
}

stop() {
  running || return 0
  local pid
  pid="$(cat "$pid_file")"
  kill -TERM "$pid" 2>/dev/null || true  # PgBouncer 1.18: immediate shutdown
  for _ in $(seq 1 $((wait_s * 10))); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

case "$cmd" in
  start) start "$3" "$4" ;;
  stop) stop ;;
  status)
    if running; then
      url "$(cat "$port_file")"
    else
      echo "pgbouncer.sh: no pooler running in $dir" >&2
      exit 3
    fi
    ;;
esac
