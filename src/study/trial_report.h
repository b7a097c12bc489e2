// What a worker writes about a trial: epoch rows and the final report (status, result JSON,
// the study's metric value), derived from the trainer's outcome.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nn/trainer.h"
#include "store/records.h"
#include "study/trial.h"

namespace layerlab::study {

// Which epoch column a study metric reads.
struct EpochMetric {
  store::EpochField field;
  double of(const nn::EpochRecord& r) const;
};
// For val_accuracy, val_rmse (the validation metric), val_loss, train_loss.
EpochMetric epoch_metric(const std::string& metric);

store::EpochRow epoch_row(const nn::EpochRecord& r);

struct TrialReport {
  store::TrialStatus status;
  nlohmann::json result;  // the outcome without params (stored apart) and curve (epochs)
  std::optional<double> value;
  std::string error;  // why it diverged or failed; "" otherwise
};

// The study metric of a trial: at its best epoch (lowest validation loss) if it stopped
// early, else at its last epoch. A NaN value (diverged) is no value. A metric the trial's
// task does not report (study/metrics.h) is no value either: the trial is failed, saying so.
TrialReport make_report(const TrialOutcome& outcome, const std::string& metric,
                        const std::string& worker_id);

}  // namespace layerlab::study
