// The progress display of `layerlab run`: a bar redrawn in place on a terminal, plain
// periodic lines otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "store/records.h"
#include "study/leaderboard.h"

namespace layerlab::cli {

struct ProgressState {
  store::StudyCounts counts;
  int64_t total = 0;                       // trials the study will have
  int64_t finished_at_start = 0;           // finished before this run (resume): not in the rate
  std::vector<study::Leaderboard> boards;  // each dataset's, the study's datasets in order
  std::string metric;
};

// Each dataset's best in a few words, never one across datasets: "val_accuracy 1.0000 (#105)"
// for a study of one dataset, "val_accuracy: iris 0.9733 (#12), wine 1.0000 (18 tied)" for
// several (those without a value left out); "" while no dataset has one. The progress line
// and the studies list show it (not made printable here: they do).
std::string best_summary(const std::string& metric, const std::vector<study::Leaderboard>& boards);

class Progress {
 public:
  explicit Progress(FILE* out);
  // Shows the state: always on a terminal (rate-limited to 10 per second), every
  // `plain_interval` otherwise; `force` shows it now (the final line).
  void update(const ProgressState& s, bool force = false);
  // Whether update() without force would show anything now: the caller reads the store for
  // a ProgressState only then (run's loop goes round every 25 ms; a state is a few queries per
  // dataset).
  bool due() const;

  // One line for the state, without the bar: "120/300 done ... ETA 1m05s best ...".
  static std::string describe(const ProgressState& s, double elapsed_seconds);

 private:
  FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
  std::chrono::seconds plain_interval_{10};
  bool drawn_ = false;
};

}  // namespace layerlab::cli
