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

// Up to 128 x 128 x 128 (or 32 x 256 x 256): bench/gemm_bench measured the kernels 1.1-2x
// OpenBLAS below it (3 of 3 products faster at 32 x 256 x 256, 2 of 3 at 128^3), mixed at
// twice that (64 x 256 x 256: 1 of 3) and mostly slower from four times (docs/benchmarks.md).
constexpr double kSmallGemmMaxFlops = 2.0 * 128 * 128 * 128;

bool use_small_gemm(int m, int n, int k) {
  const double flops = 2.0 * m * n * k;
  return flops <= kSmallGemmMaxFlops;
}

}  // namespace layerlab::backend::cpu
