// The best configurations: trials that differ only in the seed are one configuration,
// ranked by the mean over seeds in the study's direction, per dataset.
#include "report/best.h"

#include <gtest/gtest.h>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using nlohmann::json;
using testing::ViewBuilder;

ViewBuilder configs(bool maximize) {
  ViewBuilder b({"hidden_layers", "units"}, maximize);
  // depth 1: 0.6, 0.8 (mean 0.7); depth 2: 0.9 once (mean 0.9); depth 4: 0.5, 0.5.
  for (auto [depth, seed, v] : std::vector<std::tuple<int, int, double>>{
           {1, 0, 0.6}, {1, 1, 0.8}, {2, 0, 0.9}, {4, 0, 0.5}, {4, 1, 0.5}})
    b.add("iris", {{"hidden_layers", depth}, {"units", 32}, {"seed", seed}}, v);
  b.add("wine", {{"hidden_layers", 1}, {"units", 32}}, 0.3);
  return b;
}

TEST(BestConfigurations, MeanOverSeedsRankedPerDataset) {
  const ViewBuilder b = configs(true);
  const auto best = best_configurations(select_trials(b.view()));
  ASSERT_EQ(best.size(), 4u);
  EXPECT_EQ(best[0].dataset, "iris");
  EXPECT_EQ(best[0].params, (json{{"hidden_layers", 2}})) << "units is fixed: not shown";
  EXPECT_NEAR(best[0].metric.mean, 0.9, 1e-12);
  EXPECT_EQ(best[1].params["hidden_layers"], 1);
  EXPECT_EQ(best[1].metric.n, 2u);
  EXPECT_NEAR(best[1].metric.mean, 0.7, 1e-12);
  EXPECT_EQ(best[1].best_number, 1);
  EXPECT_NEAR(best[1].best_value, 0.8, 1e-12);
  EXPECT_EQ(best[2].params["hidden_layers"], 4);
  EXPECT_EQ(best[3].dataset, "wine");
  const json j = to_json(best);
  EXPECT_EQ(j[1]["rank"], 2);
  EXPECT_EQ(j[3]["rank"], 1);
  EXPECT_NEAR(j[1]["se"].get<double>(), 0.1, 1e-12);
  EXPECT_TRUE(j[0]["se"].is_null()) << "one trial: no standard error";
}

TEST(BestConfigurations, MinimizeAndTopLimit) {
  const ViewBuilder b = configs(false);
  const auto best = best_configurations(select_trials(b.view()), 2);
  ASSERT_EQ(best.size(), 3u);  // two of iris, one of wine
  EXPECT_EQ(best[0].params["hidden_layers"], 4);
  EXPECT_NEAR(best[0].metric.mean, 0.5, 1e-12);
  EXPECT_EQ(best[1].params["hidden_layers"], 1);
  EXPECT_EQ(best[2].dataset, "wine");
}

}  // namespace
}  // namespace layerlab::report
