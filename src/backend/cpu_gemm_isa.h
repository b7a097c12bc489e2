// What cpu_gemm.cc hands the kernel files (cpu_gemm_avx2.cc, cpu_gemm_avx512.cc): one product,
// already checked and resolved. Only those three files include it.
#pragma once

#include <cstdint>

#include "backend/cpu_gemm.h"

namespace layerlab::backend::cpu {

// What a tile does in registers after the product: nothing; bias (and y = z); bias and
// y = f(z) for the activations up to kBiasSelu; backward through linear or relu:
// c *= f'(z) (relu: z > 0 ? 1 : 0), the bias gradient gathering the rows in order. (GELU and
// softplus call libm: they are applied after each tile, by after_tile.)
enum Fuse {
  kNone,
  kBiasLinear,
  kBiasRelu,
  kBiasTanh,
  kBiasSigmoid,
  kBiasLeakyRelu,
  kBiasElu,
  kBiasSelu,
  kGradLinear,
  kGradRelu,
  kFuses
};

struct SmallGemmCall {
  bool trans_a, trans_b;
  int m, n, k;  // m, n > 0
  float alpha;
  const float* a;
  int lda;
  const float* b;
  int ldb;
  float beta;
  float* c;
  int ldc;
  GemmEpilogue epilogue;
  Fuse fuse;
  // Called on each finished tile (rows x cols at row i0, column j0 of C) when the epilogue has
  // an activation the registers do not do (null otherwise). It lives in cpu_gemm.cc, built for
  // any CPU, with the scalar activations every other path uses.
  void (*after_tile)(const GemmEpilogue& e, int rows, int cols, int i0, int j0, float* c,
                     int64_t ldc);
  float* panel;  // scratch for B transposed: k * kMaxPanel floats
  // Set (scratch of n * kMaxPanel floats) for the forward product of a short batch, which
  // the kernels compute as C^T = B^T A^T (cpu_gemm_tiles.h, run_short_batch); then alpha is
  // 1, beta 0, and the epilogue a forward one.
  float* transposed_c;
};

// The widest panel of columns a kernel file transposes B into (AVX-512: two vectors of 16).
constexpr int kMaxPanel = 32;

void sgemm_avx2(const SmallGemmCall& call);
void sgemm_avx512(const SmallGemmCall& call);

}  // namespace layerlab::backend::cpu
