// A finished study whose Pareto fronts are known (worked out by hand below), written through
// the Store API with made-up results: value, parameter count and training time chosen so that
// the fronts hold ties, exact duplicates, a pruned trial that would dominate everything and a
// trial without a value. The tests of `status --json`, `layerlab report` and the dashboard's
// Pareto view (tests/browser) all check their fronts against kKnownFronts.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace layerlab::testing {

inline constexpr const char* kKnownParetoStudy = "pareto-known";

struct KnownTrial {
  int64_t number;
  std::string dataset;
  int hidden_layers;
  std::string activation;
  std::optional<double> value;
  int64_t parameter_count;
  double seconds;
  store::TrialStatus status = store::TrialStatus::kCompleted;
};

// The parameter count depends on the depth only, so configurations tie on it.
inline const std::vector<KnownTrial>& known_pareto_trials() {
  using S = store::TrialStatus;
  static const std::vector<KnownTrial> trials = {
      // iris: params front 1 2 5 7 (the best value at each depth, each better than the one
      // before); time front 0 1 3 2 5 7 (#4 and #6 are slower than #5 and worse).
      {0, "iris", 1, "relu", 0.80, 1000, 1.0},
      {1, "iris", 1, "tanh", 0.85, 1000, 1.2},
      {2, "iris", 2, "relu", 0.90, 2000, 2.0},
      {3, "iris", 2, "tanh", 0.88, 2000, 1.5},
      {4, "iris", 4, "relu", 0.90, 4000, 4.0},
      {5, "iris", 4, "tanh", 0.95, 4000, 3.0},
      {6, "iris", 8, "relu", 0.93, 8000, 8.0},
      {7, "iris", 8, "tanh", 0.97, 8000, 9.0},
      // wine: #8 and #9 are exact duplicates (both on both fronts); #12 and #13 tie on value
      // and parameter count (both on that front), #13 is slower (off the time front).
      {8, "wine", 1, "relu", 0.90, 1000, 1.0},
      {9, "wine", 1, "tanh", 0.90, 1000, 1.0},
      {10, "wine", 2, "relu", 0.90, 2000, 2.0},
      {11, "wine", 2, "tanh", 0.85, 2000, 2.5},
      {12, "wine", 4, "relu", 0.95, 4000, 3.0},
      {13, "wine", 4, "tanh", 0.95, 4000, 3.5},
      {14, "wine", 8, "relu", 0.94, 8000, 5.0},
      {15, "wine", 8, "tanh", 0.96, 8000, 6.0},
      // Cut short, it would dominate all of iris: pruned trials do not rank.
      {16, "iris", 1, "relu", 0.99, 1000, 0.5, S::kPruned},
      // No value: takes no part.
      {17, "iris", 2, "relu", std::nullopt, 2000, 0.1},
  };
  return trials;
}

// Each dataset's fronts by the cost they trade against: trial numbers, cheapest first, ties
// by number.
inline const std::map<std::string, std::map<std::string, std::vector<int64_t>>> kKnownFronts = {
    {"iris", {{"parameter_count", {1, 2, 5, 7}}, {"seconds", {0, 1, 3, 2, 5, 7}}}},
    {"wine", {{"parameter_count", {8, 9, 12, 13, 15}}, {"seconds", {8, 9, 12, 15}}}},
};

// Writes the study, finished, into `st`; returns its id.
inline int64_t write_known_pareto_study(store::Store& st) {
  const nlohmann::json spec = {{"name", kKnownParetoStudy},
                               {"datasets", {"iris", "wine"}},
                               {"metric", {{"name", "val_accuracy"}, {"goal", "maximize"}}},
                               {"method", "grid"},
                               {"seeds", {0}},
                               {"parameters",
                                {{"hidden_layers", {{"values", {1, 2, 4, 8}}}},
                                 {"activation", {{"values", {"relu", "tanh"}}}},
                                 {"units", {{"value", 16}}},
                                 {"epochs", {{"value", 3}}}}}};
  const int64_t id = st.create_study(kKnownParetoStudy, spec);
  std::vector<store::NewTrial> added;
  std::map<int64_t, const KnownTrial*> by_number;
  for (const KnownTrial& t : known_pareto_trials()) {
    added.push_back({t.number,
                     t.dataset,
                     {{"hidden_layers", t.hidden_layers},
                      {"activation", t.activation},
                      {"units", 16},
                      {"epochs", 3},
                      {"seed", 0}},
                     0});
    by_number[t.number] = &t;
  }
  st.add_trials(id, added);
  store::ClaimOptions claim;
  claim.study_id = id;
  std::vector<store::TrialFinish> finishes;
  while (const auto c = st.claim_next("known-pareto", claim)) {
    const KnownTrial& t = *by_number.at(c->number);
    nlohmann::json metrics = {{"val_accuracy", t.value ? nlohmann::json(*t.value) : nullptr}};
    nlohmann::json result = {{"status", store::to_string(t.status)},
                             {"metric", "val_accuracy"},
                             {"metrics", metrics},
                             {"epochs_run", 3},
                             {"seconds", t.seconds},
                             {"parameter_count", t.parameter_count},
                             {"params", c->params}};
    store::EpochRow epoch;
    epoch.epoch = 1;
    epoch.train_loss = 1.0;
    epoch.val_loss = 1.1;
    epoch.val_metric = t.value.value_or(0.5);
    epoch.seconds = t.seconds;
    finishes.push_back({c->trial_id, c->attempt, t.status, result, t.value, "", {epoch}});
  }
  EXPECT_EQ(finishes.size(), known_pareto_trials().size());
  EXPECT_EQ(st.finish_trials(finishes), std::vector<bool>(finishes.size(), true));
  st.set_study_status(id, store::StudyStatus::kFinished);
  return id;
}

}  // namespace layerlab::testing
