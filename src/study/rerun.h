// Training a stored trial again on the CPU and comparing it with its record, bit for bit:
// shared by `layerlab rerun` (which only compares) and `layerlab best --save` (which keeps
// the weights).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "study/provenance.h"
#include "study/spec.h"
#include "study/trial.h"

namespace layerlab::study {

struct StoredTrial {
  store::StudyRecord study;
  StudySpec spec;
  store::TrialRecord trial;
  std::vector<store::EpochRow> epochs;  // of the attempt that finished
  TrialSpec trial_spec;
  nlohmann::json provenance;       // the record's; null for a trial recorded without one
  int threads = 1;                 // the CPU threads it was trained with
  std::vector<std::string> notes;  // what the reader should know ("no provenance: ...")
};

// The trial numbered `number` of the study: NotFound when there is none; FailedPrecondition
// for a trial that is not finished, failed, or was cancelled. A trial that ran on a GPU or
// in a precision the CPU backend does not have is FailedPrecondition too, unless
// `for_export` (best --save): then it is retrained on the CPU in fp32, with a note, and
// its comparison with the record will show the difference.
StoredTrial load_stored_trial(store::Store& store, const store::StudyRecord& study, int64_t number,
                              bool for_export = false);
// The same checks for a record already read.
StoredTrial load_stored_trial(store::Store& store, const store::StudyRecord& study,
                              const store::TrialRecord& trial, bool for_export = false);

struct Retrained {
  TrialOutcome outcome;  // with parameters and running statistics when kept
  PreparedData data;
  std::optional<Difference> difference;    // none: bit for bit the record
  std::vector<std::string> likely_causes;  // provenance differences, a pack, no provenance
};

// Trains the trial again on the CPU with its recorded thread count (and the record's pruning
// decision: a pruned trial stops where it was pruned) and compares it with the record.
Retrained retrain(const StoredTrial& t, bool keep_parameters);

// "trial 3 of study quick reproduced bit for bit (5 epochs, val_accuracy 0.9667, ...)" or
// the first difference and its likely causes, one line each.
std::vector<std::string> describe_rerun(const StoredTrial& t, const Retrained& r);

}  // namespace layerlab::study
