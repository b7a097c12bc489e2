// Trade-offs: a layer design is accuracy against cost. The Pareto fronts of a study, per
// dataset: the study's metric (by its goal) against a trial's parameter count, and against
// its training time, as two separate 2-D fronts. The dashboard (GET /pareto), `layerlab
// report` and `layerlab status --json` all read them from here.
//
// The rule (kParetoRule, in words):
//  - a trial takes part when it ranks (study/leaderboard.h: completed or early_stopped with a
//    value that is not NaN; pruned trials were cut short and do not) and has the cost: a
//    finite, non-negative parameter count or training time. Ranked trials without it (a
//    parameter count stored by a layerlab before it recorded one) are counted, not placed;
//  - a trial dominates another when its value is at least as good and its cost at most as
//    high, and one of the two strictly; the front is every trial no other dominates;
//  - trials with the same value and the same cost dominate each other in neither way: all
//    of them are on the front (seeds of one configuration that score alike are all shown,
//    as the leaderboards' best_count counts every tie);
//  - fronts are per dataset (a value on wine says nothing about digits) and per trial, not
//    averaged over seeds; the front is listed by cost, cheapest first, then by number.
//
// Pure functions: no I/O, no locks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "analysis/study_cache.h"

namespace layerlab::analysis {

inline constexpr const char* kParetoRule =
    "Accuracy against cost: per dataset, two Pareto fronts, the metric (by the study's goal) "
    "against the parameter count and against the training time. Trials rank as in the "
    "leaderboards (completed or early-stopped with a value; pruned ones do not) and need the "
    "cost (a finite parameter count or time; trials without one are counted, not placed). A "
    "trial is on the front when no other trial of its dataset has a value at least as good at "
    "a cost at most as high, one of them strictly better; trials with equal value and equal "
    "cost are all on it. Per trial, not averaged over seeds.";

// What a front trades the metric against.
enum class ParetoCost { kParameterCount, kSeconds };
inline constexpr ParetoCost kParetoCosts[] = {ParetoCost::kParameterCount, ParetoCost::kSeconds};
// "parameter_count" or "seconds": the trial field and the key in the JSON below.
const char* to_string(ParetoCost c);

struct ParetoPoint {
  int64_t number = 0;  // the trial number, the last tie-break
  double value = 0;    // the study's metric; NaN: no value
  double cost = 0;     // NaN, infinite or negative: no cost
};

// The positions in `points` of the non-dominated ones among those with a value and a cost
// (the rule above), cheapest first, then by value (best first), then by number. O(n log n).
std::vector<size_t> non_dominated(std::span<const ParetoPoint> points, bool maximize);

// One front of one dataset: positions in StudyView::trials.
struct ParetoFront {
  ParetoCost cost = ParetoCost::kParameterCount;
  std::vector<size_t> trials;  // the front, in non_dominated's order
  int64_t without_cost = 0;    // ranked trials of the dataset without this cost
};

struct DatasetPareto {
  std::string dataset;
  std::vector<size_t> ranked;       // positions in StudyView::trials, by number
  std::vector<ParetoFront> fronts;  // one per kParetoCosts, in that order
};

// Every dataset of the view's study in its order (then any other dataset with trials), each
// with its two fronts; a dataset without ranked trials has empty ones.
std::vector<DatasetPareto> pareto_fronts(const StudyView& v);

// A trial on a front as JSON: {"id", "number", "value", "parameter_count", "seconds",
// "params": {NAME: value}} (NaN as null; params: the study's parameters and the seed).
nlohmann::json pareto_trial_json(const StudyView& v, const CachedTrial& t);

// The fronts as `status --json` and the report's findings carry them:
// [{"dataset", "ranked", "fronts": {"parameter_count": {"without_cost", "trials": [...]},
//                                   "seconds": {...}}}].
nlohmann::json pareto_json(const StudyView& v, const std::vector<DatasetPareto>& fronts);

// GET /studies/{id}/pareto (docs/api.md): the fronts, plus each dataset's ranked trials as
// column arrays for the plot ("points": {"total", "returned", "id", "number", "value",
// "parameter_count", "seconds", "params": {NAME: [...]}}); more than `limit` points are
// thinned evenly by number, the fronts' trials always kept.
nlohmann::json pareto_view(const StudyView& v, size_t limit);

}  // namespace layerlab::analysis
