// `layerlab predict` on hostile model files: metadata claiming a network of 10^9 units, NaN
// weights, outputs that overflow. Each is exit code 2 with a one-line message, never an
// abort or a class printed from NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/run_command.h"
#include "model/model.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::run_layerlab;

// 2 inputs -> 2 relu -> 2 classes.
model::Model small_model(float weight = 0.5f) {
  model::Model m;
  m.architecture.inputs = 2;
  m.architecture.hidden = {2};
  m.architecture.outputs = 2;
  m.activation = "relu";
  m.classes = 2;
  m.class_names = {"no", "yes"};
  m.feature_names = {"a", "b"};
  m.scaler.mean = {0.f, 0.f};
  m.scaler.scale = {1.f, 1.f};
  m.parameters.assign(static_cast<size_t>(m.architecture.parameter_count()), weight);
  return m;
}

class HostileModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_dir("hostile-model");
    data_ = (dir_ / "rows.csv").string();
    std::ofstream(data_) << "a,b\n1,2\n3,4\n";
  }
  std::string save(const model::SafeTensors& st) {
    const std::string path = (dir_ / "m.safetensors").string();
    model::write_safetensors(path, st);
    return path;
  }
  testing::CommandResult predict(const std::string& model, const std::string& data) {
    return run_layerlab("predict --model " + model + " --data " + data);
  }
  static void expect_refused(const testing::CommandResult& r, const std::string& part) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  }
  std::filesystem::path dir_;
  std::string data_;
};

TEST_F(HostileModel, GoodModelPredicts) {
  const auto r = predict(save(model::to_safetensors(small_model())), data_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "no\nno\n");
}

TEST_F(HostileModel, ArchitectureOfABillionUnitsIsRefusedBeforeAllocating) {
  model::SafeTensors st = model::to_safetensors(small_model());
  json arch = json::parse(st.metadata["architecture"]);
  arch["hidden"] = {1000000000};
  st.metadata["architecture"] = arch.dump();
  expect_refused(predict(save(st), data_),
                 "metadata 'architecture': network: a hidden layer of 1000000000 units; at most "
                 "1000000 (NetworkLimits::max_units)");
  arch["hidden"] = {100000};
  st.metadata["architecture"] = arch.dump();
  expect_refused(predict(save(st), data_),
                 "metadata 'architecture' claims 500002 parameters but the file's tensors hold");
}

TEST_F(HostileModel, NanWeightsAreRefused) {
  model::SafeTensors st = model::to_safetensors(small_model());
  st.tensors["output.weight"].data[1] = NAN;
  expect_refused(predict(save(st), data_),
                 "tensor 'output.weight' holds NaN at index 1; the model's weights must be finite");
}

TEST_F(HostileModel, OutputsThatOverflowAreAnError) {
  const std::string model = save(model::to_safetensors(small_model(1e15f)));
  const std::string big = (dir_ / "big.csv").string();
  std::ofstream(big) << "a,b\n1,2\n3e38,3e38\n";
  expect_refused(predict(model, big), "row 2: the model's output is not finite");
}

}  // namespace
}  // namespace layerlab
