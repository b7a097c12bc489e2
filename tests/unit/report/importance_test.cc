// Parameter importance (first-order variance decomposition) on synthetic results whose
// answer is known: an additive grid, a continuous parameter in quantile bins, and ties.
#include "report/importance.h"

#include <gtest/gtest.h>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using testing::ViewBuilder;

TEST(QuantileBins, EqualCountsTiesShareABinIdsAreCompact) {
  int groups = 0;
  EXPECT_EQ(quantile_bins({6, 1, 2, 3, 4, 5}, 3, &groups), (std::vector<int>{2, 0, 0, 1, 1, 2}));
  EXPECT_EQ(groups, 3);
  // Four equal values fill the first bin and more; the next value starts the next id.
  EXPECT_EQ(quantile_bins({1, 1, 3, 1, 1, 2}, 3, &groups), (std::vector<int>{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(groups, 2);
  EXPECT_EQ(quantile_bins({7, 7, 7}, 10, &groups), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(groups, 1);
}

TEST(Importance, AdditiveGridSharesAreTheEffectVariances) {
  // value = 3 * (units == 32 ? 1 : -1) + (activation == tanh ? 1 : -1): variances 9 and 1.
  ViewBuilder b({"units", "activation", "dropout"});
  for (int units : {16, 32})
    for (const char* act : {"relu", "tanh"})
      for (int seed : {0, 1, 2})
        b.add("iris", {{"units", units}, {"activation", act}, {"dropout", 0.1}, {"seed", seed}},
              3.0 * (units == 32 ? 1 : -1) + (act == std::string("tanh") ? 1 : -1));
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 1u);
  const DatasetImportance& d = imp[0];
  EXPECT_EQ(d.n, 12u);
  EXPECT_NEAR(d.variance, 10, 1e-12);
  ASSERT_EQ(d.ranked.size(), 2u) << "dropout is fixed and the seed is not a design parameter";
  EXPECT_EQ(d.ranked[0].parameter, "units");
  EXPECT_NEAR(d.ranked[0].share, 0.9, 1e-12);
  EXPECT_EQ(d.ranked[0].groups, 2);
  EXPECT_FALSE(d.ranked[0].binned);
  EXPECT_EQ(d.ranked[1].parameter, "activation");
  EXPECT_NEAR(d.ranked[1].share, 0.1, 1e-12);
  EXPECT_NEAR(d.rest, 0, 1e-12);
}

TEST(Importance, ContinuousParametersGoIntoQuantileBins) {
  // value = learning_rate; `noise` takes 100 values that have nothing to do with it.
  ViewBuilder b({"learning_rate", "momentum"});
  for (int i = 0; i < 100; ++i)
    b.add("wine", {{"learning_rate", i / 100.0}, {"momentum", ((i * 37) % 100) / 100.0}},
          i / 100.0);
  const auto imp = analyse_importance(select_trials(b.view()));
  const DatasetImportance& d = imp[0];
  ASSERT_EQ(d.ranked.size(), 2u);
  EXPECT_EQ(d.ranked[0].parameter, "learning_rate");
  EXPECT_TRUE(d.ranked[0].binned);
  EXPECT_EQ(d.ranked[0].groups, kImportanceBins);
  // Bins of 10 consecutive values: within-bin variance 99/12 of total 9999/12 (x 1e-4).
  EXPECT_NEAR(d.ranked[0].share, 1 - 99.0 / 9999, 1e-9);
  EXPECT_LT(d.ranked[1].share, 0.3);
  EXPECT_EQ(to_json(imp)[0]["ranked"][0]["binned"], true);
}

TEST(Importance, ConstantMetricAndPerDatasetConstants) {
  ViewBuilder b({"units", "activation"});
  b.add("a", {{"units", 8}, {"activation", "relu"}}, 0.5)
      .add("a", {{"units", 16}, {"activation", "relu"}}, 0.5)
      .add("b", {{"units", 8}, {"activation", "relu"}}, 0.1)
      .add("b", {{"units", 8}, {"activation", "tanh"}}, 0.3);
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 2u);
  ASSERT_EQ(imp[0].ranked.size(), 1u);  // activation is constant on a
  EXPECT_EQ(imp[0].ranked[0].share, 0);
  EXPECT_EQ(imp[0].rest, 1);
  ASSERT_EQ(imp[1].ranked.size(), 1u);  // units is constant on b
  EXPECT_EQ(imp[1].ranked[0].parameter, "activation");
  EXPECT_NEAR(imp[1].ranked[0].share, 1, 1e-12);
}

}  // namespace
}  // namespace layerlab::report
