#include "nn/params.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "nn/registries.h"

namespace layerlab::nn {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    Params::from_json(j);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(Params, JsonRoundTripKeepsEveryField) {
  Params p;
  p.layers = {32, 16};
  p.activation = "gelu";
  p.dropout = 0.25;
  p.batch_norm = true;
  p.optimizer = "adamw";
  p.learning_rate = 3e-4;
  p.lr_schedule = "cosine";
  p.warmup_epochs = 2;
  p.seed = 1234567890123ull;
  const json j = p.to_json();
  EXPECT_EQ(j.size(), Params::keys().size());
  EXPECT_EQ(Params::from_json(j).to_json(), j);
  EXPECT_EQ(Params::from_json(j).hidden_widths(), (std::vector<int>{32, 16}));
}

TEST(Params, DefaultsFillMissingKeys) {
  const Params p = Params::from_json(json{{"units", 8}});
  EXPECT_EQ(p.hidden_widths(), (std::vector<int>{8, 8}));
  EXPECT_EQ(p.optimizer, "adam");
}

TEST(Params, BadValuesNameTheParameter) {
  EXPECT_EQ(error_of({{"units", -3}}), "units: expected a positive integer, got -3");
  EXPECT_EQ(error_of({{"units", "many"}}), "units: expected an integer, got \"many\"");
  EXPECT_EQ(error_of({{"dropout", 1.0}}), "dropout: expected a rate in [0, 1), got 1.0");
  EXPECT_EQ(error_of({{"learning_rate", 0}}), "learning_rate: expected a positive number, got 0.0");
  EXPECT_EQ(error_of({{"batch_norm", 1}}), "batch_norm: expected true or false, got 1");
  EXPECT_EQ(error_of({{"layers", {16, 0}}}), "layers: expected positive layer widths, got [16,0]");
}

TEST(Params, UnknownNamesListTheKnownOnes) {
  const std::string act = error_of({{"activation", "rellu"}});
  EXPECT_NE(act.find("activation: unknown activation 'rellu' (did you mean 'relu'?)"),
            std::string::npos)
      << act;
  EXPECT_NE(act.find("known: elu, gelu, leaky_relu, linear, relu, selu, sigmoid, softplus, tanh"),
            std::string::npos)
      << act;
  const std::string opt = error_of({{"optimizer", "adamm"}});
  EXPECT_NE(opt.find("did you mean 'adam'?"), std::string::npos) << opt;
  const std::string init = error_of({{"init", "xavier"}});
  EXPECT_NE(init.find("known: glorot_normal, glorot_uniform, he_normal, he_uniform, lecun_normal"),
            std::string::npos)
      << init;
}

TEST(Params, UnknownKeySuggestsTheClosest) {
  const std::string msg = error_of({{"learning_rat", 0.1}});
  EXPECT_NE(msg.find("unknown parameter 'learning_rat' (did you mean 'learning_rate'?)"),
            std::string::npos)
      << msg;
}

TEST(Registries, EveryStudyNameResolves) {
  for (const char* a :
       {"relu", "leaky_relu", "elu", "selu", "gelu", "tanh", "sigmoid", "softplus", "linear"})
    EXPECT_TRUE(activations().contains(a)) << a;
  for (const char* o : {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"})
    EXPECT_TRUE(optimizers().contains(o)) << o;
  for (const char* s : {"constant", "step", "cosine"}) EXPECT_TRUE(schedules().contains(s)) << s;
}

}  // namespace
}  // namespace layerlab::nn
