// The JSON shapes of docs/api.md, built from store records. No I/O here.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"
#include "study/leaderboard.h"

namespace layerlab::analysis {

// "2026-11-30T03:10:00.123Z"
std::string iso_time(store::Time t);
nlohmann::json iso_time_or_null(const std::optional<store::Time>& t);
// NaN (not measured) is null; JSON has no NaN.
nlohmann::json number_or_null(double v);

// TRIAL_SUMMARY.
nlohmann::json trial_summary(const store::TrialRecord& t);

nlohmann::json counts_json(const store::StudyCounts& c);

// Each dataset's best as STUDY_SUMMARY's `best` (and the CLI's JSON) shows it: one entry
// per board, {dataset, trial_id, number, value, count}; `count` is how many trials share the
// value (trial_id and number name the lowest-numbered of them); all null and 0 while none
// ranks.
nlohmann::json best_per_dataset(const std::vector<study::Leaderboard>& boards);

// STUDY_SUMMARY. `total`: the trials the study plans; `metric`/`maximize` from its spec;
// `boards`: each dataset's board (only its best is read), never one across datasets.
nlohmann::json study_summary(const store::StudyRecord& s, const store::StudyCounts& counts,
                             int64_t total, const std::vector<study::Leaderboard>& boards);

// The study detail's `best`: STUDY_SUMMARY's, each dataset's entry with its best trial as a
// TRIAL_SUMMARY (`trial`, null while none ranks), read by `trial`.
nlohmann::json best_with_trials(const nlohmann::json& best,
                                const std::function<store::TrialRecord(int64_t)>& trial);

// A worker as /api/v1/workers shows it; alive: heartbeat younger than kWorkerSilentAfter
// and not stopped.
inline constexpr std::chrono::seconds kWorkerSilentAfter{10};
bool worker_alive(const store::WorkerRecord& w, store::Time now);
nlohmann::json worker_json(const store::WorkerRecord& w, store::Time now);

nlohmann::json epoch_json(const store::EpochRecord& e);

}  // namespace layerlab::analysis
