// The store-backed queue: receive/ack/requeue over a SQLite store, and leases kept alive
// by the LeaseKeeper while a "training" thread sleeps past the lease.
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "../store/store_test_util.h"
#include "queue/trial_queue.h"

namespace layerlab::queue {
namespace {

using std::chrono::milliseconds;
using store::testing::StoreTest;
using store::testing::TempDir;

StoreQueueOptions fast(milliseconds lease = milliseconds(30'000)) {
  StoreQueueOptions o;
  o.lease = lease;
  o.poll_min = milliseconds(1);
  o.poll_max = milliseconds(10);
  return o;
}

TEST_F(StoreTest, StoreQueueDeliversInOrderAndAcks) {
  int64_t study = study_with_trials("s", 3);
  auto queue = make_store_queue(*store_, "w1", fast());
  queue->publish(study, {1, 2, 3});  // no-op: the rows are the queue
  for (int i = 0; i < 3; ++i) {
    std::optional<Delivery> d = queue->receive(milliseconds(0));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->number, i);
    EXPECT_EQ(d->attempt, 1);
    EXPECT_EQ(d->study_id, study);
    EXPECT_EQ(d->dataset, "iris");
    EXPECT_EQ(d->params["units"], 8 * (i + 1));
    EXPECT_FALSE(queue->lost(*d));
    ASSERT_TRUE(store_->finish_trial(d->trial_id, d->attempt, store::TrialStatus::kCompleted,
                                     nullptr, 1.0, ""));
    queue->ack(*d);
  }
  EXPECT_FALSE(queue->receive(milliseconds(0)));
  EXPECT_EQ(store_->counts(study)[store::TrialStatus::kCompleted], 3);
}

TEST_F(StoreTest, StoreQueueRequeueHandsTheTrialBack) {
  study_with_trials("s", 1);
  auto queue = make_store_queue(*store_, "w1", fast());
  std::optional<Delivery> d = queue->receive(milliseconds(0));
  ASSERT_TRUE(d);
  queue->requeue(*d);
  store::TrialRecord t = store_->get_trial(d->trial_id);
  EXPECT_EQ(t.status, store::TrialStatus::kQueued);
  EXPECT_EQ(t.lost, 0);
  std::optional<Delivery> again = queue->receive(milliseconds(0));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial_id, d->trial_id);
  EXPECT_EQ(again->attempt, 2);
}

TEST_F(StoreTest, StoreQueueReceiveWaitsThenGivesUp) {
  study_with_trials("s", 0);
  auto queue = make_store_queue(*store_, "w1", fast());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(queue->receive(milliseconds(60)));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, milliseconds(60)) << "it waited the time it was given";
}

TEST_F(StoreTest, StoreQueueReceivesATrialAddedWhileWaiting) {
  int64_t study = study_with_trials("s", 0);
  auto queue = make_store_queue(*store_, "w1", fast());
  std::thread coordinator([&] {
    std::this_thread::sleep_for(milliseconds(50));
    reopen()->add_trials(study, {{0, "wine", {}}});
  });
  std::optional<Delivery> d = queue->receive(milliseconds(10'000));
  coordinator.join();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->dataset, "wine");
}

// A worker told to stop (SIGTERM) while it polls for work leaves at once, not when its wait
// runs out; with work waiting, receive() still claims it.
TEST_F(StoreTest, StoreQueueReceiveReturnsSoonAfterTheStopFlagIsSet) {
  int64_t study = study_with_trials("s", 0);
  std::atomic<bool> stop{false};
  StoreQueueOptions o = fast();
  o.poll_max = milliseconds(60'000);  // without the flag, one pause could outlast the test
  o.stop = &stop;
  auto queue = make_store_queue(*store_, "w1", o);
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(queue->receive(std::chrono::minutes(2)));
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1))
      << "it waited for its work rather than for the stop flag";
  store_->add_trials(study, {{0, "wine", {}}});
  EXPECT_TRUE(queue->receive(milliseconds(0)));
}

TEST_F(StoreTest, StoreQueueStudyFilter) {
  study_with_trials("a", 1);
  int64_t b = study_with_trials("b", 1);
  StoreQueueOptions o = fast();
  o.study_id = b;
  auto queue = make_store_queue(*store_, "w1", o);
  std::optional<Delivery> d = queue->receive(milliseconds(0));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->study_id, b);
  EXPECT_FALSE(queue->receive(milliseconds(0)));
}

TEST_F(StoreTest, StoreQueueRejectsBadOptions) {
  EXPECT_STORE_ERROR(make_store_queue(*store_, ""), ErrorCode::kInvalidArgument, "empty worker id");
  StoreQueueOptions o = fast();
  o.lease = milliseconds(1);
  EXPECT_STORE_ERROR(make_store_queue(*store_, "w", o), ErrorCode::kInvalidArgument, "lease");
  o = fast();
  o.poll_max = milliseconds(0);
  EXPECT_STORE_ERROR(make_store_queue(*store_, "w", o), ErrorCode::kInvalidArgument, "poll_min");
  o = fast();
  o.max_attempts = 0;
  EXPECT_STORE_ERROR(make_store_queue(*store_, "w", o), ErrorCode::kInvalidArgument,
                     "max_attempts");
  o = fast();
  o.min_prefetch = 64;  // above max_prefetch (32)
  EXPECT_STORE_ERROR(make_store_queue(*store_, "w", o), ErrorCode::kInvalidArgument,
                     "min_prefetch <= max_prefetch");
  o.min_prefetch = 0;
  EXPECT_STORE_ERROR(make_store_queue(*store_, "w", o), ErrorCode::kInvalidArgument,
                     "1 <= min_prefetch");
}

// A worker training packs of K asks for K trials per claim, even for its first receive.
TEST_F(StoreTest, StoreQueueClaimsAtLeastMinPrefetchAtOnce) {
  int64_t study = study_with_trials("s", 10);
  StoreQueueOptions o = fast();
  o.min_prefetch = 4;
  auto queue = make_store_queue(*store_, "w1", o);
  const auto before = store_->stats().transactions;
  std::vector<int64_t> numbers;
  for (int i = 0; i < 4; ++i) {
    std::optional<Delivery> d = queue->receive(milliseconds(0));
    ASSERT_TRUE(d);
    numbers.push_back(d->number);
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(store_->stats().transactions - before, 1) << "one claim transaction for the pack";
  EXPECT_EQ(store_->counts(study)[store::TrialStatus::kRunning], 4);
  queue->close();
}

// A commit that waits for the database is the queue's time, not the trial's: short trials
// whose results take long to commit still share claim transactions. (Before, a commit
// slower than 20 ms made the queue claim one trial at a time, just when transactions were
// dearest.) Real time: another connection holds SQLite's write lock through each commit.
TEST_F(StoreTest, StoreQueueDoesNotCountItsOwnSlowCommitsAsTrialTime) {
  const int64_t study = study_with_trials("s", 40);
  auto queue = make_store_queue(*store_, "w1", fast());
  int64_t most_ahead = 0;  // trials claimed but not yet received, at most
  for (int cycle = 0; cycle < 6; ++cycle) {
    std::optional<Delivery> d = queue->receive(milliseconds(0));
    ASSERT_TRUE(d);
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open(url().substr(7).c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    std::thread holder([other] {
      std::this_thread::sleep_for(milliseconds(60));
      sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
      sqlite3_close(other);
    });
    const store::TrialFinish done{
        d->trial_id, d->attempt, store::TrialStatus::kCompleted, nullptr, 1.0, "", {}};
    const std::vector<bool> applied = queue->finish({done});  // waits for the lock
    holder.join();
    ASSERT_EQ(applied, std::vector<bool>{true});
    queue->ack(*d);
    most_ahead = std::max(most_ahead, store_->counts(study)[store::TrialStatus::kRunning]);
  }
  EXPECT_GT(most_ahead, 0) << "every claim took one trial: the slow commits counted as trials";
  queue->close();
}

// Real time from here on: the lease keeper is a real thread.
class LeaseTest : public ::testing::Test {
 protected:
  std::string url() const { return "sqlite:" + dir_.path("lease.db"); }
  int64_t setup_one_trial() {
    auto s = store::open_store(url());
    int64_t study = s->create_study("s", nullptr);
    return s->add_trials(study, {{0, "iris", {}}})[0];
  }
  TempDir dir_;
};

TEST_F(LeaseTest, KeeperRenewsWhileTrainingSleepsPastTheLease) {
  const milliseconds lease(300);  // renewed every 100 ms; a renewal may run 200 ms late
  int64_t trial = setup_one_trial();
  auto mine = store::open_store(url());
  auto queue = make_store_queue(*mine, "trainer", fast(lease));
  std::optional<Delivery> d = queue->receive(milliseconds(0));
  ASSERT_TRUE(d);
  ASSERT_EQ(d->trial_id, trial);
  store::Time first_expiry = *mine->get_trial(trial).lease_expires;

  // "Training": this thread sleeps for 4 leases without touching the queue, while another
  // worker keeps trying to claim.
  auto other = store::open_store(url());
  auto rival = make_store_queue(*other, "rival", fast(lease));
  std::thread training([] { std::this_thread::sleep_for(milliseconds(1200)); });
  std::optional<Delivery> stolen = rival->receive(milliseconds(1200));
  training.join();
  EXPECT_FALSE(stolen) << "the rival took trial " << stolen->trial_id << " attempt "
                       << stolen->attempt;

  store::TrialRecord t = mine->get_trial(trial);
  EXPECT_EQ(t.status, store::TrialStatus::kRunning);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_GT(*t.lease_expires, first_expiry);  // renewed
  EXPECT_FALSE(queue->lost(*d));
  EXPECT_TRUE(
      mine->finish_trial(trial, d->attempt, store::TrialStatus::kCompleted, nullptr, 0.5, ""));
  queue->ack(*d);
}

TEST_F(LeaseTest, WithoutAKeeperTheLeaseRunsOutAndTheOwnerLearnsItLostIt) {
  const milliseconds lease(200);
  int64_t trial = setup_one_trial();
  auto mine = store::open_store(url());
  // Claimed directly, so nobody renews: another worker takes it over after the lease.
  std::optional<store::Claim> c = mine->claim_next("hung", {0, lease, 3});
  ASSERT_TRUE(c);
  auto other = store::open_store(url());
  auto rival = make_store_queue(*other, "rival", fast(lease));
  std::optional<Delivery> taken = rival->receive(milliseconds(10'000));
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->trial_id, trial);
  EXPECT_EQ(taken->attempt, 2);
  EXPECT_FALSE(mine->renew_lease(trial, c->attempt, "hung", lease));
  EXPECT_FALSE(
      mine->finish_trial(trial, c->attempt, store::TrialStatus::kCompleted, nullptr, 0.1, ""));
  rival->ack(*taken);
}

TEST_F(StoreTest, StoreQueuePrefetchesShortTrialsAndHandsThemBackOnClose) {
  int64_t study = study_with_trials("s", 20);
  auto queue = make_store_queue(*store_, "w1", fast());
  // Trials received back to back are short: the queue claims more per transaction.
  std::vector<int64_t> numbers;
  for (int i = 0; i < 4; ++i) {
    std::optional<Delivery> d = queue->receive(milliseconds(0));
    ASSERT_TRUE(d);
    numbers.push_back(d->number);
    ASSERT_TRUE(store_->finish_trial(d->trial_id, d->attempt, store::TrialStatus::kCompleted,
                                     nullptr, 1.0, ""));
    queue->ack(*d);
  }
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 1, 2, 3}));
  const store::StudyCounts held = store_->counts(study);
  EXPECT_GT(held[store::TrialStatus::kRunning], 0) << "nothing was claimed ahead";
  const auto before_close = store_->stats().transactions;
  queue->close();
  EXPECT_EQ(store_->stats().transactions - before_close, 1) << "one transaction hands all back";
  const store::StudyCounts after = store_->counts(study);
  EXPECT_EQ(after[store::TrialStatus::kRunning], 0);
  EXPECT_EQ(after[store::TrialStatus::kQueued], 16);
  // Given back as if never claimed: the next claim is attempt 1 of the lowest remaining
  // number, with no lost or released attempt before it.
  std::optional<store::Claim> c = store_->claim_next("w2", {study});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->number, 4);
  EXPECT_EQ(c->attempt, 1);
  EXPECT_EQ(store_->get_trial(c->trial_id).lost, 0);
  EXPECT_EQ(store_->list_attempts(c->trial_id).size(), 1u);
}

// While trials are short, committing results also tops the trials in hand up to a batch:
// a batch costs one transaction, not two, and the trials still come in order. (Batches of
// 8 from the start, so only "short" depends on the clock: a receive delayed past 20 ms by
// the scheduler costs one transaction more, which the bound allows once.)
TEST_F(StoreTest, StoreQueueClaimsTheNextBatchInTheResultsTransaction) {
  const int64_t study = study_with_trials("s", 48);
  StoreQueueOptions o = fast();
  o.min_prefetch = 8;
  o.max_prefetch = 8;
  auto queue = make_store_queue(*store_, "w1", o);
  std::vector<int64_t> numbers;
  std::vector<uint64_t> per_cycle;
  for (int cycle = 0; cycle < 6; ++cycle) {
    const auto before = store_->stats().transactions;
    std::vector<Delivery> batch;
    std::vector<store::TrialFinish> finishes;
    for (int i = 0; i < 8; ++i) {
      std::optional<Delivery> d = queue->receive(milliseconds(0));
      ASSERT_TRUE(d);
      numbers.push_back(d->number);
      finishes.push_back(
          {d->trial_id, d->attempt, store::TrialStatus::kCompleted, nullptr, 1.0, "", {}});
      batch.push_back(std::move(*d));
    }
    EXPECT_EQ(queue->finish(finishes), std::vector<bool>(8, true));
    for (const Delivery& d : batch) queue->ack(d);
    per_cycle.push_back(store_->stats().transactions - before);
  }
  std::vector<int64_t> in_order(48);
  for (int i = 0; i < 48; ++i) in_order[i] = i;
  EXPECT_EQ(numbers, in_order);
  // The first cycle claims, then commits its results with the next claim; from then on the
  // results' transaction carries each claim: 5 for cycles 1-5 (10 with a claim of their own).
  uint64_t after_first = 0;
  for (size_t c = 1; c < per_cycle.size(); ++c) after_first += per_cycle[c];
  EXPECT_LE(after_first, 6u) << "results and claims in separate transactions";
  EXPECT_EQ(store_->counts(study)[store::TrialStatus::kCompleted], 48);
  queue->close();
}

// A claim that empties the queue learns how short it is: the worker's next claim takes at
// most half as many (one, after a claim that found none), and another worker gets the rest
// (a tpe study's window was claimed whole by one worker and trained one trial after another
// while the other worker idled).
TEST_F(StoreTest, StoreQueueTakesHalfOfAShortQueueAfterEmptyingOne) {
  StoreQueueOptions o = fast();
  o.max_prefetch = 8;
  auto a = make_store_queue(*store_, "a", o);
  auto b = make_store_queue(*store_, "b", o);
  const auto train = [&](TrialQueue& q) -> std::optional<int64_t> {
    std::optional<Delivery> d = q.receive(milliseconds(0));
    if (!d) return std::nullopt;
    EXPECT_TRUE(store_->finish_trial(d->trial_id, d->attempt, store::TrialStatus::kCompleted,
                                     nullptr, 1.0, ""));
    q.ack(*d);
    return d->number;
  };
  study_with_trials("first", 4);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(train(*a), i);
  EXPECT_FALSE(train(*a)) << "a emptied the queue";
  study_with_trials("second", 4);
  EXPECT_EQ(train(*a), 0);  // one claimed, none held
  EXPECT_EQ(train(*b), 1) << "b gets its share, not nothing";
  EXPECT_EQ(store_->counts(store_->find_study("second")->id)[store::TrialStatus::kCompleted], 2);
}

// ... but never fewer than a pack (min_prefetch): a worker training packs of 4 still asks
// for 4 after a claim that found 2.
TEST_F(StoreTest, StoreQueueStillAsksForAPackAfterEmptyingAShortQueue) {
  StoreQueueOptions o = fast();
  o.min_prefetch = 4;
  o.max_prefetch = 4;
  auto queue = make_store_queue(*store_, "packs", o);
  const int64_t first = study_with_trials("first", 2);
  for (int i = 0; i < 2; ++i) {
    std::optional<Delivery> d = queue->receive(milliseconds(0));
    ASSERT_TRUE(d);
    queue->ack(*d);
  }
  EXPECT_EQ(store_->counts(first)[store::TrialStatus::kRunning], 2);
  const int64_t second = study_with_trials("second", 8);
  ASSERT_TRUE(queue->receive(milliseconds(0)));
  EXPECT_EQ(store_->counts(second)[store::TrialStatus::kRunning], 4);
  queue->close();
}

TEST_F(StoreTest, ClaimBatchTakesTheLowestNumbersInOneTransaction) {
  int64_t study = study_with_trials("s", 5);
  const auto before = store_->stats().transactions;
  std::vector<store::Claim> claims = store_->claim_batch("w", {study}, 3);
  EXPECT_EQ(store_->stats().transactions, before + 1);
  ASSERT_EQ(claims.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(claims[i].number, i);
    EXPECT_EQ(claims[i].attempt, 1);
    EXPECT_EQ(store_->list_attempts(claims[i].trial_id).size(), 1u);
  }
  EXPECT_EQ(store_->claim_batch("w", {study}, 10).size(), 2u);
  EXPECT_TRUE(store_->claim_batch("w", {study}, 10).empty());
}

}  // namespace
}  // namespace layerlab::queue
