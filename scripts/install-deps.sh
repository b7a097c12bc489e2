#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking layerlab needs.
# Idempotent: packages already present are skipped by apt. Run as root on Debian 12.
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config git clang-format
  libopenblas-dev libopenblas-serial-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libssl-dev
  libpq-dev librabbitmq-dev libmicrohttpd-dev ccache
)
# The dashboard's Plotly comes from npm (web/package-lock.json); Debian's Node.js unless the
# machine already has one.
command -v npm >/dev/null 2>&1 || BUILD_PKGS+=(nodejs npm)
# Browser tests drive Debian's Chromium through playwright-core (from npm, no browser download).
BROWSER_PKGS=(chromium)
# Distributed mode's services, started by the tests and the cluster quickstart on loopback
# (scripts/services/): PostgreSQL (the store) and RabbitMQ (the broker); PgBouncer (the
# store behind a transaction pooler); iproute2 for the test that puts a worker on another
# "host" (a network namespace).
SERVICE_PKGS=(postgresql pgbouncer rabbitmq-server iproute2)
# The server load benchmark (wrk, and the sqlite3 shell to count rows).
LOAD_PKGS=(wrk sqlite3)
# The model-export test reads safetensors files with an independent numpy reader; the
# Python client's tests (tests/integration/python) need pandas, matplotlib (the example
# plot), jsonschema (responses against docs/openapi.json) and setuptools (pip builds the
# client offline).
TEST_PY_PKGS=(python3 python3-numpy python3-pandas python3-matplotlib python3-jsonschema
              python3-setuptools python3-pip)
# Reference generation (PyTorch trajectories), dataset export and the peer benchmark.
PYTHON_PKGS=(python3 python3-numpy python3-torch python3-sklearn)
# The peers the system benchmarks compare against (../shared/peers): Celery + RabbitMQ, Optuna.
PEER_PKGS=(python3-celery python3-optuna rabbitmq-server)
# Optional data: fashion-mnist in IDX format under /usr/share/datasets/fashion-mnist.
DATA_PKGS=(dataset-fashion-mnist)

# build: compile layerlab; test: build + data the tests read; all: + Python for the
# reference generators and the peer benchmarks.
want=("${BUILD_PKGS[@]}")
case "${1:-all}" in
  build) ;;
  test) want+=("${DATA_PKGS[@]}" "${BROWSER_PKGS[@]}" "${SERVICE_PKGS[@]}" "${TEST_PY_PKGS[@]}" clang libclang-rt-14-dev) ;;
  all) want+=("${DATA_PKGS[@]}" "${BROWSER_PKGS[@]}" "${SERVICE_PKGS[@]}" "${TEST_PY_PKGS[@]}" "${PYTHON_PKGS[@]}"
              "${PEER_PKGS[@]}" "${LOAD_PKGS[@]}") ;;
  *) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages at the locked versions (Plotly for the build, playwright-core for the
# browser tests); again only when the lock file changed since the last install.
web="$(dirname "$0")/../web"
if [ ! -f "$web/node_modules/.package-lock.json" ] ||
   [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "install-deps: npm ci in web/"
  npm ci --prefix "$web" --no-audit --no-fund
fi
