// Effect sizes with known answers: a named parameter's levels and eta squared, a boolean's
// difference with Welch's interval and Cohen's d; the goal decides the best level.
#include "report/effects.h"

#include <gtest/gtest.h>

#include <cmath>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using nlohmann::json;
using testing::ViewBuilder;

ViewBuilder activation_view(bool maximize) {
  ViewBuilder b({"activation", "batch_norm"}, maximize);
  b.add("a", {{"activation", "relu"}, {"batch_norm", false}}, 0.9)
      .add("a", {{"activation", "relu"}, {"batch_norm", false}}, 0.8)
      .add("a", {{"activation", "tanh"}, {"batch_norm", false}}, 0.6)
      .add("a", {{"activation", "tanh"}, {"batch_norm", false}}, 0.5);
  // Dataset b: one activation only, batch_norm varies.
  for (double v : {1.0, 2.0, 3.0}) b.add("b", {{"activation", "relu"}, {"batch_norm", true}}, v);
  for (double v : {4.0, 5.0, 6.0}) b.add("b", {{"activation", "relu"}, {"batch_norm", false}}, v);
  return b;
}

TEST(Effects, ActivationLevelsAndEtaSquared) {
  const ViewBuilder b = activation_view(true);
  const Effects e = analyse_effects(select_trials(b.view()));
  ASSERT_EQ(e.categorical.size(), 1u) << "dataset b has one activation: nothing to compare";
  const CategoricalEffect& c = e.categorical[0];
  EXPECT_EQ(c.dataset, "a");
  EXPECT_EQ(c.parameter, "activation");
  EXPECT_EQ(c.n, 4u);
  EXPECT_NEAR(c.eta2, 0.9, 1e-12);
  EXPECT_EQ(c.best_level, "relu");
  ASSERT_EQ(c.levels.size(), 2u);
  EXPECT_EQ(c.levels[1].level, "tanh");
  EXPECT_NEAR(c.levels[1].metric.mean, 0.55, 1e-12);
  EXPECT_NEAR(c.levels[1].diff_to_best, -0.3, 1e-12);
  EXPECT_EQ(c.levels[0].diff_to_best, 0);
}

TEST(Effects, MinimizeMakesTheLowestLevelBest) {
  const ViewBuilder b = activation_view(false);
  const Effects e = analyse_effects(select_trials(b.view()));
  EXPECT_EQ(e.categorical[0].best_level, "tanh");
  EXPECT_NEAR(e.categorical[0].levels[0].diff_to_best, 0.3, 1e-12);
}

TEST(Effects, BooleanDifferenceWithIntervalAndCohensD) {
  const ViewBuilder b = activation_view(true);
  const Effects e = analyse_effects(select_trials(b.view()));
  ASSERT_EQ(e.binary.size(), 1u) << "dataset a never turns batch_norm on";
  const BinaryEffect& x = e.binary[0];
  EXPECT_EQ(x.dataset, "b");
  EXPECT_EQ(x.parameter, "batch_norm");
  EXPECT_EQ(x.on.n, 3u);
  EXPECT_NEAR(x.difference.diff, -3, 1e-12);  // true (mean 2) minus false (mean 5)
  const double half = 2.77644511 * std::sqrt(2.0 / 3);
  EXPECT_NEAR(*x.difference.ci_low, -3 - half, 1e-6);
  EXPECT_NEAR(*x.difference.cohens_d, -3, 1e-12);
  const json j = to_json(e);
  EXPECT_EQ(j["binary"][0]["n_true"], 3);
  EXPECT_NEAR(j["binary"][0]["ci95"][1].get<double>(), -3 + half, 1e-6);
  EXPECT_NEAR(j["categorical"][0]["eta2"].get<double>(), 0.9, 1e-12);
  EXPECT_EQ(j["categorical"][0]["levels"][0]["level"], "relu");
}

TEST(Effects, NothingWhenNothingVaries) {
  ViewBuilder b({"activation", "residual"});
  b.add("a", {{"activation", "relu"}, {"residual", true}}, 0.9)
      .add("a", {{"activation", "relu"}, {"residual", true}}, 0.7);
  const Effects e = analyse_effects(select_trials(b.view()));
  EXPECT_TRUE(e.categorical.empty());
  EXPECT_TRUE(e.binary.empty());
}

}  // namespace
}  // namespace layerlab::report
