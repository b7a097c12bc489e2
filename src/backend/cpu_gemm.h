// Small-matrix SGEMM for the CPU backend. The products a small network multiplies (batch 32
// by widths of 64-256) are too small for OpenBLAS to reach its large-matrix speed: its
// per-call set-up and packing cost about as much as the arithmetic. These kernels are
// register-blocked loops made for them (cpu_gemm_tiles.h), built twice: for AVX2 + FMA
// (cpu_gemm_avx2.cc) and for AVX-512 (cpu_gemm_avx512.cc), each the only file compiled for its
// instruction set. The backend picks the widest the CPU runs (checked at run time: no
// -march build requirement), and uses them only for the shapes where bench/gemm_bench
// measured them faster (use_small_gemm).
//
// Summation order: each element of C is one chain of fused multiply-adds over k in order
// 0, 1, ..., k-1, whatever m, n, the tile it falls in, the position of its row or the
// instruction set: a product gives the same bits for a row whether the batch has 32 rows or
// 29, alone or in a pack, on AVX2 or on AVX-512.
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

enum class SmallGemm { kNone, kAvx2, kAvx512 };
const char* to_string(SmallGemm kernels);  // "none", "avx2", "avx512"

// Whether this CPU (and its OS) can run those kernels: AVX2 and FMA; AVX-512F.
bool cpu_runs(SmallGemm kernels);

// The kernels the backend uses: the widest this CPU runs, unless the environment holds them
// back with LAYERLAB_CPU_GEMM=blas (every product on OpenBLAS) or =avx2 (for A/B measurements
// with one binary; the backend's describe(), recorded with every result, says which ran).
SmallGemm small_gemm_kernels();

// Whether the small-matrix kernels beat OpenBLAS on one m x n x k product (one pack member),
// from bench/gemm_bench's measurements on shape classes; depends on the shape and the
// transpositions only, so a pack member takes the path a single trial of that shape takes.
bool use_small_gemm(bool trans_a, bool trans_b, int m, int n, int k);

// Whether OpenBLAS chose its AVX-512 kernels for this CPU (its SkylakeX family; on Zen it
// runs its AVX2 ones): use_small_gemm leaves large weight gradients of batches of 64 or more
// to it then.
bool blas_runs_avx512_kernels();

// Row-major C = alpha * op(A) * op(B) + beta * C, then the epilogue, on the given kernels
// (which cpu_runs() must accept; not kNone). beta == 0 ignores C's previous contents (NaN
// included), as BLAS does.
void sgemm_small(SmallGemm kernels, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc,
                 const GemmEpilogue& epilogue);

}  // namespace layerlab::backend::cpu
