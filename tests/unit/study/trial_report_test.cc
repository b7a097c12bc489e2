// The report a worker stores for a trial: which epoch's metric is the trial's value, and the
// curve it writes.
#include "study/trial_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace layerlab::study {
namespace {

TrialOutcome outcome_with(nn::TrialStatus status, std::vector<double> val_metric, int best_epoch) {
  TrialOutcome o;
  o.task.classes = 3;
  o.result.status = status;
  o.result.best_epoch = best_epoch;
  for (size_t i = 0; i < val_metric.size(); ++i) {
    nn::EpochRecord r;
    r.epoch = static_cast<int>(i + 1);
    r.train_loss = 1.0 / (i + 1);
    r.val_loss = 2.0 / (i + 1);
    r.val_metric = val_metric[i];
    o.result.epochs.push_back(r);
  }
  return o;
}

TEST(TrialReport, ValueIsTheLastEpochsMetric) {
  const auto r = make_report(outcome_with(nn::TrialStatus::kCompleted, {0.5, 0.7, 0.6}, 2),
                             "val_accuracy", "w1");
  EXPECT_EQ(r.status, store::TrialStatus::kCompleted);
  ASSERT_TRUE(r.value);
  EXPECT_DOUBLE_EQ(*r.value, 0.6);
  EXPECT_EQ(r.result["worker"], "w1");
  EXPECT_FALSE(r.result.contains("params"));
  EXPECT_FALSE(r.result.contains("curve"));
}

TEST(TrialReport, EarlyStoppedTrialIsValuedAtItsBestEpoch) {
  const auto r = make_report(outcome_with(nn::TrialStatus::kEarlyStopped, {0.5, 0.8, 0.6, 0.55}, 2),
                             "val_accuracy", "w");
  EXPECT_EQ(r.status, store::TrialStatus::kEarlyStopped);
  EXPECT_DOUBLE_EQ(*r.value, 0.8);
  const auto loss = make_report(outcome_with(nn::TrialStatus::kEarlyStopped, {0.5, 0.8, 0.6}, 2),
                                "val_loss", "w");
  EXPECT_DOUBLE_EQ(*loss.value, 1.0);
}

// The epoch's val_metric is accuracy or RMSE by the task: only the name the task reports
// reads it, so RMSE is never stored as val_accuracy (nor accuracy as val_rmse).
TEST(TrialReport, TheMetricMustBeOneTheTrialsTaskReports) {
  TrialOutcome regression = outcome_with(nn::TrialStatus::kCompleted, {0.9, 0.4}, 2);
  regression.task = nn::Task{.classes = 0, .targets = 1};
  EXPECT_DOUBLE_EQ(*make_report(regression, "val_rmse", "w").value, 0.4);
  EXPECT_DOUBLE_EQ(*make_report(regression, "val_loss", "w").value, 1.0);
  const TrialOutcome classification = outcome_with(nn::TrialStatus::kCompleted, {0.5, 0.7}, 2);
  const auto refused = [](const TrialOutcome& o, const char* metric, const std::string& why) {
    const TrialReport r = make_report(o, metric, "w");
    EXPECT_EQ(r.status, store::TrialStatus::kFailed) << metric;
    EXPECT_FALSE(r.value) << metric;
    EXPECT_EQ(r.error, why);
  };
  refused(regression, "val_accuracy",
          "the study's metric val_accuracy is not reported by a regression trial (it reports "
          "val_rmse, val_loss, train_loss)");
  refused(classification, "val_rmse",
          "the study's metric val_rmse is not reported by a classification trial (it reports "
          "val_accuracy, val_loss, train_loss)");
}

TEST(TrialReport, DivergedTrialHasNoValueAndSaysWhy) {
  auto o = outcome_with(nn::TrialStatus::kDiverged, {0.5, std::nan("")}, 1);
  o.result.message = "loss became NaN or infinite in epoch 2";
  const auto r = make_report(o, "val_accuracy", "w");
  EXPECT_EQ(r.status, store::TrialStatus::kDiverged);
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.error, o.result.message);
}

TEST(TrialReport, EpochRowsCarryTheCurve) {
  nn::EpochRecord e;
  e.epoch = 4;
  e.train_loss = 0.25;
  e.val_loss = 0.5;
  e.val_metric = 0.9;
  e.learning_rate = 0.01;
  const store::EpochRow row = epoch_row(e);
  EXPECT_EQ(row.epoch, 4);
  EXPECT_EQ(row.val_metric, 0.9);
  EXPECT_EQ(row.extra["learning_rate"], 0.01);
  EXPECT_EQ(epoch_metric("train_loss").of(e), 0.25);
  EXPECT_EQ(epoch_metric("val_rmse").of(e), 0.9);
}

}  // namespace
}  // namespace layerlab::study
