// Small-matrix SGEMM for the CPU backend. The products a small network multiplies (batch 32
// by widths of 64-256) are too small for OpenBLAS to reach its large-matrix speed: its
// per-call set-up and packing cost about as much as the arithmetic. These kernels are
// register-blocked AVX2/FMA loops made for them (cpu_gemm_avx2.cc, the only file compiled
// with -mavx2 -mfma); the backend calls them only when the CPU has both (checked at run
// time), and only for the shapes where bench/gemm_bench measured them faster (use_small_gemm).
//
// Summation order: each element of C is one chain of fused multiply-adds over k in order
// 0, 1, ..., k-1, whatever m, n, the tile it falls in or the position of its row: a product
// gives the same bits for a row whether the batch has 32 rows or 29, alone or in a pack.
#pragma once

#include <cstdint>

#include "backend/ops.h"

namespace layerlab::backend::cpu {

// What follows the product, applied to each finished tile while it is in cache:
// c[i][j] += bias[j] (bias may be null), then y[i][j] = f(c[i][j]) when y is set. The same
// operations in the same order as bias_activation_forward after gemm: the same bits.
struct GemmEpilogue {
  const float* bias = nullptr;
  Activation activation = Activation::kLinear;
  float* y = nullptr;  // null: c only
  int ldy = 0;
  // Backward instead (when grad_z is set; linear and relu only): c[i][j] *= f'(grad_z[i][j])
  // (the layer's pre-activation, leading dimension ldc), then, if bias_grad is set,
  // bias_grad[j] = sum over i of c[i][j], rows in order: what activation_backward computes
  // after the product, the same bits.
  const float* grad_z = nullptr;
  float* bias_grad = nullptr;
};

// True when this CPU has AVX2 and FMA (the kernels below need both), unless the environment
// has LAYERLAB_CPU_GEMM=blas (every product on OpenBLAS: for A/B measurements with one
// binary; the backend's describe(), recorded with every result, says which path ran).
bool have_avx2_fma();

// Whether the small-matrix kernels beat OpenBLAS on one m x n x k product (one pack member),
// from bench/gemm_bench's measurements on shape classes; depends on the shape only, so a
// pack member takes the path a single trial of that shape takes.
bool use_small_gemm(int m, int n, int k);

// Row-major C = alpha * op(A) * op(B) + beta * C, then the epilogue. Needs have_avx2_fma().
// beta == 0 ignores C's previous contents (NaN included), as BLAS does.
void sgemm_avx2(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc,
                const GemmEpilogue& epilogue);

}  // namespace layerlab::backend::cpu
