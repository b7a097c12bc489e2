// Following a store: change numbers on trials and epochs, and counting a filter.
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::StoreTest;

std::vector<int64_t> ids_of(const std::vector<TrialRecord>& trials) {
  std::vector<int64_t> out;
  for (const TrialRecord& t : trials) out.push_back(t.id);
  return out;
}

TEST_F(StoreTest, EveryStatusChangeTakesTheNextChangeNumber) {
  const ChangeCursor empty = store_->change_cursor();
  EXPECT_EQ(empty.trials, 0);
  EXPECT_EQ(empty.epochs, 0);
  const int64_t study = study_with_trials("s", 3);
  const ChangeCursor added = store_->change_cursor();
  std::vector<TrialRecord> all = store_->trials_changed_since(empty.trials, 100);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_LT(all[0].seq, all[1].seq);
  EXPECT_LT(all[1].seq, all[2].seq);
  EXPECT_EQ(all[2].seq, added.trials);

  const Claim c = *store_->claim_next("w", {.study_id = study});
  std::vector<TrialRecord> claimed = store_->trials_changed_since(added.trials, 100);
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].id, c.trial_id);
  EXPECT_EQ(claimed[0].status, TrialStatus::kRunning);

  // A lease renewal changes no status: nothing for followers.
  const int64_t after_claim = store_->change_cursor().trials;
  ASSERT_TRUE(store_->renew_lease(c.trial_id, c.attempt, "w", std::chrono::seconds(30)));
  EXPECT_TRUE(store_->trials_changed_since(after_claim, 100).empty());

  ASSERT_TRUE(store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, {{"ok", true}},
                                   0.5, "", {{1, 0.1, 0.2, 0.5, 0.01, nullptr}}));
  std::vector<TrialRecord> finished = store_->trials_changed_since(after_claim, 100);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].status, TrialStatus::kCompleted);
  EXPECT_EQ(finished[0].value, 0.5);

  // Cancelling changes the two queued trials in one statement; both are reported.
  const int64_t after_finish = store_->change_cursor().trials;
  store_->cancel_study(study);
  std::vector<TrialRecord> cancelled = store_->trials_changed_since(after_finish, 100);
  EXPECT_EQ(cancelled.size(), 2u);
  for (const TrialRecord& t : cancelled) EXPECT_EQ(t.status, TrialStatus::kCancelled);
  // The limit cuts by change number.
  EXPECT_EQ(ids_of(store_->trials_changed_since(empty.trials, 2)),
            (std::vector<int64_t>{all[0].id, all[1].id}));
}

TEST_F(StoreTest, EpochRecordsAreFollowedByChangeNumber) {
  const int64_t study = study_with_trials("s", 1);
  const Claim c = *store_->claim_next("w", {.study_id = study});
  ASSERT_TRUE(store_->append_epochs(
      c.trial_id, c.attempt,
      {{1, 0.9, 1.0, 0.3, 0.01, nullptr}, {2, 0.8, 0.9, 0.4, 0.01, nullptr}}));
  std::vector<EpochRecord> first = store_->epochs_since(0, 100);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].row.epoch, 1);
  EXPECT_EQ(first[1].row.epoch, 2);
  EXPECT_LT(first[0].seq, first[1].seq);
  EXPECT_EQ(store_->change_cursor().epochs, first[1].seq);
  // Rewriting an epoch gives it a new number, so a follower sees the last version.
  ASSERT_TRUE(store_->append_epochs(c.trial_id, c.attempt, {{2, 0.7, 0.8, 0.5, 0.01, nullptr}}));
  std::vector<EpochRecord> rewritten = store_->epochs_since(first[1].seq, 100);
  ASSERT_EQ(rewritten.size(), 1u);
  EXPECT_EQ(rewritten[0].row.epoch, 2);
  EXPECT_DOUBLE_EQ(rewritten[0].row.val_metric, 0.5);
  // A second connection (another process) sees the same numbers.
  EXPECT_EQ(reopen()->change_cursor().epochs, rewritten[0].seq);
}

TEST_F(StoreTest, CountTrialsCountsWhatListTrialsWouldReturn) {
  const int64_t study = store_->create_study("s", nullptr);
  std::vector<NewTrial> trials;
  for (int i = 0; i < 7; ++i) trials.push_back({i, i % 2 ? "wine" : "iris", {{"units", i}}});
  store_->add_trials(study, trials);
  const Claim c = *store_->claim_next("w", {.study_id = study});
  ASSERT_TRUE(
      store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 1.0, ""));
  TrialFilter f;
  EXPECT_EQ(store_->count_trials(study, f), 7);
  f.dataset = "wine";
  EXPECT_EQ(store_->count_trials(study, f), 3);
  f.statuses = {TrialStatus::kQueued};
  f.limit = 1;  // ignored by count_trials
  EXPECT_EQ(store_->count_trials(study, f), 3);
  f.dataset = "";
  f.statuses = {TrialStatus::kCompleted, TrialStatus::kQueued};
  EXPECT_EQ(store_->count_trials(study, f), 7);
  EXPECT_EQ(store_->list_trials(study, {.statuses = f.statuses}).size(), 7u);
  EXPECT_STORE_ERROR(store_->count_trials(999, {}), ErrorCode::kNotFound, "count_trials");
}

}  // namespace
}  // namespace layerlab::store
