// RQ1/RQ2, the metric against depth: per dataset and activation (split further by
// batch_norm and residual when the study varies them), the mean, standard error and count
// of the metric at each depth, and where it stops improving (the plateau rule below).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/sample.h"
#include "report/stats.h"

namespace layerlab::report {

inline constexpr const char* kDepthParam = "hidden_layers";

inline constexpr const char* kPlateauRule =
    "Plateau depth: the best depth has the best mean metric (highest when maximizing, "
    "lowest when minimizing; ties go to the shallower depth); the plateau depth is the "
    "smallest depth whose mean is within one standard error of the best depth's mean (its "
    "standard error is taken as 0 when it has a single trial). When the best depth is the "
    "deepest one tried and no shallower depth is within that standard error, no plateau is "
    "observed: the metric still improves at the deepest depth. When the deepest depth's mean "
    "is not within that standard error either, deeper networks do worse.";

struct DepthPoint {
  double depth = 0;
  Moments metric;
};

struct Plateau {
  double best_depth = 0, best_mean = 0;
  double threshold = 0;      // best mean minus (maximize) or plus its standard error
  double plateau_depth = 0;  // smallest depth whose mean reaches the threshold
  bool best_is_deepest = false;
  // The deepest depth's mean misses the threshold: going deeper than the best hurts.
  bool deeper_worse = false;
  bool one_depth = false;  // a single depth: nothing to compare
  // False when there is one depth only, or the best is the deepest depth and no shallower
  // depth reaches the threshold.
  bool observed = false;
};

// The plateau of points sorted by depth (kPlateauRule); nullopt without points.
std::optional<Plateau> find_plateau(const std::vector<DepthPoint>& points, bool maximize);
// One sentence saying what the plateau means.
std::string plateau_verdict(const Plateau& p);

struct DepthCurve {
  std::string dataset;
  nlohmann::json group = nlohmann::json::object();  // split parameter -> value
  std::string label;                                // "relu", "tanh · batch_norm"...
  std::vector<DepthPoint> points;                   // by depth
  Plateau plateau;
};

struct DepthAnalysis {
  std::string note;                   // why there are no curves, if there are none
  std::vector<std::string> split_by;  // activation, then batch_norm / residual if varied
  std::vector<DepthCurve> curves;     // by dataset (study order), then group
};

DepthAnalysis analyse_depth(const Sample& s);
nlohmann::json to_json(const DepthAnalysis& a);
// {depth, n, mean, se, sd, min, max} of one point (time points use the same shape).
nlohmann::json to_json(const DepthPoint& p);

}  // namespace layerlab::report
