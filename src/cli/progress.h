// The progress display of `layerlab run`: a bar redrawn in place on a terminal, plain
// periodic lines otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "store/records.h"

namespace layerlab::cli {

struct ProgressState {
  store::StudyCounts counts;
  int64_t total = 0;              // trials the study will have
  int64_t finished_at_start = 0;  // finished before this run (resume): not in the rate
  std::optional<double> best;
  int64_t best_number = -1;
  std::string metric;
};

class Progress {
 public:
  explicit Progress(FILE* out);
  // Shows the state: always on a terminal (rate-limited to 10 per second), every
  // `plain_interval` otherwise; `force` shows it now (the final line).
  void update(const ProgressState& s, bool force = false);
  // Whether update() without force would show anything now: the caller reads the store for
  // a ProgressState only then (run's loop goes round every 25 ms; a state is two queries).
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
