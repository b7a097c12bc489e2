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

// The best `limit` trials that rank (study/leaderboard.h), best first for the study's
// goal, across datasets: the progress line's "best so far" and the JSON fields `best` and
// `leaderboard` that scripts read. Tables rank within each dataset (below).
std::vector<store::TrialRecord> leaders(store::Store& store, int64_t study_id,
                                        const study::StudySpec& spec, int64_t limit);

// "wine: 12 trials share the best value 1.0000", "digits: best 0.9750 (trial #17)",
// "iris: no trial with a value yet".
std::string best_line(const study::Leaderboard& board);

// One table per dataset under its best_line, the study's datasets in order.
void print_leaderboards(std::ostream& os, const std::vector<study::StoredLeaderboard>& boards,
                        const study::StudySpec& spec);

// [{"dataset", "best_value" (null when none), "best_count", "trials": [trial_json...]}]
nlohmann::json leaderboards_json(const std::vector<study::StoredLeaderboard>& boards);

}  // namespace layerlab::cli
