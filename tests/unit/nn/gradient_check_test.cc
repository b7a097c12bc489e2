// Finite-difference checks of every activation, layer kind and loss: the analytic gradient of
// the loss w.r.t. every parameter of a small network against central differences.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu_backend.h"
#include "nn/registries.h"
#include "test_util.h"

namespace layerlab::nn {
namespace {

using backend::Activation;
using backend::Loss;

struct Case {
  std::string activation;
  bool batch_norm = false;
  bool residual = false;
  float dropout = 0.f;
  Loss loss = Loss::kSoftmaxCrossEntropy;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string n = c.activation;
  if (c.batch_norm) n += "_bn";
  if (c.residual) n += "_residual";
  if (c.dropout > 0) n += "_dropout";
  n += c.loss == Loss::kSoftmaxCrossEntropy ? "_xent" : "_mse";
  return n;
}

class GradientCheck : public ::testing::TestWithParam<Case> {};

TEST_P(GradientCheck, AnalyticMatchesFiniteDifferences) {
  const Case& c = GetParam();
  auto b = backend::make_cpu_backend(1);
  const int rows = 6, inputs = 4, outputs = 3;
  Architecture arch;
  arch.inputs = inputs;
  arch.hidden = {5, 5};
  arch.outputs = outputs;
  arch.activation = activations().get(c.activation);
  arch.batch_norm = c.batch_norm;
  arch.residual = c.residual;
  arch.dropout = c.dropout > 0;
  Network net(*b, arch, 1, rows);
  net.initialize(0, Init::kGlorotNormal, 3);
  // Non-zero biases and BN parameters so every gradient path is exercised.
  std::vector<float> params = net.parameters(0);
  std::vector<float> noise = testing::normal_values(params.size(), 11);
  for (size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * noise[i];
  net.set_parameters(0, params);

  backend::DeviceBuffer<float> x(*b, rows * inputs), y(*b, rows * outputs);
  x.upload(testing::normal_values(rows * inputs, 5));
  std::vector<float> targets = testing::normal_values(rows * outputs, 9);
  if (c.loss == Loss::kSoftmaxCrossEntropy)
    for (int r = 0; r < rows; ++r) targets[r] = static_cast<float>(r % outputs);
  y.upload(targets);
  const std::vector<float> rate = {c.dropout};
  const std::vector<uint64_t> seed = {42};

  testing::pack_loss(*b, net, c.loss, x, y, rows, rate, seed, true);
  std::vector<float> analytic(params.size());
  b->download(analytic.data(), net.gradients_view().data, analytic.size() * sizeof(float));

  const float eps = 2e-3f;  // small enough not to cross a relu kink on this data
  int checked = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<float> p = params;
    p[i] = params[i] + eps;
    net.set_parameters(0, p);
    const double up = testing::pack_loss(*b, net, c.loss, x, y, rows, rate, seed, false)[0];
    p[i] = params[i] - eps;
    net.set_parameters(0, p);
    const double down = testing::pack_loss(*b, net, c.loss, x, y, rows, rate, seed, false)[0];
    const double numeric = (up - down) / (2 * eps);
    const double scale = std::max({std::abs(numeric), std::abs(double(analytic[i])), 1e-2});
    EXPECT_LT(std::abs(numeric - analytic[i]) / scale, 3e-2)
        << "parameter " << i << ": analytic " << analytic[i] << ", numeric " << numeric;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(net.parameter_count()));
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string& a : activations().names()) {
    cases.push_back({a});
    cases.push_back({a, false, false, 0.f, Loss::kMeanSquaredError});
  }
  for (const char* a : {"relu", "tanh", "gelu"}) {
    cases.push_back({a, true});
    cases.push_back({a, false, true});
    cases.push_back({a, false, false, 0.3f});
    cases.push_back({a, true, true, 0.3f, Loss::kMeanSquaredError});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Networks, GradientCheck, ::testing::ValuesIn(all_cases()), case_name);

// Each activation's derivative against a central difference of its forward function.
TEST(ActivationDerivative, MatchesFiniteDifferences) {
  for (const std::string& name : activations().names()) {
    const Activation a = activations().get(name);
    for (float z = -4.f; z <= 4.f; z += 0.37f) {
      const double h = 1e-3;
      const double numeric = (double(backend::act::forward(a, float(z + h))) -
                              backend::act::forward(a, float(z - h))) /
                             (2 * h);
      const float analytic = backend::act::derivative(a, z, backend::act::forward(a, z));
      EXPECT_NEAR(analytic, numeric, 2e-3 * std::max(1.0, std::abs(numeric)))
          << name << " at " << z;
    }
  }
}

}  // namespace
}  // namespace layerlab::nn

namespace layerlab::backend {
namespace {

TEST(FastExp, MatchesLibmToAFewUlp) {
  for (float x = -87.f; x <= 88.f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(fast_exp(x), want, 4e-7 * want) << "at " << x;
  }
  EXPECT_EQ(fast_exp(0.f), 1.f);
  EXPECT_GT(fast_exp(-200.f), 0.f);  // clamped, not a denormal or NaN
  EXPECT_TRUE(std::isfinite(fast_exp(200.f)));
}

TEST(FastActivations, MatchLibmDefinitions) {
  for (float z = -12.f; z <= 12.f; z += 0.013f) {
    EXPECT_NEAR(act::forward(Activation::kTanh, z), std::tanh(double(z)), 3e-7) << z;
    EXPECT_NEAR(act::forward(Activation::kSigmoid, z), 1 / (1 + std::exp(-double(z))), 3e-7) << z;
    EXPECT_NEAR(act::forward(Activation::kElu, z), z > 0 ? z : std::expm1(double(z)), 3e-7) << z;
  }
}

}  // namespace
}  // namespace layerlab::backend
