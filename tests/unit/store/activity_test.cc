// What workers did, read back from the attempts they ran: trials done, failed, lost and
// handed back per worker (worker_activity), busy time against time alive on a manual
// clock, finished attempts per time bucket (finished_per_bucket), and trial durations per
// study (duration_histograms).
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::StoreTest;

constexpr milliseconds kLease{30'000};

ClaimOptions lease() {
  return {0, kLease, 3};
}

WorkerInfo worker(const std::string& id) {
  return {id, "host", 1, "cpu", 1};
}

const WorkerActivity* find(const std::vector<WorkerActivity>& list, const std::string& id) {
  for (const WorkerActivity& a : list)
    if (a.worker_id == id) return &a;
  return nullptr;
}

TEST_P(StoreTest, WorkerActivityCountsEachAttemptForTheWorkerThatRanIt) {
  const int64_t study = study_with_trials("s", 6);
  store_->register_worker(worker("a"));
  store_->register_worker(worker("b"));
  // a: one result, one failure, then it dies holding trial 2.
  auto c0 = store_->claim_next("a", lease());
  ASSERT_TRUE(c0);
  ASSERT_TRUE(store_->finish_trial(c0->trial_id, 1, TrialStatus::kCompleted, {}, 0.9, ""));
  auto c1 = store_->claim_next("a", lease());
  ASSERT_TRUE(store_->finish_trial(c1->trial_id, 1, TrialStatus::kFailed, {}, std::nullopt, "x"));
  auto c2 = store_->claim_next("a", lease());
  ASSERT_TRUE(c2);
  clock_.advance(kLease + milliseconds(1));
  // b takes trial 2 over (a's attempt is lost), finishes it as pruned, hands trial 3 back,
  // diverges on it (a result, not a failure) and holds trial 4.
  auto again = store_->claim_next("b", lease());
  ASSERT_EQ(again->trial_id, c2->trial_id);
  ASSERT_TRUE(store_->finish_trial(again->trial_id, 2, TrialStatus::kPruned, {}, 0.5, ""));
  auto c3 = store_->claim_next("b", lease());
  ASSERT_TRUE(store_->release_trial(c3->trial_id, 1));
  auto c3b = store_->claim_next("b", lease());
  ASSERT_EQ(c3b->trial_id, c3->trial_id);
  ASSERT_TRUE(store_->finish_trial(c3b->trial_id, 2, TrialStatus::kDiverged, {}, std::nullopt, ""));
  ASSERT_TRUE(store_->claim_next("b", lease()));
  // an id that never registered still gets its counts
  auto c5 = store_->claim_next("ghost", lease());
  ASSERT_TRUE(store_->finish_trial(c5->trial_id, 1, TrialStatus::kCompleted, {}, 0.1, ""));

  const auto list = store_->worker_activity(clock_.now() - seconds(60), clock_.now());
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].worker_id, "a");  // by id
  EXPECT_EQ(list[1].worker_id, "b");
  EXPECT_EQ(list[2].worker_id, "ghost");
  const WorkerActivity& a = list[0];
  EXPECT_EQ(a.done, 1);
  EXPECT_EQ(a.failed, 1);
  EXPECT_EQ(a.lost, 1);
  EXPECT_EQ(a.released, 0);
  EXPECT_EQ(a.running, 0);
  const WorkerActivity& b = list[1];
  EXPECT_EQ(b.done, 2);  // pruned and diverged both ended with a result
  EXPECT_EQ(b.failed, 0);
  EXPECT_EQ(b.lost, 0);
  EXPECT_EQ(b.released, 1);
  EXPECT_EQ(b.running, 1);
  EXPECT_EQ(list[2].done, 1);
  EXPECT_EQ(list[2].alive.count(), 0);
  EXPECT_EQ(list[2].busy.count(), 0);

  // A redelivery by the broker loses the holder's attempt too, charged to the holder.
  auto held = store_->list_trials(study, {.statuses = {TrialStatus::kRunning}});
  ASSERT_EQ(held.size(), 1u);
  ASSERT_TRUE(store_->start_trial(held[0].id, "a", kLease));
  const auto after = store_->worker_activity(clock_.now(), clock_.now());
  EXPECT_EQ(find(after, "b")->lost, 1);
  EXPECT_EQ(find(after, "b")->running, 0);
  EXPECT_EQ(find(after, "a")->running, 1);

  EXPECT_STORE_ERROR(store_->worker_activity(clock_.now(), clock_.now() - seconds(1)),
                     ErrorCode::kInvalidArgument, "ends before it starts");
}

// One worker over 100 s: registered at 0, busy 10-30 (one trial) and 40-60 (a pack of
// two trials that end at 50 and 60: overlapping attempts count once), then holding a trial
// from 70 while its last heartbeat is at 80 (it died there, as far as anyone can tell).
TEST_P(StoreTest, BusyTimeIsTheUnionOfAttemptsWithinTheWorkersLife) {
  study_with_trials("s", 4);
  const Time t0 = clock_.now();
  store_->register_worker(worker("w"));
  auto at = [&](int s) {
    clock_.advance(t0 + seconds(s) - clock_.now());
    store_->heartbeat_worker("w", std::nullopt, 0);
  };
  at(10);
  auto one = store_->claim_next("w", lease());
  at(30);
  ASSERT_TRUE(store_->finish_trial(one->trial_id, 1, TrialStatus::kCompleted, {}, 1.0, ""));
  at(40);
  auto pack = store_->claim_batch("w", lease(), 2);
  ASSERT_EQ(pack.size(), 2u);
  at(50);
  ASSERT_TRUE(store_->finish_trial(pack[0].trial_id, 1, TrialStatus::kCompleted, {}, 1.0, ""));
  at(60);
  ASSERT_TRUE(store_->finish_trial(pack[1].trial_id, 1, TrialStatus::kCompleted, {}, 1.0, ""));
  at(70);
  ASSERT_TRUE(store_->claim_next("w", {0, seconds(600), 3}));
  at(80);
  clock_.advance(seconds(20));  // now t0 + 100: silent since 80

  auto whole = store_->worker_activity(t0, clock_.now());
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].alive, seconds(80));
  EXPECT_EQ(whole[0].busy, seconds(20 + 20 + 10));
  EXPECT_EQ(whole[0].done, 3);
  EXPECT_EQ(whole[0].running, 1);

  // A window inside: [20, 45] holds 10 s of the first trial and 5 s of the pack.
  auto part = store_->worker_activity(t0 + seconds(20), t0 + seconds(45));
  EXPECT_EQ(part[0].alive, seconds(25));
  EXPECT_EQ(part[0].busy, seconds(15));

  // Before registration there is no life to be busy in.
  auto before = store_->worker_activity(t0 - seconds(100), t0);
  EXPECT_EQ(before[0].alive.count(), 0);
  EXPECT_EQ(before[0].busy.count(), 0);

  // Re-registering starts a new life: the earlier attempts fall outside it.
  store_->register_worker(worker("w"));
  clock_.advance(seconds(10));
  store_->heartbeat_worker("w", std::nullopt, 0);
  auto reborn = store_->worker_activity(t0, clock_.now());
  EXPECT_EQ(reborn[0].alive, seconds(10));
  EXPECT_EQ(reborn[0].busy, seconds(10));  // the trial it still holds, from the old life
  EXPECT_EQ(reborn[0].done, 3);            // counts are history: they do not restart
}

TEST_P(StoreTest, FinishedPerBucketCountsAttemptsWhereTheyEnded) {
  study_with_trials("s", 5);
  const Time t0 = clock_.now();
  auto c0 = store_->claim_next("a", lease());
  auto c1 = store_->claim_next("b", lease());
  auto c2 = store_->claim_next("a", lease());
  clock_.advance(seconds(5));
  ASSERT_TRUE(store_->finish_trial(c0->trial_id, 1, TrialStatus::kCompleted, {}, 1.0, ""));
  clock_.advance(seconds(10));  // 15 s
  ASSERT_TRUE(store_->finish_trial(c1->trial_id, 1, TrialStatus::kFailed, {}, std::nullopt, "x"));
  ASSERT_TRUE(store_->finish_trial(c2->trial_id, 1, TrialStatus::kEarlyStopped, {}, 1.0, ""));
  ASSERT_TRUE(store_->claim_next("b", lease()));
  clock_.advance(kLease + seconds(1));  // 46 s: b's lease on trial 3 runs out
  EXPECT_EQ(store_->expire_leases(lease()), 1);
  auto c4 = store_->claim_next("a", lease());
  ASSERT_TRUE(store_->release_trial(c4->trial_id, c4->attempt));  // hand-backs are not counted

  const auto series = store_->finished_per_bucket(t0, seconds(10), 6);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].worker_id, "a");
  EXPECT_EQ(series[0].done, (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(series[0].failed, (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(series[0].lost, (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(series[1].worker_id, "b");
  EXPECT_EQ(series[1].done, (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(series[1].failed, (std::vector<int64_t>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(series[1].lost, (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));

  // Only what ended inside the buckets: [10, 30) leaves out the finish at 5 and the loss at 46.
  const auto middle = store_->finished_per_bucket(t0 + seconds(10), seconds(10), 2);
  ASSERT_EQ(middle.size(), 2u);
  EXPECT_EQ(middle[0].done, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(middle[1].lost, (std::vector<int64_t>{0, 0}));
  EXPECT_TRUE(store_->finished_per_bucket(t0 + seconds(100), seconds(10), 3).empty());

  EXPECT_STORE_ERROR(store_->finished_per_bucket(t0, milliseconds(0), 3),
                     ErrorCode::kInvalidArgument, "bucket must be > 0");
  EXPECT_STORE_ERROR(store_->finished_per_bucket(t0, seconds(1), 0), ErrorCode::kInvalidArgument,
                     "buckets must be in 1..100000");
}

TEST_P(StoreTest, DurationHistogramsCountTrialsWithAResultByTrainingTime) {
  const int64_t s1 = study_with_trials("one", 4);
  const int64_t s2 = study_with_trials("two", 1);
  const int64_t s3 = study_with_trials("three", 1);  // nothing finished: left out
  auto run = [&](milliseconds took, TrialStatus status) {
    auto c = store_->claim_next("w", {0, seconds(3600), 3});
    clock_.advance(took);
    ASSERT_TRUE(store_->finish_trial(c->trial_id, c->attempt, status, {}, 1.0, ""));
  };
  run(seconds(20), TrialStatus::kCompleted);
  run(seconds(10), TrialStatus::kPruned);
  run(seconds(15), TrialStatus::kDiverged);          // on the bound: in its bucket
  run(seconds(5), TrialStatus::kFailed);             // no result: not a training time
  run(milliseconds(2500), TrialStatus::kCompleted);  // study two
  (void)s3;

  const auto h = store_->duration_histograms({1, 15, 60});
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].study_id, s1);
  EXPECT_EQ(h[0].counts, (std::vector<int64_t>{0, 2, 1, 0}));
  EXPECT_EQ(h[0].count, 3);
  EXPECT_DOUBLE_EQ(h[0].sum_seconds, 45.0);
  EXPECT_EQ(h[1].study_id, s2);
  EXPECT_EQ(h[1].counts, (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(h[1].sum_seconds, 2.5);

  EXPECT_EQ(store_->duration_histograms({})[0].counts, (std::vector<int64_t>{3}));
  EXPECT_STORE_ERROR(store_->duration_histograms({5, 1}), ErrorCode::kInvalidArgument, "ascending");
  EXPECT_STORE_ERROR(store_->duration_histograms({0}), ErrorCode::kInvalidArgument, "positive");
  EXPECT_STORE_ERROR(store_->duration_histograms(std::vector<double>(65, 1.0)),
                     ErrorCode::kInvalidArgument, "at most 64");
}

}  // namespace
}  // namespace layerlab::store
