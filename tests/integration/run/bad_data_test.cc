// `layerlab run` loads and checks every dataset before it stores anything (issue 13): a
// study over a ragged, NaN or truncated data file, a device, a missing file, or a network
// too large for the dataset is refused with exit code 2 (NotFound too), one line naming the
// file and line, and the store gets no study (it is not even created).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/run_command.h"

namespace layerlab {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string data_file(const std::string& name) {
  return (fs::path(LAYERLAB_SOURCE_DIR) / "tests/data" / name).string();
}

struct Outcome {
  testing::CommandResult run;
  json studies;
  bool store_exists = false;
};

// `study` (the study-level keys after datasets:) defaults to the parameters below.
Outcome run_over(
    const std::string& test, const std::string& dataset,
    const std::string& study = "parameters:\n  units: {values: [4]}\n  epochs: {value: 1}\n") {
  const fs::path dir = testing::fresh_dir("bad-data-" + test);
  const fs::path db = dir / "layerlab.db";
  std::ofstream(dir / "study.yaml") << "name: data\ndatasets: [iris, \"" << dataset << "\"]\n"
                                    << study;
  Outcome o;
  o.run = testing::run_layerlab("run " + (dir / "study.yaml").string() +
                                " --workers 1 --store sqlite:" + db.string());
  o.store_exists = fs::exists(db);
  const auto s = testing::run_layerlab("studies --json --store sqlite:" + db.string());
  o.studies = s.exit_code == 0 ? json::parse(s.out) : json();
  return o;
}

void expect_refused(const Outcome& o, const std::string& part, int code = 2) {
  EXPECT_EQ(o.run.exit_code, code) << o.run.err;
  EXPECT_TRUE(o.run.out.empty()) << o.run.out;
  EXPECT_EQ(std::count(o.run.err.begin(), o.run.err.end(), '\n'), 1) << o.run.err;
  EXPECT_NE(o.run.err.find(part), std::string::npos) << o.run.err;
  EXPECT_FALSE(o.store_exists);
  EXPECT_TRUE(o.studies.is_null() || o.studies.empty()) << o.studies.dump();
}

TEST(RunBadData, RaggedCsvNamesFileAndLine) {
  expect_refused(
      run_over("ragged", "csv:" + data_file("ragged.csv")),
      "datasets[1]: csv:" + data_file("ragged.csv") + ": line 4: expected 5 columns, got 4");
}

TEST(RunBadData, NanCellNamesFileAndLine) {
  expect_refused(run_over("nan", "csv:" + data_file("nan.csv")),
                 "csv:" + data_file("nan.csv") + ": line ");
}

TEST(RunBadData, TruncatedGzipIsRefused) {
  expect_refused(run_over("truncated", "csv:" + data_file("truncated.csv.gz")),
                 "corrupt gzip data");
}

TEST(RunBadData, DeviceIsRefused) {
  expect_refused(run_over("zero", "csv:/dev/zero"), "/dev/zero is not a regular file");
}

TEST(RunBadData, MissingFileIsRefused) {
  expect_refused(run_over("missing", "csv:/nonexistent/x.csv"), "file not found");
}

TEST(RunBadData, NetworkTooLargeForTheDatasetIsRefused) {
  // 2 x 9999 units: 99,999,999 parameters without the data, within the 100,000,000 allowed;
  // with the 4 inputs and 3 classes of iris (the study's first dataset), more.
  expect_refused(run_over("network", "digits", "parameters:\n  units: {value: 9999}\n"),
                 "datasets[0] (iris, 4 features): the search space allows a network too large: "
                 "2 hidden layers of 9999 units (4 inputs, 3 outputs) have 100069995 parameters; "
                 "at most 100000000 (NetworkLimits::max_parameters)");
}

// Issue 52: a split with no rows to learn from or to measure on.
TEST(RunBadData, AValidationFractionThatLeavesNoRowIsRefusedAtTheFraction) {
  expect_refused(run_over("fraction", "spirals?n=100", "validation: {fraction: 1.0e-9}\n"),
                 "datasets[0] (iris): 150 rows split into 150 for training and 0 for validation "
                 "(validation.fraction 1e-09 of each class); at least 1 and 1 needed "
                 "(SpecLimits::min_train_rows, min_validation_rows) (");
}

TEST(RunBadData, ACsvOfThreeRowsIsRefusedWithItsCounts) {
  const fs::path csv = testing::fresh_dir("bad-data-tiny-csv") / "tiny.csv";
  std::ofstream(csv) << "x,label\n1,a\n2,b\n3,c\n";
  expect_refused(run_over("tiny", "csv:" + csv.string()),
                 "datasets[1] (csv:" + csv.string() +
                     "): 3 rows split into 3 for training and 0 for validation");
}

TEST(RunBadData, ARunInWhichNoTrialHasAValueDoesNotExitZero) {
  const fs::path dir = testing::fresh_dir("bad-data-no-value");
  std::ofstream(dir / "study.yaml")
      << "name: nothing\ndatasets: [iris]\nparameters:\n  epochs: {value: 1}\n";
  const auto r = testing::run_layerlab("run " + (dir / "study.yaml").string() +
                                           " --workers 1 --store sqlite:" + (dir / "s.db").string(),
                                       "LAYERLAB_TEST_THROW=after_epoch:0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("run: no trial has a value of val_accuracy: nothing was learned"),
            std::string::npos)
      << r.err;
}

TEST(RunBadData, TrainOfAHugeNetworkIsAClearError) {
  const auto r = testing::run_layerlab("train --dataset iris --units 1000000000 --epochs 1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("units: expected at most 1000000 (NetworkLimits::max_units)"),
            std::string::npos)
      << r.err;
  const auto wide = testing::run_layerlab("train --dataset iris --units 1000000 --epochs 1");
  EXPECT_EQ(wide.exit_code, 2) << wide.err;
  EXPECT_NE(wide.err.find("(NetworkLimits::max_parameters)"), std::string::npos) << wide.err;
}

}  // namespace
}  // namespace layerlab

namespace layerlab {
namespace {

TEST(TrainBadInput, DeepOrOutOfRangeTrialFileIsAClearError) {
  const fs::path dir = testing::fresh_dir("bad-trial-file");
  std::ofstream(dir / "deep.json")
      << "{\"units\": " << std::string(100000, '[') << std::string(100000, ']') << "}";
  const auto deep = testing::run_layerlab("train --trial " + (dir / "deep.json").string());
  EXPECT_EQ(deep.exit_code, 2) << deep.err;
  EXPECT_NE(deep.err.find("nesting deeper than 64 levels"), std::string::npos) << deep.err;
  std::ofstream(dir / "big.json") << "{\"learning_rate\": 1e400}";
  const auto big = testing::run_layerlab("train --trial " + (dir / "big.json").string());
  EXPECT_EQ(big.exit_code, 2) << big.err;
  EXPECT_NE(big.err.find("number overflow"), std::string::npos) << big.err;
  std::ofstream(dir / "nested.json") << "{\"units\": [[1]], \"epochs\": 1}";
  const auto nested = testing::run_layerlab("train --trial " + (dir / "nested.json").string());
  EXPECT_EQ(nested.exit_code, 2) << nested.err;
  EXPECT_NE(nested.err.find("units: expected an integer, got a nested list"), std::string::npos)
      << nested.err;
}

}  // namespace
}  // namespace layerlab
