// The small-matrix kernels (backend/cpu_gemm.h), each instruction set's, against a naive
// double-precision product over many shapes (1, odd, not multiples of the 6 x 16 or 6 x 32
// tile), all four transpositions, padded leading dimensions, alpha and beta; their fused
// epilogue against bias_activation_forward (bit for bit); and the promises the header makes on
// summation order (a row's result does not depend on the rows around it, nor on the
// instruction set). An instruction set this CPU lacks is skipped.
#include "backend/cpu_gemm.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_backend.h"

namespace layerlab::backend {
namespace {

std::vector<float> random(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 2.f * uniform01(seed, 7, i) - 1.f;
  return v;
}

struct Case {
  bool ta, tb;
  int m, n, k;
  int pad;  // added to every leading dimension
  float alpha, beta;
  std::string str() const {
    return std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k) + " pad " + std::to_string(pad) + " alpha " +
           std::to_string(alpha) + " beta " + std::to_string(beta);
  }
};

// Row-major operands for a case: A is m x k (k x m stored when ta), B k x n (n x k when tb).
struct Operands {
  explicit Operands(const Case& c, uint64_t seed) {
    lda = (c.ta ? c.m : c.k) + c.pad;
    ldb = (c.tb ? c.k : c.n) + c.pad;
    ldc = c.n + c.pad;
    a = random(static_cast<size_t>(c.ta ? c.k : c.m) * lda, seed);
    b = random(static_cast<size_t>(c.tb ? c.n : c.k) * ldb, seed + 1);
    cmat = random(static_cast<size_t>(c.m) * ldc, seed + 2);
  }
  float at_a(const Case& c, int i, int kk) const {
    return c.ta ? a[static_cast<size_t>(kk) * lda + i] : a[static_cast<size_t>(i) * lda + kk];
  }
  float at_b(const Case& c, int kk, int j) const {
    return c.tb ? b[static_cast<size_t>(j) * ldb + kk] : b[static_cast<size_t>(kk) * ldb + j];
  }
  int lda, ldb, ldc;
  std::vector<float> a, b, cmat;
};

// One instruction set's kernels.
class CpuGemm : public ::testing::TestWithParam<cpu::SmallGemm> {
 protected:
  void SetUp() override {
    if (!cpu::cpu_runs(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << cpu::to_string(GetParam()) << " kernels";
  }
};

// The kernels the backend picked.
class CpuBackendGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cpu::small_gemm_kernels() == cpu::SmallGemm::kNone)
      GTEST_SKIP() << "this CPU runs none of the small-matrix kernels";
  }
};

void check(cpu::SmallGemm kernels, const Case& c) {
  SCOPED_TRACE(c.str());
  Operands o(c, 11 + c.m * 7 + c.n * 3 + c.k);
  std::vector<float> out = o.cmat;
  cpu::sgemm_small(kernels, c.ta, c.tb, c.m, c.n, c.k, c.alpha, o.a.data(), o.lda, o.b.data(),
                   o.ldb, c.beta, out.data(), o.ldc, {});
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < o.ldc; ++j) {
      const size_t at = static_cast<size_t>(i) * o.ldc + j;
      if (j >= c.n) {  // padding is never written
        ASSERT_EQ(out[at], o.cmat[at]) << "row " << i << ", padding column " << j;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int kk = 0; kk < c.k; ++kk) {
        const double p = static_cast<double>(o.at_a(c, i, kk)) * o.at_b(c, kk, j);
        sum += p;
        magnitude += std::fabs(p);
      }
      const double want = c.alpha * sum + (c.beta == 0.f ? 0.0 : c.beta * o.cmat[at]);
      // fp32 accumulation of k products: error grows with k and the magnitude summed.
      const double tol = 1e-6 + 2e-7 * (c.k + 2) * (std::fabs(c.alpha) * magnitude + 1.0);
      ASSERT_NEAR(out[at], want, tol) << "row " << i << ", column " << j;
    }
  }
}

TEST_P(CpuGemm, MatchesTheNaiveProductOnEveryTranspositionAndEdgeShape) {
  const int sizes[] = {1, 2, 5, 6, 7, 8, 9, 13, 16, 17, 31, 33};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int m : sizes)
        for (int n : sizes)
          for (int k : {1, 3, 8, 17}) check(GetParam(), {ta, tb, m, n, k, 0, 1.f, 0.f});
}

TEST_P(CpuGemm, TrainingShapesPaddedLeadingDimensionsAlphaAndBeta) {
  struct Dims {
    int m, n, k;
  };
  const Dims dims[] = {{32, 128, 64}, {32, 128, 128}, {32, 10, 128}, {128, 64, 32}, {10, 128, 32},
                       {32, 128, 10}, {29, 130, 67},  {0, 5, 3},     {4, 0, 3},     {3, 5, 0}};
  for (const Dims& d : dims)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int pad : {0, 3})
          for (float alpha : {1.f, -0.5f})
            for (float beta : {0.f, 1.f, 0.25f})
              check(GetParam(), {ta, tb, d.m, d.n, d.k, pad, alpha, beta});
}

// The largest products the AVX-512 kernels take (use_small_gemm: up to 256 x 256 x 256, such
// as a validation pass of 256 rows through width 256; with A or B transposed, products of
// width 1024), at odd sizes.
TEST_P(CpuGemm, TheLargestShapesTheKernelsTake) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) check(GetParam(), {ta, tb, 250, 253, 255, 3, 1.f, 0.25f});
  check(GetParam(), {false, true, 37, 1030, 1001, 3, 1.f, 0.f});
  // B larger than the cache goes a panel of columns at a time (cpu_gemm_tiles.h).
  for (bool ta : {false, true}) check(GetParam(), {ta, false, 37, 1030, 700, 3, 1.f, 0.25f});
}

// Which products take the AVX-512 kernels: every training shape of widths up to 256; forward
// passes and weight gradients of width 1024, except, where OpenBLAS runs its own AVX-512
// kernels, weight gradients past 256^3 over batches of 64 or more (1.15-1.55x these there)
// and those of batches up to 32 into at most 128 x 128 (1.01-1.13x); input gradients of width
// 1024 never.
TEST(UseSmallGemm, LargeAndShortBatchWeightGradientsGoToOpenBlasWhereItHasAvx512Kernels) {
  if (cpu::small_gemm_kernels() != cpu::SmallGemm::kAvx512) GTEST_SKIP() << "no AVX-512 here";
  EXPECT_TRUE(cpu::use_small_gemm(false, true, 32, 256, 256));   // forward
  EXPECT_TRUE(cpu::use_small_gemm(true, false, 256, 256, 32));   // weight gradient
  EXPECT_TRUE(cpu::use_small_gemm(false, false, 32, 256, 256));  // input gradient
  EXPECT_TRUE(cpu::use_small_gemm(false, true, 256, 1024, 1024));
  EXPECT_FALSE(cpu::use_small_gemm(false, false, 256, 1024, 1024));
  EXPECT_EQ(cpu::use_small_gemm(true, false, 1024, 1024, 256), !cpu::blas_runs_avx512_kernels());
  EXPECT_EQ(cpu::use_small_gemm(true, false, 1024, 1024, 64), !cpu::blas_runs_avx512_kernels());
  EXPECT_TRUE(cpu::use_small_gemm(true, false, 1024, 1024, 32));
  EXPECT_EQ(cpu::use_small_gemm(true, false, 128, 128, 32), !cpu::blas_runs_avx512_kernels());
  EXPECT_EQ(cpu::use_small_gemm(true, false, 10, 128, 29), !cpu::blas_runs_avx512_kernels());
  EXPECT_TRUE(cpu::use_small_gemm(true, false, 256, 128, 32));
  EXPECT_TRUE(cpu::use_small_gemm(true, false, 128, 128, 64));
}

TEST_P(CpuGemm, BetaZeroIgnoresWhatCHeld) {
  const Case c{false, true, 7, 19, 5, 0, 1.f, 0.f};
  Operands o(c, 3);
  std::vector<float> out(o.cmat.size(), std::nanf(""));
  cpu::sgemm_small(GetParam(), c.ta, c.tb, c.m, c.n, c.k, 1.f, o.a.data(), o.lda, o.b.data(), o.ldb,
                   0.f, out.data(), o.ldc, {});
  for (float v : out) ASSERT_FALSE(std::isnan(v));
}

// A row of C has the same bits whatever the number of rows around it (a last, short batch;
// a pack member): each element is one chain of FMAs over k.
TEST_P(CpuGemm, ARowDoesNotDependOnTheRowsAroundIt) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Case full{ta, tb, 32, 37, 45, 0, 1.f, 0.f};
      SCOPED_TRACE(full.str());
      Operands o(full, 5);
      std::vector<float> all(static_cast<size_t>(full.m) * full.n);
      cpu::sgemm_small(GetParam(), ta, tb, full.m, full.n, full.k, 1.f, o.a.data(), o.lda,
                       o.b.data(), o.ldb, 0.f, all.data(), full.n, {});
      for (int rows : {1, 5, 29}) {
        for (int first : {0, 3}) {
          std::vector<float> part(static_cast<size_t>(rows) * full.n);
          const float* a = o.a.data() + (ta ? first : static_cast<size_t>(first) * o.lda);
          cpu::sgemm_small(GetParam(), ta, tb, rows, full.n, full.k, 1.f, a, o.lda, o.b.data(),
                           o.ldb, 0.f, part.data(), full.n, {});
          ASSERT_EQ(0, std::memcmp(part.data(), all.data() + static_cast<size_t>(first) * full.n,
                                   part.size() * sizeof(float)))
              << rows << " rows from row " << first;
        }
      }
    }
}

// The fused epilogue computes what bias_activation_forward computes after the product.
TEST_P(CpuGemm, FusedBiasAndActivationEqualTheSeparatePassBitForBit) {
  auto backend = make_cpu_backend(1);
  for (Activation act : kAllActivations) {
    for (bool with_bias : {false, true}) {
      const Case c{false, true, 13, 21, 9, 0, 1.f, 0.f};
      SCOPED_TRACE(c.str() + " activation " + std::to_string(static_cast<int>(act)) +
                   (with_bias ? " bias" : ""));
      Operands o(c, 17);
      const std::vector<float> bias = random(c.n, 99);
      const size_t size = static_cast<size_t>(c.m) * c.n;
      std::vector<float> z1(size), y1(size), z2(size), y2(size);
      cpu::sgemm_small(GetParam(), c.ta, c.tb, c.m, c.n, c.k, 1.f, o.a.data(), o.lda, o.b.data(),
                       o.ldb, 0.f, z1.data(), c.n, {});
      // Large pre-activations too, where softplus and the exponentials change regime.
      for (size_t i = 0; i < size; i += 5) z1[i] *= 40.f;
      // And the values where max(z, 0) and z > 0 ? z : 0 could part: NaN, infinities.
      z1[1] = -0.f, z1[2] = std::nanf(""), z1[3] = INFINITY, z1[4] = -INFINITY;
      // And where tanh's and sigmoid's exponential clamps its argument or underflows.
      const float edges[] = {100.f, -100.f, 44.f, -44.f, 88.5f, -88.5f, 1e-30f, -1e-30f, 1e-3f};
      for (size_t i = 0; i < std::size(edges); ++i) z1[5 + i] = edges[i];
      z2 = z1;
      // The product of depth 0 below makes -0 + 0 of -0 first: do the same here.
      cpu::sgemm_small(GetParam(), c.ta, c.tb, c.m, c.n, 0, 1.f, o.a.data(), o.lda, o.b.data(),
                       o.ldb, 1.f, z1.data(), c.n, {});
      backend->bias_activation_forward(act, 1, c.m, c.n,
                                       {with_bias ? const_cast<float*>(bias.data()) : nullptr, 0},
                                       z1.data(), y1.data());
      // The same: run the epilogue on a product of zero depth (beta 1 keeps z2).
      cpu::GemmEpilogue e;
      e.bias = with_bias ? bias.data() : nullptr;
      e.activation = act;
      e.y = y2.data();
      e.ldy = c.n;
      cpu::sgemm_small(GetParam(), c.ta, c.tb, c.m, c.n, 0, 1.f, o.a.data(), o.lda, o.b.data(),
                       o.ldb, 1.f, z2.data(), c.n, e);
      ASSERT_EQ(0, std::memcmp(z1.data(), z2.data(), size * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), size * sizeof(float)));
    }
  }
}

// The activations the kernels apply in registers (all but GELU and softplus) against
// act::forward, bit for bit, over 65,536 values from 1e-9 to 2^7 in magnitude, both signs
// (every regime of the exponential: underflow, the polynomial, the clamps): a product of
// depth 0 with beta 1 leaves C's values as z.
TEST_P(CpuGemm, ActivationsInRegistersEqualTheScalarOnes) {
  const int m = 256, n = 256;
  std::vector<float> z(static_cast<size_t>(m) * n);
  for (size_t i = 0; i < z.size(); ++i) {
    const float magnitude = std::exp2(-30.f + 37.f * uniform01(3, 1, i));
    z[i] = (i % 2 ? -1.f : 1.f) * magnitude;
  }
  for (Activation act : {Activation::kTanh, Activation::kSigmoid, Activation::kLeakyRelu,
                         Activation::kElu, Activation::kSelu}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)));
    std::vector<float> c = z, y(z.size());
    cpu::GemmEpilogue e;
    e.activation = act;
    e.y = y.data();
    e.ldy = n;
    const float unused = 0.f;
    cpu::sgemm_small(GetParam(), false, false, m, n, 0, 1.f, &unused, 1, &unused, n, 1.f, c.data(),
                     n, e);
    for (size_t i = 0; i < z.size(); ++i) {
      const float want = act::forward(act, z[i]);
      ASSERT_EQ(0, std::memcmp(&y[i], &want, sizeof(float)))
          << "z = " << z[i] << ": " << y[i] << " against " << want;
    }
  }
}

// The same through a product of depth > 0: gemm then bias_activation_forward, or fused.
TEST_P(CpuGemm, FusedProductEqualsProductThenBiasActivation) {
  auto backend = make_cpu_backend(1);
  for (Activation act : {Activation::kLinear, Activation::kRelu, Activation::kTanh}) {
    for (int n : {7, 16, 37}) {
      const Case c{false, true, 11, n, 19, 0, 1.f, 0.f};
      SCOPED_TRACE(c.str() + " activation " + std::to_string(static_cast<int>(act)));
      Operands o(c, 23);
      const std::vector<float> bias = random(c.n, 5);
      const size_t size = static_cast<size_t>(c.m) * c.n;
      std::vector<float> z1(size), y1(size), z2(size), y2(size);
      cpu::sgemm_small(GetParam(), false, true, c.m, c.n, c.k, 1.f, o.a.data(), o.lda, o.b.data(),
                       o.ldb, 0.f, z1.data(), c.n, {});
      backend->bias_activation_forward(act, 1, c.m, c.n, {const_cast<float*>(bias.data()), 0},
                                       z1.data(), y1.data());
      cpu::GemmEpilogue e{bias.data(), act, y2.data(), c.n};
      cpu::sgemm_small(GetParam(), false, true, c.m, c.n, c.k, 1.f, o.a.data(), o.lda, o.b.data(),
                       o.ldb, 0.f, z2.data(), c.n, e);
      ASSERT_EQ(0, std::memcmp(z1.data(), z2.data(), size * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), size * sizeof(float)));
    }
  }
}

// A forward product of a short batch (16 to 32 rows, and W larger than X and C: most of
// the batches of 16 to 32 rows below) transposes X and C rather than W; its rows get the
// bits they get inside a batch of 40, which transposes W: z and y, every epilogue (in
// registers, and GELU's after the product), padding untouched.
TEST_P(CpuGemm, AShortBatchGetsTheBitsOfTheSameRowsInALongOne) {
  const int long_rows = 40;
  for (int n : {7, 10, 64, 130})
    for (int k : {128, 131})
      for (Activation act : {Activation::kLinear, Activation::kRelu, Activation::kTanh,
                             Activation::kSigmoid, Activation::kGelu})
        for (bool with_y : {false, true}) {
          const Case c{false, true, long_rows, n, k, 3, 1.f, 0.f};
          SCOPED_TRACE(c.str() + " activation " + std::to_string(static_cast<int>(act)) +
                       (with_y ? " y" : ""));
          Operands o(c, 31 + n + k);
          const std::vector<float> bias = random(n, 8);
          const size_t size = static_cast<size_t>(long_rows) * o.ldc;
          auto forward = [&](int first, int rows, float* z, float* y) {
            cpu::GemmEpilogue e;
            e.bias = bias.data();
            e.activation = act;
            e.y = with_y ? y : nullptr;
            e.ldy = o.ldc;
            cpu::sgemm_small(GetParam(), false, true, rows, n, k, 1.f,
                             o.a.data() + static_cast<size_t>(first) * o.lda, o.lda, o.b.data(),
                             o.ldb, 0.f, z, o.ldc, e);
          };
          std::vector<float> z_long(size, 7.f), y_long(size, 7.f);
          forward(0, long_rows, z_long.data(), y_long.data());
          for (int rows : {5, 16, 17, 24, 32}) {
            for (int first : {0, 8}) {
              std::vector<float> z(size, 7.f), y(size, 7.f);
              const size_t at = static_cast<size_t>(first) * o.ldc;
              forward(first, rows, z.data() + at, y.data() + at);
              const size_t floats = static_cast<size_t>(rows) * o.ldc;
              ASSERT_EQ(0, std::memcmp(z.data() + at, z_long.data() + at, floats * 4))
                  << rows << " rows from row " << first << ": z (padding included)";
              ASSERT_EQ(0, std::memcmp(y.data() + at, y_long.data() + at, floats * 4))
                  << rows << " rows from row " << first << ": y (padding included)";
            }
          }
        }
}

// Every instruction set gives the AVX2 kernels' bits (the header's promise, and the rerun
// promise across machines): products, fused forward and backward epilogues, bias gradients.
TEST(CpuGemmInstructionSets, Avx512GivesTheAvx2BitsOnEveryShapeAndEpilogue) {
  for (cpu::SmallGemm kernels : {cpu::SmallGemm::kAvx2, cpu::SmallGemm::kAvx512}) {
    if (!cpu::cpu_runs(kernels))
      GTEST_SKIP() << "this CPU cannot run the " << cpu::to_string(kernels) << " kernels";
  }
  enum Kind { kPlain, kBias, kBiasRelu, kBiasTanh, kBiasSigmoid, kBiasElu, kGradLinear, kGradRelu };
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int m : {1, 5, 13, 32})
        for (int n : {1, 7, 16, 17, 33, 64, 130})
          for (int k : {1, 9, 64, 128})
            for (Kind kind : {kPlain, kBias, kBiasRelu, kBiasTanh, kBiasSigmoid, kBiasElu,
                              kGradLinear, kGradRelu}) {
              const Case c{ta,
                           tb,
                           m,
                           n,
                           k,
                           1,
                           kind == kPlain ? -0.5f : 1.f,
                           kind == kPlain        ? 0.25f
                           : kind >= kGradLinear ? 1.f
                                                 : 0.f};
              SCOPED_TRACE(c.str() + " epilogue " + std::to_string(kind));
              Operands o(c, 7 + m + n + k);
              const std::vector<float> bias = random(n, 3);
              std::vector<float> z = random(o.cmat.size(), 4);
              z[0] = -0.f, z[o.cmat.size() / 2] = std::nanf("");
              struct Out {
                std::vector<float> c, y, bias_grad;
              };
              auto run = [&](cpu::SmallGemm kernels) {
                Out out{o.cmat, std::vector<float>(o.cmat.size(), 5.f), std::vector<float>(n, 9.f)};
                cpu::GemmEpilogue e;
                if (kind != kPlain && kind < kGradLinear) {
                  e.bias = bias.data();
                  e.activation = kind == kBiasRelu      ? Activation::kRelu
                                 : kind == kBiasTanh    ? Activation::kTanh
                                 : kind == kBiasSigmoid ? Activation::kSigmoid
                                 : kind == kBiasElu     ? Activation::kElu
                                                        : Activation::kLinear;
                  e.y = kind == kBias ? nullptr : out.y.data();
                  e.ldy = o.ldc;
                } else if (kind >= kGradLinear) {
                  e.activation = kind == kGradRelu ? Activation::kRelu : Activation::kLinear;
                  e.grad_z = z.data();
                  e.bias_grad = out.bias_grad.data();
                }
                cpu::sgemm_small(kernels, ta, tb, m, n, k, c.alpha, o.a.data(), o.lda, o.b.data(),
                                 o.ldb, c.beta, out.c.data(), o.ldc, e);
                return out;
              };
              const Out avx2 = run(cpu::SmallGemm::kAvx2), avx512 = run(cpu::SmallGemm::kAvx512);
              ASSERT_EQ(0, std::memcmp(avx2.c.data(), avx512.c.data(), avx2.c.size() * 4));
              ASSERT_EQ(0, std::memcmp(avx2.y.data(), avx512.y.data(), avx2.y.size() * 4));
              ASSERT_EQ(0, std::memcmp(avx2.bias_grad.data(), avx512.bias_grad.data(),
                                       avx2.bias_grad.size() * 4));
            }
}

// The weight gradients use_small_gemm leaves to OpenBLAS (a short batch's, where OpenBLAS runs
// its own AVX-512 kernels) come out with the kernels' bits: each element one FMA chain over
// k in order, as training computes them (alpha 1, beta 0). Else a small network trained
// here would not rerun bit for bit on a machine whose OpenBLAS differs.
TEST(CpuGemmInstructionSets, OpenBlasGivesTheKernelsBitsOnTheWeightGradientsItTakes) {
  if (!cpu::cpu_runs(cpu::SmallGemm::kAvx2)) GTEST_SKIP() << "no AVX2 kernels here";
  if (cpu::small_gemm_kernels() != cpu::SmallGemm::kAvx512 || !cpu::blas_runs_avx512_kernels())
    GTEST_SKIP() << "OpenBLAS takes no short-batch weight gradient here";
  int taken = 0;
  for (int m : {1, 10, 16, 17, 33, 64, 100, 128})
    for (int n : {1, 7, 16, 31, 64, 128, 256})
      for (int k : {1, 2, 7, 16, 29, 32})
        for (int pad : {0, 3}) {
          if (cpu::use_small_gemm(true, false, m, n, k)) continue;
          ++taken;
          const Case c{true, false, m, n, k, pad, 1.f, 0.f};
          SCOPED_TRACE(c.str());
          Operands o(c, 11 + m + n + k);
          std::vector<float> blas = o.cmat, kernels = o.cmat;
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.f, o.a.data(), o.lda,
                      o.b.data(), o.ldb, 0.f, blas.data(), o.ldc);
          cpu::sgemm_small(cpu::SmallGemm::kAvx2, true, false, m, n, k, 1.f, o.a.data(), o.lda,
                           o.b.data(), o.ldb, 0.f, kernels.data(), o.ldc, {});
          ASSERT_EQ(0, std::memcmp(blas.data(), kernels.data(), blas.size() * 4));
        }
  EXPECT_GT(taken, 100);  // the sweep reached the rule
}

// Unless the environment holds them back, the backend takes the widest kernels the CPU runs
// and says so in its description (recorded with every result).
TEST(CpuGemmInstructionSets, TheBackendTakesTheWidestKernelsTheCpuRuns) {
  if (std::getenv("LAYERLAB_CPU_GEMM")) GTEST_SKIP() << "LAYERLAB_CPU_GEMM is set";
  const cpu::SmallGemm widest = cpu::cpu_runs(cpu::SmallGemm::kAvx512) ? cpu::SmallGemm::kAvx512
                                : cpu::cpu_runs(cpu::SmallGemm::kAvx2) ? cpu::SmallGemm::kAvx2
                                                                       : cpu::SmallGemm::kNone;
  EXPECT_EQ(widest, cpu::small_gemm_kernels());
  const std::string described = make_cpu_backend(1)->describe();
  if (widest != cpu::SmallGemm::kNone) {
    EXPECT_NE(described.find(std::string(cpu::to_string(widest)) + " small-gemm"),
              std::string::npos)
        << described;
  }
}

// Through the backend, a pack of 2: the fused forward and backward products against the
// unfused ones (the base class's definitions: gemm, then the element-wise op), bit for bit,
// for every activation, at the digits network's shapes and odd ones.
TEST_F(CpuBackendGemm, BackendFusedProductsEqualTheUnfusedOnes) {
  auto backend = make_cpu_backend(1);
  struct Dims {
    int m, n, k;
  };
  for (const Dims d : {Dims{32, 128, 64}, Dims{29, 37, 11}, Dims{7, 10, 128}}) {
    const int pack = 2;
    const size_t a_size = static_cast<size_t>(pack) * d.m * d.k;
    const size_t b_size = static_cast<size_t>(pack) * d.n * d.k;
    const size_t c_size = static_cast<size_t>(pack) * d.m * d.n;
    const std::vector<float> a = random(a_size, 1), w = random(b_size, 2),
                             bias = random(static_cast<size_t>(pack) * d.n, 3);
    std::vector<float> z = random(c_size, 4);
    for (size_t i = 0; i < z.size(); i += 3) z[i] *= 30.f;
    for (Activation act : kAllActivations) {
      SCOPED_TRACE(std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k) +
                   " activation " + std::to_string(static_cast<int>(act)));
      GemmArgs g;  // forward: X W^T
      g.trans_b = true;
      g.m = d.m, g.n = d.n, g.k = d.k;
      g.a = a.data(), g.lda = d.k, g.stride_a = static_cast<int64_t>(d.m) * d.k;
      g.b = w.data(), g.ldb = d.k, g.stride_b = static_cast<int64_t>(d.n) * d.k;
      g.ldc = d.n, g.stride_c = static_cast<int64_t>(d.m) * d.n;
      g.batch = pack;
      const PackedVector b{const_cast<float*>(bias.data()), d.n};
      std::vector<float> z1(c_size), y1(c_size), z2(c_size), y2(c_size);
      g.c = z1.data();
      backend->Backend::gemm_bias_activation(g, act, b, y1.data());
      g.c = z2.data();
      backend->gemm_bias_activation(g, act, b, y2.data());
      ASSERT_EQ(0, std::memcmp(z1.data(), z2.data(), c_size * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), c_size * sizeof(float)));

      // backward: dY W (dY m x k, W k x n), then through the activation at (z, f(z)).
      std::vector<float> y(c_size);
      backend->bias_activation_forward(act, pack, d.m, d.n, {}, z.data(), y.data());
      GemmArgs dx;
      dx.m = d.m, dx.n = d.n, dx.k = d.k;
      dx.a = a.data(), dx.lda = d.k, dx.stride_a = g.stride_a;
      dx.b = w.data(), dx.ldb = d.n, dx.stride_b = g.stride_b;
      dx.ldc = d.n, dx.stride_c = g.stride_c;
      dx.batch = pack;
      for (float beta : {0.f, 1.f}) {
        dx.beta = beta;
        std::vector<float> d1 = random(c_size, 5), d2 = d1;
        std::vector<float> bg1(static_cast<size_t>(pack) * d.n), bg2(bg1.size(), 7.f);
        dx.c = d1.data();
        backend->Backend::gemm_activation_backward(dx, act, z.data(), y.data(), {bg1.data(), d.n});
        dx.c = d2.data();
        backend->gemm_activation_backward(dx, act, z.data(), y.data(), {bg2.data(), d.n});
        ASSERT_EQ(0, std::memcmp(d1.data(), d2.data(), c_size * sizeof(float))) << "beta " << beta;
        ASSERT_EQ(0, std::memcmp(bg1.data(), bg2.data(), bg1.size() * sizeof(float)))
            << "beta " << beta;
      }
    }
  }
}

// Through the backend: a pack of products gives each member what it gets alone.
TEST_F(CpuBackendGemm, PackMembersGetWhatTheyGetAlone) {
  auto backend = make_cpu_backend(1);
  const int pack = 3, m = 32, n = 24, k = 40;
  const std::vector<float> a = random(static_cast<size_t>(pack) * m * k, 1);
  const std::vector<float> b = random(static_cast<size_t>(pack) * n * k, 2);
  std::vector<float> packed(static_cast<size_t>(pack) * m * n), alone(packed.size());
  GemmArgs g;
  g.trans_b = true;
  g.m = m, g.n = n, g.k = k;
  g.a = a.data(), g.lda = k, g.stride_a = static_cast<int64_t>(m) * k;
  g.b = b.data(), g.ldb = k, g.stride_b = static_cast<int64_t>(n) * k;
  g.c = packed.data(), g.ldc = n, g.stride_c = static_cast<int64_t>(m) * n;
  g.batch = pack;
  backend->gemm(g);
  for (int p = 0; p < pack; ++p) {
    GemmArgs one = g;
    one.batch = 1;
    one.a += p * g.stride_a, one.b += p * g.stride_b;
    one.c = alone.data() + p * g.stride_c;
    backend->gemm(one);
  }
  EXPECT_EQ(0, std::memcmp(packed.data(), alone.data(), packed.size() * sizeof(float)));
}

INSTANTIATE_TEST_SUITE_P(InstructionSets, CpuGemm,
                         ::testing::Values(cpu::SmallGemm::kAvx2, cpu::SmallGemm::kAvx512),
                         [](const ::testing::TestParamInfo<cpu::SmallGemm>& param) {
                           return std::string(cpu::to_string(param.param));
                         });

}  // namespace
}  // namespace layerlab::backend
