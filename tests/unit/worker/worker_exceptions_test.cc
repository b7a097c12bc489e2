// The worker loop is an edge: a trial whose parsing or training throws anything (not only
// layerlab::Error: std::bad_alloc, a JSON exception, a std::runtime_error) ends `failed`
// with the reason after one attempt, and the same worker goes on with the rest of the study.
// The exceptions come from the LAYERLAB_TEST_THROW hook (worker/fault_injection.h), in
// process, over a real SQLite store.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/store.h"
#include "study/coordinator.h"
#include "study/spec.h"
#include "support/temp_and_errors.h"
#include "worker/fault_injection.h"
#include "worker/worker.h"

namespace layerlab::worker {
namespace {

struct ThrowCase {
  std::string point;   // before_training (parsing the delivery) or after_epoch (in training)
  std::string what;    // LAYERLAB_TEST_THROW_WHAT
  std::string reason;  // part of the stored error
};

void PrintTo(const ThrowCase& c, std::ostream* os) {
  *os << c.point << "/" << c.what;
}

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

class WorkerCatches : public ::testing::TestWithParam<ThrowCase> {};

TEST_P(WorkerCatches, ATrialThatThrowsEndsFailedWithTheReasonAndTheWorkerGoesOn) {
  testing::TempDir dir;
  const std::string url = "sqlite:" + dir.path("s.db");
  auto store = store::open_store(url);
  const study::StudySpec spec =
      study::StudySpec::from_json({{"name", "throws"},
                                   {"datasets", {"iris"}},
                                   {"parameters",
                                    {{"hidden_layers", {{"values", {1, 2, 3, 4}}}},
                                     {"units", {{"value", 8}}},
                                     {"epochs", {{"value", 2}}}}}});
  const int64_t study_id = store->create_study("throws", spec.to_json());
  auto coordinator_queue = queue::make_store_queue(*store, "coordinator");
  study::Coordinator coordinator(*store, *coordinator_queue, spec, study_id);
  ASSERT_EQ(coordinator.top_up(10), 4);

  const ScopedEnv hook("LAYERLAB_TEST_THROW", GetParam().point + ":2");
  const ScopedEnv what("LAYERLAB_TEST_THROW_WHAT", GetParam().what);
  WorkerOptions o;
  o.store_url = url;
  o.study_id = study_id;
  o.exit_when_done = true;
  std::atomic<bool> stop{false};
  // Ends the study once every trial is finished, so the worker (exit_when_done) returns; a
  // worker that died would leave the study unfinished and this thread stops it instead.
  std::atomic<bool> worker_returned{false};
  std::thread finisher([&] {
    auto own = store::open_store(url);
    while (!worker_returned) {
      if (own->counts(study_id).finished() == 4) {
        own->set_study_status(study_id, store::StudyStatus::kFinished);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  WorkerSummary summary;
  auto queue_store = store::open_store(url);  // the queue's connection, as the command opens
  try {
    summary = run_worker(o, stop, *queue_store);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the worker died: " << e.what();
  }
  worker_returned = true;
  finisher.join();

  EXPECT_EQ(summary.trials, 4) << "one worker reported every trial, the failed one included";
  EXPECT_GT(queue_store->stats().transactions, 0u) << "the worker claimed through its own";
  for (const store::TrialRecord& t : store->list_trials(study_id, {})) {
    if (t.number == 2) {
      EXPECT_EQ(t.status, store::TrialStatus::kFailed);
      EXPECT_EQ(t.attempts, 1) << "failed at once, not retried until the worker-lost limit";
      EXPECT_NE(t.error.find(GetParam().reason), std::string::npos) << t.error;
      EXPECT_EQ(t.result["message"], t.error);
    } else {
      EXPECT_EQ(t.status, store::TrialStatus::kCompleted) << "trial " << t.number << t.error;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Exceptions, WorkerCatches,
    ::testing::Values(
        ThrowCase{"after_epoch", "bad_alloc", "out of memory: the trial needed more memory"},
        ThrowCase{"before_training", "bad_alloc", "out of memory"},
        ThrowCase{"after_epoch", "runtime_error",
                  "unexpected error: test hook LAYERLAB_TEST_THROW at after_epoch of trial 2"},
        ThrowCase{"before_training", "runtime_error", "unexpected error: test hook"},
        ThrowCase{"after_epoch", "json", "unexpected error: [json.exception.type_error.302]"},
        ThrowCase{"before_training", "json", "[json.exception.type_error.302]"},
        ThrowCase{"after_epoch", "error", "test hook LAYERLAB_TEST_THROW at after_epoch"},
        ThrowCase{"before_training", "error", "test hook LAYERLAB_TEST_THROW at before_training"}),
    [](const auto& p) { return p.param.point + "_" + p.param.what; });

TEST(FaultInjection, TrialRangesAndOpenEndedRanges) {
  EXPECT_TRUE(crash_spec_matches("before_training:10-29", CrashPoint::kBeforeTraining, 10));
  EXPECT_TRUE(crash_spec_matches("before_training:10-29", CrashPoint::kBeforeTraining, 29));
  EXPECT_FALSE(crash_spec_matches("before_training:10-29", CrashPoint::kBeforeTraining, 9));
  EXPECT_FALSE(crash_spec_matches("before_training:10-29", CrashPoint::kBeforeTraining, 30));
  EXPECT_TRUE(crash_spec_matches("before_training:10-", CrashPoint::kBeforeTraining, 1000));
  EXPECT_FALSE(crash_spec_matches("before_training:10-", CrashPoint::kBeforeTraining, 3));
  EXPECT_FALSE(crash_spec_matches("before_training:x-3", CrashPoint::kBeforeTraining, 2));
  EXPECT_FALSE(crash_spec_matches("before_training:1-y", CrashPoint::kBeforeTraining, 2));
  EXPECT_FALSE(crash_spec_matches("before_training:", CrashPoint::kBeforeTraining, 0));
  EXPECT_FALSE(crash_spec_matches("before_training:3x", CrashPoint::kBeforeTraining, 3));
}

TEST(FaultInjection, HoldWaitsWhileTheFileExistsAndNotWithoutIt) {
  testing::TempDir dir;
  const std::string file = dir.path("hold");
  const ScopedEnv spec("LAYERLAB_TEST_HOLD", "before_training:3");
  const ScopedEnv path("LAYERLAB_TEST_HOLD_FILE", file);
  maybe_hold(CrashPoint::kBeforeTraining, 3);  // no file: returns at once
  std::ofstream(file) << "held";
  maybe_hold(CrashPoint::kBeforeTraining, 4);  // another trial: not held
  maybe_hold(CrashPoint::kAfterEpoch, 3);      // another point: not held
  std::atomic<bool> released{false};
  std::thread held([&] {
    maybe_hold(CrashPoint::kBeforeTraining, 3);
    released = true;
  });
  // Still held after the poll interval has passed many times over (no upper bound is
  // asserted on how long the release takes, only that it waits for the file).
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(released) << "released while the file exists";
  }
  std::filesystem::remove(file);
  held.join();
  EXPECT_TRUE(released);
}

TEST(FaultInjection, HoldGivesUpAfterItsLimit) {
  testing::TempDir dir;
  const std::string file = dir.path("hold");
  std::ofstream(file) << "held";
  const ScopedEnv spec("LAYERLAB_TEST_HOLD", "before_training:*");
  const ScopedEnv path("LAYERLAB_TEST_HOLD_FILE", file);
  const ScopedEnv limit("LAYERLAB_TEST_HOLD_SECONDS", "0");
  maybe_hold(CrashPoint::kBeforeTraining, 1);  // returns although the file is still there
  EXPECT_TRUE(std::filesystem::exists(file));
}

TEST(FaultInjection, ThrowHookThrowsWhatItNames) {
  const ScopedEnv spec("LAYERLAB_TEST_THROW", "after_epoch:1");
  EXPECT_NO_THROW(maybe_throw(CrashPoint::kAfterEpoch, 2));
  EXPECT_NO_THROW(maybe_throw(CrashPoint::kBeforeTraining, 1));
  EXPECT_THROW(maybe_throw(CrashPoint::kAfterEpoch, 1), std::bad_alloc);
  {
    const ScopedEnv what("LAYERLAB_TEST_THROW_WHAT", "runtime_error");
    EXPECT_THROW(maybe_throw(CrashPoint::kAfterEpoch, 1), std::runtime_error);
  }
  {
    const ScopedEnv what("LAYERLAB_TEST_THROW_WHAT", "json");
    EXPECT_THROW(maybe_throw(CrashPoint::kAfterEpoch, 1), nlohmann::json::type_error);
  }
  {
    const ScopedEnv what("LAYERLAB_TEST_THROW_WHAT", "error");
    EXPECT_THROW(maybe_throw(CrashPoint::kAfterEpoch, 1), Error);
  }
}

}  // namespace
}  // namespace layerlab::worker
