// Update rules against their textbook definitions, computed here independently in double
// precision for a few steps with fixed gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/ops.h"

namespace layerlab::backend {
namespace {

struct Reference {
  double w, s1 = 0, s2 = 0;
};

// One step of `rule` in double, from PyTorch's documented algorithms.
void reference_step(UpdateRule rule, Reference& r, double g, const StepHyper& h, int t) {
  const double lr = h.lr, wd = h.weight_decay, mu = h.momentum;
  switch (rule) {
    case UpdateRule::kSgd:
      r.w -= lr * (g + wd * r.w);
      break;
    case UpdateRule::kMomentum:
      r.s1 = mu * r.s1 + (g + wd * r.w);
      r.w -= lr * r.s1;
      break;
    case UpdateRule::kNesterov: {
      const double gi = g + wd * r.w;
      r.s1 = mu * r.s1 + gi;
      r.w -= lr * (gi + mu * r.s1);
      break;
    }
    case UpdateRule::kAdam:
    case UpdateRule::kAdamW: {
      double gi = g;
      if (rule == UpdateRule::kAdamW)
        r.w *= 1 - lr * wd;
      else
        gi += wd * r.w;
      r.s1 = 0.9 * r.s1 + 0.1 * gi;
      r.s2 = 0.999 * r.s2 + 0.001 * gi * gi;
      const double mhat = r.s1 / (1 - std::pow(0.9, t)), vhat = r.s2 / (1 - std::pow(0.999, t));
      r.w -= lr * mhat / (std::sqrt(vhat) + h.eps);
      break;
    }
    case UpdateRule::kRmsprop: {
      const double gi = g + wd * r.w;
      r.s2 = 0.99 * r.s2 + 0.01 * gi * gi;
      r.w -= lr * gi / (std::sqrt(r.s2) + h.eps);
      break;
    }
    case UpdateRule::kAdagrad: {
      const double gi = g + wd * r.w;
      r.s1 += gi * gi;
      r.w -= lr * gi / (std::sqrt(r.s1) + h.eps);
      break;
    }
  }
}

class UpdateRuleTest : public ::testing::TestWithParam<UpdateRule> {};

TEST_P(UpdateRuleTest, MatchesDefinitionOverSteps) {
  const UpdateRule rule = GetParam();
  auto b = make_cpu_backend(1);
  const std::vector<float> w0 = {0.5f, -1.25f, 2.0f, 0.0f};
  const std::vector<float> grads[3] = {
      {0.1f, -0.4f, 1.5f, -0.02f}, {0.3f, 0.2f, -0.5f, 0.01f}, {-0.2f, 0.1f, 0.7f, 0.0f}};
  std::vector<float> w = w0, s1(4, 0.f), s2(4, 0.f);
  std::vector<Reference> ref;
  for (float v : w0) ref.push_back({v});
  for (int t = 1; t <= 3; ++t) {
    StepHyper h;
    h.lr = 0.05f;
    h.momentum = 0.9f;
    h.weight_decay = 0.01f;
    h.beta2 = rule == UpdateRule::kRmsprop ? 0.99f : 0.999f;
    h.eps = rule == UpdateRule::kAdagrad ? 1e-10f : 1e-8f;
    h.bias_correction1 = static_cast<float>(1 - std::pow(0.9, t));
    h.bias_correction2 = static_cast<float>(1 - std::pow(0.999, t));
    std::vector<float> g = grads[t - 1];
    b->optimizer_step(rule, 1, 4, {w.data(), 4}, {g.data(), 4}, {s1.data(), 4}, {s2.data(), 4},
                      std::span<const StepHyper>(&h, 1));
    for (size_t i = 0; i < 4; ++i) {
      reference_step(rule, ref[i], grads[t - 1][i], h, t);
      EXPECT_NEAR(w[i], ref[i].w, 1e-6 * std::max(1.0, std::abs(ref[i].w)))
          << "step " << t << " parameter " << i;
    }
  }
  for (size_t i = 0; i < 4; ++i) EXPECT_NE(w[i], w0[i]) << "parameter " << i << " never moved";
}

TEST_P(UpdateRuleTest, ZeroLearningRateFreezesParameters) {
  auto b = make_cpu_backend(1);
  std::vector<float> w = {0.5f, -1.f}, g = {1.f, 2.f}, s1(2, 0.f), s2(2, 0.f);
  StepHyper h;
  h.lr = 0.f;
  h.weight_decay = 0.1f;
  b->optimizer_step(GetParam(), 1, 2, {w.data(), 2}, {g.data(), 2}, {s1.data(), 2}, {s2.data(), 2},
                    std::span<const StepHyper>(&h, 1));
  EXPECT_EQ(w[0], 0.5f);
  EXPECT_EQ(w[1], -1.f);
}

// The CPU backend runs its update in a clone for this CPU's widest vectors (AVX-512, AVX2
// or baseline x86-64); without contraction every clone must give the bits of optim::update
// applied one element at a time (the rerun promise across the loops' vector widths and
// tails). 1,003 elements: whole vectors and a tail.
TEST_P(UpdateRuleTest, TheCpuStepHasTheBitsOfTheScalarDefinition) {
  const UpdateRule rule = GetParam();
  constexpr size_t kN = 1003;
  std::vector<float> w(kN), g(kN), s1(kN), s2(kN);
  for (size_t i = 0; i < kN; ++i) {
    w[i] = std::sin(0.37f * static_cast<float>(i)) * 1.7f;
    g[i] = std::cos(0.91f * static_cast<float>(i)) * 0.3f;
    s1[i] = 0.01f * static_cast<float>(i % 17);
    s2[i] = 0.002f * static_cast<float>(i % 13);
  }
  StepHyper h;
  h.lr = 0.03f;
  h.momentum = 0.9f;
  h.weight_decay = 0.01f;
  h.bias_correction1 = 0.19f;
  h.bias_correction2 = 0.002f;
  std::vector<float> ew = w, es1 = s1, es2 = s2;
  with_rule(rule, [&](auto tag) {
    for (size_t i = 0; i < kN; ++i)
      optim::update<decltype(tag)::value>(ew[i], g[i], es1[i], es2[i], h);
  });
  auto b = make_cpu_backend(1);
  b->optimizer_step(rule, 1, static_cast<int64_t>(kN), {w.data(), 0}, {g.data(), 0}, {s1.data(), 0},
                    {s2.data(), 0}, std::span<const StepHyper>(&h, 1));
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_EQ(w[i], ew[i]) << "parameter " << i;
    ASSERT_EQ(s1[i], es1[i]) << "first state of " << i;
    ASSERT_EQ(s2[i], es2[i]) << "second state of " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, UpdateRuleTest,
                         ::testing::Values(UpdateRule::kSgd, UpdateRule::kMomentum,
                                           UpdateRule::kNesterov, UpdateRule::kAdam,
                                           UpdateRule::kAdamW, UpdateRule::kRmsprop,
                                           UpdateRule::kAdagrad));

}  // namespace
}  // namespace layerlab::backend
