#!/usr/bin/env bash
# Copies the shared libraries that the GPU benchmark's binaries need, except the system's, into
# BUILD_DIR/lib, so that a build made here runs on the GPU machine (Ubuntu 24.04, without
# Debian's libraries): there, `bash bench/gpu/run.sh --build BUILD_DIR` puts BUILD_DIR/lib on
# LD_LIBRARY_PATH. Left out: the C library, libgcc and libstdc++ (newer there), and CUDA's own
# libraries, which the GPU machine has (libcublasLt alone is 500 MB), unless --with-cuda.
#   bash bench/gpu/bundle.sh BUILD_DIR [--with-cuda] [BINARY...]
# Default binaries: BUILD_DIR/bench/gpu/gpu_bench, BUILD_DIR/tests/unit/backend/backend_unit_tests
# and, where the build made it, the CUDA backend module they load at run time,
# BUILD_DIR/src/cli/liblayerlab_cuda.so (carry it too: run.sh points LAYERLAB_CUDA_MODULE at it).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
dir=$1
shift
with_cuda=0
bins=()
for a in "$@"; do
  if [ "$a" = --with-cuda ]; then with_cuda=1; else bins+=("$a"); fi
done
if [ ${#bins[@]} = 0 ]; then
  bins=("$dir/bench/gpu/gpu_bench" "$dir/tests/unit/backend/backend_unit_tests")
  [ -f "$dir/src/cli/liblayerlab_cuda.so" ] && bins+=("$dir/src/cli/liblayerlab_cuda.so")
fi
system='^(linux-vdso|ld-linux.*|libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|libresolv|libutil)\.so'
cuda='^(libcuda|libcudart|libcublas|libcublasLt|libnvidia-.*|libnvrtc|libnvJitLink)\.so'
mkdir -p "$dir/lib"
copied=0
for bin in "${bins[@]}"; do
  [ -x "$bin" ] || { echo "bundle.sh: no binary $bin (build it first)" >&2; exit 1; }
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then echo "bundle.sh: $bin needs $name, which is not found" >&2; exit 1; fi
    [[ $name =~ $system ]] && continue
    [[ $name =~ $cuda ]] && [ $with_cuda = 0 ] && continue
    if [ ! -e "$dir/lib/$name" ]; then
      cp -L "$path" "$dir/lib/$name"
      copied=$((copied + 1))
    fi
  done < <(ldd "$bin")
done
echo "bundle.sh: $copied libraries copied; $dir/lib now holds:"
ls -l "$dir/lib" | tail -n +2
du -sh "$dir/lib"
