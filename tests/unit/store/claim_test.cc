// Claiming, leases, retry limit, results keyed by (trial, attempt), hand-back.
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "store_test_util.h"

namespace layerlab::store {
namespace {

using std::chrono::milliseconds;
using testing::StoreTest;

constexpr milliseconds kClaimLease{1000};

ClaimOptions lease(milliseconds l, int max_attempts = 3, int64_t study = 0) {
  return {study, l, max_attempts};
}

TEST_P(StoreTest, ClaimTakesLowestNumberFirstAndMarksRunning) {
  int64_t study = store_->create_study("s", nullptr);
  store_->add_trials(study, {{2, "iris", {}}, {0, "wine", {{"u", 3}}}, {1, "iris", {}}});
  std::optional<Claim> c = store_->claim_next("w1", lease(kClaimLease));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->number, 0);
  EXPECT_EQ(c->attempt, 1);
  EXPECT_EQ(c->study_id, study);
  EXPECT_EQ(c->dataset, "wine");
  EXPECT_EQ(c->params, (nlohmann::json{{"u", 3}}));
  EXPECT_EQ(c->lease_expires, clock_.now() + kClaimLease);

  TrialRecord t = store_->get_trial(c->trial_id);
  EXPECT_EQ(t.status, TrialStatus::kRunning);
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.worker_id, "w1");
  EXPECT_EQ(t.started_at, clock_.now());
  EXPECT_EQ(t.lease_expires, clock_.now() + kClaimLease);
  std::vector<AttemptRecord> a = store_->list_attempts(c->trial_id);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].attempt, 1);
  EXPECT_EQ(a[0].worker_id, "w1");
  EXPECT_EQ(a[0].outcome, "");

  EXPECT_EQ(store_->claim_next("w2", lease(kClaimLease))->number, 1);
  EXPECT_EQ(store_->claim_next("w1", lease(kClaimLease))->number, 2);
  EXPECT_FALSE(store_->claim_next("w1", lease(kClaimLease)));
}

TEST_P(StoreTest, ClaimOrderAcrossStudiesAndStudyFilter) {
  int64_t first = study_with_trials("a", 2);
  int64_t second = study_with_trials("b", 2);
  std::optional<Claim> c = store_->claim_next("w", lease(kClaimLease, 3, second));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->study_id, second);
  EXPECT_EQ(c->number, 0);
  c = store_->claim_next("w", lease(kClaimLease));
  EXPECT_EQ(c->study_id, first);  // any study: oldest study first
  EXPECT_EQ(c->number, 0);
  EXPECT_STORE_ERROR(store_->claim_next("", {}), ErrorCode::kInvalidArgument, "empty worker id");
  EXPECT_STORE_ERROR(store_->claim_next("w", lease(milliseconds(0))), ErrorCode::kInvalidArgument,
                     "lease must be > 0");
  EXPECT_STORE_ERROR(store_->claim_next("w", lease(kClaimLease, 0)), ErrorCode::kInvalidArgument,
                     "max_attempts");
}

TEST_P(StoreTest, ExpiredLeaseRequeuesTheTrialForAnotherWorker) {
  study_with_trials("s", 2);
  std::optional<Claim> a = store_->claim_next("dead", lease(kClaimLease));
  ASSERT_TRUE(a);
  clock_.advance(kClaimLease);  // exactly at expiry: still held
  std::optional<Claim> b = store_->claim_next("w2", lease(kClaimLease));
  ASSERT_TRUE(b);
  EXPECT_NE(b->trial_id, a->trial_id);

  clock_.advance(milliseconds(1));
  std::optional<Claim> again = store_->claim_next("w3", lease(kClaimLease));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial_id, a->trial_id);
  EXPECT_EQ(again->attempt, 2);
  TrialRecord t = store_->get_trial(a->trial_id);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_EQ(t.lost, 1);
  EXPECT_EQ(t.worker_id, "w3");
  std::vector<AttemptRecord> attempts = store_->list_attempts(a->trial_id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].outcome, "lost");
  EXPECT_EQ(attempts[0].worker_id, "dead");
  EXPECT_EQ(attempts[1].outcome, "");
}

TEST_P(StoreTest, AfterTheRetryLimitTheTrialFailsWithTheReason) {
  int64_t study = study_with_trials("s", 1);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::string worker = "w";
    worker += std::to_string(attempt);
    std::optional<Claim> c = store_->claim_next(worker, lease(kClaimLease, 3));
    ASSERT_TRUE(c) << attempt;
    EXPECT_EQ(c->attempt, attempt);
    clock_.advance(kClaimLease + milliseconds(1));
  }
  // The third loss fails it instead of queueing it again: a poison trial does not loop.
  EXPECT_FALSE(store_->claim_next("w4", lease(kClaimLease, 3)));
  TrialRecord t = store_->list_trials(study, {})[0];
  EXPECT_EQ(t.status, TrialStatus::kFailed);
  EXPECT_EQ(t.lost, 3);
  EXPECT_EQ(t.error, "worker lost 3 times (lease expired; last worker w3)");
  EXPECT_EQ(t.finished_at, clock_.now());
  EXPECT_FALSE(t.lease_expires);
  EXPECT_EQ(store_->list_attempts(t.id).back().outcome, "lost");
  // Its last worker's late report is too late: a failed trial stays failed.
  EXPECT_FALSE(store_->finish_trial(t.id, 3, TrialStatus::kCompleted, nullptr, 1.0, ""));
}

TEST_P(StoreTest, ExpireLeasesSweepsWithoutClaiming) {
  int64_t a = study_with_trials("a", 2);
  int64_t b = study_with_trials("b", 1);
  ASSERT_TRUE(store_->claim_next("w", lease(kClaimLease)));
  ASSERT_TRUE(store_->claim_next("w", lease(kClaimLease)));
  ASSERT_TRUE(store_->claim_next("w", lease(kClaimLease)));
  clock_.advance(kClaimLease * 2);
  EXPECT_EQ(store_->expire_leases(lease(kClaimLease, 3, b)), 1);
  EXPECT_EQ(store_->counts(a)[TrialStatus::kRunning], 2);
  EXPECT_EQ(store_->expire_leases(lease(kClaimLease, 1)), 2);
  EXPECT_EQ(store_->counts(a)[TrialStatus::kFailed], 2);
  EXPECT_EQ(store_->counts(b)[TrialStatus::kQueued], 1);
  EXPECT_EQ(store_->expire_leases(lease(kClaimLease)), 0);
}

TEST_P(StoreTest, RenewLeaseKeepsTheTrialAndIsFalseForAStaleAttempt) {
  study_with_trials("s", 1);
  std::optional<Claim> c = store_->claim_next("w1", lease(kClaimLease));
  ASSERT_TRUE(c);
  for (int i = 0; i < 5; ++i) {
    clock_.advance(kClaimLease / 2);
    EXPECT_TRUE(store_->renew_lease(c->trial_id, c->attempt, "w1", kClaimLease));
    EXPECT_FALSE(store_->claim_next("w2", lease(kClaimLease)));
  }
  EXPECT_EQ(store_->get_trial(c->trial_id).lease_expires, clock_.now() + kClaimLease);
  EXPECT_FALSE(store_->renew_lease(c->trial_id, c->attempt, "someone-else", kClaimLease));
  EXPECT_FALSE(store_->renew_lease(c->trial_id, c->attempt + 1, "w1", kClaimLease));

  clock_.advance(kClaimLease + milliseconds(1));
  std::optional<Claim> taken = store_->claim_next("w2", lease(kClaimLease));
  ASSERT_TRUE(taken);
  EXPECT_FALSE(store_->renew_lease(c->trial_id, c->attempt, "w1", kClaimLease));
  EXPECT_TRUE(store_->renew_lease(taken->trial_id, taken->attempt, "w2", kClaimLease));
}

// A worker's leases in one transaction: each of its running attempts is extended, another
// worker's, a wrong attempt and a finished trial are not and keep nothing back.
TEST_P(StoreTest, RenewLeasesExtendsEveryAttemptOfTheWorkerInOneTransaction) {
  const int64_t study = study_with_trials("s", 4);
  std::vector<Claim> c;
  for (const char* w : {"w1", "w1", "w1", "w2"})
    c.push_back(*store_->claim_next(w, lease(kClaimLease, 3, study)));
  ASSERT_TRUE(
      store_->finish_trial(c[2].trial_id, c[2].attempt, TrialStatus::kCompleted, nullptr, 0.5, ""));
  clock_.advance(kClaimLease / 2);
  const uint64_t before = store_->stats().transactions;
  EXPECT_EQ(store_->renew_leases({{c[0].trial_id, c[0].attempt},
                                  {c[1].trial_id, c[1].attempt},
                                  {c[1].trial_id, c[1].attempt + 1},
                                  {c[2].trial_id, c[2].attempt},
                                  {c[3].trial_id, c[3].attempt}},
                                 "w1", kClaimLease),
            (std::vector<bool>{true, true, false, false, false}));
  EXPECT_EQ(store_->stats().transactions, before + 1);
  EXPECT_EQ(store_->get_trial(c[0].trial_id).lease_expires, clock_.now() + kClaimLease);
  EXPECT_EQ(store_->get_trial(c[1].trial_id).lease_expires, clock_.now() + kClaimLease);
  EXPECT_EQ(store_->get_trial(c[3].trial_id).lease_expires,
            clock_.now() - kClaimLease / 2 + kClaimLease);  // w2's: as it was claimed
  EXPECT_TRUE(store_->renew_leases({}, "w1", kClaimLease).empty());
  EXPECT_STORE_ERROR(store_->renew_leases({{c[0].trial_id, c[0].attempt}}, "w1", milliseconds(0)),
                     ErrorCode::kInvalidArgument, "lease must be > 0");
}

TEST_P(StoreTest, FinishTrialIsKeyedByTrialAndAttempt) {
  study_with_trials("s", 1);
  std::optional<Claim> first = store_->claim_next("slow", lease(kClaimLease));
  ASSERT_TRUE(first);
  clock_.advance(kClaimLease + milliseconds(1));
  std::optional<Claim> second = store_->claim_next("fast", lease(kClaimLease));
  ASSERT_TRUE(second);
  ASSERT_EQ(second->attempt, 2);

  nlohmann::json result = {{"val_accuracy", 0.93}, {"epochs", 12}};
  EXPECT_TRUE(store_->finish_trial(second->trial_id, 2, TrialStatus::kCompleted, result, 0.93, ""));
  // The slow first attempt reports late, and the second reports twice: nothing changes.
  EXPECT_FALSE(store_->finish_trial(first->trial_id, 1, TrialStatus::kDiverged,
                                    {{"val_accuracy", 0.1}}, 0.1, "nan loss"));
  EXPECT_FALSE(store_->finish_trial(second->trial_id, 2, TrialStatus::kCompleted,
                                    {{"val_accuracy", 0.5}}, 0.5, ""));
  TrialRecord t = store_->get_trial(second->trial_id);
  EXPECT_EQ(t.status, TrialStatus::kCompleted);
  EXPECT_EQ(t.result, result);
  EXPECT_EQ(t.value, 0.93);
  EXPECT_EQ(t.error, "");
  EXPECT_EQ(t.finished_at, clock_.now());
  EXPECT_FALSE(t.lease_expires);
  std::vector<AttemptRecord> a = store_->list_attempts(t.id);
  EXPECT_EQ(a[0].outcome, "lost");
  EXPECT_EQ(a[1].outcome, "completed");
  EXPECT_EQ(a[1].finished_at, clock_.now());

  EXPECT_STORE_ERROR(store_->finish_trial(t.id, 2, TrialStatus::kRunning, nullptr, {}, ""),
                     ErrorCode::kInvalidArgument, "'running' is not a finished status");
  EXPECT_STORE_ERROR(store_->finish_trial(777, 1, TrialStatus::kFailed, nullptr, {}, "x"),
                     ErrorCode::kNotFound, "no trial with id 777");
  // Attempt 0 would match a trial that was never claimed.
  EXPECT_STORE_ERROR(store_->finish_trial(t.id, 0, TrialStatus::kFailed, nullptr, {}, "x"),
                     ErrorCode::kInvalidArgument, "attempt numbers start at 1");
}

TEST_P(StoreTest, LateResultCountsWhenNobodyTookTheTrialOver) {
  study_with_trials("s", 1);
  std::optional<Claim> c = store_->claim_next("w", lease(kClaimLease));
  ASSERT_TRUE(c);
  clock_.advance(kClaimLease * 3);
  ASSERT_EQ(store_->expire_leases(lease(kClaimLease)), 1);  // requeued, not yet claimed
  EXPECT_TRUE(store_->finish_trial(c->trial_id, c->attempt, TrialStatus::kDiverged, nullptr,
                                   std::nullopt, "loss became NaN at epoch 3"));
  TrialRecord t = store_->get_trial(c->trial_id);
  EXPECT_EQ(t.status, TrialStatus::kDiverged);
  EXPECT_EQ(t.error, "loss became NaN at epoch 3");
  EXPECT_FALSE(store_->claim_next("w2", lease(kClaimLease)));
}

TEST_P(StoreTest, ReleaseHandsBackWithoutCountingAFailure) {
  study_with_trials("s", 1);
  // With max_attempts 1, one lost lease would fail it; hand-backs never do.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::optional<Claim> c = store_->claim_next("w", lease(kClaimLease, 1));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->attempt, attempt);
    EXPECT_TRUE(store_->release_trial(c->trial_id, c->attempt));
    EXPECT_FALSE(store_->release_trial(c->trial_id, c->attempt));  // already handed back
    TrialRecord t = store_->get_trial(c->trial_id);
    EXPECT_EQ(t.status, TrialStatus::kQueued);
    EXPECT_EQ(t.lost, 0);
    EXPECT_FALSE(t.lease_expires);
    EXPECT_EQ(store_->list_attempts(t.id).back().outcome, "released");
  }
  std::optional<Claim> last = store_->claim_next("w", lease(kClaimLease, 1));
  ASSERT_TRUE(last);
  EXPECT_FALSE(store_->release_trial(last->trial_id, last->attempt - 1));  // stale
  EXPECT_EQ(store_->get_trial(last->trial_id).status, TrialStatus::kRunning);
}

TEST_P(StoreTest, TrialsOfACancelledStudyAreNotRequeued) {
  int64_t study = study_with_trials("s", 2);
  std::optional<Claim> a = store_->claim_next("w", lease(kClaimLease));
  std::optional<Claim> b = store_->claim_next("w", lease(kClaimLease));
  ASSERT_TRUE(a && b);
  store_->cancel_study(study);
  EXPECT_TRUE(store_->release_trial(a->trial_id, a->attempt));
  EXPECT_EQ(store_->get_trial(a->trial_id).status, TrialStatus::kCancelled);
  clock_.advance(kClaimLease * 2);
  EXPECT_EQ(store_->expire_leases(lease(kClaimLease)), 1);
  EXPECT_EQ(store_->get_trial(b->trial_id).status, TrialStatus::kCancelled);
  EXPECT_EQ(store_->counts(study)[TrialStatus::kCancelled], 2);
}

TEST_P(StoreTest, SecondConnectionSeesClaims) {
  study_with_trials("s", 2);
  std::unique_ptr<Store> other = reopen();
  std::optional<Claim> a = store_->claim_next("w1", lease(kClaimLease));
  std::optional<Claim> b = other->claim_next("w2", lease(kClaimLease));
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->trial_id, b->trial_id);
  EXPECT_FALSE(other->claim_next("w2", lease(kClaimLease)));
}

// A worker without a study of its own passes the study it claimed from last: its claims
// start after that one and wrap around, so a small study does not wait behind every trial of
// a large one stored before it. A batch that runs out of one study goes on into the next.
TEST_P(StoreTest, ClaimsStartAfterTheStudyNamedAndWrapAround) {
  const int64_t a = study_with_trials("a", 3);
  const int64_t b = study_with_trials("b", 3);
  const int64_t c = study_with_trials("c", 3);
  using Claimed = std::vector<std::pair<int64_t, int64_t>>;  // (study, number) as returned
  const auto batch = [&](int64_t after, int max) {
    Claimed out;
    ClaimOptions o = lease(kClaimLease);
    o.after_study = after;
    for (const Claim& claim : store_->claim_batch("w", o, max))
      out.emplace_back(claim.study_id, claim.number);
    return out;
  };
  EXPECT_EQ(batch(0, 2), (Claimed{{a, 0}, {a, 1}}));  // none named: the oldest study first
  EXPECT_EQ(batch(a, 2), (Claimed{{b, 0}, {b, 1}}));
  EXPECT_EQ(batch(c, 1), (Claimed{{a, 2}}));  // none after the newest: from the oldest
  // c's three, then on around to b's last; the first, then the others by study and number.
  EXPECT_EQ(batch(b, 5), (Claimed{{c, 0}, {b, 2}, {c, 1}, {c, 2}}));
  EXPECT_TRUE(batch(c, 5).empty());
  EXPECT_EQ(store_->counts(a)[TrialStatus::kRunning] + store_->counts(b)[TrialStatus::kRunning] +
                store_->counts(c)[TrialStatus::kRunning],
            9);
  ClaimOptions negative = lease(kClaimLease);
  negative.after_study = -1;
  EXPECT_STORE_ERROR(store_->claim_next("w", negative), ErrorCode::kInvalidArgument,
                     "negative after_study");
}

TEST_P(StoreTest, ClaimsTheMostExpensiveQueuedTrialFirst) {
  const int64_t study = store_->create_study("costs", nlohmann::json::object());
  store_->add_trials(
      study,
      {{0, "iris", {}, 1.0}, {1, "iris", {}, 50.0}, {2, "iris", {}, 50.0}, {3, "iris", {}, 7.0}});
  std::vector<int64_t> order;
  while (auto c = store_->claim_next("w", {study})) order.push_back(c->number);
  EXPECT_EQ(order, (std::vector<int64_t>{1, 2, 3, 0}));  // ties by number
}

// A batch claim: the first queued trial, then (only when that one is fresh) the fresh ones
// among the next max - 1 in queue order. A retried trial is never taken ahead and comes
// alone, so a trial that kills its worker cannot cost the trials claimed with it attempts.
TEST_P(StoreTest, ABatchClaimTakesFreshTrialsAheadAndARetriedOneAlone) {
  const int64_t study = store_->create_study("batch", nlohmann::json::object());
  store_->add_trials(
      study,
      {{0, "iris", {}, 1.0}, {1, "iris", {}, 1.0}, {2, "iris", {}, 1.0}, {3, "iris", {}, 1.0}});
  std::optional<Claim> first = store_->claim_next("w", {study});
  ASSERT_TRUE(first);
  ASSERT_TRUE(store_->release_trial(first->trial_id, first->attempt));  // 0: queued, retried
  store_->add_trials(study, {{4, "iris", {}, 9.0}});                    // fresh, claimed first
  const auto batch = [&](int max) {
    std::vector<std::pair<int64_t, int>> out;  // (number, attempt) in the order returned
    for (const Claim& c : store_->claim_batch("w", {study}, max))
      out.emplace_back(c.number, c.attempt);
    return out;
  };
  using Claimed = std::vector<std::pair<int64_t, int>>;
  // The fresh head, then the fresh ones among the next in order: the retried one is left.
  EXPECT_EQ(batch(3), (Claimed{{4, 1}, {1, 1}}));
  EXPECT_EQ(batch(10), (Claimed{{0, 2}}));  // the retried head, alone
  EXPECT_EQ(batch(10), (Claimed{{2, 1}, {3, 1}}));
  EXPECT_TRUE(batch(10).empty());
  EXPECT_EQ(store_->counts(study)[TrialStatus::kRunning], 5);
}

TEST_P(StoreTest, ConcurrentClaimersOnSeveralConnectionsNeverClaimATrialTwice) {
  constexpr int kTrials = 120;
  const int64_t study = study_with_trials("s", kTrials);
  std::mutex mu;
  std::vector<Claim> all;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      try {
        auto store = reopen();  // a connection of its own, as another process would have
        std::mt19937 rng(static_cast<unsigned>(w));
        std::string id = "w";  // (not "w" + ...: GCC 12's -Wrestrict false positive)
        id += std::to_string(w);
        while (true) {
          std::vector<Claim> claims = store->claim_batch(id, lease(kClaimLease * 60, 3, study),
                                                         1 + static_cast<int>(rng() % 3));
          if (claims.empty()) break;
          std::vector<TrialFinish> finishes;
          for (const Claim& c : claims)
            finishes.push_back(
                {c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 1.0, "", {}});
          std::vector<bool> applied = store->finish_trials(finishes);
          for (bool a : applied) EXPECT_TRUE(a);
          std::lock_guard lock(mu);
          all.insert(all.end(), claims.begin(), claims.end());
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  for (auto& t : workers) t.join();
  std::set<int64_t> trials;
  for (const Claim& c : all) {
    EXPECT_EQ(c.attempt, 1);
    EXPECT_TRUE(trials.insert(c.trial_id).second) << "trial " << c.trial_id << " claimed twice";
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kTrials));
  EXPECT_EQ(store_->counts(study)[TrialStatus::kCompleted], kTrials);
  for (const TrialRecord& t : store_->list_trials(study, {})) EXPECT_EQ(t.attempts, 1);
}

// PostgreSQL claims from queued_trials (schema version 7), which triggers on trials keep:
// after every way a trial enters or leaves the queue, it holds exactly the queued trials.
TEST_P(StoreTest, QueuedTrialsTableFollowsEveryWayInAndOutOfTheQueue) {
  if (!postgres()) GTEST_SKIP() << "SQLite claims from trials itself";
  const std::string db = testing::PostgresService::database_of(url());
  auto sql = [&](const char* q) { return testing::PostgresService::instance().column(db, q); };
  auto expect_mirror = [&](const char* step, size_t queued) {
    const auto in_table = sql("SELECT trial_id FROM queued_trials ORDER BY trial_id");
    EXPECT_EQ(in_table, sql("SELECT id FROM trials WHERE status = 'queued' ORDER BY id")) << step;
    EXPECT_EQ(in_table.size(), queued) << step;
  };
  const int64_t study = study_with_trials("s", 5);
  expect_mirror("added", 5);
  const std::vector<Store::Start> delivered =
      store_->start_trials({sql("SELECT max(id) FROM trials").at(0)}, "w", kClaimLease * 10);
  ASSERT_TRUE(delivered.at(0).claim);
  expect_mirror("one started by a delivery", 4);
  const std::vector<Claim> two = store_->claim_batch("w", lease(kClaimLease), 2);
  ASSERT_EQ(two.size(), 2u);
  expect_mirror("two claimed", 2);
  ASSERT_TRUE(store_->release_trial(two[0].trial_id, two[0].attempt));
  expect_mirror("one released", 3);
  clock_.advance(kClaimLease * 2);
  ASSERT_EQ(store_->expire_leases(lease(kClaimLease)), 1);
  expect_mirror("a lease expired", 4);
  // The expired attempt reports before anyone claims the trial again: it leaves the queue.
  ASSERT_TRUE(store_->finish_trial(two[1].trial_id, two[1].attempt, TrialStatus::kCompleted,
                                   nullptr, 0.5, ""));
  expect_mirror("a requeued trial finished late", 3);
  store_->cancel_study(study);
  expect_mirror("cancelled", 0);
  EXPECT_FALSE(store_->claim_next("w", lease(kClaimLease)));
}

// A queued_trials row whose trial is no longer queued (left by a claim that rolled back while
// another writer finished the trial) is dropped by the next claim, which does not take the
// trial; the claim after it takes the queued one.
TEST_P(StoreTest, AClaimDropsAQueueRowWhoseTrialIsNoLongerQueued) {
  if (!postgres()) GTEST_SKIP() << "SQLite claims from trials itself";
  const std::string db = testing::PostgresService::database_of(url());
  study_with_trials("s", 2);
  const std::optional<Claim> done = store_->claim_next("w", lease(kClaimLease));
  ASSERT_TRUE(done);
  ASSERT_TRUE(store_->finish_trial(done->trial_id, done->attempt, TrialStatus::kCompleted, nullptr,
                                   0.5, ""));
  testing::PostgresService::instance().exec(
      db, ("INSERT INTO queued_trials (trial_id, study_id, cost, number, attempts) "
           "SELECT id, study_id, 1e9, number, 0 FROM trials WHERE id = " +
           std::to_string(done->trial_id)));
  EXPECT_FALSE(store_->claim_next("w", lease(kClaimLease)));
  const TrialRecord t = store_->get_trial(done->trial_id);
  EXPECT_EQ(t.status, TrialStatus::kCompleted);
  EXPECT_EQ(t.attempts, 1);
  const std::optional<Claim> next = store_->claim_next("w", lease(kClaimLease));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 1);
  EXPECT_FALSE(store_->claim_next("w", lease(kClaimLease)));
}

// A worker on short trials commits its results and claims its next trials in one
// transaction; an error in either takes both back.
TEST_P(StoreTest, FinishAndClaimCommitsResultsAndTheNextClaimsTogether) {
  const int64_t study = study_with_trials("s", 6);
  const std::vector<Claim> first = store_->claim_batch("w", lease(kClaimLease), 2);
  ASSERT_EQ(first.size(), 2u);
  const TrialFinish done{first[0].trial_id,
                         first[0].attempt,
                         TrialStatus::kCompleted,
                         nullptr,
                         0.5,
                         "",
                         {{1, 1.0, 1.0, 0.1, 0.1, nullptr}}};
  const TrialFinish stale{
      first[1].trial_id, first[1].attempt + 1, TrialStatus::kCompleted, nullptr, 0.5, "", {}};
  const uint64_t transactions = store_->stats().transactions;
  const Store::FinishedAndClaimed out =
      store_->finish_and_claim_trials({done, stale}, "w", lease(kClaimLease), 2);
  EXPECT_EQ(store_->stats().transactions, transactions + 1);
  EXPECT_EQ(out.applied, (std::vector<bool>{true, false}));
  ASSERT_EQ(out.claims.size(), 2u);
  EXPECT_EQ(out.claims[0].number, 2);
  EXPECT_EQ(out.claims[1].number, 3);
  EXPECT_EQ(out.claims[0].attempt, 1);
  EXPECT_EQ(store_->get_trial(first[0].trial_id).status, TrialStatus::kCompleted);
  EXPECT_EQ(store_->list_epochs(first[0].trial_id).size(), 1u);
  EXPECT_EQ(store_->get_trial(out.claims[1].trial_id).worker_id, "w");

  // An unknown trial among the results: nothing is finished, nothing claimed.
  const TrialFinish next{
      out.claims[0].trial_id, out.claims[0].attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}};
  const TrialFinish unknown{999'999, 1, TrialStatus::kCompleted, nullptr, 0.5, "", {}};
  EXPECT_STORE_ERROR(store_->finish_and_claim_trials({next, unknown}, "w", lease(kClaimLease), 2),
                     ErrorCode::kNotFound, "999999");
  StudyCounts counts = store_->counts(study);
  EXPECT_EQ(counts[TrialStatus::kCompleted], 1);
  EXPECT_EQ(counts[TrialStatus::kQueued], 2);
  // Bad arguments are refused before anything is written.
  EXPECT_STORE_ERROR(store_->finish_and_claim_trials({next}, "", lease(kClaimLease), 2),
                     ErrorCode::kInvalidArgument, "empty worker id");
  EXPECT_STORE_ERROR(store_->finish_and_claim_trials({next}, "w", lease(kClaimLease), 0),
                     ErrorCode::kInvalidArgument, "max must be positive");
  const TrialFinish not_finished{
      next.trial_id, next.attempt, TrialStatus::kRunning, nullptr, std::nullopt, "", {}};
  EXPECT_STORE_ERROR(store_->finish_and_claim_trials({not_finished}, "w", lease(kClaimLease), 2),
                     ErrorCode::kInvalidArgument, "not a finished status");
  counts = store_->counts(study);
  EXPECT_EQ(counts[TrialStatus::kCompleted], 1);
  EXPECT_EQ(counts[TrialStatus::kQueued], 2);
  EXPECT_EQ(counts[TrialStatus::kRunning], 3);
}

// On PostgreSQL, claims leave dead entries at the head of queued_trials' indexes, which
// every later claim walks until a VACUUM removes them: the store vacuums about every 4,096
// trials claimed (pg_store.cc). 5,000 claims log 5,000 consecutive change ids, so one or two
// of them are multiples of 4,096. SQLite deletes in place and never vacuums.
TEST_P(StoreTest, ClaimsVacuumTheQueueEveryFewThousandTrials) {
  study_with_trials("s", 5000);
  size_t claimed = 0;
  for (;;) {
    const std::vector<Claim> claims = store_->claim_batch("w", lease(kClaimLease), 32);
    if (claims.empty()) break;
    claimed += claims.size();
  }
  EXPECT_EQ(claimed, 5000u);
  const uint64_t vacuums = store_->stats().queue_vacuums;
  if (!postgres()) {
    EXPECT_EQ(vacuums, 0u);
    return;
  }
  EXPECT_GE(vacuums, 1u);
  EXPECT_LE(vacuums, 2u);
  const std::string db = testing::PostgresService::database_of(url());
  EXPECT_GE(testing::PostgresService::instance()
                .column(db,
                        "SELECT vacuum_count FROM pg_stat_user_tables "
                        "WHERE relname = 'queued_trials'")
                .at(0),
            1);
}

// On PostgreSQL a claim's transaction runs on generic plans (Db::plan_generically, whose
// own test shows the server keeps to them): its LIMIT and lease range on parameters made
// PostgreSQL plan the claim anew at every call. Not behind a transaction pooler (statements
// go unnamed there) nor on SQLite.
TEST_P(StoreTest, ClaimsRunOnGenericPlansOnPostgres) {
  study_with_trials("s", 6);
  const uint64_t before = store_->stats().generic_plan_transactions;
  const Claim a = *store_->claim_next("w", lease(kClaimLease));
  store_->claim_batch("w", lease(kClaimLease), 2);
  const TrialFinish done{a.trial_id, a.attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}};
  EXPECT_EQ(store_->finish_and_claim_trials({done}, "w", lease(kClaimLease), 2).claims.size(), 2u);
  const uint64_t after = store_->stats().generic_plan_transactions;
  EXPECT_EQ(after - before, backend() == testing::Backend::kPostgres ? 3u : 0u);
}

TEST_P(StoreTest, FinishTrialsAppliesEachReportOnceAndIsAllOrNothing) {
  const int64_t study = study_with_trials("s", 4);
  const Claim a = *store_->claim_next("w", lease(kClaimLease));
  const Claim b = *store_->claim_next("w", lease(kClaimLease));
  const Claim c = *store_->claim_next("w", lease(kClaimLease));
  const Claim d = *store_->claim_next("w", lease(kClaimLease));
  // A duplicate report of a, a stale attempt of b, epochs of c with epoch 1 written twice.
  std::vector<bool> applied = store_->finish_trials({
      {a.trial_id, a.attempt, TrialStatus::kCompleted, {{"v", 1}}, 0.1, "", {}},
      {a.trial_id, a.attempt, TrialStatus::kFailed, nullptr, std::nullopt, "dup", {}},
      {b.trial_id, b.attempt + 1, TrialStatus::kCompleted, nullptr, 0.2, "", {}},
      {c.trial_id,
       c.attempt,
       TrialStatus::kPruned,
       nullptr,
       0.3,
       "",
       {{1, 1.0, 1.0, 0.1, 0.1, nullptr},
        {2, 0.5, 0.6, 0.2, 0.1, {{"lr", 0.01}}},
        {1, 0.9, 0.9, 0.15, 0.1, nullptr}}},
  });
  EXPECT_EQ(applied, (std::vector<bool>{true, false, false, true}));
  TrialRecord ta = store_->get_trial(a.trial_id);
  EXPECT_EQ(ta.status, TrialStatus::kCompleted);
  EXPECT_EQ(ta.result, (nlohmann::json{{"v", 1}}));
  EXPECT_EQ(ta.value, 0.1);
  EXPECT_EQ(ta.error, "");
  EXPECT_EQ(store_->get_trial(b.trial_id).status, TrialStatus::kRunning);
  EXPECT_EQ(store_->get_trial(c.trial_id).status, TrialStatus::kPruned);
  EXPECT_EQ(store_->list_attempts(a.trial_id)[0].outcome, "completed");
  EXPECT_EQ(store_->list_attempts(b.trial_id)[0].outcome, "");
  EXPECT_EQ(store_->list_attempts(c.trial_id)[0].outcome, "pruned");
  std::vector<EpochRecord> epochs = store_->list_epochs(c.trial_id);
  ASSERT_EQ(epochs.size(), 2u);
  EXPECT_EQ(epochs[0].row.val_metric, 0.15);  // the last version of epoch 1
  EXPECT_EQ(epochs[1].row.extra, (nlohmann::json{{"lr", 0.01}}));

  // Several distinct trials in one call; a finished one is a late duplicate.
  EXPECT_EQ(store_->finish_trials(
                {{d.trial_id, d.attempt, TrialStatus::kDiverged, nullptr, std::nullopt, "nan", {}},
                 {c.trial_id, c.attempt, TrialStatus::kCompleted, nullptr, 1, "", {}}}),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(store_->get_trial(d.trial_id).error, "nan");
  EXPECT_FALSE(store_->get_trial(d.trial_id).value);

  // An unknown trial fails the whole call: nothing is written.
  const int64_t change = store_->last_trial_change();
  EXPECT_STORE_ERROR(store_->finish_trials(
                         {{b.trial_id, b.attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}},
                          {d.trial_id + 1000, 1, TrialStatus::kCompleted, nullptr, 0.5, "", {}}}),
                     ErrorCode::kNotFound, "no trial with id " + std::to_string(d.trial_id + 1000));
  EXPECT_EQ(store_->get_trial(b.trial_id).status, TrialStatus::kRunning);
  EXPECT_EQ(store_->last_trial_change(), change);
  EXPECT_EQ(store_->counts(study)[TrialStatus::kRunning], 1);
  EXPECT_TRUE(store_->finish_trials({}).empty());
}

}  // namespace
}  // namespace layerlab::store
