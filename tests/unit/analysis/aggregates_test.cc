// Plot aggregates over an in-memory study view: known answers.
#include "analysis/aggregates.h"

#include <gtest/gtest.h>

#include "analysis/views.h"
#include "common/error.h"
#include "support/temp_and_errors.h"

namespace layerlab::analysis {
namespace {

using ::layerlab::testing::throws_error;
using nlohmann::json;

// params: hidden_layers (number), activation (string), seed.
StudyView view_with(const std::vector<std::tuple<std::string, double, std::string, double>>& rows) {
  StudyView v;
  v.param_names = {"hidden_layers", "activation", "seed"};
  v.metric_names = {"val_loss"};
  v.spec.maximize = true;
  int64_t n = 0;
  for (const auto& [dataset, depth, activation, value] : rows) {
    CachedTrial t;
    t.id = 100 + n;
    t.number = n++;
    auto d = std::find(v.datasets.begin(), v.datasets.end(), dataset);
    if (d == v.datasets.end()) d = v.datasets.insert(v.datasets.end(), dataset);
    t.dataset = static_cast<int32_t>(d - v.datasets.begin());
    auto s = std::find(v.strings.begin(), v.strings.end(), activation);
    if (s == v.strings.end()) s = v.strings.insert(v.strings.end(), activation);
    t.params = {Scalar{depth, -1},
                Scalar{std::nan(""), static_cast<int32_t>(s - v.strings.begin())}, Scalar{0, -1}};
    t.value = value;
    t.seconds = 0.5 * depth + 1;  // exactly linear
    t.metrics = {1 - value};
    v.trials.push_back(t);
  }
  return v;
}

TEST(FitLine, RecoversALineAndItsR2) {
  auto f = fit_line({1, 2, 3, 4}, {3, 5, 7, 9});
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->slope, 2, 1e-12);
  EXPECT_NEAR(f->intercept, 1, 1e-12);
  EXPECT_NEAR(f->r2, 1, 1e-12);
  EXPECT_EQ(f->n, 4u);
  // Noise lowers R^2: y = x + (+1, -1, +1, -1): slope 0.6, r2 = 0.36*5/(0.36*5 + ...).
  auto g = fit_line({1, 2, 3, 4}, {2, 1, 4, 3});
  ASSERT_TRUE(g);
  EXPECT_NEAR(g->slope, 0.6, 1e-12);
  EXPECT_NEAR(g->r2, 0.36, 1e-12);               // sxy^2 / (sxx syy) = 9 / (5 * 5)
  EXPECT_FALSE(fit_line({2, 2, 2}, {1, 2, 3}));  // one distinct x
  EXPECT_FALSE(fit_line({1}, {1}));
}

// A continuous x (999 distinct depths here, 1,000 trials) comes in 200 bins of 5 trials, each at
// the mean x of its trials with its range; the statistics are those of the bin's trials, and the
// fit still uses every trial.
TEST(Summarize, AContinuousXComesInBinsOfAboutEqualCounts) {
  std::vector<std::tuple<std::string, double, std::string, double>> rows;
  for (int i = 0; i < 999; ++i) rows.emplace_back("iris", 1 + i * 0.01, "relu", (i % 7) * 0.1);
  rows.emplace_back("iris", 1.0, "relu", 0.65);  // a second trial at the first x
  const StudyView v = view_with(rows);
  const json s = summarize(v, {"hidden_layers", "value", ""});
  ASSERT_EQ(s["series"].size(), 1u);
  const json& points = s["series"][0]["points"];
  ASSERT_EQ(points.size(), 200u);
  size_t n = 0;
  double previous_max = 0;
  for (const json& p : points) {
    n += p["n"].get<size_t>();
    EXPECT_LE(p["x_min"].get<double>(), p["x"].get<double>());
    EXPECT_LE(p["x"].get<double>(), p["x_max"].get<double>());
    EXPECT_LT(previous_max, p["x_min"].get<double>()) << "bins do not overlap";
    previous_max = p["x_max"].get<double>();
  }
  EXPECT_EQ(n, 1000u);
  // The first bin: x 1.00 (twice), 1.01, 1.02, 1.03 with values 0, 0.65, 0.1, 0.2, 0.3.
  const json& first = points[0];
  EXPECT_EQ(first["n"], 5);
  EXPECT_NEAR(first["x"].get<double>(), (1.0 + 1.0 + 1.01 + 1.02 + 1.03) / 5, 1e-12);
  EXPECT_EQ(first["x_min"], 1.0);
  EXPECT_NEAR(first["x_max"].get<double>(), 1.03, 1e-12);
  const std::vector<double> ys = {0, 0.65, 0.1, 0.2, 0.3};
  const double mean = (0 + 0.65 + 0.1 + 0.2 + 0.3) / 5;
  double ss = 0;
  for (double y : ys) ss += (y - mean) * (y - mean);
  EXPECT_NEAR(first["mean"].get<double>(), mean, 1e-12);
  EXPECT_NEAR(first["std"].get<double>(), std::sqrt(ss / 4), 1e-12);
  EXPECT_EQ(first["min"], 0.0);
  EXPECT_EQ(first["max"], 0.65);
  EXPECT_EQ(s["series"][0]["fit"]["n"], 1000) << "the fit uses every trial";
  // 200 distinct values or fewer: a point per value, without a range.
  const json few = summarize(view_with({{"iris", 1, "relu", 0.5}, {"iris", 2, "relu", 0.6}}),
                             {"hidden_layers", "value", ""});
  EXPECT_FALSE(few["series"][0]["points"][0].contains("x_min"));
}

TEST(Summarize, MeanStdAndCountPerDatasetGroupAndX) {
  const StudyView v = view_with({{"iris", 1, "relu", 0.8},
                                 {"iris", 1, "relu", 0.9},
                                 {"iris", 2, "relu", 0.7},
                                 {"iris", 1, "tanh", 0.5},
                                 {"wine", 4, "relu", 0.6},
                                 {"wine", 2, "relu", std::nan("")}});  // no value: left out
  const json s = summarize(v, {"hidden_layers", "value", "activation"});
  EXPECT_EQ(s["trials"], 5);
  ASSERT_EQ(s["series"].size(), 3u);  // iris/relu, iris/tanh, wine/relu
  const json& relu = s["series"][0];
  EXPECT_EQ(relu["dataset"], "iris");
  EXPECT_EQ(relu["group"], "relu");
  ASSERT_EQ(relu["points"].size(), 2u);
  EXPECT_EQ(relu["points"][0]["x"], 1.0);
  EXPECT_EQ(relu["points"][0]["n"], 2);
  EXPECT_NEAR(relu["points"][0]["mean"].get<double>(), 0.85, 1e-12);
  EXPECT_NEAR(relu["points"][0]["std"].get<double>(), std::sqrt(0.005), 1e-12);
  EXPECT_EQ(relu["points"][0]["min"], 0.8);
  EXPECT_EQ(relu["points"][0]["max"], 0.9);
  EXPECT_EQ(relu["points"][1]["std"], 0.0);  // n = 1
  EXPECT_EQ(s["series"][1]["group"], "tanh");
  EXPECT_TRUE(s["series"][1]["fit"].is_null());  // one x
  EXPECT_EQ(s["series"][2]["dataset"], "wine");

  // Training time is exactly 0.5 x + 1 in the fixture: the fit finds it.
  const json t = summarize(v, {"hidden_layers", "seconds", ""});
  ASSERT_EQ(t["series"].size(), 2u);
  EXPECT_TRUE(t["series"][0]["group"].is_null());
  EXPECT_NEAR(t["series"][0]["fit"]["slope"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(t["series"][0]["fit"]["intercept"].get<double>(), 1, 1e-12);
  EXPECT_NEAR(t["series"][0]["fit"]["r2"].get<double>(), 1, 1e-12);
  // A metric by name; string x ordered alphabetically, no fit.
  const json m = summarize(v, {"activation", "val_loss", ""});
  EXPECT_EQ(m["series"][0]["points"][0]["x"], "relu");
  EXPECT_EQ(m["series"][0]["points"][1]["x"], "tanh");
  EXPECT_TRUE(m["series"][0]["fit"].is_null());
}

TEST(Summarize, UnknownNamesAreErrorsThatListWhatExists) {
  const StudyView v = view_with({{"iris", 1, "relu", 0.8}});
  EXPECT_TRUE(throws_error(
      [&] {
        summarize(v, {"", "value", ""});
      },
      ErrorCode::kInvalidArgument, "x: required"));
  EXPECT_TRUE(throws_error(
      [&] {
        summarize(v, {"depth", "value", ""});
      },
      ErrorCode::kInvalidArgument,
      "x: unknown parameter 'depth'; the study's parameters are "
      "hidden_layers, activation, seed"));
  EXPECT_TRUE(throws_error(
      [&] {
        summarize(v, {"hidden_layers", "acc", ""});
      },
      ErrorCode::kInvalidArgument, "a metric: val_loss"));
  EXPECT_TRUE(throws_error(
      [&] {
        summarize(v, {"hidden_layers", "value", "colour"});
      },
      ErrorCode::kInvalidArgument, "group: unknown parameter 'colour'"));
}

TEST(Columns, ByNumberThinnedEvenly) {
  std::vector<std::tuple<std::string, double, std::string, double>> rows;
  for (int i = 0; i < 10; ++i) rows.emplace_back("iris", i % 3 + 1, "relu", i / 10.0);
  StudyView v = view_with(rows);
  std::swap(v.trials[0], v.trials[9]);  // storage order is not number order
  const json all = columns(v, {"number", "value", "params.activation", "metrics.val_loss"}, 100);
  EXPECT_EQ(all["total"], 10);
  EXPECT_EQ(all["returned"], 10);
  EXPECT_EQ(all["columns"]["number"], json({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(all["columns"]["trial_id"][0], 100);
  EXPECT_EQ(all["columns"]["params.activation"][3], "relu");
  EXPECT_NEAR(all["columns"]["metrics.val_loss"][2].get<double>(), 0.8, 1e-12);
  const json thin = columns(v, {"number"}, 4);
  EXPECT_EQ(thin["returned"], 4);
  EXPECT_EQ(thin["columns"]["number"], json({0, 2, 5, 7}));
  EXPECT_TRUE(throws_error([&] { columns(v, {"speed"}, 4); }, ErrorCode::kInvalidArgument,
                           "unknown field 'speed'"));
  EXPECT_TRUE(throws_error([&] { columns(v, {"metrics.f1"}, 4); }, ErrorCode::kInvalidArgument,
                           "unknown metric 'f1'"));
}

TEST(StudyBest, FollowsTheGoalAndBreaksTiesByNumber) {
  StudyView v = view_with({{"iris", 1, "relu", 0.7},
                           {"iris", 1, "relu", 0.9},
                           {"iris", 1, "relu", 0.9},
                           {"iris", 1, "relu", 0.2}});
  v.spec.datasets = {"iris"};
  EXPECT_EQ(leaderboards(v, 1)[0].top[0].number, 1);
  EXPECT_EQ(leaderboards(v, 1)[0].best_count, 2);
  v.spec.maximize = false;
  EXPECT_EQ(leaderboards(v, 1)[0].top[0].number, 3);
  StudyView empty = view_with({});
  empty.spec.datasets = {"iris"};
  EXPECT_TRUE(leaderboards(empty, 1)[0].top.empty());
}

// Issue 53: the study summary (GET /api/v1/studies) named one trial across datasets, a wine
// trial among 18 tied at 1.0 over iris's 0.9733. Its `best` is each dataset's, with the ties
// counted, and a dataset with nothing ranked yet says so.
TEST(StudySummary, BestIsEachDatasetsNeverOneAcrossDatasets) {
  std::vector<std::tuple<std::string, double, std::string, double>> rows = {
      {"iris", 1, "relu", 0.9733}, {"iris", 1, "relu", 0.9}};
  for (int i = 0; i < 18; ++i) rows.emplace_back("wine", 1, "relu", 1.0);
  StudyView v = view_with(rows);
  v.spec.datasets = {"iris", "wine", "digits"};
  store::StudyRecord study;
  study.spec = {{"metric", {{"name", "val_accuracy"}, {"goal", "maximize"}}}};
  const json best = study_summary(study, {}, 20, leaderboards(v, 1))["best"];
  EXPECT_EQ(best, json::parse(R"([
    {"dataset": "iris", "trial_id": 100, "number": 0, "value": 0.9733, "count": 1},
    {"dataset": "wine", "trial_id": 102, "number": 2, "value": 1.0, "count": 18},
    {"dataset": "digits", "trial_id": null, "number": null, "value": null, "count": 0}])"))
      << best.dump();
  // The detail's entries carry their trial; none for a dataset without one.
  const json detail = best_with_trials(best, [](int64_t id) {
    store::TrialRecord t;
    t.id = id;
    return t;
  });
  EXPECT_EQ(detail[1]["trial"]["id"], 102);
  EXPECT_TRUE(detail[2]["trial"].is_null());
}

// The summary's best and /leaderboard follow study/leaderboard.h: a pruned trial (its value
// cut short) does not rank, and boards are per dataset in the study's order.
TEST(StudyViewBest, LeavesOutPrunedTrialsLikeTheLeaderboards) {
  StudyView v = view_with({{"wine", 1, "relu", 1.0},
                           {"iris", 1, "relu", 0.99},
                           {"iris", 1, "relu", 0.7},
                           {"wine", 1, "relu", 1.0},
                           {"iris", 1, "relu", 0.9},
                           {"wine", 1, "relu", 0.5}});
  v.trials[1].status = store::TrialStatus::kPruned;
  v.spec.datasets = {"iris", "wine"};
  const auto boards = leaderboards(v, 2);
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(boards[0].dataset, "iris");
  ASSERT_EQ(boards[0].top.size(), 2u);
  EXPECT_EQ(boards[0].top[0].number, 4);
  EXPECT_EQ(boards[0].top[0].trial_id, 104);
  EXPECT_EQ(boards[0].top[1].number, 2);
  EXPECT_EQ(boards[0].best_count, 1);
  EXPECT_EQ(boards[1].dataset, "wine");
  EXPECT_EQ(boards[1].top[0].number, 0);
  EXPECT_EQ(boards[1].top[1].number, 3);
  EXPECT_EQ(boards[1].best_count, 2);
}

TEST(Aggregates, PrunedTrialsAreLeftOutOfEveryAggregateAndCounted) {
  // The reviewer's case: one relu trial at depth 4 pruned at 0.084 made the depth curve's
  // mean there 0.084. Pruned trials (value cut short) are counted apart, never averaged.
  StudyView v = view_with({{"iris", 4, "relu", 0.9},
                           {"iris", 4, "relu", 0.084},
                           {"iris", 1, "relu", 0.8},
                           {"iris", 1, "relu", std::nan("")}});
  v.trials[1].status = store::TrialStatus::kPruned;
  v.trials[3].status = store::TrialStatus::kEarlyStopped;
  const json s = summarize(v, {"hidden_layers", "value", ""});
  EXPECT_EQ(s["trials"], 2);
  EXPECT_EQ(s["left_out"]["pruned"], 1);
  EXPECT_EQ(s["left_out"]["no_value"], 1);
  const json& points = s["series"][0]["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1]["x"], 4.0);
  EXPECT_EQ(points[1]["n"], 1);
  EXPECT_EQ(points[1]["mean"], 0.9);
  // Time too: a pruned trial's seconds were cut short.
  EXPECT_EQ(summarize(v, {"hidden_layers", "seconds", ""})["trials"], 2);

  const json c = columns(v, {"number", "value"}, 100);
  EXPECT_EQ(c["total"], 2);
  EXPECT_EQ(c["columns"]["number"], json({0, 2}));
  EXPECT_EQ(c["left_out"]["pruned"], 1);
  for (const CachedTrial& t : v.trials) EXPECT_EQ(analysed(t), t.number == 0 || t.number == 2);
}

}  // namespace
}  // namespace layerlab::analysis
