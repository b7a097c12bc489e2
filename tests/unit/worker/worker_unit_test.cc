#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "support/temp_and_errors.h"
#include "worker/fault_injection.h"
#include "worker/worker.h"

namespace layerlab::worker {
namespace {

TEST(FaultInjection, SpecNamesPointAndTrial) {
  EXPECT_TRUE(crash_spec_matches("after_training:3", CrashPoint::kAfterTraining, 3));
  EXPECT_FALSE(crash_spec_matches("after_training:3", CrashPoint::kAfterTraining, 13));
  EXPECT_FALSE(crash_spec_matches("after_training:3", CrashPoint::kAfterCommit, 3));
  EXPECT_TRUE(crash_spec_matches("before_training:1,after_commit:7", CrashPoint::kAfterCommit, 7));
  EXPECT_TRUE(crash_spec_matches("after_epoch:*", CrashPoint::kAfterEpoch, 42));
  EXPECT_FALSE(crash_spec_matches("", CrashPoint::kAfterEpoch, 0));
  EXPECT_FALSE(crash_spec_matches("garbage", CrashPoint::kBeforeTraining, 0));
}

TEST(RunWorker, RejectsSlotsOrPackBelowOneBeforeTouchingTheStore) {
  const std::atomic<bool> stop{false};
  testing::TempDir dir;
  WorkerOptions o;
  o.store_url = "sqlite:" + dir.path("s.db");
  auto queue_store = store::open_store(o.store_url);
  const uint64_t opened = queue_store->stats().transactions;
  o.pack = 0;
  try {
    run_worker(o, stop, *queue_store);
    FAIL() << "pack 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("pack must be >= 1"), std::string::npos) << e.what();
  }
  o.pack = 1;
  o.slots = 0;
  EXPECT_THROW(run_worker(o, stop, *queue_store), Error);
  EXPECT_EQ(queue_store->stats().transactions, opened) << "the store was used";
  EXPECT_TRUE(queue_store->list_workers().empty());
}

}  // namespace
}  // namespace layerlab::worker
