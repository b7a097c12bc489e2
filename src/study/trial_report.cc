#include "study/trial_report.h"

#include <cmath>

#include "common/strings.h"
#include "study/metrics.h"

namespace layerlab::study {

double EpochMetric::of(const nn::EpochRecord& r) const {
  switch (field) {
    case store::EpochField::kTrainLoss:
      return r.train_loss;
    case store::EpochField::kValLoss:
      return r.val_loss;
    case store::EpochField::kValMetric:
      return r.val_metric;
  }
  return std::nan("");
}

EpochMetric epoch_metric(const std::string& metric) {
  if (metric == "val_loss") return {store::EpochField::kValLoss};
  if (metric == "train_loss") return {store::EpochField::kTrainLoss};
  return {store::EpochField::kValMetric};
}

store::EpochRow epoch_row(const nn::EpochRecord& r) {
  store::EpochRow row;
  row.epoch = r.epoch;
  row.train_loss = r.train_loss;
  row.val_loss = r.val_loss;
  row.val_metric = r.val_metric;
  row.seconds = r.seconds;
  row.extra = {{"learning_rate", r.learning_rate}, {"train_metric", r.train_metric}};
  return row;
}

namespace {

store::TrialStatus store_status(nn::TrialStatus s) {
  switch (s) {
    case nn::TrialStatus::kCompleted:
      return store::TrialStatus::kCompleted;
    case nn::TrialStatus::kEarlyStopped:
      return store::TrialStatus::kEarlyStopped;
    case nn::TrialStatus::kDiverged:
      return store::TrialStatus::kDiverged;
    case nn::TrialStatus::kPruned:
      return store::TrialStatus::kPruned;
  }
  return store::TrialStatus::kFailed;
}

}  // namespace

TrialReport make_report(const TrialOutcome& outcome, const std::string& metric,
                        const std::string& worker_id) {
  TrialReport r;
  const nn::TrainResult& res = outcome.result;
  r.status = store_status(res.status);
  r.result = outcome.to_json();
  r.result.erase("params");
  r.result.erase("curve");
  r.result["worker"] = worker_id;
  // The study file's check makes this hold; the epoch's val_metric column holds accuracy or
  // RMSE by the task, so a name the task lacks would store the other one under it.
  const data::Task task =
      outcome.task.classification() ? data::Task::kClassification : data::Task::kRegression;
  if (!reports(task, metric)) {
    r.status = store::TrialStatus::kFailed;
    r.error = "the study's metric " + metric + " is not reported by a " + data::task_name(task) +
              " trial (it reports " + join(metrics_of(task), ", ") + ")";
    return r;
  }
  if (res.status == nn::TrialStatus::kDiverged) r.error = res.message;
  if (!res.epochs.empty()) {
    const bool at_best = res.status == nn::TrialStatus::kEarlyStopped && res.best_epoch > 0;
    const nn::EpochRecord& e = at_best ? res.epochs[res.best_epoch - 1] : res.epochs.back();
    const double v = epoch_metric(metric).of(e);
    if (std::isfinite(v)) r.value = v;
  }
  return r;
}

}  // namespace layerlab::study
