// The worker loop in process: a real SQLite store on a ManualClock, the store queue, the CPU
// backend, and a FaultHook that records, stops, steals or "kills" at chosen points. Time
// moves only when a test says so, so batching and lease loss are decided by the test, not
// by how fast the machine is.
#include "worker/slot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "queue/trial_queue.h"
#include "study/coordinator.h"
#include "study/spec.h"
#include "support/temp_and_errors.h"

namespace layerlab::worker {
namespace {

using std::chrono::milliseconds;
using store::TrialStatus;

// What a test hook throws to end the loop as a killed process would: not a std::exception,
// so no handler of the worker catches it.
struct Died {};

// Calls `on` at every point; records (point, trial number) in order.
class RecordingHook : public FaultHook {
 public:
  std::function<void(CrashPoint, int64_t)> on;
  std::vector<std::pair<CrashPoint, int64_t>> seen;
  void at(CrashPoint point, int64_t trial_number) override {
    seen.emplace_back(point, trial_number);
    if (on) on(point, trial_number);
  }
  std::vector<int64_t> numbers_at(CrashPoint point) const {
    std::vector<int64_t> out;
    for (const auto& [p, n] : seen)
      if (p == point) out.push_back(n);
    return out;
  }
};

class SlotTest : public ::testing::Test {
 protected:
  SlotTest() : store_(open_store()), backend_(backend::make_backend("cpu", 1)) {}

  // A connection to the test's store (on the test's clock unless given another), as another
  // worker would have.
  std::unique_ptr<store::Store> open_store(store::Clock* clock = nullptr) {
    store::StoreOptions o;
    o.clock = clock ? clock : &clock_;
    return store::open_store("sqlite:" + dir_.path("s.db"), o);
  }

  // A study of `shapes` x `seeds` iris trials of 2 epochs, numbered by the coordinator
  // (grouped by shape), marked finished so that a worker with exit_when_done returns once
  // the queue is empty.
  int64_t make_study(const std::string& name, int shapes, int seeds) {
    nlohmann::json layers = nlohmann::json::array();
    for (int i = 1; i <= shapes; ++i) layers.push_back(i);
    nlohmann::json seed_list = nlohmann::json::array();
    for (int i = 0; i < seeds; ++i) seed_list.push_back(i);
    spec_ = study::StudySpec::from_json({{"name", name},
                                         {"datasets", {"iris"}},
                                         {"seeds", seed_list},
                                         {"parameters",
                                          {{"hidden_layers", {{"values", layers}}},
                                           {"units", {{"value", 8}}},
                                           {"epochs", {{"value", 2}}}}}});
    const int64_t id = store_->create_study(name, spec_.to_json());
    auto feed = queue::make_store_queue(*store_, "coordinator");
    study::Coordinator coordinator(*store_, *feed, spec_, id);
    EXPECT_EQ(coordinator.top_up(1000), shapes * seeds);
    store_->set_study_status(id, store::StudyStatus::kFinished);
    return id;
  }

  // Runs one slot until the queue is empty (or a hook ends it); the queue is closed after.
  // max_prefetch 1 claims one trial at a time: none is taken ahead where a test steals one.
  WorkerSummary run_slot(int64_t study_id, int pack = 1, milliseconds lease = milliseconds(30'000),
                         int max_prefetch = 8) {
    queue::StoreQueueOptions qo;
    qo.lease = lease;
    qo.study_id = study_id;
    qo.min_prefetch = pack;
    qo.max_prefetch = std::max(max_prefetch, pack);
    queue_ = queue::make_store_queue(*store_, "w1", qo);
    WorkerOptions o;
    o.study_id = study_id;
    o.pack = pack;
    o.lease = lease;
    o.exit_when_done = true;
    WorkerSummary s;
    {
      Slot slot(o, stop_, "w1", {*store_, *queue_, *backend_, clock_, hook_});
      s = slot.run();
    }
    queue_->close();
    return s;
  }

  int64_t finished(int64_t study_id) { return store_->counts(study_id).finished(); }
  store::TrialRecord trial(int64_t study_id, int64_t number) {
    for (const store::TrialRecord& t : store_->list_trials(study_id, {}))
      if (t.number == number) return t;
    ADD_FAILURE() << "no trial " << number;
    return {};
  }

  testing::TempDir dir_;
  store::ManualClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<queue::TrialQueue> queue_;
  study::StudySpec spec_;
  RecordingHook hook_;
  std::atomic<bool> stop_{false};
};

TEST_F(SlotTest, ShortTrialsCommitTheirResults32AtATime) {
  const int64_t study = make_study("batch", 8, 5);
  std::vector<int64_t> done_at_commit;
  hook_.on = [&](CrashPoint p, int64_t) {
    if (p == CrashPoint::kAfterCommit) done_at_commit.push_back(finished(study));
  };
  const WorkerSummary s = run_slot(study);
  EXPECT_EQ(s.trials, 40);
  EXPECT_EQ(s.late, 0);
  ASSERT_EQ(done_at_commit.size(), 40u);
  // The clock stands still: every trial is short, and results wait for a batch of 32.
  EXPECT_EQ(std::count(done_at_commit.begin(), done_at_commit.end(), 32), 32);
  EXPECT_EQ(std::count(done_at_commit.begin(), done_at_commit.end(), 40), 8);
}

// Three short trials wait to share a commit; the fourth takes long (the clock moves during
// its first epoch): the three are committed during its training, not after it.
TEST_F(SlotTest, ResultsOfShortTrialsDoNotWaitForTheEndOfALongOne) {
  const int64_t study = make_study("short-then-long", 1, 5);
  int started = 0;
  int64_t long_trial = -1;
  hook_.on = [&](CrashPoint p, int64_t n) {
    if (p == CrashPoint::kBeforeTraining && ++started == 4) long_trial = n;
    if (p == CrashPoint::kAfterEpoch && n == long_trial) clock_.advance(milliseconds(500));
  };
  const WorkerSummary s = run_slot(study, 1, milliseconds(30'000), /*max_prefetch=*/1);
  EXPECT_EQ(s.trials, 5);
  ASSERT_GE(long_trial, 0);
  const auto end_of_long = std::find(hook_.seen.begin(), hook_.seen.end(),
                                     std::make_pair(CrashPoint::kAfterTraining, long_trial));
  ASSERT_NE(end_of_long, hook_.seen.end());
  EXPECT_EQ(std::count_if(hook_.seen.begin(), end_of_long,
                          [](const auto& e) { return e.first == CrashPoint::kAfterCommit; }),
            3);
}

TEST_F(SlotTest, APackTrainsTogetherOnlyTrialsOfOneShape) {
  // Trials of two shapes, interleaved by number: 0, 2, 4, 6 have one layer, 1, 3, 5, 7 two.
  const int64_t source = make_study("shapes", 2, 4);
  std::vector<store::NewTrial> mixed;
  std::vector<store::TrialRecord> by_shape = store_->list_trials(source, {});
  std::stable_sort(by_shape.begin(), by_shape.end(), [](const auto& a, const auto& b) {
    return a.params["seed"] < b.params["seed"];
  });
  for (size_t i = 0; i < by_shape.size(); ++i)
    mixed.push_back({static_cast<int64_t>(i), by_shape[i].dataset, by_shape[i].params});
  const int64_t study = store_->create_study("mixed", spec_.to_json());
  store_->add_trials(study, mixed);
  store_->set_study_status(study, store::StudyStatus::kFinished);
  for (size_t i = 0; i + 1 < mixed.size(); i += 2)
    ASSERT_NE(mixed[i].params["hidden_layers"], mixed[i + 1].params["hidden_layers"]);

  std::vector<int64_t> done_at_commit;
  hook_.on = [&](CrashPoint p, int64_t) {
    if (p == CrashPoint::kAfterCommit) done_at_commit.push_back(finished(study));
  };
  const WorkerSummary s = run_slot(study, /*pack=*/4);
  EXPECT_EQ(s.trials, 8);
  // Deliveries come 4 at a time (0-3, 4-7); each take trains as two packs, one per shape,
  // and a pack's results commit together.
  EXPECT_EQ(hook_.numbers_at(CrashPoint::kAfterTraining),
            (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(done_at_commit, (std::vector<int64_t>{2, 2, 4, 4, 6, 6, 8, 8}));
}

// A pack's epochs reach the store together at the end of an epoch, in one transaction, not
// member by member: with the flush interval passed during epoch 1, no member's row is
// written before the last member has reported that epoch, and then all four are.
TEST_F(SlotTest, APacksEpochsReachTheStoreTogether) {
  const int64_t study = make_study("pack-epochs", 1, 4);
  const auto stored = [&] {  // epochs stored per trial, by number
    std::vector<size_t> out;
    for (const store::TrialRecord& t : store_->list_trials(study, {}))
      out.push_back(store_->list_epochs(t.id).size());
    return out;
  };
  int epoch_ends = 0;
  std::vector<size_t> before_round_end, after_training;
  hook_.on = [&](CrashPoint p, int64_t) {
    if (p == CrashPoint::kAfterEpoch && ++epoch_ends == 1) clock_.advance(milliseconds(1500));
    if (p == CrashPoint::kAfterEpoch && epoch_ends == 4) before_round_end = stored();
    if (p == CrashPoint::kAfterTraining && after_training.empty()) after_training = stored();
  };
  const WorkerSummary s = run_slot(study, /*pack=*/4);
  EXPECT_EQ(s.trials, 4);
  EXPECT_EQ(before_round_end, (std::vector<size_t>{0, 0, 0, 0}));
  // Epoch 1 of every member came in the round's flush; epoch 2 waits for the results.
  EXPECT_EQ(after_training, (std::vector<size_t>{1, 1, 1, 1}));
  EXPECT_EQ(stored(), (std::vector<size_t>{2, 2, 2, 2}));
}

TEST_F(SlotTest, AStopRequestHandsBackTheTrialInTrainingAndCommitsWhatIsDone) {
  const int64_t study = make_study("stop", 1, 4);
  hook_.on = [&](CrashPoint p, int64_t number) {
    if (p == CrashPoint::kAfterEpoch && number == 2) stop_ = true;  // SIGTERM mid-trial
  };
  const WorkerSummary s = run_slot(study);
  EXPECT_EQ(s.trials, 2);
  EXPECT_EQ(s.handed_back, 1);
  EXPECT_EQ(trial(study, 0).status, TrialStatus::kCompleted);
  EXPECT_EQ(trial(study, 1).status, TrialStatus::kCompleted);
  const store::TrialRecord t = trial(study, 2);
  EXPECT_EQ(t.status, TrialStatus::kQueued);
  EXPECT_EQ(t.lost, 0) << "a hand-back does not count against the retry limit";
  EXPECT_EQ(store_->list_attempts(t.id).at(0).outcome, "released");
  EXPECT_EQ(trial(study, 3).status, TrialStatus::kQueued) << "taken ahead, then handed back";
}

TEST_F(SlotTest, ALeaseLostMidTrialStopsTheTrialAndLeavesItToItsNewWorker) {
  const int64_t study = make_study("lost", 1, 3);
  // The keeper renews every 10 ms of real time, so a renewal can land between the clock's
  // advance and the steal. The thief's clock runs a minute ahead of the worker's: no renewal
  // of the worker reaches past it, and the steal does not depend on that timing.
  store::ManualClock thief_clock(clock_.now());
  auto thief = open_store(&thief_clock);
  hook_.on = [&](CrashPoint p, int64_t number) {
    if (p != CrashPoint::kAfterEpoch || number != 1) return;
    // The lease runs out (the worker looked dead) and another worker takes the trial over;
    // this worker's next renewal fails.
    // (Trial 0, trained and waiting to be committed with others, loses its lease too.)
    clock_.advance(milliseconds(60'000));
    thief_clock.advance(milliseconds(120'000));
    std::optional<store::Claim> c;
    for (int i = 0; i < 2 && (!c || c->number != 1); ++i) c = thief->claim_next("w2", {study});
    ASSERT_TRUE(c && c->number == 1);
    const queue::Delivery mine{c->trial_id, 1, study, 1, "iris", {}};
    for (int i = 0; i < 500 && !queue_->lost(mine); ++i)
      std::this_thread::sleep_for(milliseconds(10));
    ASSERT_TRUE(queue_->lost(mine)) << "the lease keeper never noticed";
  };
  const WorkerSummary s = run_slot(study, 1, /*lease=*/milliseconds(30), /*max_prefetch=*/1);
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.late, 1) << "trial 0's result came after w2 took it";
  EXPECT_EQ(s.trials, 1) << "trial 2";
  const store::TrialRecord t = trial(study, 1);
  EXPECT_EQ(t.status, TrialStatus::kRunning);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_EQ(t.worker_id, "w2");
  EXPECT_TRUE(store_->list_epochs(t.id, 1, 0).empty()) << "nothing of the lost attempt is kept";
}

TEST_F(SlotTest, AResultTheStoreRefusesIsCountedLateNotCommitted) {
  const int64_t study = make_study("late", 1, 2);
  auto thief = open_store();
  hook_.on = [&](CrashPoint p, int64_t number) {
    if (p != CrashPoint::kAfterTraining || number != 0) return;
    // Trained, not yet committed: the lease runs out and another worker takes the trial.
    clock_.advance(milliseconds(60'000));
    ASSERT_TRUE(thief->claim_next("w2", {study}));
  };
  const WorkerSummary s = run_slot(study, 1, milliseconds(30'000), /*max_prefetch=*/1);
  EXPECT_EQ(s.late, 1);
  EXPECT_EQ(s.trials, 1);
  const store::TrialRecord t = trial(study, 0);
  EXPECT_EQ(t.status, TrialStatus::kRunning) << "the late result did not overwrite attempt 2";
  EXPECT_EQ(t.attempts, 2);
}

// A crash at each point leaves the store as a killed process would: nothing lost, nothing
// half-written, and the trial recoverable through its lease.
class SlotCrashTest : public SlotTest, public ::testing::WithParamInterface<CrashPoint> {};

TEST_P(SlotCrashTest, LeavesTheTrialRecoverable) {
  const int64_t study = make_study("crash", 1, 4);
  hook_.on = [&](CrashPoint p, int64_t number) {
    if (p == GetParam() && number == 1) throw Died{};
  };
  EXPECT_THROW(run_slot(study), Died);
  const store::TrialRecord t = trial(study, 1);
  if (GetParam() == CrashPoint::kAfterCommit) {
    EXPECT_EQ(t.status, TrialStatus::kCompleted) << "committed before the crash";
    EXPECT_EQ(store_->list_epochs(t.id, 1, 0).size(), 2u);
    return;
  }
  EXPECT_EQ(t.status, TrialStatus::kRunning);
  EXPECT_TRUE(t.result.is_null()) << "no result before the commit";
  // Once its lease runs out the trial is queued again for another worker.
  clock_.advance(milliseconds(60'000));
  EXPECT_GE(store_->expire_leases({study}), 1);
  const store::TrialRecord after = trial(study, 1);
  EXPECT_EQ(after.status, TrialStatus::kQueued);
  EXPECT_EQ(after.lost, 1);
}

INSTANTIATE_TEST_SUITE_P(EveryPoint, SlotCrashTest,
                         ::testing::Values(CrashPoint::kBeforeTraining, CrashPoint::kAfterEpoch,
                                           CrashPoint::kAfterTraining, CrashPoint::kAfterCommit),
                         [](const ::testing::TestParamInfo<CrashPoint>& p) {
                           switch (p.param) {
                             case CrashPoint::kBeforeTraining:
                               return "BeforeTraining";
                             case CrashPoint::kAfterEpoch:
                               return "AfterEpoch";
                             case CrashPoint::kAfterTraining:
                               return "AfterTraining";
                             case CrashPoint::kAfterCommit:
                               return "AfterCommit";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace layerlab::worker
