#!/usr/bin/env bash
# The kernel files built for one instruction set (src/backend/cpu_gemm_avx2.cc,
# cpu_gemm_avx512.cc) must define no code but their entry point. An inline function or a
# template instantiation compiled there (a standard-library one, say) is a weak symbol, and
# the linker keeps one copy of it for the whole program, possibly the AVX-512 one, which then
# runs on a CPU without AVX-512 and dies of an illegal instruction. Data (the type names
# UBSan's function checks emit) hold no instructions and may be shared.
#
#   isa_objects_test.sh LIBLAYERLAB_BACKEND.a
set -euo pipefail
lib=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for isa in avx2 avx512; do
  member=cpu_gemm_$isa.cc.o
  if ! ar t "$lib" | grep -qx "$member"; then
    echo "FAIL: $lib has no member $member"
    status=1
    continue
  fi
  (cd "$tmp" && ar x "$lib" "$member")
  symbols=$(nm --defined-only --extern-only "$tmp/$member" | awk '{print $2, $3}')
  if ! grep -qE "^T .*sgemm_$isa" <<<"$symbols"; then
    echo "FAIL: $member does not define sgemm_$isa"
    status=1
  fi
  # Code: T (global), W (weak), i (indirect); the entry point aside.
  others=$(grep -E '^[TWi] ' <<<"$symbols" | grep -vE "^T .*sgemm_$isa" || true)
  if [ -n "$others" ]; then
    echo "FAIL: $member defines code other code may link to (compiled for $isa):"
    c++filt <<<"$others" | sed 's/^/  /'
    status=1
  fi
done
[ $status -eq 0 ] && echo "ok: each kernel object defines no code but its entry point"
exit $status
