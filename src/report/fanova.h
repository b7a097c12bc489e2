// Functional ANOVA over a random forest (Hutter, Hoos and Leyton-Brown, "An Efficient
// Approach for Assessing Hyperparameter Importance", ICML 2014; what Optuna's default
// importance evaluator computes): regression trees fitted to the trials predict the metric
// from the parameters, and each tree's prediction, a piecewise constant function over the
// search space, is split exactly into the variance each parameter explains alone (its main
// effect) and the rest (interactions). Every coordinate is in [0, 1) under the search
// space's own measure (study::Domain::to_unit), so "alone" means averaged over the whole
// space, not over the trials that happened to be sampled.
//
// The shares are averaged over the forest's trees; their interval comes from refitting
// smaller forests on bootstrap resamples of the trials; the forest's out-of-bag R² says
// whether the fitted function predicts anything at all (on pure noise it does not, and the
// shares then describe noise). Deterministic: the same input and seed give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace layerlab::report {

struct FanovaOptions {
  int trees = 64;                  // the forest whose shares are reported
  int resamples = 16;              // bootstrap resamples of the trials for the intervals
  int resample_trees = 16;         // trees of each resample's forest
  size_t max_rows_per_tree = 512;  // each tree's bootstrap draws at most this many rows
  int max_depth = 32;
  double interval = 0.90;  // central coverage of the bootstrap interval
  uint64_t seed = 0x5eed;
};

struct Share {
  double share = 0;  // of the fitted function's variance, averaged over trees
  double low = 0;    // the bootstrap interval
  double high = 0;
};

struct FanovaResult {
  std::vector<Share> main_effects;  // per column of x
  Share interactions;               // 1 minus the main effects' sum (shares sum to 1)
  double oob_r2 = 0;                // out-of-bag R² of the forest's predictions
  size_t oob_rows = 0;              // rows with an out-of-bag prediction
};

// x[row][column] in [0, 1); y[row] finite. Needs at least 2 rows; a constant y gives every
// share 0 and interactions 0 (nothing to explain).
FanovaResult fanova(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                    const FanovaOptions& options = {});

}  // namespace layerlab::report
