// The trials a report analyses, read from a study view (server/study_cache.h: the compact
// form the dashboard's plots read), and how their parameters are grouped.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/study_cache.h"
#include "study/search_space.h"

namespace layerlab::report {

using analysis::CachedTrial;
using analysis::Scalar;
using analysis::StudyView;

inline constexpr const char* kSampleRule =
    "Analysed trials: status completed or early_stopped with a finite value of the study's "
    "metric. Pruned trials are left out (the pruner cut their metric and their time short), "
    "as are trials without a value (diverged, failed, cancelled, not finished). Depth is the "
    "hidden_layers parameter; time is the trial's training seconds. Statistics are computed "
    "per dataset, since datasets differ in scale.";

struct Sample {
  const StudyView* view = nullptr;
  std::vector<const CachedTrial*> trials;  // analysed, by trial number
  size_t pruned = 0;                       // left out: stopped by the pruner
  size_t no_value = 0;                     // left out: finished without a finite value

  bool maximize() const { return view->spec.maximize; }
  // Analysed trials per dataset, in the study's dataset order; datasets without any are
  // left out.
  std::vector<std::pair<std::string, std::vector<const CachedTrial*>>> by_dataset() const;
  // The view's index of a parameter, -1 when the study has no such parameter.
  int param(const std::string& name) const { return view->param_index(name); }
  // True when the analysed trials hold more than one value of the parameter.
  bool varies(int param) const;
  // The parameters that vary among the analysed trials, in the study's order; the seed (a
  // repetition, not a design choice) is left out.
  std::vector<int> varied_params() const;
  const std::string& param_name(int param) const;
  // The parameter's type (nn::Params' field); nullopt for a name that is not one.
  std::optional<study::ParamKind> param_kind(int param) const;
  // A parameter value as JSON: bools as true/false, missing as null.
  nlohmann::json level_json(int param, const Scalar& s) const;
};

Sample select_trials(const StudyView& view);

// Orders parameter values: numbers numerically, then strings alphabetically, then missing.
struct ScalarOrder {
  const StudyView* view;
  bool operator()(const Scalar& a, const Scalar& b) const;
};

// Orders tuples of parameter values lexicographically by ScalarOrder.
struct ScalarsOrder {
  ScalarOrder order;
  bool operator()(const std::vector<Scalar>& a, const std::vector<Scalar>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), order);
  }
};

// Equal values under ScalarOrder.
bool same_level(const Scalar& a, const Scalar& b);

// A number as JSON: integers as integers (depths), NaN and infinities as null.
nlohmann::json number_json(double v);
// An optional number as JSON, null when absent.
nlohmann::json number_json(const std::optional<double>& v);

}  // namespace layerlab::report
