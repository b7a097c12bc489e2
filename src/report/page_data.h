// The study page's plots as the dashboard draws them (web/js/pages/study.js), with their
// inputs in the shapes the API returns (docs/api.md), made by the server's own functions:
// the study (GET /studies/{id}), the metric and time summaries (/summary), the optimisation
// history and parallel coordinates (/columns), the Pareto view (/pareto), and the learning
// curves of each dataset's best trial (/trials/{id}).
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/study_cache.h"
#include "store/store.h"

namespace layerlab::report {

inline constexpr size_t kHistoryLimit = 5000;  // as the study page asks
inline constexpr size_t kParcoordsLimit = 1000;
inline constexpr size_t kParetoLimit = 5000;  // points per dataset

nlohmann::json study_page_data(store::Store& store, const store::StudyRecord& study,
                               const analysis::StudyView& view);

}  // namespace layerlab::report
