// Which parameters matter, as effect sizes per dataset: the levels of a named parameter
// (activation, optimizer...) with eta squared, and true against false for a boolean one
// (batch_norm, residual) with a confidence interval and Cohen's d.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/sample.h"
#include "report/stats.h"

namespace layerlab::report {

inline constexpr const char* kEffectRule =
    "Effects, per dataset and pooled over the other parameters: for a parameter with named "
    "levels (activation, optimizer...), each level's mean metric with its standard error, "
    "its difference to the best level (by the study's goal) and eta\u00b2 = SSbetween / "
    "SStotal, the share of the metric's variance its level means explain. For a true/false "
    "parameter (batch_norm, residual), the difference of the means (true minus false) with "
    "Welch's 95% confidence interval and Cohen's d (the difference over the pooled standard "
    "deviation). Only parameters the analysed trials vary are shown; in an unbalanced design "
    "(random search) other parameters can confound an effect.";

struct LevelEffect {
  nlohmann::json level;
  Moments metric;
  double diff_to_best = 0;  // mean minus the best level's mean
};

struct CategoricalEffect {
  std::string dataset, parameter;
  std::vector<LevelEffect> levels;  // in value order
  nlohmann::json best_level;
  double eta2 = 0;
  size_t n = 0;
};

struct BinaryEffect {
  std::string dataset, parameter;
  Moments on, off;  // trials with the parameter true, false
  MeanDifference difference;
};

struct Effects {
  std::vector<CategoricalEffect> categorical;
  std::vector<BinaryEffect> binary;
};

Effects analyse_effects(const Sample& s);
nlohmann::json to_json(const Effects& e);

}  // namespace layerlab::report
