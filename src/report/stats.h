// Small statistics for the report (running moments: common/moments.h): Student's t quantile,
// Welch's interval for a difference of means, Cohen's d and the share of variance explained by
// groups. Pure functions, no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "common/moments.h"

namespace layerlab::report {

using layerlab::Moments;

// The p-quantile of Student's t distribution with df > 0 degrees of freedom (0 < p < 1).
double student_t_quantile(double p, double df);

// A difference of two means, a - b, with Welch's 95% confidence interval (unequal
// variances, Welch-Satterthwaite degrees of freedom) and Cohen's d (the difference over the
// pooled standard deviation). Interval and d are nullopt when either side has fewer than
// two values, d also when the pooled deviation is 0.
struct MeanDifference {
  double diff = 0;
  std::optional<double> ci_low, ci_high, df, cohens_d;
};
MeanDifference mean_difference(const Moments& a, const Moments& b);

// Eta squared of a grouping: the between-group sum of squares over the total sum of
// squares of y (0 when y is constant). group[i] in [0, groups) says which group y[i] is in.
double explained_share(const std::vector<double>& y, const std::vector<int>& group, int groups);

}  // namespace layerlab::report
