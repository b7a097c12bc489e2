// budget.hours (issue 52): a study's time runs out that long after it was created; then the
// coordinator cancels its queued trials and stores no more, the running ones finish, and
// the study is complete. Time is a ManualClock shared by the store and the coordinators.
#include <gtest/gtest.h>

#include <chrono>

#include "study/coordinator.h"
#include "study/coordinator_pool.h"
#include "support/temp_and_errors.h"

namespace layerlab::study {
namespace {

using std::chrono::minutes;
using store::TrialStatus;

// A random study of `trials` trials on iris with a budget of one hour.
StudySpec one_hour_study(int64_t trials) {
  return StudySpec::from_json({{"name", "timed"},
                               {"datasets", {"iris"}},
                               {"method", "random"},
                               {"budget", {{"trials", trials}, {"hours", 1}}},
                               {"parameters", {{"hidden_layers", {{"values", {1, 2, 3}}}}}}});
}

struct TimedStore {
  ::layerlab::testing::TempDir dir;
  store::ManualClock clock;
  std::unique_ptr<store::Store> store = open();
  StudySpec spec;
  int64_t id;
  explicit TimedStore(int64_t trials)
      : spec(one_hour_study(trials)), id(store->create_study(spec.name, spec.to_json())) {}
  std::unique_ptr<store::Store> open() {
    store::StoreOptions options;
    options.clock = &clock;
    return store::open_store("sqlite:" + dir.path("s.db"), options);
  }
  int64_t count(TrialStatus s) { return store->counts(id)[s]; }
};

TEST(CoordinatorBudget, QueuedTrialsAreCancelledOnceTheHoursAreUp) {
  TimedStore t(100);
  auto queue = queue::make_store_queue(*t.store, "coordinator");
  Coordinator c(*t.store, *queue, t.spec, t.id, {.clock = &t.clock});
  ASSERT_EQ(c.top_up(8), 100);
  // Leases longer than the test's hours: the workers renew theirs.
  const auto running =
      t.store->claim_batch("w", {.study_id = t.id, .lease = std::chrono::hours(3)}, 2);
  ASSERT_EQ(running.size(), 2u);

  t.clock.advance(minutes(59));
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_FALSE(c.out_of_time());
  EXPECT_EQ(t.count(TrialStatus::kQueued), 98);

  t.clock.advance(minutes(1));
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_TRUE(c.out_of_time());
  EXPECT_EQ(t.count(TrialStatus::kQueued), 0);
  EXPECT_EQ(t.count(TrialStatus::kCancelled), 98);
  EXPECT_TRUE(t.store->claim_batch("w", {.study_id = t.id}, 10).empty())
      << "no trial starts after the deadline";
  EXPECT_EQ(t.store->get_study(t.id).status, store::StudyStatus::kRunning);

  EXPECT_FALSE(c.complete()) << "the running trials finish first";
  for (const store::Claim& r : running)
    ASSERT_TRUE(t.store->finish_trial(r.trial_id, r.attempt, TrialStatus::kCompleted, {}, 0.9, ""));
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.out_of_time_note(),
            "budget of 1 hours reached: 100 of 100 trials stored, the queued ones cancelled");
}

TEST(CoordinatorBudget, NoTrialIsStoredAfterTheDeadline) {
  TimedStore t(3 * kTrialBatch);
  auto queue = queue::make_store_queue(*t.store, "coordinator");
  Coordinator c(*t.store, *queue, t.spec, t.id, {.batches_per_call = 1, .clock = &t.clock});
  ASSERT_EQ(c.top_up(8), kTrialBatch);
  t.clock.advance(minutes(61));
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_EQ(t.store->counts(t.id).total(), kTrialBatch);
  EXPECT_TRUE(c.complete());
}

TEST(CoordinatorBudget, AResumedStudyCountsFromItsCreation) {
  TimedStore t(100);
  t.clock.advance(minutes(90));
  auto queue = queue::make_store_queue(*t.store, "coordinator");
  Coordinator c(*t.store, *queue, t.spec, t.id, {.clock = &t.clock});
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_TRUE(c.out_of_time());
  EXPECT_EQ(t.store->counts(t.id).total(), 0);
}

TEST(CoordinatorBudget, ThePoolFinishesTheStudyAndSaysWhy) {
  TimedStore t(100);
  auto queue = queue::make_store_queue(*t.store, "coordinator");
  std::vector<std::string> reports;
  CoordinatorPoolOptions options;
  options.clock = &t.clock;
  CoordinatorPool pool(
      *t.store, *queue, [&](const std::string& r) { reports.push_back(r); }, options);
  pool.step(8);
  ASSERT_EQ(t.count(TrialStatus::kQueued), 100);
  t.clock.advance(minutes(60));
  pool.step(8);
  EXPECT_EQ(t.count(TrialStatus::kCancelled), 100);
  EXPECT_EQ(t.store->get_study(t.id).status, store::StudyStatus::kFinished);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back(),
            "study 'timed' finished: budget of 1 hours reached: 100 of 100 trials stored, the "
            "queued ones cancelled");
}

}  // namespace
}  // namespace layerlab::study
