#include "backend/cpu_gemm.h"

#include <cblas.h>
#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cpu_gemm_isa.h"
#include "common/error.h"

namespace layerlab::backend::cpu {

const char* to_string(SmallGemm kernels) {
  switch (kernels) {
    case SmallGemm::kAvx2:
      return "avx2";
    case SmallGemm::kAvx512:
      return "avx512";
    case SmallGemm::kNone:
      break;
  }
  return "none";
}

bool cpu_runs(SmallGemm kernels) {
  __builtin_cpu_init();
  switch (kernels) {
    case SmallGemm::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SmallGemm::kAvx512:
      // libgcc's and compiler-rt's checks include the OS saving the zmm state (XCR0).
      return __builtin_cpu_supports("avx512f");
    case SmallGemm::kNone:
      return true;
  }
  return false;
}

SmallGemm small_gemm_kernels() {
  static const SmallGemm kernels = [] {
    const char* env = std::getenv("LAYERLAB_CPU_GEMM");
    const bool blas = env && std::strcmp(env, "blas") == 0;
    const bool avx2_only = env && std::strcmp(env, "avx2") == 0;
    if (!blas && !avx2_only && cpu_runs(SmallGemm::kAvx512)) return SmallGemm::kAvx512;
    if (!blas && cpu_runs(SmallGemm::kAvx2)) return SmallGemm::kAvx2;
    return SmallGemm::kNone;
  }();
  return kernels;
}

// Where bench/gemm_bench measured the kernels ahead of OpenBLAS (docs/benchmarks.md):
// AVX2 + FMA up to 128 x 128 x 128 (or 32 x 256 x 256): 1.1-2x below it on the earlier Zen 3
// machine, mixed at twice that, mostly slower from four times. AVX-512 (Zen 5, 2026-12-05):
// 1.34-2.9x on every measured training and validation shape of 0.1-33.6 MFLOP (up to
// 256 x 256 x 256); past that, up to width 1024 at batch 256 (537 MFLOP), with A or B
// transposed (forward passes and weight gradients: 1.15-1.9x), not with neither (input
// gradients: 0.95-1.02x, level). On an Intel Xeon (2026-12-07) where OpenBLAS runs its own
// AVX-512 kernels (SkylakeX), those lead on weight gradients past 33.6 MFLOP summed over 64
// rows or more (1024 x 1024 x k, GFLOP/s, with 12-row tiles: k = 64 121-128 against 105-110,
// 128 135-137 against 102-110, 256 155-156 against 98-104; this file's column panels were
// sized on Zen 5), trail at k = 32 (95-97 against 114-122) and are level on forward passes.
// They also lead, by a little, on the weight gradients of a batch of up to 32 rows into at
// most 128 x 128 (gemm_bench, 2026-12-07, medians of 3 runs, GFLOP/s: 128 x 128 x 32 150-168
// against 147-153, 128 x 64 x 32 146-166 against 144-155, 64 x 64 x 32 146-170 against
// 149-158, 64 x 64 x 8 128 against 111), and gemm_bench's training row (digits 8 x 128, batch
// 32) ran its products 1.01-1.09x faster with those there (6 rounds, alternating); from
// 256 x 128 these lead again (145 against 112). The other weight gradients stay here. On
// those it takes, OpenBLAS gives these kernels' bits (each element one FMA chain over k in
// order; tested), so a small network trained there still reruns bit for bit on the kernels
// alone (on an AVX2 machine, say).
constexpr double kAvx2MaxFlops = 2.0 * 128 * 128 * 128;
constexpr double kAvx512MaxFlops = 2.0 * 256 * 256 * 256;
constexpr double kAvx512TransposedMaxFlops = 2.0 * 256 * 1024 * 1024;

bool blas_runs_avx512_kernels() {  // decided once per process, as the kernels are
  static const bool avx512 = [] {
    const char* core = openblas_get_corename();
    for (const char* name : {"SkylakeX", "Cooperlake", "SapphireRapids"})
      if (core && strcasecmp(core, name) == 0) return true;
    return false;
  }();
  return avx512;
}

bool use_small_gemm(bool trans_a, bool trans_b, int m, int n, int k) {
  const double flops = 2.0 * m * n * k;
  if (small_gemm_kernels() != SmallGemm::kAvx512) return flops <= kAvx2MaxFlops;
  if (trans_a && !trans_b && flops > kAvx512MaxFlops && k >= 64 && blas_runs_avx512_kernels())
    return false;
  if (trans_a && !trans_b && k <= 32 && m * n <= 128 * 128 && blas_runs_avx512_kernels())
    return false;  // a short batch's weight gradient
  return flops <= (trans_a || trans_b ? kAvx512TransposedMaxFlops : kAvx512MaxFlops);
}

namespace {

// Whether a forward product (X W^T, m x n x k) transposes X and C rather than W
// (cpu_gemm_tiles.h, run_short_batch): for a batch of 16 to 32 rows (C^T's rows are the
// batch, in the vectors: one row would use one lane of 16), where W (n x k) is more than
// twice X and C together. gemm_bench, 2026-12-07 (Intel, AVX-512), GFLOP/s, transposing W
// against X and C, 3 rounds: 32 x 256 x 256 117-127 against 145-156, 32 x 512 x 512 78-81
// against 130-149, 32 x 1024 x 1024 85-88 against 125-138, 32 x 128 x 256 114-117 against
// 133-139, 16 x 128 x 128 105-111 against 105-111; 32 x 128 x 128 (W as large as X and C
// together) 124-137 against 125-130, 8 x 256 x 256 62-64 against 54-60 and 1 x 128 x 128 15-16
// against 7.5-8, so not there.
bool transposes_x_and_c(int m, int n, int k) {
  return m >= 16 && m <= 32 && static_cast<int64_t>(n) * k > 2 * static_cast<int64_t>(m) * (n + k);
}

// The forward epilogue for the activations the kernels do not do in registers, on a finished
// tile while it is in cache: bias_activation_forward's operations, the same bits.
template <Activation A>
void activate_tile(const GemmEpilogue& e, int rows, int cols, int i0, int j0, float* c,
                   int64_t ldc) {
  for (int r = 0; r < rows; ++r) {
    float* zr = c + (i0 + r) * ldc + j0;
    if (e.bias)
      for (int j = 0; j < cols; ++j) zr[j] += e.bias[j0 + j];
    if (e.y) {
      float* yr = e.y + static_cast<int64_t>(i0 + r) * e.ldy + j0;
      for (int j = 0; j < cols; ++j) yr[j] = act::forward(A, zr[j]);
    }
  }
}

// The kernels' own forward epilogue for an activation (cpu_gemm_isa.h); kNone for GELU and
// softplus, which need libm.
Fuse in_registers(Activation a) {
  switch (a) {
    case Activation::kLinear:
      return kBiasLinear;
    case Activation::kRelu:
      return kBiasRelu;
    case Activation::kTanh:
      return kBiasTanh;
    case Activation::kSigmoid:
      return kBiasSigmoid;
    case Activation::kLeakyRelu:
      return kBiasLeakyRelu;
    case Activation::kElu:
      return kBiasElu;
    case Activation::kSelu:
      return kBiasSelu;
    case Activation::kGelu:
    case Activation::kSoftplus:
      break;
  }
  return kNone;
}

}  // namespace

void sgemm_small(SmallGemm kernels, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc,
                 const GemmEpilogue& e) {
  if (m <= 0 || n <= 0) return;
  SmallGemmCall call{trans_a, trans_b, m, n,   k, alpha, a,       lda,     b,
                     ldb,     beta,    c, ldc, e, kNone, nullptr, nullptr, nullptr};
  const Activation act = e.activation;
  if (e.grad_z) {
    if (act != Activation::kLinear && act != Activation::kRelu)
      throw internal_error("sgemm_small: the backward epilogue does linear and relu only");
    call.fuse = act == Activation::kLinear ? kGradLinear : kGradRelu;
  } else if (!e.y) {
    // The activation is applied only with y: the bias alone is the linear case.
    if (e.bias) call.fuse = kBiasLinear;
  } else if (const Fuse f = in_registers(act); f != kNone) {
    call.fuse = f;
  } else {
    with_activation(act, [&](auto tag) { call.after_tile = &activate_tile<decltype(tag)::value>; });
  }
  thread_local std::vector<float> panel, transposed_c;
  if (trans_b && panel.size() < static_cast<size_t>(k) * kMaxPanel)
    panel.resize(static_cast<size_t>(k) * kMaxPanel);
  call.panel = panel.data();
  if (trans_b && !trans_a && transposes_x_and_c(m, n, k) && alpha == 1.f && beta == 0.f &&
      !e.grad_z) {
    if (transposed_c.size() < static_cast<size_t>(n) * kMaxPanel)
      transposed_c.resize(static_cast<size_t>(n) * kMaxPanel);
    call.transposed_c = transposed_c.data();
  }
  switch (kernels) {
    case SmallGemm::kAvx512:
      return sgemm_avx512(call);
    case SmallGemm::kAvx2:
      return sgemm_avx2(call);
    case SmallGemm::kNone:
      break;
  }
  throw internal_error("sgemm_small: no kernels chosen");
}

}  // namespace layerlab::backend::cpu
