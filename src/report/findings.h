// Everything a report finds in a study, from its view: the analysed trials and each
// analysis (depth, time, effects, importance, best configurations, Pareto fronts of the
// metric against parameter count and training time), and their JSON, which
// is `layerlab report --format json` and what the HTML report shows.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/pareto.h"
#include "report/best.h"
#include "report/depth.h"
#include "report/effects.h"
#include "report/importance.h"
#include "report/sample.h"
#include "report/timing.h"
#include "store/records.h"

namespace layerlab::report {

struct Findings {
  Sample sample;  // points into the view: the view must outlive the findings
  DepthAnalysis depth;
  std::vector<TimeFit> time;
  Effects effects;
  std::vector<DatasetImportance> importance;
  std::vector<Configuration> best;
  std::vector<analysis::DatasetPareto> pareto;  // positions in the view's trials
};

Findings analyse(const StudyView& view);

// The findings with the study they are about (record and counts per status, from the
// store) and the rules used.
nlohmann::json findings_json(const Findings& f, const store::StudyRecord& study,
                             const store::StudyCounts& counts);

}  // namespace layerlab::report
