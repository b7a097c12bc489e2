// Pareto fronts (analysis/pareto.h): known answers, worked out by hand, for both goals,
// ties and duplicates, one-point and empty datasets, and trials without a value or a cost.
#include "analysis/pareto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace layerlab::analysis {
namespace {

using nlohmann::json;

const double kNaN = std::nan("");

// The numbers of the front's points, in the front's order.
std::vector<int64_t> front_numbers(const std::vector<ParetoPoint>& points, bool maximize) {
  std::vector<int64_t> out;
  for (size_t i : non_dominated(points, maximize)) out.push_back(points[i].number);
  return out;
}

TEST(NonDominated, MaximizeKeepsEveryCheapestWayToABetterValue) {
  // number, value, cost
  const std::vector<ParetoPoint> points = {
      {0, 0.80, 100},  // on: nothing cheaper is as good
      {1, 0.90, 200},  // on
      {2, 0.85, 300},  // off: #1 is cheaper and better
      {3, 0.95, 400},  // on: the best value
      {4, 0.70, 50},   // on: the cheapest
      {5, 0.90, 250},  // off: #1 has the same value for less
      {6, 0.60, 60},   // off: #4 is cheaper and better
  };
  EXPECT_EQ(front_numbers(points, true), (std::vector<int64_t>{4, 0, 1, 3}));
}

TEST(NonDominated, MinimizeFlipsTheValueOnly) {
  const std::vector<ParetoPoint> points = {
      {0, 0.30, 100}, {1, 0.20, 200}, {2, 0.25, 150},
      {3, 0.10, 500}, {4, 0.40, 50},  {5, 0.20, 300},  // off: #1 has 0.20 for less
      {6, 0.50, 40},                                   // on: the cheapest, however bad
  };
  EXPECT_EQ(front_numbers(points, false), (std::vector<int64_t>{6, 4, 0, 2, 1, 3}));
  // The same points maximised: only the cheapest ones that are better than all cheaper.
  EXPECT_EQ(front_numbers(points, true), (std::vector<int64_t>{6}));
}

TEST(NonDominated, EqualValueAndCostAreAllOnTheFrontByNumber) {
  const std::vector<ParetoPoint> points = {
      {5, 0.9, 100},   // a duplicate of #2: neither dominates the other
      {2, 0.9, 100},   //
      {7, 0.8, 100},   // off: same cost, worse value
      {3, 0.95, 200},  // duplicates again, listed by number
      {1, 0.95, 200},  //
      {4, 0.95, 300},  // off: same value, costlier
      {8, 0.9, 100},   // a third copy
  };
  EXPECT_EQ(front_numbers(points, true), (std::vector<int64_t>{2, 5, 8, 1, 3}));
}

TEST(NonDominated, OnePointEmptyAndAllEqual) {
  EXPECT_EQ(front_numbers({{9, 0.5, 10}}, true), (std::vector<int64_t>{9}));
  EXPECT_EQ(front_numbers({{9, 0.5, 10}}, false), (std::vector<int64_t>{9}));
  EXPECT_TRUE(front_numbers({}, true).empty());
  // Zero is a cost (a network without hidden layers still has weights, but a time may
  // round to 0).
  EXPECT_EQ(front_numbers({{1, 0.5, 0}, {2, 0.5, 0}, {3, 0.5, 0}}, true),
            (std::vector<int64_t>{1, 2, 3}));
}

TEST(NonDominated, PointsWithoutValueOrCostTakeNoPartAndDominateNothing) {
  const std::vector<ParetoPoint> points = {
      {0, kNaN, 1},                                        // no value
      {1, 0.99, kNaN},                                     // no cost
      {2, 0.99, -1},                                       // a negative cost is no cost
      {3, 0.99, std::numeric_limits<double>::infinity()},  // nor is an infinite one
      {4, 0.5, 100},
      {5, 0.6, 200},
  };
  EXPECT_EQ(front_numbers(points, true), (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(front_numbers({{0, kNaN, 1}, {1, 0.5, kNaN}}, true).empty());
}

// A view over two datasets; params hidden_layers, activation, seed.
class ParetoView : public ::testing::Test {
 protected:
  void SetUp() override {
    v_.param_names = {"hidden_layers", "activation", "seed"};
    v_.strings = {"relu", "tanh"};
    v_.spec.metric = "val_accuracy";
    v_.spec.maximize = true;
    v_.spec.datasets = {"iris", "wine", "digits"};  // digits: no trials yet
  }
  // Adds a trial; activation 0 relu, 1 tanh.
  void add(const std::string& dataset, double depth, int activation, double value, double params,
           double seconds, store::TrialStatus status = store::TrialStatus::kCompleted) {
    CachedTrial t;
    t.number = static_cast<int64_t>(v_.trials.size());
    t.id = 500 + t.number;
    auto d = std::find(v_.datasets.begin(), v_.datasets.end(), dataset);
    if (d == v_.datasets.end()) d = v_.datasets.insert(v_.datasets.end(), dataset);
    t.dataset = static_cast<int32_t>(d - v_.datasets.begin());
    t.status = status;
    t.value = value;
    t.parameter_count = params;
    t.seconds = seconds;
    t.params = {Scalar{depth, -1}, Scalar{kNaN, activation}, Scalar{0, -1}};
    v_.index[t.id] = v_.trials.size();
    v_.trials.push_back(t);
  }
  std::vector<int64_t> numbers(const ParetoFront& f) const {
    std::vector<int64_t> out;
    for (size_t i : f.trials) out.push_back(v_.trials[i].number);
    return out;
  }
  StudyView v_;
};

TEST_F(ParetoView, FrontsPerDatasetAgainstParametersAndTime) {
  using S = store::TrialStatus;
  add("wine", 1, 0, 0.90, 1000, 2.0);    // #0 wine: the only one on both fronts
  add("iris", 1, 0, 0.80, 100, 1.0);     // #1 on params, on time
  add("iris", 2, 0, 0.90, 200, 3.0);     // #2 on params; time: #4 is faster and as good
  add("iris", 4, 1, 0.95, 400, 5.0);     // #3 on both
  add("iris", 2, 1, 0.90, 200, 2.0);     // #4 on params (ties #2), on time
  add("iris", 8, 0, 0.99, 800, 0.5);     // #5 pruned: cut short, does not rank
  v_.trials.back().status = S::kPruned;  //
  add("iris", 1, 1, kNaN, 100, 0.1);     // #6 no value: does not rank
  add("iris", 3, 0, 0.97, kNaN, 9.0);    // #7 no parameter count: time front only
  add("iris", 1, 0, 0.80, 100, 1.0, S::kEarlyStopped);  // #8 an exact duplicate of #1

  const std::vector<DatasetPareto> p = pareto_fronts(v_);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].dataset, "iris");
  EXPECT_EQ(p[1].dataset, "wine");
  EXPECT_EQ(p[2].dataset, "digits");
  ASSERT_EQ(p[0].fronts.size(), 2u);
  EXPECT_EQ(p[0].fronts[0].cost, ParetoCost::kParameterCount);
  EXPECT_EQ(p[0].fronts[1].cost, ParetoCost::kSeconds);
  EXPECT_EQ(p[0].ranked.size(), 6u);  // #1 #2 #3 #4 #7 #8
  EXPECT_EQ(numbers(p[0].fronts[0]), (std::vector<int64_t>{1, 8, 2, 4, 3}));
  EXPECT_EQ(p[0].fronts[0].without_cost, 1);  // #7
  EXPECT_EQ(numbers(p[0].fronts[1]), (std::vector<int64_t>{1, 8, 4, 3, 7}));
  EXPECT_EQ(p[0].fronts[1].without_cost, 0);
  EXPECT_EQ(numbers(p[1].fronts[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(numbers(p[1].fronts[1]), (std::vector<int64_t>{0}));
  EXPECT_TRUE(p[2].ranked.empty());
  EXPECT_TRUE(p[2].fronts[0].trials.empty());
  EXPECT_TRUE(p[2].fronts[1].trials.empty());
}

TEST_F(ParetoView, MinimizeGoalComesFromTheSpec) {
  v_.spec.maximize = false;
  v_.spec.metric = "val_loss";
  add("iris", 1, 0, 0.50, 100, 1);  // on
  add("iris", 2, 0, 0.30, 200, 2);  // on
  add("iris", 4, 0, 0.40, 400, 4);  // off
  add("iris", 8, 0, 0.10, 800, 8);  // on
  const std::vector<DatasetPareto> p = pareto_fronts(v_);
  EXPECT_EQ(numbers(p[0].fronts[0]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(numbers(p[0].fronts[1]), (std::vector<int64_t>{0, 1, 3}));
}

TEST_F(ParetoView, JsonListsEachFrontTrialWithItsConfiguration) {
  add("iris", 2, 1, 0.9, 1234, 1.5);
  add("iris", 1, 0, 0.8, 99, kNaN);  // no time: on the parameter front only
  const json j = pareto_json(v_, pareto_fronts(v_));
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["dataset"], "iris");
  EXPECT_EQ(j[0]["ranked"], 2);
  const json& params = j[0]["fronts"]["parameter_count"];
  EXPECT_EQ(params["without_cost"], 0);
  ASSERT_EQ(params["trials"].size(), 2u);
  EXPECT_EQ(params["trials"][0],
            (json{{"id", 501},
                  {"number", 1},
                  {"value", 0.8},
                  {"parameter_count", 99},
                  {"seconds", nullptr},
                  {"params", {{"hidden_layers", 1}, {"activation", "relu"}, {"seed", 0}}}}));
  EXPECT_EQ(params["trials"][1]["params"]["activation"], "tanh");
  EXPECT_EQ(params["trials"][1]["parameter_count"], 1234);
  const json& time = j[0]["fronts"]["seconds"];
  EXPECT_EQ(time["without_cost"], 1);
  ASSERT_EQ(time["trials"].size(), 1u);
  EXPECT_EQ(time["trials"][0]["number"], 0);
  EXPECT_EQ(time["trials"][0]["seconds"], 1.5);
  EXPECT_TRUE(j[2]["fronts"]["seconds"]["trials"].empty());
}

TEST_F(ParetoView, ViewThinsThePointsButKeepsEveryFrontTrial) {
  // 20 trials: values rise with cost only at #0, #19 (the front is #0 and #19).
  add("iris", 1, 0, 0.5, 10, 1);
  for (int i = 1; i < 19; ++i) add("iris", 1, 0, 0.4, 10 + i, 1 + i);
  add("iris", 1, 0, 0.9, 100, 100);
  const json all = pareto_view(v_, 100);
  EXPECT_EQ(all["goal"], "maximize");
  EXPECT_EQ(all["metric"], "val_accuracy");
  const json& points = all["datasets"][0]["points"];
  EXPECT_EQ(points["total"], 20);
  EXPECT_EQ(points["returned"], 20);
  EXPECT_EQ(points["number"].size(), 20u);
  EXPECT_EQ(points["params"]["activation"][3], "relu");
  EXPECT_EQ(points["parameter_count"][19], 100);

  const json thin = pareto_view(v_, 4);  // #0 #5 #10 #15 evenly, plus #19 of the front
  const json& few = thin["datasets"][0]["points"];
  EXPECT_EQ(few["total"], 20);
  EXPECT_EQ(few["number"], (json{0, 5, 10, 15, 19}));
  EXPECT_EQ(few["returned"], 5);
  EXPECT_EQ(few["id"].size(), 5u);
  EXPECT_EQ(few["params"]["hidden_layers"].size(), 5u);
  EXPECT_EQ(thin["datasets"][1]["points"]["total"], 0);  // wine: no trials
}

}  // namespace
}  // namespace layerlab::analysis
