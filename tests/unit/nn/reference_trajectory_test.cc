// PyTorch reference trajectories (scripts/make_reference.py, tests/reference/): the same
// initial weights and batches, 50 optimizer steps; every step's loss must match PyTorch's
// within 1e-4 relative, and the final weights closely.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "nn/optimizer.h"
#include "nn/registries.h"

namespace layerlab::nn {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> reference_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(LAYERLAB_SOURCE_DIR) / "tests/reference"))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

class ReferenceTrajectory : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceTrajectory, LossOfEveryStepMatchesPyTorch) {
  std::ifstream in(fs::path(LAYERLAB_SOURCE_DIR) / "tests/reference" / (GetParam() + ".json"));
  const json ref = json::parse(in);
  const Params params = Params::from_json(ref["params"]);
  const int classes = ref["task"]["classes"], targets = ref["task"]["targets"];
  const int inputs = ref["inputs"], rows = ref["rows"], batch = params.batch_size;
  const int target_cols = classes > 0 ? 1 : targets;
  const auto x = ref["x"].get<std::vector<float>>();
  const auto y = ref["y"].get<std::vector<float>>();
  const auto losses = ref["losses"].get<std::vector<double>>();
  const auto final_params = ref["final_parameters"].get<std::vector<float>>();

  auto b = backend::make_cpu_backend(1);
  Architecture arch;
  arch.inputs = inputs;
  arch.hidden = params.hidden_widths();
  arch.outputs = classes > 0 ? classes : targets;
  arch.activation = activations().get(params.activation);
  arch.batch_norm = params.batch_norm;
  arch.residual = params.residual;
  Network net(*b, arch, 1, batch);
  net.set_parameters(0, ref["initial_parameters"].get<std::vector<float>>());
  Optimizer optimizer(*b, params.optimizer, net);
  const backend::Loss loss =
      classes > 0 ? backend::Loss::kSoftmaxCrossEntropy : backend::Loss::kMeanSquaredError;

  backend::DeviceBuffer<float> bx(*b, batch * inputs), by(*b, batch * target_cols),
      d_out(*b, batch * arch.outputs);
  backend::DeviceBuffer<double> sum(*b, 1);
  const std::vector<float> no_dropout = {0.f};
  const std::vector<uint64_t> seeds = {0};
  const std::vector<double> lr = {params.learning_rate};
  for (size_t step = 0; step < losses.size(); ++step) {
    const int start = static_cast<int>(step * batch) % rows;
    bx.upload(x.data() + start * inputs, batch * inputs);
    by.upload(y.data() + start * target_cols, batch * target_cols);
    sum.zero();
    const float* out = net.forward(bx.data(), batch, true, no_dropout, seeds, step);
    b->loss(loss, 1, batch, arch.outputs, out, by.data(), d_out.data(), batch, sum.data(), nullptr);
    const double got = sum.download()[0] / batch;
    ASSERT_NEAR(got, losses[step], 1e-4 * std::abs(losses[step])) << "step " << step;
    net.backward(bx.data(), d_out.data(), batch);
    optimizer.step(net, std::span<const Params>(&params, 1), lr);
  }
  const std::vector<float> got = net.parameters(0);
  ASSERT_EQ(got.size(), final_params.size());
  // The bias of a layer followed by batch norm has no effect on the loss: its gradient is
  // rounding noise, which adam amplifies to full-size steps in both implementations alike.
  std::vector<bool> compared(got.size(), true);
  if (params.batch_norm) {
    size_t offset = 0;
    int in_width = inputs;
    for (int w : arch.hidden) {
      offset += static_cast<size_t>(in_width) * w;
      std::fill_n(compared.begin() + offset, w, false);
      offset += 3 * static_cast<size_t>(w);
      in_width = w;
    }
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!compared[i]) continue;
    EXPECT_NEAR(got[i], final_params[i], 1e-4 + 1e-3 * std::abs(final_params[i]))
        << "parameter " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, ReferenceTrajectory, ::testing::ValuesIn(reference_files()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace layerlab::nn
