// Builds an in-memory study view (server/study_cache.h) from rows of synthetic results,
// the input every report analysis reads.
#pragma once

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/study_cache.h"

namespace layerlab::report::testing {

class ViewBuilder {
 public:
  // params: the study's parameters (a "seed" is added); goal by `maximize`.
  explicit ViewBuilder(std::vector<std::string> params, bool maximize = true) {
    view_.param_names = std::move(params);
    view_.param_names.push_back("seed");
    view_.spec.maximize = maximize;
    view_.spec.metric = maximize ? "val_accuracy" : "val_loss";
  }

  // One finished trial; params: {name: value} (bools, numbers, strings; absent = missing).
  ViewBuilder& add(const std::string& dataset, const nlohmann::json& params, double value,
                   double seconds = 1, store::TrialStatus status = store::TrialStatus::kCompleted) {
    analysis::CachedTrial t;
    t.id = 1000 + static_cast<int64_t>(view_.trials.size());
    t.number = static_cast<int64_t>(view_.trials.size());
    t.dataset = intern(view_.datasets, dataset);
    if (std::find(view_.spec.datasets.begin(), view_.spec.datasets.end(), dataset) ==
        view_.spec.datasets.end())
      view_.spec.datasets.push_back(dataset);
    t.status = status;
    t.value = value;
    t.seconds = seconds;
    for (const std::string& name : view_.param_names) {
      analysis::Scalar s;
      if (auto p = params.find(name); p != params.end()) {
        if (p->is_string())
          s.string = intern(view_.strings, p->get<std::string>());
        else if (p->is_boolean())
          s.number = p->get<bool>() ? 1 : 0;
        else
          s.number = p->get<double>();
      }
      t.params.push_back(s);
    }
    view_.index[t.id] = view_.trials.size();
    view_.trials.push_back(std::move(t));
    return *this;
  }

  // The search domain of a parameter, as a study file would give it.
  ViewBuilder& domain(const std::string& name, const study::Domain& d) {
    view_.spec.parameters.emplace_back(name, d);
    return *this;
  }

  // The parameter count of the trial added last.
  ViewBuilder& parameters(double count) {
    view_.trials.back().parameter_count = count;
    return *this;
  }

  const analysis::StudyView& view() const { return view_; }

 private:
  static int32_t intern(std::vector<std::string>& table, const std::string& s) {
    auto it = std::find(table.begin(), table.end(), s);
    if (it != table.end()) return static_cast<int32_t>(it - table.begin());
    table.push_back(s);
    return static_cast<int32_t>(table.size() - 1);
  }
  analysis::StudyView view_;
};

}  // namespace layerlab::report::testing
