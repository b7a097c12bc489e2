// A slot's pruning view on a clock of the test's: reads "cost" what the test says, so when
// the view reads again is decided by the test, not by the machine.
#include "worker/pruning.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace layerlab::worker {
namespace {

using namespace std::chrono_literals;
using store::EpochField;
using store::TrialValue;

class PruningViewTest : public ::testing::Test {
 protected:
  PruningViewTest() : view_([this] { return now_; }) {}

  std::unique_ptr<study::Pruner> median(int min_trials) {
    study::PrunerConfig c;
    c.type = "median";
    c.min_trials = min_trials;
    return study::make_pruner(c);
  }

  // The store's values after `epoch`; each read costs 1 ms of the test's clock.
  PruningView::Read read_of(int epoch) {
    return [this, epoch] {
      now_ += 1ms;
      ++reads_;
      return stored_[epoch];
    };
  }

  bool decide(const study::Pruner& p, int epoch, int64_t trial, double value) {
    return view_.should_prune(p, 1, EpochField::kValMetric, epoch, trial, value, true,
                              read_of(epoch));
  }

  PruningView::Clock::time_point now_{};
  std::map<int, std::vector<TrialValue>> stored_;
  int reads_ = 0;
  PruningView view_;
};

// One worker: its values reach the store only now and then (flushes), and the view reads
// the store rarely, yet every decision is the one over all earlier trials' values.
TEST_F(PruningViewTest, AloneItDecidesAsIfItReadTheStoreEveryTime) {
  const auto pruner = median(5);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 20);
  std::vector<double> all;
  std::vector<TrialValue> unflushed;
  int pruned = 0;
  const int trials = 2000;
  for (int64_t trial = 0; trial < trials; ++trial) {
    now_ += 100us;
    const double value = level(rng) / 20.0;
    const bool expected = pruner->should_prune(1, value, study::EpochRanking(all), true);
    ASSERT_EQ(decide(*pruner, 1, trial, value), expected) << "trial " << trial;
    pruned += expected;
    all.push_back(value);
    unflushed.push_back({trial, value});
    if (trial % 7 == 0) {  // a flush
      stored_[1].insert(stored_[1].end(), unflushed.begin(), unflushed.end());
      unflushed.clear();
    }
  }
  EXPECT_GT(pruned, trials / 4);
  EXPECT_LT(pruned, trials * 3 / 4);
  // 200 ms of decisions, reads of 1 ms at most once per 20 ms: about 10 reads, not 2,000.
  EXPECT_GE(reads_, 2);
  EXPECT_LE(reads_, 12);
}

// Another worker's values count from the first read after kReadAgainAfter (20) reads' time.
TEST_F(PruningViewTest, OtherWorkersValuesCountFromTheNextRead) {
  const auto pruner = median(5);
  for (int64_t t = 100; t < 105; ++t) stored_[1].push_back({t, 0.5});
  EXPECT_FALSE(decide(*pruner, 1, 1, 0.6));  // above the median 0.5
  EXPECT_EQ(reads_, 1);
  for (int64_t t = 200; t < 220; ++t) stored_[1].push_back({t, 0.9});
  now_ += 10ms;
  EXPECT_FALSE(decide(*pruner, 1, 2, 0.6));  // read 11 ms ago: not read again
  EXPECT_EQ(reads_, 1);
  now_ += 10ms;
  EXPECT_TRUE(decide(*pruner, 1, 3, 0.6));  // 21 ms: read, the median is 0.9 now
  EXPECT_EQ(reads_, 2);
}

// A trial's own value in the store (an earlier flush of its epochs) is not one of the
// others it is compared with.
TEST_F(PruningViewTest, ATrialIsNotComparedWithItself) {
  const auto pruner = median(5);
  stored_[1] = {{1, 0.1}, {100, 0.5}, {101, 0.5}, {102, 0.5}, {103, 0.5}};
  EXPECT_FALSE(decide(*pruner, 1, 1, 0.1));  // 4 others: fewer than min_trials
  EXPECT_TRUE(decide(*pruner, 1, 2, 0.1));   // 5 others, trial 1 among them
}

// A trial that reaches the epoch again (a retry) counts with its new value only.
TEST_F(PruningViewTest, ATrialsNewValueReplacesItsOldOne) {
  const auto pruner = median(3);
  stored_[1] = {{1, 0.1}, {100, 0.3}, {101, 0.5}};
  EXPECT_TRUE(decide(*pruner, 1, 2, 0.2));   // median of 0.1, 0.3, 0.5
  EXPECT_FALSE(decide(*pruner, 1, 1, 0.9));  // median of 0.2, 0.3, 0.5
  // 0.2, 0.3, 0.5, 0.9: median 0.4 (with 0.1 as well, or instead of 0.9: 0.3 or 0.25).
  EXPECT_TRUE(decide(*pruner, 1, 3, 0.35));
  EXPECT_EQ(reads_, 1);
}

// The epochs a slot decides at share one budget: with two, each is read again only after
// 20 times the cost of reading both.
TEST_F(PruningViewTest, EpochsShareTheReadingBudget) {
  const auto pruner = median(1);
  stored_[1] = {{100, 0.5}};
  stored_[2] = {{100, 0.5}};
  decide(*pruner, 1, 1, 0.6);
  decide(*pruner, 2, 1, 0.6);
  EXPECT_EQ(reads_, 2);
  now_ += 30ms;  // past 20 x 1 ms, within 20 x 2 ms
  decide(*pruner, 1, 2, 0.6);
  EXPECT_EQ(reads_, 2);
  now_ += 15ms;
  decide(*pruner, 1, 3, 0.6);
  EXPECT_EQ(reads_, 3);
}

}  // namespace
}  // namespace layerlab::worker
