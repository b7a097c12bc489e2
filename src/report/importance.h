// Which parameters matter, fast: a first-order (main-effect) variance decomposition of the
// metric, per dataset. One pass over trials x parameters (plus a sort for a numeric
// parameter binned into quantiles), so it stays fast at 50,000 trials.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/sample.h"

namespace layerlab::report {

inline constexpr int kImportanceBins = 10;

inline constexpr const char* kImportanceRule =
    "Parameter importance, per dataset: a first-order (main-effect) variance decomposition. "
    "For each parameter the analysed trials vary (the seed excepted), the trials are grouped "
    "by its value (a numeric parameter with more than 10 distinct values into 10 quantile "
    "bins of about equal counts; equal values share a bin) and its importance is the share of "
    "the metric's variance explained by the group means, SSbetween / SStotal (eta\u00b2, an "
    "estimate of the first-order Sobol index). The rest, 1 minus the sum of the shares when "
    "positive, is interactions and noise. With few trials per group a share is biased upward.";

struct ParamImportance {
  std::string parameter;
  double share = 0;
  int groups = 0;       // levels, or bins
  bool binned = false;  // quantile bins of a numeric parameter
};

struct DatasetImportance {
  std::string dataset;
  size_t n = 0;
  double variance = 0;                  // of the metric (population)
  std::vector<ParamImportance> ranked;  // largest share first
  double rest = 0;
};

// Group ids 0..G-1 for x (finite values): equal-count quantile bins in value order, at most
// `bins` of them; equal values always share a bin.
std::vector<int> quantile_bins(const std::vector<double>& x, int bins, int* groups);

std::vector<DatasetImportance> analyse_importance(const Sample& s);
nlohmann::json to_json(const std::vector<DatasetImportance>& importance);

}  // namespace layerlab::report
