// Every Backend operation on random inputs, CUDA against the CPU reference, over several
// shapes and pack sizes (and the CPU with 2 threads against it, which checks the cases
// themselves everywhere). Tolerances (per element |cuda - cpu| <= abs + rel * |cpu|):
//  - element-wise work: rel 1e-5, abs 1e-6. Both backends run the same scalar code (ops.h);
//    what differs is nvcc's fused multiply-adds and CUDA's expf/erff/log1pf (<= 2 ulp).
//  - reductions (bias gradients, sums over rows, batch norm, losses): rel 1e-4, abs 1e-5 (batch
//    norm backward: abs 1e-4): the same sums in another order, up to 700 rows.
//  - matrix products, as normalised mean squared error of the whole result (the error of a
//    reduced-precision product is relative to the result, not to each element): fp32 1e-10
//    (order of k <= 257 products, ~1e-6 relative), tf32 1e-5 (10-bit mantissas: ~5e-4
//    relative per operand, ~1e-6 NMSE, 10x margin), bf16 1e-4 (8-bit: ~3e-3 relative per
//    product, ~1e-5 NMSE, 10x margin).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend_fixture.h"
#include "op_compare.h"

namespace layerlab::backend {
namespace {

using testing::Arrays;
using testing::DeviceArrays;
using testing::Op;
using testing::Tolerance;
using testing::uniform;

constexpr Tolerance kElementwise{1e-5, 1e-6};
constexpr Tolerance kReduction{1e-4, 1e-5};

struct Shape {
  int pack, rows, cols;
  int64_t size() const { return static_cast<int64_t>(pack) * rows * cols; }
  std::string str() const {
    return "pack " + std::to_string(pack) + ", rows " + std::to_string(rows) + ", cols " +
           std::to_string(cols);
  }
};

// Rows beyond 256 exercise the chunked reductions (cuda_columns.cu).
const std::vector<Shape> kShapes = {{1, 1, 1}, {3, 7, 10}, {2, 32, 129}, {2, 300, 33}, {1, 700, 5}};

class BackendOps : public testing::AgainstCpu {
 protected:
  void expect_same(const Arrays& in, const Op& op, const Tolerance& tol) {
    EXPECT_TRUE(testing::same_results(*cpu_, *tested_, in, op, tol));
  }
};
LAYERLAB_AGAINST_CPU(BackendOps);

TEST_P(BackendOps, FillZeroCopyMultiplyAdd) {
  for (int64_t n : {1, 1000, 100003}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Arrays in{{uniform(n, 1), uniform(n, 2)}, {}, {}};
    expect_same(
        in, [n](Backend& b, DeviceArrays& a) { b.fill(a.f(0) + 1, n - 1, 2.5f); }, kElementwise);
    expect_same(
        in, [n](Backend& b, DeviceArrays& a) { b.zero(a.f(0), sizeof(float) * (n / 2)); },
        kElementwise);
    expect_same(
        in, [n](Backend& b, DeviceArrays& a) { b.copy(n, a.f(0), a.f(1)); }, kElementwise);
    expect_same(
        in, [n](Backend& b, DeviceArrays& a) { b.multiply(n, a.f(0), a.f(1)); }, kElementwise);
    expect_same(
        in, [n](Backend& b, DeviceArrays& a) { b.add(n, a.f(0), a.f(1)); }, kElementwise);
  }
}

TEST_P(BackendOps, GatherRows) {
  constexpr int kSourceRows = 50;
  for (const Shape& s : kShapes) {
    for (bool shared_order : {false, true}) {
      SCOPED_TRACE(s.str() + (shared_order ? ", one order for all members" : ""));
      std::vector<int32_t> idx(static_cast<size_t>(s.pack) * s.rows);
      for (size_t j = 0; j < idx.size(); ++j)
        idx[j] = static_cast<int32_t>(mix64(j + 11) % kSourceRows);
      const Arrays in{{uniform(kSourceRows * s.cols, 3), uniform(s.size(), 4)}, {idx}, {}};
      const int64_t idx_stride = shared_order ? 0 : s.rows;
      expect_same(
          in,
          [&](Backend& b, DeviceArrays& a) {
            b.gather_rows(s.pack, s.rows, s.cols, a.f(0), a.i(0), idx_stride, a.f(1));
          },
          Tolerance{});
    }
  }
}

TEST_P(BackendOps, BiasActivationForward) {
  for (Activation act : kAllActivations) {
    for (const Shape& s : kShapes) {
      const int stride = s.cols + 3;
      const Arrays in{
          {uniform(s.size(), 5, -4.f, 4.f), uniform(s.size(), 6), uniform(s.pack * stride, 7)},
          {},
          {}};
      for (bool bias : {false, true}) {
        SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)) + ", " + s.str() +
                     (bias ? ", bias" : ""));
        expect_same(
            in,
            [&](Backend& b, DeviceArrays& a) {
              const PackedVector bv = bias ? PackedVector{a.f(2), stride} : PackedVector{};
              b.bias_activation_forward(act, s.pack, s.rows, s.cols, bv, a.f(0), a.f(1));
            },
            kElementwise);
      }
    }
  }
  const Shape s = kShapes[1];  // y aliasing z, as the network's linear layers call it
  const Arrays in{{uniform(s.size(), 8), uniform(s.pack * s.cols, 9)}, {}, {}};
  expect_same(
      in,
      [&](Backend& b, DeviceArrays& a) {
        b.bias_activation_forward(Activation::kLinear, s.pack, s.rows, s.cols, {a.f(1), s.cols},
                                  a.f(0), a.f(0));
      },
      kElementwise);
}

TEST_P(BackendOps, ActivationBackwardWithAndWithoutBiasGradient) {
  for (Activation act : kAllActivations) {
    for (const Shape& s : kShapes) {
      const int stride = s.cols + 5;
      std::vector<float> z = uniform(s.size(), 10, -4.f, 4.f), y(z.size());
      for (size_t j = 0; j < z.size(); ++j) y[j] = act::forward(act, z[j]);
      const Arrays in{{z, y, uniform(s.size(), 11), uniform(s.pack * stride, 12)}, {}, {}};
      for (bool bias : {false, true}) {
        SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)) + ", " + s.str() +
                     (bias ? ", bias gradient" : ""));
        // dz aliases dy, as the network calls it.
        expect_same(
            in,
            [&](Backend& b, DeviceArrays& a) {
              const PackedVector bg = bias ? PackedVector{a.f(3), stride} : PackedVector{};
              b.activation_backward(act, s.pack, s.rows, s.cols, a.f(0), a.f(1), a.f(2), a.f(2),
                                    bg);
            },
            bias ? kReduction : kElementwise);
      }
    }
  }
}

TEST_P(BackendOps, SumRows) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    const int stride = s.cols + 5;
    const Arrays in{{uniform(s.size(), 13), uniform(s.pack * stride, 14)}, {}, {}};
    expect_same(
        in,
        [&](Backend& b, DeviceArrays& a) {
          b.sum_rows(s.pack, s.rows, s.cols, a.f(0), {a.f(1), stride});
        },
        kReduction);
  }
}

// Arrays of a batch-norm case: x or xhat, dy, out, parameters (gamma then beta per member),
// running mean, running variance, mean, inv_std, gradients.
Arrays batchnorm_arrays(const Shape& s, int stride) {
  const size_t stats = static_cast<size_t>(s.pack) * s.cols;
  return {
      {uniform(s.size(), 15, 2.f, 4.f), uniform(s.size(), 16), uniform(s.size(), 17),
       uniform(s.pack * stride, 18, 0.5f, 1.5f), uniform(stats, 19), uniform(stats, 20, 0.5f, 2.f),
       uniform(stats, 21), uniform(stats, 22, 0.5f, 2.f), uniform(s.pack * stride, 23)},
      {},
      {}};
}

Backend::BatchNormState batchnorm_state(DeviceArrays& a, int cols, int stride) {
  Backend::BatchNormState st;
  st.gamma = {a.f(3), stride};
  st.beta = {a.f(3) + cols, stride};
  st.running_mean = a.f(4);
  st.running_var = a.f(5);
  st.mean = a.f(6);
  st.inv_std = a.f(7);
  return st;
}

TEST_P(BackendOps, BatchNormForward) {
  for (const Shape& s : kShapes) {
    const int stride = 2 * s.cols + 4;
    const Arrays in = batchnorm_arrays(s, stride);
    for (bool training : {true, false}) {
      for (bool keep_xhat : {true, false}) {
        SCOPED_TRACE(s.str() + (training ? ", training" : ", inference") +
                     (keep_xhat ? "" : ", no xhat"));
        // y aliases x, as the network calls it.
        expect_same(
            in,
            [&](Backend& b, DeviceArrays& a) {
              b.batchnorm_forward(s.pack, s.rows, s.cols, a.f(0), keep_xhat ? a.f(1) : nullptr,
                                  a.f(0), batchnorm_state(a, s.cols, stride), training);
            },
            kReduction);
      }
    }
  }
}

TEST_P(BackendOps, BatchNormBackward) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    const int stride = 2 * s.cols + 4;
    Arrays in = batchnorm_arrays(s, stride);
    in.f[0] = uniform(s.size(), 24, -2.f, 2.f);  // xhat
    // dx aliases dy, as the network calls it.
    expect_same(
        in,
        [&](Backend& b, DeviceArrays& a) {
          b.batchnorm_backward(s.pack, s.rows, s.cols, a.f(0), a.f(1), a.f(1),
                               batchnorm_state(a, s.cols, stride), {a.f(8), stride},
                               {a.f(8) + s.cols, stride});
        },
        Tolerance{1e-4, 1e-4});
  }
}

TEST_P(BackendOps, DropoutMasksAreTheSameAsOnTheCpu) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.str());
    std::vector<float> rate;
    std::vector<uint64_t> seed;
    for (int p = 0; p < s.pack; ++p) {
      rate.push_back(std::vector<float>{0.3f, 0.f, 0.9f}[p % 3]);
      seed.push_back(mix64(p + 100));
    }
    const int64_t n = static_cast<int64_t>(s.rows) * s.cols;
    const Arrays in{{uniform(s.size(), 25), uniform(s.size(), 26)}, {}, {}};
    expect_same(
        in,
        [&](Backend& b, DeviceArrays& a) {
          b.dropout_forward(s.pack, n, rate, seed, 5, a.f(0), a.f(1));
        },
        kElementwise);
  }
}

TEST_P(BackendOps, Losses) {
  for (Loss kind : {Loss::kSoftmaxCrossEntropy, Loss::kMeanSquaredError}) {
    const bool classes = kind == Loss::kSoftmaxCrossEntropy;
    for (const Shape& s : kShapes) {
      const int64_t target_size = classes ? static_cast<int64_t>(s.pack) * s.rows : s.size();
      std::vector<float> targets = uniform(target_size, 27);
      if (classes)
        for (size_t j = 0; j < targets.size(); ++j)
          targets[j] = static_cast<float>(mix64(j + 3) % s.cols);
      const Arrays in{{uniform(s.size(), 28, -3.f, 3.f), targets, uniform(s.size(), 29)},
                      {},
                      {std::vector<double>(s.pack, 1.5), std::vector<double>(s.pack, 2.0)}};
      for (bool gradient : {true, false}) {
        for (int batch_rows : {s.rows, 2 * s.rows}) {
          SCOPED_TRACE(std::string(classes ? "cross-entropy, " : "mse, ") + s.str() +
                       (gradient ? ", gradient" : "") + ", batch rows " +
                       std::to_string(batch_rows));
          expect_same(
              in,
              [&](Backend& b, DeviceArrays& a) {
                b.loss(kind, s.pack, s.rows, s.cols, a.f(0), a.f(1), gradient ? a.f(2) : nullptr,
                       batch_rows, a.d(0), classes ? a.d(1) : nullptr);
              },
              kReduction);
        }
      }
    }
  }
}

TEST_P(BackendOps, OptimizerStepOfEveryRuleWithPerMemberHyperparameters) {
  const UpdateRule rules[] = {UpdateRule::kSgd,    UpdateRule::kMomentum, UpdateRule::kNesterov,
                              UpdateRule::kAdam,   UpdateRule::kAdamW,    UpdateRule::kRmsprop,
                              UpdateRule::kAdagrad};
  constexpr int kPack = 3;
  for (UpdateRule rule : rules) {
    for (int64_t n : {1, 1000, 70001}) {
      SCOPED_TRACE("rule " + std::to_string(static_cast<int>(rule)) + ", n " + std::to_string(n));
      const int64_t stride = (n + 15) / 16 * 16 + 16;
      std::vector<StepHyper> hyper(kPack);
      for (int p = 0; p < kPack; ++p) {
        hyper[p].lr = 0.01f * (p + 1);
        hyper[p].momentum = 0.5f + 0.2f * p;
        hyper[p].weight_decay = 1e-3f * p;
        hyper[p].beta2 = 0.99f;
        hyper[p].bias_correction1 = 0.1f + 0.2f * p;
        hyper[p].bias_correction2 = 0.01f + 0.1f * p;
      }
      const Arrays in{
          {uniform(kPack * stride, 30), uniform(kPack * stride, 31),
           uniform(kPack * stride, 32, 0.f, 1.f), uniform(kPack * stride, 33, 0.f, 1.f)},
          {},
          {}};
      expect_same(
          in,
          [&](Backend& b, DeviceArrays& a) {
            b.optimizer_step(rule, kPack, n, {a.f(0), stride}, {a.f(1), stride}, {a.f(2), stride},
                             {a.f(3), stride}, hyper);
          },
          kElementwise);
    }
  }
}

struct GemmCase {
  int m, n, k;
  int batch;
  bool shared_b;  // stride_b = 0: one B for every member
};

TEST_P(BackendOps, GemmInEveryPrecisionAndTransposition) {
  const GemmCase cases[] = {{1, 1, 1, 1, false},     {7, 10, 5, 3, false},
                            {32, 128, 64, 2, false}, {64, 33, 257, 3, false},
                            {300, 20, 40, 1, false}, {16, 24, 8, 3, true}};
  const std::pair<Precision, Tolerance> precisions[] = {{Precision::kFp32, Tolerance{0, 0, 1e-10}},
                                                        {Precision::kTf32, Tolerance{0, 0, 1e-5}},
                                                        {Precision::kBf16, Tolerance{0, 0, 1e-4}}};
  for (const auto& [precision, tol] : precisions) {
    if (tested_is_cpu() && precision != Precision::kFp32) continue;  // fp32 only
    tested_->set_precision(precision);
    for (const GemmCase& c : cases) {
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        SCOPED_TRACE("precision " + std::to_string(static_cast<int>(precision)) + ", m " +
                     std::to_string(c.m) + ", n " + std::to_string(c.n) + ", k " +
                     std::to_string(c.k) + ", batch " + std::to_string(c.batch) +
                     (ta ? ", A^T" : "") + (tb ? ", B^T" : "") + (c.shared_b ? ", shared B" : ""));
        // Padded leading dimensions and strides, as the network's parameter blocks have.
        const int lda = (ta ? c.m : c.k) + 3, ldb = (tb ? c.k : c.n) + 1, ldc = c.n + 2;
        const int64_t stride_a = static_cast<int64_t>(ta ? c.k : c.m) * lda + 5;
        const int64_t stride_b = c.shared_b ? 0 : static_cast<int64_t>(tb ? c.n : c.k) * ldb + 7;
        const int64_t stride_c = static_cast<int64_t>(c.m) * ldc + 4;
        const int64_t b_size =
            c.shared_b ? static_cast<int64_t>(tb ? c.n : c.k) * ldb : stride_b * c.batch;
        const Arrays in{
            {uniform(stride_a * c.batch, 34), uniform(b_size, 35), uniform(stride_c * c.batch, 36)},
            {},
            {}};
        expect_same(
            in,
            [&](Backend& b, DeviceArrays& a) {
              GemmArgs g;
              g.trans_a = ta, g.trans_b = tb;
              g.m = c.m, g.n = c.n, g.k = c.k;
              g.alpha = 1.5f, g.beta = 0.5f;
              g.a = a.f(0), g.lda = lda, g.stride_a = stride_a;
              g.b = a.f(1), g.ldb = ldb, g.stride_b = stride_b;
              g.c = a.f(2), g.ldc = ldc, g.stride_c = stride_c;
              g.batch = c.batch;
              b.gemm(g);
            },
            tol);
      }
    }
  }
  tested_->set_precision(Precision::kFp32);
}

TEST(OpCompare, ReportsWhichArrayAndElementDiffer) {
  auto one = make_cpu_backend(1), two = make_cpu_backend(2);
  const Arrays in{{uniform(10, 1), uniform(10, 2)}, {}, {}};
  const auto result = testing::same_results(
      *one, *two, in,
      [](Backend& b, DeviceArrays& a) { b.fill(a.f(1) + 3, 1, static_cast<float>(b.threads())); },
      kElementwise);
  ASSERT_FALSE(result);
  EXPECT_NE(
      std::string(result.message()).find("float array 1: 1 of 10 elements differ; worst at 3"),
      std::string::npos)
      << result.message();
}

using CudaOnly = testing::AgainstCpu;
INSTANTIATE_TEST_SUITE_P(Cuda, CudaOnly, ::testing::Values(std::string("cuda")));

TEST_P(CudaOnly, PoolReusesReleasedBlocksAndCountsThem) {
  const int64_t before = tested_->memory_in_use();
  void* p = tested_->allocate(1 << 20);
  const int64_t held = tested_->memory_in_use();
  EXPECT_GE(held - before, 1 << 20);
  tested_->release(p);
  EXPECT_EQ(tested_->memory_in_use(), held) << "released blocks stay pooled, and count";
  void* again = tested_->allocate((1 << 20) - 100);
  EXPECT_EQ(again, p) << "a block of the same size class is reused";
  EXPECT_EQ(tested_->memory_in_use(), held);
  tested_->release(again);
}

TEST_P(CudaOnly, DescribeNamesTheDeviceAndLibraries) {
  const std::string d = tested_->describe();
  EXPECT_EQ(tested_->name(), "cuda:0");
  EXPECT_NE(d.find("cuda:0 ("), std::string::npos) << d;
  EXPECT_NE(d.find("CUDA runtime"), std::string::npos) << d;
  EXPECT_NE(d.find("cuBLAS"), std::string::npos) << d;
}

}  // namespace
}  // namespace layerlab::backend
