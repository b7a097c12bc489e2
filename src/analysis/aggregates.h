// Plot aggregates of docs/api.md computed over a StudyView: /summary (mean, std, n per x
// and group, per dataset, with a least-squares line), /columns (column arrays for the
// optimisation history and parallel coordinates) and the per-dataset boards of
// /leaderboard. Pure functions: no I/O, no locks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/study_cache.h"
#include "study/leaderboard.h"

namespace layerlab::analysis {

struct SummaryQuery {
  std::string x;            // a parameter name
  std::string y = "value";  // value | seconds | epochs_run | a metric name
  std::string group;        // a parameter name, or "" for one group
};

// Over the analysed trials only (analysed()); `trials` is their count, `left_out` counts
// the pruned ones and those without a value. kInvalidArgument naming the unknown x, y or
// group and what is known.
nlohmann::json summarize(const StudyView& v, const SummaryQuery& q);

// Least squares y = slope x + intercept; r2 is 1 - SSres/SStot (1 when y is constant).
struct LinearFit {
  double slope = 0, intercept = 0, r2 = 0;
  size_t n = 0;
};
// nullopt with fewer than 2 distinct x.
std::optional<LinearFit> fit_line(const std::vector<double>& x, const std::vector<double>& y);

// `fields`: number, value, seconds, dataset, finished (status), params.NAME, metrics.NAME.
// The analysed trials (analysed(): completed or early_stopped with a value), by number;
// more than `limit` are thinned evenly by position; `left_out` counts the others.
nlohmann::json columns(const StudyView& v, const std::vector<std::string>& fields, size_t limit);

// Each dataset's board (study/leaderboard.h: the rule `run` and `status` use too), the
// study's datasets in its order; at most `limit` trials each.
std::vector<study::Leaderboard> leaderboards(const StudyView& v, size_t limit);

}  // namespace layerlab::analysis
