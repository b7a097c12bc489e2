// JSON views: times, NaN, trial summaries from stored results, worker liveness.
#include "analysis/views.h"

#include <gtest/gtest.h>

namespace layerlab::analysis {
namespace {

using std::chrono::milliseconds;

TEST(Views, IsoTimesInUtcWithMilliseconds) {
  EXPECT_EQ(iso_time(store::Time(milliseconds(0))), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso_time(store::Time(milliseconds(1'796'016'400'123))), "2026-11-30T05:26:40.123Z");
  EXPECT_TRUE(iso_time_or_null(std::nullopt).is_null());
  EXPECT_TRUE(number_or_null(std::nan("")).is_null());
  EXPECT_EQ(number_or_null(0.5), 0.5);
}

TEST(Views, TrialSummaryReadsTheStoredResult) {
  store::TrialRecord t;
  t.id = 3;
  t.study_id = 1;
  t.status = store::TrialStatus::kCompleted;
  t.result = {{"metrics", {{"val_accuracy", 0.9}}}, {"seconds", 1.5}, {"epochs_run", 4}};
  t.value = 0.9;
  nlohmann::json j = trial_summary(t);
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["metrics"]["val_accuracy"], 0.9);
  EXPECT_EQ(j["seconds"], 1.5);
  EXPECT_EQ(j["epochs_run"], 4);
  EXPECT_TRUE(j["started_at"].is_null());
  t.result = nullptr;  // queued: no result yet
  t.value.reset();
  j = trial_summary(t);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_TRUE(j["metrics"].empty());
  EXPECT_TRUE(j["seconds"].is_null());
}

TEST(Views, WorkersAreAliveWhileTheyHeartbeat) {
  store::WorkerRecord w;
  w.heartbeat_at = store::Time(milliseconds(100'000));
  EXPECT_TRUE(worker_alive(w, store::Time(milliseconds(105'000))));
  EXPECT_FALSE(worker_alive(w, store::Time(milliseconds(111'000))));
  w.status = store::WorkerStatus::kStopped;
  EXPECT_FALSE(worker_alive(w, store::Time(milliseconds(100'001))));
  EXPECT_DOUBLE_EQ(worker_json(w, store::Time(milliseconds(102'500)))["heartbeat_age"], 2.5);
}

}  // namespace
}  // namespace layerlab::analysis
