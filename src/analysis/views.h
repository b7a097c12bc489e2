// The JSON shapes of docs/api.md, built from store records. No I/O here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/records.h"

namespace layerlab::analysis {

// "2026-11-30T03:10:00.123Z"
std::string iso_time(store::Time t);
nlohmann::json iso_time_or_null(const std::optional<store::Time>& t);
// NaN (not measured) is null; JSON has no NaN.
nlohmann::json number_or_null(double v);

// TRIAL_SUMMARY.
nlohmann::json trial_summary(const store::TrialRecord& t);

nlohmann::json counts_json(const store::StudyCounts& c);

// The best trial as STUDY_SUMMARY shows it.
struct BestTrial {
  int64_t trial_id = 0;
  int64_t number = 0;
  double value = 0;
};

// STUDY_SUMMARY. `total`: the trials the study plans; `metric`/`maximize` from its spec.
nlohmann::json study_summary(const store::StudyRecord& s, const store::StudyCounts& counts,
                             int64_t total, const std::optional<BestTrial>& best);

// A worker as /api/v1/workers shows it; alive: heartbeat younger than kWorkerSilentAfter
// and not stopped.
inline constexpr std::chrono::seconds kWorkerSilentAfter{10};
bool worker_alive(const store::WorkerRecord& w, store::Time now);
nlohmann::json worker_json(const store::WorkerRecord& w, store::Time now);

nlohmann::json epoch_json(const store::EpochRecord& e);

}  // namespace layerlab::analysis
