// A trained trial as a model file's content (model/model.h): its architecture, weights and
// the input standardisation it was trained with, for `best --save` and kept models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model.h"
#include "store/records.h"
#include "study/spec.h"
#include "study/trial.h"
#include "study/trial_report.h"

namespace layerlab::study {

// The model of an outcome trained with keep_parameters on `data` (prepare_data of its spec).
// info holds the dataset, the trial's parameters, its epoch count and where it was trained
// (version, revision, provenance); callers add what they know of the record. Throws
// FailedPrecondition when the outcome kept no parameters, Internal when the standardisation
// fitted again does not give the features the training used.
model::Model trained_model(const TrialOutcome& outcome, const PreparedData& data);

// What a worker hands the store for a trial of a study with keep_weights (spec.keep_top >
// 0): the trained model as a safetensors file (model::encode_safetensors of trained_model,
// with the study, trial number, metric and value in its metadata), to keep if it ranks.
// Nothing for a trial that does not rank (leaderboard.h's rule) or a study that keeps
// nothing. A model over max_bytes, or one that cannot be built, is not kept: `skipped`
// says why (the trial's result records it; the trial itself is unaffected).
struct ModelToKeep {
  std::optional<store::KeepWeights> keep;
  std::string skipped;
};
ModelToKeep model_to_keep(const TrialOutcome& outcome, const PreparedData& data,
                          const StudySpec& spec, const TrialReport& report, int64_t trial_number,
                          int64_t max_bytes = store::kMaxWeightBytes);

}  // namespace layerlab::study
