// Metric against depth: the plateau rule on points with known answers, and the curves of a
// synthetic study (grouping, splits, trials left out).
#include "report/depth.h"

#include <gtest/gtest.h>

#include <cmath>

#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using nlohmann::json;
using testing::ViewBuilder;

DepthPoint point(double depth, std::initializer_list<double> values) {
  DepthPoint p{depth, {}};
  for (double v : values) p.metric.add(v);
  return p;
}

TEST(Plateau, SmallestDepthWithinOneStandardErrorOfTheBest) {
  // Best at 8: mean 0.96, SE 0.02, so 0.94 is within reach: depth 4 (0.95) is the plateau.
  const auto p = find_plateau({point(1, {0.80, 0.80}), point(2, {0.90, 0.90}),
                               point(4, {0.95, 0.95}), point(8, {0.94, 0.98})},
                              true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->best_depth, 8);
  EXPECT_NEAR(p->best_mean, 0.96, 1e-12);
  EXPECT_NEAR(p->threshold, 0.94, 1e-12);
  EXPECT_EQ(p->plateau_depth, 4);
  EXPECT_TRUE(p->best_is_deepest);
  EXPECT_FALSE(p->deeper_worse);
  EXPECT_TRUE(p->observed);
  EXPECT_EQ(plateau_verdict(*p),
            "plateau from depth 4 (within one standard error of the best, depth 8); the best is "
            "the deepest depth tried");
}

TEST(Plateau, NoneWhenTheDeepestIsBestBeyondTheNoise) {
  const auto p =
      find_plateau({point(1, {0.8, 0.8}), point(2, {0.9, 0.9}), point(4, {0.99, 0.99})}, true);
  EXPECT_EQ(p->best_depth, 4);
  EXPECT_EQ(p->plateau_depth, 4);
  EXPECT_TRUE(p->best_is_deepest);
  EXPECT_FALSE(p->observed);
  EXPECT_NE(plateau_verdict(*p).find("no plateau observed"), std::string::npos);
}

TEST(Plateau, MinimizeLooksForTheLowestMean) {
  // Losses: best 0.45 at depth 4 (SE 0.05): depth 2's 0.48 is within reach; deeper is worse.
  const auto p = find_plateau(
      {point(1, {1.0, 1.0}), point(2, {0.48, 0.48}), point(4, {0.4, 0.5}), point(8, {0.6, 0.6})},
      false);
  EXPECT_EQ(p->best_depth, 4);
  EXPECT_NEAR(p->threshold, 0.5, 1e-12);
  EXPECT_EQ(p->plateau_depth, 2);
  EXPECT_FALSE(p->best_is_deepest);
  EXPECT_TRUE(p->observed);
  EXPECT_TRUE(p->deeper_worse) << "depth 8's 0.6 is beyond 0.45 + 0.05";
  EXPECT_EQ(plateau_verdict(*p),
            "plateau from depth 2 (within one standard error of the best, depth 4); deeper "
            "networks do worse");
  // The same numbers maximized: depth 1 is best, and the plateau.
  const auto q = find_plateau({point(1, {1.0, 1.0}), point(2, {0.5, 0.5})}, true);
  EXPECT_EQ(q->best_depth, 1);
  EXPECT_EQ(q->plateau_depth, 1);
}

TEST(Plateau, EdgeCases) {
  EXPECT_FALSE(find_plateau({}, true));
  const auto one = find_plateau({point(3, {0.7, 0.8})}, true);
  EXPECT_TRUE(one->one_depth);
  EXPECT_FALSE(one->observed);
  EXPECT_EQ(one->plateau_depth, 3);
  EXPECT_EQ(plateau_verdict(*one), "one depth only: no plateau can be judged");
  // All equal: ties go to the shallowest depth, which is the plateau.
  const auto flat = find_plateau({point(1, {0.7}), point(2, {0.7}), point(4, {0.7})}, true);
  EXPECT_EQ(flat->best_depth, 1);
  EXPECT_EQ(flat->plateau_depth, 1);
  EXPECT_TRUE(flat->observed);
  EXPECT_FALSE(flat->deeper_worse) << "depth 4 equals the best";
  EXPECT_EQ(plateau_verdict(*flat), "plateau from depth 1 (the best depth)");
  // A best depth with a single trial has no standard error: only its own mean reaches it.
  // (Depth 1's own wide SE does not matter: the rule uses the best depth's.)
  const auto single = find_plateau({point(1, {0.5, 0.9}), point(2, {0.75})}, true);
  EXPECT_EQ(single->best_depth, 2);
  EXPECT_EQ(single->threshold, 0.75);
  EXPECT_EQ(single->plateau_depth, 2);
}

// 1 dataset x 2 activations x batch_norm on/off x depths 1, 2, 4 x 2 seeds; residual fixed.
// value = base(activation) + 0.1 log2(depth) + 0.01 batch_norm, seeds +-0.01.
ViewBuilder grid_view() {
  ViewBuilder b({"hidden_layers", "activation", "batch_norm", "residual"});
  for (const char* act : {"relu", "tanh"})
    for (bool bn : {false, true})
      for (int depth : {1, 2, 4})
        for (int seed : {0, 1}) {
          const double v = (act == std::string("relu") ? 0.7 : 0.5) + 0.1 * std::log2(depth) +
                           (bn ? 0.01 : 0) + (seed ? 0.01 : -0.01);
          b.add("digits",
                {{"hidden_layers", depth},
                 {"activation", act},
                 {"batch_norm", bn},
                 {"residual", false},
                 {"seed", seed}},
                v);
        }
  return b;
}

TEST(AnalyseDepth, CurvesPerDatasetActivationAndVariedSwitches) {
  ViewBuilder b = grid_view();
  // Left out: a pruned trial and a completed one without a value.
  b.add("digits", {{"hidden_layers", 1}, {"activation", "relu"}, {"batch_norm", false}}, 0.0, 1,
        store::TrialStatus::kPruned);
  b.add("digits", {{"hidden_layers", 1}, {"activation", "relu"}, {"batch_norm", false}},
        std::nan(""));
  const Sample s = select_trials(b.view());
  EXPECT_EQ(s.trials.size(), 24u);
  EXPECT_EQ(s.pruned, 1u);
  EXPECT_EQ(s.no_value, 1u);
  const DepthAnalysis a = analyse_depth(s);
  EXPECT_EQ(a.split_by, (std::vector<std::string>{"activation", "batch_norm"}));  // residual fixed
  ASSERT_EQ(a.curves.size(), 4u);
  const DepthCurve& c = a.curves[1];
  EXPECT_EQ(c.dataset, "digits");
  EXPECT_EQ(c.label, "relu \u00b7 batch_norm");
  EXPECT_EQ(c.group, (json{{"activation", "relu"}, {"batch_norm", true}}));
  EXPECT_EQ(a.curves[0].label, "relu \u00b7 no batch_norm");
  EXPECT_EQ(a.curves[2].label, "tanh \u00b7 no batch_norm");
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_EQ(c.points[0].depth, 1);
  EXPECT_EQ(c.points[0].metric.n, 2u);
  EXPECT_NEAR(c.points[0].metric.mean, 0.71, 1e-12);
  EXPECT_NEAR(c.points[2].metric.mean, 0.91, 1e-12);
  EXPECT_NEAR(*c.points[2].metric.se(), 0.01, 1e-12);
  // Still improving by 0.1 per doubling, far beyond the SE: no plateau.
  EXPECT_EQ(c.plateau.best_depth, 4);
  EXPECT_FALSE(c.plateau.observed);
  const json j = to_json(a);
  EXPECT_EQ(j["curves"][1]["points"][2]["depth"], 4);
  EXPECT_EQ(j["curves"][1]["points"][2]["n"], 2);
  EXPECT_EQ(j["curves"][1]["plateau"]["observed"], false);
  EXPECT_TRUE(j["note"].is_null());
}

TEST(AnalyseDepth, NoDepthParameterOrNoDepthValues) {
  ViewBuilder b({"units"});
  b.add("iris", {{"units", 8}}, 0.9);
  const DepthAnalysis a = analyse_depth(select_trials(b.view()));
  EXPECT_TRUE(a.curves.empty());
  EXPECT_NE(a.note.find("no hidden_layers parameter"), std::string::npos);
}

TEST(AnalyseDepth, OneDepthOnly) {
  ViewBuilder b({"hidden_layers"});
  b.add("iris", {{"hidden_layers", 2}}, 0.9).add("iris", {{"hidden_layers", 2}}, 0.8);
  const DepthAnalysis a = analyse_depth(select_trials(b.view()));
  ASSERT_EQ(a.curves.size(), 1u);
  EXPECT_EQ(a.curves[0].label, "all");
  EXPECT_TRUE(a.curves[0].plateau.one_depth);
  EXPECT_NEAR(a.curves[0].points[0].metric.mean, 0.85, 1e-12);
}

}  // namespace
}  // namespace layerlab::report
