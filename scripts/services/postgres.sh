#!/usr/bin/env bash
# A private PostgreSQL server for layerlab's store, in one directory.
#
#   postgres.sh start DIR [PORT]   initialise DIR if needed and start the server; the last
#                                  line on stdout is the store URL:
#                                    postgresql://layerlab:layerlab@127.0.0.1:PORT/layerlab
#   postgres.sh stop DIR           fast shutdown (no-op when it is not running)
#   postgres.sh restart DIR        fast stop, then start on the same port (fault tests)
#   postgres.sh status DIR         prints the URL and exits 0 while running; 3 when stopped
#
# The server listens only on 127.0.0.1:PORT (default 5432; a later start without PORT keeps
# the port of the first) and on a unix socket in DIR. Role `layerlab` (password `layerlab`,
# CREATEDB) owns database `layerlab`; TCP connections authenticate with scram-sha-256, the
# socket with peer authentication for the server's own OS user. Data lives in DIR/data, the
# server log in DIR/postgres.log. Starting a running server just prints its URL.
#
# As root the server runs as the `postgres` user (DIR is chowned to it, and every directory
# above DIR must be searchable by it); as any other user, as that user.
#
# Environment:
#   POSTGRES_FAST=1  for tests only: fsync=off, synchronous_commit=off, full_page_writes=off
#                    (and initdb --no-sync). A crash of the machine can lose or corrupt the
#                    data; never use it for a store you care about.
#   PG_BIN=DIR       the PostgreSQL binaries (default: the newest /usr/lib/postgresql/*/bin,
#                    else initdb on PATH)
#   POSTGRES_WAIT=S  seconds to wait for start and stop (default 60)
set -euo pipefail

usage() {
  echo "usage: $0 start DIR [PORT] | stop DIR | restart DIR | status DIR" >&2
  exit 2
}
die() {
  echo "postgres.sh: $*" >&2
  exit 1
}

[ $# -ge 2 ] || usage
cmd="$1"
case "$cmd" in
  start | stop | restart | status) ;;
  *) usage ;;
esac
[ -n "$2" ] || usage
if [ "$cmd" = start ]; then
  mkdir -p "$2" 2>/dev/null || die "cannot create directory '$2'"
elif [ ! -d "$2" ]; then
  case "$cmd" in
    stop) exit 0 ;;
    status)
      echo "postgres.sh: no server running in $2" >&2
      exit 3
      ;;
    *) die "no server in $2 (start it first)" ;;
  esac
fi
dir="$(cd "$2" && pwd)"
data="$dir/data"
log="$dir/postgres.log"
port_file="$dir/port"
wait_s="${POSTGRES_WAIT:-60}"

find_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] || die "PG_BIN=$PG_BIN has no initdb"
    echo "$PG_BIN"
    return
  fi
  local b
  b="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  if [ -n "$b" ] && [ -x "$b/initdb" ]; then
    echo "$b"
    return
  fi
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return
  fi
  die "no PostgreSQL server binaries (initdb) in /usr/lib/postgresql/*/bin or on PATH;" \
    "run scripts/install-deps.sh test"
}
bin="$(find_bin)"

# Runs a command as the server's OS user.
as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

prepare_dir() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' user" \
      "(install the postgresql package, or run this script as another user)"
    chown postgres: "$dir"
    [ ! -e "$log" ] || chown postgres: "$log"
    runuser -u postgres -- test -w "$dir" ||
      die "the postgres user cannot write '$dir' (is a directory above it private?)"
  fi
  chmod 700 "$dir"
}

url() {
  echo "postgresql://layerlab:layerlab@127.0.0.1:$1/layerlab"
}

stored_port() {
  if [ -f "$port_file" ]; then cat "$port_file"; fi
}

running() {
  [ -f "$data/PG_VERSION" ] && as_server "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1
}

fail_with_log() {
  echo "postgres.sh: $1; the server log is $log:" >&2
  tail -n 20 "$log" >&2 2>/dev/null || true
  exit 1
}

start() {
  local port="${1:-}"
  [ -n "$port" ] || port="$(stored_port)"
  [ -n "$port" ] || port=5432
  case "$port" in
    '' | *[!0-9]*) die "bad port '$port'" ;;
  esac
  if running; then
    [ "$port" = "$(stored_port)" ] ||
      die "the server in $dir is running on port $(stored_port), not $port; stop it first"
    url "$port"
    return
  fi
  # The socket path must fit in sun_path (107 bytes).
  [ ${#dir} -le 90 ] || die "'$dir' is too long for a unix socket path; use a shorter DIR"
  prepare_dir
  if [ ! -f "$data/PG_VERSION" ]; then
    rm -rf "$data"
    local sync=()
    [ "${POSTGRES_FAST:-0}" = 1 ] && sync=(--no-sync)
    as_server "$bin/initdb" -D "$data" --auth-local=peer --auth-host=scram-sha-256 \
      --encoding=UTF8 --locale=C "${sync[@]}" >"$dir/initdb.log" 2>&1 ||
      die "initdb failed; see $dir/initdb.log: $(tail -n 3 "$dir/initdb.log" | tr '\n' ' ')"
    # Loopback only: no replication or remote entries beyond what initdb wrote for
    # 127.0.0.1 and ::1 (both scram-sha-256).
    cat >>"$data/postgresql.conf" <<EOF

# layerlab (scripts/services/postgres.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
password_encryption = scram-sha-256
max_connections = 200
EOF
  fi
  echo "$port" >"$port_file"
  local opts="-p $port"
  if [ "${POSTGRES_FAST:-0}" = 1 ]; then
    opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  : >"$log"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$log" "$port_file"
  as_server "$bin/pg_ctl" -D "$data" -l "$log" -o "$opts" -w -t "$wait_s" start >/dev/null ||
    fail_with_log "the server in $dir did not start on 127.0.0.1:$port"
  local i
  for ((i = 0; i < wait_s * 10; i++)); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    sleep 0.1
  done
  "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" ||
    fail_with_log "the server in $dir does not accept connections on 127.0.0.1:$port"
  # The role and database, once (idempotent): over the socket as the superuser.
  as_server "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -d postgres >/dev/null \
    2>>"$log" <<'EOF' || fail_with_log "could not create role and database 'layerlab'"
SELECT 'CREATE ROLE layerlab LOGIN CREATEDB PASSWORD ''layerlab'''
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'layerlab') \gexec
SELECT 'CREATE DATABASE layerlab OWNER layerlab'
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'layerlab') \gexec
EOF
  url "$port"
}

stop() {
  [ -f "$data/PG_VERSION" ] || return 0
  running || return 0
  as_server "$bin/pg_ctl" -D "$data" -m fast -w -t "$wait_s" stop >/dev/null ||
    fail_with_log "the server in $dir did not stop"
}

case "$cmd" in
  start)
    [ $# -le 3 ] || usage
    start "${3:-}"
    ;;
  stop)
    [ $# -eq 2 ] || usage
    stop
    ;;
  restart)
    [ $# -eq 2 ] || usage
    [ -f "$data/PG_VERSION" ] || die "no server in $dir (start it first)"
    stop
    start "$(stored_port)"
    ;;
  status)
    [ $# -eq 2 ] || usage
    if running; then
      url "$(stored_port)"
    else
      echo "postgres.sh: no server running in $dir" >&2
      exit 3
    fi
    ;;
  *) usage ;;
esac
