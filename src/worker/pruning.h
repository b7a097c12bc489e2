// A slot's pruning decisions, with the other trials' values kept between decisions.
//
// A decision compares a trial's metric after some epoch with every other trial's after the
// same epoch. Reading those from the store costs O(trials of the study), and reading them at
// every decision (every trial, every epoch after the warm-up) made a pruned study quadratic:
// 1,000 trials 2.6 s, 4,000 trials 42 s. A PruningView keeps the values of each (study,
// epoch) it decides at and reads them again only when its last read is older than
// kReadAgainAfter times what one read of each costs, so reading takes about
// 1/kReadAgainAfter of a slot's time at most, however large the study; in between it adds
// the values of this slot's own trials as they come. A decision therefore sees every value
// of this slot's trials and the other workers' as of its last read: with one worker, the
// same decisions as reading the store every time; with several, another worker's value may
// come a few reads' durations late (the store had it at most a flush interval late anyway,
// without a pruner).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/records.h"
#include "study/epoch_ranking.h"
#include "study/pruner.h"

namespace layerlab::worker {

class PruningView {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads the study's values after the epoch (Store::epoch_values).
  using Read = std::function<std::vector<store::TrialValue>()>;

  // `now` times the reads (a test passes its own clock).
  explicit PruningView(std::function<Clock::time_point()> now = &Clock::now)
      : now_(std::move(now)) {}

  // Whether to stop `trial_id`, whose `field` after `epoch` epochs is `value`, against the
  // other trials' values; `value` then counts among the others for later decisions.
  bool should_prune(const study::Pruner& pruner, int64_t study_id, store::EpochField field,
                    int epoch, int64_t trial_id, double value, bool maximize, const Read& read);

 private:
  struct Values {
    std::unordered_map<int64_t, double> by_trial;  // the store's, with own ones over them
    std::unordered_map<int64_t, double> own;       // this slot's, not in the last read
    study::EpochRanking ranking;                   // by_trial's values
    Clock::time_point read_at{};
    Clock::duration read_cost{};
    Clock::time_point used_at{};
    bool read = false;
  };
  using Key = std::tuple<int64_t, int, store::EpochField>;  // study, epoch, field

  Values& values_for(const Key& key, Clock::time_point now);
  void read_again(Values& v, const Read& read);

  std::function<Clock::time_point()> now_;
  std::map<Key, Values> values_;
  Clock::duration read_costs_{};  // the sum of values_' read_cost: one round of reads
};

}  // namespace layerlab::worker
