// Which parameters matter, per dataset: functional ANOVA over a random forest (fanova.h),
// with bootstrap intervals, the forest's out-of-bag R² as the test of whether the fitted
// function says anything at all, and "too few trials to tell" below a stated minimum.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/fanova.h"
#include "report/sample.h"

namespace layerlab::report {

// Below this many analysed trials of a dataset no share is given.
inline constexpr size_t kMinImportanceTrials = 20;
// Below this out-of-bag R² the forest predicts the metric no better than its mean: the
// shares would describe noise, and no parameter is named.
inline constexpr double kMinExplainedR2 = 0.1;
// A parameter is named important when its interval's lower end reaches this share.
inline constexpr double kImportantShare = 0.05;

inline constexpr const char* kImportanceRule =
    "Parameter importance, per dataset: functional ANOVA (fANOVA, Hutter et al. 2014, "
    "Optuna's default evaluator) over a random forest of 64 regression trees fitted to the "
    "analysed trials (each tree on a bootstrap draw of at most 512 of them). Each "
    "parameter is placed in [0, 1) by its own search domain (log scale for log_uniform, "
    "equal cells for a list of values), and each tree's prediction is split exactly into the "
    "variance each parameter explains alone over the whole search space (its main effect) "
    "and the rest (interactions); the shares are averaged over the trees and sum to 100%. "
    "Intervals: 5th to 95th percentile over 16 bootstrap resamples of the trials (forests of "
    "16 trees), widened to include the estimate. The forest's out-of-bag R\u00b2 says how well "
    "it predicts trials it did not see: below 0.1 no parameter is named (the metric looks "
    "like noise to it), and with fewer than 20 analysed trials no share is given. A "
    "parameter is named important when its interval's lower end is at least 5%.";

enum class ImportanceVerdict { kShares, kTooFewTrials, kNoise, kNothingVaries };
const char* to_string(ImportanceVerdict v);

struct ParamImportance {
  std::string parameter;
  Share share;
  bool important = false;
};

struct DatasetImportance {
  std::string dataset;
  size_t n = 0;  // analysed trials
  ImportanceVerdict verdict = ImportanceVerdict::kShares;
  double oob_r2 = 0;                    // with kShares and kNoise
  std::vector<ParamImportance> ranked;  // with kShares: largest share first
  Share interactions;                   // with kShares
};

std::vector<DatasetImportance> analyse_importance(const Sample& s,
                                                  const FanovaOptions& options = {});
nlohmann::json to_json(const std::vector<DatasetImportance>& importance);

}  // namespace layerlab::report
