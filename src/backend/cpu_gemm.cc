#include "backend/cpu_gemm.h"

#include <cstdlib>
#include <cstring>

namespace layerlab::backend::cpu {

bool have_avx2_fma() {
  // LAYERLAB_CPU_GEMM=blas keeps every product on OpenBLAS (for A/B measurements).
  static const bool have = [] {
    const char* env = std::getenv("LAYERLAB_CPU_GEMM");
    if (env && std::strcmp(env, "blas") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return have;
}

// Up to 128 x 256 x 256, where bench/gemm_bench measured the kernels level with OpenBLAS
// (docs/benchmarks.md); below it they are 1.1-2x faster, above it OpenBLAS's packing pays.
constexpr double kSmallGemmMaxFlops = 2.0 * 128 * 256 * 256;

bool use_small_gemm(int m, int n, int k) {
  const double flops = 2.0 * m * n * k;
  return flops <= kSmallGemmMaxFlops;
}

}  // namespace layerlab::backend::cpu
