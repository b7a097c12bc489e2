// A regression study ranks its trials by the RMSE: without a metric: key the default follows
// the dataset's task (val_rmse, minimize), every trial's value is its val_rmse, the lowest
// wins; a metric the dataset does not report is refused before anything is stored.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "integration/study_commands.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::export_json;
using testing::run_layerlab;
using testing::status;
using testing::Study;
using testing::write_study;

// 200 rows of y = sin(a) + b / 2, exactly (no noise): a network that learns gets a small RMSE.
void write_wave(const std::filesystem::path& file) {
  std::ofstream out(file);
  out << "a,b,y\n";
  for (int i = 0; i < 200; ++i) {
    const double a = -3 + 6.0 * i / 199, b = std::cos(i * 0.37);
    out << a << "," << b << "," << std::sin(a) + b / 2 << "\n";
  }
}

std::string study_text(const Study& s, const std::string& metric) {
  write_wave(s.dir / "wave.csv");
  return "name: wave\ndatasets: [\"csv:" + (s.dir / "wave.csv").string() +
         "?label=y&task=regression\"]\n" + metric +
         "seeds: [0, 1]\nparameters:\n  units: {value: 16}\n"
         "  learning_rate: {values: [1.0e-7, 0.01]}\n  epochs: {value: 20}\n";
}

TEST(RegressionMetric, DefaultIsValRmseAndTheLowestWins) {
  Study s = write_study("regression-default", "");
  std::ofstream(s.file) << study_text(s, "");
  const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("leaderboard (val_rmse, min)"), std::string::npos) << r.out;

  double lowest = std::numeric_limits<double>::infinity(), highest = 0;
  const json exported = export_json(s, "wave");
  for (const json& t : exported["trials"]) {
    ASSERT_EQ(t["status"], "completed") << t.dump();
    const double value = t["value"];
    // The value is the RMSE, under its own name; no accuracy is reported for regression.
    EXPECT_DOUBLE_EQ(value, t["result"]["metrics"]["val_rmse"].get<double>()) << t.dump();
    EXPECT_FALSE(t["result"]["metrics"].contains("val_accuracy")) << t.dump();
    lowest = std::min(lowest, value);
    highest = std::max(highest, value);
  }
  ASSERT_LT(lowest, highest) << "the learning rates should give different errors";

  const json st = status(s, "wave");
  EXPECT_EQ(st["metric"], "val_rmse");
  EXPECT_EQ(st["best"][0]["value"], lowest);  // the one dataset's best
  EXPECT_EQ(st["leaderboards"][0]["best_value"], lowest);
  EXPECT_EQ(st["leaderboards"][0]["trials"][0]["params"]["learning_rate"], 0.01);
}

TEST(RegressionMetric, AMetricTheTaskDoesNotReportIsRefusedAndNothingStored) {
  Study s = write_study("regression-accuracy", "");
  std::ofstream(s.file) << study_text(s, "metric: {name: val_accuracy}\n");
  const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // The dataset's spec is quoted as an excerpt: its path is long.
  EXPECT_NE(r.err.find("error: metric.name: datasets[0] (csv:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", regression) does not report val_accuracy; its trials report val_rmse, "
                       "val_loss, train_loss (" +
                       s.file.string() + ":3:16)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(s.dir / "layerlab.db"));
}

}  // namespace
}  // namespace layerlab
