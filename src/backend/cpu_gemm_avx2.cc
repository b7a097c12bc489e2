// The AVX2/FMA small-matrix kernels (cpu_gemm.h). This file alone is compiled with
// -mavx2 -mfma (src/backend/CMakeLists.txt); nothing here runs unless have_avx2_fma().
//
// A tile of C, up to 6 rows by 16 columns, lives in 12 ymm accumulators for the whole k loop:
// each step broadcasts one element of A per row and loads 16 contiguous floats of B's row k.
// A may be transposed (the broadcast only changes its stride). B transposed (the forward
// product X W^T) is first transposed into a 16-column panel, one panel at a time, so that its
// rows are contiguous too. Tiles walk down a panel, so the panel stays in L1.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "backend/cpu_gemm.h"
#include "common/error.h"

namespace layerlab::backend::cpu {
namespace {

constexpr int kTileRows = 6;
constexpr int kPanel = 16;  // columns: two vectors

alignas(32) constexpr int32_t kMaskSource[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};

// The first `cols` lanes (1..8).
__m256i column_mask(int cols) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskSource + 8 - cols));
}

// The epilogue done in registers, on the tile's columns: bias (may be null) and y (may be
// null, or c itself) start at the tile's first column (and row, for y).
// Backward: z (the layer's pre-activation, leading dimension ldc) starts at the tile, the bias
// gradient at its first column.
struct InRegister {
  const float* bias;
  float* y;
  int64_t ldy;
  const float* z;
  float* bias_grad;
};
// What a tile does after the product: nothing; bias (and y = z); bias and y = relu(z);
// backward through linear or relu: c *= f'(z) (relu: z > 0 ? 1 : 0), the bias gradient
// gathering the rows in order.
enum Fuse { kNone, kBiasLinear, kBiasRelu, kGradLinear, kGradRelu, kFuses };

inline void store(float* p, __m256 v, bool masked, __m256i mask) {
  if (masked)
    _mm256_maskstore_ps(p, mask, v);
  else
    _mm256_storeu_ps(p, v);
}

// C[ROWS][8 * VECS] (the last vector only its first `last` lanes when MASKED) =
// alpha * sum_kk A(i, kk) B[kk][j] + beta * C, then the FUSE epilogue. A(i, kk) is
// a[i * ars + kk * acs].
template <int ROWS, int VECS, bool MASKED, int FUSE>
void tile(int k, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int last,
          float alpha, float beta, float* c, int64_t ldc, const InRegister& f) {
  const __m256i mask = column_mask(MASKED ? last : 8);
  __m256 acc[ROWS][VECS];
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < VECS; ++v) acc[i][v] = _mm256_setzero_ps();
  for (int kk = 0; kk < k; ++kk) {
    const float* bk = b + kk * ldb;
    __m256 bv[VECS];
#pragma GCC unroll 8
    for (int v = 0; v < VECS; ++v)
      bv[v] = MASKED && v == VECS - 1 ? _mm256_maskload_ps(bk + 8 * v, mask)
                                      : _mm256_loadu_ps(bk + 8 * v);
    const float* ak = a + kk * acs;
#pragma GCC unroll 8
    for (int i = 0; i < ROWS; ++i) {
      const __m256 ai = _mm256_broadcast_ss(ak + i * ars);
#pragma GCC unroll 8
      for (int v = 0; v < VECS; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  constexpr bool grad = FUSE == kGradLinear || FUSE == kGradRelu;
  __m256 bias_grad[VECS];
#pragma GCC unroll 8
  for (int v = 0; v < VECS; ++v) bias_grad[v] = _mm256_setzero_ps();
  if (grad && f.bias_grad)
#pragma GCC unroll 8
    for (int v = 0; v < VECS; ++v)
      bias_grad[v] = MASKED && v == VECS - 1 ? _mm256_maskload_ps(f.bias_grad + 8 * v, mask)
                                             : _mm256_loadu_ps(f.bias_grad + 8 * v);
#pragma GCC unroll 8
  for (int i = 0; i < ROWS; ++i) {
    float* ci = c + i * ldc;
#pragma GCC unroll 8
    for (int v = 0; v < VECS; ++v) {
      __m256 r = alpha == 1.f ? acc[i][v] : _mm256_mul_ps(va, acc[i][v]);
      const bool masked = MASKED && v == VECS - 1;
      if (beta != 0.f) {
        const __m256 old =
            masked ? _mm256_maskload_ps(ci + 8 * v, mask) : _mm256_loadu_ps(ci + 8 * v);
        r = _mm256_add_ps(r, beta == 1.f ? old : _mm256_mul_ps(vb, old));
      }
      // bias_activation_forward's operations: z += bias, y = f(z) (relu: z > 0 ? z : 0,
      // which max(z, 0) is for -0 and NaN too, its second operand winning those).
      // activation_backward's: dz = dy * (z > 0 ? 1 : 0) (false for NaN, as the compare
      // here), then the column sums.
      if (FUSE == kGradRelu) {
        const float* zi = f.z + i * ldc + 8 * v;
        const __m256 zv = masked ? _mm256_maskload_ps(zi, mask) : _mm256_loadu_ps(zi);
        const __m256 one = _mm256_set1_ps(1.f);
        r = _mm256_mul_ps(r,
                          _mm256_and_ps(_mm256_cmp_ps(zv, _mm256_setzero_ps(), _CMP_GT_OQ), one));
      }
      if (grad && f.bias_grad) bias_grad[v] = _mm256_add_ps(bias_grad[v], r);
      if ((FUSE == kBiasLinear || FUSE == kBiasRelu) && f.bias)
        r = _mm256_add_ps(
            r, masked ? _mm256_maskload_ps(f.bias + 8 * v, mask) : _mm256_loadu_ps(f.bias + 8 * v));
      store(ci + 8 * v, r, masked, mask);
      if ((FUSE == kBiasLinear || FUSE == kBiasRelu) && f.y)
        store(f.y + i * f.ldy + 8 * v,
              FUSE == kBiasRelu ? _mm256_max_ps(r, _mm256_setzero_ps()) : r, masked, mask);
    }
  }
  if (grad && f.bias_grad)
#pragma GCC unroll 8
    for (int v = 0; v < VECS; ++v)
      store(f.bias_grad + 8 * v, bias_grad[v], MASKED && v == VECS - 1, mask);
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, int64_t, int, float,
                        float, float*, int64_t, const InRegister&);

template <int VECS, bool MASKED, int FUSE, size_t... R>
constexpr auto tiles_of(std::index_sequence<R...>) {
  return std::array<TileFn, sizeof...(R)>{&tile<static_cast<int>(R) + 1, VECS, MASKED, FUSE>...};
}

template <int FUSE>
constexpr auto tiles_fusing() {
  constexpr auto rows = std::make_index_sequence<kTileRows>{};
  return std::array<std::array<std::array<TileFn, kTileRows>, 2>, 2>{{
      {{tiles_of<1, false, FUSE>(rows), tiles_of<1, true, FUSE>(rows)}},
      {{tiles_of<2, false, FUSE>(rows), tiles_of<2, true, FUSE>(rows)}},
  }};
}

// [fuse][vectors - 1][masked][rows - 1]
const std::array<std::array<std::array<std::array<TileFn, kTileRows>, 2>, 2>, kFuses> kTiles = {
    tiles_fusing<kNone>(), tiles_fusing<kBiasLinear>(), tiles_fusing<kBiasRelu>(),
    tiles_fusing<kGradLinear>(), tiles_fusing<kGradRelu>()};

// Rows of the next tile when `left` rows remain: full tiles, and a short remainder shared
// with the tile before it (8 -> 4 + 4) so that no tile has too few accumulators to hide the
// FMA latency.
int next_tile_rows(int left) {
  if (left >= 2 * kTileRows - 2) return kTileRows;
  if (left > kTileRows) return (left + 1) / 2;
  return left;
}

void transpose8x8(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    r[h + 0] = _mm256_shuffle_ps(t[h + 0], t[h + 2], 0x44);
    r[h + 1] = _mm256_shuffle_ps(t[h + 0], t[h + 2], 0xEE);
    r[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    r[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// panel[kk][jj] = b[jj * ldb + kk] for jj < cols (<= kPanel), kk < k.
void pack_transposed(const float* b, int64_t ldb, int k, int cols, float* panel) {
  const int k8 = k / 8 * 8;
  int j = 0;
  for (; j + 8 <= cols; j += 8)
    for (int kk = 0; kk < k8; kk += 8)
      transpose8x8(b + j * ldb + kk, ldb, panel + kk * kPanel + j, kPanel);
  for (int jj = 0; jj < cols; ++jj) {
    const float* row = b + jj * ldb;
    for (int kk = jj < j ? k8 : 0; kk < k; ++kk) panel[kk * kPanel + jj] = row[kk];
  }
}

template <Activation A>
void apply_epilogue(const GemmEpilogue& e, int rows, int cols, int i0, int j0, float* c,
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

template <Activation A>
void run(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
         const float* b, int ldb, float beta, float* c, int ldc, const GemmEpilogue& e) {
  const int64_t ars = trans_a ? 1 : lda, acs = trans_a ? lda : 1;
  thread_local std::vector<float> panel_store;
  float* panel = nullptr;
  if (trans_b) {
    if (panel_store.size() < static_cast<size_t>(k) * kPanel)
      panel_store.resize(static_cast<size_t>(k) * kPanel);
    panel = panel_store.data();
  }
  // Linear and relu (forward with or without bias; backward) are done in registers; the
  // other activations by a pass over each finished tile.
  const bool gradient = e.grad_z != nullptr;
  if (gradient && e.bias_grad) std::fill(e.bias_grad, e.bias_grad + n, 0.f);
  const bool epilogue = !gradient && (e.bias || e.y);
  const bool linear = A == Activation::kLinear, relu = A == Activation::kRelu;
  const int fuse = gradient   ? (linear ? kGradLinear
                                 : relu ? kGradRelu
                                        : kNone)
                   : epilogue ? (linear ? kBiasLinear
                                 : relu ? kBiasRelu
                                        : kNone)
                              : kNone;
  const bool after = epilogue && fuse == kNone;
  if (gradient && fuse == kNone)
    throw internal_error("sgemm_avx2: the backward epilogue does linear and relu only");
  auto do_tile = [&](int i0, int rows, int j0, const float* bp, int64_t ldbp) {
    const int cols = std::min(kPanel, n - j0);
    const int vecs = cols > 8 ? 2 : 1;
    const int last = cols - 8 * (vecs - 1);
    const InRegister f{e.bias ? e.bias + j0 : nullptr,
                       e.y ? e.y + static_cast<int64_t>(i0) * e.ldy + j0 : nullptr, e.ldy,
                       gradient ? e.grad_z + static_cast<int64_t>(i0) * ldc + j0 : nullptr,
                       e.bias_grad ? e.bias_grad + j0 : nullptr};
    kTiles[fuse][vecs - 1][last != 8][rows - 1](k, a + i0 * ars, ars, acs, bp, ldbp, last, alpha,
                                                beta, c + static_cast<int64_t>(i0) * ldc + j0, ldc,
                                                f);
    if (after) apply_epilogue<A>(e, rows, cols, i0, j0, c, ldc);
  };
  if (!trans_b) {
    // B as it is: a row of tiles at a time, so A's few rows stay in registers' reach (L1)
    // and B, read once per row of tiles, streams.
    for (int i0 = 0; i0 < m;) {
      const int rows = next_tile_rows(m - i0);
      for (int j0 = 0; j0 < n; j0 += kPanel) do_tile(i0, rows, j0, b + j0, ldb);
      i0 += rows;
    }
    return;
  }
  for (int j0 = 0; j0 < n; j0 += kPanel) {
    pack_transposed(b + static_cast<int64_t>(j0) * ldb, ldb, k, std::min(kPanel, n - j0), panel);
    for (int i0 = 0; i0 < m;) {
      const int rows = next_tile_rows(m - i0);
      do_tile(i0, rows, j0, panel, kPanel);
      i0 += rows;
    }
  }
}

}  // namespace

void sgemm_avx2(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc,
                const GemmEpilogue& epilogue) {
  if (m <= 0 || n <= 0) return;
  const bool activation = epilogue.y || epilogue.grad_z;
  with_activation(activation ? epilogue.activation : Activation::kLinear, [&](auto tag) {
    run<decltype(tag)::value>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                              epilogue);
  });
}

}  // namespace layerlab::backend::cpu
