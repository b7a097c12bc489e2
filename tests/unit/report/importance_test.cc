// Parameter importance: functional ANOVA over a random forest (report/fanova.h) against
// answers known in closed form, and the verdicts that keep it from naming noise: too few
// trials, an out-of-bag R² too low to mean anything.
#include "report/importance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using testing::ViewBuilder;

// A fixed pseudo-random number in [0, 1) per index (the same on every platform).
double noise(uint64_t i) {
  uint64_t z = (i + 1) * 0x9e3779b97f4a7c15;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

// Points at the centres of a K x K grid of equal cells.
std::vector<std::vector<double>> grid(int k) {
  std::vector<std::vector<double>> x;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) x.push_back({(i + 0.5) / k, (j + 0.5) / k});
  return x;
}

TEST(Fanova, AdditiveFunctionHasNoInteractions) {
  // f = 3 a + b: main-effect variances 9 : 1, nothing else.
  const auto x = grid(8);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(3 * p[0] + p[1]);
  const FanovaResult r = fanova(x, y);
  ASSERT_EQ(r.main_effects.size(), 2u);
  EXPECT_NEAR(r.main_effects[0].share, 0.9, 0.02);
  EXPECT_NEAR(r.main_effects[1].share, 0.1, 0.02);
  EXPECT_NEAR(r.interactions.share, 0, 0.02);
  EXPECT_GT(r.oob_r2, 0.9);
}

TEST(Fanova, ProductSplitsAsItsClosedForm) {
  // f = a b with a, b uniform over K equal cells (variance v each, mean 1/2): each main
  // effect explains v/4 of a total v^2 + v/2, i.e. 1 / (4v + 2) (3/7 as K grows); the
  // interaction the rest.
  const int k = 20;
  const auto x = grid(k);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(p[0] * p[1]);
  const double v = (k * k - 1.0) / (12.0 * k * k);
  const double main = 1 / (4 * v + 2);
  const FanovaResult r = fanova(x, y);
  EXPECT_NEAR(r.main_effects[0].share, main, 0.03);
  EXPECT_NEAR(r.main_effects[1].share, main, 0.03);
  EXPECT_NEAR(r.interactions.share, 1 - 2 * main, 0.03);
  for (const Share& s : {r.main_effects[0], r.main_effects[1], r.interactions}) {
    EXPECT_LE(s.low, s.share);
    EXPECT_GE(s.high, s.share);
  }
}

TEST(Fanova, SharesSumToOneAndRepeatBitForBit) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (uint64_t i = 0; i < 150; ++i) {
    x.push_back({noise(3 * i), noise(3 * i + 1), noise(3 * i + 2)});
    y.push_back(std::sin(6 * x.back()[0]) * x.back()[1] + 0.1 * noise(1000 + i));
  }
  const FanovaResult a = fanova(x, y), b = fanova(x, y);
  double sum = a.interactions.share;
  for (size_t j = 0; j < 3; ++j) {
    sum += a.main_effects[j].share;
    EXPECT_EQ(a.main_effects[j].share, b.main_effects[j].share);
    EXPECT_EQ(a.main_effects[j].low, b.main_effects[j].low);
  }
  EXPECT_NEAR(sum, 1, 1e-9);
  EXPECT_EQ(a.oob_r2, b.oob_r2);
}

TEST(Fanova, ConstantMetricSharesNothing) {
  const FanovaResult r = fanova(grid(4), std::vector<double>(16, 0.5));
  EXPECT_EQ(r.main_effects[0].share, 0);
  EXPECT_EQ(r.main_effects[1].share, 0);
  EXPECT_EQ(r.interactions.share, 0);
}

// A study over a log-scaled learning rate, units and activation.
ViewBuilder study_of(int n, double (*metric)(double lr, int units, int act, int i)) {
  ViewBuilder b({"learning_rate", "units", "activation"});
  study::Domain lr;
  lr.distribution = study::Distribution::kLogUniform;
  lr.min = 1e-4;
  lr.max = 1e-1;
  b.domain("learning_rate", lr);
  const char* activations[] = {"relu", "tanh", "sigmoid"};
  for (int i = 0; i < n; ++i) {
    const double rate = 1e-4 * std::pow(1e3, noise(uint64_t(i)));
    const int units = 8 << (i % 4);
    const int act = (i / 4) % 3;
    b.add(
        "digits",
        {{"learning_rate", rate}, {"units", units}, {"activation", activations[act]}, {"seed", 0}},
        metric(rate, units, act, i));
  }
  return b;
}

TEST(Importance, AnObjectiveOfOneParameterNamesItAlone) {
  // The metric depends on the learning rate only (a peak at 1e-2 in log space), plus a
  // little noise.
  const ViewBuilder b = study_of(120, [](double lr, int, int, int i) {
    const double d = std::log10(lr) + 2;
    return 0.9 - 0.1 * d * d + 0.005 * noise(uint64_t(5000 + i));
  });
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 1u);
  const DatasetImportance& d = imp[0];
  EXPECT_EQ(d.verdict, ImportanceVerdict::kShares);
  EXPECT_EQ(d.n, 120u);
  ASSERT_EQ(d.ranked.size(), 3u);
  EXPECT_EQ(d.ranked[0].parameter, "learning_rate");
  EXPECT_GE(d.ranked[0].share.share, 0.8);
  EXPECT_TRUE(d.ranked[0].important);
  EXPECT_FALSE(d.ranked[1].important);
  EXPECT_FALSE(d.ranked[2].important);
  double sum = d.interactions.share;
  for (const ParamImportance& p : d.ranked) sum += p.share.share;
  EXPECT_NEAR(sum, 1, 1e-9);
}

TEST(Importance, PureNoiseNamesNoParameter) {
  const ViewBuilder b =
      study_of(200, [](double, int, int, int i) { return noise(uint64_t(9000 + i)); });
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 1u);
  EXPECT_EQ(imp[0].verdict, ImportanceVerdict::kNoise) << "out-of-bag R2 " << imp[0].oob_r2;
  EXPECT_LT(imp[0].oob_r2, kMinExplainedR2);
  EXPECT_TRUE(imp[0].ranked.empty());
  const nlohmann::json j = to_json(imp);
  EXPECT_EQ(j[0]["verdict"], "noise");
  EXPECT_EQ(j[0]["n"], 200);
}

TEST(Importance, TooFewTrialsToTell) {
  // The reviewer's case: 14 analysed trials gave shares summing to about 395%.
  const ViewBuilder b =
      study_of(14, [](double lr, int units, int, int) { return std::log10(lr) + units / 100.0; });
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 1u);
  EXPECT_EQ(imp[0].verdict, ImportanceVerdict::kTooFewTrials);
  EXPECT_TRUE(imp[0].ranked.empty());
  EXPECT_EQ(to_json(imp)[0]["min_n"], kMinImportanceTrials);
}

TEST(Importance, PrunedTrialsAreNotAnalysedAndConstantsAreLeftOut) {
  ViewBuilder b({"units", "activation"});
  for (int i = 0; i < 40; ++i)
    b.add("a", {{"units", 8 << (i % 2)}, {"activation", "relu"}},
          (i % 2) + 0.01 * noise(uint64_t(i)));
  b.add("a", {{"units", 8}, {"activation", "tanh"}}, 5.0, 1, store::TrialStatus::kPruned);
  const auto imp = analyse_importance(select_trials(b.view()));
  ASSERT_EQ(imp.size(), 1u);
  EXPECT_EQ(imp[0].n, 40u) << "the pruned trial is not analysed";
  ASSERT_EQ(imp[0].ranked.size(), 1u) << "activation does not vary among analysed trials";
  EXPECT_EQ(imp[0].ranked[0].parameter, "units");
  EXPECT_GT(imp[0].ranked[0].share.share, 0.95);
}

}  // namespace
}  // namespace layerlab::report
