// Tables of trials for the terminal (run's leaderboard, `trials`, `status`) and the same
// rows as JSON for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "store/store.h"
#include "study/leaderboard.h"
#include "study/spec.h"

namespace layerlab::cli {

// Columns: #, dataset, status, the study metric, the parameters the study varies, seed,
// epochs run, seconds.
void print_trial_table(std::ostream& os, const std::vector<store::TrialRecord>& trials,
                       const study::StudySpec& spec);

nlohmann::json trial_json(const store::TrialRecord& t);

// Each dataset's best `limit` trials (study::leaderboards), the study's datasets in order:
// grouped by dataset, never ranked across datasets (run's JSON field `leaderboard`, kept for
// scripts beside `leaderboards`).
std::vector<store::TrialRecord> leaders(store::Store& store, int64_t study_id,
                                        const study::StudySpec& spec, int64_t limit);

// The boards without their records.
std::vector<study::Leaderboard> boards_of(const std::vector<study::StoredLeaderboard>& stored);

// "wine: 12 trials share the best value 1.0000", "digits: best 0.9750 (trial #17)",
// "iris: no trial with a value yet".
std::string best_line(const study::Leaderboard& board);

// One table per dataset under its best_line, the study's datasets in order.
void print_leaderboards(std::ostream& os, const std::vector<study::StoredLeaderboard>& boards,
                        const study::StudySpec& spec);

// [{"dataset", "best_value" (null when none), "best_count", "trials": [trial_json...]}]
nlohmann::json leaderboards_json(const std::vector<study::StoredLeaderboard>& boards);

}  // namespace layerlab::cli
