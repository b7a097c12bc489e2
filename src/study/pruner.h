// Pruners stop trials whose intermediate results lag behind the rest of the study (the
// early_terminate block of a study file). They are pure decisions over values the store
// holds, so any worker process can take them: "this trial's metric after `epoch` epochs,
// against every other trial's metric after the same number of epochs".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "study/epoch_ranking.h"

namespace layerlab::study {

struct PrunerConfig {
  std::string type;       // "median" | "asha"; "" = none
  int min_epochs = 1;     // asha: the first rung
  int eta = 3;            // asha: reduction factor; rungs at min_epochs * eta^k
  int warmup_epochs = 0;  // median: never prune before this many epochs
  int min_trials = 5;     // median: trials needed at an epoch before it prunes there
};

class Pruner {
 public:
  virtual ~Pruner() = default;

  // Whether an epoch is a decision point; only then do workers fetch the others' values.
  virtual bool decides_at(int epoch) const = 0;

  // Whether to stop a trial whose metric after `epoch` epochs is `value`, given the values
  // of other trials of the study after the same number of epochs (`others` excludes this
  // trial). `maximize` is the study's goal. O(log n): pruners ask `others` for ranks, they
  // never walk it.
  virtual bool should_prune(int epoch, double value, const EpochRanking& others,
                            bool maximize) const = 0;
};

// The pruner for a config; nullptr when type is "". Unknown types: InvalidArgument.
std::unique_ptr<Pruner> make_pruner(const PrunerConfig& config);

// The registered pruner types, and the settings a study file may give each (besides
// "type"); the spec parser reads these, so a new pruner is one registration.
std::vector<std::string> pruner_types();
const std::vector<std::string>& pruner_settings(const std::string& type);

}  // namespace layerlab::study
