// RQ1/RQ2, training time against depth: per dataset, a least-squares line through every
// analysed trial's training seconds, and whether the growth looks linear.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/aggregates.h"
#include "report/depth.h"

namespace layerlab::report {

inline constexpr double kLinearR2 = 0.95;

inline constexpr const char* kTimeRule =
    "Training time against depth: ordinary least squares of each analysed trial's training "
    "seconds on its depth, per dataset (slope in seconds per hidden layer, intercept, "
    "R\u00b2 = 1 - SSres/SStot over the trials, n trials). Linearity is judged on the mean "
    "time at each depth, which averages out the other parameters and the noise: with at "
    "least 3 depths, R\u00b2 >= 0.95 of a line through those means reads as about linear, "
    "less as not linear; with 2 depths a line always fits and linearity cannot be judged.";

struct TimeFit {
  std::string dataset;
  std::vector<DepthPoint> points;          // mean time per depth
  std::optional<analysis::LinearFit> fit;  // over trials; nullopt with fewer than 2 depths
  std::optional<double> r2_means;          // of a line through the per-depth means
  std::string verdict;                     // "about linear", "not linear", ...
};

// One fit per dataset with analysed trials that have a depth and a finite time.
std::vector<TimeFit> analyse_time(const Sample& s);
nlohmann::json to_json(const std::vector<TimeFit>& fits);

}  // namespace layerlab::report
