#include "model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "support/temp_and_errors.h"

namespace layerlab::model {
namespace {

using layerlab::testing::TempDir;
using layerlab::testing::throws_error;
using nlohmann::json;

// 2 inputs -> 2 (relu, batch norm, residual) -> 2 outputs, with weights easy to follow.
Model tiny(bool batch_norm = true, bool residual = true) {
  Model m;
  m.architecture.inputs = 2;
  m.architecture.hidden = {2};
  m.architecture.outputs = 2;
  m.architecture.activation = backend::Activation::kRelu;
  m.architecture.batch_norm = batch_norm;
  m.architecture.residual = residual;
  m.activation = "relu";
  m.classes = 2;
  m.class_names = {"no", "yes"};
  m.feature_names = {"a", "b"};
  m.scaler.mean = {1.f, -1.f};
  m.scaler.scale = {2.f, 0.5f};
  // hidden: W [[1, 2], [-1, 0.5]], b [0.1, -0.2]; (gamma [2, 1], beta [0, 0.5]);
  // output: W [[1, 0], [0.5, -1]], b [0, 1].
  m.parameters = {1.f, 2.f, -1.f, 0.5f, 0.1f, -0.2f};
  if (batch_norm) m.parameters.insert(m.parameters.end(), {2.f, 1.f, 0.f, 0.5f});
  m.parameters.insert(m.parameters.end(), {1.f, 0.f, 0.5f, -1.f, 0.f, 1.f});
  if (batch_norm) {
    m.running_mean = {{0.5f, -0.25f}};
    m.running_var = {{4.f, 0.25f}};
  }
  m.info = {{"study", "s"}, {"trial", "3"}};
  return m;
}

// The forward pass of tiny() by hand, in double precision.
std::vector<double> by_hand(const Model& m, double a, double b) {
  const double x0 = (a - 1.0) / 2.0, x1 = (b + 1.0) / 0.5;
  double z0 = 1 * x0 + 2 * x1 + 0.1, z1 = -1 * x0 + 0.5 * x1 - 0.2;
  if (m.architecture.batch_norm) {
    z0 = (z0 - 0.5) / std::sqrt(4.0 + 1e-5) * 2 + 0;
    z1 = (z1 + 0.25) / std::sqrt(0.25 + 1e-5) * 1 + 0.5;
  }
  double h0 = std::max(z0, 0.0), h1 = std::max(z1, 0.0);
  if (m.architecture.residual) h0 += x0, h1 += x1;
  return {h0, 0.5 * h0 - h1 + 1};
}

TEST(Model, PredictsWithTheEnginesForwardPass) {
  auto b = backend::make_cpu_backend(1);
  const std::vector<float> x = {1.f, -1.f, 3.f, 0.f, -2.f, 2.f, 0.5f, -1.5f};
  for (bool bn : {true, false})
    for (bool res : {true, false}) {
      const Model m = tiny(bn, res);
      const std::vector<float> out = predict(m, *b, x, 4);
      ASSERT_EQ(out.size(), 8u);
      for (int r = 0; r < 4; ++r) {
        const auto want = by_hand(m, x[2 * r], x[2 * r + 1]);
        EXPECT_NEAR(out[2 * r], want[0], 1e-5) << "bn " << bn << " residual " << res;
        EXPECT_NEAR(out[2 * r + 1], want[1], 1e-5) << "bn " << bn << " residual " << res;
      }
    }
}

TEST(Model, PredictsMoreRowsThanOneBatch) {
  auto b = backend::make_cpu_backend(1);
  const Model m = tiny();
  std::vector<float> x;
  for (int r = 0; r < 600; ++r) x.insert(x.end(), {0.01f * r, -0.02f * r});
  const std::vector<float> out = predict(m, *b, x, 600);
  for (int r : {0, 255, 256, 599}) {
    const auto want = by_hand(m, x[2 * r], x[2 * r + 1]);
    EXPECT_NEAR(out[2 * r], want[0], 1e-4 * std::max(1.0, std::abs(want[0]))) << r;
  }
  EXPECT_TRUE(throws_error([&] { predict(m, *b, x, 7); }, ErrorCode::kInvalidArgument,
                           "predict: 1200 values for 7 rows of 2 features"));
}

TEST(Model, SoftmaxOfLogits) {
  const std::vector<float> z = {0.f, 0.f, 1000.f, 0.f};
  const auto p = softmax(z, 2, 2);
  EXPECT_DOUBLE_EQ(p[0], 0.5);
  EXPECT_DOUBLE_EQ(p[1], 0.5);
  EXPECT_DOUBLE_EQ(p[2], 1.0);
  EXPECT_DOUBLE_EQ(p[3], 0.0);
}

TEST(Model, RoundTripsThroughSafetensors) {
  TempDir dir;
  const std::string path = dir.path("m.safetensors");
  const Model m = tiny();
  save_model(path, m);
  const Model back = load_model(path);
  EXPECT_EQ(back.architecture, m.architecture);
  EXPECT_EQ(back.activation, "relu");
  EXPECT_EQ(back.classes, 2);
  EXPECT_EQ(back.class_names, m.class_names);
  EXPECT_EQ(back.feature_names, m.feature_names);
  EXPECT_EQ(back.scaler.mean, m.scaler.mean);
  EXPECT_EQ(back.scaler.scale, m.scaler.scale);
  EXPECT_EQ(back.parameters, m.parameters);
  EXPECT_EQ(back.running_mean, m.running_mean);
  EXPECT_EQ(back.running_var, m.running_var);
  EXPECT_EQ(back.info, m.info);

  const SafeTensors st = read_safetensors(path);
  EXPECT_EQ(st.tensors.at("hidden.0.weight").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(st.tensors.at("hidden.0.bn.gamma").data, (std::vector<float>{2.f, 1.f}));
  EXPECT_EQ(st.tensors.at("hidden.0.bn.running_var").data, (std::vector<float>{4.f, 0.25f}));
  EXPECT_EQ(st.tensors.at("output.bias").data, (std::vector<float>{0.f, 1.f}));
  EXPECT_EQ(st.tensors.at("input.std").data, (std::vector<float>{2.f, 0.5f}));
  const json arch = json::parse(st.metadata.at("architecture"));
  EXPECT_EQ(arch["hidden"], json({2}));
  EXPECT_EQ(arch["residual"], true);
  EXPECT_EQ(json::parse(st.metadata.at("task"))["class_names"], json({"no", "yes"}));
  EXPECT_EQ(st.metadata.at("format"), kFormat);
}

TEST(Model, RegressionRoundTrips) {
  Model m = tiny(false, false);
  m.classes = 0;
  m.targets = 2;
  m.class_names.clear();
  const Model back = from_safetensors(to_safetensors(m), "m");
  EXPECT_FALSE(back.classification());
  EXPECT_EQ(back.targets, 2);
  EXPECT_TRUE(back.running_mean.empty());
}

// from_safetensors on tiny()'s tensors after `change`, expecting `part` in the message.
template <typename F>
::testing::AssertionResult rejects(F change, const std::string& part) {
  SafeTensors st = to_safetensors(tiny());
  change(st);
  return throws_error([&] { from_safetensors(st, "m.safetensors"); }, ErrorCode::kInvalidArgument,
                      "m.safetensors: " + part);
}

TEST(Model, RejectsFilesThatAreNotItsModels) {
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata.erase("format"); },
                      "no 'format' in the metadata (not a layerlab model?)"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["format"] = "other/2"; },
                      "format 'other/2' is not layerlab.mlp/1"));
  EXPECT_TRUE(
      rejects([](SafeTensors& st) { st.metadata.erase("task"); }, "no 'task' in the metadata"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["architecture"] = "{"; },
                      "metadata 'architecture' is not valid JSON"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["architecture"] = "[]"; },
                      "metadata 'architecture': expected a JSON object"));
}

TEST(Model, RejectsBadArchitectureEntries) {
  auto arch = [](const std::function<void(json&)>& f) {
    return [f](SafeTensors& st) {
      json a = json::parse(st.metadata["architecture"]);
      f(a);
      st.metadata["architecture"] = a.dump();
    };
  };
  EXPECT_TRUE(
      rejects(arch([](json& a) { a.erase("hidden"); }), "metadata 'architecture': no 'hidden'"));
  EXPECT_TRUE(rejects(arch([](json& a) { a["hidden"] = {3.18e20}; }),
                      "metadata 'architecture': 'hidden' is out of range: [3.18e+20]"));
  EXPECT_TRUE(rejects(arch([](json& a) { a["inputs"] = int64_t{1} << 40; }),
                      "metadata 'architecture': 'inputs' is out of range: 1099511627776"));
  EXPECT_TRUE(rejects(arch([](json& a) { a["inputs"] = "two"; }),
                      "metadata 'architecture': 'inputs' has the wrong type: \"two\""));
  EXPECT_TRUE(rejects(arch([](json& a) { a["activation"] = "relux"; }),
                      "metadata 'architecture': "
                      "unknown activation 'relux' (did you mean 'relu'?)"));
  EXPECT_TRUE(rejects(arch([](json& a) { a["hidden"] = {0}; }),
                      "metadata 'architecture': "
                      "widths must be positive"));
  EXPECT_TRUE(rejects(arch([](json& a) { a["batch_norm_eps"] = 1e-3; }),
                      "metadata 'architecture': "
                      "batch_norm_eps 0.001 is not the engine's"));
  // Found by fuzzing: a number out of range and deep nesting in a metadata entry.
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["architecture"] = "{\"inputs\":1e400}"; },
                      "metadata 'architecture' is not valid JSON"));
  EXPECT_TRUE(rejects(
      [](SafeTensors& st) {
        st.metadata["task"] = std::string(100000, '[') + std::string(100000, ']');
      },
      "metadata 'task' is nested deeper than 64 levels"));
}

TEST(Model, RefusesAHugeArchitectureBeforeAllocating) {
  auto hidden = [](json widths) {
    return [widths](SafeTensors& st) {
      json a = json::parse(st.metadata["architecture"]);
      a["hidden"] = widths;
      st.metadata["architecture"] = a.dump();
    };
  };
  // 10^9 units: the engine's width limit, before 10^9 floats are asked for.
  EXPECT_TRUE(rejects(hidden({1000000000}),
                      "metadata 'architecture': network: a hidden layer of 1000000000 units; at "
                      "most 1000000 (NetworkLimits::max_units)"));
  // Within the limits, but more parameters than the file holds.
  EXPECT_TRUE(rejects(hidden({5000}),
                      "metadata 'architecture' claims 35002 parameters but the file's tensors "
                      "hold 24 values"));
  EXPECT_TRUE(rejects(hidden(json(std::vector<int>(20000, 1))),
                      "metadata 'architecture': network: 20000 hidden layers; at most 10000 "
                      "(NetworkLimits::max_hidden_layers)"));
}

TEST(Model, RefusesWeightsThatAreNotFinite) {
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.tensors["hidden.0.weight"].data[3] = NAN; },
                      "tensor 'hidden.0.weight' holds NaN at index 3; the model's weights must be "
                      "finite"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.tensors["output.bias"].data[0] = INFINITY; },
                      "tensor 'output.bias' holds an infinity at index 0"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.tensors["hidden.0.bn.running_var"].data[1] = NAN; },
                      "tensor 'hidden.0.bn.running_var' holds NaN"));
}

TEST(Model, RejectsBadTaskAndFeatures) {
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["task"] = R"({"type":"ranking"})"; },
                      "metadata 'task': type 'ranking' is neither classification nor regression"));
  EXPECT_TRUE(rejects(
      [](SafeTensors& st) { st.metadata["task"] = R"({"type":"classification","classes":3})"; },
      "model: 2 outputs for 3 classes"));
  EXPECT_TRUE(rejects(
      [](SafeTensors& st) {
        st.metadata["task"] = R"({"type":"classification","classes":2,"class_names":["a"]})";
      },
      "model: 1 class names for 2 classes"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["features"] = R"(["a"])"; },
                      "model: 1 feature names for 2 inputs"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.metadata["features"] = R"({"a": 1})"; },
                      "metadata 'features' is not a list of column names"));
}

TEST(Model, RejectsMissingMisshapenOrExtraTensors) {
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.tensors.erase("hidden.0.bn.running_var"); },
                      "no tensor 'hidden.0.bn.running_var' (expected shape [2])"));
  EXPECT_TRUE(rejects(
      [](SafeTensors& st) {
        st.tensors["output.weight"] = {{4}, {1, 2, 3, 4}};
      },
      "tensor 'output.weight' has shape [4], expected [2, 2]"));
  EXPECT_TRUE(rejects(
      [](SafeTensors& st) {
        st.tensors["hidden.1.weight"] = {{1}, {1}};
      },
      "unexpected tensor 'hidden.1.weight' for this architecture"));
  EXPECT_TRUE(rejects([](SafeTensors& st) { st.tensors["input.std"].data[1] = 0.f; },
                      "input.mean / input.std of feature 1 ('b') are -1 and 0"));
}

TEST(Model, CheckNamesTheInconsistency) {
  auto fails = [](const std::function<void(Model&)>& f, const std::string& part) {
    Model m = tiny();
    f(m);
    return throws_error([&] { to_safetensors(m); }, ErrorCode::kInvalidArgument, part);
  };
  EXPECT_TRUE(fails([](Model& m) { m.architecture.inputs = 0; }, "0 inputs and 2 outputs"));
  EXPECT_TRUE(fails([](Model& m) { m.architecture.hidden = {-1}; }, "hidden layer width -1"));
  EXPECT_TRUE(fails([](Model& m) { m.activation = "nope"; }, "unknown activation 'nope'"));
  EXPECT_TRUE(fails([](Model& m) { m.scaler.mean.pop_back(); },
                    "a scaler of 1 means and 2 scales for 2 inputs"));
  EXPECT_TRUE(
      fails([](Model& m) { m.parameters.pop_back(); }, "15 parameters, the architecture has 16"));
  EXPECT_TRUE(fails([](Model& m) { m.running_var.clear(); },
                    "running statistics for 1 and 0 layers, expected 1"));
  EXPECT_TRUE(fails([](Model& m) { m.running_var[0].push_back(1.f); },
                    "hidden layer 0 has width 2, its running statistics 2 means and 3 variances"));
  EXPECT_TRUE(fails(
      [](Model& m) {
        m.classes = 0;
        m.targets = 1;
      },
      "2 outputs for 1 regression targets"));
}

TEST(Network, RunningStatisticsMustMatchTheLayers) {
  auto b = backend::make_cpu_backend(1);
  nn::Network net(*b, tiny().architecture, 1, 4);
  EXPECT_TRUE(throws_error([&] { net.set_running_statistics(0, {}, {}); },
                           ErrorCode::kInvalidArgument,
                           "expected running statistics for 1 batch-norm layers, got 0 means"));
  EXPECT_TRUE(throws_error([&] { net.set_running_statistics(0, {{1.f}}, {{1.f}}); },
                           ErrorCode::kInvalidArgument,
                           "hidden layer 0 has width 2, its running statistics 1 means"));
  net.set_running_statistics(0, {{3.f, 4.f}}, {{5.f, 6.f}});
  EXPECT_EQ(net.running_means(0), (std::vector<std::vector<float>>{{3.f, 4.f}}));
  EXPECT_EQ(net.running_variances(0), (std::vector<std::vector<float>>{{5.f, 6.f}}));
  nn::Network plain(*b, tiny(false).architecture, 1, 4);
  EXPECT_TRUE(plain.running_means(0).empty());
}

// read_features: CSV by column name, other specs by feature count.
class Features : public ::testing::Test {
 protected:
  TempDir dir;
  Model m = tiny();
  ::testing::AssertionResult fails(const std::string& name, const std::string& text,
                                   const std::string& part) {
    const std::string path = dir.write(name, text);
    return throws_error([&] { read_features(m, path); }, ErrorCode::kInvalidArgument, part);
  }
};

TEST_F(Features, CsvColumnsAreReadByNameWithOrWithoutTheLabel) {
  const auto with_label = read_features(m, dir.write("a.csv", "label,b,a\nyes,2,1\nno,4,3\n"));
  EXPECT_EQ(with_label.rows, 2);
  EXPECT_EQ(with_label.x, (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  const auto without = read_features(m, "csv:" + dir.write("b.txt", "a,b\n1,2\n\n3,4\n"));
  EXPECT_EQ(without.x, with_label.x);
  const auto query = read_features(m, dir.path("a.csv") + "?label=label");
  EXPECT_EQ(query.x, with_label.x);
}

TEST_F(Features, CsvErrorsNameTheFileAndLine) {
  EXPECT_TRUE(fails("c.csv", "a,x\n1,2\n",
                    "no column 'b' (the model reads the columns a, b; the "
                    "file has a, x)"));
  EXPECT_TRUE(fails("d.csv", "x\n1\n", "no columns 'a', 'b'"));
  EXPECT_TRUE(fails("e.csv", "a,b,a\n1,2,3\n", "column 'a' appears 2 times in the header"));
  EXPECT_TRUE(fails("f.csv", "a,b\n1,2\n3\n", "f.csv: line 3: expected 2 columns, got 1"));
  EXPECT_TRUE(fails("g.csv", "a,b\n1,x\n", "g.csv: line 2"));
  EXPECT_TRUE(fails("h.csv", "", "empty file (no header row)"));
  EXPECT_TRUE(fails("i.csv", "a,b\n", "no data rows after the header"));
  EXPECT_TRUE(throws_error([&] { read_features(m, dir.path("h.csv") + "?lable=x"); },
                           ErrorCode::kInvalidArgument, "unknown parameter 'lable'"));
  EXPECT_TRUE(throws_error([&] { read_features(m, "csv:"); }, ErrorCode::kInvalidArgument,
                           "expected csv:PATH"));
  EXPECT_TRUE(throws_error([&] { read_features(m, dir.path("none.csv")); }, ErrorCode::kNotFound,
                           "none.csv"));
}

TEST_F(Features, OtherSpecsNeedTheModelsFeatureCount) {
  EXPECT_TRUE(throws_error([&] { read_features(m, "iris"); }, ErrorCode::kInvalidArgument,
                           "iris: 4 features, the model takes 2 (a, b)"));
  const auto moons = read_features(m, "moons?n=10");
  EXPECT_EQ(moons.rows, 10);
  EXPECT_EQ(moons.x.size(), 20u);
}

}  // namespace
}  // namespace layerlab::model
