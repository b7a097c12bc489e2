// Following a store: the trial change log, new epochs of a trial, and counting a filter.
#include <cmath>

#include "raw_sql.h"
#include "store/trial_pages.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::PostgresService;
using testing::StoreTest;

// Claims and completes every queued trial of the study, 500 at a time.
void complete_every_trial(Store& store, int64_t study) {
  for (;;) {
    const std::vector<Claim> claims = store.claim_batch("w", {.study_id = study}, 500);
    if (claims.empty()) return;
    std::vector<TrialFinish> done;
    for (const Claim& c : claims)
      done.push_back({c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}});
    store.finish_trials(done);
  }
}

std::vector<int64_t> ids_of(const std::vector<TrialRecord>& trials) {
  std::vector<int64_t> out;
  for (const TrialRecord& t : trials) out.push_back(t.id);
  return out;
}

TEST_P(StoreTest, EveryStatusChangeTakesTheNextChangeNumber) {
  const int64_t empty = store_->last_trial_change();
  EXPECT_EQ(empty, 0);
  const int64_t study = study_with_trials("s", 3);
  const int64_t added = store_->last_trial_change();
  std::vector<TrialRecord> all = store_->trials_changed_since(empty, 100);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_LT(all[0].seq, all[1].seq);
  EXPECT_LT(all[1].seq, all[2].seq);
  EXPECT_EQ(all[2].seq, added);
  EXPECT_EQ(ids_of(store_->trials_changed_since(empty, 2)),
            (std::vector<int64_t>{all[0].id, all[1].id}));

  const Claim c = *store_->claim_next("w", {.study_id = study});
  std::vector<TrialRecord> claimed = store_->trials_changed_since(added, 100);
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].id, c.trial_id);
  EXPECT_EQ(claimed[0].status, TrialStatus::kRunning);

  // A lease renewal changes no status: nothing for followers.
  const int64_t after_claim = store_->last_trial_change();
  ASSERT_TRUE(store_->renew_lease(c.trial_id, c.attempt, "w", std::chrono::seconds(30)));
  EXPECT_TRUE(store_->trials_changed_since(after_claim, 100).empty());

  ASSERT_TRUE(store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, {{"ok", true}},
                                   0.5, "", {{1, 0.1, 0.2, 0.5, 0.01, nullptr}}));
  std::vector<TrialRecord> finished = store_->trials_changed_since(after_claim, 100);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].status, TrialStatus::kCompleted);
  EXPECT_EQ(finished[0].value, 0.5);
  // Claimed and finished since `added`: it comes once, in its current state.
  std::vector<TrialRecord> since_added = store_->trials_changed_since(added, 100);
  ASSERT_EQ(since_added.size(), 1u);
  EXPECT_EQ(since_added[0].status, TrialStatus::kCompleted);
  EXPECT_EQ(since_added[0].seq, store_->last_trial_change());

  // Cancelling changes the two queued trials in one statement; both are reported.
  // (A lease that runs out and a handed-back trial are reported too: see below.)
  const int64_t after_finish = store_->last_trial_change();
  store_->cancel_study(study);
  std::vector<TrialRecord> cancelled = store_->trials_changed_since(after_finish, 100);
  EXPECT_EQ(cancelled.size(), 2u);
  for (const TrialRecord& t : cancelled) EXPECT_EQ(t.status, TrialStatus::kCancelled);
}

// Marking a study finished drops its trials' superseded changes (created, started): a
// follower at any point of the log sees the same trials, each with its last change, and
// the log keeps one row per trial of that study. Another study's rows stay.
TEST_P(StoreTest, AFinishedStudyKeepsOnlyTheLastChangeOfEachTrial) {
  const int64_t study = study_with_trials("s", 3);
  const int64_t other = study_with_trials("other", 2);
  for (int i = 0; i < 3; ++i) {
    const Claim c = *store_->claim_next("w", {.study_id = study});
    ASSERT_TRUE(
        store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 0.5, ""));
  }
  ASSERT_TRUE(store_->claim_next("w", {.study_id = other}));
  const auto log_rows = [&] {
    const char* sql = "SELECT COUNT(*) FROM trial_changes";
    return postgres()
               ? PostgresService::instance().column(PostgresService::database_of(url()), sql)[0]
               : testing::sqlite_column(url().substr(7), sql)[0];
  };
  const int64_t last = store_->last_trial_change();
  std::vector<std::vector<TrialRecord>> seen;
  for (int64_t after = 0; after <= last; ++after)
    seen.push_back(store_->trials_changed_since(after, 100));
  EXPECT_EQ(log_rows(), 3 * 3 + 2 + 1);  // added, started, finished; the other: added, one started

  store_->set_study_status(study, StudyStatus::kFinished);
  EXPECT_EQ(log_rows(), 3 + 2 + 1);
  EXPECT_EQ(store_->last_trial_change(), last);
  for (int64_t after = 0; after <= last; ++after) {
    const std::vector<TrialRecord> now = store_->trials_changed_since(after, 100);
    ASSERT_EQ(ids_of(now), ids_of(seen[static_cast<size_t>(after)])) << "after " << after;
    for (size_t i = 0; i < now.size(); ++i)
      EXPECT_EQ(now[i].seq, seen[static_cast<size_t>(after)][i].seq) << "after " << after;
  }
}

// The compaction's work grows with the study, not with its square: it once joined every
// change to its trial's last on SQLite as a nested loop (0.6 s at the end of a 2,000-trial
// study, 49 s at 20,000). Work is SQLite's count of virtual-machine steps, which does not
// depend on the machine's speed; 10 times the trials may cost about 10-13 times the steps
// (a sort), a nested loop about 100 times.
// SQLite only (a TEST_F): it counts its steps, and PostgreSQL hash-joins.
TEST_F(StoreTest, FinishingAStudyCostsWorkInProportionToItsTrials) {
  const auto compaction_steps = [&](const std::string& name, int trials) {
    const int64_t study = study_with_trials(name, trials);
    complete_every_trial(*store_, study);
    const uint64_t before = store_->stats().vm_steps;
    store_->set_study_status(study, StudyStatus::kFinished);
    return store_->stats().vm_steps - before;
  };
  const uint64_t small = compaction_steps("small", 200);
  const uint64_t large = compaction_steps("large", 2000);
  ASSERT_GT(small, 0u) << "no steps counted";
  EXPECT_LT(large, 20 * small) << "200 trials: " << small << " steps; 2,000: " << large;
}

// The unfinished trials of a study are read without walking its finished ones: an adaptive
// study's coordinator lists them every 25 ms, and SQLite once walked the whole study in
// number order to spare itself sorting three rows. 10 times the finished trials may cost
// at most twice the steps.
TEST_F(StoreTest, ListingTheUnfinishedTrialsCostsTheSameInALargerStudy) {
  const auto listing_steps = [&](const std::string& name, int trials) {
    const int64_t study = study_with_trials(name, trials);
    complete_every_trial(*store_, study);
    store_->add_trials(study, {{trials, "iris", {}}, {trials + 1, "iris", {}}});
    EXPECT_TRUE(store_->claim_next("w", {.study_id = study}));
    const uint64_t before = store_->stats().vm_steps;
    const TrialFilter unfinished{.statuses = {TrialStatus::kQueued, TrialStatus::kRunning}};
    std::vector<int64_t> numbers;
    for (const TrialRecord& t : store_->list_trials(study, unfinished)) numbers.push_back(t.number);
    const uint64_t steps = store_->stats().vm_steps - before;
    EXPECT_EQ(numbers, (std::vector<int64_t>{trials, trials + 1})) << "by number";
    return steps;
  };
  const uint64_t small = listing_steps("small", 200);
  const uint64_t large = listing_steps("large", 2000);
  ASSERT_GT(small, 0u) << "no steps counted";
  EXPECT_LT(large, 2 * small) << "200 finished trials: " << small << " steps; 2,000: " << large;
}

TEST_P(StoreTest, ExpiredLeasesAndHandedBackTrialsAreChangesToo) {
  const int64_t study = study_with_trials("s", 2);
  const Claim a = *store_->claim_next("w", {.study_id = study, .lease = std::chrono::seconds(1)});
  const Claim b = *store_->claim_next("w", {.study_id = study, .lease = std::chrono::seconds(60)});
  const int64_t after_claims = store_->last_trial_change();
  ASSERT_TRUE(store_->release_trial(b.trial_id, b.attempt));
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(store_->expire_leases({.study_id = study}), 1);
  std::vector<TrialRecord> changed = store_->trials_changed_since(after_claims, 100);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].id, b.trial_id);  // handed back first
  EXPECT_EQ(changed[1].id, a.trial_id);  // then its lease ran out
  for (const TrialRecord& t : changed) EXPECT_EQ(t.status, TrialStatus::kQueued);
}

TEST_P(StoreTest, EpochsOfARunningTrialAreFollowedByEpochNumber) {
  const int64_t study = study_with_trials("s", 1);
  const Claim c = *store_->claim_next("w", {.study_id = study});
  ASSERT_TRUE(store_->append_epochs(
      c.trial_id, c.attempt,
      {{1, 0.9, 1.0, 0.3, 0.01, nullptr}, {2, 0.8, 0.9, 0.4, 0.01, nullptr}}));
  EXPECT_EQ(store_->list_epochs(c.trial_id, c.attempt).size(), 2u);
  std::vector<EpochRecord> newer = store_->list_epochs(c.trial_id, c.attempt, 1);
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_EQ(newer[0].row.epoch, 2);
  EXPECT_TRUE(store_->list_epochs(c.trial_id, c.attempt, 2).empty());
  // A second connection (another process) sees the same.
  EXPECT_EQ(reopen()->list_epochs(c.trial_id, c.attempt, 1).size(), 1u);
}

TEST_P(StoreTest, CountTrialsCountsWhatListTrialsWouldReturn) {
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

// value: the trials whose value is exactly the one given (the leaderboards count the trials
// tying the best this way), bit for bit on both engines: a value one ulp away is another.
TEST_P(StoreTest, CountTrialsCanCountTheTrialsOfOneValue) {
  const int64_t study = store_->create_study("s", nullptr);
  const double third = 1.0 / 3.0;
  const std::vector<std::optional<double>> values = {third, third, std::nextafter(third, 1.0), 0.5,
                                                     std::nullopt};
  std::vector<NewTrial> trials;
  for (size_t i = 0; i < values.size(); ++i)
    trials.push_back({static_cast<int64_t>(i), "iris", {}});
  store_->add_trials(study, trials);
  for (const std::optional<double>& v : values) {
    const Claim c = *store_->claim_next("w", {.study_id = study});
    ASSERT_TRUE(
        store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, v, ""));
  }
  EXPECT_EQ(store_->count_trials(study, {.value = third}), 2);
  EXPECT_EQ(store_->count_trials(study, {.value = 0.5}), 1);
  EXPECT_EQ(store_->count_trials(study, {.value = 0.25}), 0);
  EXPECT_EQ(store_->count_trials(study, {.value = std::nan("")}), 0) << "NaN equals nothing";
  EXPECT_EQ(store_->count_trials(study, {.statuses = {TrialStatus::kQueued}, .value = third}), 0);
}

// after_number: keyset pages by number, with any other filter.
TEST_P(StoreTest, ListTrialsPagesByNumberAfterTheLastOneSeen) {
  const int64_t study = store_->create_study("s", nullptr);
  store_->add_trials(study, {{3, "iris", {}},
                             {1, "wine", {}},
                             {7, "iris", {}},
                             {4, "iris", {}},
                             {9, "wine", {}},
                             {12, "iris", {}}});
  auto numbers = [&](const TrialFilter& f) {
    std::vector<int64_t> out;
    for (const TrialRecord& t : store_->list_trials(study, f)) out.push_back(t.number);
    return out;
  };
  EXPECT_EQ(numbers({.limit = 2, .after_number = 3}), (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(numbers({.limit = 2, .after_number = 7}), (std::vector<int64_t>{9, 12}));
  EXPECT_EQ(numbers({.limit = 2, .after_number = 12}), (std::vector<int64_t>{}));
  EXPECT_EQ(numbers({.after_number = -5}), (std::vector<int64_t>{1, 3, 4, 7, 9, 12}));
  EXPECT_EQ(numbers({.dataset = "iris", .limit = 2, .after_number = 3}),
            (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(numbers({.dataset = "wine", .after_number = 1}), (std::vector<int64_t>{9}));
  EXPECT_EQ(store_->count_trials(study, {.after_number = 7}), 2);
}

// for_each_trial: every trial the filter selects, once, in number order, over pages.
TEST_P(StoreTest, ForEachTrialReadsWhatTheFilterSelectsAPageAtATime) {
  const int64_t study = store_->create_study("s", nullptr);
  std::vector<NewTrial> trials;
  for (int n = 22; n >= 0; --n) trials.push_back({n, n % 3 == 0 ? "wine" : "iris", {}});
  store_->add_trials(study, trials);
  auto numbers = [&](const TrialFilter& f, int64_t page, int64_t stop_after = -1) {
    std::vector<int64_t> out;
    for_each_trial(
        *store_, study, f,
        [&](const TrialRecord& t) {
          out.push_back(t.number);
          return static_cast<int64_t>(out.size()) != stop_after;
        },
        page);
    return out;
  };
  std::vector<int64_t> all(23), wine;
  for (int n = 0; n < 23; ++n) all[static_cast<size_t>(n)] = n;
  for (int n = 0; n < 23; n += 3) wine.push_back(n);
  EXPECT_EQ(numbers({}, 5), all) << "4 full pages and a part";
  EXPECT_EQ(numbers({}, 23), all) << "one full page, then an empty one";
  EXPECT_EQ(numbers({}, 1), all);
  EXPECT_EQ(numbers({.dataset = "wine"}, 3), wine);
  EXPECT_EQ(numbers({}, 5, 7), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6})) << "stops when told";
  EXPECT_EQ(numbers({.statuses = {TrialStatus::kCompleted}}, 5), (std::vector<int64_t>{}));
  for (const TrialFilter& bad :
       {TrialFilter{.limit = 3}, TrialFilter{.offset = 1}, TrialFilter{.sort = TrialSort::kValue},
        TrialFilter{.descending = true}, TrialFilter{.after_number = 4}})
    EXPECT_STORE_ERROR(numbers(bad, 5), ErrorCode::kInvalidArgument, "pages");
  EXPECT_STORE_ERROR(numbers({}, 0), ErrorCode::kInvalidArgument, "pages");
}

// lost_only: the trials a worker died holding (what /api/v1/queue counts as dead letters
// among the failed ones), counted without reading them.
TEST_P(StoreTest, CountTrialsCanCountOnlyTrialsThatLostAnAttempt) {
  const int64_t study = store_->create_study("s", nullptr);
  store_->add_trials(study, {{0, "iris", {}}, {1, "iris", {}}, {2, "iris", {}}});
  const ClaimOptions opts{study, std::chrono::milliseconds(30'000), 3};
  const Claim dies = *store_->claim_next("a", opts);
  clock_.advance(std::chrono::milliseconds(30'001));
  const Claim again = *store_->claim_next("b", opts);  // a's attempt is lost
  ASSERT_EQ(again.trial_id, dies.trial_id);
  const Claim fails = *store_->claim_next("b", opts);
  ASSERT_TRUE(store_->fail_trial(again.trial_id, "its worker kept dying"));
  ASSERT_TRUE(store_->finish_trial(fails.trial_id, fails.attempt, TrialStatus::kFailed, nullptr,
                                   std::nullopt, "training threw"));
  const TrialFilter failed{.statuses = {TrialStatus::kFailed}};
  TrialFilter lost = failed;
  lost.lost_only = true;
  EXPECT_EQ(store_->count_trials(study, failed), 2);
  EXPECT_EQ(store_->count_trials(study, lost), 1);
  ASSERT_EQ(store_->list_trials(study, lost).size(), 1u);
  EXPECT_EQ(store_->list_trials(study, lost)[0].id, dies.trial_id);
  lost.statuses.clear();
  EXPECT_EQ(store_->count_trials(study, lost), 1);
}

}  // namespace
}  // namespace layerlab::store
