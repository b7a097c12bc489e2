// `layerlab train` as a user runs it: flags, a JSON trial file, --json output, and the
// one-line errors with exit codes for bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/run_command.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::run_layerlab;

json train_json(const std::string& args) {
  const auto r = run_layerlab("train " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(TrainCommand, DigitsTwoBySixtyFourReachesNinetyFivePercent) {
  const json r = train_json("--dataset digits --hidden-layers 2 --units 64 --epochs 20");
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["epochs_run"], 20);
  EXPECT_EQ(r["curve"].size(), 20u);
  EXPECT_GE(r["metrics"]["val_accuracy"].get<double>(), 0.95);
  EXPECT_EQ(r["train_rows"].get<int>() + r["validation_rows"].get<int>(), 1797);
  // Every parameter resolved, defaults included, so the trial reruns exactly.
  for (const char* key :
       {"dataset", "hidden_layers", "units", "activation", "optimizer", "learning_rate",
        "batch_size", "epochs", "seed", "init", "validation_fraction", "split_seed"})
    EXPECT_TRUE(r["params"].contains(key)) << key;
  EXPECT_NE(r["backend"].get<std::string>().find("cpu"), std::string::npos);
}

TEST(TrainCommand, PrintsOneLinePerEpoch) {
  const auto r = run_layerlab("train --dataset iris --epochs 3 --units 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch    1/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch    3/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val_accuracy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("status completed"), std::string::npos) << r.out;
}

TEST(TrainCommand, TrialFileWithFlagOverridesAndRerunsIdentically) {
  const auto dir = std::filesystem::temp_directory_path() / "layerlab-train-file";
  std::filesystem::create_directories(dir);
  const auto path = dir / "trial.json";
  std::ofstream(path) << R"({"dataset": "wine", "hidden_layers": 1, "units": 16,
                             "optimizer": "momentum", "learning_rate": 0.05, "epochs": 4})";
  const json first = train_json("--trial " + path.string() + " --epochs 5");
  EXPECT_EQ(first["params"]["dataset"], "wine");
  EXPECT_EQ(first["params"]["optimizer"], "momentum");
  EXPECT_EQ(first["params"]["epochs"], 5);
  // The resolved parameters of a result rerun the same trial bit for bit.
  std::ofstream(dir / "resolved.json") << first["params"].dump();
  const json again = train_json("--trial " + (dir / "resolved.json").string());
  ASSERT_EQ(again["curve"].size(), first["curve"].size());
  for (size_t e = 0; e < first["curve"].size(); ++e) {
    EXPECT_EQ(again["curve"][e]["train_loss"], first["curve"][e]["train_loss"]);
    EXPECT_EQ(again["curve"][e]["val_loss"], first["curve"][e]["val_loss"]);
  }
}

struct BadInput {
  std::string args;
  int exit_code;
  std::string message;
};

class TrainBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(TrainBadInput, OneLineReasonAndExitCode) {
  const auto r = run_layerlab("train " + GetParam().args);
  EXPECT_EQ(r.exit_code, GetParam().exit_code) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrainBadInput,
    ::testing::Values(
        BadInput{"--units -3", 2,
                 "layerlab train: error: units: expected a positive integer, got -3"},
        BadInput{"--units many", 2, "--units: cannot read 'many'"},
        BadInput{"--activation rellu", 2, "unknown activation 'rellu' (did you mean 'relu'?)"},
        BadInput{"--optimizer adamm", 2, "unknown optimizer 'adamm' (did you mean 'adam'?)"},
        BadInput{"--dropout 1.5", 2, "dropout: expected a rate in [0, 1), got 1.5"},
        BadInput{"--dataset digitz", 2, "did you mean 'digits'?"},
        BadInput{"--trial /nonexistent/trial.json", 2,
                 "--trial: cannot open '/nonexistent/trial.json'"},
        BadInput{"--device tpu", 2, "unknown device 'tpu'"},
        BadInput{"--validation-fraction 1.5", 2,
                 "validation_fraction: expected a fraction in [0, 1), got 1.5"}));

TEST(TrainCommand, MalformedTrialFileIsReported) {
  const auto path = std::filesystem::temp_directory_path() / "layerlab-bad-trial.json";
  std::ofstream(path) << R"({"units": 8, "epochz": 3})";
  const auto r = run_layerlab("train --trial " + path.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown parameter 'epochz' (did you mean 'epochs'?)"), std::string::npos)
      << r.err;
  std::ofstream(path) << "{not json";
  const auto r2 = run_layerlab("train --trial " + path.string());
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.err.find("not valid JSON"), std::string::npos) << r2.err;
}

TEST(TrainCommand, DivergedTrialIsAResultNotACrash) {
  const json r = train_json("--dataset iris --optimizer sgd --learning-rate 1e9 --epochs 5");
  EXPECT_EQ(r["status"], "diverged");
  EXPECT_NE(r["message"].get<std::string>().find("NaN or infinite"), std::string::npos);
}

TEST(DatasetsCommand, ListsBuiltInsAndDescribesOne) {
  const auto list = run_layerlab("datasets");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const char* name : {"iris", "wine", "breast_cancer", "digits", "spirals", "fashion-mnist"})
    EXPECT_NE(list.out.find(name), std::string::npos) << name;
  const auto info = run_layerlab("datasets info digits --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const json j = json::parse(info.out);
  EXPECT_EQ(j["rows"], 1797);
  EXPECT_EQ(j["features"], 64);
  EXPECT_EQ(j["classes"], 10);
}

}  // namespace
}  // namespace layerlab
