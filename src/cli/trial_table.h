// Tables of trials for the terminal (run's leaderboard, `trials`, `status`) and the same
// rows as JSON for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "store/store.h"
#include "study/spec.h"

namespace layerlab::cli {

// Columns: #, dataset, status, the study metric, the parameters the study varies, seed,
// epochs run, seconds.
void print_trial_table(std::ostream& os, const std::vector<store::TrialRecord>& trials,
                       const study::StudySpec& spec);

nlohmann::json trial_json(const store::TrialRecord& t);

// The best `limit` finished trials with a value, best first for the study's goal.
std::vector<store::TrialRecord> leaders(store::Store& store, int64_t study_id,
                                        const study::StudySpec& spec, int64_t limit);

}  // namespace layerlab::cli
