#!/usr/bin/env bash
# A private RabbitMQ node on loopback, for integration tests and for trying layerlab's
# AMQP broker by hand. Uses the machine's rabbitmq-server (Debian 12: 3.10.8 on Erlang 25;
# `apt-get install rabbitmq-server`; scripts/install-deps.sh installs it).
#
#   rabbitmq.sh start   DIR [PORT [DIST_PORT]]   start (or find running) a node; the last
#                                                stdout line is its AMQP URL
#   rabbitmq.sh stop    DIR                      stop it (graceful, then the VM is killed)
#   rabbitmq.sh restart DIR                      stop, then start with the same ports and data
#   rabbitmq.sh status  DIR                      "running PID URL" (exit 0) / "stopped" (exit 3)
#   rabbitmq.sh ctl     DIR ARGS...              rabbitmqctl ARGS... against this node
#   rabbitmq.sh url     DIR                      the AMQP URL (from the recorded port)
#
# Everything lives in DIR: mnesia (queues, messages, quorum logs), logs, pid file,
# enabled_plugins, the Erlang cookie (HOME=DIR) and the ports. Several nodes run side by
# side when each has its own DIR and PORT: the node is layerlab-PORT@localhost, its Erlang
# distribution port is DIST_PORT (default PORT+20000, or PORT-20000 when that would pass
# 65535), epmd on 127.0.0.1:4369 is shared. AMQP, distribution and epmd bind 127.0.0.1 only.
# The user is guest/guest (RabbitMQ allows it on loopback only).
#
# Environment:
#   RABBITMQ_MANAGEMENT=1            start: enable the management UI on 127.0.0.1:MGMT_PORT
#                                    (RABBITMQ_MANAGEMENT_PORT, default PORT+10000 or
#                                    PORT-10000); kept by restart
#   RABBITMQ_START_TIMEOUT=S         start: give up after S seconds (default 60)
#   LAYERLAB_RABBITMQ_OWNER_PID=PID  start: a watchdog stops the node (and with
#                                    LAYERLAB_RABBITMQ_CLEANUP=1 removes DIR) once PID exits,
#                                    so a crashed test does not leave a broker behind;
#                                    restart keeps the watchdog's owner
#
# Run as root, the node runs as the `rabbitmq` user (like Debian's wrapper, which we bypass
# so that HOME and the other settings stay ours) and DIR is chowned to it; run as another
# user, the node runs as that user.
set -euo pipefail

RMQ_BIN=/usr/lib/rabbitmq/bin
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

die() { echo "rabbitmq.sh: $*" >&2; exit 1; }
usage() {
  sed -n '/^#   rabbitmq.sh/p' "$SELF" | sed 's/^#  //' >&2
  exit 2
}

[ -x "$RMQ_BIN/rabbitmq-server" ] ||
  die "rabbitmq-server is not installed ($RMQ_BIN missing): run scripts/install-deps.sh test (or apt-get install rabbitmq-server)"

cmd="${1:-}"
[ $# -ge 2 ] || usage
DIR="$2"
shift 2
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
PORT="" DIST_PORT="" MGMT=0 MGMT_PORT=""

# The user the node runs as.
RUN_AS=()
if [ "$(id -u)" -eq 0 ] && id rabbitmq >/dev/null 2>&1; then
  RUN_AS=(setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups)
fi

valid_port() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ]; }
# A port derived from PORT by +OFF, or -OFF when +OFF passes 65535.
derived_port() {
  local p=$(($1 + $2))
  [ "$p" -le 65535 ] || p=$(($1 - $2))
  [ "$p" -ge 1024 ] || die "cannot derive a port from $1 (give it explicitly)"
  echo "$p"
}

# Reads DIR/ports (written by start) into PORT, DIST_PORT, MGMT, MGMT_PORT.
load_ports() {
  [ -f "$DIR/ports" ] || return 1
  # shellcheck disable=SC1091
  . "$DIR/ports"
}

# Exports the variables rabbitmq-server and rabbitmqctl read; needs PORT and DIST_PORT.
node_env() {
  export HOME="$DIR"
  export RABBITMQ_NODENAME="layerlab-$PORT@localhost"
  export RABBITMQ_USE_LONGNAME=false
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$PORT"
  export RABBITMQ_DIST_PORT="$DIST_PORT"
  export ERL_EPMD_ADDRESS=127.0.0.1
  export ERL_EPMD_PORT=4369
  export RABBITMQ_CONF_ENV_FILE="$DIR/rabbitmq-env.conf"
  export RABBITMQ_CONFIG_FILE="$DIR/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$DIR/advanced.config"
  export RABBITMQ_MNESIA_BASE="$DIR/mnesia"
  export RABBITMQ_LOG_BASE="$DIR/log"
  export RABBITMQ_LOGS="$DIR/log/rabbit.log"
  export RABBITMQ_PID_FILE="$DIR/rabbit.pid"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins"
  export ERL_CRASH_DUMP="$DIR/log/erl_crash.dump"
  # Distribution on loopback only; no busy-waiting schedulers (they burn CPU that the
  # tests' own trainers want on small machines).
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
  export RABBITMQ_SCHEDULER_BUSY_WAIT_THRESHOLD=none
  # rabbitmqctl as a hidden node that listens on no port (no clashes between many CLIs).
  export RABBITMQ_CTL_ERL_ARGS="-dist_listen false"
  unset RABBITMQ_ENABLED_PLUGINS RABBITMQ_ERLANG_COOKIE
}

ctl() { (cd "$DIR" && "$RMQ_BIN/rabbitmqctl" -q "$@"); }

url() { echo "amqp://guest:guest@127.0.0.1:$PORT/%2f"; }

# A pid from FILE when that process is alive (not a zombie) and its command line matches
# the pattern; empty otherwise (a stale pid file, or a pid reused by something else).
live_pid() {
  local p=""
  [ -s "$1" ] && p="$(cat "$1" 2>/dev/null)"
  [ -n "$p" ] && [ -d "/proc/$p" ] || return 0
  grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && return 0
  tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "$2" || return 0
  echo "$p"
}
# The Erlang VM of this node (its pid file is written by the node itself while booting);
# its command line names DIR as the VM's home.
vm_pid() { live_pid "$DIR/rabbit.pid" "beam.* -home $DIR "; }
# Debian's rabbitmq-server shell wrapper, the VM's parent (it forwards signals); until it
# has been exec'd, the subshell of this script that will become it.
wrapper_pid() { live_pid "$DIR/wrapper.pid" "rabbitmq"; }

# For a subshell about to exec a daemon: closes every descriptor above 2, so that no pipe
# of whoever ran this script stays open in the daemon.
close_fds() {
  local fd
  for fd in /proc/self/fd/*; do
    fd="${fd##*/}"
    if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Ends this DIR's watchdog (not when the watchdog itself is the caller).
kill_watchdog() {
  local w
  w="$(live_pid "$DIR/watchdog.pid" "watchdog [0-9]+ .* $DIR")"
  if [ -n "$w" ] && [ "$w" != "${LAYERLAB_RABBITMQ_WATCHDOG_SELF:-}" ]; then
    kill "$w" 2>/dev/null || true
  fi
  rm -f "$DIR/watchdog.pid"
}

start_watchdog() {
  local owner="${LAYERLAB_RABBITMQ_OWNER_PID:-}"
  [ -z "$owner" ] && [ -s "$DIR/owner" ] && owner="$(cat "$DIR/owner")"
  [ -n "$owner" ] || return 0
  kill_watchdog
  echo "$owner" >"$DIR/owner"
  echo "${LAYERLAB_RABBITMQ_CLEANUP:-0}" >"$DIR/owner.cleanup"
  # Polls every second; when the owner is gone, stops the node (and removes DIR if asked).
  (close_fds && exec setsid bash -c '
    owner=$1 self=$2 dir=$3
    alive() { [ -d /proc/$owner ] && ! grep -q "^State:[[:space:]]*Z" /proc/$owner/status 2>/dev/null; }
    while alive; do sleep 1; done
    cleanup=$(cat "$dir/owner.cleanup" 2>/dev/null || echo 0)
    LAYERLAB_RABBITMQ_WATCHDOG_SELF=$$ "$self" stop "$dir" >/dev/null 2>&1
    [ "$cleanup" = 1 ] && rm -rf "$dir"
  ' watchdog "$owner" "$SELF" "$DIR") </dev/null >/dev/null 2>&1 &
  echo $! >"$DIR/watchdog.pid"
}

do_start() {
  local t0 timeout
  t0=$(date +%s%N)
  timeout="${RABBITMQ_START_TIMEOUT:-60}"
  LOG_OFFSET=""
  node_env

  local what="up in"
  if [ -n "$(vm_pid)$(wrapper_pid)" ]; then
    what="already running; waited"  # idempotent: running (or booting) with these ports
  else
    launch
  fi
  await_boot "$timeout"
  start_watchdog
  local ms=$((($(date +%s%N) - t0) / 1000000))
  echo "rabbitmq: node layerlab-$PORT@localhost $what $((ms / 1000)).$((ms % 1000 / 100))s" \
    "(pid $(vm_pid), dist port $DIST_PORT, log $RABBITMQ_LOGS)"
  if [ "$MGMT" = 1 ]; then
    echo "rabbitmq: management http://127.0.0.1:$MGMT_PORT/ (guest/guest)"
  fi
  url
}

# Writes the node's files and starts it in the background.
launch() {
  if port_open "$PORT"; then
    die "port $PORT on 127.0.0.1 is taken by another process"
  fi

  mkdir -p "$DIR/mnesia" "$DIR/log"
  : >"$DIR/rabbitmq-env.conf"
  if [ "$MGMT" = 1 ]; then
    echo '[rabbitmq_management].' >"$DIR/enabled_plugins"
    printf 'management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = %s\n' "$MGMT_PORT" \
      >"$DIR/rabbitmq.conf"
  else
    echo '[].' >"$DIR/enabled_plugins"
    : >"$DIR/rabbitmq.conf"
  fi
  cat >>"$DIR/rabbitmq.conf" <<'EOF'
# written by scripts/services/rabbitmq.sh
log.console = false
log.file.level = info
# a small temp file system must not block publishers
disk_free_limit.absolute = 10MB
EOF
  if [ ! -s "$DIR/.erlang.cookie" ]; then
    (umask 077 && head -c 4096 /dev/urandom | tr -dc 'A-Z' | head -c 20 >"$DIR/.erlang.cookie")
    [ -s "$DIR/.erlang.cookie" ] || echo LAYERLABPRIVATECOOKIE >"$DIR/.erlang.cookie"
    chmod 400 "$DIR/.erlang.cookie"
  fi
  rm -f "$DIR/rabbit.pid" "$DIR/wrapper.pid"
  touch "$DIR/log/rabbit.log"
  LOG_OFFSET=$(($(stat -c %s "$DIR/log/rabbit.log") + 1))
  if [ ${#RUN_AS[@]} -gt 0 ]; then
    chown -R rabbitmq:rabbitmq "$DIR"
    "${RUN_AS[@]}" test -w "$DIR" -a -x "$DIR" ||
      die "user rabbitmq cannot write $DIR (is a parent directory private?)"
  fi

  # The node in its own session, with no inherited descriptors but the log (so nobody
  # reading this script's output waits for the broker to exit). $! is Debian's wrapper
  # script, which runs the VM as its child.
  (
    cd "$DIR"
    close_fds
    exec setsid "${RUN_AS[@]}" "$RMQ_BIN/rabbitmq-server"
  ) </dev/null >>"$DIR/log/server.out" 2>&1 &
  echo $! >"$DIR/wrapper.pid"
}

# Bounded wait (seconds) until the node has booted: the log line "Server startup
# complete" written by the node launched just now (LOG_OFFSET: where its log started),
# and the AMQP port open. For a node found already running, rabbitmqctl await_startup.
booted() {
  port_open "$PORT" || return 1
  if [ -n "${LOG_OFFSET:-}" ]; then
    tail -c "+$LOG_OFFSET" "$DIR/log/rabbit.log" 2>/dev/null | grep -q 'Server startup complete'
  else
    ctl await_startup --timeout 5 >/dev/null 2>&1
  fi
}
await_boot() {
  local timeout=$1 deadline
  deadline=$(($(date +%s) + timeout))
  until booted; do
    if [ -z "$(wrapper_pid)" ] && [ -z "$(vm_pid)" ]; then
      die "the node exited during startup; see $RABBITMQ_LOGS and $DIR/log/server.out"
    fi
    [ "$(date +%s)" -lt "$deadline" ] ||
      die "the node did not start within ${timeout}s; see $RABBITMQ_LOGS and $DIR/log/server.out"
    sleep 0.1
  done
}

# Stops the node: SIGTERM to the VM (RabbitMQ shuts down gracefully, keeping durable
# queues and persistent messages), SIGKILL to the VM and its wrapper after
# RABBITMQ_STOP_TIMEOUT seconds (default 30).
do_stop() {
  local pid wpid i limit=$((${RABBITMQ_STOP_TIMEOUT:-30} * 10))
  pid="$(vm_pid)"
  wpid="$(wrapper_pid)"
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
  elif [ -n "$wpid" ]; then
    kill -TERM "$wpid" 2>/dev/null || true
  fi
  for ((i = 0; i < limit; i++)); do
    [ -n "$(vm_pid)$(wrapper_pid)" ] || break
    sleep 0.1
  done
  pid="$(vm_pid)"
  wpid="$(wrapper_pid)"
  if [ -n "$pid$wpid" ]; then
    echo "rabbitmq: node did not stop in ${RABBITMQ_STOP_TIMEOUT:-30}s; killing $pid $wpid" >&2
    # shellcheck disable=SC2086
    kill -KILL $pid $wpid 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$DIR/wrapper.pid" "$DIR/rabbit.pid"
}

case "$cmd" in
start)
  if load_ports && [ -n "$(vm_pid)$(wrapper_pid)" ]; then
    [ -z "${1:-}" ] || [ "$1" = "$PORT" ] || die "already running in $DIR on port $PORT"
  else
    # A stopped DIR starts again on its recorded ports unless told otherwise.
    [ -z "${1:-}" ] || [ "$1" = "$PORT" ] || DIST_PORT=""
    PORT="${1:-${PORT:-5672}}"
    valid_port "$PORT" || die "bad port '$PORT'"
    DIST_PORT="${2:-${RABBITMQ_DIST_PORT:-${DIST_PORT:-$(derived_port "$PORT" 20000)}}}"
    valid_port "$DIST_PORT" || die "bad distribution port '$DIST_PORT'"
    MGMT="${RABBITMQ_MANAGEMENT:-0}"
    MGMT_PORT="${RABBITMQ_MANAGEMENT_PORT:-$(derived_port "$PORT" 10000)}"
    printf 'PORT=%s\nDIST_PORT=%s\nMGMT=%s\nMGMT_PORT=%s\n' "$PORT" "$DIST_PORT" "$MGMT" \
      "$MGMT_PORT" >"$DIR/ports"
  fi
  do_start
  ;;
stop)
  load_ports || { echo "rabbitmq: nothing started in $DIR"; exit 0; }
  kill_watchdog
  rm -f "$DIR/owner" "$DIR/owner.cleanup"
  do_stop
  echo "rabbitmq: stopped"
  ;;
restart)
  load_ports || die "nothing was started in $DIR"
  kill_watchdog
  do_stop
  do_start
  ;;
status)
  load_ports || { echo stopped; exit 3; }
  node_env
  pid="$(vm_pid)"
  if [ -n "$pid" ] && port_open "$PORT"; then
    echo "running $pid $(url)"
  else
    echo stopped
    exit 3
  fi
  ;;
ctl)
  load_ports || die "nothing was started in $DIR"
  node_env
  ctl "$@"
  ;;
url)
  load_ports || die "nothing was started in $DIR"
  url
  ;;
*) usage ;;
esac
