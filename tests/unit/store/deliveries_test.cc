// Broker deliveries: start_trial (a delivery, or a redelivery after its holder's connection
// died) and fail_trial (deliveries ran out).
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using std::chrono::milliseconds;
using testing::StoreTest;

constexpr milliseconds kDeliveryLease{30'000};

TEST_P(StoreTest, StartTrialStartsAQueuedTrialWithALease) {
  const int64_t study = study_with_trials("s", 2);
  const TrialRecord queued = store_->list_trials(study, {})[1];
  const int64_t before = store_->last_trial_change();
  std::optional<Claim> c = store_->start_trial(queued.id, "w1", kDeliveryLease);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->trial_id, queued.id);
  EXPECT_EQ(c->attempt, 1);
  EXPECT_EQ(c->study_id, study);
  EXPECT_EQ(c->number, 1);
  EXPECT_EQ(c->dataset, "iris");
  EXPECT_EQ(c->params, queued.params);
  EXPECT_EQ(c->lease_expires, clock_.now() + kDeliveryLease);

  TrialRecord t = store_->get_trial(queued.id);
  EXPECT_EQ(t.status, TrialStatus::kRunning);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.lost, 0);
  EXPECT_EQ(t.worker_id, "w1");
  EXPECT_EQ(t.started_at, clock_.now());
  EXPECT_EQ(t.lease_expires, clock_.now() + kDeliveryLease);
  std::vector<AttemptRecord> a = store_->list_attempts(queued.id);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].worker_id, "w1");
  EXPECT_EQ(a[0].outcome, "");
  // The lease is renewed like a claimed one; the other trial is untouched.
  EXPECT_TRUE(store_->renew_lease(queued.id, 1, "w1", kDeliveryLease));
  EXPECT_EQ(store_->counts(study)[TrialStatus::kQueued], 1);
  std::vector<TrialRecord> changed = store_->trials_changed_since(before, 100);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].id, queued.id);
  EXPECT_EQ(changed[0].status, TrialStatus::kRunning);
}

// Deliveries in hand start in one transaction: each gets what start_trial would give it,
// in order, and an unknown id (another store's message) is reported, not an error.
TEST_P(StoreTest, StartTrialsStartsABatchInOneTransaction) {
  const int64_t study = study_with_trials("s", 4);
  const std::vector<TrialRecord> t = store_->list_trials(study, {});
  const Claim running = *store_->claim_next("w0", {.lease = kDeliveryLease});  // trial 0
  ASSERT_EQ(running.trial_id, t[0].id);
  ASSERT_TRUE(store_->finish_trial(store_->claim_next("w0", {.lease = kDeliveryLease})->trial_id, 1,
                                   TrialStatus::kCompleted, nullptr, 1.0, ""));  // trial 1
  const int64_t before = store_->last_trial_change();
  const uint64_t transactions = store_->stats().transactions;
  const std::vector<Store::Start> s =
      store_->start_trials({t[3].id, 999'999, t[1].id, t[0].id, t[2].id}, "w1", kDeliveryLease);
  EXPECT_EQ(store_->stats().transactions, transactions + 1);
  ASSERT_EQ(s.size(), 5u);
  ASSERT_TRUE(s[0].known && s[0].claim);
  EXPECT_EQ(s[0].claim->trial_id, t[3].id);
  EXPECT_EQ(s[0].claim->attempt, 1);
  EXPECT_EQ(s[0].claim->number, 3);
  EXPECT_FALSE(s[1].known);  // not in this store
  EXPECT_TRUE(s[2].known);
  EXPECT_FALSE(s[2].claim);  // finished: a redelivery of a committed result
  ASSERT_TRUE(s[3].claim);   // running elsewhere: redelivered, its attempt is lost
  EXPECT_EQ(s[3].claim->attempt, 2);
  EXPECT_EQ(store_->get_trial(t[0].id).lost, 1);
  EXPECT_EQ(store_->list_attempts(t[0].id)[0].outcome, "lost");
  ASSERT_TRUE(s[4].claim);
  EXPECT_EQ(s[4].claim->lease_expires, clock_.now() + kDeliveryLease);
  EXPECT_EQ(store_->get_trial(t[2].id).worker_id, "w1");
  EXPECT_EQ(store_->trials_changed_since(before, 100).size(), 3u);
  EXPECT_TRUE(store_->start_trials({}, "w1", kDeliveryLease).empty());
  // The same trial twice in one call: the second delivery finds the first running.
  const int64_t other = study_with_trials("t", 1);
  const int64_t id = store_->list_trials(other, {})[0].id;
  const std::vector<Store::Start> twice = store_->start_trials({id, id}, "w1", kDeliveryLease);
  ASSERT_TRUE(twice[0].claim && twice[1].claim);
  EXPECT_EQ(twice[1].claim->attempt, 2);
  EXPECT_EQ(store_->get_trial(id).lost, 1);
}

// A worker on short trials commits its results and starts what the broker sent ahead in
// one transaction: each part as finish_trials and start_trials would do it, finishes first.
TEST_P(StoreTest, FinishAndStartTrialsDoesBothInOneTransaction) {
  const int64_t study = study_with_trials("s", 4);
  const std::vector<TrialRecord> t = store_->list_trials(study, {});
  const std::vector<Store::Start> first =
      store_->start_trials({t[0].id, t[1].id}, "w1", kDeliveryLease);
  ASSERT_TRUE(first[0].claim && first[1].claim);
  const int64_t before = store_->last_trial_change();
  const uint64_t transactions = store_->stats().transactions;
  const std::vector<TrialFinish> finishes = {
      {t[0].id, 1, TrialStatus::kCompleted, {{"ok", true}}, 0.9, "", {}},
      {t[1].id, 1, TrialStatus::kFailed, nullptr, std::nullopt, "boom", {}}};
  // t[1] is both finished and delivered again (a copy of its message): the finish comes
  // first, so the delivery finds a committed result and starts nothing.
  const Store::FinishedAndStarted done = store_->finish_and_start_trials(
      finishes, {t[2].id, t[1].id, t[3].id}, "w2", kDeliveryLease, 3);
  EXPECT_EQ(store_->stats().transactions, transactions + 1);
  EXPECT_EQ(done.applied, (std::vector<bool>{true, true}));
  ASSERT_EQ(done.starts.size(), 3u);
  ASSERT_TRUE(done.starts[0].claim);
  EXPECT_EQ(done.starts[0].claim->trial_id, t[2].id);
  EXPECT_EQ(done.starts[0].claim->attempt, 1);
  EXPECT_TRUE(done.starts[1].known);
  EXPECT_FALSE(done.starts[1].claim);
  ASSERT_TRUE(done.starts[2].claim);
  EXPECT_EQ(done.starts[2].claim->number, 3);
  EXPECT_EQ(store_->get_trial(t[0].id).status, TrialStatus::kCompleted);
  EXPECT_EQ(store_->get_trial(t[0].id).value, 0.9);
  EXPECT_EQ(store_->get_trial(t[1].id).status, TrialStatus::kFailed);
  EXPECT_EQ(store_->get_trial(t[1].id).error, "boom");
  EXPECT_EQ(store_->get_trial(t[3].id).worker_id, "w2");
  EXPECT_EQ(store_->counts(study)[TrialStatus::kRunning], 2);
  EXPECT_EQ(store_->trials_changed_since(before, 100).size(), 4u);
  // Either part may be empty.
  EXPECT_TRUE(store_->finish_and_start_trials({}, {}, "w2", kDeliveryLease, 3).applied.empty());
  const Store::FinishedAndStarted only_finish = store_->finish_and_start_trials(
      {{t[2].id, 1, TrialStatus::kCompleted, nullptr, 0.5, "", {}}}, {}, "", milliseconds(0), 0);
  EXPECT_EQ(only_finish.applied, std::vector<bool>{true});
  EXPECT_TRUE(only_finish.starts.empty());
}

// An error in either part writes nothing of the other: a bad start is refused before the
// transaction, and an unknown trial among the finishes rolls the starts back.
TEST_P(StoreTest, FinishAndStartTrialsWritesNothingWhenEitherPartFails) {
  const int64_t study = study_with_trials("s", 2);
  const std::vector<TrialRecord> t = store_->list_trials(study, {});
  ASSERT_TRUE(store_->start_trials({t[0].id}, "w1", kDeliveryLease)[0].claim);
  const int64_t change = store_->last_trial_change();
  const TrialFinish good{t[0].id, 1, TrialStatus::kCompleted, nullptr, 0.9, "", {}};
  EXPECT_STORE_ERROR(store_->finish_and_start_trials({good}, {t[1].id}, "", kDeliveryLease, 3),
                     ErrorCode::kInvalidArgument, "empty worker id");
  EXPECT_STORE_ERROR(store_->finish_and_start_trials({good}, {t[1].id}, "w1", milliseconds(0), 3),
                     ErrorCode::kInvalidArgument, "lease must be > 0");
  const TrialFinish unknown{t[1].id + 1000, 1, TrialStatus::kCompleted, nullptr, 0.9, "", {}};
  EXPECT_STORE_ERROR(
      store_->finish_and_start_trials({good, unknown}, {t[1].id}, "w1", kDeliveryLease, 3),
      ErrorCode::kNotFound, "no trial with id " + std::to_string(t[1].id + 1000));
  EXPECT_EQ(store_->get_trial(t[0].id).status, TrialStatus::kRunning);
  EXPECT_EQ(store_->get_trial(t[1].id).status, TrialStatus::kQueued);
  EXPECT_TRUE(store_->list_attempts(t[1].id).empty());
  EXPECT_EQ(store_->last_trial_change(), change);
}

// With a limit, the store fails a trial redelivered once too often itself: the count is its
// lost attempts, which a hand-back's fresh copy of the message does not reset.
TEST_P(StoreTest, StartTrialsFailsATrialWhoseRedeliveriesReachTheLimit) {
  const int64_t study = study_with_trials("s", 1);
  const int64_t id = store_->list_trials(study, {})[0].id;
  ASSERT_TRUE(store_->start_trials({id}, "w1", kDeliveryLease, 2)[0].claim);
  const std::vector<Store::Start> second = store_->start_trials({id}, "w2", kDeliveryLease, 2);
  ASSERT_TRUE(second[0].claim);  // one attempt lost: below the limit
  EXPECT_EQ(second[0].claim->attempt, 2);
  const int64_t before = store_->last_trial_change();
  const std::vector<Store::Start> third = store_->start_trials({id}, "w3", kDeliveryLease, 2);
  EXPECT_TRUE(third[0].known);
  EXPECT_TRUE(third[0].exhausted);
  EXPECT_FALSE(second[0].exhausted);
  EXPECT_FALSE(third[0].claim);
  const TrialRecord t = store_->get_trial(id);
  EXPECT_EQ(t.status, TrialStatus::kFailed);
  EXPECT_EQ(t.lost, 2);
  EXPECT_EQ(t.error, "delivered 2 times without a result (its workers died)");
  ASSERT_EQ(store_->list_attempts(id).size(), 2u);
  for (const AttemptRecord& a : store_->list_attempts(id)) EXPECT_EQ(a.outcome, "lost");
  EXPECT_EQ(store_->trials_changed_since(before, 10).size(), 1u);
  // A queued trial is never failed by the limit, whatever it lost before (hand-backs).
  const int64_t other = study_with_trials("t", 1);
  const int64_t queued = store_->list_trials(other, {})[0].id;
  EXPECT_TRUE(store_->start_trials({queued}, "w1", kDeliveryLease, 1)[0].claim);
}

TEST_P(StoreTest, RedeliveryLosesTheRunningAttemptAndStartsTheNext) {
  study_with_trials("s", 1);
  const Claim first = *store_->claim_next("w1", {.lease = kDeliveryLease});
  clock_.advance(milliseconds(500));
  const int64_t before = store_->last_trial_change();
  std::optional<Claim> second = store_->start_trial(first.trial_id, "w2", kDeliveryLease);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->attempt, 2);
  EXPECT_EQ(second->lease_expires, clock_.now() + kDeliveryLease);

  TrialRecord t = store_->get_trial(first.trial_id);
  EXPECT_EQ(t.status, TrialStatus::kRunning);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_EQ(t.lost, 1);
  EXPECT_EQ(t.worker_id, "w2");
  std::vector<AttemptRecord> a = store_->list_attempts(first.trial_id);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].outcome, "lost");
  EXPECT_EQ(a[0].finished_at, clock_.now());
  EXPECT_EQ(a[1].worker_id, "w2");
  EXPECT_EQ(a[1].outcome, "");
  // One change for the redelivery, in the trial's new state.
  std::vector<TrialRecord> changed = store_->trials_changed_since(before, 100);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].attempts, 2);

  // The first holder's writes no longer count; the second's do.
  EXPECT_FALSE(store_->renew_lease(first.trial_id, 1, "w1", kDeliveryLease));
  EXPECT_FALSE(store_->append_epochs(first.trial_id, 1, {{1, 0.5, 0.5, 0.5, 0.1, nullptr}}));
  EXPECT_FALSE(store_->finish_trial(first.trial_id, 1, TrialStatus::kCompleted, nullptr, 0.1, ""));
  EXPECT_TRUE(
      store_->finish_trial(first.trial_id, 2, TrialStatus::kCompleted, {{"ok", 1}}, 0.9, ""));
  EXPECT_EQ(store_->list_attempts(first.trial_id)[1].outcome, "completed");
}

TEST_P(StoreTest, FinishedOrCancelledTrialsAreNotStartedAndNothingIsWritten) {
  const int64_t study = study_with_trials("s", 2);
  const Claim c = *store_->claim_next("w1", {.study_id = study, .lease = kDeliveryLease});
  ASSERT_TRUE(store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kPruned, nullptr, 0.2, ""));
  store_->cancel_study(study);
  const TrialRecord cancelled =
      store_->list_trials(study, {.statuses = {TrialStatus::kCancelled}})[0];

  const int64_t change = store_->last_trial_change();
  const TrialRecord finished = store_->get_trial(c.trial_id);
  clock_.advance(milliseconds(10));
  EXPECT_FALSE(store_->start_trial(c.trial_id, "w2", kDeliveryLease));
  EXPECT_FALSE(store_->start_trial(cancelled.id, "w2", kDeliveryLease));

  const TrialRecord after = store_->get_trial(c.trial_id);
  EXPECT_EQ(after.status, TrialStatus::kPruned);
  EXPECT_EQ(after.attempts, finished.attempts);
  EXPECT_EQ(after.lost, 0);
  EXPECT_EQ(after.worker_id, "w1");
  EXPECT_EQ(after.finished_at, finished.finished_at);
  EXPECT_EQ(store_->list_attempts(c.trial_id).size(), 1u);
  EXPECT_EQ(store_->get_trial(cancelled.id).status, TrialStatus::kCancelled);
  EXPECT_TRUE(store_->list_attempts(cancelled.id).empty());
  EXPECT_EQ(store_->last_trial_change(), change);
}

TEST_P(StoreTest, StartAndFailRejectUnknownTrialsAndBadInput) {
  const int64_t study = study_with_trials("s", 1);
  const int64_t id = store_->list_trials(study, {})[0].id;
  EXPECT_STORE_ERROR(store_->start_trial(id + 1000, "w", kDeliveryLease), ErrorCode::kNotFound,
                     "start_trial: no trial with id " + std::to_string(id + 1000));
  EXPECT_STORE_ERROR(store_->fail_trial(id + 1000, "x"), ErrorCode::kNotFound,
                     "fail_trial: no trial with id " + std::to_string(id + 1000));
  EXPECT_STORE_ERROR(store_->start_trial(id, "", kDeliveryLease), ErrorCode::kInvalidArgument,
                     "empty worker id");
  EXPECT_STORE_ERROR(store_->start_trial(id, "w", milliseconds(0)), ErrorCode::kInvalidArgument,
                     "lease must be > 0");
  // Nothing was written.
  const TrialRecord t = store_->get_trial(id);
  EXPECT_EQ(t.status, TrialStatus::kQueued);
  EXPECT_EQ(t.attempts, 0);
  EXPECT_EQ(store_->trials_changed_since(0, 100).size(), 1u);  // its addition only
}

TEST_P(StoreTest, FailTrialFailsAQueuedTrialWithTheError) {
  const int64_t study = study_with_trials("s", 1);
  const int64_t id = store_->list_trials(study, {})[0].id;
  const int64_t before = store_->last_trial_change();
  EXPECT_TRUE(store_->fail_trial(id, "dead-lettered after 5 deliveries"));
  const TrialRecord t = store_->get_trial(id);
  EXPECT_EQ(t.status, TrialStatus::kFailed);
  EXPECT_EQ(t.error, "dead-lettered after 5 deliveries");
  EXPECT_EQ(t.finished_at, clock_.now());
  EXPECT_EQ(t.lost, 0);
  EXPECT_EQ(t.attempts, 0);
  EXPECT_FALSE(t.lease_expires);
  EXPECT_TRUE(store_->list_attempts(id).empty());
  std::vector<TrialRecord> changed = store_->trials_changed_since(before, 100);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].status, TrialStatus::kFailed);
  // Already finished: false, and nothing changes.
  clock_.advance(milliseconds(10));
  const int64_t change = store_->last_trial_change();
  EXPECT_FALSE(store_->fail_trial(id, "again"));
  EXPECT_EQ(store_->get_trial(id).error, "dead-lettered after 5 deliveries");
  EXPECT_EQ(store_->get_trial(id).finished_at, t.finished_at);
  EXPECT_EQ(store_->last_trial_change(), change);
  EXPECT_FALSE(store_->start_trial(id, "w", kDeliveryLease));
}

TEST_P(StoreTest, FailTrialLosesTheRunningAttempt) {
  const int64_t study = study_with_trials("s", 1);
  const Claim c = *store_->start_trial(store_->list_trials(study, {})[0].id, "w1", kDeliveryLease);
  clock_.advance(milliseconds(250));
  const int64_t before = store_->last_trial_change();
  EXPECT_TRUE(store_->fail_trial(c.trial_id, "delivery limit reached"));
  const TrialRecord t = store_->get_trial(c.trial_id);
  EXPECT_EQ(t.status, TrialStatus::kFailed);
  EXPECT_EQ(t.error, "delivery limit reached");
  EXPECT_EQ(t.lost, 1);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_FALSE(t.lease_expires);
  EXPECT_EQ(t.finished_at, clock_.now());
  std::vector<AttemptRecord> a = store_->list_attempts(c.trial_id);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].outcome, "lost");
  EXPECT_EQ(a[0].finished_at, clock_.now());
  EXPECT_EQ(store_->trials_changed_since(before, 100).size(), 1u);
  // Its worker's late report does not count; a finished trial cannot be failed.
  EXPECT_FALSE(
      store_->finish_trial(c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 1, ""));
  EXPECT_FALSE(store_->renew_lease(c.trial_id, c.attempt, "w1", kDeliveryLease));
  EXPECT_FALSE(store_->fail_trial(c.trial_id, "again"));
  EXPECT_EQ(store_->get_trial(c.trial_id).lost, 1);
}

TEST_P(StoreTest, EveryDeliveryChangeIsInTheChangeLog) {
  const int64_t study = study_with_trials("s", 1);
  const int64_t id = store_->list_trials(study, {})[0].id;
  std::vector<int64_t> seqs = {store_->last_trial_change()};
  auto changed_once = [&](TrialStatus status, int attempts) {
    std::vector<TrialRecord> changed = store_->trials_changed_since(seqs.back(), 100);
    ASSERT_EQ(changed.size(), 1u);
    EXPECT_EQ(changed[0].id, id);
    EXPECT_EQ(changed[0].status, status);
    EXPECT_EQ(changed[0].attempts, attempts);
    EXPECT_EQ(changed[0].seq, store_->last_trial_change());
    EXPECT_GT(changed[0].seq, seqs.back());
    seqs.push_back(changed[0].seq);
  };
  ASSERT_TRUE(store_->start_trial(id, "w1", kDeliveryLease));
  changed_once(TrialStatus::kRunning, 1);
  ASSERT_TRUE(store_->start_trial(id, "w2", kDeliveryLease));  // redelivered
  changed_once(TrialStatus::kRunning, 2);
  ASSERT_TRUE(store_->fail_trial(id, "delivery limit"));
  changed_once(TrialStatus::kFailed, 2);
}

// Trials a queue started ahead of its worker and never ran go back as if never started: in
// one transaction, queued with their attempt count, worker and start time as before, no
// attempt row, a change logged; the next start is the same attempt number.
TEST_P(StoreTest, GiveBackTrialsUndoesStartsThatRanNothing) {
  const int64_t study = study_with_trials("s", 3);
  const std::vector<TrialRecord> t = store_->list_trials(study, {});
  const std::vector<Store::Start> s =
      store_->start_trials({t[0].id, t[1].id, t[2].id}, "w1", kDeliveryLease);
  ASSERT_TRUE(s[0].claim && s[1].claim && s[2].claim);
  clock_.advance(milliseconds(20));
  const int64_t before = store_->last_trial_change();
  const uint64_t transactions = store_->stats().transactions;
  EXPECT_EQ(store_->give_back_trials({{t[0].id, 1}, {t[2].id, 1}}),
            (std::vector<bool>{true, true}));
  EXPECT_EQ(store_->stats().transactions, transactions + 1);
  for (int64_t id : {t[0].id, t[2].id}) {
    const TrialRecord back = store_->get_trial(id);
    EXPECT_EQ(back.status, TrialStatus::kQueued);
    EXPECT_EQ(back.attempts, 0);
    EXPECT_EQ(back.lost, 0);
    EXPECT_EQ(back.worker_id, "");
    EXPECT_FALSE(back.started_at);
    EXPECT_FALSE(back.lease_expires);
    EXPECT_TRUE(store_->list_attempts(id).empty());
  }
  EXPECT_EQ(store_->get_trial(t[1].id).status, TrialStatus::kRunning);  // not given back
  std::vector<TrialRecord> changed = store_->trials_changed_since(before, 100);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].status, TrialStatus::kQueued);
  EXPECT_EQ(store_->counts(study)[TrialStatus::kQueued], 2);
  // Their leases are gone with them: renewing fails, and the next start is attempt 1 again,
  // by delivery or by claim.
  EXPECT_FALSE(store_->renew_lease(t[0].id, 1, "w1", kDeliveryLease));
  std::optional<Claim> again = store_->start_trial(t[0].id, "w2", kDeliveryLease);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->attempt, 1);
  std::optional<Claim> claimed = store_->claim_next("w3", {.lease = kDeliveryLease});
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->trial_id, t[2].id);
  EXPECT_EQ(claimed->attempt, 1);
  ASSERT_EQ(store_->list_attempts(t[2].id).size(), 1u);
  EXPECT_EQ(store_->list_attempts(t[2].id)[0].worker_id, "w3");
}

// Given back after a redelivery: the lost attempt before it stays (and counts), and the
// trial names that attempt's worker and start again.
TEST_P(StoreTest, GiveBackAfterARedeliveryKeepsTheLostAttempt) {
  study_with_trials("s", 1);
  const Claim first = *store_->claim_next("w1", {.lease = kDeliveryLease});
  const Time first_start = clock_.now();
  clock_.advance(milliseconds(500));
  std::optional<Claim> second = store_->start_trial(first.trial_id, "w2", kDeliveryLease);
  ASSERT_TRUE(second);
  ASSERT_EQ(second->attempt, 2);
  EXPECT_EQ(store_->give_back_trials({{first.trial_id, 2}}), (std::vector<bool>{true}));
  const TrialRecord back = store_->get_trial(first.trial_id);
  EXPECT_EQ(back.status, TrialStatus::kQueued);
  EXPECT_EQ(back.attempts, 1);
  EXPECT_EQ(back.lost, 1);
  EXPECT_EQ(back.worker_id, "w1");
  EXPECT_EQ(back.started_at, first_start);
  std::vector<AttemptRecord> a = store_->list_attempts(first.trial_id);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].outcome, "lost");
  EXPECT_EQ(store_->start_trial(first.trial_id, "w3", kDeliveryLease)->attempt, 2);
}

// An attempt that stored epochs keeps them: it is released (outcome "released"), and the
// next start is the attempt after it. A stale or finished attempt changes nothing; a
// cancelled study's trial goes back cancelled.
TEST_P(StoreTest, GiveBackReleasesWhatStoredEpochsAndSkipsWhatIsNotCurrent) {
  const int64_t study = study_with_trials("s", 3);
  const std::vector<TrialRecord> t = store_->list_trials(study, {});
  const std::vector<Store::Start> s =
      store_->start_trials({t[0].id, t[1].id, t[2].id}, "w1", kDeliveryLease);
  ASSERT_TRUE(store_->append_epochs(t[0].id, 1, {{1, 0.5, 0.5, 0.5, 0.1, nullptr}}));
  ASSERT_TRUE(store_->finish_trial(t[1].id, 1, TrialStatus::kCompleted, nullptr, 0.9, ""));
  const int64_t before = store_->last_trial_change();
  EXPECT_EQ(store_->give_back_trials({{t[0].id, 1}, {t[1].id, 1}, {t[2].id, 2}}),
            (std::vector<bool>{true, false, false}));
  const TrialRecord kept = store_->get_trial(t[0].id);
  EXPECT_EQ(kept.status, TrialStatus::kQueued);
  EXPECT_EQ(kept.attempts, 1);
  ASSERT_EQ(store_->list_attempts(t[0].id).size(), 1u);
  EXPECT_EQ(store_->list_attempts(t[0].id)[0].outcome, "released");
  EXPECT_EQ(store_->list_epochs(t[0].id).size(), 1u);
  EXPECT_EQ(store_->get_trial(t[1].id).status, TrialStatus::kCompleted);
  EXPECT_EQ(store_->get_trial(t[2].id).status, TrialStatus::kRunning);
  EXPECT_EQ(store_->trials_changed_since(before, 100).size(), 1u);
  EXPECT_EQ(store_->start_trial(t[0].id, "w2", kDeliveryLease)->attempt, 2);

  store_->cancel_study(study);  // running trials keep running until their worker reports
  EXPECT_EQ(store_->give_back_trials({{t[2].id, 1}}), (std::vector<bool>{true}));
  const TrialRecord cancelled = store_->get_trial(t[2].id);
  EXPECT_EQ(cancelled.status, TrialStatus::kCancelled);
  EXPECT_EQ(cancelled.attempts, 0);
  EXPECT_TRUE(cancelled.finished_at);
  EXPECT_TRUE(store_->give_back_trials({}).empty());
  EXPECT_THROW(store_->give_back_trials({{t[2].id, 0}}), Error);
}

}  // namespace
}  // namespace layerlab::store
