// A trained trial as a model file's content (model/model.h): its architecture, weights and
// the input standardisation it was trained with, for `best --save` and kept models.
#pragma once

#include "model/model.h"
#include "study/trial.h"

namespace layerlab::study {

// The model of an outcome trained with keep_parameters on `data` (prepare_data of its spec).
// info holds the dataset, the trial's parameters, its epoch count and where it was trained
// (version, revision, provenance); callers add what they know of the record. Throws
// FailedPrecondition when the outcome kept no parameters, Internal when the standardisation
// fitted again does not give the features the training used.
model::Model trained_model(const TrialOutcome& outcome, const PreparedData& data);

}  // namespace layerlab::study
