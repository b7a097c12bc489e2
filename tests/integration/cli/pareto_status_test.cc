// `status --json` lists each dataset's Pareto fronts (accuracy against parameter count and
// against training time): on a study with known fronts (tests/support/known_pareto_study.h),
// exactly the non-dominated trials, with value, parameter count, time and configuration,
// next to the fields `status --json` had before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/study_commands.h"
#include "support/known_pareto_study.h"

namespace layerlab {
namespace {

using nlohmann::json;

TEST(StatusJson, ListsTheParetoFrontsOfEachDataset) {
  const testing::Study s = testing::write_study("status-pareto", "");
  {
    auto st = store::open_store(s.store);
    testing::write_known_pareto_study(*st);
  }
  const json out = testing::status(s, testing::kKnownParetoStudy);
  // The fields that were there before are still there.
  for (const char* key :
       {"id", "name", "status", "trials", "counts", "metric", "best", "leaderboards"})
    EXPECT_TRUE(out.contains(key)) << key;
  EXPECT_EQ(out["status"], "finished");

  ASSERT_TRUE(out["pareto"].is_array()) << out.dump();
  ASSERT_EQ(out["pareto"].size(), 2u);
  for (const json& d : out["pareto"]) {
    const std::string dataset = d["dataset"];
    ASSERT_TRUE(testing::kKnownFronts.count(dataset)) << dataset;
    EXPECT_EQ(d["ranked"], 8) << dataset;  // the pruned trial and the one without value left out
    for (const auto& [cost, want] : testing::kKnownFronts.at(dataset)) {
      std::vector<int64_t> got;
      for (const json& t : d["fronts"][cost]["trials"]) got.push_back(t["number"]);
      EXPECT_EQ(got, want) << dataset << " against " << cost;
      EXPECT_EQ(d["fronts"][cost]["without_cost"], 0);
    }
  }
  EXPECT_EQ(out["pareto"][0]["dataset"], "iris");  // the study's order
  // A front trial as it was stored, with its configuration.
  const json& t = out["pareto"][0]["fronts"]["parameter_count"]["trials"][2];
  EXPECT_EQ(t["number"], 5);
  EXPECT_DOUBLE_EQ(t["value"].get<double>(), 0.95);
  EXPECT_EQ(t["parameter_count"], 4000);
  EXPECT_DOUBLE_EQ(t["seconds"].get<double>(), 3.0);
  EXPECT_EQ(t["params"]["hidden_layers"], 4);
  EXPECT_EQ(t["params"]["activation"], "tanh");
  EXPECT_EQ(t["params"]["seed"], 0);
  EXPECT_TRUE(t["id"].is_number_integer());
}

}  // namespace
}  // namespace layerlab
