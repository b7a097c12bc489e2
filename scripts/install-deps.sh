#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking layerlab needs.
# Idempotent: packages already present are skipped by apt. Run as root on Debian 12.
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config git clang-format
  libopenblas-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
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
  test) want+=("${DATA_PKGS[@]}") ;;
  all) want+=("${DATA_PKGS[@]}" "${PYTHON_PKGS[@]}" "${PEER_PKGS[@]}") ;;
  *) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
