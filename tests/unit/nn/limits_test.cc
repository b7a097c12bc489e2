// NetworkLimits: Params refuse widths and depths beyond the engine, estimate_size()
// saturates, and Network refuses a network too large before it allocates anything.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "nn/network.h"
#include "nn/params.h"
#include "nn/trainer.h"
#include "support/temp_and_errors.h"

namespace layerlab::nn {
namespace {

using layerlab::testing::throws_error;
using nlohmann::json;

bool refused(const json& j, const std::string& part) {
  return throws_error([&] { Params::from_json(j); }, ErrorCode::kInvalidArgument, part);
}

TEST(NetworkLimits, ParamsRefuseWidthsAndDepthsBeyondTheEngine) {
  EXPECT_TRUE(
      refused({{"units", 1000000000}},
              "units: expected at most 1000000 (NetworkLimits::max_units), got 1000000000"));
  EXPECT_TRUE(refused({{"hidden_layers", 1000000000}},
                      "hidden_layers: expected at most 10000 (NetworkLimits::max_hidden_layers), "
                      "got 1000000000"));
  EXPECT_TRUE(refused({{"layers", std::vector<int>(20000, 4)}},
                      "layers: 20000 layers; at most 10000 (NetworkLimits::max_hidden_layers)"));
  EXPECT_TRUE(
      refused({{"layers", {8, 2000000}}}, "layers: expected at most 1000000 units per layer"));
  EXPECT_NO_THROW(Params::from_json({{"units", 1000000}, {"hidden_layers", 10000}}));
}

TEST(NetworkLimits, NonFiniteNumbersAreNamed) {
  EXPECT_TRUE(refused({{"learning_rate", std::numeric_limits<double>::quiet_NaN()}},
                      "learning_rate: expected a finite number, got NaN"));
  EXPECT_TRUE(refused({{"weight_decay", std::numeric_limits<double>::infinity()}},
                      "weight_decay: expected a finite number, got infinity"));
  Params p;
  p.lr_gamma = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(throws_error([&] { p.validate(); }, ErrorCode::kInvalidArgument,
                           "lr_gamma: expected a finite positive number, got infinity"));
}

TEST(NetworkLimits, MessagesNeverDumpADeepDocument) {
  EXPECT_EQ(describe_value(json::parse("[[1]]")), "a nested list");
  EXPECT_EQ(describe_value(json::parse("{\"a\": {}}")), "a nested object");
  EXPECT_EQ(describe_value(json::parse("[1, 2]")), "[1,2]");
  EXPECT_EQ(describe_value(std::string(500, 'x')).size(),
            200u + 15u);  // excerpt + "... (502 bytes)"
  // 100,000 levels: the message is made without recursing through them.
  json deep = json::array();
  json* at = &deep;
  for (int i = 0; i < 100000; ++i) at = &(*at = json::array({json::array()}))[0];
  json params = json::object();
  params["units"] = std::move(deep);  // moved: a copy would recurse 100,000 levels itself
  EXPECT_TRUE(refused(params, "units: expected an integer, got a nested list"));
}

TEST(NetworkLimits, EstimatesSaturateInsteadOfOverflowing) {
  Architecture a;
  a.inputs = std::numeric_limits<int>::max();
  a.hidden = std::vector<int>(100, std::numeric_limits<int>::max());
  a.outputs = std::numeric_limits<int>::max();
  EXPECT_EQ(a.parameter_count(), std::numeric_limits<int64_t>::max());
  const NetworkSize s = estimate_size(a, 1 << 20, 1 << 30);
  EXPECT_EQ(s.parameters, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(s.bytes, std::numeric_limits<int64_t>::max());
}

TEST(NetworkLimits, EstimateCountsParametersStateAndActivations) {
  Architecture a;
  a.inputs = 4;
  a.hidden = {8};
  a.outputs = 3;
  // 4*8 + 8 + 8*3 + 3 = 67 parameters; x4 floats (weights, gradients, two optimizer states);
  // 10 rows x 8 x 3 buffers + 10 x 3 outputs + 10 x (4 + 3) batch.
  const NetworkSize s = estimate_size(a, 1, 10);
  EXPECT_EQ(s.parameters, 67);
  EXPECT_EQ(s.bytes, (67 * 4 + 240 + 30 + 70) * 4);
  EXPECT_EQ(estimate_size(a, 2, 10).bytes, 2 * s.bytes);
}

TEST(NetworkLimits, CheckNamesTheLimit) {
  Architecture a;
  a.inputs = 1000;
  a.hidden = {100000, 100000};
  a.outputs = 10;
  EXPECT_TRUE(throws_error([&] { check_network_size(a, 1, 32); }, ErrorCode::kInvalidArgument,
                           "network: 2 hidden layers of 100000 units (1000 inputs, 10 outputs) "
                           "have 10101200010 parameters; at most 100000000 "
                           "(NetworkLimits::max_parameters)"));
  a.hidden = {10000};
  EXPECT_TRUE(throws_error([&] { check_network_size(a, 64, 100000); }, ErrorCode::kInvalidArgument,
                           "(NetworkLimits::max_bytes)"));
  NetworkLimits small;
  small.max_units = 100;
  EXPECT_TRUE(
      throws_error([&] { check_network_size(a, 1, 1, small); }, ErrorCode::kInvalidArgument,
                   "a hidden layer of 10000 units; at most 100 (NetworkLimits::max_units)"));
}

TEST(NetworkLimits, NetworkRefusesBeforeAllocating) {
  auto b = backend::make_cpu_backend(1);
  Architecture a;
  a.inputs = 784;
  a.hidden = {1000000, 1000000};
  a.outputs = 10;
  EXPECT_TRUE(throws_error([&] { Network(*b, a, 1, 32); }, ErrorCode::kInvalidArgument,
                           "(NetworkLimits::max_parameters)"));
}

TEST(NetworkLimits, TrainingAHugeNetworkIsAClearError) {
  auto b = backend::make_cpu_backend(1);
  Params p;
  p.units = 1000000;
  const std::vector<float> x(8, 0.5f), y = {0, 1, 0, 1};
  const Examples train{x, y, 4, 2, 1};
  Task task;
  task.classes = 2;
  EXPECT_TRUE(
      throws_error([&] { train_pack(*b, std::span<const Params>(&p, 1), task, train, train, {}); },
                   ErrorCode::kInvalidArgument, "2 hidden layers of 1000000 units"));
}

}  // namespace
}  // namespace layerlab::nn
