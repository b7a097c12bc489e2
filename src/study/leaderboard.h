// Leaderboards: a study's trials ranked within each dataset, never across datasets (a
// value on wine's small validation set says nothing about digits). The one place that
// decides which trials rank, in what order, and how many share the best value; `run`,
// `status` and the server's /leaderboard (the study page) all read it.
//
// The rule:
//  - a trial ranks when it is completed or early_stopped and has a value (not NaN); failed,
//    diverged, cancelled, queued and running trials have none, and a pruned trial's value
//    was measured when it was cut short, so it does not rank either;
//  - better values first by the study's goal (maximize or minimize); equal values by trial
//    number;
//  - best_count: the trials of the dataset whose value equals the best one (all of them,
//    not only those within the board's limit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "study/spec.h"

namespace layerlab::study {

// True for the statuses whose trials rank (completed, early_stopped).
bool ranks(store::TrialStatus s);
// The same statuses, for a store::TrialFilter.
std::vector<store::TrialStatus> ranked_statuses();

struct LeaderboardEntry {
  int64_t trial_id = 0;
  int64_t number = 0;
  double value = 0;
};

// One dataset's board.
struct Leaderboard {
  std::string dataset;
  std::vector<LeaderboardEntry> top;  // best first, at most the builder's limit
  int64_t best_count = 0;             // trials sharing top[0].value; 0 when none ranks
  std::optional<double> best_value() const;
};

// Collects trials in any order and keeps each dataset's board (O(limit) memory per
// dataset). A source that offers a dataset's trials best first may stop once settled().
class LeaderboardBuilder {
 public:
  // `datasets`: the study's, in its order; each gets a board, empty when nothing ranks.
  // limit: the size of each board (at least 1).
  LeaderboardBuilder(const std::vector<std::string>& datasets, bool maximize, size_t limit);

  // Offers a trial; ignored unless it ranks. A dataset not given to the constructor gets a
  // board after those. True when the trial is in its dataset's board now.
  bool add(const std::string& dataset, store::TrialStatus status, int64_t trial_id, int64_t number,
           double value);

  // For a source offering one dataset's trials best first: true once nothing it offers
  // next can change the board (the board is full and the last trial that ranked is worse
  // than the best, so no further trial ties it).
  bool settled(const std::string& dataset) const;
  // For a source that counts the trials sharing the best value instead of offering them:
  // the board's best_count becomes `count` (never fewer than were offered).
  void count_best(const std::string& dataset, int64_t count);

  // The boards: the constructor's datasets in order, then the others by first appearance.
  const std::vector<Leaderboard>& boards() const { return boards_; }

 private:
  bool better(double a, double b) const { return maximize_ ? a > b : a < b; }
  Leaderboard& board(const std::string& dataset);

  bool maximize_;
  size_t limit_;
  std::vector<Leaderboard> boards_;
  std::map<std::string, size_t> index_;
  std::map<std::string, bool> past_best_;  // the last ranked trial offered was worse than best
};

// A board with the store records of its trials (the same order as board.top).
struct StoredLeaderboard {
  Leaderboard board;
  std::vector<store::TrialRecord> trials;
};

// The study's boards read from the store: for each of the spec's datasets its best `limit`
// + 1 ranked trials, and when they all share the best value, a count of those that do.
std::vector<StoredLeaderboard> leaderboards(store::Store& store, int64_t study_id,
                                            const StudySpec& spec, size_t limit);

}  // namespace layerlab::study
