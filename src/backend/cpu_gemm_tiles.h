// The small-matrix kernels (cpu_gemm.h), written once over a vector instruction set V that
// the including file defines (cpu_gemm_avx2.cc: 8 lanes; cpu_gemm_avx512.cc: 16 lanes). Each
// of those files is compiled for its instruction set, so everything here has internal linkage
// and calls no standard-library function: an inline function compiled there would be a weak
// symbol that the linker may pick for code running on any CPU (isa_objects_test.sh checks).
//
// A tile of C, up to V::kTileRows rows by two vectors of columns, lives in accumulator
// registers for the whole k loop (AVX2's 16 registers hold 6 x 2 accumulators, AVX-512's 32
// hold 12 x 2): each step broadcasts one element of A per row and loads two vectors of B's
// row k. A may be transposed (the broadcast only changes its stride). B transposed (the
// forward product X W^T) is first transposed into a panel of two vectors of columns, one
// panel at a time, so that its rows are contiguous too. Tiles walk down a panel, so the panel
// stays in L1. (For a short batch the product is computed as C^T = W X^T instead, which
// transposes X and C rather than W: run_short_batch.) Each element of C is one FMA chain over
// k in order, whatever V: both files give the same bits.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "backend/cpu_gemm_isa.h"

namespace layerlab::backend::cpu {
namespace {

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

// act::forward's activations, lane by lane, through fast_exp (backend/ops.h): the same IEEE
// operations in the same order (no contraction: the kernel files are built with
// -ffp-contract=off), so the same bits as the scalar pass, NaN, infinities and -0 included.
// `z > 0 ? a : b` computes both sides and selects (the ordered compare: NaN takes b).
template <class V>
typename V::Reg fast_exp(typename V::Reg x) {
  using Reg = typename V::Reg;
  // x < -87.3 ? -87.3 : (x > 88 ? 88 : x); min and max return their second operand for NaN.
  x = V::max(V::set1(-87.3f), V::min(V::set1(88.f), x));
  const Reg round_magic = V::set1(12582912.f);
  const Reg n = V::sub(V::add(V::mul(x, V::set1(1.44269504088896341f)), round_magic), round_magic);
  const Reg r =
      V::sub(V::sub(x, V::mul(n, V::set1(0.693359375f))), V::mul(n, V::set1(-2.12194440e-4f)));
  Reg p = V::set1(1.9875691500e-4f);
  p = V::add(V::mul(p, r), V::set1(1.3981999507e-3f));
  p = V::add(V::mul(p, r), V::set1(8.3334519073e-3f));
  p = V::add(V::mul(p, r), V::set1(4.1665795894e-2f));
  p = V::add(V::mul(p, r), V::set1(1.6666665459e-1f));
  p = V::add(V::mul(p, r), V::set1(5.0000001201e-1f));
  p = V::add(V::add(V::mul(V::mul(p, r), r), r), V::set1(1.f));
  return V::mul(p, V::pow2(n));
}

template <class V>
typename V::Reg tanh(typename V::Reg z) {
  const auto one = V::set1(1.f);
  const auto e = fast_exp<V>(V::mul(V::set1(-2.f), V::abs(z)));
  return V::copysign(V::div(V::sub(one, e), V::add(one, e)), z);
}

template <class V>
typename V::Reg sigmoid(typename V::Reg z) {
  const auto one = V::set1(1.f);
  return V::div(one, V::add(one, fast_exp<V>(V::neg(z))));
}

// max(z, 0): z > 0 ? z : 0, for -0 and NaN too (max returns its second operand for those).
template <class V>
typename V::Reg relu(typename V::Reg z) {
  return V::max(z, V::zero());
}

// activation_backward's relu: dy * (z > 0 ? 1 : 0).
template <class V>
typename V::Reg relu_gradient(typename V::Reg dy, typename V::Reg z) {
  return V::mul(dy, V::select_positive(z, V::set1(1.f), V::zero()));
}

template <class V>
typename V::Reg leaky_relu(typename V::Reg z) {
  return V::select_positive(z, z, V::mul(V::set1(act::kLeakySlope), z));
}

template <class V>
typename V::Reg elu(typename V::Reg z) {
  return V::select_positive(z, z, V::sub(fast_exp<V>(z), V::set1(1.f)));
}

template <class V>
typename V::Reg selu(typename V::Reg z) {
  const auto negative = V::mul(V::set1(act::kSeluAlpha), V::sub(fast_exp<V>(z), V::set1(1.f)));
  return V::mul(V::set1(act::kSeluScale), V::select_positive(z, z, negative));
}

// y = f(z) for a forward epilogue FUSE (kBiasLinear: z).
template <class V, int FUSE>
typename V::Reg activate(typename V::Reg z) {
  if constexpr (FUSE == kBiasRelu) return relu<V>(z);
  if constexpr (FUSE == kBiasTanh) return tanh<V>(z);
  if constexpr (FUSE == kBiasSigmoid) return sigmoid<V>(z);
  if constexpr (FUSE == kBiasLeakyRelu) return leaky_relu<V>(z);
  if constexpr (FUSE == kBiasElu) return elu<V>(z);
  if constexpr (FUSE == kBiasSelu) return selu<V>(z);
  return z;
}

// C[ROWS][V::kLanes * VECS] (the last vector only its first `last` lanes when MASKED) =
// alpha * sum_kk A(i, kk) B[kk][j] + beta * C, then the FUSE epilogue. A(i, kk) is
// a[i * ars + kk * acs].
template <class V, int ROWS, int VECS, bool MASKED, int FUSE>
void tile(int k, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int last,
          float alpha, float beta, float* c, int64_t ldc, const InRegister& f) {
  using Reg = typename V::Reg;
  constexpr int L = V::kLanes;
  // The loops over rows and vectors below must unroll whole, or the accumulators go to the
  // stack: 12-row tiles under `unroll 8` ran at half speed.
  static_assert(ROWS <= 16 && VECS <= 16, "the unroll pragmas must cover the tile");
  const auto mask = V::first(MASKED ? last : L);
  auto load = [&](const float* p, int v) {
    return MASKED && v == VECS - 1 ? V::load(p, mask) : V::load(p);
  };
  auto store = [&](float* p, Reg r, int v) {
    if (MASKED && v == VECS - 1)
      V::store(p, r, mask);
    else
      V::store(p, r);
  };
  Reg acc[ROWS][VECS];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 16
    for (int v = 0; v < VECS; ++v) acc[i][v] = V::zero();
  for (int kk = 0; kk < k; ++kk) {
    const float* bk = b + kk * ldb;
    Reg bv[VECS];
#pragma GCC unroll 16
    for (int v = 0; v < VECS; ++v) bv[v] = load(bk + L * v, v);
    const float* ak = a + kk * acs;
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      const Reg ai = V::broadcast(ak + i * ars);
#pragma GCC unroll 16
      for (int v = 0; v < VECS; ++v) acc[i][v] = V::fmadd(ai, bv[v], acc[i][v]);
    }
  }
  const Reg va = V::set1(alpha), vb = V::set1(beta);
  constexpr bool grad = FUSE == kGradLinear || FUSE == kGradRelu;
  constexpr bool bias = FUSE >= kBiasLinear && FUSE <= kBiasSelu;
  Reg bias_grad[VECS];
#pragma GCC unroll 16
  for (int v = 0; v < VECS; ++v) bias_grad[v] = V::zero();
  if (grad && f.bias_grad)
#pragma GCC unroll 16
    for (int v = 0; v < VECS; ++v) bias_grad[v] = load(f.bias_grad + L * v, v);
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) {
    float* ci = c + i * ldc;
#pragma GCC unroll 16
    for (int v = 0; v < VECS; ++v) {
      Reg r = alpha == 1.f ? acc[i][v] : V::mul(va, acc[i][v]);
      if (beta != 0.f) {
        const Reg old = load(ci + L * v, v);
        r = V::add(r, beta == 1.f ? old : V::mul(vb, old));
      }
      // bias_activation_forward's operations: z += bias, y = f(z) (relu: z > 0 ? z : 0,
      // which max(z, 0) is for -0 and NaN too, its second operand winning those; the others
      // above).
      // activation_backward's: dz = dy * (z > 0 ? 1 : 0) (0 for NaN, as the ordered compare
      // gives), then the column sums.
      if (FUSE == kGradRelu) r = relu_gradient<V>(r, load(f.z + i * ldc + L * v, v));
      if (grad && f.bias_grad) bias_grad[v] = V::add(bias_grad[v], r);
      if (bias && f.bias) r = V::add(r, load(f.bias + L * v, v));
      store(ci + L * v, r, v);
      if (bias && f.y) store(f.y + i * f.ldy + L * v, activate<V, FUSE>(r), v);
    }
  }
  if (grad && f.bias_grad)
#pragma GCC unroll 16
    for (int v = 0; v < VECS; ++v) store(f.bias_grad + L * v, bias_grad[v], v);
}

using TileFn = void (*)(int, const float*, int64_t, int64_t, const float*, int64_t, int, float,
                        float, float*, int64_t, const InRegister&);

// Every tile kernel: [fuse][vectors - 1][masked][rows - 1]. Plain arrays, not std::array,
// whose operator[] would be an inline function compiled for this file's instruction set.
template <int ROWS>
struct TileTable {
  TileFn fn[kFuses][2][2][ROWS];
};

template <class V, int FUSE, int VECS, bool MASKED, size_t... R>
constexpr void fill_rows(TileTable<V::kTileRows>& t, std::index_sequence<R...>) {
  ((t.fn[FUSE][VECS - 1][MASKED][R] = &tile<V, static_cast<int>(R) + 1, VECS, MASKED, FUSE>), ...);
}

template <class V, size_t... F>
constexpr TileTable<V::kTileRows> make_tiles(std::index_sequence<F...>) {
  TileTable<V::kTileRows> t{};
  constexpr auto rows = std::make_index_sequence<V::kTileRows>{};
  ((fill_rows<V, F, 1, false>(t, rows), fill_rows<V, F, 1, true>(t, rows),
    fill_rows<V, F, 2, false>(t, rows), fill_rows<V, F, 2, true>(t, rows)),
   ...);
  return t;
}

// Rows of the next tile when `left` rows remain: full tiles, and a short remainder shared
// with the tile before it (8 -> 4 + 4) so that no tile has too few accumulators to hide the
// FMA latency.
template <int MAX>
int next_tile_rows(int left) {
  if (left >= 2 * MAX - 2) return MAX;
  if (left > MAX) return (left + 1) / 2;
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

// panel[kk][jj] = b[jj * ldb + kk] for jj < cols (<= width), kk < k.
void pack_transposed(const float* b, int64_t ldb, int k, int cols, int width, float* panel) {
  const int k8 = k / 8 * 8;
  int j = 0;
  for (; j + 8 <= cols; j += 8)
    for (int kk = 0; kk < k8; kk += 8)
      transpose8x8(b + j * ldb + kk, ldb, panel + kk * width + j, width);
  for (int jj = 0; jj < cols; ++jj) {
    const float* row = b + jj * ldb;
    for (int kk = jj < j ? k8 : 0; kk < k; ++kk) panel[kk * width + jj] = row[kk];
  }
}

// Bytes of B above which it no longer stays in cache between rows of tiles (half the 1 MiB
// L2 of the machines measured).
constexpr int64_t kStreamedB = int64_t{512} << 10;

template <class V>
constexpr TileTable<V::kTileRows> kTiles = make_tiles<V>(std::make_index_sequence<kFuses>{});

// The forward epilogue FUSE on whole rows of C after the product, the tiles' operations in
// their order: z = c + bias, y = f(z).
template <class V, int FUSE>
void finish_rows(int rows, int cols, float* c, int64_t ldc, const float* bias, float* y,
                 int64_t ldy) {
  constexpr int L = V::kLanes;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; j += L) {
      const auto mask = V::first(cols - j < L ? cols - j : L);
      float* cr = c + r * ldc + j;
      auto z = V::load(cr, mask);
      if (bias) z = V::add(z, V::load(bias + j, mask));
      V::store(cr, z, mask);
      if (y) V::store(y + r * ldy + j, activate<V, FUSE>(z), mask);
    }
}

template <class V, size_t... F>
void finish_rows_with(int fuse, int rows, int cols, float* c, int64_t ldc, const float* bias,
                      float* y, int64_t ldy, std::index_sequence<F...>) {
  ((fuse == static_cast<int>(kBiasLinear + F)
        ? finish_rows<V, static_cast<int>(kBiasLinear + F)>(rows, cols, c, ldc, bias, y, ldy)
        : void()),
   ...);
}

// The forward product of a short batch (X W^T with few rows; cpu_gemm.cc decides when) as
// C^T = W X^T: only X's rows are transposed into the panel, not W's n rows (transposing
// W^T took a third of the time at 32 x 256 x 256), the tiles run down W's rows with C^T's
// columns in the vectors, and C^T is transposed into C before the epilogue. a * b is b * a
// exactly, so each element is the same FMA chain over k as in run()'s tiles: the same bits.
template <class V>
void run_short_batch(const SmallGemmCall& g) {
  constexpr int kPanel = 2 * V::kLanes;
  const GemmEpilogue& e = g.epilogue;
  for (int i0 = 0; i0 < g.m; i0 += kPanel) {
    const int rows = g.m - i0 < kPanel ? g.m - i0 : kPanel;
    const int vecs = rows > V::kLanes ? 2 : 1;
    const int last = rows - V::kLanes * (vecs - 1);
    pack_transposed(g.a + static_cast<int64_t>(i0) * g.lda, g.lda, g.k, rows, kPanel, g.panel);
    for (int j0 = 0; j0 < g.n;) {
      const int units = next_tile_rows<V::kTileRows>(g.n - j0);
      kTiles<V>.fn[kNone][vecs - 1][last != V::kLanes][units - 1](
          g.k, g.b + static_cast<int64_t>(j0) * g.ldb, g.ldb, 1, g.panel, kPanel, last, 1.f, 0.f,
          g.transposed_c + static_cast<int64_t>(j0) * kPanel, kPanel, InRegister{});
      j0 += units;
    }
    float* c = g.c + static_cast<int64_t>(i0) * g.ldc;
    pack_transposed(g.transposed_c, kPanel, rows, g.n, g.ldc, c);  // C = (C^T)^T
    if (g.fuse != kNone)
      finish_rows_with<V>(g.fuse, rows, g.n, c, g.ldc, e.bias,
                          e.y ? e.y + static_cast<int64_t>(i0) * e.ldy : nullptr, e.ldy,
                          std::make_index_sequence<kBiasSelu - kBiasLinear + 1>{});
    if (g.after_tile) g.after_tile(e, rows, g.n, i0, 0, g.c, g.ldc);
  }
}

template <class V>
void run(const SmallGemmCall& call) {
  constexpr int kPanel = 2 * V::kLanes;
  static_assert(kPanel <= kMaxPanel);
  const SmallGemmCall& g = call;
  if (g.transposed_c) return run_short_batch<V>(g);
  const GemmEpilogue& e = g.epilogue;
  const int64_t ars = g.trans_a ? 1 : g.lda, acs = g.trans_a ? g.lda : 1;
  const bool gradient = e.grad_z != nullptr;
  if (gradient && e.bias_grad)
    for (int j = 0; j < g.n; ++j) e.bias_grad[j] = 0.f;
  auto do_tile = [&](int i0, int rows, int j0, const float* bp, int64_t ldbp) {
    const int cols = g.n - j0 < kPanel ? g.n - j0 : kPanel;
    const int vecs = cols > V::kLanes ? 2 : 1;
    const int last = cols - V::kLanes * (vecs - 1);
    const InRegister f{e.bias ? e.bias + j0 : nullptr,
                       e.y ? e.y + static_cast<int64_t>(i0) * e.ldy + j0 : nullptr, e.ldy,
                       gradient ? e.grad_z + static_cast<int64_t>(i0) * g.ldc + j0 : nullptr,
                       e.bias_grad ? e.bias_grad + j0 : nullptr};
    kTiles<V>.fn[g.fuse][vecs - 1][last != V::kLanes][rows - 1](
        g.k, g.a + i0 * ars, ars, acs, bp, ldbp, last, g.alpha, g.beta,
        g.c + static_cast<int64_t>(i0) * g.ldc + j0, g.ldc, f);
    if (g.after_tile) g.after_tile(e, rows, cols, i0, j0, g.c, g.ldc);
  };
  if (!g.trans_b) {
    if (static_cast<int64_t>(g.k) * g.n * sizeof(float) <= kStreamedB) {
      // B as it is: a row of tiles at a time, so A's few rows stay in registers' reach (L1)
      // and B, read once per row of tiles, streams from cache.
      for (int i0 = 0; i0 < g.m;) {
        const int rows = next_tile_rows<V::kTileRows>(g.m - i0);
        for (int j0 = 0; j0 < g.n; j0 += kPanel) do_tile(i0, rows, j0, g.b + j0, g.ldb);
        i0 += rows;
      }
    } else {
      // A B larger than the cache, read once per row of tiles, came from memory every time
      // (width 1024: 0.9x OpenBLAS): a panel of B's columns at a time instead, kept in cache
      // for every row of tiles. Each tile computes the same, so the bits do not change.
      for (int j0 = 0; j0 < g.n; j0 += kPanel)
        for (int i0 = 0; i0 < g.m;) {
          const int rows = next_tile_rows<V::kTileRows>(g.m - i0);
          do_tile(i0, rows, j0, g.b + j0, g.ldb);
          i0 += rows;
        }
    }
    return;
  }
  for (int j0 = 0; j0 < g.n; j0 += kPanel) {
    const int cols = g.n - j0 < kPanel ? g.n - j0 : kPanel;
    pack_transposed(g.b + static_cast<int64_t>(j0) * g.ldb, g.ldb, g.k, cols, kPanel, g.panel);
    for (int i0 = 0; i0 < g.m;) {
      const int rows = next_tile_rows<V::kTileRows>(g.m - i0);
      do_tile(i0, rows, j0, g.panel, kPanel);
      i0 += rows;
    }
  }
}

}  // namespace
}  // namespace layerlab::backend::cpu
