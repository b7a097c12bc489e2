// Training time against depth: least-squares fits with known answers and the linearity
// verdict.
#include "report/timing.h"

#include <gtest/gtest.h>

#include <cmath>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using testing::ViewBuilder;

std::vector<TimeFit> fits(const ViewBuilder& b) {
  return analyse_time(select_trials(b.view()));
}

TEST(AnalyseTime, RecoversAnExactLinePerDataset) {
  ViewBuilder b({"hidden_layers"});
  for (int depth : {1, 2, 4, 8})
    for (int seed : {0, 1}) {
      b.add("iris", {{"hidden_layers", depth}, {"seed", seed}}, 0.9, 0.5 * depth + 1);
      b.add("wine", {{"hidden_layers", depth}, {"seed", seed}}, 0.9, 0.25 * depth);
    }
  b.add("iris", {{"hidden_layers", 2}}, 0.9, std::nan(""));  // no time: left out of the fit
  const auto f = fits(b);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].dataset, "iris");
  ASSERT_TRUE(f[0].fit);
  EXPECT_NEAR(f[0].fit->slope, 0.5, 1e-12);
  EXPECT_NEAR(f[0].fit->intercept, 1, 1e-12);
  EXPECT_NEAR(f[0].fit->r2, 1, 1e-12);
  EXPECT_EQ(f[0].fit->n, 8u);
  EXPECT_EQ(f[0].points.size(), 4u);
  EXPECT_NEAR(f[0].points[3].metric.mean, 5, 1e-12);
  EXPECT_EQ(f[0].verdict, "about linear");
  EXPECT_NEAR(f[1].fit->slope, 0.25, 1e-12);
  EXPECT_NEAR(f[1].fit->intercept, 0, 1e-12);
  const nlohmann::json j = to_json(f);
  EXPECT_EQ(j[1]["dataset"], "wine");
  EXPECT_EQ(j[1]["n"], 8);
  EXPECT_NEAR(j[1]["fit"]["slope"].get<double>(), 0.25, 1e-12);
}

TEST(AnalyseTime, ExponentialGrowthIsNotLinear) {
  ViewBuilder b({"hidden_layers"});
  for (int depth = 1; depth <= 6; ++depth)
    b.add("iris", {{"hidden_layers", depth}}, 0.9, std::pow(2.0, depth));
  const auto f = fits(b);
  ASSERT_EQ(f.size(), 1u);
  // Line through (1, 2) ... (6, 64): sxy = 201, sxx = 17.5, syy = 2814.
  EXPECT_NEAR(f[0].fit->slope, 201 / 17.5, 1e-9);
  EXPECT_NEAR(*f[0].r2_means, 201.0 * 201 / (17.5 * 2814), 1e-9);
  EXPECT_EQ(f[0].verdict, "not linear");
}

TEST(AnalyseTime, TooFewDepthsToJudge) {
  ViewBuilder two({"hidden_layers"});
  two.add("iris", {{"hidden_layers", 1}}, 0.9, 1).add("iris", {{"hidden_layers", 3}}, 0.9, 9);
  EXPECT_EQ(fits(two)[0].verdict, "two depths only: linearity cannot be judged");
  EXPECT_NEAR(fits(two)[0].fit->slope, 4, 1e-12);
  ViewBuilder one({"hidden_layers"});
  one.add("iris", {{"hidden_layers", 2}}, 0.9, 1).add("iris", {{"hidden_layers", 2}}, 0.8, 3);
  const auto f = fits(one);
  EXPECT_FALSE(f[0].fit);
  EXPECT_EQ(f[0].verdict, "one depth only: no fit");
  EXPECT_EQ(to_json(f)[0]["n"], 2);
  EXPECT_TRUE(to_json(f)[0]["fit"].is_null());
  ViewBuilder none({"units"});
  none.add("iris", {{"units", 4}}, 0.9, 1);
  EXPECT_TRUE(fits(none).empty());
}

}  // namespace
}  // namespace layerlab::report
